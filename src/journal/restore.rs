//! Putting journaled changes back, for the guard and for `innotune restore`.

use super::{cli::RestoreArgs, journal_path, load, remove_journal, sysfs_value, Entry, Owner};
use crate::error::{exit, Fix};
use crate::host::Host;
use crate::Ctx;
use anyhow::Result;
use serde::Serialize;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// What happened to one entry.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// The original value was written back (and read back equal).
    Restored,
    /// It already held the original value.
    AlreadyOriginal,
    /// A created file or directory was deleted.
    Removed,
    /// The attribute or file no longer exists (e.g. a detached loop device):
    /// nothing left to restore.
    Gone,
    /// `--dry-run`: this would be written back or removed.
    WouldRestore,
    /// It could not be put back; the entry stays in the journal.
    Failed { reason: String },
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Restored => f.write_str("restored"),
            Outcome::AlreadyOriginal => f.write_str("already original"),
            Outcome::Removed => f.write_str("removed"),
            Outcome::Gone => f.write_str("gone"),
            Outcome::WouldRestore => f.write_str("would restore"),
            Outcome::Failed { reason } => write!(f, "failed: {reason}"),
        }
    }
}

/// One entry and its outcome.
#[derive(Debug, Clone, Serialize)]
pub struct Restored {
    pub kind: &'static str,
    pub path: PathBuf,
    /// sysfs: the value put back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub original: Option<String>,
    /// sysfs: the value found before restoring.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub found: Option<String>,
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// Restore entries in a safe order and report each.
///
/// Order: scheduler files first, then other sysfs attributes in the order
/// they were recorded, then created files/directories newest first. Why:
/// switching the scheduler resets `nr_requests` to the new scheduler's
/// default, so the scheduler must be back before `nr_requests` is written.
/// Results come back in the entries' own order.
pub fn restore_entries(entries: &[Entry], dry_run: bool) -> Vec<Restored> {
    let is_sched =
        |e: &Entry| matches!(e, Entry::Sysfs { path, .. } if path.ends_with("queue/scheduler"));
    let mut order: Vec<usize> = (0..entries.len())
        .filter(|&i| is_sched(&entries[i]))
        .collect();
    order.extend(
        (0..entries.len())
            .filter(|&i| matches!(entries[i], Entry::Sysfs { .. }) && !is_sched(&entries[i])),
    );
    order.extend(
        (0..entries.len())
            .rev()
            .filter(|&i| !matches!(entries[i], Entry::Sysfs { .. })),
    );
    let mut out: Vec<Option<Restored>> = vec![None; entries.len()];
    for i in order {
        out[i] = Some(restore_one(&entries[i], dry_run));
    }
    out.into_iter().flatten().collect()
}

fn restore_one(e: &Entry, dry_run: bool) -> Restored {
    match e {
        Entry::Sysfs {
            path,
            original,
            root,
            ..
        } => {
            let host = Host::with_root(root);
            let (found, outcome) = restore_sysfs(&host, path, original, dry_run);
            Restored {
                kind: e.kind(),
                path: path.clone(),
                original: Some(original.clone()),
                found,
                outcome,
            }
        }
        Entry::File { path } | Entry::Dir { path } => {
            let outcome = if !path.exists() {
                Outcome::Gone
            } else if dry_run {
                Outcome::WouldRestore
            } else {
                let r = if matches!(e, Entry::Dir { .. }) {
                    std::fs::remove_dir_all(path)
                } else {
                    std::fs::remove_file(path)
                };
                match r {
                    Ok(()) => Outcome::Removed,
                    Err(err) => Outcome::Failed {
                        reason: err.to_string(),
                    },
                }
            };
            Restored {
                kind: e.kind(),
                path: path.clone(),
                original: None,
                found: None,
                outcome,
            }
        }
    }
}

fn restore_sysfs(
    host: &Host,
    path: &Path,
    original: &str,
    dry_run: bool,
) -> (Option<String>, Outcome) {
    let now = match host.read(path) {
        Ok(s) => sysfs_value(&s),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return (None, Outcome::Gone),
        Err(e) => {
            return (
                None,
                Outcome::Failed {
                    reason: format!("cannot read: {e}"),
                },
            )
        }
    };
    if now == original {
        return (Some(now), Outcome::AlreadyOriginal);
    }
    if dry_run {
        return (Some(now), Outcome::WouldRestore);
    }
    if let Err(e) = host.write(path, original) {
        let outcome =
            if e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENODEV) {
                Outcome::Gone
            } else {
                Outcome::Failed {
                    reason: format!("cannot write {original:?}: {e}"),
                }
            };
        return (Some(now), outcome);
    }
    match host.read(path).map(|s| sysfs_value(&s)) {
        Ok(v) if v == original => (Some(now), Outcome::Restored),
        Ok(v) => (
            Some(now),
            Outcome::Failed {
                reason: format!("wrote {original:?} but it reads {v:?}"),
            },
        ),
        Err(e) => (
            Some(now),
            Outcome::Failed {
                reason: format!("cannot read back: {e}"),
            },
        ),
    }
}

