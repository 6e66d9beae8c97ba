//! Host changes are journaled on disk before they are made, and undone on
//! every exit path; `innotune restore` finishes an interrupted run.
//!
//! The contract for every command that changes the host (sweep, apply,
//! check --measure; tune and trace later):
//! 1. `let g = Journal::begin(&journal::command_line())?` — takes an
//!    exclusive `flock` on `journal.lock` in the state directory, held for
//!    the guard's life (a second run is refused with one line, however the
//!    two race), writes the journal (0600), and routes
//!    SIGINT/SIGTERM/SIGHUP to an immediate restore.
//! 2. Every change is a [`Change`] (src/change), built by its kind's own
//!    constructor (`SysfsAttr::set`, `Sysctl::new`, `CreatedDir::adopt`,
//!    `ServerStarted::spawn`, …): `g.apply(&host, change)` captures the
//!    current value and fsyncs it to the journal *before* the change is
//!    made; `g.undo(id)` puts one back early, `g.release()` hands them all
//!    over. The journal knows no kind: what a kind needs (a spawned pid
//!    journaled before the lock is released, one entry per attribute) is
//!    the change's own `apply` and [`Change::journal_once`].
//! 3. Dropping the guard (normal return, `?` error, panic) restores (in
//!    [`crate::change::Priority`] order), runs the post-undo hooks the
//!    undone changes need, and removes the journal. A signal restores at
//!    once and exits 128+signo. A SIGKILL or power loss leaves the journal:
//!    the next innotune command warns, and `innotune restore` puts
//!    everything back, after refusing a journal with any entry innotune
//!    could not have written ([`Change::validate`]).
//!
//! The file is JSON (see docs/json-restore.md for the same entry shape) in
//! `$INNOTUNE_STATE_DIR` or `/var/lib/innotune`; it survives reboots on
//! purpose: sysfs values do not, but files innotune created or edited do.
//! The owner's command line is recorded with any password redacted
//! ([`redact`]).

pub mod cli;
pub mod fault;
mod render;
pub mod restore;
mod signals;
mod trust;

pub use restore::{restore_entries, Outcome, RestoreReport, Restored};
pub use signals::{set_interrupt_hook, InterruptHook};

use crate::change::Change;
use crate::error::Fix;
use crate::host::Host;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

/// Journal file format version (bump when an entry changes meaning).
/// 2: every entry is a `change`; version 1 is read ([`load`]).
pub const JOURNAL_VERSION: u32 = 2;
/// What a journal's `written_by` says for this build.
pub const WRITTEN_BY: &str = concat!("innotune ", env!("CARGO_PKG_VERSION"));
const DEFAULT_STATE_DIR: &str = "/var/lib/innotune";
const JOURNAL_FILE: &str = "journal.json";
/// Held with `flock` by the run that owns the journal (and by restore).
const LOCK_FILE: &str = "journal.lock";

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

/// One change, recorded before it is made: any [`crate::change::Change`],
/// captured, journaled, then applied through [`Guard::apply`]; undone with
/// its own `undo`. (Version-1 journals, whose entries were `sysfs`, `file`,
/// `dir` and `server` records, are read into the same kinds by [`load`].)
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Entry {
    Change {
        /// Handle for [`Guard::undo`], unique within the journal.
        id: u64,
        change: Box<dyn Change>,
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

impl Entry {
    pub fn change(&self) -> &dyn Change {
        match self {
            Entry::Change { change, .. } => change.as_ref(),
        }
    }
    pub fn id(&self) -> u64 {
        match self {
            Entry::Change { id, .. } => *id,
        }
    }
    pub fn kind(&self) -> &'static str {
        self.change().typetag_name()
    }
    pub fn path(&self) -> PathBuf {
        PathBuf::from(self.change().target())
    }
    /// The `--root` a change's path lives under, when it has one.
    pub(crate) fn root(&self) -> Option<serde_json::Value> {
        serde_json::to_value(self.change())
            .ok()
            .and_then(|v| v.get("root").cloned())
    }
}

/// The on-disk document.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JournalFile {
    pub version: u32,
    /// `innotune X.Y.Z`, the build that wrote it: what a later innotune
    /// names when it meets a format version it cannot read. Absent in
    /// journals from before this field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_by: Option<String>,
    pub owner: Owner,
    /// What the run worked on besides the live host: the `--root` trees
    /// and the servers it changed. `restore` accepts an entry's `root`
    /// only if it is `/` or listed here, and a server variable's endpoint
    /// only if it is listed here.
    #[serde(default, skip_serializing_if = "Scope::is_empty")]
    pub scope: Scope,
    pub entries: Vec<Entry>,
}

