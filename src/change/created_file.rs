//! A file (or symlink) innotune creates where nothing was: a udev rule, a
//! sysctl.d drop-in, a systemd unit or its `.wants` link, a my.cnf
//! drop-in. Undo deletes it, unless someone edited it since innotune wrote
//! it: then it is a conflict and the file stays.

use super::{current_bytes, plain_abs, replace_file, sha256_hex, slash, Change, Hook, Outcome};
use super::{Priority, Undone};
use crate::host::Host;
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Is `path` a file `apply` installs (`crate::apply::emit`): the udev
/// rule, the systemd unit and its `.wants` link, the sysctl.d and
/// tmpfiles.d files, a `*.service.d/innotune-limits.conf` drop-in, or the
/// `99-innotune.cnf` drop-in in the server's `!includedir` (wherever the
/// option files point it)? Nothing else is created, edited or restored.
pub(super) fn emitted_path(path: &Path) -> bool {
    use crate::change::allowed::{
        LIMITS_NAME, MYCNF_NAME, SYSCTL, TMPFILES, TMPFILES_CPUFREQ, UDEV_RULES, UNIT,
    };
    if !plain_abs(path) {
        return false;
    }
    let p = path.to_string_lossy();
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let parent = path.parent().unwrap_or(Path::new("/"));
    [UDEV_RULES, UNIT, SYSCTL, TMPFILES, TMPFILES_CPUFREQ].contains(&p.as_ref())
        || p == wants_link()
        || (name == LIMITS_NAME
            && parent.parent() == Some(Path::new("/etc/systemd/system"))
            && parent
                .file_name()
                .is_some_and(|d| d.to_string_lossy().ends_with(".d")))
        || (name == MYCNF_NAME && parent != Path::new("/"))
}

