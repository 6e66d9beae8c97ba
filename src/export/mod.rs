//! Exporters: a typed report in, one format out.
//!
//! Every command returns a value implementing [`Report`]. JSON serialises
//! that value itself inside the versioned envelope ([`json`]); every other
//! format renders the small [`doc::Document`] the report builds of itself,
//! one file per format ([`text`], [`markdown`]). Adding a format is one
//! file here and one [`Format`] variant; commands never print results
//! themselves: [`crate::command::dispatch`] renders every command's report
//! here. Rendering reads nothing from the host: the envelope's host stamp
//! was read before the command ran, and what a format needs beyond the
//! results (check's metrics) is in the report. Terminal concerns (colour,
//! progress, warnings on stderr) live in [`crate::output`].
//!
//! `--output FILE` writes the chosen format to FILE durably
//! ([`crate::durable`]: a temporary file in the same directory, fsynced,
//! then renamed over FILE), so a reader such as node_exporter's textfile
//! collector never sees half a document. FILE must be a regular file or
//! not exist: a device (`/dev/null`), a FIFO or a symbolic link is refused
//! ([`check_output`]), never replaced.

pub mod chart;
pub mod doc;
pub mod html;
pub mod json;
pub mod markdown;
pub mod prometheus;
pub mod text;

pub use doc::Document;

use crate::error::Fix;
use crate::output::Style;
use json::HostStamp;
use serde::Serialize;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// A command's typed result.
pub trait Report: Serialize {
    /// Command name: the JSON envelope's schema is `"<COMMAND>/2"`.
    const COMMAND: &'static str;

    /// The report as a document, for every format but JSON.
    fn document(&self) -> Document;

    /// Exit code for a successful run: [`crate::error::exit::OK`] or
    /// [`crate::error::exit::FOUND`] when the command found what it looks for.
    fn exit_code(&self) -> i32 {
        crate::error::exit::OK
    }

    /// Whether [`Report::metrics`] has metrics: `--format prometheus` is
    /// refused before the command runs when it has none.
    const METRICS: bool = false;

    /// The report as Prometheus metrics (`--format prometheus`), for the
    /// reports that have a state worth alerting on; `None` for the others.
    /// Built from the report alone: what the metrics need that is not a
    /// result (check's journal and checksum records) is gathered into the
    /// report while the command runs.
    fn metrics(&self) -> Option<Vec<prometheus::Metric>> {
        None
    }

    /// The line the text page ends with that the user must see wherever
    /// the report goes (tune: the command that applies its advice): with
    /// another format or `--output`, the dispatcher says it on stderr after
    /// writing the report.
    fn closing_line(&self) -> Option<String> {
        None
    }
}

/// Output formats (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum Format {
    /// Aligned tables for people; colour only on a terminal.
    #[default]
    Text,
    /// One versioned JSON document (envelope v2, see docs/json.md).
    Json,
    /// GitHub-flavoured markdown: tables for tickets and pull requests.
    #[value(alias = "md")]
    Markdown,
    /// Prometheus text format for node_exporter's textfile collector
    /// (`check` only; metrics in docs/metrics.md).
    #[value(alias = "prom")]
    Prometheus,
    /// One self-contained HTML page (inline CSS, SVG charts, works offline).
    Html,
}

/// One format's renderer of a [`Document`].
pub trait Exporter {
    fn export(&self, doc: &Document, out: &mut dyn Write) -> io::Result<()>;
}

/// Where and how a report goes: the global `--format`, `--color` and
/// `--output` flags.
#[derive(Debug, Clone)]
pub struct Sink {
    pub format: Format,
    /// `--format` was on the command line (else `format` is the default).
    pub format_given: bool,
    pub color: crate::output::ColorChoice,
    pub output: Option<PathBuf>,
}

impl Sink {
    pub fn stdout(format: Format) -> Sink {
        Sink {
            format,
            format_given: true,
            color: crate::output::ColorChoice::Auto,
            output: None,
        }
    }

    /// Text style for the final document: never colour into a file.
    fn style(&self) -> Style {
        if self.output.is_some() {
            Style::plain()
        } else {
            Style::for_stdout(self.color)
        }
    }

    /// Render `report` to stdout or `--output`, and return its exit code.
    /// `stamp`: the host the report describes (the JSON envelope's `host`),
    /// read before the command ran.
    pub fn emit<R: Report>(&self, stamp: &HostStamp, report: &R) -> anyhow::Result<i32> {
        let mut buf: Vec<u8> = Vec::new();
        self.render(stamp, report, &mut buf)?;
        match &self.output {
            Some(path) => write_output(path, &buf)?,
            None => {
                let stdout = io::stdout();
                let mut out = stdout.lock();
                out.write_all(&buf)?;
                out.flush()?;
            }
        }
        Ok(report.exit_code())
    }

