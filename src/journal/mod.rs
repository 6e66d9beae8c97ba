//! Host changes are journaled on disk before they are made, and undone on
//! every exit path; `innotune restore` finishes an interrupted run.
//!
//! The contract for every command that changes the host (sweep today; the
//! apply/tune/trace commands later):
//! 1. `let g = Journal::begin("sweep /data")?` — creates the journal file
//!    exclusively (it doubles as a lock: two innotune runs never change the
//!    host at once) and routes SIGINT/SIGTERM/SIGHUP to an immediate restore.
//! 2. `g.set_sysfs(&host, "/sys/block/sda/queue/scheduler", "none")?` — the
//!    original value is read and fsynced to disk *before* the write.
//!    Files and directories it creates are journaled right after creation
//!    (`g.track_created`); a throwaway server before it is initialised
//!    (`g.track_server`), and its pid and start time as it is spawned
//!    (`g.spawn_server`), so that restoring stops it.
//! 3. Dropping the guard (normal return, `?` error, panic) restores and
//!    removes the journal. A signal restores at once and exits 128+signo.
//!    A SIGKILL or power loss leaves the journal: the next innotune command
//!    warns, and `innotune restore` puts everything back.
//!
//! The file is JSON (see docs/json-restore.md for the same entry shape) in
//! `$INNOTUNE_STATE_DIR` or `/var/lib/innotune`; it survives reboots on
//! purpose: sysfs values do not, but files innotune created and future
//! persistent kinds (sysctl.d drop-ins, my.cnf edits) do.

pub mod cli;
mod render;
pub mod restore;
mod server;
mod signals;

pub use restore::{restore_entries, run_restore, Outcome, RestoreReport, Restored};

use crate::error::Fix;
use crate::host::Host;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::{Arc, Mutex, MutexGuard};

/// Journal file format version (bump when an entry changes meaning).
pub const JOURNAL_VERSION: u32 = 1;
const DEFAULT_STATE_DIR: &str = "/var/lib/innotune";
const JOURNAL_FILE: &str = "journal.json";

/// Where the journal lives: `$INNOTUNE_STATE_DIR` (tests, unprivileged use)
/// or `/var/lib/innotune` (FHS: state that persists across reboots).
pub fn state_dir() -> PathBuf {
    std::env::var_os("INNOTUNE_STATE_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_STATE_DIR))
}

pub fn journal_path() -> PathBuf {
    state_dir().join(JOURNAL_FILE)
}

/// The process that owns a journal.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Owner {
    pub pid: u32,
    /// What was running, e.g. `innotune sweep /data --rounds 5`.
    pub command: String,
    /// Wall-clock start, RFC 3339 UTC.
    pub started: String,
    /// The process start time in clock ticks since boot (/proc/PID/stat
    /// field 22), so a recycled pid is not mistaken for the owner.
    #[serde(default)]
    pub start_ticks: Option<u64>,
}

/// One change, recorded before it is made.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Entry {
    /// A sysfs/procfs attribute: restore writes `original` back.
    Sysfs {
        /// Host-absolute path, e.g. `/sys/block/vda/queue/scheduler`.
        path: PathBuf,
        /// The value before innotune touched it (for choice files such as
        /// `none [mq-deadline] kyber`, the bracketed name).
        original: String,
        /// The last value innotune wrote (equal to `original` when the
        /// attribute was only remembered because another change resets it).
        new: String,
        /// The `--root` the path lives under; omitted for the live host.
        #[serde(default = "slash", skip_serializing_if = "is_slash")]
        root: PathBuf,
    },
    /// A file innotune created: restore deletes it.
    File { path: PathBuf },
    /// A directory innotune created (work files): restore deletes it and
    /// everything in it.
    Dir { path: PathBuf },
    /// A throwaway server innotune started (a sandbox in `dir`, e.g. the
    /// OLTP workloads of a sweep): restore stops it (SIGTERM, SIGKILL after
    /// a grace period), before any directory is deleted.
    ///
    /// Journaled before the server is initialised, with no pid, and given
    /// its pid and start time at the moment it is spawned (under the
    /// journal's lock, so a signal cannot restore in between). A process is
    /// only signalled when it is provably that server: same start time
    /// (/proc/PID/stat field 22) and `--defaults-file=DIR/my.cnf` on its
    /// command line ([`crate::sandbox::runs_from`]); a recycled pid is left
    /// alone. Without a pid (a crash before the spawn was journaled, or the
    /// bootstrap server of `mariadb-install-db`), every mysqld/mariadbd
    /// whose command line names DIR's my.cnf is that server.
    Server {
        /// The sandbox directory (datadir, socket, my.cnf live in it).
        dir: PathBuf,
        /// Null until the server process is spawned.
        #[serde(default)]
        pid: Option<u32>,
        /// The server's start time in clock ticks since boot.
        #[serde(default)]
        start_ticks: Option<u64>,
    },
    /// Any [`crate::change::Change`]: captured, journaled, then applied
    /// through [`Guard::apply`]; undone with its own `undo`.
    Change {
        /// Handle for [`Guard::undo`], unique within the journal.
        id: u64,
        change: Box<dyn crate::change::Change>,
    },
}

