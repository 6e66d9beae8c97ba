//! `checksum --record`: the last result per checked path, kept in the state
//! directory so `check --format prometheus` can export it (a corruption
//! alert, and an alert when the nightly check stopped running).
//!
//! One small JSON file per path, named by a hash of the canonical path, in
//! `<state dir>/checksum/` (0700, like the journal's directory). Files are
//! written durably ([`crate::durable`]: 0600, never over anything but a
//! regular file), and read back only when they are regular files owned
//! by the running user, so a planted file cannot feed the exporter.

use super::report::ChecksumReport;
use crate::error::Fix;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fs;
use std::path::{Path, PathBuf};

/// What is kept of one run, per path given on the command line.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Record {
    /// The path as checked (canonical), as [`crate::output::path`] writes
    /// it: a byte that is not UTF-8 is `\xNN`, a backslash `\\`, so two
    /// paths never share a record or a label.
    pub path: String,
    /// When the run finished, Unix seconds.
    pub finished_unix: u64,
    pub files: u64,
    pub files_with_errors: u64,
    pub pages_checked: u64,
    pub bad_pages: u64,
    /// The run's exit code (0 ok, 1 bad pages over the allowance, 2 a file
    /// could not be checked).
    pub exit_code: i32,
}

pub fn dir() -> PathBuf {
    crate::journal::state_dir().join("checksum")
}

fn file_for(path: &str) -> PathBuf {
    let h = Sha256::digest(path.as_bytes());
    let hex: String = h[..8].iter().map(|b| format!("{b:02x}")).collect();
    dir().join(format!("{hex}.json"))
}

/// Keep `report` as the last result of each of `paths`.
pub fn save(paths: &[PathBuf], report: &ChecksumReport) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    let d = dir();
    let fail = |e: std::io::Error| -> anyhow::Error {
        Fix::new(
            format!("cannot record the checksum result in {}: {e}", d.display()),
            "run as root, or set INNOTUNE_STATE_DIR to a writable directory, or leave out --record",
        )
        .into()
    };
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&d)
        .map_err(fail)?;
    let finished_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |t| t.as_secs());
    for p in paths {
        let canonical = fs::canonicalize(p).unwrap_or_else(|_| p.clone());
        let path = crate::output::path(&canonical);
        // This argument's own files (a run may name several paths). Report
        // paths are written by `output::path`, which escapes byte by byte
        // and never writes a `/`, so a file under `p` has a written path
        // under `p`'s written path, component by component.
        let given = crate::output::path(p);
        let mine: Vec<_> = report
            .files
            .iter()
            .filter(|f| {
                let fp = Path::new(&f.path);
                fp.starts_with(&given) || fp.starts_with(&path)
            })
            .collect();
        let files_with_errors = mine.iter().filter(|f| f.error.is_some()).count() as u64;
        let bad_pages: u64 = mine.iter().map(|f| f.bad).sum();
        let rec = Record {
            path: path.clone(),
            finished_unix,
            files: mine.len() as u64,
            files_with_errors,
            pages_checked: mine.iter().map(|f| f.pages_checked).sum(),
            bad_pages,
            exit_code: if files_with_errors > 0 {
                crate::error::exit::ERROR
            } else if bad_pages > 0 && report.exceeded {
                crate::error::exit::FOUND
            } else {
                crate::error::exit::OK
            },
        };
        let target = file_for(&path);
        let text = serde_json::to_string_pretty(&rec)?;
        crate::durable::write(&target, text.as_bytes(), &crate::durable::Options::PRIVATE)
            .map_err(|e| {
                if crate::durable::no_space(&e) {
                    // The write never reached its rename: the last record
                    // (if any) is as it was.
                    let kept = if target.exists() {
                        "the last record is kept"
                    } else {
                        "nothing was recorded for it"
                    };
                    Fix::new(
                        format!(
                            "no space left in {} to record the result of {path} ({kept})",
                            d.display()
                        ),
                        "free space on that filesystem (or set INNOTUNE_STATE_DIR to a directory on another) and run again, or leave out --record",
                    )
                    .into()
                } else {
                    fail(e.into())
                }
            })?;
    }
    Ok(())
}

/// A record is a few hundred bytes; anything far larger is not one.
const MAX_RECORD_BYTES: u64 = 1 << 20;

/// Every kept record, by path; unreadable, foreign or malformed files are
/// skipped (the exporter must not fail because of one).
pub fn load_all() -> Vec<Record> {
    load_from(&dir())
}

fn load_from(d: &Path) -> Vec<Record> {
    let mut out = Vec::new();
    let Ok(rd) = fs::read_dir(d) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.extension().and_then(|x| x.to_str()) != Some("json") {
            continue;
        }
        if let Some(bytes) = crate::durable::read_own(&p, MAX_RECORD_BYTES) {
            if let Ok(r) = serde_json::from_slice::<Record>(&bytes) {
                out.push(r);
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}
