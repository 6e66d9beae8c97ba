//! An edit of a file that existed before innotune touched it (a my.cnf
//! drop-in, a sysctl.d file of an earlier innotune version). The original
//! bytes are kept in the journal (hex: exact, and never shown by
//! `innotune restore`) with their SHA-256, and the SHA-256 of what innotune
//! wrote. Undo writes the original back only while the file still holds
//! what innotune wrote; a file someone edited since is a conflict, left
//! alone.

use super::created_file::{emitted_path, hooks_for};
use super::{current_bytes, hex, replace_file, sha256_hex, slash, unhex, Change, Hook, Outcome};
use super::{Priority, Undone};
use crate::host::Host;
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EditedFile {
    /// Host-absolute path.
    pub path: PathBuf,
    /// The new content.
    pub content: String,
    /// Refuse to edit a file that does not start with this (apply only
    /// rewrites files an earlier innotune wrote: `# Managed by innotune`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub require_prefix: Option<String>,
    /// The bytes before, hex; set by `capture`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_hex: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_sha256: Option<String>,
    /// Permission bits of the original, kept by the rewrite.
    #[serde(default)]
    pub mode: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_sha256: Option<String>,
    #[serde(default = "slash")]
    pub root: PathBuf,
}

impl EditedFile {
    pub fn new(path: impl Into<PathBuf>, content: String) -> EditedFile {
        EditedFile {
            path: path.into(),
            content,
            require_prefix: None,
            original_hex: None,
            original_sha256: None,
            mode: 0o644,
            written_sha256: None,
            root: slash(),
        }
    }

    /// The backed-up bytes, if the entry holds them intact.
    fn original(&self) -> Option<Vec<u8>> {
        let b = unhex(self.original_hex.as_deref()?)?;
        (Some(sha256_hex(&b)) == self.original_sha256).then_some(b)
    }
}

