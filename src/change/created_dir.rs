//! A directory innotune created: a work directory (sweep's
//! `.innotune-sweep.PID`, check's scratch directory), or a systemd
//! drop-in directory `apply` needs for a file of its own.
//!
//! A marker file ([`MARKER`]) is written inside it the moment it is
//! created. Restore deletes only a directory that carries it, so a journal
//! entry naming some other directory (forged, or from a mistaken copy) is
//! refused: innotune never deletes a directory it cannot prove it made.
//! A work directory (`recursive`) goes with everything in it (innotune's
//! work files); a drop-in directory only when nothing but the marker is
//! left in it, otherwise it is a conflict and stays.

use super::{plain_abs, slash, Change, Outcome, Priority, Undone};
use crate::host::Host;
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The marker file's name inside every directory innotune creates. A dot
/// file: systemd and udev ignore hidden files in their directories.
pub const MARKER: &str = ".innotune-created";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CreatedDir {
    /// Host-absolute path.
    pub path: PathBuf,
    /// Undo deletes its contents too (a work directory).
    #[serde(default)]
    pub recursive: bool,
    /// The caller created it ([`CreatedDir::adopt`]); capture only checks
    /// it is there and empty, apply only writes the marker.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub adopted: bool,
    #[serde(default = "slash")]
    pub root: PathBuf,
    /// Read from a version-1 journal, written before directories carried
    /// the marker: accepted without it only under the names innotune then
    /// gave its work directories (`.innotune-sweep.PID`, `.innotune-check.PID`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub v1: bool,
}

impl CreatedDir {
    /// Carries the marker, or is a version-1 work directory by its name.
    fn provably_ours(&self, h: &Host) -> bool {
        let name = self.path.file_name().unwrap_or_default().to_string_lossy();
        self.marker(h).exists()
            || (self.v1
                && self.recursive
                && (name.starts_with(".innotune-sweep.") || name.starts_with(".innotune-check.")))
    }

    /// A directory to create (empty when undone, else a conflict).
    pub fn new(path: impl Into<PathBuf>) -> CreatedDir {
        CreatedDir {
            path: path.into(),
            recursive: false,
            adopted: false,
            root: slash(),
            v1: false,
        }
    }

    /// A work directory the caller has just created (with `create_dir`, so
    /// it is certain to be new): undo deletes it and everything in it.
    pub fn adopt(path: impl Into<PathBuf>) -> CreatedDir {
        CreatedDir {
            recursive: true,
            adopted: true,
            ..CreatedDir::new(path)
        }
    }

    fn marker(&self, h: &Host) -> PathBuf {
        h.path(&self.path).join(MARKER)
    }
}

/// Delete `p` and everything in it. Something else may be deleting inside
/// it at the same moment (a sandbox removing its own directory while a
/// signal restores): what is gone at the end is removed.
fn remove_all(p: &Path) -> Outcome {
    let mut r = std::fs::remove_dir_all(p);
    if r.is_err() && p.exists() {
        r = std::fs::remove_dir_all(p);
    }
    match r {
        Ok(()) => Outcome::Removed,
        Err(_) if !p.exists() => Outcome::Removed,
        Err(e) => Outcome::Failed {
            reason: e.to_string(),
        },
    }
}

