//! Every change innotune makes to a host, as one trait.
//!
//! A [`Change`] knows how to capture the value it is about to replace, make
//! the change, tell whether it is already in effect, undo it, and when (in
//! which [`Priority`]) it must be undone relative to others. The journal
//! (`crate::journal`) stores changes as they are captured, *before* they are
//! applied, and undoes them on every exit path; `innotune restore` undoes a
//! journal a crashed run left behind.
//!
//! Why a trait (serialised with `typetag`) rather than a closed enum: new
//! kinds of change (a trace instance, a udev rule, a `SET PERSIST`) are
//! added by writing one file with one `impl Change`, without editing the
//! journal, restore or its ordering. The JSON of each kind carries
//! `"kind": "<name>"` (the `typetag` name), which is also what
//! `docs/json-restore.md` documents.
//!
//! Rules every implementation keeps:
//! - `capture` reads only; an error means nothing was changed.
//! - `apply` may update what the change remembers (a written file's SHA-256,
//!   a spawned pid); the journal persists the change again afterwards.
//! - `undo` never overwrites something someone else changed since: it
//!   reports [`Outcome::Conflict`] and leaves it alone.
//! - `validate` refuses a journal entry innotune could not have written (a
//!   path outside what that kind may touch), so a forged journal cannot make
//!   `innotune restore` write anywhere.

pub mod allowed;
pub mod created_dir;
pub mod created_file;
pub mod edited_file;
pub mod irq_affinity;
pub mod remount;
pub mod server;
pub mod server_variable;
pub mod sysctl;
pub mod sysfs;
pub mod trace_instance;

pub use created_dir::CreatedDir;
pub use created_file::CreatedFile;
pub use edited_file::EditedFile;
pub use irq_affinity::IrqAffinity;
pub use remount::Remount;
pub use server::ServerStarted;
pub use server_variable::ServerVariable;
pub use sysctl::Sysctl;
pub use sysfs::SysfsAttr;
pub use trace_instance::TraceInstance;

use crate::host::Host;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;
use std::io;
use std::path::{Component, Path, PathBuf};

/// One reversible change to the host. See the module documentation.
#[typetag::serde(tag = "kind")]
pub trait Change: fmt::Debug + Send + Sync + dyn_clone::DynClone {
    /// What it touches, as people and scripts name it: a host-absolute path,
    /// `vm.swappiness`, `innodb_io_capacity@/run/mysqld/mysqld.sock`.
    fn target(&self) -> String;

    /// One line for people: `vda scheduler: mq-deadline → none`.
    fn describe(&self) -> String;

    /// Read and remember what is there now. Called once, before the change
    /// is journaled.
    fn capture(&mut self, host: &Host) -> anyhow::Result<()>;

    /// Make the change. The journal already holds the captured state.
    fn apply(&mut self, host: &Host) -> anyhow::Result<()>;

    /// Is the host already as this change would leave it? (`apply --check`,
    /// and a second `apply` that changes nothing.)
    fn is_applied(&self, host: &Host) -> anyhow::Result<bool>;

    /// Put back what `capture` saw (or only say what would be done).
    fn undo(&self, dry_run: bool) -> Undone;

    /// When to undo it relative to other changes (lower first).
    fn priority(&self) -> Priority;

    /// `Err(reason)` when this entry is not one innotune could have
    /// written; restore refuses the whole journal then, writing nothing.
    fn validate(&self) -> Result<(), String>;

    /// Journal only the first change of this kind to one target (under one
    /// root) in a run: undoing it puts back what was there before every
    /// later one too (a one-value attribute: sysfs, a sysctl). A later one
    /// is captured and applied, and not journaled again.
    fn journal_once(&self) -> bool {
        false
    }

    /// Commands to run once after undoing changes of this kind (the journal
    /// runs each distinct hook once, after every undo).
    fn after_undo(&self) -> Vec<Hook> {
        Vec::new()
    }

    /// Commands to run once after applying changes of this kind.
    fn after_apply(&self) -> Vec<Hook> {
        Vec::new()
    }
}

dyn_clone::clone_trait_object!(Change);

/// The order changes are undone in. Why an order at all: switching the
/// scheduler resets `nr_requests` to the new scheduler's default, so
/// schedulers go back before other queue attributes; a server's datadir
/// lives in a directory innotune created, so servers stop before files and
/// directories are deleted; files inside a directory go before it.
/// Within one priority, the newest change is undone first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Priority(pub u8);

impl Priority {
    /// queue/scheduler: its write resets other queue attributes.
    pub const SCHEDULER: Priority = Priority(10);
    /// Other sysfs attributes and sysctls.
    pub const ATTRIBUTE: Priority = Priority(20);
    /// Server variables (`SET GLOBAL`), while the server still runs.
    pub const SERVER_VARIABLE: Priority = Priority(30);
    /// Kernel trace instances and other live kernel objects.
    pub const KERNEL_OBJECT: Priority = Priority(35);
    /// Throwaway servers innotune started.
    pub const SERVER: Priority = Priority(40);
    /// Files innotune wrote or edited.
    pub const FILE: Priority = Priority(50);
    /// Directories innotune created (after the files in them).
    pub const DIR: Priority = Priority(60);
}

