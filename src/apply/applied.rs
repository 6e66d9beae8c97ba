//! The journal of changes `innotune apply --yes` made to last.
//!
//! A run journals its changes in the ordinary journal (so a crash or a
//! signal mid-apply is undone by `innotune restore` like any run's), and
//! when every change is in, moves them here: `applied.json` in the state
//! directory. Changes here outlive the run on purpose; no other command
//! is blocked by them or warns about them, and `innotune restore` reverts
//! them after any interrupted run's.
//!
//! Same format as the journal (`journal::JournalFile`), so `restore_at`
//! reads it unchanged.

use crate::command::{Command, Env};
use crate::journal::{self, Entry, JournalFile, Owner, RestoreReport};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

pub fn path() -> PathBuf {
    journal::state_dir().join("applied.json")
}

/// The applied changes (empty when none), refused as `restore` refuses
/// them when one is not something innotune writes: `apply` undoes an
/// earlier change before replacing it.
pub fn load(p: &Path) -> Result<Vec<Entry>> {
    let Some(j) = journal::load(p)? else {
        return Ok(Vec::new());
    };
    journal::restore::validate_entries(p, &j)?;
    Ok(j.entries)
}

/// Write `entries` (numbered afresh) durably, as the journal is
/// ([`journal::persist`]). No entries: the file is removed.
pub fn save(p: &Path, entries: Vec<Entry>, command: &str) -> Result<()> {
    if entries.is_empty() {
        match std::fs::remove_file(p) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
            _ => return Ok(()),
        }
    }
    let entries: Vec<Entry> = entries
        .into_iter()
        .enumerate()
        .map(|(i, e)| match e {
            Entry::Change { change, .. } => Entry::Change {
                id: i as u64 + 1,
                change,
            },
        })
        .collect();
    let pid = std::process::id();
    // Every entry was journaled by this run's guard, or loaded (and
    // validated) from the applied journal: their roots and endpoints are
    // the ones innotune worked on.
    let scope = journal::Scope::of(&entries);
    let j = JournalFile {
        version: journal::JOURNAL_VERSION,
        written_by: Some(journal::WRITTEN_BY.to_string()),
        owner: Owner {
            pid,
            command: journal::redact(command),
            started: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            start_ticks: journal::process_start_ticks(pid),
        },
        scope,
        entries,
    };
    journal::persist(p, &j).with_context(|| format!("writing {}", p.display()))
}

/// `innotune restore`: an interrupted run's journal first, then what
/// `apply` made to last; one report.
pub fn restore_all(dry_run: bool) -> Result<RestoreReport> {
    let jp = journal::journal_path();
    let ap = path();
    let mut r = journal::restore::restore_at(&jp, dry_run)?;
    if ap.exists() {
        let a = journal::restore::restore_at(&ap, dry_run)?;
        if !r.found {
            r.journal = a.journal.clone();
            r.owner = a.owner.clone();
            r.journal_removed = a.journal_removed;
        } else {
            r.journal_removed &= a.journal_removed;
        }
        r.found |= a.found;
        r.entries.extend(a.entries);
        r.pending_hooks.extend(a.pending_hooks);
    }
    // Each hook the undone changes need (udev/systemd reloads, sysctl
    // --system; never for a replayed --root tree) runs once.
    r.hooks = crate::change::run_hooks(&std::mem::take(&mut r.pending_hooks));
    Ok(r)
}

/// `innotune restore` ([`restore_all`]): here rather than in the journal,
/// since it also reverts what `apply` made to last.
impl Command for crate::journal::cli::RestoreArgs {
    type Report = RestoreReport;

    /// Restoring is this command's job: no warning that something is
    /// pending first.
    const WARN_IF_PENDING: bool = false;

    fn execute(_env: &Env, args: Self) -> Result<RestoreReport> {
        restore_all(args.dry_run)
    }
}
