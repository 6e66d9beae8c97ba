//! One durable write: every file innotune writes whole (the journal, the
//! applied journal, checksum records, bench manifests, reports and
//! `--output`, emitted files, files a [`crate::change::Change`] installs on
//! the host) goes through [`write`] or [`symlink`].
//!
//! A reader sees the old content or the new, never half, and the new is on
//! disk when the call returns: a temporary file created exclusively in the
//! target's directory (`tempfile`: `O_CREAT|O_EXCL` under a random name,
//! so nothing planted at a guessable name is followed or overwritten),
//! written and fsynced, renamed over the target
//! (`NamedTempFile::persist`), then the directory fsynced so the rename
//! survives a crash. The temporary file is removed on every error.
//!
//! Only a regular file is ever replaced ([`Error::NotRegular`]): renaming
//! over `/dev/null`, a FIFO or a link to `/proc/self/fd/1` would replace the
//! device or link itself with a file (`--output /dev/null` once did). A
//! symbolic link is replaced only where the caller says links are
//! expected there ([`Options::replace_symlink`]: host files innotune edits),
//! and then the link itself, never what it points to.

use std::fmt;
use std::fs::{File, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// How a file is written.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Permission bits of the new file.
    pub mode: u32,
    /// Exactly `mode`, whatever the umask (a file installed on the host);
    /// otherwise the umask narrows it, as for any file a program creates.
    pub exact_mode: bool,
    /// A symbolic link at the path may be replaced (the link, not its
    /// target).
    pub replace_symlink: bool,
}

impl Options {
    /// 0600 narrowed by the umask: innotune's own state (journals,
    /// checksum records), which may hold backups of configuration files.
    pub const PRIVATE: Options = Options {
        mode: 0o600,
        exact_mode: false,
        replace_symlink: false,
    };
    /// 0644 narrowed by the umask: reports, `--output`, emitted files,
    /// bench manifests.
    pub const SHARED: Options = Options {
        mode: 0o644,
        exact_mode: false,
        replace_symlink: false,
    };
    /// Exactly `mode`, replacing a file or a symbolic link: a host file a
    /// change installs or puts back.
    pub const fn host_file(mode: u32) -> Options {
        Options {
            mode,
            exact_mode: true,
            replace_symlink: true,
        }
    }
}

/// Why a durable write did not happen.
#[derive(Debug)]
pub enum Error {
    /// Something other than a regular file is at `path` (`what`: "a
    /// character device", "a FIFO", …): it was left as it is.
    NotRegular {
        path: PathBuf,
        what: &'static str,
    },
    Io(io::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NotRegular { path, what } => {
                write!(f, "{} is {what}, not a regular file", path.display())
            }
            Error::Io(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Error {
        Error::Io(e)
    }
}

impl From<Error> for io::Error {
    fn from(e: Error) -> io::Error {
        match e {
            Error::Io(e) => e,
            e @ Error::NotRegular { .. } => io::Error::new(io::ErrorKind::InvalidInput, e),
        }
    }
}

/// What a file type is, as a refusal names it (the output rule here and
/// the input opener, `crate::input`).
pub fn describe(t: std::fs::FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// `Ok` when nothing is at `path` or a file `opts` may replace (never
/// following a symbolic link at `path`).
pub fn check_target(path: &Path, opts: &Options) -> Result<(), Error> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e.into()),
        Ok(m) if m.is_file() => Ok(()),
        Ok(m) if m.file_type().is_symlink() && opts.replace_symlink => Ok(()),
        Ok(m) => Err(Error::NotRegular {
            path: path.to_path_buf(),
            what: describe(m.file_type()),
        }),
    }
}

/// The directory a new file for `path` is made in, and `path`'s name.
fn split(path: &Path) -> Result<(PathBuf, String), Error> {
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} names no file", path.display()),
        )
    })?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((dir, format!(".{}.", name.to_string_lossy())))
}

/// Replace (or create) the file at `path` with `bytes`, durably; see the
/// module documentation.
pub fn write(path: &Path, bytes: &[u8], opts: &Options) -> Result<(), Error> {
    check_target(path, opts)?;
    let (dir, prefix) = split(path)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".innotune-tmp")
        .permissions(Permissions::from_mode(opts.mode))
        .tempfile_in(&dir)?;
    if opts.exact_mode {
        tmp.as_file()
            .set_permissions(Permissions::from_mode(opts.mode))?;
    }
    // Through the File itself: its errors keep their errno (a full
    // filesystem is told apart, [`no_space`]) and name no temporary path.
    tmp.as_file_mut().write_all(bytes)?;
    tmp.as_file().sync_all()?;
    persist(tmp, path, &dir, opts)
}

