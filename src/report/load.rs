//! Reading result files: the JSON v2 envelope of docs/json.md, checked
//! before anything is rendered so a wrong file gives one line naming the
//! fix, and its `result` read back into the command's typed report
//! ([`Typed`]).

use super::typed::Typed;
use crate::error::Fix;
use crate::export::json::HostStamp;
use anyhow::Result;
use serde::Deserialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The envelope around a result: where and when it was made.
#[derive(Debug, Clone, Deserialize)]
pub struct Header {
    /// `"<command>/<major>"`.
    pub schema: String,
    /// innotune's version that wrote it.
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub generated_at: String,
    #[serde(default)]
    pub host: Option<HostStamp>,
    #[serde(default)]
    pub warnings: Vec<String>,
}

/// One result file as read.
#[derive(Debug)]
pub struct Input {
    pub file: PathBuf,
    /// Short name shown in headings and comparison columns (`before.json`).
    pub label: String,
    /// The command of `schema` (`probe`, `sweep`, `tune-oltp`).
    pub command: String,
    pub header: Header,
    /// The result, as its command's typed report.
    pub result: Typed,
}

impl Input {
    /// The host it describes; `unknown host` when it could not be read
    /// (a replayed fixture tree without one).
    pub fn hostname(&self) -> String {
        self.header
            .host
            .as_ref()
            .and_then(|h| h.hostname.value().cloned())
            .unwrap_or_else(|| "unknown host".into())
    }

    /// `uname -r` of the host, or `?`.
    pub fn kernel(&self) -> String {
        match self.header.host.as_ref().map(|h| &h.kernel) {
            Some(k) => k.to_string(),
            None => "?".into(),
        }
    }

    pub fn generated_at(&self) -> &str {
        if self.header.generated_at.is_empty() {
            "?"
        } else {
            &self.header.generated_at
        }
    }
}

const PRODUCE: &str = "give a file written by innotune with --format json, e.g. `innotune probe --format json --output probe.json`";

/// A result file as `report` reads it: a regular file (a FIFO or device
/// is refused, never read), at most [`crate::export::json::MAX_RESULT`].
const RESULT_FILE: crate::input::Input = crate::input::Input {
    what: "result file",
    fix: "give the path of a result file written by innotune with --format json",
    max: Some(crate::export::json::MAX_RESULT),
};

/// Read and check one file.
pub fn load(path: &Path) -> Result<Input> {
    let bytes = RESULT_FILE.read(path)?;
    let v: Value = serde_json::from_slice(&bytes)
        .map_err(|e| Fix::new(format!("{} is not JSON ({e})", path.display()), PRODUCE))?;
    let command = crate::export::json::result_command(&v, path, PRODUCE)?.to_string();
    let schema = format!("{command}/{}", crate::export::json::ENVELOPE_VERSION);
    let mut v = v;
    let result = v["result"].take();
    let header: Header = serde_path_to_error::deserialize(&v).map_err(|e| {
        Fix::new(
            format!("{}: the envelope does not read ({e})", path.display()),
            PRODUCE,
        )
    })?;
    let wrote = if header.version.is_empty() {
        "unknown version".to_string()
    } else {
        header.version.clone()
    };
    let mut typed = Typed::read(&command, result).map_err(|e| {
        let at = match e.path().to_string().as_str() {
            "." => "result".to_string(),
            p => format!("result.{p}"),
        };
        Fix::new(
            format!(
                "{}: this innotune ({}) cannot read the {schema} result: at {at}: {}",
                path.display(),
                env!("CARGO_PKG_VERSION"),
                e.inner()
            ),
            format!("render it with the innotune that wrote it ({wrote}), or run the command again with this one"),
        )
    })?;
    if let Typed::Tune(t) = &mut typed {
        t.sweep_report = sibling_sweep(path, t)?;
    }
    Ok(Input {
        file: path.to_path_buf(),
        label: file_name(path),
        command,
        header,
        result: typed,
    })
}

/// tune.json carries the sweep's answer; its tables are in the sweep.json
/// tune wrote next to it (listed in `written`). Read that file when it is
/// there, so the page has the sweep as tune's own report.html has it; None
/// when it is not (tune's document then says where the tables are).
fn sibling_sweep(
    tune_json: &Path,
    t: &crate::tune::report::TuneReport,
) -> Result<Option<crate::sweep::SweepReport>> {
    if t.sweep.is_none() || !t.written.iter().any(|w| w == "sweep.json") {
        return Ok(None);
    }
    let sweep = tune_json
        .parent()
        .unwrap_or(Path::new("."))
        .join("sweep.json");
    if !sweep.is_file() {
        return Ok(None);
    }
    match load(&sweep)?.result {
        Typed::Sweep(s) => Ok(Some(*s)),
        _ => Err(Fix::new(
            format!(
                "{} next to {} is not a sweep result",
                sweep.display(),
                tune_json.display()
            ),
            "keep the files of a tune report directory as tune wrote them",
        )
        .into()),
    }
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}

/// Make labels unique: `a/probe.json` and `b/probe.json` become
/// `a/probe.json` and `b/probe.json` instead of `probe.json` twice.
pub fn disambiguate(inputs: &mut [Input]) {
    for i in 0..inputs.len() {
        let dup = inputs
            .iter()
            .enumerate()
            .any(|(j, o)| j != i && o.label == inputs[i].label);
        if dup {
            let p = &inputs[i].file;
            let parent = p
                .parent()
                .and_then(|d| d.file_name())
                .map(|d| d.to_string_lossy().into_owned());
            inputs[i].label = match parent {
                Some(d) => format!("{d}/{}", file_name(p)),
                None => p.display().to_string(),
            };
        }
    }
    // Still equal (the same file twice): number them.
    for i in 0..inputs.len() {
        let n = inputs[..i]
            .iter()
            .filter(|o| o.label == inputs[i].label)
            .count();
        if n > 0 {
            inputs[i].label = format!("{} #{}", inputs[i].label, n + 1);
        }
    }
}
