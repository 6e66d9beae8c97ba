//! Errors a user can act on.
//!
//! innotune's rule: bad input or a hostile environment produces *one line*
//! on stderr that says what went wrong and how to fix it, then exit code 2.
//! `anyhow` carries the context chain; [`Fix`] adds the "how to fix it" part so
//! call sites read as `bail!(Fix::new("…", "…"))`.

use std::fmt;

/// Exit codes shared by every command (documented in README.md).
pub mod exit {
    /// Ran and found nothing to report.
    pub const OK: i32 = 0;
    /// Ran and found what the command looks for: findings, corruption, a
    /// pending change. Each command documents what that means for it.
    pub const FOUND: i32 = 1;
    /// Usage or environment error: nothing trustworthy was produced.
    pub const ERROR: i32 = 2;
}

/// An error that names its fix. Display prints `what (fix: how)` on one line.
#[derive(Debug)]
pub struct Fix {
    pub what: String,
    pub how: String,
}

impl Fix {
    pub fn new(what: impl Into<String>, how: impl Into<String>) -> Self {
        Fix {
            what: what.into(),
            how: how.into(),
        }
    }
}

impl fmt::Display for Fix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (fix: {})", self.what, self.how)
    }
}

impl std::error::Error for Fix {}

/// Render an error chain as one line: `outer: inner: root`, with newlines in
/// any message folded so the "one line" promise holds even for OS messages.
pub fn one_line(err: &anyhow::Error) -> String {
    let s = format!("{err:#}");
    s.split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
