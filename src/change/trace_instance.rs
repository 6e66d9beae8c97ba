//! A private tracefs instance (`/sys/kernel/tracing/instances/innotune-PID`)
//! with the block events `innotune trace` reads, filtered to its devices.
//!
//! Why an instance: it has its own ring buffer and its own event switches,
//! so tracing never touches the global buffer (someone's `trace-cmd` or
//! `perf` session) or another tool's instance, and removing the directory
//! removes everything it enabled. Why a journaled change: an instance left
//! behind keeps tracing (and allocating buffer memory) until someone
//! removes it, so it must go on every exit path, including SIGKILL +
//! `innotune restore`.
//!
//! Apply mounts tracefs when nothing is mounted there yet (remembered, and
//! unmounted again on undo when it is idle, also when the instance is
//! already gone: a run killed between removing it and unmounting), creates the instance, sets its
//! buffer size, and for each event writes the device filter, then enables
//! it. Undo removes the directory; the kernel refuses (EBUSY) while a file
//! in it is open, so undo first asks this process's reader to close
//! ([`request_release`]) and retries for a moment.

use super::{slash, write_attr, Change, Outcome, Priority, Undone};
use crate::host::Host;
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Where tracefs lives: its own mount point, and the old one under debugfs.
pub const TRACEFS_MOUNTS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// Every instance innotune creates is named `innotune-…`; restore removes
/// no other.
pub const PREFIX: &str = "innotune-";

static RELEASE: AtomicBool = AtomicBool::new(false);

/// Set by undo: a reader of this process's instance must close its files
/// now (the directory cannot be removed while they are open).
pub fn release_requested() -> bool {
    RELEASE.load(Ordering::SeqCst)
}

fn request_release() {
    RELEASE.store(true, Ordering::SeqCst);
}

/// Allow readers again (a new capture in the same process).
pub fn reset_release() {
    RELEASE.store(false, Ordering::SeqCst);
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TraceInstance {
    /// Host-absolute tracefs mount point (one of [`TRACEFS_MOUNTS`]).
    pub tracefs: PathBuf,
    /// Directory name under `instances/`: `innotune-PID`.
    pub name: String,
    /// Events as `block/block_rq_issue`.
    pub events: Vec<String>,
    /// Event filter (`dev == 7340032 || …`); empty for none.
    #[serde(default)]
    pub filter: String,
    /// Per-CPU ring buffer size.
    #[serde(default)]
    pub buffer_kb: u32,
    /// The instance's `trace_clock` (empty: the kernel's default). Set
    /// explicitly because the binary pages carry raw clock values: the
    /// reader must know they are nanoseconds.
    #[serde(default)]
    pub trace_clock: String,
    /// innotune mounted tracefs for this: unmount it on undo when idle.
    #[serde(default)]
    pub mounted: bool,
    #[serde(default = "slash")]
    pub root: PathBuf,
}

impl TraceInstance {
    pub fn new(events: &[&str], filter: impl Into<String>, buffer_kb: u32) -> TraceInstance {
        TraceInstance {
            tracefs: PathBuf::from(TRACEFS_MOUNTS[0]),
            name: format!("{PREFIX}{}", std::process::id()),
            events: events.iter().map(|e| e.to_string()).collect(),
            filter: filter.into(),
            buffer_kb,
            trace_clock: String::new(),
            mounted: false,
            root: slash(),
        }
    }

    /// With `trace_clock` set to `clock` (one of the instance's
    /// `trace_clock` choices, e.g. `local` or `mono`).
    pub fn with_clock(mut self, clock: &str) -> TraceInstance {
        self.trace_clock = clock.to_string();
        self
    }

    /// Host-absolute path of the instance directory.
    pub fn dir(&self) -> PathBuf {
        self.tracefs.join("instances").join(&self.name)
    }

    /// Is tracefs mounted at `tracefs` (it has an `instances` directory)?
    fn tracefs_ready(h: &Host, tracefs: &Path) -> bool {
        h.path(tracefs.join("instances")).is_dir()
    }
}

impl TraceInstance {
    /// Unmount the tracefs innotune mounted, unless someone uses it now
    /// (another tool's instance: left mounted, a conflict).
    fn unmount_if_idle(&self, h: &Host) -> Outcome {
        let mnt = h.path(&self.tracefs);
        let others = h
            .list(self.tracefs.join("instances"))
            .map(|v| v.len())
            .unwrap_or(0);
        if others > 0 {
            return Outcome::Conflict {
                reason: format!(
                    "tracefs at {} now has {others} other instance(s): left mounted",
                    mnt.display()
                ),
            };
        }
        match umount(&mnt) {
            Ok(()) => Outcome::Removed,
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => Outcome::Conflict {
                reason: format!("tracefs at {} is in use: left mounted", mnt.display()),
            },
            Err(e) => Outcome::Failed {
                reason: format!("unmounting tracefs at {}: {e}", mnt.display()),
            },
        }
    }
}

/// Mount tracefs at `p` (the live host only).
fn mount_tracefs(p: &Path) -> Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let target = CString::new(p.as_os_str().as_bytes())?;
    let fs = CString::new("tracefs")?;
    // SAFETY: valid NUL-terminated strings; no data argument.
    let rc = unsafe {
        libc::mount(
            fs.as_ptr(),
            target.as_ptr(),
            fs.as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error())
            .with_context(|| format!("mounting tracefs on {}", p.display()));
    }
    Ok(())
}

