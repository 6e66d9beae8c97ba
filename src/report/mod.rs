//! `innotune report RESULT.json… [-o FILE]`: one or several results that
//! innotune wrote with `--format json` rendered into one page for people
//! (HTML) or one markdown file for a ticket, side by side when several.
//!
//! Reading ([`load`]: the envelope, and the result back into its
//! command's typed report, [`typed`]) and the comparison of runs
//! ([`compare`], [`fleet`]) are apart. Each result is shown by its
//! command's own `document()`, so the page has the sections and figures the
//! command's `--format html` has; the page itself is the shared
//! HTML/markdown exporters' work.

pub mod cli;
pub mod compare;
pub mod fleet;
pub mod load;
pub mod typed;

use crate::command::{Command, Env};
use crate::error::Fix;
use crate::export::doc::{Block, Document, KeyValues, Tone};
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
                schema: i.header.schema.clone(),
                hostname: i.hostname(),
                generated_at: i.generated_at().to_string(),
                version: i.header.version.clone(),
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
            d.paragraph("Figures two or more results share, one column per result in the order given; change is from the first result that has the figure to the last one that has it. Each figure is one number per result (a single run, or one run's median) with no interval, so a change is not a measured difference and is not marked good or bad: two identical back-to-back runs can differ by more than 10%. To measure a difference, run the arms interleaved with rounds: `innotune sweep` or `innotune prove`.");
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
            let own = i.result.document();
            let mut kv = KeyValues::new();
            kv.add("file", i.file.display().to_string());
            if !own.title.is_empty() {
                kv.add("title", own.title.clone());
            }
            kv.add("schema", i.header.schema.clone())
                .add("generated", i.generated_at())
                .add("host", host_line(i))
                .add(
                    "innotune",
                    if i.header.version.is_empty() {
                        "?".to_string()
                    } else {
                        i.header.version.clone()
                    },
                );
            d.key_values(kv);
            for w in &i.header.warnings {
                d.note(Tone::Warn, w.clone());
            }
            // The command's own blocks, one heading level down: they sit
            // under this input's heading.
            d.blocks.extend(own.blocks.into_iter().map(|b| match b {
                Block::Heading { level, text } => Block::Heading {
                    level: (level + 1).min(6),
                    text,
                },
                b => b,
            }));
        }
        d
    }
}

/// `db1, kernel 6.1.0, 2 CPUs, 23.5 GiB` from the envelope's host stamp.
fn host_line(i: &load::Input) -> String {
    match &i.header.host {
        Some(h) => format!(
            "{}, kernel {}, {} CPUs, {}",
            i.hostname(),
            h.kernel,
            h.cpus,
            h.memory_bytes
                .value()
                .map(|&b| crate::units::fmt_size(b))
                .unwrap_or_else(|| "memory unknown".into())
        ),
        None => format!("{}, kernel ?, ? CPUs, memory unknown", i.hostname()),
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
                return Err(
                    Fix::new("both --out and --output name a file", "give -o FILE once").into(),
                )
            }
            (Some(o), None) | (None, Some(o)) => Some(o.clone()),
            (None, None) => None,
        };
        let by_ext = out.as_deref().and_then(format_of);
        let format = match by_ext {
            Some(f) if global.format_given && f != global.format => {
                let name = |f: Format| {
                    use clap::ValueEnum;
                    f.to_possible_value()
                        .map(|v| v.get_name().to_string())
                        .unwrap_or_default()
                };
                return Err(Fix::new(
                    format!(
                        "--format {} and {}, which names {}, disagree",
                        name(global.format),
                        out.as_deref().unwrap_or(Path::new("")).display(),
                        name(f)
                    ),
                    format!(
                        "drop --format (the extension picks it), or give a file name that fits --format {}",
                        name(global.format)
                    ),
                )
                .into());
            }
            Some(f) => f,
            None => global.format,
        };
        Ok(Sink {
            format,
            format_given: global.format_given,
            color: global.color,
            output: out,
        })
    }

    fn execute(env: &Env, args: Self) -> Result<ReportReport> {
        execute(&env.host, &args.files, args.title)
    }
}
