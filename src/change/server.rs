//! A throwaway server innotune started (a sandbox in `dir`, e.g. the OLTP
//! workloads of a sweep): undo stops it (SIGTERM, SIGKILL after a grace
//! period), before any directory is deleted.
//!
//! Two changes of this kind journal one sandbox's server, both through
//! `Guard::apply` (see `Sandbox::start_journaled`):
//! - [`ServerStarted::new`], before the server's data directory is
//!   initialised: it has no pid, and stands for every mysqld/mariadbd whose
//!   command line names DIR's my.cnf (the bootstrap server of
//!   `mariadb-install-db` too, or a server whose spawn a crash kept from
//!   being journaled).
//! - [`ServerStarted::spawn`], built around the server's command before it
//!   runs: applying it spawns the server and records its pid and start
//!   time, and the journal writes that before it lets go of its lock, so a
//!   signal's restore runs either before the spawn (nothing started) or
//!   after the pid is on disk. The process is handed back through
//!   [`Spawned`].
//!
//! Stopping: which processes are provably it, and SIGTERM → wait → SIGKILL
//! without ever signalling a recycled pid.
//!
//! A pid alone names whatever process holds that number now. A process is
//! the journaled server only when its start time equals the journaled one
//! and its command line names the sandbox's my.cnf. The signal then goes
//! through a pidfd opened *before* that check, so the process checked is
//! the process signalled even if it exits and its pid is reused in between.

use super::{plain_abs, Change, Outcome, Priority, Undone};
use crate::host::Host;
use crate::model::process::live_start_ticks;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a server gets to shut down cleanly after SIGTERM. A sandbox
/// flushes its (small) buffer pool in a second or two; its data is
/// deleted right after, so a longer wait would buy nothing.
const GRACE: Duration = Duration::from_secs(30);
/// How long SIGKILL may take before the stop is reported as failed (a
/// process stuck in uninterruptible I/O).
const KILL_WAIT: Duration = Duration::from_secs(10);

/// One running process, named by pid and start time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Proc {
    pub pid: u32,
    pub start_ticks: u64,
}

/// Start time of `pid` on this machine, if it is alive.
fn process_start_ticks(pid: u32) -> Option<u64> {
    live_start_ticks(&Host::live(), pid)
}

/// Is `pid` the server of the sandbox in `dir`: does its command line
/// carry the argument `--defaults-file=DIR/my.cnf`? Every server a sandbox
/// starts does (and so does mariadb-install-db's bootstrap server); a
/// recycled pid, or a sandbox in `DIR2` whose name starts with DIR, does
/// not. The sandbox uses it too, to tell its own running server.
pub fn runs_from(pid: u32, dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let mut want = b"--defaults-file=".to_vec();
    want.extend_from_slice(dir.join("my.cnf").as_os_str().as_bytes());
    std::fs::read(Host::live().path(format!("/proc/{pid}/cmdline")))
        .map(|c| c.split(|&b| b == 0).any(|a| a == want.as_slice()))
        .unwrap_or(false)
}

impl Proc {
    /// Still the same process (a zombie has exited; a different start time
    /// is a recycled pid)?
    fn alive(self) -> bool {
        process_start_ticks(self.pid) == Some(self.start_ticks)
    }
}

/// The running processes of the server journaled for `dir`.
///
/// With a pid: that pid, if its start time is the journaled one and its
/// command line names `dir`'s my.cnf. Without one (the spawn was never
/// journaled, or the bootstrap server of mariadb-install-db): every
/// mysqld/mariadbd whose command line names `dir`'s my.cnf. `dir` holds
/// the journal owner's pid in its name, so no unrelated server names it.
pub(crate) fn find(dir: &Path, pid: Option<u32>, start_ticks: Option<u64>) -> Vec<Proc> {
    let pids = match pid {
        Some(p) => vec![p],
        None => crate::model::process::server_pids(&Host::live()),
    };
    pids.into_iter()
        .filter_map(|p| {
            let now = process_start_ticks(p)?;
            let same = match (pid, start_ticks) {
                (None, _) => true,
                (Some(_), Some(then)) => now == then,
                // A pid journaled without a start time cannot be told from
                // a recycled one: leave it alone.
                (Some(_), None) => false,
            };
            (same && runs_from(p, dir)).then_some(Proc {
                pid: p,
                start_ticks: now,
            })
        })
        .collect()
}

/// Signal `p` if it is still the server of `dir`: pidfd first, then the
/// identity check, then the signal through the pidfd (kill(2) where
/// pidfds are unsupported, right after the check). False if it is gone.
fn signal(p: Proc, dir: &Path, sig: rustix::process::Signal) -> bool {
    let fd = rustix::process::Pid::from_raw(p.pid as i32).and_then(|pid| {
        rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
    });
    if !p.alive() || !runs_from(p.pid, dir) {
        return false;
    }
    match fd {
        Some(fd) => rustix::process::pidfd_send_signal(&fd, sig).is_ok(),
        None => unsafe { libc::kill(p.pid as i32, sig.as_raw()) == 0 },
    }
}

