//! Which sandbox directory, manifest and server are innotune's, proven
//! before anything in DIR is written, started or signalled.
//!
//! innotune runs as root, and a sandbox's server (also root's) opens
//! DIR/my.cnf, DIR/error.log, DIR/data and DIR/tmp by name. Whoever could
//! plant a name there (`error.log -> /etc/shadow`, `data -> /root`) or a
//! manifest (`innotune-sandbox.json` naming another server's pid and
//! socket) would have root write, or stop, what they chose. So, as bench's
//! manifest (src/bench/manifest.rs), and stricter where the server opens
//! names that do not exist yet:
//!
//! - DIR must be owned by the running user and writable by nobody else
//!   (no group or other write bit, sticky or not: in a sticky directory
//!   others may still add a name such as `error.log` before the server
//!   creates it), and its parent must not be writable by others without
//!   the sticky bit (else DIR itself could be swapped).
//! - The manifest is opened through DIR's descriptor without following a
//!   symlink (`O_NOFOLLOW`, `O_NONBLOCK`), and must be a regular file with
//!   one link, owned by the running user and writable by nobody else. It
//!   records DIR's device and inode: a manifest copied or linked into
//!   another directory is not trusted there.
//! - Every name the server opens in DIR is looked at without following a
//!   link: `my.cnf`, `error.log`, `mysqld.pid` regular files with one link,
//!   `data` and `tmp` directories writable by nobody else, `mysql.sock` a
//!   socket, each owned by the running user. innotune writes `my.cnf` and
//!   the manifest as new exclusive temporary files renamed over the name
//!   (a planted name is replaced, never followed).
//! - A server is innotune's only when its pid, start time, executable and
//!   command line are those recorded in the manifest when innotune started
//!   it, and its command line names DIR/my.cnf ([`ServerIdentity`]). It is
//!   stopped with signals through a pidfd opened before that check, never
//!   with SHUTDOWN over a socket the manifest merely names.

use super::{State, MARKER};
use crate::host::Host;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// A manifest larger than this is not innotune's.
const MAX_MANIFEST_BYTES: u64 = 1 << 20;

/// The names in DIR the server or innotune open, and what each must be.
const ENTRIES: [(&str, FileType); 7] = [
    ("my.cnf", FileType::RegularFile),
    ("error.log", FileType::RegularFile),
    ("mysqld.pid", FileType::RegularFile),
    ("mysql.sock.lock", FileType::RegularFile),
    ("data", FileType::Directory),
    ("tmp", FileType::Directory),
    ("mysql.sock", FileType::Socket),
];

fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

fn io(e: rustix::io::Errno) -> std::io::Error {
    std::io::Error::from(e)
}

/// Device and inode of a directory innotune created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileId {
    pub dev: u64,
    pub ino: u64,
}

/// Why `st` is not the running user's alone (`what` names it).
fn not_ours(what: &str, st: &Stat) -> Option<String> {
    if st.st_uid != euid() {
        return Some(format!(
            "{what} is owned by uid {}, not by the user running innotune (uid {})",
            st.st_uid,
            euid()
        ));
    }
    if st.st_mode & 0o022 != 0 {
        return Some(format!(
            "{what} is writable by other users (mode {:04o})",
            st.st_mode & 0o7777
        ));
    }
    None
}

/// A sandbox directory, held open: every lookup goes through this
/// descriptor, so a renamed path component cannot redirect it.
#[derive(Debug)]
pub struct SandboxDir {
    pub path: PathBuf,
    fd: OwnedFd,
    stat: Stat,
}

impl SandboxDir {
    /// Open `dir` and check it is the running user's alone; `Err(why)`.
    pub fn open(dir: &Path) -> Result<SandboxDir, String> {
        let fd = rustix::fs::open(
            dir,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| format!("cannot open it: {}", io(e)))?;
        let stat = rustix::fs::fstat(&fd).map_err(|e| io(e).to_string())?;
        if let Some(why) = not_ours("it", &stat) {
            return Err(why);
        }
        if let Some(parent) = dir.parent() {
            if let Ok(m) = std::fs::metadata(parent) {
                use std::os::unix::fs::MetadataExt;
                if m.mode() & 0o002 != 0 && m.mode() & 0o1000 == 0 {
                    return Err(format!(
                        "its parent {} is writable by every user and has no sticky bit, so anyone could replace it",
                        parent.display()
                    ));
                }
            }
        }
        Ok(SandboxDir {
            path: dir.to_path_buf(),
            fd,
            stat,
        })
    }

    pub fn id(&self) -> FileId {
        FileId {
            dev: self.stat.st_dev,
            ino: self.stat.st_ino,
        }
    }

    /// Is the directory empty?
    pub fn is_empty(&self) -> std::io::Result<bool> {
        Ok(std::fs::read_dir(&self.path)?.next().is_none())
    }

