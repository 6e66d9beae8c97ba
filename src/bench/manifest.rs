//! Which files in a bench directory are innotune's, proven before any of
//! them is opened for writing or removed.
//!
//! innotune runs as root, and a bench directory may be shared (mode 0777, a
//! group-writable one, /tmp). Whoever else can write there could forge the
//! manifest or plant `innotune-read.0 -> /etc/shadow`; a root run that
//! trusted either would overwrite or delete a file it never created. So:
//!
//! - The manifest `DIR/.innotune-bench` records, for every file innotune
//!   created, its size, device, inode and owner. It is trusted only if it is
//!   a regular file (never followed as a symlink) owned by the running user,
//!   in a directory that others cannot write to, or that has the sticky bit
//!   (then nobody else can replace it). Otherwise it is ignored with a warning:
//!   nothing it lists is reused or removed.
//! - A listed file counts as innotune's only if its name is
//!   `innotune-<job>.<n>`, and, opened without following symlinks
//!   (`O_PATH|O_NOFOLLOW`, which opens nothing behind it, not even a FIFO or
//!   a device), it is a regular file with one link, on the directory's
//!   filesystem, owned by the running user, with the inode and owner the
//!   manifest recorded when innotune created it.
//! - Every later open (the job threads') is `O_NOFOLLOW` and compared with
//!   that identity ([`Identity`]); new files are created `O_EXCL|O_NOFOLLOW`.
//!   All lookups go through one directory descriptor, so a renamed path
//!   component cannot redirect them.
//!
//! (An xattr would not survive `cp`/`rsync` of the directory and is not
//! supported on every filesystem; a manifest is visible with `cat`.)

use crate::error::Fix;
use anyhow::Result;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

pub const MANIFEST: &str = ".innotune-bench";

/// A manifest larger than this is not innotune's (it holds at most a few
/// hundred short lines per job).
const MAX_MANIFEST_BYTES: u64 = 16 << 20;

/// What innotune recorded about a file when it created it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Entry {
    Recorded {
        size: u64,
        dev: u64,
        ino: u64,
        uid: u32,
    },
    /// innotune 0.2 manifests: only the size. Such a file is still checked
    /// for name, type, filesystem, owner and link count, then re-recorded.
    Legacy(u64),
}

impl Entry {
    pub fn size(&self) -> u64 {
        match *self {
            Entry::Recorded { size, .. } | Entry::Legacy(size) => size,
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Manifest {
    /// Always "innotune bench": what wrote this file.
    pub tool: String,
    #[serde(default)]
    pub version: u32,
    /// File name (inside the directory) → what was recorded at creation.
    pub files: BTreeMap<String, Entry>,
}

impl Manifest {
    pub fn new() -> Manifest {
        Manifest {
            tool: "innotune bench".into(),
            version: 2,
            files: BTreeMap::new(),
        }
    }
}

impl Default for Manifest {
    fn default() -> Self {
        Manifest::new()
    }
}

/// Device and inode of a verified file: later opens must find the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    pub dev: u64,
    pub ino: u64,
}

impl Identity {
    pub fn of(st: &Stat) -> Identity {
        Identity {
            dev: st.st_dev,
            ino: st.st_ino,
        }
    }
}

/// A bench directory, held open: every lookup is relative to this
/// descriptor.
pub struct Dir {
    pub path: PathBuf,
    pub fd: OwnedFd,
    pub stat: Stat,
}

/// What was found at `DIR/.innotune-bench`.
pub enum Loaded {
    Absent,
    Trusted(Manifest),
    /// Present but not provably written by this user here: the reason.
    Untrusted(String),
}

/// Turn an OS error on `path` into one line naming the fix.
pub fn io_fix(e: std::io::Error, path: &Path, doing: &str) -> anyhow::Error {
    let p = path.display();
    match e.raw_os_error() {
        Some(libc::ENOSPC) | Some(libc::EDQUOT) => Fix::new(
            format!("no space left to {doing} {p}"),
            "free space, lower --size, or choose another --directory",
        )
        .into(),
        Some(libc::EACCES) | Some(libc::EPERM) => Fix::new(
            format!("permission denied to {doing} {p}"),
            "run as a user who may write there, or choose another --directory",
        )
        .into(),
        Some(libc::EROFS) => Fix::new(
            format!("{p} is on a read-only filesystem"),
            "choose a --directory on a writable filesystem",
        )
        .into(),
        Some(libc::EINVAL) if doing.contains("O_DIRECT") => Fix::new(
            format!("the filesystem of {p} does not support O_DIRECT (e.g. ramfs, some FUSE)"),
            "use --direct=0, or a --directory on a disk filesystem (ext4, xfs)",
        )
        .into(),
        _ => anyhow::Error::new(e).context(format!("cannot {doing} {p}")),
    }
}

fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

fn io(e: rustix::io::Errno) -> std::io::Error {
    std::io::Error::from(e)
}

/// `innotune-<job>.<n>`: the only names innotune creates or removes.
pub fn is_bench_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("innotune-") else {
        return false;
    };
    let Some((job, n)) = rest.rsplit_once('.') else {
        return false;
    };
    !job.is_empty()
        && !job.starts_with('.')
        && !job.contains('/')
        && !n.is_empty()
        && n.bytes().all(|b| b.is_ascii_digit())
}

impl Dir {
    pub fn open(path: &Path) -> Result<Dir> {
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| io_fix(io(e), path, "open"))?;
        let stat = rustix::fs::fstat(&fd).map_err(|e| io_fix(io(e), path, "inspect"))?;
        Ok(Dir {
            path: path.to_path_buf(),
            fd,
            stat,
        })
    }