/// Entries are equal when they serialise the same: a `Change` is a trait
/// object, and its journaled form is what identifies it.
impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        match (serde_json::to_value(self), serde_json::to_value(other)) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
    }
}

fn slash() -> PathBuf {
    PathBuf::from("/")
}
fn is_slash(p: &Path) -> bool {
    p == Path::new("/")
}

impl Entry {
    pub fn kind(&self) -> &'static str {
        match self {
            Entry::Sysfs { .. } => "sysfs",
            Entry::File { .. } => "file",
            Entry::Dir { .. } => "dir",
            Entry::Server { .. } => "server",
            Entry::Change { change, .. } => change.typetag_name(),
        }
    }
    pub fn path(&self) -> PathBuf {
        match self {
            Entry::Sysfs { path, .. } | Entry::File { path } | Entry::Dir { path } => path.clone(),
            Entry::Server { dir, .. } => dir.clone(),
            Entry::Change { change, .. } => PathBuf::from(change.target()),
        }
    }
}

/// The on-disk document.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JournalFile {
    pub version: u32,
    pub owner: Owner,
    pub entries: Vec<Entry>,
}

/// The value a sysfs attribute holds, for comparing and writing back: the
/// bracketed choice of a choice file (`none [mq-deadline] kyber` →
/// `mq-deadline`), else the trimmed content.
pub fn sysfs_value(raw: &str) -> String {
    let t = raw.trim();
    if let (Some(a), Some(b)) = (t.find('['), t.find(']')) {
        if a < b {
            return t[a + 1..b].to_string();
        }
    }
    t.to_string()
}

/// Read a journal file; `Ok(None)` when there is none.
pub fn load(path: &Path) -> Result<Option<JournalFile>> {
    match fs::read_to_string(path) {
        Ok(s) => {
            let j: JournalFile = serde_json::from_str(&s).map_err(|e| {
                Fix::new(
                    format!("journal {} is not readable JSON: {e}", path.display()),
                    "inspect it, put back what it lists by hand, then delete it",
                )
            })?;
            Ok(Some(j))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading journal {}", path.display())),
    }
}

/// Write the journal so that it is on disk when this returns: temp file,
/// fsync, rename over the old one, fsync the directory.
fn persist(path: &Path, j: &JournalFile) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = path.with_extension("json.tmp");
    {
        let mut f = File::create(&tmp)?;
        f.write_all(serde_json::to_string_pretty(j)?.as_bytes())?;
        f.write_all(b"\n")?;
        f.sync_all()?;
    }
    fs::rename(&tmp, path)?;
    File::open(dir)?.sync_all()
}