/// See [`JournalFile::scope`]. Recorded by the guard as each change is
/// journaled, from the `Host` the run passes it (its `--root`) and the
/// endpoint of each server change.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Scope {
    /// `--root` trees (never `/`, which is always accepted).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roots: Vec<PathBuf>,
    /// Servers whose variables the run changed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub endpoints: Vec<crate::db::ServerEndpoint>,
}

impl Scope {
    pub fn is_empty(&self) -> bool {
        self.roots.is_empty() && self.endpoints.is_empty()
    }

    /// Record that `change` is made on `host`.
    pub fn record(&mut self, host: &Host, change: &dyn Change) {
        let root = host.root();
        if root != Path::new("/") && !self.roots.iter().any(|r| r == root) {
            self.roots.push(root.to_path_buf());
        }
        if let Some(ep) = endpoint_of(change) {
            if !self.endpoints.contains(&ep) {
                self.endpoints.push(ep);
            }
        }
    }

    /// The scope of entries already journaled by innotune (and validated):
    /// what `apply` carries over into the applied journal.
    pub fn of(entries: &[Entry]) -> Scope {
        let mut s = Scope::default();
        for e in entries {
            if let Some(serde_json::Value::String(r)) = e.root() {
                s.record(&Host::with_root(r), e.change());
            } else {
                s.record(&Host::live(), e.change());
            }
        }
        s
    }
}

/// The server a change connects to (`server_variable`'s `endpoint`).
pub(crate) fn endpoint_of(change: &dyn Change) -> Option<crate::db::ServerEndpoint> {
    let v = serde_json::to_value(change).ok()?;
    serde_json::from_value(v.get("endpoint")?.clone()).ok()
}

/// Read a version-1 entry (`{"kind": "sysfs" | "file" | "dir" | "server",
/// …}`) as the change kind that replaced it. A `file` entry carried no hash
/// of what was written and a `dir` entry no marker, so `restore` refuses
/// them unless the directory is empty or marked (validation decides).
fn upgrade_v1(id: u64, v: serde_json::Value) -> serde_json::Value {
    use serde_json::json;
    let kind = v.get("kind").and_then(|k| k.as_str()).unwrap_or_default();
    let change = match kind {
        "sysfs" => json!({
            "kind": "sysfs",
            "path": v["path"],
            "value": v["new"],
            "label": v["path"],
            "original": v["original"],
            "root": v.get("root").cloned().unwrap_or(json!("/")),
        }),
        "file" => json!({"kind": "file", "path": v["path"], "content": ""}),
        "dir" => json!({"kind": "dir", "path": v["path"], "recursive": true, "v1": true}),
        "server" => json!({
            "kind": "server",
            "dir": v["dir"],
            "pid": v["pid"],
            "start_ticks": v["start_ticks"],
        }),
        _ => return v,
    };
    json!({"kind": "change", "id": id, "change": change})
}

