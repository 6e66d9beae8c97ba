//! The CPU mask of one interrupt (`/proc/irq/N/smp_affinity`): the mask
//! before is captured as the kernel printed it, the new one written, and
//! the old one written back on undo, unless someone (irqbalance, an
//! operator) moved the interrupt since: then undo reports a conflict and
//! leaves it where they put it.
//!
//! A kind of its own rather than a `sysfs` path because /proc/irq is not
//! sysfs, because its values are masks only, and because its undo must
//! tell a move by irqbalance from its own write (a sysfs attribute has no
//! daemon rewriting it every 10 s).

use super::{check_root, inside_root, slash, write_attr, Change, Outcome, Priority, Undone};
use crate::host::Host;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IrqAffinity {
    pub irq: u32,
    /// The hex CPU mask to write (`4`, `1,00000000`).
    pub value: String,
    /// How people name it: `eth0 irq 41`.
    pub label: String,
    /// The mask before, as the kernel printed it (written back as is:
    /// the kernel reads a long mask only in 32-bit comma groups); set by
    /// `capture`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<String>,
    #[serde(default = "slash")]
    pub root: PathBuf,
}

/// A CPU mask in the kernel's format: hex digits in comma-separated
/// groups of at most 8.
fn is_mask(v: &str) -> bool {
    !v.is_empty()
        && v.len() <= 1024
        && v.split(',')
            .all(|g| !g.is_empty() && g.len() <= 8 && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The comparable form of a mask: no separators, no leading zeros.
fn norm(v: &str) -> String {
    super::sysfs::norm(std::path::Path::new("smp_affinity"), v)
}

impl IrqAffinity {
    pub fn new(irq: u32, value: &str, label: &str) -> IrqAffinity {
        IrqAffinity {
            irq,
            value: value.into(),
            label: label.into(),
            original: None,
            root: slash(),
        }
    }

    /// `/proc/irq/N/smp_affinity`.
    pub fn path(&self) -> PathBuf {
        PathBuf::from(format!("/proc/irq/{}/smp_affinity", self.irq))
    }

    fn read(&self, h: &Host) -> std::io::Result<String> {
        h.read_trim(self.path())
    }
}

#[typetag::serde(name = "irq_affinity")]
impl Change for IrqAffinity {
    fn target(&self) -> String {
        self.path().display().to_string()
    }
    fn describe(&self) -> String {
        match &self.original {
            Some(o) => format!("{} smp_affinity: {o} → {}", self.label, self.value),
            None => format!("{} smp_affinity: set {}", self.label, self.value),
        }
    }
    fn capture(&mut self, host: &Host) -> Result<()> {
        self.root = host.root().to_path_buf();
        let o = self.read(host).map_err(|e| {
            crate::error::Fix::new(
                format!("cannot read {}: {e}", self.path().display()),
                "check the interrupt still exists (/proc/interrupts); nothing was changed",
            )
        })?;
        self.original = Some(o);
        Ok(())
    }
    fn apply(&mut self, host: &Host) -> Result<()> {
        write_attr(host, &self.path(), &self.value).map_err(|e| {
            crate::error::Fix::new(
                format!(
                    "cannot write {:?} to {}: {e}",
                    self.value,
                    self.path().display()
                ),
                match e.kind() {
                    std::io::ErrorKind::PermissionDenied => "run as root",
                    // EIO: a managed interrupt, which its driver spreads itself.
                    _ => "the kernel does not let this interrupt move (a managed interrupt, or a CPU that is offline): leave it",
                },
            )
        })?;
        Ok(())
    }
    fn is_applied(&self, host: &Host) -> Result<bool> {
        let now = self
            .read(host)
            .map_err(|e| anyhow::anyhow!("reading {}: {e}", self.path().display()))?;
        Ok(norm(&now) == norm(&self.value))
    }
    fn undo(&self, dry_run: bool) -> Undone {
        let Some(orig) = &self.original else {
            return Undone::outcome(Outcome::Gone);
        };
        let h = Host::with_root(&self.root);
        let mut u = Undone::outcome(Outcome::Restored);
        u.original = Some(orig.clone());
        let now = match self.read(&h) {
            Ok(v) => v,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                u.outcome = Outcome::Gone;
                return u;
            }
            Err(e) => {
                u.outcome = Outcome::Failed {
                    reason: format!("cannot read: {e}"),
                };
                return u;
            }
        };
        u.found = Some(now.clone());
        if norm(&now) == norm(orig) {
            u.outcome = Outcome::AlreadyOriginal;
            return u;
        }
        if norm(&now) != norm(&self.value) {
            u.outcome = Outcome::Conflict {
                reason: format!(
                    "it is {now}, not the {} innotune wrote: someone (irqbalance?) moved it since",
                    self.value
                ),
            };
            return u;
        }
        if dry_run {
            u.outcome = Outcome::WouldRestore;
            return u;
        }
        if let Err(e) = write_attr(&h, &self.path(), orig) {
            u.outcome = if e.kind() == std::io::ErrorKind::NotFound {
                Outcome::Gone
            } else {
                Outcome::Failed {
                    reason: format!("cannot write {orig:?}: {e}"),
                }
            };
            return u;
        }
        match self.read(&h) {
            Ok(v) if norm(&v) == norm(orig) => {}
            Ok(v) => {
                u.outcome = Outcome::Failed {
                    reason: format!("wrote {orig:?} but it reads {v:?}"),
                }
            }
            Err(e) => {
                u.outcome = Outcome::Failed {
                    reason: format!("cannot read back: {e}"),
                }
            }
        }
        u
    }
    /// The first entry's original is the mask to restore.
    fn journal_once(&self) -> bool {
        true
    }
    fn priority(&self) -> Priority {
        Priority::ATTRIBUTE
    }
    /// Only `/proc/irq/<digits>/smp_affinity` (the irq is a number by
    /// type), masks as value and original, a label without control
    /// characters, under `/` or a tree no symbolic link leads out of.
    fn validate(&self) -> Result<(), String> {
        for v in std::iter::once(&self.value).chain(self.original.iter()) {
            if !is_mask(v) {
                return Err(format!(
                    "{}: {v:?} is not a CPU mask",
                    self.path().display()
                ));
            }
        }
        if self.label.chars().any(char::is_control) {
            return Err(format!(
                "{}: its label holds control characters",
                self.path().display()
            ));
        }
        check_root(&self.root)?;
        inside_root(&self.root, &self.path())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(mask: &str) -> (tempfile::TempDir, Host) {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("proc/irq/41");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("smp_affinity"), mask).unwrap();
        let h = Host::with_root(t.path());
        (t, h)
    }

    #[test]
    fn round_trip_puts_back_the_mask_as_printed() {
        let (t, h) = tree("00000000,000000ff\n");
        let mut c: Box<dyn Change> = Box::new(IrqAffinity::new(41, "4", "eth0 irq 41"));
        assert!(!c.is_applied(&h).unwrap());
        c.capture(&h).unwrap();
        c.apply(&h).unwrap();
        assert!(c.is_applied(&h).unwrap());
        let json = serde_json::to_string(&c).unwrap();
        assert!(json.contains(r#""kind":"irq_affinity""#), "{json}");
        let back: Box<dyn Change> = serde_json::from_str(&json).unwrap();
        assert!(back.validate().is_ok(), "{:?}", back.validate());
        assert_eq!(back.undo(true).outcome, Outcome::WouldRestore);
        assert_eq!(back.undo(false).outcome, Outcome::Restored);
        let p = t.path().join("proc/irq/41/smp_affinity");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "00000000,000000ff");
        assert_eq!(back.undo(false).outcome, Outcome::AlreadyOriginal);
    }

    #[test]
    fn a_mask_moved_since_is_left_alone() {
        let (t, h) = tree("ff\n");
        let mut c = IrqAffinity::new(41, "4", "eth0 irq 41");
        c.capture(&h).unwrap();
        c.apply(&h).unwrap();
        let p = t.path().join("proc/irq/41/smp_affinity");
        std::fs::write(&p, "10\n").unwrap();
        assert!(matches!(c.undo(false).outcome, Outcome::Conflict { .. }));
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "10\n");
        std::fs::remove_file(&p).unwrap();
        assert_eq!(c.undo(false).outcome, Outcome::Gone);
    }

    #[test]
    fn only_masks_validate() {
        let mut c = IrqAffinity::new(41, "4", "eth0 irq 41");
        assert!(c.validate().is_ok());
        for bad in ["", "x", "123456789", "1,,2", "/etc/passwd", "4 ", "|sh"] {
            c.value = bad.into();
            assert!(c.validate().is_err(), "{bad:?}");
        }
        c.value = "1,00000000".into();
        c.original = Some("ff;".into());
        assert!(c.validate().is_err());
        c.original = Some("ff".into());
        c.label = "a\nb".into();
        assert!(c.validate().is_err());
        c.label = "ok".into();
        c.root = PathBuf::from("relative");
        assert!(c.validate().is_err());
        // The path is built from a number: a journal cannot name another.
        let forged = r#"{"kind":"irq_affinity","irq":"../../etc","value":"4","label":"x"}"#;
        assert!(serde_json::from_str::<Box<dyn Change>>(forged).is_err());
    }
}
