//! The last `innotune tune`'s verdicts, kept in the state directory so
//! `check --format prometheus` can export them (the dashboard's "last
//! tune's verdicts" panel).
//!
//! `tune` writes its report directory wherever `--out` says, which the
//! exporter cannot know; so, like `checksum --record`'s records
//! ([`crate::checksum::record`]), tune keeps what the metrics need in
//! `<state dir>/tune/last.json`: a 0700 directory, a 0600 file written
//! durably ([`crate::durable`]: never over anything but a regular file).
//! It is read back only when it is a regular file owned by the running
//! user, opened with `O_NOFOLLOW` and checked on the open descriptor, so a
//! planted link or a file swapped in after a check cannot feed the
//! exporter. It is not a host change: no journal entry.
//!
//! The type lives here, with its reader, because check (analysis) may not
//! import tune (a later layer); tune fills it from its OLTP cells.

use crate::error::Fix;
use crate::stats::Effect;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Largest record read back (a tune has a few dozen cells at most).
const MAX_BYTES: u64 = 1 << 20;

/// What is kept of the last tune run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TuneRecord {
    /// The tuned path, as [`crate::output::path`] writes it.
    pub path: String,
    /// When the run finished, Unix seconds.
    pub finished_unix: u64,
    /// Each before/after cell the OLTP phase measured (none when that phase
    /// was skipped or failed).
    pub cells: Vec<CellRecord>,
}

/// One before/after cell: the ratio after / before of TPS with its
/// interval and verdict, exactly as tune.json has them.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CellRecord {
    pub workload: String,
    pub threads: u32,
    pub rounds: u32,
    /// Absent when a side had no rounds or a median TPS of 0; then the
    /// interval is absent too and only the verdict is exported.
    pub ratio: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub ci_level_pct: f64,
    pub verdict: Effect,
}

impl CellRecord {
    /// Ratio and interval together, or nothing: a ratio is never shown
    /// without its interval.
    pub fn interval(&self) -> Option<(f64, f64, f64)> {
        match (self.ratio, self.ci_low, self.ci_high) {
            (Some(r), Some(l), Some(h)) if r.is_finite() && l.is_finite() && h.is_finite() => {
                Some((r, l, h))
            }
            _ => None,
        }
    }
}

pub fn dir() -> PathBuf {
    crate::journal::state_dir().join("tune")
}

pub fn file() -> PathBuf {
    dir().join("last.json")
}

/// Keep `rec` as the last tune's record (replacing the one before).
pub fn save(rec: &TuneRecord) -> Result<()> {
    save_in(&dir(), rec)
}

fn save_in(d: &Path, rec: &TuneRecord) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    let fail = |e: &dyn std::fmt::Display| -> anyhow::Error {
        Fix::new(
            format!("cannot record the tune result in {}: {e}", d.display()),
            "run as root, or set INNOTUNE_STATE_DIR to a writable directory (the report directory is complete)",
        )
        .into()
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(d)
        .map_err(|e| fail(&e))?;
    let text = serde_json::to_string_pretty(rec)?;
    crate::durable::write(
        &d.join("last.json"),
        text.as_bytes(),
        &crate::durable::Options::PRIVATE,
    )
    .map_err(|e| {
        if crate::durable::no_space(&e) {
            Fix::new(
                format!(
                    "no space left in {} to record the tune result (the last record is kept)",
                    d.display()
                ),
                "free space on that filesystem (or set INNOTUNE_STATE_DIR to a directory on another); the report directory is complete",
            )
            .into()
        } else {
            fail(&e)
        }
    })
}

/// The last tune's record, if there is one that is a regular file owned by
/// the running user and parses; anything else is skipped (the exporter
/// must not fail because of it).
pub fn load() -> Option<TuneRecord> {
    load_from(&file())
}

fn load_from(p: &Path) -> Option<TuneRecord> {
    serde_json::from_slice(&crate::durable::read_own(p, MAX_BYTES)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> TuneRecord {
        TuneRecord {
            path: "/var/lib/mysql".into(),
            finished_unix: 1_700_000_000,
            cells: vec![CellRecord {
                workload: "oltp_read_only".into(),
                threads: 8,
                rounds: 9,
                ratio: Some(1.5),
                ci_low: Some(1.2),
                ci_high: Some(1.8),
                ci_level_pct: 95.0,
                verdict: Effect::Faster,
            }],
        }
    }

    #[test]
    fn saved_record_reads_back_private() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("tune");
        save_in(&d, &record()).unwrap();
        assert_eq!(load_from(&d.join("last.json")), Some(record()));
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&d), 0o700);
        assert_eq!(mode(&d.join("last.json")) & 0o077, 0);
    }

    #[test]
    fn a_link_or_a_fifo_in_its_place_is_not_read() {
        let t = tempfile::tempdir().unwrap();
        let real = t.path().join("real.json");
        std::fs::write(&real, serde_json::to_vec(&record()).unwrap()).unwrap();
        assert!(load_from(&real).is_some());
        let link = t.path().join("last.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert_eq!(load_from(&link), None);
        let fifo = t.path().join("fifo.json");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        assert_eq!(load_from(&fifo), None);
    }

    #[test]
    fn a_ratio_without_its_interval_has_none() {
        let mut c = record().cells[0].clone();
        assert_eq!(c.interval(), Some((1.5, 1.2, 1.8)));
        c.ci_high = None;
        assert_eq!(c.interval(), None);
    }
}