/// Read a journal file; `Ok(None)` when there is none. Version-1 entries
/// are read as the change kinds that replaced them. A journal (or state
/// directory) that is not the running user's alone is refused with one
/// line (`trust.rs`).
pub fn load(path: &Path) -> Result<Option<JournalFile>> {
    let bad = |e: &dyn std::fmt::Display| {
        Fix::new(
            format!("journal {} is not readable JSON: {e}", path.display()),
            "inspect it, put back what it lists by hand, then delete it",
        )
    };
    match trust::read_journal(path) {
        Ok(Some(s)) => {
            let mut v: serde_json::Value = serde_json::from_str(&s).map_err(|e| bad(&e))?;
            check_version(path, &v)?;
            if let Some(entries) = v.get_mut("entries").and_then(|e| e.as_array_mut()) {
                let old = std::mem::take(entries);
                *entries = old
                    .into_iter()
                    .enumerate()
                    .map(|(i, e)| upgrade_v1(i as u64 + 1, e))
                    .collect();
            }
            let j: JournalFile = serde_json::from_value(v).map_err(|e| bad(&e))?;
            Ok(Some(j))
        }
        Ok(None) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Refuse a journal whose format version this build does not read, before
/// its entries are parsed: a newer innotune's journal would otherwise fail
/// on some field ("expected struct Owner") without saying why. The error
/// names the version and, as far as the journal says, which innotune wrote
/// it and for which run.
fn check_version(path: &Path, v: &serde_json::Value) -> Result<()> {
    let version = v.get("version").and_then(|n| n.as_u64());
    if matches!(version, Some(n) if n >= 1 && n <= u64::from(JOURNAL_VERSION)) {
        return Ok(());
    }
    let writer = match v.get("written_by").and_then(|w| w.as_str()) {
        Some(w) => crate::output::escape(w),
        None => "an innotune that did not record its version".to_string(),
    };
    let owner = v.get("owner");
    let field = |k: &str| owner.and_then(|o| o.get(k));
    let run = match (
        field("pid").and_then(|p| p.as_u64()),
        field("command").and_then(|c| c.as_str()),
    ) {
        (Some(pid), Some(cmd)) => format!(", pid {pid}: `{}`", crate::output::escape(cmd)),
        _ => String::new(),
    };
    let what = match (version, v.get("version")) {
        (Some(n), _) => format!("format version {n}"),
        (None, None | Some(serde_json::Value::Null)) => "no format version".to_string(),
        (None, Some(other)) => {
            let kind = match other {
                serde_json::Value::String(_) => "a string",
                serde_json::Value::Number(_) => "not a whole number of 1 or more",
                serde_json::Value::Bool(_) => "a boolean",
                serde_json::Value::Array(_) => "an array",
                _ => "an object",
            };
            let full = other.to_string();
            let mut shown: String = full.chars().take(40).collect();
            if shown.len() < full.len() {
                shown.push('…');
            }
            format!(
                "an unsupported format version field {} ({kind}; the version is a whole number)",
                crate::output::escape(&shown)
            )
        }
    };
    Err(Fix::new(
        format!(
            "journal {} has {what}, which {WRITTEN_BY} cannot read (versions 1–{JOURNAL_VERSION}); it was written by {writer}{run}",
            path.display()
        ),
        "run `innotune restore` with the innotune that wrote it, or put back what it lists by hand, then delete it",
    )
    .into())
}

/// Write the journal so that it is on disk when this returns
/// ([`crate::durable`], 0600, never over anything but a regular file).
pub(crate) fn persist(path: &Path, j: &JournalFile) -> io::Result<()> {
    let text = serde_json::to_string_pretty(j)? + "\n";
    Ok(crate::durable::write(
        path,
        text.as_bytes(),
        &crate::durable::Options::PRIVATE,
    )?)
}

fn remove_journal(path: &Path) -> io::Result<()> {
    crate::durable::remove(path)
}

/// Create the state directory (0700 when innotune creates it: the journal
/// holds backups of configuration files).
fn create_state_dir(dir: &Path) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| {
            Fix::new(
                format!("cannot create state directory {}: {e}", dir.display()),
                "run as root, or set INNOTUNE_STATE_DIR to a writable directory",
            )
            .into()
        })
}

/// Take the journal lock of `dir` without waiting: `Ok(None)` when another
/// process (or another guard of this one) holds it. The lock is an `flock`
/// on `journal.lock`, released by the kernel when its holder exits, however
/// it exits; the file itself is never deleted (deleting it would let two
/// runs lock two different files).
pub(crate) fn try_lock(dir: &Path) -> Result<Option<File>> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = dir.join(LOCK_FILE);
    let f = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&path)
        .map_err(|e| {
            Fix::new(
                format!("cannot open {}: {e}", path.display()),
                "run as root, or set INNOTUNE_STATE_DIR to a writable directory",
            )
        })?;
    match rustix::fs::flock(&f, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(Some(f)),
        Err(e) if e == rustix::io::Errno::WOULDBLOCK => Ok(None),
        Err(e) => Err(anyhow::anyhow!("locking {}: {e}", path.display())),
    }
}

/// The one line a run refused by the lock prints.
fn busy(path: &Path) -> anyhow::Error {
    let who = match load(path) {
        Ok(Some(j)) => format!(" (pid {}, `{}`)", j.owner.pid, j.owner.command),
        _ => String::new(),
    };
    Fix::new(
        format!("another innotune run{who} is changing this host"),
        "wait for it to finish; it restores everything on exit",
    )
    .into()
}

