//! A sysctl (`vm.swappiness`), set live through /proc/sys. Persistent
//! sysctl.d drop-ins are [`super::CreatedFile`]s.

use super::sysfs::{read_value, restore_value};
use super::{slash, write_attr, Change, Outcome, Priority, Undone};
use crate::host::Host;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Sysctl {
    /// Dotted name, `vm.swappiness`.
    pub name: String,
    pub value: String,
    /// The value before; set by `capture`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<String>,
    #[serde(default = "slash")]
    pub root: PathBuf,
}

impl Sysctl {
    pub fn new(name: &str, value: &str) -> Sysctl {
        Sysctl {
            name: name.into(),
            value: value.into(),
            original: None,
            root: slash(),
        }
    }

    /// `/proc/sys/vm/swappiness` for `vm.swappiness`.
    pub fn path(&self) -> PathBuf {
        PathBuf::from("/proc/sys").join(self.name.replace('.', "/"))
    }
}

/// A sysctl name as the kernel spells them: dotted words of letters,
/// digits, `_` and `-` (so its /proc/sys path cannot leave /proc/sys).
fn valid_name(n: &str) -> bool {
    !n.is_empty()
        && n.split('.').all(|w| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        })
}

#[typetag::serde(name = "sysctl")]
impl Change for Sysctl {
    fn target(&self) -> String {
        self.name.clone()
    }
    fn describe(&self) -> String {
        match &self.original {
            Some(o) => format!("{}: {o} → {}", self.name, self.value),
            None => format!("{}: set {}", self.name, self.value),
        }
    }
    fn capture(&mut self, host: &Host) -> Result<()> {
        self.root = host.root().to_path_buf();
        let p = self.path();
        self.original = Some(read_value(host, &p).map_err(|e| {
            crate::error::Fix::new(
                format!("cannot read sysctl {} ({}): {e}", self.name, p.display()),
                "check the name (`sysctl -a`); nothing was changed",
            )
        })?);
        Ok(())
    }
    fn apply(&mut self, host: &Host) -> Result<()> {
        let p = self.path();
        write_attr(host, &p, &self.value).map_err(|e| {
            crate::error::Fix::new(
                format!("cannot set {} = {}: {e}", self.name, self.value),
                if e.kind() == std::io::ErrorKind::PermissionDenied {
                    "run as root"
                } else {
                    "check that the kernel accepts this value"
                },
            )
        })?;
        Ok(())
    }
    fn is_applied(&self, host: &Host) -> Result<bool> {
        let p = self.path();
        let now = read_value(host, &p).with_context(|| format!("reading {}", p.display()))?;
        Ok(now == super::sysfs::norm(&p, &self.value))
    }
    fn undo(&self, dry_run: bool) -> Undone {
        match &self.original {
            Some(o) => restore_value(&Host::with_root(&self.root), &self.path(), o, dry_run),
            None => Undone::outcome(Outcome::Gone),
        }
    }
    /// The first entry's original is the value to restore.
    fn journal_once(&self) -> bool {
        true
    }
    fn priority(&self) -> Priority {
        Priority::ATTRIBUTE
    }
    fn validate(&self) -> Result<(), String> {
        if !valid_name(&self.name) {
            return Err(format!(
                "{:?} is not a sysctl name (only /proc/sys may be written)",
                self.name
            ));
        }
        if !self.root.is_absolute() {
            return Err(format!("root {} is not absolute", self.root.display()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysctl_is_a_proc_sys_write_back() {
        let t = tempfile::tempdir().unwrap();
        let h = Host::with_root(t.path());
        std::fs::create_dir_all(t.path().join("proc/sys/vm")).unwrap();
        std::fs::write(t.path().join("proc/sys/vm/swappiness"), "60\n").unwrap();
        let mut c = Sysctl::new("vm.swappiness", "1");
        c.capture(&h).unwrap();
        c.apply(&h).unwrap();
        assert!(c.is_applied(&h).unwrap());
        assert_eq!(c.undo(false).outcome, Outcome::Restored);
        assert_eq!(
            std::fs::read_to_string(t.path().join("proc/sys/vm/swappiness")).unwrap(),
            "60"
        );
        for bad in ["../../etc/passwd", "vm..x", "vm/../x", ""] {
            assert!(Sysctl::new(bad, "1").validate().is_err(), "{bad}");
        }
    }
}
