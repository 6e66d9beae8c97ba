//! The terminal: colour, progress lines and warnings on stderr.
//!
//! Results are not printed here: commands return typed reports and
//! [`crate::export`] renders them. Progress and warnings go to stderr (see
//! [`progress`]), so stdout stays a clean document that scripts can parse;
//! warnings are also kept for the JSON envelope's `warnings`.

pub mod progress;
pub mod table;

use std::io;
use std::sync::Mutex;

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

/// Warnings printed so far, for the JSON envelope.
static WARNINGS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Every warning printed by this process so far, in order.
pub fn warnings() -> Vec<String> {
    WARNINGS.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// A warning for the user, on stderr, never mixed into stdout documents;
/// also recorded for the JSON envelope's `warnings`.
pub fn warn(msg: impl AsRef<str>) {
    WARNINGS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(msg.as_ref().to_string());
    use std::io::IsTerminal;
    let style = Style {
        color: io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    };
    eprintln!("{} {}", style.warn("innotune: warning:"), msg.as_ref());
}