    /// Render `report` in this sink's format into `out`.
    pub fn render<R: Report>(
        &self,
        stamp: &HostStamp,
        report: &R,
        out: &mut dyn Write,
    ) -> anyhow::Result<()> {
        match self.format {
            Format::Json => json::write(stamp, report, out)?,
            Format::Text => text::Text::new(self.style()).export(&report.document(), out)?,
            Format::Markdown => markdown::Markdown.export(&report.document(), out)?,
            Format::Prometheus => match report.metrics() {
                Some(m) => out.write_all(prometheus::render(&m).as_bytes())?,
                None => {
                    return Err(Fix::new(
                        format!("`{}` has no Prometheus metrics", R::COMMAND),
                        "use --format prometheus with `innotune check`, or --format json here",
                    )
                    .into())
                }
            },
            Format::Html => html::Html.export(&report.document(), out)?,
        }
        Ok(())
    }

    /// A stream for results that arrive while a command runs (oltp's
    /// per-interval lines, trace's progress): shown in text format on
    /// stdout, dropped in the others (their final document has the data).
    pub fn stream(&self) -> Stream {
        Stream {
            enabled: self.format == Format::Text && self.output.is_none(),
            style: self.style(),
        }
    }
}

/// See [`Sink::stream`].
#[derive(Debug, Clone, Copy)]
pub struct Stream {
    enabled: bool,
    style: Style,
}

impl Stream {
    /// A stream that shows nothing.
    pub fn disabled() -> Stream {
        Stream {
            enabled: false,
            style: Style::plain(),
        }
    }

    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// Show one block now.
    pub fn block(&self, b: doc::Block) {
        if !self.enabled {
            return;
        }
        let doc = Document {
            title: String::new(),
            blocks: vec![b],
        };
        let stdout = io::stdout();
        let mut out = stdout.lock();
        let _ = text::Text::new(self.style).export(&doc, &mut out);
        let _ = out.flush();
    }

    /// Show one line of verbatim text now (a peer tool's interval line).
    pub fn line(&self, s: impl Into<String>) {
        let mut s = s.into();
        if !s.ends_with('\n') {
            s.push('\n');
        }
        self.block(doc::Block::Preformatted(s));
    }
}

/// Write a report file (tune's report directory, `check --emit`) durably
/// ([`crate::durable`], 0644 narrowed by the umask), never over anything
/// but a regular file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    crate::durable::write(path, bytes, &crate::durable::Options::SHARED).map_err(|e| match e {
        crate::durable::Error::NotRegular { .. } => Fix::new(
            format!("{e}; innotune writes only regular files"),
            "remove it, or write the report somewhere else",
        )
        .into(),
        crate::durable::Error::Io(e) if crate::durable::no_space(&e) => Fix::new(
            format!(
                "no space left to write {} ({e}); what was there is left as it was",
                path.display()
            ),
            "free space on its filesystem, or write the report to another",
        )
        .into(),
        crate::durable::Error::Io(e) => Fix::new(
            format!("cannot write {}: {e}", path.display()),
            "give a path in a directory you can write to",
        )
        .into(),
    })
}

/// Refuse an `--output` that names something other than a regular file
/// (a device such as /dev/null, a FIFO, a symbolic link, a directory):
/// writing it would replace that with a file. Called before a command
/// runs, and again when its report is written.
pub fn check_output(path: &Path) -> anyhow::Result<()> {
    match crate::durable::check_target(path, &crate::durable::Options::SHARED) {
        Ok(()) if path.file_name().is_some() => Ok(()),
        Ok(()) => Err(Fix::new(
            format!("--output {} names no file", path.display()),
            "give a file path such as report.json",
        )
        .into()),
        Err(crate::durable::Error::NotRegular {
            what: "a directory",
            ..
        }) => Err(Fix::new(
            format!("--output {} is a directory", path.display()),
            "give a file path inside it, such as report.json",
        )
        .into()),
        Err(crate::durable::Error::NotRegular { what, .. }) => Err(Fix::new(
            format!(
                "--output {} is {what}, not a regular file; --output writes only regular files",
                path.display()
            ),
            "omit --output to write to stdout (redirect it with > if you must), or give the path of a regular file",
        )
        .into()),
        Err(crate::durable::Error::Io(e)) => Err(Fix::new(
            format!("cannot inspect --output {}: {e}", path.display()),
            "give a path in a directory you can write to",
        )
        .into()),
    }
}

/// Write `bytes` to `--output` `path` durably ([`crate::durable`]).
fn write_output(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    check_output(path)?;
    crate::durable::write(path, bytes, &crate::durable::Options::SHARED).map_err(|e| match e {
        crate::durable::Error::NotRegular { .. } => check_output(path)
            .err()
            .unwrap_or_else(|| anyhow::anyhow!("{e}")),
        crate::durable::Error::Io(e) if crate::durable::no_space(&e) => Fix::new(
            format!(
                "no space left to write --output {} ({e}); what was there is left as it was",
                path.display()
            ),
            "free space on its filesystem, or give --output a path on another",
        )
        .into(),
        crate::durable::Error::Io(e) => Fix::new(
            format!("cannot write --output {}: {e}", path.display()),
            "give a path in a directory you can write to",
        )
        .into(),
    })
}