/// Replace (or create) `path` with a symbolic link to `target`, durably.
pub fn symlink(path: &Path, target: &Path, opts: &Options) -> Result<(), Error> {
    check_target(path, opts)?;
    let (dir, prefix) = split(path)?;
    let tmp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".innotune-tmp")
        .make_in(&dir, |p| std::os::unix::fs::symlink(target, p))?;
    persist(tmp, path, &dir, opts)
}

fn persist<F>(
    tmp: tempfile::NamedTempFile<F>,
    path: &Path,
    dir: &Path,
    opts: &Options,
) -> Result<(), Error> {
    // Checked again right before the rename: what was absent may have
    // been created meanwhile.
    check_target(path, opts)?;
    tmp.persist(path).map_err(|e| Error::Io(e.error))?;
    sync_dir(dir)
}

/// fsync a directory, so a rename or unlink in it survives a crash.
fn sync_dir(dir: &Path) -> Result<(), Error> {
    File::open(dir)?.sync_all()?;
    Ok(())
}

/// Read back a state file innotune wrote (a kept record): only a regular
/// file owned by the running user, opened without following a link and
/// without blocking on a FIFO put in its place, checked on the open
/// descriptor, at most `max` bytes. Anything else is `None`: an exporter
/// skips what it cannot trust rather than failing.
pub fn read_own(path: &Path, max: u64) -> Option<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .ok()?;
    let md = f.metadata().ok()?;
    if !md.file_type().is_file()
        || md.uid() != rustix::process::geteuid().as_raw()
        || md.len() > max
    {
        return None;
    }
    let mut bytes = Vec::new();
    f.take(max).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// Did `e` (or an error it wraps: a temporary file's path error) fail
/// for want of space (ENOSPC, or a quota: EDQUOT)? What was there is
/// then untouched: the write never got to its rename.
pub fn no_space(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<io::Error>() {
            if matches!(io.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT)) {
                return true;
            }
            if let Some(inner) = io.get_ref() {
                if no_space(inner) {
                    return true;
                }
            }
        }
        if let Some(Error::Io(io)) = err.downcast_ref::<Error>() {
            if no_space(io) {
                return true;
            }
        }
        cur = err.source();
    }
    false
}

/// Remove the file at `path` (nothing there is fine) and fsync its
/// directory.
pub fn remove(path: &Path) -> io::Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => {
            let (dir, _) = split(path)?;
            Ok(sync_dir(&dir)?)
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn replaces_a_regular_file_whole_with_its_mode_and_no_temporary_left() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("journal.json");
        std::fs::write(&p, "old").unwrap();
        write(&p, b"new", &Options::PRIVATE).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        assert_eq!(std::fs::metadata(&p).unwrap().mode() & 0o777, 0o600);
        let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "{names:?}");
        write(&p, b"host", &Options::host_file(0o640)).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().mode() & 0o777, 0o640);
    }

    #[test]
    fn refuses_a_fifo_a_symlink_and_a_directory_and_leaves_them() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        for (p, what) in [
            (&fifo, "a FIFO"),
            (&link, "a symbolic link"),
            (&d.path().to_path_buf(), "a directory"),
        ] {
            let e = write(p, b"x", &Options::SHARED).unwrap_err();
            assert!(
                matches!(&e, Error::NotRegular { what: w, .. } if *w == what),
                "{p:?}: {e}"
            );
        }
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 2);
        // A host file may be a link: the link itself is replaced.
        write(&link, b"x", &Options::host_file(0o644)).unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().is_file());
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
    }

    #[test]
    fn symlinks_replace_symlinks() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("l");
        symlink(&p, Path::new("/a"), &Options::host_file(0o644)).unwrap();
        symlink(&p, Path::new("/b"), &Options::host_file(0o644)).unwrap();
        assert_eq!(std::fs::read_link(&p).unwrap(), Path::new("/b"));
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_full_filesystem_is_told_apart_through_wrapping() {
        let full = || io::Error::from_raw_os_error(libc::ENOSPC);
        assert!(no_space(&full()));
        assert!(no_space(&Error::Io(full())));
        assert!(no_space(&io::Error::other(full())));
        assert!(no_space(&io::Error::from_raw_os_error(libc::EDQUOT)));
        assert!(!no_space(&io::Error::from_raw_os_error(libc::EACCES)));
        let any: anyhow::Error = Error::Io(full()).into();
        assert!(no_space(any.as_ref()));
    }
}
