//! `innotune check`'s typed result and its document (JSON schema:
//! docs/json-check.md).

use super::emit::Emitted;
use super::facts::Facts;
use super::rules::{Advice, RuleRun};
use super::validate::Validation;
use crate::error::{exit, Fix};
use crate::export::doc::{Cell, Column, KeyValues, Table, Tone};
use crate::export::Document;
use crate::finding::{Layer, Severity};
use crate::host::Host;
use serde::Serialize;
use std::path::Path;

/// The server the rules looked at, or why none.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct ServerSummary {
    pub reached: bool,
    /// Socket or host:port and user (never a password).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Length of the status window, seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sample_s: Option<f64>,
    /// Why the server rules were skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A file written by `--emit`, and what checked it.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct EmittedFile {
    #[serde(flatten)]
    pub file: Emitted,
    /// Where it was written under the --emit directory.
    pub written: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validation: Option<Validation>,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct CheckReport {
    /// The checked path (host path).
    pub path: String,
    /// `argument`, `server_datadir`, `mysqld_datadir` or `current_directory`.
    pub path_source: String,
    pub server: ServerSummary,
    /// Worst first; each with the settings that fix it.
    pub findings: Vec<Advice>,
    /// Every rule, whether it ran, and why not.
    pub rules: Vec<RuleRun>,
    pub notes: Vec<String>,
    /// Files written by `--emit`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub emitted: Vec<EmittedFile>,
    /// What the rules saw.
    pub facts: Facts,
    /// innotune's own state, for `--format prometheus` (not in the JSON).
    #[serde(skip)]
    pub state: super::metrics::State,
}

impl CheckReport {
    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|a| a.finding.severity).max()
    }
}

fn layer_title(l: Layer) -> &'static str {
    match l {
        Layer::Storage => "Storage",
        Layer::Filesystem => "Filesystem",
        Layer::Os => "OS",
        Layer::Server => "Server",
        Layer::Innotune => "innotune",
    }
}

impl crate::export::Report for CheckReport {
    const COMMAND: &'static str = "check";

    const METRICS: bool = true;

    fn metrics(&self) -> Option<Vec<crate::export::prometheus::Metric>> {
        Some(super::metrics::metrics(
            self.server.reached,
            &self.facts,
            &self.findings,
            &self.state,
        ))
    }