    pub fn join(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// Others may write here and nothing stops them replacing our files.
    pub fn open_to_others(&self) -> bool {
        let m = self.stat.st_mode;
        m & 0o002 != 0 && m & 0o1000 == 0
    }

    /// Why this directory's manifest cannot be trusted, if it cannot.
    fn distrust(&self, st: &Stat) -> Option<String> {
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Some("it is not a regular file".into());
        }
        if st.st_uid != euid() {
            return Some(format!(
                "it is owned by uid {}, not by the user running innotune (uid {})",
                st.st_uid,
                euid()
            ));
        }
        if self.open_to_others() {
            return Some(format!(
                "{} is writable by every user and has no sticky bit, so anyone could have replaced it",
                self.path.display()
            ));
        }
        None
    }

    /// Read the manifest, never following a symlink at its name.
    pub fn load(&self) -> Result<Loaded> {
        let p = self.join(MANIFEST);
        let fd = match rustix::fs::openat(
            &self.fd,
            MANIFEST,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) => return Ok(Loaded::Absent),
            Err(rustix::io::Errno::LOOP) => {
                return Ok(Loaded::Untrusted("it is a symbolic link".into()))
            }
            Err(e) => return Err(io_fix(io(e), &p, "read")),
        };
        let st = rustix::fs::fstat(&fd).map_err(|e| io_fix(io(e), &p, "read"))?;
        if let Some(why) = self.distrust(&st) {
            return Ok(Loaded::Untrusted(why));
        }
        let mut text = String::new();
        std::fs::File::from(fd)
            .take(MAX_MANIFEST_BYTES)
            .read_to_string(&mut text)
            .map_err(|e| io_fix(e, &p, "read"))?;
        let m: Manifest = serde_json::from_str(&text).map_err(|e| {
            Fix::new(
                format!("{} is not an innotune manifest ({e})", p.display()),
                "remove it if innotune did not write it, or choose another --directory",
            )
        })?;
        Ok(Loaded::Trusted(m))
    }

    /// Replace the manifest durably ([`crate::durable`]), in the directory
    /// this `Dir` opened: the path goes through `/proc/self/fd/N`, so a
    /// directory renamed or swapped since cannot redirect the write. A
    /// symbolic link planted at the manifest's name is replaced (the link,
    /// never its target), as an untrusted manifest is; a device or a FIFO
    /// there is refused.
    pub fn save(&self, m: &Manifest) -> Result<()> {
        use std::os::fd::AsRawFd;
        let body = serde_json::to_string_pretty(m)? + "\n";
        let at = PathBuf::from(format!("/proc/self/fd/{}", self.fd.as_raw_fd())).join(MANIFEST);
        let opts = crate::durable::Options {
            replace_symlink: true,
            ..crate::durable::Options::SHARED
        };
        crate::durable::write(&at, body.as_bytes(), &opts).map_err(|e| match e {
            crate::durable::Error::NotRegular { what, .. } => Fix::new(
                format!(
                    "{} is {what}, not a manifest innotune wrote",
                    self.join(MANIFEST).display()
                ),
                "remove it, or choose another --directory",
            )
            .into(),
            crate::durable::Error::Io(e) => io_fix(e, &self.join(MANIFEST), "write"),
        })
    }

    /// Save `m`, or remove the manifest when it lists nothing.
    pub fn save_or_remove(&self, m: &Manifest) -> Result<()> {
        if m.files.is_empty() {
            match rustix::fs::unlinkat(&self.fd, MANIFEST, AtFlags::empty()) {
                Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(()),
                Err(e) => Err(io_fix(io(e), &self.join(MANIFEST), "remove")),
            }
        } else {
            self.save(m)
        }
    }

    /// Stat `name` without following a symlink; `None` if it does not exist.
    pub fn lstat(&self, name: &str) -> Result<Option<Stat>> {
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(st)),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(io_fix(io(e), &self.join(name), "inspect")),
        }
    }

    /// Is `name` the file innotune created and recorded as `entry`? The
    /// file's stat if so, else why not. Opens nothing behind the name
    /// (`O_PATH`): no symlink followed, no FIFO or device opened.
    pub fn verify(&self, name: &str, entry: &Entry) -> std::result::Result<Stat, String> {
        if !is_bench_name(name) {
            return Err("its name is not innotune-<job>.<n>".into());
        }
        let fd = rustix::fs::openat(
            &self.fd,
            name,
            OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| io(e).to_string())?;
        let st = rustix::fs::fstat(&fd).map_err(|e| io(e).to_string())?;
        match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => {}
            FileType::Symlink => return Err("it is a symbolic link".into()),
            other => return Err(format!("it is not a regular file ({other:?})")),
        }
        if st.st_dev != self.stat.st_dev {
            return Err("it is on another filesystem than the directory".into());
        }
        if st.st_uid != euid() {
            return Err(format!(
                "it is owned by uid {}, not by the user running innotune (uid {})",
                st.st_uid,
                euid()
            ));
        }
        if st.st_nlink != 1 {
            return Err(format!("it has {} hard links", st.st_nlink));
        }
        if let Entry::Recorded { dev, ino, uid, .. } = *entry {
            if (dev, ino, uid) != (st.st_dev, st.st_ino, st.st_uid) {
                return Err(format!(
                    "it is not the file innotune created there (inode {}, recorded {ino})",
                    st.st_ino
                ));
            }
        }
        Ok(st)
    }

    /// Create `name` exclusively, never through a symlink, mode 0600.
    pub fn create(&self, name: &str) -> Result<(std::fs::File, Stat)> {
        let p = self.join(name);
        let fd = rustix::fs::openat(
            &self.fd,
            name,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )
        .map_err(|e| io_fix(io(e), &p, "create"))?;
        let st = rustix::fs::fstat(&fd).map_err(|e| io_fix(io(e), &p, "create"))?;
        Ok((std::fs::File::from(fd), st))
    }

    /// Remove `name` (the name only: a symlink is never followed).
    pub fn unlink(&self, name: &str) -> std::io::Result<()> {
        rustix::fs::unlinkat(&self.fd, name, AtFlags::empty()).map_err(io)
    }
}

