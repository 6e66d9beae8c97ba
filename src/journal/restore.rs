//! Putting journaled changes back, for the guard and for `innotune restore`.

use super::{load, remove_journal, Entry, JournalFile, Owner};
use crate::change::{Hook, HookRun, Priority};
use crate::error::Fix;
use anyhow::Result;
use serde::Serialize;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

pub use crate::change::Outcome;

/// One entry and its outcome. Never a file's contents: they may hold
/// secrets (`--dry-run` prints the same rows).
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Restored {
    pub kind: Cow<'static, str>,
    pub path: PathBuf,
    /// sysfs, sysctl, server variable: the value put back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub original: Option<String>,
    /// sysfs, sysctl, server variable: the value found before restoring.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub found: Option<String>,
    /// server: the pid found running (and verified to be that server).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// Undo entries in a safe order and report each.
///
/// Order ([`restore_order`]): by each change's [`Priority`]. Results come
/// back in the entries' own order. A file or directory inside the
/// directory of a server that could not be stopped is left in place
/// (deleting a running server's datadir frees nothing and hides the
/// server); it fails, to be retried.
/// The path an entry changes as it is on this machine: under its `--root`
/// (apply --root writes a fixture tree's /sys, not the host's), else as
/// recorded. Names that are not paths (sysctl's `vm.swappiness`) as they are.
fn shown_path(e: &Entry) -> PathBuf {
    let target = PathBuf::from(e.change().target());
    let root = e
        .root()
        .and_then(|v| v.as_str().map(PathBuf::from))
        .filter(|r| r != Path::new("/"));
    match (root, target.strip_prefix("/")) {
        (Some(r), Ok(rel)) => r.join(rel),
        _ => target,
    }
}

pub fn restore_entries(entries: &[Entry], dry_run: bool) -> Vec<Restored> {
    let mut out: Vec<Option<Restored>> = vec![None; entries.len()];
    let mut running: Vec<PathBuf> = Vec::new();
    for i in restore_order(entries) {
        let c = entries[i].change();
        let path = shown_path(&entries[i]);
        let held = c.priority() >= Priority::FILE;
        let r = match running.iter().find(|d| held && d.starts_with(&path)) {
            Some(d) => Restored {
                kind: c.typetag_name().into(),
                path: path.clone(),
                original: None,
                found: None,
                pid: None,
                outcome: Outcome::Failed {
                    reason: format!("kept: the server in {} is still running", d.display()),
                },
            },
            None => {
                let u = c.undo(dry_run);
                Restored {
                    kind: c.typetag_name().into(),
                    path: path.clone(),
                    original: u.original,
                    found: u.found,
                    pid: u.pid,
                    outcome: u.outcome,
                }
            }
        };
        if c.priority() == Priority::SERVER && r.outcome.keeps_entry() {
            running.push(path);
        }
        out[i] = Some(r);
    }
    out.into_iter().flatten().collect()
}

/// The order entries are restored in, as indices: by [`Priority`] (see
/// there why), journal order within one, except that files and
/// directories go newest first (a directory's contents were created after
/// it).
pub fn restore_order(entries: &[Entry]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by_key(|&i| {
        let p = entries[i].change().priority();
        let newest_first = p >= Priority::FILE;
        (
            if newest_first { Priority::FILE } else { p },
            if newest_first { usize::MAX - i } else { i },
        )
    });
    order
}

/// The hooks to run after undoing: those of every change that was put
/// back or removed (a conflict or failure changed nothing on disk).
pub fn undo_hooks(entries: &[Entry], results: &[Restored]) -> Vec<Hook> {
    let mut hooks = Vec::new();
    for (e, r) in entries.iter().zip(results) {
        if matches!(r.outcome, Outcome::Restored | Outcome::Removed) {
            for h in e.change().after_undo() {
                if !hooks.contains(&h) {
                    hooks.push(h);
                }
            }
        }
    }
    hooks
}

/// Refuse a journal holding an entry innotune could not have written: the
/// first such entry, as one error line. Nothing has been written then.
///
/// Each entry must pass its kind's [`crate::change::Change::validate`]
/// (every field against what innotune writes), its `root` must be `/` or
/// a `--root` the run recorded ([`super::Scope`]), and the server it
/// connects to one the run recorded.
pub fn validate_entries(path: &Path, j: &JournalFile) -> Result<()> {
    for (i, e) in j.entries.iter().enumerate() {
        if let Err(why) = validate_entry(j, e) {
            return Err(Fix::new(
                format!(
                    "journal {} entry {} ({}) is not one innotune writes: {why}",
                    path.display(),
                    i + 1,
                    e.kind()
                ),
                "nothing was restored; inspect the journal and put back what it lists by hand",
            )
            .into());
        }
    }
    Ok(())
}

fn validate_entry(j: &JournalFile, e: &Entry) -> Result<(), String> {
    e.change().validate()?;
    if let Some(root) = e.root() {
        let root = root
            .as_str()
            .map(PathBuf::from)
            .ok_or_else(|| format!("root {root} is not a path"))?;
        if root != Path::new("/") && !j.scope.roots.contains(&root) {
            return Err(format!(
                "root {} is neither / nor a --root the run recorded",
                root.display()
            ));
        }
    }
    if let Some(ep) = super::endpoint_of(e.change()) {
        if !j.scope.endpoints.contains(&ep) {
            return Err(format!(
                "the server at {} is not one the run recorded",
                ep.describe()
            ));
        }
    }
    Ok(())
}

/// `innotune restore`'s result.
#[derive(Debug, Serialize, serde::Deserialize)]
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
    /// Post-undo hooks (`udevadm`, `systemctl daemon-reload`, `sysctl
    /// --system`) and whether each ran or was skipped (tool or daemon
    /// absent), with a note.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<HookRun>,
    /// Hooks still to run (filled by [`restore_at`] when the caller runs
    /// them once for several journals).
    #[serde(skip)]
    pub pending_hooks: Vec<Hook>,
}