    fn document(&self) -> Document {
        let mut d = Document::new(format!("innotune check {}", self.path));
        let mut kv = KeyValues::new();
        if let Some(m) = &self.facts.mount {
            kv.add(
                "Mount",
                format!(
                    "{} ({}, {}, {})",
                    m.mount_point, m.fs_type, m.source, m.atime
                ),
            );
        }
        let disks: Vec<String> = self
            .facts
            .devices
            .iter()
            .filter(|x| x.is_scheduled_disk())
            .map(|x| format!("{} [{}]", x.name, x.scheduler.as_deref().unwrap_or("?")))
            .collect();
        if !disks.is_empty() {
            kv.add("Data disks", disks.join(", "));
        }
        let srv = match (&self.server.version, &self.server.note) {
            (Some(v), _) => format!(
                "{v} at {}{}",
                self.server.endpoint.as_deref().unwrap_or("?"),
                self.server
                    .sample_s
                    .map(|s| format!(", status sampled over {s:.0} s"))
                    .unwrap_or_else(|| ", no sample window".into())
            ),
            (None, Some(_)) => "not checked (below)".into(),
            _ => "not checked".into(),
        };
        kv.add("Server", srv);
        let count = |s: Severity| {
            self.findings
                .iter()
                .filter(|a| a.finding.severity == s)
                .count()
        };
        kv.add(
            "Findings",
            Cell::text(format!(
                "{} critical, {} warning, {} notice, {} info",
                count(Severity::Critical),
                count(Severity::Warning),
                count(Severity::Notice),
                count(Severity::Info)
            ))
            .tone(match self.worst() {
                Some(Severity::Critical) => Tone::Bad,
                Some(Severity::Warning) => Tone::Warn,
                _ => Tone::Good,
            }),
        );
        d.key_values(kv);
        // Layers ordered by their worst finding, then bottom of the stack first.
        let mut layers: Vec<Layer> = Vec::new();
        for a in &self.findings {
            if !layers.contains(&a.finding.layer) {
                layers.push(a.finding.layer);
            }
        }
        let worst_of = |l: Layer| {
            self.findings
                .iter()
                .filter(|a| a.finding.layer == l)
                .map(|a| a.finding.severity)
                .max()
        };
        layers.sort_by(|a, b| worst_of(*b).cmp(&worst_of(*a)).then(a.cmp(b)));
        if layers.is_empty() {
            d.findings(&[]);
        }
        for l in layers {
            let f: Vec<_> = self
                .findings
                .iter()
                .filter(|a| a.finding.layer == l)
                .map(|a| a.finding.clone())
                .collect();
            d.heading(format!("{} ({})", layer_title(l), f.len()));
            d.findings(&f);
        }
        let skipped: Vec<&RuleRun> = self
            .rules
            .iter()
            .filter(|r| r.status == "skipped")
            .collect();
        if !skipped.is_empty() {
            let mut t = Table::new(vec![
                Column::text("rule"),
                Column::text("applies to"),
                Column::text("skipped because"),
            ])
            .titled("Skipped rules");
            for r in skipped {
                t.row(vec![
                    r.id.as_ref().into(),
                    r.applies_to.clone().into(),
                    r.reason.clone().unwrap_or_default().into(),
                ]);
            }
            d.table(t);
        }
        if !self.emitted.is_empty() {
            let mut t = Table::new(vec![
                Column::text("file"),
                Column::text("installs to"),
                Column::text("checked by"),
            ])
            .titled("Emitted files");
            for e in &self.emitted {
                let v = match &e.validation {
                    Some(v) if v.ok => Cell::text(format!("{}: ok", v.tool)).tone(Tone::Good),
                    Some(v) => Cell::text(format!("{}: {}", v.tool, v.detail)).tone(Tone::Bad),
                    None => Cell::text("—").tone(Tone::Dim),
                };
                t.row(vec![
                    e.written.clone().into(),
                    if e.file.install {
                        e.file.path.clone()
                    } else {
                        format!("({})", e.file.note.clone().unwrap_or_default())
                    }
                    .into(),
                    v,
                ]);
            }
            d.table(t);
        }
        for n in &self.notes {
            d.note(Tone::Plain, n.clone());
        }
        d
    }

    /// 0: nothing of severity warning or worse; 1: a warning or critical finding.
    fn exit_code(&self) -> i32 {
        if self.worst() >= Some(Severity::Warning) {
            exit::FOUND
        } else {
            exit::OK
        }
    }
}

/// Write every emitted file under `dir` (laid out as under /), each
/// checked by the real tool where one is installed.
pub fn emit_to(host: &Host, dir: &Path, r: &CheckReport) -> anyhow::Result<Vec<EmittedFile>> {
    let files = super::emit::files(host, &r.facts, &r.findings);
    std::fs::create_dir_all(dir).map_err(|e| {
        Fix::new(
            format!("cannot create --emit {}: {e}", dir.display()),
            "give a directory you can write to",
        )
    })?;
    let mut out = Vec::new();
    for f in files {
        let rel = f.path.trim_start_matches('/');
        let target = dir.join(rel);
        if let Some(p) = target.parent() {
            std::fs::create_dir_all(p)?;
        }
        match &f.symlink {
            // An emitted link replaces the link an earlier --emit wrote,
            // never anything but a file or a link.
            Some(t) => {
                let opts = crate::durable::Options {
                    replace_symlink: true,
                    ..crate::durable::Options::SHARED
                };
                crate::durable::symlink(&target, Path::new(t), &opts).map_err(|e| {
                    Fix::new(
                        format!("cannot write --emit {}: {e}", target.display()),
                        "remove it, or give --emit another directory",
                    )
                })?
            }
            None => crate::export::write_atomic(&target, f.content.as_bytes())?,
        }
        let validation = super::validate::check(host, &f);
        out.push(EmittedFile {
            written: target.display().to_string(),
            file: f,
            validation,
        });
    }
    Ok(out)
}
