//! Putting journaled changes back, for the guard and for `innotune restore`.

use super::{
    cli::RestoreArgs, journal_path, load, remove_journal, server, sysfs_value, Entry, Owner,
};
use crate::error::{exit, Fix};
use crate::host::Host;
use crate::Ctx;
use anyhow::Result;
use serde::Serialize;
use std::io;
use std::path::{Path, PathBuf};

pub use crate::change::Outcome;

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
    /// server: the pid found running (and verified to be that server).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// Restore entries in a safe order and report each.
///
/// Order ([`restore_order`]): scheduler files, other sysfs attributes,
/// servers, then created files/directories newest first. Results come back
/// in the entries' own order. A directory that holds a server which could
/// not be stopped is left in place (deleting a running server's datadir
/// frees nothing and hides the server); it fails, to be retried.
pub fn restore_entries(entries: &[Entry], dry_run: bool) -> Vec<Restored> {
    let mut out: Vec<Option<Restored>> = vec![None; entries.len()];
    let mut running: Vec<PathBuf> = Vec::new();
    for i in restore_order(entries) {
        let r = match &entries[i] {
            Entry::File { path } | Entry::Dir { path } => {
                match running.iter().find(|d| d.starts_with(path)) {
                    Some(d) => Restored {
                        kind: entries[i].kind(),
                        path: path.clone(),
                        original: None,
                        found: None,
                        pid: None,
                        outcome: Outcome::Failed {
                            reason: format!("kept: the server in {} is still running", d.display()),
                        },
                    },
                    None => restore_one(&entries[i], dry_run),
                }
            }
            e => restore_one(e, dry_run),
        };
        if let (Entry::Server { dir, .. }, Outcome::Failed { .. }) = (&entries[i], &r.outcome) {
            running.push(dir.clone());
        }
        out[i] = Some(r);
    }
    out.into_iter().flatten().collect()
}

/// The order entries are restored in, as indices.
///
/// Why: switching the scheduler resets `nr_requests` to the new
/// scheduler's default, so schedulers go back before other attributes; a
/// server's datadir lives in a directory innotune created, so servers stop
/// before any file or directory is deleted; and a directory's own
/// contents were created after it, so newest first.
pub fn restore_order(entries: &[Entry]) -> Vec<usize> {
    let is_sched =
        |e: &Entry| matches!(e, Entry::Sysfs { path, .. } if path.ends_with("queue/scheduler"));

    use crate::change::Priority;
    let prio = |e: &Entry| -> Priority {
        match e {
            Entry::Sysfs { .. } if is_sched(e) => Priority::SCHEDULER,
            Entry::Sysfs { .. } => Priority::ATTRIBUTE,
            Entry::Server { .. } => Priority::SERVER,
            Entry::File { .. } => Priority::FILE,
            Entry::Dir { .. } => Priority::DIR,
            Entry::Change { change, .. } => change.priority(),
        }
    };
    // Stable: equal priorities keep journal order, except that files and
    // directories (created ones hold later ones) go newest first.
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by_key(|&i| {
        let p = prio(&entries[i]);
        let newest_first = p >= Priority::FILE;
        (
            if newest_first { Priority::FILE } else { p },
            if newest_first { usize::MAX - i } else { i },
        )
    });
    order
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
                pid: None,
                outcome,
            }
        }
        Entry::File { path } | Entry::Dir { path } => {
            let outcome = if !path.exists() {
                Outcome::Gone
            } else if dry_run {
                Outcome::WouldRestore
            } else {
                remove_created(path, matches!(e, Entry::Dir { .. }))
            };
            Restored {
                kind: e.kind(),
                path: path.clone(),
                original: None,
                found: None,
                pid: None,
                outcome,
            }
        }
        Entry::Change { change, .. } => {
            let u = change.undo(dry_run);
            Restored {
                kind: change.typetag_name(),
                path: PathBuf::from(change.target()),
                original: u.original,
                found: u.found,
                pid: u.pid,
                outcome: u.outcome,
            }
        }
        Entry::Server {
            dir,
            pid,
            start_ticks,
        } => {
            let procs = server::find(dir, *pid, *start_ticks);
            let outcome = if procs.is_empty() {
                Outcome::Gone
            } else if dry_run {
                Outcome::WouldRestore
            } else {
                // Several only without a journaled pid (bootstrap + server):
                // the worst outcome is the entry's.
                let all: Vec<Outcome> = procs.iter().map(|&p| server::stop(p, dir)).collect();
                all.iter()
                    .find(|o| matches!(o, Outcome::Failed { .. }))
                    .or_else(|| all.iter().find(|o| matches!(o, Outcome::Stopped { .. })))
                    .cloned()
                    .unwrap_or(Outcome::Gone)
            };
            Restored {
                kind: e.kind(),
                path: dir.clone(),
                original: None,
                found: None,
                pid: procs.first().map(|p| p.pid),
                outcome,
            }
        }
    }
}

/// Delete a file or directory innotune created. Something else may be
/// deleting inside it at the same moment (a sandbox removing its own
/// directory while a signal restores): what is gone at the end is removed.
fn remove_created(path: &Path, dir: bool) -> Outcome {
    let rm = || {
        if dir {
            std::fs::remove_dir_all(path)
        } else {
            std::fs::remove_file(path)
        }
    };
    let mut r = rm();
    if r.is_err() && path.exists() {
        r = rm();
    }
    match r {
        Ok(()) => Outcome::Removed,
        Err(_) if !path.exists() => Outcome::Removed,
        Err(err) => Outcome::Failed {
            reason: err.to_string(),
        },
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

impl crate::export::Report for RestoreReport {
    const COMMAND: &'static str = "restore";
    fn document(&self) -> crate::export::Document {
        crate::export::Document::legacy(|out, style| super::render::restore_text(self, out, style))
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