fn remove_journal(path: &Path) -> io::Result<()> {
    match fs::remove_file(path) {
        Ok(()) => {
            if let Some(dir) = path.parent() {
                File::open(dir)?.sync_all()?;
            }
            Ok(())
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Start time of a process in clock ticks since boot, if it is alive (a
/// zombie counts as dead). Reads the live /proc: the owner is a process on
/// this machine whatever `--root` a command replays.
pub fn process_start_ticks(pid: u32) -> Option<u64> {
    let stat = Host::live().read(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // fields[0] is field 3 (state); field 22 (starttime) is fields[19].
    if fields.first() == Some(&"Z") || fields.first() == Some(&"X") {
        return None;
    }
    fields.get(19)?.parse().ok()
}

impl Owner {
    fn current(command: &str) -> Owner {
        let pid = std::process::id();
        Owner {
            pid,
            command: command.to_string(),
            started: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            start_ticks: process_start_ticks(pid),
        }
    }

    /// Is the owning process still running?
    pub fn is_alive(&self) -> bool {
        match (process_start_ticks(self.pid), self.start_ticks) {
            (None, _) => false,
            (Some(now), Some(then)) => now == then,
            (Some(_), None) => true,
        }
    }
}

struct Inner {
    path: PathBuf,
    file: JournalFile,
    /// Set once a signal started restoring: no further changes are made.
    closed: bool,
}

impl Inner {
    fn next_id(&self) -> u64 {
        self.file
            .entries
            .iter()
            .filter_map(|e| match e {
                Entry::Change { id, .. } => Some(*id + 1),
                _ => None,
            })
            .max()
            .unwrap_or(1)
    }

    fn persist(&self) -> Result<()> {
        persist(&self.path, &self.file).map_err(|e| {
            Fix::new(
                format!("cannot write journal {}: {e}", self.path.display()),
                "make the state directory writable (or set INNOTUNE_STATE_DIR); nothing was changed",
            )
            .into()
        })
    }

    /// Restore every entry; keep the ones that failed in the journal.
    fn restore(&mut self) -> Vec<Restored> {
        let results = restore_entries(&self.file.entries, false);
        let failed: Vec<Entry> = self
            .file
            .entries
            .iter()
            .zip(&results)
            .filter(|(_, r)| matches!(r.outcome, Outcome::Failed { .. }))
            .map(|(e, _)| e.clone())
            .collect();
        self.file.entries = failed;
        let _ = self.persist();
        results
    }
}

fn lock(m: &Mutex<Inner>) -> MutexGuard<'_, Inner> {
    // A panic while holding the lock must not stop the restore.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Entry point: see the module documentation.
pub struct Journal;

impl Journal {
    /// Begin a run that changes the host, journaling in [`state_dir`], with
    /// SIGINT/SIGTERM/SIGHUP restoring at once.
    pub fn begin(command: &str) -> Result<Guard> {
        Self::begin_in(&state_dir(), command, true)
    }

    /// Begin with an explicit state directory; `handle_signals` false for
    /// unit tests that must not take over the test harness's signals.
    pub fn begin_in(dir: &Path, command: &str, handle_signals: bool) -> Result<Guard> {
        fs::create_dir_all(dir).map_err(|e| {
            Fix::new(
                format!("cannot create state directory {}: {e}", dir.display()),
                "run as root, or set INNOTUNE_STATE_DIR to a writable directory",
            )
        })?;
        let path = dir.join(JOURNAL_FILE);
        if let Some(old) = load(&path)? {
            if old.owner.is_alive() {
                return Err(Fix::new(
                    format!(
                        "another innotune run (pid {}, `{}`) is changing this host",
                        old.owner.pid, old.owner.command
                    ),
                    "wait for it to finish; it restores everything on exit",
                )
                .into());
            }
            if !old.entries.is_empty() {
                return Err(Fix::new(
                    format!(
                        "an interrupted innotune run (pid {}, `{}`, started {}) left {} host change(s) unrestored",
                        old.owner.pid,
                        old.owner.command,
                        old.owner.started,
                        old.entries.len()
                    ),
                    "run `innotune restore` first",
                )
                .into());
            }
            // A dead owner that changed nothing: stale, safe to replace.
            remove_journal(&path)?;
        }
        let file = JournalFile {
            version: JOURNAL_VERSION,
            owner: Owner::current(command),
            entries: Vec::new(),
        };
        // create_new makes the journal a lock between concurrent runs.
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| {
                Fix::new(
                    format!("cannot create journal {}: {e}", path.display()),
                    "another innotune may have just started; retry, or set INNOTUNE_STATE_DIR",
                )
            })?;
        f.write_all(serde_json::to_string_pretty(&file)?.as_bytes())?;
        f.sync_all()?;
        File::open(dir)?.sync_all()?;
        let shared = Arc::new(Mutex::new(Inner {
            path,
            file,
            closed: false,
        }));
        if handle_signals {
            signals::activate(shared.clone())?;
        }
        Ok(Guard {
            shared,
            signals: handle_signals,
        })
    }
}

/// An open journal. Every change goes through it; dropping it restores.
pub struct Guard {
    shared: Arc<Mutex<Inner>>,
    signals: bool,
}

impl Guard {
    /// Set a sysfs attribute, journaling its original value (once) first.
    pub fn set_sysfs(&self, host: &Host, path: impl AsRef<Path>, new_value: &str) -> Result<()> {
        let path = path.as_ref();
        self.record_sysfs(host, path, Some(new_value))?;
        host.write(path, new_value).map_err(|e| {
            let how = if e.kind() == io::ErrorKind::PermissionDenied {
                "run as root (sysfs attributes are root-writable only)"
            } else {
                "check that the value is one the kernel accepts for this device"
            };
            Fix::new(
                format!("cannot write {new_value:?} to {}: {e}", path.display()),
                how,
            )
        })?;
        Ok(())
    }

    /// Set a sysctl (`vm.swappiness`) through /proc/sys. Journaled as a
    /// `sysfs` entry on its /proc/sys path: restoring is the same write-back,
    /// so one entry kind serves both (persistent sysctl.d drop-ins will be
    /// `file` entries).
    pub fn set_sysctl(&self, host: &Host, name: &str, value: &str) -> Result<()> {
        let path = PathBuf::from("/proc/sys").join(name.replace('.', "/"));
        self.set_sysfs(host, path, value)
    }

    /// Journal a sysfs attribute's original value without changing it,
    /// because another change resets it (switching the scheduler resets
    /// `nr_requests`): restore then writes it back.
    pub fn remember_sysfs(&self, host: &Host, path: impl AsRef<Path>) -> Result<()> {
        self.record_sysfs(host, path.as_ref(), None)
    }

    fn record_sysfs(&self, host: &Host, path: &Path, new_value: Option<&str>) -> Result<()> {
        let mut inner = lock(&self.shared);
        if inner.closed {
            anyhow::bail!("interrupted: restoring host settings");
        }
        let root = host.root().to_path_buf();
        let existing = inner.file.entries.iter_mut().find(
            |e| matches!(e, Entry::Sysfs { path: p, root: r, .. } if p == path && *r == root),
        );
        match existing {
            Some(Entry::Sysfs { new, .. }) => {
                if let Some(v) = new_value {
                    *new = v.to_string();
                }
            }
            _ => {
                let raw = host.read(path).map_err(|e| {
                    Fix::new(
                        format!("cannot read {}: {e}", path.display()),
                        "check the device still exists; nothing was changed",
                    )
                })?;
                let original = sysfs_value(&raw);
                inner.file.entries.push(Entry::Sysfs {
                    path: path.to_path_buf(),
                    new: new_value
                        .map(str::to_string)
                        .unwrap_or_else(|| original.clone()),
                    original,
                    root,
                });
            }
        }
        inner.persist()
    }

    /// Journal a file or directory innotune has just created (create it with
    /// `create_new`/`create_dir` first, so it is certain to be ours).
    pub fn track_created(&self, path: &Path) -> Result<()> {
        let mut inner = lock(&self.shared);
        let e = if path.is_dir() {
            Entry::Dir {
                path: path.to_path_buf(),
            }
        } else {
            Entry::File {
                path: path.to_path_buf(),
            }
        };
        inner.file.entries.push(e);
        inner.persist()
    }

    /// Journal a server about to be started in `dir` (before its data
    /// directory is initialised: the bootstrap server counts too). Call
    /// [`Guard::spawn_server`] to start it and [`Guard::forget_server`]
    /// once it has been stopped cleanly.
    pub fn track_server(&self, dir: &Path) -> Result<()> {
        let mut inner = lock(&self.shared);
        if inner.closed {
            anyhow::bail!("interrupted: restoring host settings");
        }
        inner.file.entries.push(Entry::Server {
            dir: dir.to_path_buf(),
            pid: None,
            start_ticks: None,
        });
        inner.persist()
    }

    /// Spawn the server of `dir` (journaled with [`Guard::track_server`])
    /// and journal its pid and start time before returning. The journal's
    /// lock is held throughout, so a signal's restore runs either before the
    /// spawn (nothing started) or after the pid is on disk. If the pid
    /// cannot be journaled the server is killed at once.
    pub fn spawn_server(&self, dir: &Path, cmd: &mut Command) -> Result<Child> {
        let mut inner = lock(&self.shared);
        if inner.closed {
            anyhow::bail!("interrupted: restoring host settings");
        }
        let Some(i) = inner
            .file
            .entries
            .iter()
            .position(|e| matches!(e, Entry::Server { dir: d, .. } if d == dir))
        else {
            anyhow::bail!("server in {} was not journaled first", dir.display());
        };
        let mut child = cmd
            .spawn()
            .with_context(|| format!("starting {}", cmd.get_program().to_string_lossy()))?;
        let pid = child.id();
        inner.file.entries[i] = Entry::Server {
            dir: dir.to_path_buf(),
            pid: Some(pid),
            start_ticks: process_start_ticks(pid),
        };
        if let Err(e) = inner.persist() {
            let _ = child.kill();
            let _ = child.wait();
            return Err(e);
        }
        Ok(child)
    }

    /// Capture `change`'s current state, journal it (on disk), then apply
    /// it; the journal is written again afterwards, since applying may add
    /// to what the change remembers. Returns the handle for
    /// [`Guard::undo`]. If applying fails, the entry stays journaled and is
    /// undone with the rest.
    pub fn apply(&self, host: &Host, mut change: Box<dyn crate::change::Change>) -> Result<u64> {
        let mut inner = lock(&self.shared);
        if inner.closed {
            anyhow::bail!("interrupted: restoring host settings");
        }
        change.capture(host)?;
        let id = inner.next_id();
        inner.file.entries.push(Entry::Change {
            id,
            change: change.clone(),
        });
        inner.persist()?;
        let applied = change.apply(host);
        if let Some(Entry::Change { change: c, .. }) = inner
            .file
            .entries
            .iter_mut()
            .find(|e| matches!(e, Entry::Change { id: i, .. } if *i == id))
        {
            *c = change;
        }
        inner.persist()?;
        applied?;
        Ok(id)
    }

    /// Undo the change `id` now (not waiting for the end of the run) and
    /// drop it from the journal unless undoing failed.
    pub fn undo(&self, id: u64) -> Result<crate::change::Undone> {
        let mut inner = lock(&self.shared);
        let Some(i) = inner
            .file
            .entries
            .iter()
            .position(|e| matches!(e, Entry::Change { id: x, .. } if *x == id))
        else {
            anyhow::bail!("internal: no journaled change {id}");
        };
        let Entry::Change { change, .. } = &inner.file.entries[i] else {
            unreachable!("position matched a change entry");
        };
        let u = change.undo(false);
        if !u.outcome.keeps_entry() {
            inner.file.entries.remove(i);
        }
        inner.persist()?;
        Ok(u)
    }

    /// Hand every entry over and forget them here, so dropping the guard
    /// undoes nothing: for changes meant to outlive the run (`innotune
    /// apply --yes`), which the caller has already written durably to a
    /// journal of its own that `innotune restore` also reads.
    pub fn release(&self) -> Result<Vec<Entry>> {
        let mut inner = lock(&self.shared);
        let entries = std::mem::take(&mut inner.file.entries);
        inner.persist()?;
        Ok(entries)
    }

    /// Drop the entry of the server in `dir`: it was stopped cleanly.
    pub fn forget_server(&self, dir: &Path) -> Result<()> {
        let mut inner = lock(&self.shared);
        inner
            .file
            .entries
            .retain(|e| !matches!(e, Entry::Server { dir: d, .. } if d == dir));
        inner.persist()
    }

    /// Put everything back now; entries that could not be restored stay in
    /// the journal (and the journal stays) for `innotune restore`.
    pub fn restore_all(&self) -> Vec<Restored> {
        lock(&self.shared).restore()
    }

    /// Path of the journal file.
    pub fn path(&self) -> PathBuf {
        lock(&self.shared).path.clone()
    }

    /// Entries currently journaled.
    pub fn entries(&self) -> Vec<Entry> {
        lock(&self.shared).file.entries.clone()
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if self.signals {
            signals::deactivate(&self.shared);
        }
        let mut inner = lock(&self.shared);
        let results = inner.restore();
        for r in results
            .iter()
            .filter(|r| matches!(r.outcome, Outcome::Failed { .. }))
        {
            crate::output::warn(format!(
                "could not restore {}: {} (run `innotune restore`)",
                r.path.display(),
                r.outcome
            ));
        }
        if inner.file.entries.is_empty() {
            let _ = remove_journal(&inner.path);
        }
    }
}

/// Called before every command except `restore`: say so if an earlier run
/// left host changes that were never undone.
pub fn warn_if_pending() {
    let path = journal_path();
    match load(&path) {
        Ok(Some(j)) if !j.entries.is_empty() && !j.owner.is_alive() => {
            crate::output::warn(pending_message(&j));
        }
        Ok(_) => {}
        Err(e) => crate::output::warn(crate::error::one_line(&e)),
    }
}

fn pending_message(j: &JournalFile) -> String {
    format!(
        "an interrupted innotune run (pid {}, `{}`, started {}) left {} host change(s) unrestored; run `innotune restore` to put them back",
        j.owner.pid,
        j.owner.command,
        j.owner.started,
        j.entries.len()
    )
}

#[cfg(test)]
mod tests;
