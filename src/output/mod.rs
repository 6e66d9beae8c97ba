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
    eprintln!(
        "{} {}",
        style.warn("innotune: warning:"),
        escape_controls(msg.as_ref())
    );
}

/// Show control characters as visible escapes (`\e`, `\n`, `\t`, `\x07`),
/// as `ls -b` does, and the backslash itself as `\\` so the result is
/// unambiguous. Bidirectional-override characters (which can make a path
/// read differently from what it is) are shown as `\u{202e}`.
pub fn escape(s: &str) -> String {
    escape_into(s, true)
}

/// [`escape`] without the backslash: for a line that is already made of
/// escaped parts (an error line naming [`path`]s, a warning), so nothing is
/// escaped twice; it only keeps raw control bytes (ESC sequences that
/// recolour or rewrite the terminal) and bidi overrides off the screen.
/// Every error line and warning passes through it (`src/main.rs`, [`warn`]).
pub fn escape_controls(s: &str) -> String {
    escape_into(s, false)
}

fn escape_into(s: &str, backslash: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' if backslash => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\x1b' => out.push_str("\\e"),
            c if (c as u32) < 0x20 || c == '\x7f' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control()
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}') =>
            {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

/// A path as text, losslessly: valid UTF-8 as [`escape`] shows it, and each
/// byte that is not UTF-8 as `\xNN` (NN ≥ 80, so never one of `escape`'s
/// control escapes). Two different paths never give the same text, which
/// `Path::display` cannot promise (it turns every bad byte into U+FFFD).
/// Plain paths (no backslash, control or bidi character) come out
/// unchanged. Written here rather than taken from a crate (bstr's
/// `escape_bytes` is close) so paths read like every other escaped value
/// innotune prints.
pub fn path(p: &std::path::Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for chunk in p.as_os_str().as_bytes().utf8_chunks() {
        out.push_str(&escape(chunk.valid()));
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// `s` as one shell word: as it is when it holds only characters no
/// shell treats specially, else single-quoted (a command innotune prints
/// for the user to run, with a path in it). Hand-written: seven lines,
/// where a crate would add a dependency for one call.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+,:@".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;

    fn p(b: &[u8]) -> String {
        path(Path::new(OsStr::from_bytes(b)))
    }

    #[test]
    fn paths_are_lossless() {
        assert_eq!(p(b"/var/lib/mysql/t.ibd"), "/var/lib/mysql/t.ibd");
        assert_eq!(p("/tmp/é.ibd".as_bytes()), "/tmp/é.ibd");
        assert_eq!(p(b"/tmp/a\xff.ibd"), "/tmp/a\\xff.ibd");
        assert_eq!(p(b"/tmp/a\x1b[31m"), "/tmp/a\\e[31m");
        // Distinct paths, distinct texts (display() gives U+FFFD for all three).
        let all = [
            p(b"a\xff"),
            p(b"a\xfe"),
            p(b"a\\xff"),
            p("a\u{fffd}".as_bytes()),
            p("a\u{80}".as_bytes()),
            p(b"a\x80"),
        ];
        for (i, x) in all.iter().enumerate() {
            for y in &all[i + 1..] {
                assert_ne!(x, y);
            }
        }
    }

    #[test]
    fn controls_are_escaped_but_backslashes_kept() {
        assert_eq!(escape_controls("a\x1b[2Jb \\xff"), "a\\e[2Jb \\xff");
        assert_eq!(escape("a\x1bb\\"), "a\\eb\\\\");
    }
}