/// `innotune restore`'s result.
#[derive(Debug, Serialize)]
pub struct RestoreReport {
    /// Path of the journal file looked at.
    pub journal: PathBuf,
    /// Whether a journal existed.
    pub found: bool,
    pub dry_run: bool,
    /// The run that wrote the journal.
    pub owner: Option<Owner>,
    /// Every entry with its outcome.
    pub entries: Vec<Restored>,
    /// The journal was deleted (everything is back).
    pub journal_removed: bool,
}

impl RestoreReport {
    pub fn failed(&self) -> usize {
        self.entries
            .iter()
            .filter(|r| matches!(r.outcome, Outcome::Failed { .. }))
            .count()
    }
}

impl crate::output::Report for RestoreReport {
    const COMMAND: &'static str = "restore";
    fn render_text(&self, out: &mut dyn io::Write, style: crate::output::Style) -> io::Result<()> {
        super::render::restore_text(self, out, style)
    }
    /// 0: nothing pending, or everything put back (or listed, with
    /// `--dry-run`); 2: something could not be restored (journal kept).
    fn exit_code(&self) -> i32 {
        if self.failed() > 0 {
            exit::ERROR
        } else {
            exit::OK
        }
    }
}

pub fn run_restore(args: RestoreArgs, ctx: &Ctx) -> Result<i32> {
    let path = journal_path();
    let report = restore_at(&path, args.dry_run)?;
    ctx.emit(&report)
}

/// Restore from the journal at `path` (the body of `innotune restore`).
pub fn restore_at(path: &Path, dry_run: bool) -> Result<RestoreReport> {
    let Some(mut j) = load(path)? else {
        return Ok(RestoreReport {
            journal: path.to_path_buf(),
            found: false,
            dry_run,
            owner: None,
            entries: vec![],
            journal_removed: false,
        });
    };
    if j.owner.pid != std::process::id() && j.owner.is_alive() && !dry_run {
        return Err(Fix::new(
            format!(
                "innotune pid {} (`{}`) is still running and restores on exit",
                j.owner.pid, j.owner.command
            ),
            format!(
                "wait for it, or stop it with `kill -TERM {}` (it restores on SIGTERM)",
                j.owner.pid
            ),
        )
        .into());
    }
    let entries = restore_entries(&j.entries, dry_run);
    let mut journal_removed = false;
    if !dry_run {
        let failed: Vec<Entry> = j
            .entries
            .iter()
            .zip(&entries)
            .filter(|(_, r)| matches!(r.outcome, Outcome::Failed { .. }))
            .map(|(e, _)| e.clone())
            .collect();
        if failed.is_empty() {
            remove_journal(path)?;
            journal_removed = true;
        } else {
            j.entries = failed;
            super::persist(path, &j)?;
        }
    }
    Ok(RestoreReport {
        journal: path.to_path_buf(),
        found: true,
        dry_run,
        owner: Some(j.owner),
        entries,
        journal_removed,
    })
}