fn umount(p: &Path) -> std::io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let target = CString::new(p.as_os_str().as_bytes())?;
    // SAFETY: a valid NUL-terminated path.
    if unsafe { libc::umount2(target.as_ptr(), 0) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[typetag::serde(name = "trace_instance")]
impl Change for TraceInstance {
    fn target(&self) -> String {
        self.dir().display().to_string()
    }
    fn describe(&self) -> String {
        format!(
            "create trace instance {} ({} events{})",
            self.dir().display(),
            self.events.len(),
            if self.mounted {
                ", tracefs mounted for it"
            } else {
                ""
            }
        )
    }
    fn capture(&mut self, host: &Host) -> Result<()> {
        self.root = host.root().to_path_buf();
        if let Some(ready) = TRACEFS_MOUNTS
            .iter()
            .find(|m| Self::tracefs_ready(host, Path::new(m)))
        {
            self.tracefs = PathBuf::from(ready);
        } else {
            self.tracefs = PathBuf::from(TRACEFS_MOUNTS[0]);
            if !host.is_live() || !host.path(&self.tracefs).is_dir() {
                bail!(
                    "no tracefs at {} and nowhere to mount it",
                    host.path(&self.tracefs).display()
                );
            }
            self.mounted = true;
        }
        if host.path(self.dir()).exists() {
            bail!("{} exists already", self.dir().display());
        }
        Ok(())
    }
    fn apply(&mut self, host: &Host) -> Result<()> {
        if self.mounted {
            mount_tracefs(&host.path(&self.tracefs))?;
        }
        let dir = self.dir();
        std::fs::create_dir(host.path(&dir))
            .with_context(|| format!("creating trace instance {}", dir.display()))?;
        if self.buffer_kb > 0 {
            write_attr(
                host,
                &dir.join("buffer_size_kb"),
                &self.buffer_kb.to_string(),
            )
            .with_context(|| format!("setting {}/buffer_size_kb", dir.display()))?;
        }
        if !self.trace_clock.is_empty() {
            write_attr(host, &dir.join("trace_clock"), &self.trace_clock)
                .with_context(|| format!("setting {}/trace_clock", dir.display()))?;
        }
        for e in &self.events {
            let ev = dir.join("events").join(e);
            if !self.filter.is_empty() {
                write_attr(host, &ev.join("filter"), &self.filter)
                    .with_context(|| format!("setting the filter of {e}"))?;
            }
            write_attr(host, &ev.join("enable"), "1")
                .with_context(|| format!("enabling {e} in {}", dir.display()))?;
        }
        Ok(())
    }
    fn is_applied(&self, host: &Host) -> Result<bool> {
        Ok(host.path(self.dir()).is_dir())
    }
    fn undo(&self, dry_run: bool) -> Undone {
        let h = Host::with_root(&self.root);
        let p = h.path(self.dir());
        // The journal says innotune mounted tracefs for this instance: it
        // is unmounted again even when the instance is already gone (a
        // run killed between removing it and unmounting).
        let mount_left = self.mounted && h.is_live() && Self::tracefs_ready(&h, &self.tracefs);
        if !p.exists() {
            return match (mount_left, dry_run) {
                (false, _) => Undone::outcome(Outcome::Gone),
                (true, true) => Undone::outcome(Outcome::WouldRestore),
                (true, false) => Undone::outcome(self.unmount_if_idle(&h)),
            };
        }
        if dry_run {
            return Undone::outcome(Outcome::WouldRestore);
        }
        request_release();
        // The reader closes within its poll interval; give it a moment.
        let deadline = Instant::now() + Duration::from_secs(3);
        let outcome = loop {
            match std::fs::remove_dir(&p) {
                Ok(()) => break Outcome::Removed,
                Err(_) if !p.exists() => break Outcome::Removed,
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) && Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => {
                    break Outcome::Failed {
                        reason: e.to_string(),
                    }
                }
            }
        };
        if outcome == Outcome::Removed && mount_left {
            return Undone::outcome(self.unmount_if_idle(&h));
        }
        Undone::outcome(outcome)
    }
    fn priority(&self) -> Priority {
        Priority::KERNEL_OBJECT
    }
    /// Only `instances/innotune-*` directly under a tracefs mount point.
    fn validate(&self) -> Result<(), String> {
        let refuse = |why: &str| Err(format!("{}: {why}", self.dir().display()));
        if !TRACEFS_MOUNTS.iter().any(|m| self.tracefs == Path::new(m)) {
            return refuse("not under a tracefs mount point");
        }
        let plain = !self.name.contains('/') && self.name != "." && self.name != "..";
        if !plain || !self.name.starts_with(PREFIX) || self.name.len() == PREFIX.len() {
            return refuse("not a trace instance innotune creates (innotune-*)");
        }
        super::check_root(&self.root)?;
        super::inside_root(&self.root, &self.dir())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_in_a_fixture_tracefs_is_created_configured_and_removed() {
        let t = tempfile::tempdir().unwrap();
        let h = Host::with_root(t.path());
        let ev = "sys/kernel/tracing/instances";
        std::fs::create_dir_all(t.path().join(ev)).unwrap();
        let mut c = TraceInstance::new(&["block/block_rq_issue"], "dev == 7340032", 0);
        c.capture(&h).unwrap();
        assert!(!c.mounted, "tracefs is there: nothing to mount");
        // A fixture tracefs does not populate the instance, so enabling an
        // event fails after the directory was made: undo still removes it.
        assert!(c.apply(&h).is_err());
        let dir = h.path(c.dir());
        assert!(dir.is_dir() && c.is_applied(&h).unwrap());
        assert!(c.validate().is_ok());
        assert_eq!(c.undo(true).outcome, Outcome::WouldRestore);
        assert!(dir.is_dir());
        assert_eq!(c.undo(false).outcome, Outcome::Removed);
        assert!(!dir.exists());
        assert_eq!(c.undo(false).outcome, Outcome::Gone);
        let mut again = TraceInstance::new(&[], "", 0);
        std::fs::create_dir(h.path(again.dir())).unwrap();
        assert!(
            again.capture(&h).is_err(),
            "an existing instance is not ours"
        );
        reset_release();
    }

    #[test]
    fn only_innotune_instances_validate() {
        let mut c = TraceInstance::new(&[], "", 0);
        assert!(c.validate().is_ok());
        for bad in ["perf", "innotune-", "../../x", "innotune-1/../../y"] {
            c.name = bad.into();
            assert!(c.validate().is_err(), "{bad}");
        }
        c.name = "innotune-9".into();
        c.tracefs = PathBuf::from("/etc");
        assert!(c.validate().is_err());
    }
}