/// Start time of a process in clock ticks since boot, if it is alive (a
/// zombie counts as dead). Reads the live /proc: the owner is a process on
/// this machine whatever `--root` a command replays.
pub fn process_start_ticks(pid: u32) -> Option<u64> {
    crate::model::process::live_start_ticks(&Host::live(), pid)
}

/// This process's command line, `innotune …`, passwords redacted: what a
/// journal's owner records.
pub fn command_line() -> String {
    std::iter::once("innotune".to_string())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `command` with every password replaced by `***`: `--password=X`,
/// `--mysql-password=X`, `-pX`, the word after a bare `--password`/`-p`
/// (the mysql client would not take it as one, but a user may have meant
/// it), and the password of a `scheme://user:password@host` URL. The same
/// spellings `crate::db::argv` hides from `ps`.
pub fn redact(command: &str) -> String {
    const LONG: [&str; 3] = ["--password", "--mysql-password", "--mysql_password"];
    let mut out = Vec::new();
    let mut hide_next = false;
    for w in command.split(' ') {
        if std::mem::take(&mut hide_next) && !w.starts_with('-') && !w.is_empty() {
            out.push("***".to_string());
            continue;
        }
        let long = LONG.iter().find(|l| w.starts_with(*l));
        let r = if let Some(l) = long {
            match &w[l.len()..] {
                "" => {
                    hide_next = true;
                    w.to_string()
                }
                rest if rest.starts_with('=') => format!("{l}=***"),
                _ => w.to_string(),
            }
        } else if w == "-p" {
            hide_next = true;
            w.to_string()
        } else if w.starts_with("-p") && !w.starts_with("--") {
            "-p***".to_string()
        } else if let Some(i) = w.find("://") {
            // scheme://user:password@host → scheme://user:***@host
            let rest = &w[i + 3..];
            match (rest.find(':'), rest.find('@')) {
                (Some(c), Some(a)) if c < a => {
                    format!("{}{}:***{}", &w[..i + 3], &rest[..c], &rest[a..])
                }
                _ => w.to_string(),
            }
        } else {
            w.to_string()
        };
        out.push(r);
    }
    out.join(" ")
}

impl Owner {
    fn current(command: &str) -> Owner {
        let pid = std::process::id();
        Owner {
            pid,
            command: redact(command),
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
    /// The `flock` on `journal.lock`, held as long as the guard lives.
    _lock: File,
}

impl Inner {
    fn next_id(&self) -> u64 {
        self.file
            .entries
            .iter()
            .map(|e| e.id() + 1)
            .max()
            .unwrap_or(1)
    }

    fn persist(&self) -> Result<()> {
        persist(&self.path, &self.file).map_err(|e| {
            let how = if crate::durable::no_space(&e) {
                "free space on the state directory's filesystem (or set INNOTUNE_STATE_DIR to a directory on another)"
            } else {
                "make the state directory writable (or set INNOTUNE_STATE_DIR)"
            };
            Fix::new(
                format!("cannot write journal {}: {e}", self.path.display()),
                format!("{how}; nothing this run changed is left changed"),
            )
        })?;
        fault::step("journal written");
        Ok(())
    }

    fn check_open(&self) -> Result<()> {
        if self.closed {
            anyhow::bail!("interrupted: restoring host settings");
        }
        Ok(())
    }

    /// The entry an earlier change of the same kind, target and root
    /// holds, for a [`Change::journal_once`] change (`change` captured).
    fn journaled_once(&self, change: &dyn Change) -> Option<u64> {
        if !change.journal_once() {
            return None;
        }
        let root = serde_json::to_value(change)
            .ok()
            .and_then(|v| v.get("root").cloned());
        self.file
            .entries
            .iter()
            .find(|e| {
                e.kind() == change.typetag_name()
                    && e.change().target() == change.target()
                    && e.root() == root
            })
            .map(Entry::id)
    }

    /// Journal `change` (captured), then apply it; see [`Guard::apply`].
    fn apply(&mut self, host: &Host, mut change: Box<dyn Change>) -> Result<u64> {
        self.check_open()?;
        change.capture(host)?;
        if let Some(id) = self.journaled_once(change.as_ref()) {
            change.apply(host)?;
            fault::step("change made (journaled by an earlier entry)");
            return Ok(id);
        }
        self.file.scope.record(host, change.as_ref());
        let id = self.next_id();
        self.file.entries.push(Entry::Change {
            id,
            change: change.clone(),
        });
        self.persist()?;
        let applied = change.apply(host);
        fault::step("change made");
        if let Some(Entry::Change { change: c, .. }) =
            self.file.entries.iter_mut().find(|e| e.id() == id)
        {
            *c = change;
        }
        self.persist()?;
        applied?;
        Ok(id)
    }

    /// Restore every entry and run the hooks the undone ones need; keep
    /// the entries that failed in the journal.
    fn restore(&mut self) -> Vec<Restored> {
        let results = restore_entries(&self.file.entries, false);
        for h in crate::change::run_hooks(&restore::undo_hooks(&self.file.entries, &results)) {
            if h.status == "failed" {
                crate::output::warn(format!(
                    "{:?} after restoring: {}",
                    h.hook,
                    h.note.unwrap_or_default()
                ));
            }
        }
        let failed: Vec<Entry> = self
            .file
            .entries
            .iter()
            .zip(&results)
            .filter(|(_, r)| r.outcome.keeps_entry())
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
        create_state_dir(dir)?;
        trust::open_state_dir(dir)?;
        let path = dir.join(JOURNAL_FILE);
        let Some(lock_file) = try_lock(dir)? else {
            return Err(busy(&path));
        };
        if let Some(old) = load(&path)? {
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
        }
        let file = JournalFile {
            version: JOURNAL_VERSION,
            written_by: Some(WRITTEN_BY.to_string()),
            owner: Owner::current(command),
            scope: Scope::default(),
            entries: Vec::new(),
        };
        let inner = Inner {
            path,
            file,
            closed: false,
            _lock: lock_file,
        };
        inner.persist()?;
        let shared = Arc::new(Mutex::new(inner));
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
    /// Capture `change`'s current state, journal it (on disk), then apply
    /// it; the journal is written again afterwards, since applying may add
    /// to what the change remembers (a written file's hash, a spawned
    /// server's pid). The journal's lock is held from the capture to that
    /// second write, so a signal's restore sees the change before it is
    /// made or after what it made is on disk. Returns the handle for
    /// [`Guard::undo`] (a [`Change::journal_once`] change already journaled
    /// is applied, and the first one's handle returned). If applying fails,
    /// the entry stays journaled and is undone with the rest.
    pub fn apply(&self, host: &Host, change: Box<dyn Change>) -> Result<u64> {
        lock(&self.shared).apply(host, change)
    }

    /// Undo the change `id` now (not waiting for the end of the run) and
    /// drop it from the journal unless undoing failed.
    pub fn undo(&self, id: u64) -> Result<crate::change::Undone> {
        let mut inner = lock(&self.shared);
        let Some(i) = inner.file.entries.iter().position(|e| e.id() == id) else {
            anyhow::bail!("internal: no journaled change {id}");
        };
        let u = inner.file.entries[i].change().undo(false);
        if !u.outcome.keeps_entry() {
            let e = inner.file.entries.remove(i);
            if !matches!(u.outcome, crate::change::Outcome::Conflict { .. }) {
                crate::change::run_hooks(&e.change().after_undo());
            }
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

    /// Leave as a SIGKILL would: the journal stays, nothing is restored,
    /// and the lock is released (the kernel does that for a dead process).
    #[cfg(test)]
    pub(crate) fn simulate_crash(self) {
        let inner = lock(&self.shared);
        let _ = rustix::fs::flock(&inner._lock, rustix::fs::FlockOperation::Unlock);
        drop(inner);
        std::mem::forget(self);
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if self.signals {
            signals::deactivate(&self.shared);
        }
        let mut inner = lock(&self.shared);
        let results = inner.restore();
        for r in results.iter().filter(|r| r.outcome.keeps_entry()) {
            crate::output::warn(format!(
                "could not restore {}: {} (run `innotune restore`)",
                r.path.display(),
                r.outcome
            ));
        }
        if inner.file.entries.is_empty() && remove_journal(&inner.path).is_ok() {
            fault::step("journal removed");
        }
        // The flock goes with `inner` when the last reference drops.
    }
}

/// Called before every command except `restore`: say so if an earlier run
/// left host changes that were never undone.
pub fn warn_if_pending() {
    let path = journal_path();
    // A user who may not read the state directory (root's 0700
    // /var/lib/innotune) could not restore it either: nothing to say.
    if let Err(e) = fs::metadata(&path) {
        if e.kind() == io::ErrorKind::PermissionDenied {
            return;
        }
    }
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