    fn lstat(&self, name: &str) -> Result<Option<Stat>, String> {
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(st)),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(format!("{name}: {}", io(e))),
        }
    }

    /// The manifest, if there is one and it is trusted; `Err(why)` when
    /// there is one that is not.
    pub fn load(&self) -> Result<Option<State>, String> {
        let fd = match rustix::fs::openat(
            &self.fd,
            MARKER,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) => return Ok(None),
            Err(rustix::io::Errno::LOOP) => return Err(format!("{MARKER} is a symbolic link")),
            Err(e) => return Err(format!("{MARKER}: {}", io(e))),
        };
        let st = rustix::fs::fstat(&fd).map_err(|e| io(e).to_string())?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(format!("{MARKER} is not a regular file"));
        }
        if let Some(why) = not_ours(MARKER, &st) {
            return Err(why);
        }
        if st.st_nlink != 1 {
            return Err(format!("{MARKER} has {} hard links", st.st_nlink));
        }
        let mut text = String::new();
        std::fs::File::from(fd)
            .take(MAX_MANIFEST_BYTES)
            .read_to_string(&mut text)
            .map_err(|e| format!("{MARKER}: {e}"))?;
        let state: State = serde_json::from_str(&text)
            .map_err(|e| format!("{MARKER} is not an innotune sandbox manifest ({e})"))?;
        if let Some(id) = state.dir_id {
            if id != self.id() {
                return Err(format!(
                    "{MARKER} was written for another directory (inode {}, this one is {})",
                    id.ino, self.stat.st_ino
                ));
            }
        }
        Ok(Some(state))
    }

    /// Every name the server opens in DIR is what innotune (or the server
    /// it started) made there; `Err(why)` for the first that is not.
    pub fn check_entries(&self) -> Result<(), String> {
        for (name, kind) in ENTRIES {
            let Some(st) = self.lstat(name)? else {
                continue;
            };
            let found = FileType::from_raw_mode(st.st_mode);
            if found == FileType::Symlink {
                return Err(format!("{name} is a symbolic link"));
            }
            if found != kind {
                return Err(format!("{name} is a {found:?}, not a {kind:?}"));
            }
            if st.st_uid != euid() {
                return Err(format!(
                    "{name} is owned by uid {}, not by the user running innotune (uid {})",
                    st.st_uid,
                    euid()
                ));
            }
            if kind == FileType::RegularFile && st.st_nlink != 1 {
                return Err(format!("{name} has {} hard links", st.st_nlink));
            }
            if kind == FileType::Directory {
                if let Some(why) = not_ours(name, &st) {
                    return Err(why);
                }
            }
        }
        Ok(())
    }

    /// Create directory `name` unless it is there (checked by
    /// [`SandboxDir::check_entries`] then).
    pub fn mkdir(&self, name: &str) -> std::io::Result<()> {
        match rustix::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(0o755)) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => Ok(()),
            Err(e) => Err(io(e)),
        }
    }

    /// Replace `name` with `bytes` (mode 0644): a new temporary file
    /// created exclusively, never through a symlink, fsynced, renamed over
    /// whatever is at `name`.
    pub fn write(&self, name: &str, bytes: &[u8]) -> std::io::Result<()> {
        let tmp = format!(".{name}.tmp.{}", std::process::id());
        let create = || {
            rustix::fs::openat(
                &self.fd,
                tmp.as_str(),
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o644),
            )
        };
        let fd = match create() {
            Err(rustix::io::Errno::EXIST) => {
                let _ = rustix::fs::unlinkat(&self.fd, tmp.as_str(), AtFlags::empty());
                create()
            }
            r => r,
        }
        .map_err(io)?;
        let mut f = std::fs::File::from(fd);
        let written = f
            .write_all(bytes)
            .and_then(|_| f.sync_all())
            .and_then(|_| rustix::fs::renameat(&self.fd, tmp.as_str(), &self.fd, name).map_err(io));
        if written.is_err() {
            let _ = rustix::fs::unlinkat(&self.fd, tmp.as_str(), AtFlags::empty());
        }
        written
    }
}

/// A server process as innotune started it: what `stop` compares before
/// it signals anything.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerIdentity {
    /// Start time in clock ticks since boot (/proc/PID/stat field 22).
    pub start_ticks: u64,
    /// /proc/PID/exe (a binary replaced by an upgrade still compares equal).
    pub exe: PathBuf,
    /// /proc/PID/cmdline, one string per argument.
    pub cmdline: Vec<String>,
}