/// What undoing one change did.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// The original value was written back (and read back equal).
    Restored,
    /// It already held the original value.
    AlreadyOriginal,
    /// A created file or directory was deleted.
    Removed,
    /// A server innotune started was stopped, by `signal` (`SIGTERM`, or
    /// `SIGKILL` when it did not exit within the grace period).
    Stopped { signal: String },
    /// The attribute, file or process no longer exists: nothing to restore.
    Gone,
    /// `--dry-run`: this would be written back or removed.
    WouldRestore,
    /// Someone changed it after innotune did; it was left alone.
    Conflict { reason: String },
    /// It could not be put back; the entry stays in the journal.
    Failed { reason: String },
}

impl Outcome {
    /// Does the entry stay in the journal for another `restore`?
    pub fn keeps_entry(&self) -> bool {
        matches!(self, Outcome::Failed { .. })
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Restored => f.write_str("restored"),
            Outcome::AlreadyOriginal => f.write_str("already original"),
            Outcome::Removed => f.write_str("removed"),
            Outcome::Stopped { signal } => write!(f, "stopped ({signal})"),
            Outcome::Gone => f.write_str("gone"),
            Outcome::WouldRestore => f.write_str("would restore"),
            Outcome::Conflict { reason } => write!(f, "conflict: {reason}"),
            Outcome::Failed { reason } => write!(f, "failed: {reason}"),
        }
    }
}

/// The result of [`Change::undo`], with what was found and put back for
/// the report (never a file's contents: they may hold secrets).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Undone {
    #[serde(flatten)]
    pub outcome: Outcome,
    /// The value put back (sysfs, sysctl, server variable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<String>,
    /// The value found before undoing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found: Option<String>,
    /// A server's pid, found running and verified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
}

impl Undone {
    pub fn outcome(outcome: Outcome) -> Undone {
        Undone {
            outcome,
            original: None,
            found: None,
            pid: None,
        }
    }
}

/// A command some changes need after they are applied or undone, so the
/// system picks them up. Each distinct hook runs once per run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Hook {
    /// `udevadm control --reload` then `udevadm trigger --subsystem-match=block --action=change`.
    UdevReload,
    /// `systemctl daemon-reload`.
    SystemdReload,
    /// `sysctl --system`.
    SysctlSystem,
}

impl Hook {
    /// The command lines this hook runs.
    pub fn commands(&self) -> Vec<Vec<&'static str>> {
        match self {
            Hook::UdevReload => vec![
                vec!["udevadm", "control", "--reload"],
                vec![
                    "udevadm",
                    "trigger",
                    "--subsystem-match=block",
                    "--action=change",
                ],
            ],
            Hook::SystemdReload => vec![vec!["systemctl", "daemon-reload"]],
            Hook::SysctlSystem => vec![vec!["sysctl", "--system"]],
        }
    }
}

impl Hook {
    /// Why this hook cannot run here, if it cannot: the tool is not
    /// installed, or the daemon it talks to is not running (containers,
    /// CI runners, hosts without systemd).
    fn unavailable(&self) -> Option<String> {
        let tool = self.commands()[0][0];
        if which::which(tool).is_err() {
            return Some(format!("{tool} is not installed"));
        }
        match self {
            Hook::UdevReload if !Path::new("/run/udev/control").exists() => {
                Some("udevd is not running (no /run/udev/control)".into())
            }
            Hook::SystemdReload if !Path::new("/run/systemd/system").is_dir() => {
                Some("systemd is not the init system here (no /run/systemd/system)".into())
            }
            _ => None,
        }
    }
}

/// What running one [`Hook`] did.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HookRun {
    pub hook: Hook,
    /// `ran`, `skipped` (tool or daemon absent) or `failed`.
    pub status: String,
    /// Why it was skipped or failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Run each distinct hook once, in order. A hook whose tool or daemon is
/// absent is skipped with a note; a failing command is reported, never an
/// error (the changes themselves are already undone or made).
pub fn run_hooks(hooks: &[Hook]) -> Vec<HookRun> {
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for &h in hooks {
        if seen.contains(&h) {
            continue;
        }
        seen.push(h);
        if let Some(why) = h.unavailable() {
            out.push(HookRun {
                hook: h,
                status: "skipped".into(),
                note: Some(why),
            });
            continue;
        }
        let mut run = HookRun {
            hook: h,
            status: "ran".into(),
            note: None,
        };
        for cmd in h.commands() {
            match std::process::Command::new(cmd[0]).args(&cmd[1..]).output() {
                Ok(o) if o.status.success() => {}
                Ok(o) => {
                    run.status = "failed".into();
                    run.note = Some(format!(
                        "{}: {}",
                        cmd.join(" "),
                        String::from_utf8_lossy(&o.stderr).trim()
                    ));
                    break;
                }
                Err(e) => {
                    run.status = "failed".into();
                    run.note = Some(format!("{}: {e}", cmd.join(" ")));
                    break;
                }
            }
        }
        out.push(run);
    }
    out
}

