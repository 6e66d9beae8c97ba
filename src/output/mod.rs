//! Presentation: typed results in, text or JSON out.
//!
//! Every command returns a value implementing [`Report`]. The binary picks a
//! renderer from `--format`; commands never print their results themselves.
//! Progress lines and warnings go to stderr (see [`progress`]), so stdout
//! stays a clean document that scripts can parse.

pub mod progress;
pub mod table;

use serde::Serialize;
use std::io::{self, Write};

/// Version of the JSON envelope and of every command's `result` schema.
/// Bump when a field changes meaning or disappears; adding fields is not a
/// breaking change. Documented in docs/json.md.
pub const JSON_SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum Format {
    /// Aligned tables for people; colour only on a terminal.
    #[default]
    Text,
    /// One versioned JSON document on stdout (see docs/json.md).
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

/// How text output should look on this stream.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub color: bool,
}

impl Style {
    pub fn for_stdout(choice: ColorChoice) -> Style {
        use std::io::IsTerminal;
        let color = match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
            }
        };
        Style { color }
    }

    pub fn plain() -> Style {
        Style { color: false }
    }

    fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    pub fn bold(&self, s: &str) -> String {
        self.paint("1", s)
    }
    pub fn good(&self, s: &str) -> String {
        self.paint("32", s)
    }
    pub fn bad(&self, s: &str) -> String {
        self.paint("31", s)
    }
    pub fn warn(&self, s: &str) -> String {
        self.paint("33", s)
    }
    pub fn dim(&self, s: &str) -> String {
        self.paint("2", s)
    }
}

/// A command's typed result.
pub trait Report: Serialize {
    /// Command name, used as `"command"` in the JSON envelope.
    const COMMAND: &'static str;

    /// Human-readable rendering.
    fn render_text(&self, out: &mut dyn Write, style: Style) -> io::Result<()>;

    /// Exit code for a successful run: [`crate::error::exit::OK`] or
    /// [`crate::error::exit::FOUND`] when the command found what it looks for.
    fn exit_code(&self) -> i32 {
        crate::error::exit::OK
    }
}

/// The JSON envelope every command shares.
#[derive(Serialize)]
struct Envelope<'a, T: Serialize> {
    /// Always "innotune".
    tool: &'static str,
    /// innotune's version.
    version: &'static str,
    schema_version: u32,
    command: &'static str,
    result: &'a T,
}

/// Render a report in the requested format and return its exit code.
pub fn emit<R: Report>(report: &R, format: Format, color: ColorChoice) -> anyhow::Result<i32> {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    match format {
        Format::Text => report.render_text(&mut out, Style::for_stdout(color))?,
        Format::Json => {
            let env = Envelope {
                tool: "innotune",
                version: env!("CARGO_PKG_VERSION"),
                schema_version: JSON_SCHEMA_VERSION,
                command: R::COMMAND,
                result: report,
            };
            serde_json::to_writer_pretty(&mut out, &env)?;
            writeln!(out)?;
        }
    }
    out.flush()?;
    Ok(report.exit_code())
}

/// A warning for the user, on stderr, never mixed into stdout documents.
pub fn warn(msg: impl AsRef<str>) {
    use std::io::IsTerminal;
    let style = Style {
        color: io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    };
    eprintln!("{} {}", style.warn("innotune: warning:"), msg.as_ref());
}