impl RestoreReport {
    pub fn failed(&self) -> usize {
        self.entries
            .iter()
            .filter(|r| matches!(r.outcome, Outcome::Failed { .. }))
            .count()
    }
}

/// Restore from the journal at `path` (the body of `innotune restore`).
///
/// Takes the journal lock (a live run restores on its own exit: refused
/// with one line), refuses the whole journal if any entry is not one
/// innotune could have written (nothing written), then undoes every entry.
/// The post-undo hooks are left in `pending_hooks` for the caller to run
/// once ([`crate::change::run_hooks`]).
pub fn restore_at(path: &Path, dry_run: bool) -> Result<RestoreReport> {
    let dir = path.parent().unwrap_or(Path::new("."));
    // Another user's (or a shared) state directory is refused before
    // anything is created in it, lock included.
    super::trust::open_state_dir(dir)?;
    let _lock = if dir.is_dir() {
        match super::try_lock(dir)? {
            Some(l) => Some(l),
            None if dry_run => None,
            None => {
                let who = load(path)
                    .ok()
                    .flatten()
                    .map(|j| format!("innotune pid {} (`{}`)", j.owner.pid, j.owner.command))
                    .unwrap_or_else(|| "another innotune run".into());
                return Err(Fix::new(
                    format!("{who} is still running and restores on exit"),
                    "wait for it, or stop it with `kill -TERM PID` (it restores on SIGTERM)",
                )
                .into());
            }
        }
    } else {
        None
    };
    let Some(mut j) = load(path)? else {
        return Ok(RestoreReport {
            journal: path.to_path_buf(),
            found: false,
            dry_run,
            owner: None,
            entries: vec![],
            journal_removed: false,
            hooks: vec![],
            pending_hooks: vec![],
        });
    };
    validate_entries(path, &j)?;
    let entries = restore_entries(&j.entries, dry_run);
    let pending_hooks = if dry_run {
        Vec::new()
    } else {
        undo_hooks(&j.entries, &entries)
    };
    let mut journal_removed = false;
    if !dry_run {
        let failed: Vec<Entry> = j
            .entries
            .iter()
            .zip(&entries)
            .filter(|(_, r)| r.outcome.keeps_entry())
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
        hooks: vec![],
        pending_hooks,
    })
}