impl ServerIdentity {
    /// The identity of `pid` now, if it runs and this user may read it.
    pub fn of(pid: u32) -> Option<ServerIdentity> {
        let h = Host::live();
        let start_ticks = crate::journal::process_start_ticks(pid)?;
        let exe = h.resolve(format!("/proc/{pid}/exe")).ok()?;
        let exe = match exe.to_str().and_then(|s| s.strip_suffix(" (deleted)")) {
            Some(s) => PathBuf::from(s),
            None => exe,
        };
        let raw = h.read(format!("/proc/{pid}/cmdline")).ok()?;
        let cmdline = raw
            .strip_suffix('\0')
            .unwrap_or(&raw)
            .split('\0')
            .map(str::to_string)
            .collect();
        Some(ServerIdentity {
            start_ticks,
            exe,
            cmdline,
        })
    }

    /// The identity `cmd`, just spawned as `pid`, will show: its start
    /// time, its program resolved, its arguments.
    /// `argv` is the spawned command's program and arguments, taken
    /// before the `Command` was handed to the spawner.
    pub fn spawned(pid: u32, argv: &[std::ffi::OsString]) -> Option<ServerIdentity> {
        Some(ServerIdentity {
            start_ticks: crate::journal::process_start_ticks(pid)?,
            exe: std::fs::canonicalize(argv.first()?).ok()?,
            cmdline: argv
                .iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect(),
        })
    }

    /// Is `pid` now the process recorded as `self`, running from `dir`?
    pub fn is(&self, pid: u32, dir: &Path) -> bool {
        pid != 0 && Self::of(pid).as_ref() == Some(self) && super::runs_from(pid, dir)
    }
}

/// Send `sig` to `pid` if it is still the server recorded as `id` in
/// `dir`: a pidfd opened first, the identity checked, the signal sent
/// through the pidfd (so a pid reused in between is never signalled).
/// False if it is not (or no longer) that server.
pub fn signal(pid: u32, id: &ServerIdentity, dir: &Path, sig: rustix::process::Signal) -> bool {
    let Some(fd) = rustix::process::Pid::from_raw(pid as i32)
        .and_then(|p| rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()).ok())
    else {
        return false;
    };
    id.is(pid, dir) && rustix::process::pidfd_send_signal(&fd, sig).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn names_planted_in_dir_are_refused_and_writes_replace_links() {
        let t = tempfile::tempdir().unwrap();
        let d = SandboxDir::open(t.path()).unwrap();
        assert!(d.load().unwrap().is_none());
        d.check_entries().unwrap();
        let victim = t.path().join("victim");
        std::fs::write(&victim, "root's\n").unwrap();
        std::os::unix::fs::symlink(&victim, t.path().join("error.log")).unwrap();
        assert!(d
            .check_entries()
            .unwrap_err()
            .contains("error.log is a symbolic link"));
        std::fs::remove_file(t.path().join("error.log")).unwrap();
        std::fs::hard_link(&victim, t.path().join("error.log")).unwrap();
        assert!(d.check_entries().unwrap_err().contains("hard links"));
        std::fs::remove_file(t.path().join("error.log")).unwrap();
        std::fs::write(t.path().join("data"), "").unwrap();
        assert!(d
            .check_entries()
            .unwrap_err()
            .contains("data is a RegularFile"));
        std::fs::remove_file(t.path().join("data")).unwrap();
        d.mkdir("data").unwrap();
        std::fs::set_permissions(
            t.path().join("data"),
            std::fs::Permissions::from_mode(0o777),
        )
        .unwrap();
        assert!(d
            .check_entries()
            .unwrap_err()
            .contains("writable by other users"));
        // Writing my.cnf replaces a planted link, never follows it.
        std::os::unix::fs::symlink(&victim, t.path().join("my.cnf")).unwrap();
        d.write("my.cnf", b"[mysqld]\n").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "root's\n");
        assert!(!t
            .path()
            .join("my.cnf")
            .symlink_metadata()
            .unwrap()
            .is_symlink());
        // A manifest that is a link is not read.
        std::os::unix::fs::symlink(&victim, t.path().join(MARKER)).unwrap();
        assert!(d.load().unwrap_err().contains("symbolic link"));
    }

    #[test]
    fn shared_directories_are_not_sandboxes() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("sb");
        std::fs::create_dir(&d).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o1777)).unwrap();
        assert!(SandboxDir::open(&d)
            .unwrap_err()
            .contains("writable by other users"));
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(SandboxDir::open(&d).unwrap_err().contains("no sticky bit"));
        std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
        assert!(SandboxDir::open(&d).is_ok());
    }

    #[test]
    fn a_process_is_the_server_only_with_its_recorded_identity() {
        let me = std::process::id();
        let id = ServerIdentity::of(me).unwrap();
        assert_eq!(id.exe, std::env::current_exe().unwrap());
        // This process does not run from a sandbox directory.
        assert!(!id.is(me, Path::new("/nonexistent/sb")));
        let mut other = id.clone();
        other.start_ticks += 1;
        assert_ne!(ServerIdentity::of(me).as_ref(), Some(&other));
    }
}