// ------------------------------------------------------------ shared helpers

/// The one place innotune writes a sysfs/procfs attribute. Private to this
/// module tree on purpose: every host write goes through a [`Change`], so
/// it is journaled before it happens.
fn write_attr(host: &Host, p: &Path, value: &str) -> io::Result<()> {
    std::fs::write(host.path(p), value)
}

fn slash() -> PathBuf {
    PathBuf::from("/")
}

/// Absolute and free of `..`: a journaled path must name what it says.
fn plain_abs(p: &Path) -> bool {
    p.is_absolute() && !p.components().any(|c| matches!(c, Component::ParentDir))
}

/// A value innotune writes to or reads back from a kernel attribute or a
/// server variable: a scheduler name, a number, a CPU mask, `ON`/`OFF`,
/// `O_DIRECT`. Nothing else (a path, a pipe to a program, a quote) is
/// accepted from a journal.
pub(crate) fn plain_value(v: &str) -> bool {
    v.len() <= 256
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ',' | ':'))
}

/// A one-word name (a device, a NIC, a queue): no `/`, not `.` or `..`.
fn plain_name(n: &str) -> bool {
    !n.is_empty() && n != "." && n != ".." && plain_value(n) && !n.contains(',')
}

/// The `root` of a journaled change: `/`, or the absolute path of a
/// replayed `--root` tree, free of `..`. (That it is `/` or a root the
/// run recorded is checked by the journal, which knows the run:
/// `journal::restore::validate_entries`.)
fn check_root(root: &Path) -> Result<(), String> {
    if plain_abs(root) {
        Ok(())
    } else {
        Err(format!(
            "root {} is not a plain absolute path",
            root.display()
        ))
    }
}

/// Under a replayed `--root` tree, the way to `p` (host-absolute) must be
/// the running user's or root's: the tree itself reached without a
/// symbolic link, and every directory and link from it to `p` owned by
/// the running user or root. A link or directory another user owns could
/// send the write anywhere (their tree's `sys/block/sda/queue/scheduler
/// -> /etc/shadow`), so it is refused; a link root made (a test harness's
/// `ROOT/sys -> /sys`) is followed, as `apply` followed it. On the live
/// root (`/`) the host's own links are the host's.
pub(crate) fn inside_root(root: &Path, p: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    if root == Path::new("/") {
        return Ok(());
    }
    let Ok(top) = std::fs::canonicalize(root) else {
        // No tree there: nothing to write through.
        return Ok(());
    };
    if top != root {
        return Err(format!(
            "root {} is reached through a symbolic link (to {})",
            root.display(),
            top.display()
        ));
    }
    let me = rustix::process::geteuid().as_raw();
    let trusted = |cur: &Path, m: &std::fs::Metadata| {
        if m.uid() == me || m.uid() == 0 {
            Ok(())
        } else {
            Err(format!(
                "{} is owned by uid {}: another user could send the write under root {} anywhere",
                cur.display(),
                m.uid(),
                root.display()
            ))
        }
    };
    let mut cur = top.clone();
    trusted(
        &cur,
        &std::fs::symlink_metadata(&cur).map_err(|e| e.to_string())?,
    )?;
    for c in p.components() {
        let Component::Normal(c) = c else { continue };
        cur.push(c);
        match std::fs::symlink_metadata(&cur) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(format!("{}: {e}", cur.display())),
            Ok(m) => {
                trusted(&cur, &m)?;
                if m.file_type().is_symlink() {
                    match std::fs::canonicalize(&cur) {
                        Ok(real) => cur = real,
                        // A link to nothing: the write creates its target,
                        // as apply's did.
                        Err(_) => return Ok(()),
                    }
                }
            }
        }
    }
    Ok(())
}

/// Lower-case hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// The bytes at `p` (not following a final symlink: a symlink reads as
/// `symlink:TARGET`), or `None` when nothing is there.
fn current_bytes(p: &Path) -> io::Result<Option<Vec<u8>>> {
    match std::fs::symlink_metadata(p) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
        Ok(m) if m.file_type().is_symlink() => Ok(Some(
            format!("symlink:{}", std::fs::read_link(p)?.display()).into_bytes(),
        )),
        Ok(_) => std::fs::read(p).map(Some),
    }
}

/// Replace the file (or symbolic link) at `p` durably with `mode`
/// exactly ([`crate::durable`]); `symlink:TARGET` makes a symlink.
fn replace_file(p: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let opts = crate::durable::Options::host_file(mode);
    match bytes.strip_prefix(b"symlink:") {
        Some(t) => {
            let target = String::from_utf8_lossy(t);
            crate::durable::symlink(p, Path::new(target.as_ref()), &opts)?
        }
        None => crate::durable::write(p, bytes, &opts)?,
    }
    Ok(())
}