#[typetag::serde(name = "dir")]
impl Change for CreatedDir {
    fn target(&self) -> String {
        self.path.display().to_string()
    }
    fn describe(&self) -> String {
        format!("create directory {}", self.path.display())
    }
    fn capture(&mut self, host: &Host) -> Result<()> {
        self.root = host.root().to_path_buf();
        let p = host.path(&self.path);
        if self.adopted {
            let empty = std::fs::read_dir(&p)
                .with_context(|| format!("reading {}", self.path.display()))?
                .next()
                .is_none();
            if !empty {
                bail!(
                    "internal: {} is not a directory just created",
                    self.path.display()
                );
            }
        } else if p.exists() {
            bail!("{} exists already", self.path.display());
        }
        Ok(())
    }
    fn apply(&mut self, host: &Host) -> Result<()> {
        let p = host.path(&self.path);
        if !self.adopted {
            std::fs::create_dir(&p).with_context(|| format!("creating {}", self.path.display()))?;
        }
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(self.marker(host))
            .with_context(|| format!("marking {}", self.path.display()))?;
        writeln!(
            f,
            "Created by innotune (pid {}); `innotune restore` deletes this directory.",
            std::process::id()
        )?;
        Ok(())
    }
    fn is_applied(&self, host: &Host) -> Result<bool> {
        Ok(host.path(&self.path).is_dir())
    }
    fn undo(&self, dry_run: bool) -> Undone {
        let h = Host::with_root(&self.root);
        let p = h.path(&self.path);
        if !p.exists() {
            return Undone::outcome(Outcome::Gone);
        }
        if !self.provably_ours(&h) {
            // Crashed between creating and marking it, or not ours.
            let empty = std::fs::read_dir(&p).is_ok_and(|mut d| d.next().is_none());
            if !empty {
                return Undone::outcome(Outcome::Conflict {
                    reason: format!("no {MARKER} in it: not provably innotune's; left alone"),
                });
            }
        }
        if !self.recursive {
            let others = std::fs::read_dir(&p)
                .map(|d| d.filter_map(|e| e.ok()).any(|e| e.file_name() != MARKER))
                .unwrap_or(false);
            if others {
                return Undone::outcome(Outcome::Conflict {
                    reason: "not empty: files innotune did not write are in it; left alone".into(),
                });
            }
        }
        if dry_run {
            return Undone::outcome(Outcome::WouldRestore);
        }
        Undone::outcome(remove_all(&p))
    }
    fn priority(&self) -> Priority {
        Priority::DIR
    }
    /// A plain absolute path at least two levels deep that, if it exists,
    /// carries innotune's marker; a work directory deleted with its
    /// contents must also be named `*innotune*`.
    fn validate(&self) -> Result<(), String> {
        let refuse = |why: &str| Err(format!("{}: {why}", self.path.display()));
        if !plain_abs(&self.path) || self.path.components().count() < 3 {
            return refuse("not a directory innotune creates");
        }
        let name = self.path.file_name().unwrap_or_default().to_string_lossy();
        if self.recursive && !name.contains("innotune") {
            return refuse("not a work directory innotune creates");
        }
        if !self.root.is_absolute() {
            return refuse("root is not absolute");
        }
        let h = Host::with_root(&self.root);
        let p = h.path(&self.path);
        let empty = std::fs::read_dir(&p).is_ok_and(|mut d| d.next().is_none());
        if p.exists() && !self.provably_ours(&h) && !empty {
            return refuse(&format!("innotune did not create it (no {MARKER} in it)"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marked_directories_are_removed_and_unmarked_ones_refused() {
        let t = tempfile::tempdir().unwrap();
        let h = Host::with_root(t.path());
        std::fs::create_dir_all(t.path().join("etc/systemd/system")).unwrap();
        let d = "/etc/systemd/system/mariadb.service.d";
        let mut c = CreatedDir::new(d);
        c.capture(&h).unwrap();
        c.apply(&h).unwrap();
        assert!(h.path(d).join(MARKER).exists());
        assert!(c.validate().is_ok());
        std::fs::write(h.path(d).join("x.conf"), "").unwrap();
        assert!(matches!(c.undo(false).outcome, Outcome::Conflict { .. }));
        std::fs::remove_file(h.path(d).join("x.conf")).unwrap();
        assert_eq!(c.undo(false).outcome, Outcome::Removed);
        assert!(!h.path(d).exists());

        // A work directory goes with its contents.
        let w = t.path().join("data/.innotune-sweep.1");
        std::fs::create_dir_all(&w).unwrap();
        let mut a = CreatedDir::adopt(&w);
        a.capture(&Host::live()).unwrap();
        a.apply(&Host::live()).unwrap();
        std::fs::write(w.join("bench.0"), "x").unwrap();
        assert_eq!(a.undo(false).outcome, Outcome::Removed);
        assert!(!w.exists());

        // An existing directory without the marker is refused outright.
        let home = t.path().join("home/someone");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(home.join("thesis.tex"), "x").unwrap();
        let mut forged = CreatedDir::adopt(t.path().join("home/innotune"));
        forged.path = home.clone();
        assert!(forged.validate().is_err());
        let mut named = CreatedDir::adopt(t.path().join("home/.innotune-x"));
        std::fs::create_dir_all(&named.path).unwrap();
        std::fs::write(named.path.join("f"), "x").unwrap();
        assert!(named.validate().is_err(), "no marker: refused");
        named.recursive = true;
        assert!(matches!(
            named.undo(false).outcome,
            Outcome::Conflict { .. }
        ));
        assert!(named.path.join("f").exists());
    }
}