fn wait_gone(p: Proc, limit: Duration) -> bool {
    let end = Instant::now() + limit;
    loop {
        if !p.alive() {
            return true;
        }
        if Instant::now() >= end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Stop one process of the server: SIGTERM (a clean shutdown for
/// mysqld/mariadbd), SIGKILL after [`GRACE`].
pub(crate) fn stop(p: Proc, dir: &Path) -> Outcome {
    use rustix::process::Signal;
    if !signal(p, dir, Signal::TERM) {
        return Outcome::Gone;
    }
    if wait_gone(p, GRACE) {
        return Outcome::Stopped {
            signal: "SIGTERM".into(),
        };
    }
    if !signal(p, dir, Signal::KILL) || wait_gone(p, KILL_WAIT) {
        return Outcome::Stopped {
            signal: "SIGKILL".into(),
        };
    }
    Outcome::Failed {
        reason: format!(
            "pid {} still running {}s after SIGKILL",
            p.pid,
            KILL_WAIT.as_secs()
        ),
    }
}

/// A server innotune started; see the module documentation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServerStarted {
    /// The sandbox directory (datadir, socket, my.cnf live in it).
    pub dir: PathBuf,
    /// Null until the server process is spawned.
    #[serde(default)]
    pub pid: Option<u32>,
    /// The server's start time in clock ticks since boot.
    #[serde(default)]
    pub start_ticks: Option<u64>,
    /// The command to spawn when applied ([`ServerStarted::spawn`]).
    #[serde(skip)]
    launch: Option<Spawned>,
}

/// The process a [`ServerStarted::spawn`] change starts when it is
/// applied: the command before, the child after.
#[derive(Clone, Default)]
pub struct Spawned(Arc<Mutex<(Option<Command>, Option<Child>)>>);

impl Spawned {
    /// The spawned server, once the change was applied (taken: a second
    /// call gives `None`).
    pub fn child(&self) -> Option<Child> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).1.take()
    }
}

impl std::fmt::Debug for Spawned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Spawned")
    }
}

impl ServerStarted {
    /// Every server whose command line names `dir`'s my.cnf, journaled
    /// before there is one (applying it starts nothing).
    pub fn new(dir: impl Into<PathBuf>) -> ServerStarted {
        ServerStarted {
            dir: dir.into(),
            pid: None,
            start_ticks: None,
            launch: None,
        }
    }

    /// The server `cmd` starts for the sandbox in `dir`: applying the
    /// change spawns it and records its pid and start time; the child is
    /// then in the returned [`Spawned`].
    pub fn spawn(dir: impl Into<PathBuf>, cmd: Command) -> (ServerStarted, Spawned) {
        let launch = Spawned(Arc::new(Mutex::new((Some(cmd), None))));
        let change = ServerStarted {
            launch: Some(launch.clone()),
            ..ServerStarted::new(dir)
        };
        (change, launch)
    }
}

#[typetag::serde(name = "server")]
impl Change for ServerStarted {
    fn target(&self) -> String {
        self.dir.display().to_string()
    }
    fn describe(&self) -> String {
        match self.pid {
            Some(p) => format!("server in {} (pid {p})", self.dir.display()),
            None => format!("server in {}", self.dir.display()),
        }
    }
    /// Nothing to read: the server does not exist yet.
    fn capture(&mut self, _host: &Host) -> Result<()> {
        Ok(())
    }
    /// Spawns the server of a [`ServerStarted::spawn`] change and records
    /// its pid and start time (the journal writes them next, still holding
    /// its lock); a [`ServerStarted::new`] change starts nothing.
    fn apply(&mut self, _host: &Host) -> Result<()> {
        let Some(launch) = &self.launch else {
            return Ok(());
        };
        let mut slot = launch.0.lock().unwrap_or_else(|p| p.into_inner());
        let Some(mut cmd) = slot.0.take() else {
            anyhow::bail!("internal: server in {} spawned twice", self.dir.display());
        };
        let child = cmd
            .spawn()
            .with_context(|| format!("starting {}", cmd.get_program().to_string_lossy()))?;
        self.pid = Some(child.id());
        self.start_ticks = process_start_ticks(child.id());
        slot.1 = Some(child);
        Ok(())
    }
    fn is_applied(&self, _host: &Host) -> Result<bool> {
        Ok(!find(&self.dir, self.pid, self.start_ticks).is_empty())
    }
    fn undo(&self, dry_run: bool) -> Undone {
        let procs = find(&self.dir, self.pid, self.start_ticks);
        let outcome = if procs.is_empty() {
            Outcome::Gone
        } else if dry_run {
            Outcome::WouldRestore
        } else {
            // Several only without a journaled pid (bootstrap + server):
            // the worst outcome is the entry's.
            let all: Vec<Outcome> = procs.iter().map(|&p| stop(p, &self.dir)).collect();
            all.iter()
                .find(|o| matches!(o, Outcome::Failed { .. }))
                .or_else(|| all.iter().find(|o| matches!(o, Outcome::Stopped { .. })))
                .cloned()
                .unwrap_or(Outcome::Gone)
        };
        Undone {
            outcome,
            original: None,
            found: None,
            pid: procs.first().map(|p| p.pid),
        }
    }
    fn priority(&self) -> Priority {
        Priority::SERVER
    }
    /// Only a process whose command line names `DIR/my.cnf` is ever
    /// signalled; the directory must be a plain absolute path.
    fn validate(&self) -> Result<(), String> {
        if !plain_abs(&self.dir) || self.dir.components().count() < 3 {
            return Err(format!(
                "{} is not a sandbox directory innotune creates",
                self.dir.display()
            ));
        }
        Ok(())
    }
}
