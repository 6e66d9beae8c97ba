//! The one way to open a file the user named as input: `check --results`,
//! `check --slowlog`, `report FILE…`, `bench --job-file`, `slowlog FILE`.
//!
//! Only a regular file is read. A FIFO would block the command until some
//! other process writes to it (forever, if none does), a device such as
//! `/dev/zero` reads without end until memory runs out, a directory cannot
//! be read at all: each is refused in one line naming the path, what it is
//! and the fix, and nothing blocks on the way. The path is looked at with
//! `stat` first (so a device is never even opened: opening some has side
//! effects), then opened with `O_NONBLOCK` (so a FIFO swapped in between
//! cannot block the open) and the opened file checked again with `fstat`.
//! A size cap ([`Input::max`]) bounds what a whole-file read may allocate.
//!
//! Reading a stream the user pipes in (`slowlog -`) is the caller's choice
//! and does not come here.

use crate::error::Fix;
use anyhow::Result;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// A kind of input file, as the messages name it.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// What the file is to the command, as an error line names it
    /// (`--results`, `slow log`, `job file`, `result file`).
    pub what: &'a str,
    /// How to give a right file (the error line's fix).
    pub fix: &'a str,
    /// Largest size read whole, in bytes (`None`: no limit, for files that
    /// are mapped or streamed rather than read into memory).
    pub max: Option<u64>,
}

impl Input<'_> {
    fn not_regular(&self, path: &Path, t: std::fs::FileType) -> anyhow::Error {
        let kind = crate::durable::describe(t);
        let why = match kind {
            "a FIFO" | "a socket" => " (reading it would wait for a writer)",
            "a character device" | "a block device" => " (reading it might never end)",
            _ => "",
        };
        Fix::new(
            format!(
                "{} {} is {kind}, not a regular file{why}",
                self.what,
                path.display()
            ),
            self.fix,
        )
        .into()
    }

    fn too_big(&self, path: &Path, len: u64, max: u64) -> anyhow::Error {
        Fix::new(
            format!(
                "{} {} holds {len} bytes or more, more than the {} such a file can be",
                self.what,
                path.display(),
                crate::units::fmt_size(max)
            ),
            self.fix,
        )
        .into()
    }

    /// Open `path` for reading: a regular file (a symbolic link to one is
    /// followed), never blocking; with [`Input::max`], no larger than it.
    pub fn open(&self, path: &Path) -> Result<File> {
        let cannot = |e: std::io::Error| -> anyhow::Error {
            Fix::new(
                format!("cannot read {} {}: {e}", self.what, path.display()),
                self.fix,
            )
            .into()
        };
        // stat before open: a device or FIFO is refused without opening it.
        let meta = std::fs::metadata(path).map_err(cannot)?;
        if !meta.is_file() {
            return Err(self.not_regular(path, meta.file_type()));
        }
        // O_NONBLOCK: a FIFO put there since the stat must not block the
        // open (no effect on a regular file's reads); O_NOCTTY: a terminal
        // put there never becomes ours.
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(path)
            .map_err(cannot)?;
        let meta = file.metadata().map_err(cannot)?;
        if !meta.is_file() {
            return Err(self.not_regular(path, meta.file_type()));
        }
        if let Some(max) = self.max {
            if meta.len() > max {
                return Err(self.too_big(path, meta.len(), max));
            }
        }
        Ok(file)
    }

    /// The whole of `path` (see [`Input::open`]); a file that grows past
    /// [`Input::max`] while read is refused too.
    pub fn read(&self, path: &Path) -> Result<Vec<u8>> {
        let file = self.open(path)?;
        let mut bytes = Vec::new();
        let limit = self.max.map_or(u64::MAX, |m| m.saturating_add(1));
        file.take(limit).read_to_end(&mut bytes).map_err(|e| {
            Fix::new(
                format!("cannot read {} {}: {e}", self.what, path.display()),
                self.fix,
            )
        })?;
        if let Some(max) = self.max {
            if bytes.len() as u64 > max {
                return Err(self.too_big(path, bytes.len() as u64, max));
            }
        }
        Ok(bytes)
    }

    /// [`Input::read`] as UTF-8 text.
    pub fn read_to_string(&self, path: &Path) -> Result<String> {
        String::from_utf8(self.read(path)?).map_err(|e| {
            Fix::new(
                format!(
                    "{} {} is not UTF-8 text (byte {})",
                    self.what,
                    path.display(),
                    e.utf8_error().valid_up_to()
                ),
                self.fix,
            )
            .into()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Input = Input {
        what: "test input",
        fix: "give a regular file",
        max: Some(16),
    };

    fn err(r: Result<impl Sized>) -> String {
        match r {
            Ok(_) => panic!("accepted"),
            Err(e) => format!("{e:#}"),
        }
    }

    #[test]
    fn a_fifo_a_directory_and_a_device_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .unwrap();
        let e = err(T.read(&fifo));
        assert!(e.contains("is a FIFO, not a regular file"), "{e}");
        assert!(
            e.contains(&*fifo.to_string_lossy()) && e.contains("fix: give"),
            "{e}"
        );
        assert!(err(T.read(dir.path())).contains("is a directory"));
        assert!(err(T.read(Path::new("/dev/zero"))).contains("is a character device"));
        assert!(err(T.read(&dir.path().join("none"))).contains("cannot read test input"));
    }

    #[test]
    fn size_cap_and_links_to_regular_files() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, b"0123456789abcdef").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&f, &link).unwrap();
        assert_eq!(T.read_to_string(&link).unwrap(), "0123456789abcdef");
        std::fs::write(&f, b"0123456789abcdefg").unwrap();
        assert!(err(T.read(&f)).contains("more than the 16B"));
        let unlimited = Input { max: None, ..T };
        assert_eq!(unlimited.read(&f).unwrap().len(), 17);
    }
}