/// The record for a file innotune just created.
pub fn entry_for(size: u64, st: &Stat) -> Entry {
    Entry::Recorded {
        size,
        dev: st.st_dev,
        ino: st.st_ino,
        uid: st.st_uid,
    }
}

/// Remove every file the manifest in `dir` lists that passes
/// [`Dir::verify`], then the manifest. Returns the removed paths; anything
/// else is left alone with a warning.
pub fn cleanup(dir: &Path) -> Result<Vec<PathBuf>> {
    let d = Dir::open(dir)?;
    let man = match d.load()? {
        Loaded::Absent => return Ok(Vec::new()),
        Loaded::Untrusted(why) => {
            crate::output::warn(format!(
                "ignoring {}: {why}; nothing it lists was removed",
                d.join(MANIFEST).display()
            ));
            return Ok(Vec::new());
        }
        Loaded::Trusted(m) => m,
    };
    let mut removed = Vec::new();
    for (name, entry) in &man.files {
        let p = d.join(name);
        match d.verify(name, entry) {
            Ok(_) => match d.unlink(name) {
                Ok(()) => removed.push(p),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_fix(e, &p, "remove")),
            },
            Err(_) if d.lstat(name).ok().flatten().is_none() && is_bench_name(name) => {}
            Err(why) => crate::output::warn(format!(
                "left {} alone: the manifest lists it, but {why}",
                p.display()
            )),
        }
    }
    d.save_or_remove(&Manifest::new())?;
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_names() {
        for n in ["innotune-read.0", "innotune-page-read.12", "innotune-a.b.3"] {
            assert!(is_bench_name(n), "{n}");
        }
        for n in [
            "notes.txt",
            "innotune-.0",
            "innotune-x.",
            "innotune-x.1a",
            "innotune-.hidden.0",
            ".innotune-bench",
            "innotune-x",
        ] {
            assert!(!is_bench_name(n), "{n}");
        }
    }

    #[test]
    fn legacy_manifest_entries_parse() {
        let m: Manifest =
            serde_json::from_str(r#"{"tool":"innotune bench","files":{"innotune-a.0":1048576}}"#)
                .unwrap();
        assert_eq!(m.files["innotune-a.0"], Entry::Legacy(1 << 20));
        let m: Manifest = serde_json::from_str(
            r#"{"tool":"innotune bench","version":2,"files":{"innotune-a.0":{"size":4096,"dev":1,"ino":2,"uid":0}}}"#,
        )
        .unwrap();
        assert_eq!(m.files["innotune-a.0"].size(), 4096);
    }

    #[test]
    fn symlinked_or_replaced_files_are_not_ours() {
        let t = tempfile::tempdir().unwrap();
        let d = Dir::open(t.path()).unwrap();
        let (_, st) = d.create("innotune-x.0").unwrap();
        let e = entry_for(0, &st);
        assert!(d.verify("innotune-x.0", &e).is_ok());
        // Same name, another inode (made first, so the old one is not reused).
        std::fs::write(t.path().join("other"), "").unwrap();
        d.unlink("innotune-x.0").unwrap();
        std::fs::rename(t.path().join("other"), t.path().join("innotune-x.0")).unwrap();
        let why = d.verify("innotune-x.0", &e).unwrap_err();
        assert!(why.contains("not the file innotune created"), "{why}");
        // A symlink is never followed.
        d.unlink("innotune-x.0").unwrap();
        std::os::unix::fs::symlink("/etc/hostname", t.path().join("innotune-x.0")).unwrap();
        let why = d.verify("innotune-x.0", &Entry::Legacy(0)).unwrap_err();
        assert!(why.contains("symbolic link"), "{why}");
        // A planted symlink at the manifest's name is not read.
        std::os::unix::fs::symlink("/etc/hostname", t.path().join(MANIFEST)).unwrap();
        assert!(matches!(d.load().unwrap(), Loaded::Untrusted(_)));
        // And saving replaces the link, not its target.
        let before = std::fs::read("/etc/hostname").unwrap();
        d.save(&Manifest::new()).unwrap();
        assert_eq!(std::fs::read("/etc/hostname").unwrap(), before);
        assert!(matches!(d.load().unwrap(), Loaded::Trusted(_)));
    }
}
