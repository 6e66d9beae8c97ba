//! `innotune report RESULT.json… [-o FILE]`: one or several results that
//! innotune wrote with `--format json` rendered into one page for people
//! (HTML) or one markdown file for a ticket, side by side when several.
//!
//! Reading ([`load`]), one view per command ([`render`]) and the
//! comparison of runs ([`compare`]) are apart; the page itself is the
//! shared HTML/markdown exporters' work.

pub mod cli;
pub mod compare;
pub mod fleet;
pub mod load;
pub mod render;

use crate::command::{Command, Env};
use crate::error::Fix;
use crate::export::doc::{Document, KeyValues, Tone};
use crate::export::{Format, Sink};
use crate::host::Host;
use anyhow::Result;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// One input as the JSON output lists it.
#[derive(Debug, Serialize)]
pub struct InputSummary {
    pub file: PathBuf,
    pub label: String,
    pub schema: String,
    pub hostname: String,
    pub generated_at: String,
    pub version: String,
}

/// The rendered report: what was read and, for several, what they share.
#[derive(Debug, Serialize)]
pub struct ReportReport {
    pub title: String,
    pub inputs: Vec<InputSummary>,
    /// Present with two or more inputs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comparison: Option<compare::Comparison>,
    /// check results of two or more hosts: each finding across hosts,
    /// outliers (findings on the fewest hosts) first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fleet: Vec<fleet::Group>,
    #[serde(skip)]
    loaded: Vec<load::Input>,
}

/// Read every file (all checked before anything is rendered).
pub fn execute(_host: &Host, files: &[PathBuf], title: Option<String>) -> Result<ReportReport> {
    let mut loaded = files
        .iter()
        .map(|f| load::load(f))
        .collect::<Result<Vec<_>>>()?;
    load::disambiguate(&mut loaded);
    let title = title.unwrap_or_else(|| {
        let mut hosts: Vec<String> = Vec::new();
        for i in &loaded {
            let h = i.hostname();
            if !hosts.contains(&h) && h != "unknown host" {
                hosts.push(h);
            }
        }
        if hosts.is_empty() {
            "innotune report".to_string()
        } else {
            format!("innotune report: {}", hosts.join(", "))
        }
    });
    let comparison = (loaded.len() >= 2).then(|| compare::compare(&loaded));
    let fleet = fleet::groups(&loaded);
    Ok(ReportReport {
        title,
        inputs: loaded
            .iter()
            .map(|i| InputSummary {
                file: i.file.clone(),
                label: i.label.clone(),
                schema: i.envelope["schema"].as_str().unwrap_or("").to_string(),
                hostname: i.hostname(),
                generated_at: i.generated_at().to_string(),
                version: i.envelope["version"].as_str().unwrap_or("").to_string(),
            })
            .collect(),
        comparison,
        fleet,
        loaded,
    })
}

impl crate::export::Report for ReportReport {
    const COMMAND: &'static str = "report";

    fn document(&self) -> Document {
        let mut d = Document::new(self.title.clone());
        if !self.fleet.is_empty() {
            let hosts = self.fleet[0].of;
            d.heading(format!("Fleet: {hosts} hosts"));
            d.paragraph("Each finding across the hosts' check results, outliers first: a finding on few hosts is a host that drifted from the others.");
            d.table(fleet::table(&self.fleet));
        }
        if let Some(c) = &self.comparison {
            d.heading(format!("Side by side: {}", c.runs.join(" · ")));
            d.paragraph("Figures two or more results share, one column per result in the order given; change is from the first result that has the figure to the last one that has it (3% or more in the better direction is marked good, in the worse bad).");
            d.table(compare::table(c, &self.loaded));
            if c.shared.is_empty() {
                d.paragraph("These results share no figure (different commands or workloads): each is shown below.");
            }
            for s in compare::charts(c) {
                d.series(s);
            }
        }
        for i in &self.loaded {
            d.heading(format!("{}: {} on {}", i.label, i.command, i.hostname()));
            let mut kv = KeyValues::new();
            kv.add("file", i.file.display().to_string())
                .add(
                    "schema",
                    i.envelope["schema"].as_str().unwrap_or("").to_string(),
                )
                .add("generated", i.generated_at())
                .add(
                    "host",
                    format!(
                        "{}, kernel {}, {} CPUs, {}",
                        i.hostname(),
                        render::text(&i.envelope["host"]["kernel"]),
                        render::text(&i.envelope["host"]["cpus"]),
                        i.envelope["host"]["memory_bytes"]
                            .as_u64()
                            .map(crate::units::fmt_size)
                            .unwrap_or_else(|| "memory unknown".into())
                    ),
                )
                .add(
                    "innotune",
                    i.envelope["version"].as_str().unwrap_or("?").to_string(),
                );
            d.key_values(kv);
            if let Some(ws) = i.envelope["warnings"].as_array() {
                for w in ws {
                    d.note(Tone::Warn, render::text(w));
                }
            }
            d.blocks.extend(render::blocks(i).blocks);
        }
        d
    }
}

/// The format `-o FILE`'s extension asks for, if it names one.
pub fn format_of(path: &Path) -> Option<Format> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "html" | "htm" => Some(Format::Html),
        "md" | "markdown" => Some(Format::Markdown),
        "json" => Some(Format::Json),
        "txt" | "text" => Some(Format::Text),
        _ => None,
    }
}

/// `innotune report FILE…`: [`execute`]; `-o FILE` is `--output` with the
/// format its extension names.
impl Command for cli::ReportArgs {
    type Report = ReportReport;

    fn sink(&self, global: Sink) -> Result<Sink> {
        let out = match (&self.out, &global.output) {
            (Some(_), Some(_)) => {
                return Err(Fix::new("both -o and --output name a file", "give one of them").into())
            }
            (Some(o), None) | (None, Some(o)) => Some(o.clone()),
            (None, None) => None,
        };
        let format = out.as_deref().and_then(format_of).unwrap_or(global.format);
        Ok(Sink {
            format,
            color: global.color,
            output: out,
        })
    }

    fn execute(env: &Env, args: Self) -> Result<ReportReport> {
        execute(&env.host, &args.files, args.title)
    }
}