#[typetag::serde(name = "file_edit")]
impl Change for EditedFile {
    fn target(&self) -> String {
        self.path.display().to_string()
    }
    fn describe(&self) -> String {
        format!("update {}", self.path.display())
    }
    fn capture(&mut self, host: &Host) -> Result<()> {
        use std::os::unix::fs::PermissionsExt;
        self.root = host.root().to_path_buf();
        let p = host.path(&self.path);
        let meta = std::fs::symlink_metadata(&p)
            .with_context(|| format!("reading {}", self.path.display()))?;
        if !meta.is_file() {
            bail!("{} is not a regular file", self.path.display());
        }
        let bytes =
            std::fs::read(&p).with_context(|| format!("reading {}", self.path.display()))?;
        if let Some(pre) = &self.require_prefix {
            if !bytes.starts_with(pre.as_bytes()) {
                bail!(crate::error::Fix::new(
                    format!("{} exists and was not written by innotune", self.path.display()),
                    "move it away or merge innotune's settings into it by hand (innotune check --emit DIR)"
                ));
            }
        }
        self.mode = meta.permissions().mode() & 0o7777;
        self.original_sha256 = Some(sha256_hex(&bytes));
        self.original_hex = Some(hex(&bytes));
        self.written_sha256 = Some(sha256_hex(self.content.as_bytes()));
        Ok(())
    }
    fn apply(&mut self, host: &Host) -> Result<()> {
        replace_file(&host.path(&self.path), self.content.as_bytes(), self.mode)
            .with_context(|| format!("writing {}", self.path.display()))
    }
    fn is_applied(&self, host: &Host) -> Result<bool> {
        Ok(current_bytes(&host.path(&self.path))?.as_deref() == Some(self.content.as_bytes()))
    }
    fn undo(&self, dry_run: bool) -> Undone {
        let p = Host::with_root(&self.root).path(&self.path);
        let Some(orig) = self.original() else {
            return Undone::outcome(Outcome::Failed {
                reason: "the journal holds no intact copy of the original".into(),
            });
        };
        let cur = match current_bytes(&p) {
            Ok(Some(c)) => sha256_hex(&c),
            Ok(None) => return Undone::outcome(Outcome::Gone),
            Err(e) => {
                return Undone::outcome(Outcome::Failed {
                    reason: e.to_string(),
                })
            }
        };
        if Some(&cur) == self.original_sha256.as_ref() {
            return Undone::outcome(Outcome::AlreadyOriginal);
        }
        if Some(&cur) != self.written_sha256.as_ref() {
            return Undone::outcome(Outcome::Conflict {
                reason: "changed since innotune wrote it; left alone".into(),
            });
        }
        if dry_run {
            return Undone::outcome(Outcome::WouldRestore);
        }
        Undone::outcome(match replace_file(&p, &orig, self.mode) {
            Ok(()) => Outcome::Restored,
            Err(e) => Outcome::Failed {
                reason: e.to_string(),
            },
        })
    }
    fn priority(&self) -> Priority {
        Priority::FILE
    }
    /// Only a file `apply` installs (the emitters' paths), edited because
    /// an earlier innotune wrote it: the entry requires innotune's marker,
    /// and the intact backup of the original starts with it (so restore
    /// only ever writes back a file innotune wrote), with the hash of what
    /// was written; under `/` or a tree no symbolic link leads out of.
    fn validate(&self) -> Result<(), String> {
        let marker = crate::change::allowed::MARKER;
        if !emitted_path(&self.path) {
            return Err(format!(
                "{} is not a file innotune edits",
                self.path.display()
            ));
        }
        let Some(orig) = self.original() else {
            return Err(format!(
                "{}: no intact backup of the original in the journal",
                self.path.display()
            ));
        };
        if self.require_prefix.as_deref() != Some(marker) || !orig.starts_with(marker.as_bytes()) {
            return Err(format!(
                "{}: the original is not a file innotune wrote (no \"{marker}\" line)",
                self.path.display()
            ));
        }
        if self.written_sha256.as_deref() != Some(sha256_hex(self.content.as_bytes()).as_str()) {
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
    fn edit_puts_original_bytes_back_or_reports_a_conflict() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let h = Host::with_root(t.path());
        std::fs::create_dir_all(t.path().join("etc/mysql/conf.d")).unwrap();
        let p = "/etc/mysql/conf.d/99-innotune.cnf";
        let orig =
            b"# Managed by innotune\n[mysqld]\n# caf\xe9 latin-1\ninnodb_io_capacity = 200\n"
                .to_vec();
        std::fs::write(h.path(p), &orig).unwrap();
        std::fs::set_permissions(h.path(p), std::fs::Permissions::from_mode(0o640)).unwrap();
        let mut c = EditedFile::new(
            p,
            "# Managed by innotune\n[mysqld]\ninnodb_io_capacity = 2000\n".into(),
        );
        c.require_prefix = Some(crate::change::allowed::MARKER.into());
        c.capture(&h).unwrap();
        c.apply(&h).unwrap();
        assert!(c.is_applied(&h).unwrap());
        let meta = std::fs::metadata(h.path(p)).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o640);
        let json = serde_json::to_string(&(Box::new(c.clone()) as Box<dyn Change>)).unwrap();
        let back: Box<dyn Change> = serde_json::from_str(&json).unwrap();
        assert!(back.validate().is_ok());
        assert_eq!(back.undo(false).outcome, Outcome::Restored);
        assert_eq!(std::fs::read(h.path(p)).unwrap(), orig);
        // Edited since: a conflict, the file is left as found.
        c.apply(&h).unwrap();
        std::fs::write(h.path(p), "someone else\n").unwrap();
        assert!(matches!(back.undo(false).outcome, Outcome::Conflict { .. }));
        assert_eq!(
            std::fs::read_to_string(h.path(p)).unwrap(),
            "someone else\n"
        );
        // A tampered backup is refused.
        let mut forged = c.clone();
        forged.original_hex = Some(hex(b"evil"));
        assert!(forged.validate().is_err());
        // So is a consistent backup of a file innotune did not write, and
        // any path apply's emitters do not target.
        let mut forged = c.clone();
        forged.original_hex = Some(hex(b"evil"));
        forged.original_sha256 = Some(sha256_hex(b"evil"));
        assert!(forged.validate().is_err());
        for path in [
            "/etc/mysql/conf.d/tuning.cnf",
            "/home/u/x.cnf",
            "/etc/hostname",
        ] {
            let mut forged = c.clone();
            forged.path = path.into();
            assert!(forged.validate().is_err(), "{path}");
        }
        // Only files that start with require_prefix are taken over.
        let mut own = EditedFile::new(p, String::new());
        own.require_prefix = Some("# Managed by innotune".into());
        assert!(own.capture(&h).is_err());
    }
}
