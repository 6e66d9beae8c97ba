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

/// Where innotune creates or edits configuration files, host-absolute.
/// Anything else in a journal is refused by `innotune restore`.
pub(super) const CONFIG_DIRS: [&str; 7] = [
    "/etc/udev/rules.d/",
    "/etc/sysctl.d/",
    "/etc/tmpfiles.d/",
    "/etc/systemd/system/",
    "/etc/mysql/",
    "/etc/my.cnf.d/",
    "/etc/modprobe.d/",
];

/// Is `path` a configuration file innotune may write: in [`CONFIG_DIRS`],
/// or a server option file (`*.cnf`, wherever the server's `!includedir`
/// points)?
pub(super) fn config_path(path: &Path) -> bool {
    let p = path.to_string_lossy();
    plain_abs(path) && (CONFIG_DIRS.iter().any(|d| p.starts_with(d)) || p.ends_with(".cnf"))
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
    /// Only a configuration file ([`CONFIG_DIRS`]) named `*innotune*`, as
    /// every file innotune creates is, with the hash of what it wrote.
    fn validate(&self) -> Result<(), String> {
        let name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !config_path(&self.path) || !name.contains("innotune") || self.written_sha256.is_none() {
            return Err(format!(
                "{} is not a file innotune creates",
                self.path.display()
            ));
        }
        if !self.root.is_absolute() {
            return Err(format!("root {} is not absolute", self.root.display()));
        }
        Ok(())
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
        ] {
            let mut f = CreatedFile::new(bad, String::new());
            f.written_sha256 = Some(sha256_hex(b""));
            assert!(f.validate().is_err(), "{bad}");
        }
    }
}
