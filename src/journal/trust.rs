//! Whose journal is it? A journal tells `innotune restore`, run as root,
//! what to write where; one that another user wrote (or could have
//! replaced) must not be read at all.
//!
//! The state directory must be owned by the running user and writable by
//! nobody else (no group or other write bit: in a world-writable directory,
//! even a sticky one, anyone may plant a journal before innotune writes
//! one). The journal itself is opened through that directory's descriptor
//! without following a symlink (`O_NOFOLLOW`; `O_NONBLOCK` so a FIFO
//! cannot block), and must be a regular file with one link, owned by the
//! running user and writable by nobody else. Otherwise it is refused with
//! one line and nothing in it is used.

use crate::error::Fix;
use anyhow::Result;
use rustix::fs::{FileType, Mode, OFlags, Stat};
use std::io::Read;
use std::os::fd::OwnedFd;
use std::path::Path;

/// A journal larger than this is not innotune's (backups of configuration
/// files are a few KiB each).
const MAX_JOURNAL_BYTES: u64 = 64 << 20;

fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Why a directory or file with this stat is not the running user's alone.
fn not_ours(st: &Stat) -> Option<String> {
    if st.st_uid != euid() {
        return Some(format!(
            "it is owned by uid {}, not by the user running innotune (uid {})",
            st.st_uid,
            euid()
        ));
    }
    if st.st_mode & 0o022 != 0 {
        return Some(format!(
            "it is writable by {} (mode {:04o})",
            if st.st_mode & 0o002 != 0 {
                "every user"
            } else {
                "its group"
            },
            st.st_mode & 0o7777
        ));
    }
    None
}

fn refuse(what: &str, p: &Path, why: &str) -> anyhow::Error {
    Fix::new(
        format!(
            "{what} {} is not trusted: {why}; nothing in it was used",
            p.display()
        ),
        "keep the state directory (INNOTUNE_STATE_DIR, default /var/lib/innotune) owned by the user running innotune with mode 0700, and inspect or delete a journal you did not write",
    )
    .into()
}

fn io(e: rustix::io::Errno) -> std::io::Error {
    std::io::Error::from(e)
}

/// Open the state directory `dir` and check it is the running user's
/// alone. `Ok(None)` when it does not exist.
pub(crate) fn open_state_dir(dir: &Path) -> Result<Option<OwnedFd>> {
    let fd = match rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => return Ok(None),
        Err(e) => {
            return Err(Fix::new(
                format!("cannot open state directory {}: {}", dir.display(), io(e)),
                "run as root, or set INNOTUNE_STATE_DIR to a directory you own",
            )
            .into())
        }
    };
    let st = rustix::fs::fstat(&fd)?;
    if let Some(why) = not_ours(&st) {
        return Err(refuse("state directory", dir, &why));
    }
    Ok(Some(fd))
}

/// The text of the journal `path`, if there is one, read only after its
/// directory and the file itself proved to be the running user's alone.
pub(crate) fn read_journal(path: &Path) -> Result<Option<String>> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().unwrap_or_default();
    let open = |dfd: &OwnedFd| {
        rustix::fs::openat(
            dfd,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
            Mode::empty(),
        )
    };
    // Nothing there is nothing to trust or refuse, wherever it would be.
    let exists = rustix::fs::statat(rustix::fs::CWD, path, rustix::fs::AtFlags::SYMLINK_NOFOLLOW);
    if matches!(exists, Err(rustix::io::Errno::NOENT)) {
        return Ok(None);
    }
    let Some(dfd) = open_state_dir(dir)? else {
        return Ok(None);
    };
    let fd = match open(&dfd) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => return Ok(None),
        Err(rustix::io::Errno::LOOP) => {
            return Err(refuse("journal", path, "it is a symbolic link"))
        }
        Err(e) => {
            return Err(
                anyhow::Error::from(io(e)).context(format!("reading journal {}", path.display()))
            )
        }
    };
    let st = rustix::fs::fstat(&fd)?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(refuse("journal", path, "it is not a regular file"));
    }
    if let Some(why) = not_ours(&st) {
        return Err(refuse("journal", path, &why));
    }
    if st.st_nlink != 1 {
        return Err(refuse(
            "journal",
            path,
            &format!("it has {} hard links", st.st_nlink),
        ));
    }
    let mut text = String::new();
    std::fs::File::from(fd)
        .take(MAX_JOURNAL_BYTES)
        .read_to_string(&mut text)
        .map_err(|e| {
            anyhow::Error::from(e).context(format!("reading journal {}", path.display()))
        })?;
    Ok(Some(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn chmod(p: &Path, mode: u32) {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn only_the_users_own_unshared_journal_is_read() {
        let t = tempfile::tempdir().unwrap();
        let j = t.path().join("journal.json");
        assert!(read_journal(&j).unwrap().is_none());
        std::fs::write(&j, "{}").unwrap();
        chmod(&j, 0o600);
        assert_eq!(read_journal(&j).unwrap().as_deref(), Some("{}"));
        chmod(&j, 0o620);
        assert!(format!("{:#}", read_journal(&j).unwrap_err()).contains("its group"));
        chmod(&j, 0o600);
        chmod(t.path(), 0o1777);
        assert!(format!("{:#}", read_journal(&j).unwrap_err()).contains("every user"));
        chmod(t.path(), 0o700);
        std::fs::hard_link(&j, t.path().join("other")).unwrap();
        assert!(format!("{:#}", read_journal(&j).unwrap_err()).contains("hard links"));
        std::fs::remove_file(t.path().join("other")).unwrap();
        let real = t.path().join("real.json");
        std::fs::rename(&j, &real).unwrap();
        std::os::unix::fs::symlink(&real, &j).unwrap();
        assert!(format!("{:#}", read_journal(&j).unwrap_err()).contains("symbolic link"));
        std::fs::remove_file(&j).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &j,
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        assert!(format!("{:#}", read_journal(&j).unwrap_err()).contains("not a regular file"));
    }
}