/// The `.wants` link that enables innotune's unit.
fn wants_link() -> String {
    use crate::change::allowed::{UNIT, UNIT_WANTS_DIR};
    let unit = Path::new(UNIT).file_name().unwrap_or_default();
    format!("{UNIT_WANTS_DIR}/{}", unit.to_string_lossy())
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CreatedFile {
    /// Host-absolute path.
    pub path: PathBuf,
    /// What to write (empty for a symlink).
    pub content: String,
    /// A symlink to this target instead of a file (a unit's .wants entry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symlink: Option<String>,
    /// SHA-256 of what innotune writes (a symlink: of `symlink:TARGET`),
    /// set by `capture`, before the write: a crash mid-write still leaves
    /// an entry that recognises the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_sha256: Option<String>,
    #[serde(default = "slash")]
    pub root: PathBuf,
}

impl CreatedFile {
    pub fn new(path: impl Into<PathBuf>, content: String) -> CreatedFile {
        CreatedFile {
            path: path.into(),
            content,
            symlink: None,
            written_sha256: None,
            root: slash(),
        }
    }

    pub fn symlink(path: impl Into<PathBuf>, target: &str) -> CreatedFile {
        CreatedFile {
            symlink: Some(target.into()),
            ..CreatedFile::new(path, String::new())
        }
    }

    fn wanted(&self) -> Vec<u8> {
        match &self.symlink {
            Some(t) => format!("symlink:{t}").into_bytes(),
            None => self.content.clone().into_bytes(),
        }
    }
}

/// What the system must re-read after a configuration file changes (live
/// host only: a replayed `--root` tree is nobody's configuration).
pub(super) fn hooks_for(path: &Path, root: &Path) -> Vec<Hook> {
    if root != Path::new("/") {
        return Vec::new();
    }
    let p = path.to_string_lossy();
    if p.starts_with("/etc/udev/") {
        vec![Hook::UdevReload]
    } else if p.starts_with("/etc/systemd/") {
        vec![Hook::SystemdReload]
    } else if p.starts_with("/etc/sysctl.d/") {
        vec![Hook::SysctlSystem]
    } else {
        Vec::new()
    }
}

#[typetag::serde(name = "file")]
impl Change for CreatedFile {
    fn target(&self) -> String {
        self.path.display().to_string()
    }
    fn describe(&self) -> String {
        match &self.symlink {
            Some(t) => format!("link {} → {t}", self.path.display()),
            None => format!("install {}", self.path.display()),
        }
    }
    fn capture(&mut self, host: &Host) -> Result<()> {
        self.root = host.root().to_path_buf();
        if current_bytes(&host.path(&self.path))?.is_some() {
            bail!(crate::error::Fix::new(
                format!("{} exists already", self.path.display()),
                "move it away, or merge innotune's settings into it by hand (innotune check --emit DIR)"
            ));
        }
        self.written_sha256 = Some(sha256_hex(&self.wanted()));
        Ok(())
    }
    fn apply(&mut self, host: &Host) -> Result<()> {
        replace_file(&host.path(&self.path), &self.wanted(), 0o644)
            .with_context(|| format!("writing {}", self.path.display()))
    }
    fn is_applied(&self, host: &Host) -> Result<bool> {
        Ok(current_bytes(&host.path(&self.path))?.as_deref() == Some(&self.wanted()[..]))
    }
    fn undo(&self, dry_run: bool) -> Undone {
        let p = Host::with_root(&self.root).path(&self.path);
        let cur = match current_bytes(&p) {
            Ok(Some(c)) => c,
            Ok(None) => return Undone::outcome(Outcome::Gone),
            Err(e) => {
                return Undone::outcome(Outcome::Failed {
                    reason: e.to_string(),
                })
            }
        };
        if self.written_sha256.as_deref() != Some(sha256_hex(&cur).as_str()) {
            return Undone::outcome(Outcome::Conflict {
                reason: "changed since innotune wrote it; left alone".into(),
            });
        }
        if dry_run {
            return Undone::outcome(Outcome::WouldRestore);
        }
        Undone::outcome(match std::fs::remove_file(&p) {
            Ok(()) => Outcome::Removed,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Outcome::Gone,
            Err(e) => Outcome::Failed {
                reason: e.to_string(),
            },
        })
    }
    fn priority(&self) -> Priority {
        Priority::FILE
    }
    /// Only a file `apply` installs ([`emitted_path`]; the `.wants` link
    /// only as a link to innotune's unit) with the hash of what innotune
    /// wrote there, under `/` or a tree no symbolic link leads out of.
    fn validate(&self) -> Result<(), String> {
        let refuse = || {
            Err(format!(
                "{} is not a file innotune creates",
                self.path.display()
            ))
        };
        if !emitted_path(&self.path) {
            return refuse();
        }
        let is_link = self.path.to_string_lossy() == wants_link();
        match &self.symlink {
            Some(t) if !is_link || t != crate::change::allowed::UNIT => return refuse(),
            None if is_link => return refuse(),
            _ => {}
        }
        if self.written_sha256.as_deref() != Some(sha256_hex(&self.wanted()).as_str()) {
            return Err(format!(
                "{}: the hash of what innotune wrote does not match the entry",
                self.path.display()
            ));
        }
        super::check_root(&self.root)?;
        super::inside_root(&self.root, &self.path)
    }
    fn after_apply(&self) -> Vec<Hook> {
        hooks_for(&self.path, &self.root)
    }
    fn after_undo(&self) -> Vec<Hook> {
        hooks_for(&self.path, &self.root)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_file_is_removed_unless_edited_since() {
        let t = tempfile::tempdir().unwrap();
        let h = Host::with_root(t.path());
        std::fs::create_dir_all(t.path().join("etc/sysctl.d")).unwrap();
        let p = "/etc/sysctl.d/99-innotune.conf";
        let mut c = CreatedFile::new(p, "vm.swappiness = 1\n".into());
        c.capture(&h).unwrap();
        c.apply(&h).unwrap();
        assert!(c.is_applied(&h).unwrap());
        assert!(c.validate().is_ok());
        assert!(c.after_undo().is_empty(), "no hooks for a replayed tree");
        assert_eq!(c.undo(true).outcome, Outcome::WouldRestore);
        assert_eq!(c.undo(false).outcome, Outcome::Removed);
        assert!(!h.path(p).exists());
        c.capture(&h).unwrap();
        c.apply(&h).unwrap();
        std::fs::write(h.path(p), "edited\n").unwrap();
        assert!(matches!(c.undo(false).outcome, Outcome::Conflict { .. }));
        assert_eq!(std::fs::read_to_string(h.path(p)).unwrap(), "edited\n");
        // It exists now: a second creation is refused, nothing written.
        assert!(CreatedFile::new(p, "x".into()).capture(&h).is_err());
        for bad in [
            "/etc/passwd",
            "/etc/sysctl.d/../passwd",
            "/etc/sysctl.d/99-other.conf",
            "/etc/mysql/innotune-x.cnf",
            "/home/u/evil.cnf",
            "/99-innotune.cnf",
            "/etc/systemd/system/innotune-limits.conf",
            "/etc/systemd/system/a/b.d/innotune-limits.conf",
        ] {
            let mut f = CreatedFile::new(bad, String::new());
            f.written_sha256 = Some(sha256_hex(b""));
            assert!(f.validate().is_err(), "{bad}");
        }
        for good in [
            "/etc/udev/rules.d/99-innotune.rules",
            "/etc/systemd/system/innotune-queues.service",
            "/etc/tmpfiles.d/innotune-thp.conf",
            "/etc/mysql/mariadb.conf.d/99-innotune.cnf",
            "/srv/my.cnf.d/99-innotune.cnf",
            "/etc/systemd/system/mariadb.service.d/innotune-limits.conf",
        ] {
            let mut f = CreatedFile::new(good, "x".into());
            f.written_sha256 = Some(sha256_hex(b"x"));
            assert!(f.validate().is_ok(), "{good}");
            // The hash must be of what innotune wrote.
            f.written_sha256 = Some(sha256_hex(b"y"));
            assert!(f.validate().is_err(), "{good}");
        }
        // The .wants entry is a link to innotune's unit, nothing else.
        let w = "/etc/systemd/system/multi-user.target.wants/innotune-queues.service";
        let mut l = CreatedFile::symlink(w, "/etc/systemd/system/innotune-queues.service");
        l.written_sha256 = Some(sha256_hex(&l.wanted()));
        assert!(l.validate().is_ok());
        let mut l = CreatedFile::symlink(w, "/etc/shadow");
        l.written_sha256 = Some(sha256_hex(&l.wanted()));
        assert!(l.validate().is_err());
    }
}
