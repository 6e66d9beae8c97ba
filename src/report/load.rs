//! Reading result files: the JSON v2 envelope of docs/json.md, checked
//! before anything is rendered so a wrong file gives one line naming the fix.

use crate::error::Fix;
use anyhow::Result;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// One result file as read.
#[derive(Debug, Clone)]
pub struct Input {
    pub file: PathBuf,
    /// Short name shown in headings and comparison columns (`before.json`).
    pub label: String,
    /// The command of `schema` (`probe`, `sweep`, `tune-oltp`).
    pub command: String,
    /// The whole envelope.
    pub envelope: Value,
}

impl Input {
    pub fn result(&self) -> &Value {
        &self.envelope["result"]
    }

    /// The host it describes; `unknown host` when it could not be read
    /// (a replayed fixture tree without one).
    pub fn hostname(&self) -> String {
        known_str(&self.envelope["host"]["hostname"]).unwrap_or_else(|| "unknown host".into())
    }

    pub fn generated_at(&self) -> &str {
        self.envelope["generated_at"].as_str().unwrap_or("?")
    }
}

/// A string, or None for absent or `{"unknown": …}`.
pub fn known_str(v: &Value) -> Option<String> {
    v.as_str().map(str::to_string)
}

const PRODUCE: &str = "give a file written by innotune with --format json, e.g. `innotune probe --format json --output probe.json`";

/// Read and check one file.
pub fn load(path: &Path) -> Result<Input> {
    let bytes = std::fs::read(path).map_err(|e| {
        Fix::new(
            format!("cannot read {}: {e}", path.display()),
            "give the path of an existing result file",
        )
    })?;
    let v: Value = serde_json::from_slice(&bytes)
        .map_err(|e| Fix::new(format!("{} is not JSON ({e})", path.display()), PRODUCE))?;
    let schema = v.get("schema").and_then(Value::as_str);
    let tool = v.get("tool").and_then(Value::as_str);
    let (Some(schema), Some("innotune")) = (schema, tool) else {
        let what = if v.get("schema_version").is_some() {
            format!(
                "{} is an envelope v1 result (schema_version), which this innotune no longer reads",
                path.display()
            )
        } else {
            format!(
                "{} is not an innotune result (no \"schema\" and \"tool\": \"innotune\")",
                path.display()
            )
        };
        let how = if v.get("schema_version").is_some() {
            "run the command again with this innotune and --format json".to_string()
        } else {
            PRODUCE.to_string()
        };
        return Err(Fix::new(what, how).into());
    };
    let Some((command, major)) = schema.rsplit_once('/') else {
        return Err(Fix::new(
            format!(
                "{}: schema {schema:?} is not \"<command>/<version>\"",
                path.display()
            ),
            PRODUCE,
        )
        .into());
    };
    if major != crate::export::json::ENVELOPE_VERSION.to_string() {
        return Err(Fix::new(
            format!(
                "{}: schema {schema} is version {major}; this innotune ({}) reads version {}",
                path.display(),
                env!("CARGO_PKG_VERSION"),
                crate::export::json::ENVELOPE_VERSION
            ),
            format!(
                "render it with the innotune that wrote it ({})",
                v.get("version")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown version")
            ),
        )
        .into());
    }
    if !v.get("result").is_some_and(Value::is_object) {
        return Err(Fix::new(
            format!("{}: the envelope has no \"result\" object", path.display()),
            PRODUCE,
        )
        .into());
    }
    Ok(Input {
        file: path.to_path_buf(),
        label: file_name(path),
        command: command.to_string(),
        envelope: v,
    })
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
