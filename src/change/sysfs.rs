//! A sysfs attribute (`/sys/block/sda/queue/scheduler`, `read_ahead_kb`,
//! transparent hugepages, a NIC queue's `rps_cpus`): the value before is
//! captured, the new one written, the old one written back on undo.
//!
//! A scheduler switch resets the queue's `nr_requests`, so a scheduler
//! change also remembers `nr_requests` (`remember` → `companions`) and may
//! set a new one right after switching (`then_set`). A change may also only
//! remember an attribute another change resets ([`SysfsAttr::remember`]).

use super::{plain_abs, slash, write_attr, Change, Outcome, Priority, Undone};
use crate::host::Host;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The comparable form of a sysfs value: the active choice of a choice
/// file (parsed by [`crate::model::choice::parse`], the one parser of that
/// format), whitespace collapsed, and for CPU masks the hex number without
/// separators or leading zeros (`00000000,00000003` == `3`).
pub fn norm(path: &Path, raw: &str) -> String {
    let v = match crate::model::choice::parse(raw) {
        Some(c) if c.bracketed => c.active,
        _ => raw.split_whitespace().collect::<Vec<_>>().join(" "),
    };
    if path.ends_with("rps_cpus") || path.ends_with("xps_cpus") || path.ends_with("smp_affinity") {
        let hex: String = v.chars().filter(|c| *c != ',').collect();
        let t = hex.trim_start_matches('0');
        return if t.is_empty() {
            "0".into()
        } else {
            t.to_ascii_lowercase()
        };
    }
    v
}

/// What the attribute at `p` holds now, normalised ([`norm`]).
pub fn read_value(host: &Host, p: &Path) -> std::io::Result<String> {
    host.read(p).map(|s| norm(p, &s))
}

use super::allowed::QUEUE_ATTRS;
/// A NIC queue's attributes apply changes (network rule).
const NET_QUEUE_ATTRS: [&str; 3] = ["rps_cpus", "xps_cpus", "rps_flow_cnt"];

/// Attributes innotune may change, exactly: a block queue's
/// [`QUEUE_ATTRS`] (`/sys/block/DEV/queue/ATTR`, or through
/// `/sys/class/block`), transparent hugepages, a NIC queue's
/// [`NET_QUEUE_ATTRS`], and a CPU's cpufreq `scaling_governor`
/// (`/sys/devices/system/cpu/cpuN/cpufreq/scaling_governor`, nothing
/// else of cpufreq). Anything else in a journal (`/sys/block/sda/
/// device/delete`, a `..`) is refused by `innotune restore`.
fn allowed(p: &Path) -> bool {
    let s = p.to_string_lossy();
    let parts: Vec<&str> = s.split('/').collect();
    let queue = |dev: &str, q: &str, attr: &str| {
        super::plain_name(dev) && q == "queue" && QUEUE_ATTRS.contains(&attr)
    };
    plain_abs(p)
        && match parts.as_slice() {
            ["", "sys", "block", dev, q, attr] => queue(dev, q, attr),
            ["", "sys", "class", "block", dev, q, attr] => queue(dev, q, attr),
            ["", "sys", "kernel", "mm", "transparent_hugepage", "enabled" | "defrag"] => true,
            ["", "sys", "devices", "system", "cpu", cpu, "cpufreq", "scaling_governor"] => cpu
                .strip_prefix("cpu")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())),
            ["", "sys", "class", "net", nic, "queues", q, attr] => {
                super::plain_name(nic)
                    && (q.strip_prefix("rx-").or_else(|| q.strip_prefix("tx-")))
                        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                    && NET_QUEUE_ATTRS.contains(attr)
            }
            _ => false,
        }
}

/// One sysfs attribute. See the module documentation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SysfsAttr {
    /// Host-absolute path (`/sys/block/sda/queue/scheduler`).
    pub path: PathBuf,
    /// The value to write (unused with `remember_only`).
    pub value: String,
    /// How people name it: `sda scheduler`.
    pub label: String,
    /// The value before, normalised; set by `capture`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<String>,
    /// Only remember the value (another change resets it); write nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub remember_only: bool,
    /// Attributes this change resets as a side effect, to remember.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remember: Vec<PathBuf>,
    /// What they held before: (path, value), those that could be read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub companions: Vec<(PathBuf, String)>,
    /// Attributes set right after `value`: (path, value).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub then_set: Vec<(PathBuf, String)>,
    /// The `--root` the path lives under; `/` on the live host.
    #[serde(default = "slash")]
    pub root: PathBuf,
}

impl SysfsAttr {
    /// Set `path` to `value`.
    pub fn new(path: impl Into<PathBuf>, value: &str, label: &str) -> SysfsAttr {
        SysfsAttr {
            path: path.into(),
            value: value.into(),
            label: label.into(),
            original: None,
            remember_only: false,
            remember: Vec::new(),
            companions: Vec::new(),
            then_set: Vec::new(),
            root: slash(),
        }
    }

    /// Set `path` to `value`, named by its path.
    pub fn set(path: impl Into<PathBuf>, value: &str) -> SysfsAttr {
        let path = path.into();
        let label = path.display().to_string();
        SysfsAttr::new(path, value, &label)
    }

    /// Remember `path`'s value without changing it, because another change
    /// resets it (switching the scheduler resets `nr_requests`).
    pub fn remember(path: impl Into<PathBuf>) -> SysfsAttr {
        let path = path.into();
        let label = path.display().to_string();
        SysfsAttr {
            remember_only: true,
            ..SysfsAttr::new(path, "", &label)
        }
    }

    /// A scheduler switch of `device`: remembers nr_requests (the switch
    /// resets it) and sets it afterwards when `nr_requests` is given.
    pub fn scheduler(device: &str, value: &str, nr_requests: Option<&str>) -> SysfsAttr {
        let q = format!("/sys/block/{device}/queue");
        let nr = PathBuf::from(format!("{q}/nr_requests"));
        SysfsAttr {
            remember: vec![nr.clone()],
            then_set: nr_requests
                .map(|v| (nr, v.to_string()))
                .into_iter()
                .collect(),
            ..SysfsAttr::new(
                format!("{q}/scheduler"),
                value,
                &format!("{device} scheduler"),
            )
        }
    }

    fn read(&self, h: &Host, p: &Path) -> Result<String> {
        read_value(h, p).with_context(|| format!("reading {}", p.display()))
    }

    fn write(&self, h: &Host, p: &Path, v: &str) -> Result<()> {
        write_attr(h, p, v).map_err(|e| {
            crate::error::Fix::new(
                format!("cannot write {v:?} to {}: {e}", p.display()),
                if e.kind() == std::io::ErrorKind::PermissionDenied {
                    "run as root (sysfs attributes are root-writable only)"
                } else {
                    "check that the kernel accepts this value for this device"
                },
            )
            .into()
        })
    }
}

/// Write `original` back to `path` under `h` unless it already holds it,
/// and read it back: the undo of every one-value attribute (sysfs, sysctl).
pub(super) fn restore_value(h: &Host, path: &Path, original: &str, dry_run: bool) -> Undone {
    let mut u = Undone::outcome(Outcome::Restored);
    u.original = Some(original.to_string());
    let now = match read_value(h, path) {
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
    if now == norm(path, original) {
        u.outcome = Outcome::AlreadyOriginal;
        return u;
    }
    if dry_run {
        u.outcome = Outcome::WouldRestore;
        return u;
    }
    if let Err(e) = write_attr(h, path, original) {
        u.outcome =
            if e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENODEV) {
                Outcome::Gone
            } else {
                Outcome::Failed {
                    reason: format!("cannot write {original:?}: {e}"),
                }
            };
        return u;
    }
    match read_value(h, path) {
        Ok(v) if v == norm(path, original) => {}
        Ok(v) => {
            u.outcome = Outcome::Failed {
                reason: format!("wrote {original:?} but it reads {v:?}"),
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

#[typetag::serde(name = "sysfs")]
impl Change for SysfsAttr {
    fn target(&self) -> String {
        self.path.display().to_string()
    }
    fn describe(&self) -> String {
        match (&self.original, self.remember_only) {
            (Some(o), true) => format!("{}: remember {o}", self.label),
            (None, true) => format!("{}: remember", self.label),
            (Some(o), false) => format!("{}: {o} → {}", self.label, self.value),
            (None, false) => format!("{}: set {}", self.label, self.value),
        }
    }
    fn capture(&mut self, host: &Host) -> Result<()> {
        self.root = host.root().to_path_buf();
        self.original = Some(self.read(host, &self.path).map_err(|e| {
            crate::error::Fix::new(
                format!("{e:#}"),
                "check the device still exists; nothing was changed",
            )
        })?);
        self.companions = self
            .remember
            .iter()
            .filter_map(|p| Some((p.clone(), read_value(host, p).ok()?)))
            .collect();
        Ok(())
    }
    fn apply(&mut self, host: &Host) -> Result<()> {
        if self.remember_only {
            return Ok(());
        }
        self.write(host, &self.path, &self.value)?;
        for (p, v) in &self.then_set {
            self.write(host, p, v)?;
        }
        Ok(())
    }
    fn is_applied(&self, host: &Host) -> Result<bool> {
        if self.remember_only {
            return Ok(true);
        }
        if self.read(host, &self.path)? != norm(&self.path, &self.value) {
            return Ok(false);
        }
        for (p, v) in &self.then_set {
            if self.read(host, p)? != norm(p, v) {
                return Ok(false);
            }
        }
        Ok(true)
    }
    fn undo(&self, dry_run: bool) -> Undone {
        let h = Host::with_root(&self.root);
        let Some(orig) = &self.original else {
            // Journaled but never captured: nothing was written.
            return Undone::outcome(Outcome::Gone);
        };
        let mut u = restore_value(&h, &self.path, orig, dry_run);
        if matches!(u.outcome, Outcome::Failed { .. } | Outcome::Gone) {
            return u;
        }
        for (p, o) in &self.companions {
            let c = restore_value(&h, p, o, dry_run);
            match c.outcome {
                Outcome::Failed { reason } => {
                    u.outcome = Outcome::Failed {
                        reason: format!("{}: {reason}", p.display()),
                    };
                    return u;
                }
                Outcome::WouldRestore => u.outcome = Outcome::WouldRestore,
                Outcome::Restored if u.outcome == Outcome::AlreadyOriginal => {
                    u.outcome = Outcome::Restored
                }
                _ => {}
            }
        }
        u
    }
    /// The first entry's original is the value to restore.
    fn journal_once(&self) -> bool {
        true
    }
    fn priority(&self) -> Priority {
        if self.path.ends_with("queue/scheduler") {
            Priority::SCHEDULER
        } else {
            Priority::ATTRIBUTE
        }
    }
    /// Every path one innotune sets ([`allowed`]), every value one it
    /// writes or reads back (a word, a number, a mask), and the root `/`
    /// or a tree no symbolic link leads out of.
    fn validate(&self) -> Result<(), String> {
        let paths = || {
            std::iter::once(&self.path)
                .chain(self.remember.iter())
                .chain(self.companions.iter().map(|(p, _)| p))
                .chain(self.then_set.iter().map(|(p, _)| p))
        };
        if let Some(p) = paths().find(|p| !allowed(p)) {
            return Err(format!(
                "{} is not a sysfs attribute innotune sets (only block queues' {}, transparent hugepages, NIC queues' {} and CPUs' cpufreq/scaling_governor)",
                p.display(),
                QUEUE_ATTRS.join("/"),
                NET_QUEUE_ATTRS.join("/")
            ));
        }
        let values = std::iter::once(&self.value)
            .chain(self.original.iter())
            .chain(self.companions.iter().map(|(_, v)| v))
            .chain(self.then_set.iter().map(|(_, v)| v));
        if let Some(v) = values.into_iter().find(|v| !super::plain_value(v)) {
            return Err(format!(
                "{}: {v:?} is not a value innotune writes there",
                self.path.display()
            ));
        }
        if self.label.chars().any(char::is_control) {
            return Err(format!(
                "{}: its label holds control characters",
                self.path.display()
            ));
        }
        super::check_root(&self.root)?;
        for p in paths() {
            super::inside_root(&self.root, p)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduler_change_on_a_tree_round_trips() {
        let t = tempfile::tempdir().unwrap();
        let h = Host::with_root(t.path());
        let q = t.path().join("sys/block/sda/queue");
        std::fs::create_dir_all(&q).unwrap();
        std::fs::write(q.join("scheduler"), "none [mq-deadline] kyber bfq\n").unwrap();
        std::fs::write(q.join("nr_requests"), "64\n").unwrap();
        let mut c: Box<dyn Change> = Box::new(SysfsAttr::scheduler("sda", "none", Some("128")));
        assert!(!c.is_applied(&h).unwrap());
        c.capture(&h).unwrap();
        c.apply(&h).unwrap();
        // A fixture file is not a choice file: it now holds "none".
        assert!(c.is_applied(&h).unwrap());
        assert_eq!(
            std::fs::read_to_string(q.join("nr_requests")).unwrap(),
            "128"
        );
        let json = serde_json::to_string(&c).unwrap();
        assert!(json.contains(r#""kind":"sysfs""#), "{json}");
        let back: Box<dyn Change> = serde_json::from_str(&json).unwrap();
        assert_eq!(back.priority(), Priority::SCHEDULER);
        assert_eq!(back.undo(true).outcome, Outcome::WouldRestore);
        assert_eq!(back.undo(false).outcome, Outcome::Restored);
        assert_eq!(
            std::fs::read_to_string(q.join("scheduler")).unwrap(),
            "mq-deadline"
        );
        assert_eq!(
            std::fs::read_to_string(q.join("nr_requests")).unwrap(),
            "64"
        );
        assert_eq!(back.undo(false).outcome, Outcome::AlreadyOriginal);
        assert!(back.validate().is_ok());
    }

    #[test]
    fn only_block_queues_and_named_attributes_validate() {
        for p in [
            "/sys/block/sda/queue/read_ahead_kb",
            "/sys/class/block/sda1/queue/scheduler",
            "/sys/kernel/mm/transparent_hugepage/enabled",
            "/sys/class/net/eth0/queues/rx-0/rps_cpus",
            "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
            "/sys/devices/system/cpu/cpu127/cpufreq/scaling_governor",
        ] {
            assert!(SysfsAttr::new(p, "1", "x").validate().is_ok(), "{p}");
        }
        for p in [
            "/etc/passwd",
            "/sys/block/../../etc/passwd",
            "/sys/kernel/mm/transparent_hugepage/../../../etc/x",
            "/sys/class/net/eth0/address",
            "/proc/sys/vm/swappiness",
            "sys/block/sda/queue/scheduler",
            "/sys/block/sda/device/delete",
            "/sys/block/sda/queue/iosched/fifo_batch",
            "/sys/class/block/sda/device/rescan",
            "/sys/class/net/eth0/queues/rx-0/../../address",
            "/sys/class/net/eth0/queues/foo/rps_cpus",
            "/sys/devices/system/cpu/cpu0/cpufreq/scaling_max_freq",
            "/sys/devices/system/cpu/cpu0/online",
            "/sys/devices/system/cpu/cpufreq/policy0/scaling_governor",
            "/sys/devices/system/cpu/cpux/cpufreq/scaling_governor",
            "/sys/devices/system/cpu/cpu/cpufreq/scaling_governor",
            "/sys/devices/system/cpu/cpu0/../cpu1/cpufreq/scaling_governor",
        ] {
            assert!(SysfsAttr::new(p, "1", "x").validate().is_err(), "{p}");
        }
        // Values are words, numbers and masks; never a path or a pipe.
        let mut c = SysfsAttr::new("/sys/block/sda/queue/scheduler", "none", "sda");
        c.original = Some("mq-deadline".into());
        assert!(c.validate().is_ok());
        for bad in ["|/tmp/x.sh", "/etc/passwd", "a b", "x\n"] {
            c.original = Some(bad.into());
            assert!(c.validate().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_root_tree_is_never_left_through_another_users_symlink() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("tree");
        let q = root.join("sys/devices/sda/queue");
        std::fs::create_dir_all(&q).unwrap();
        std::fs::create_dir_all(root.join("sys/block")).unwrap();
        std::fs::write(q.join("scheduler"), "none\n").unwrap();
        // A fixture's relative link inside the tree is fine.
        std::os::unix::fs::symlink("../devices/sda", root.join("sys/block/sda")).unwrap();
        let mut c = SysfsAttr::new("/sys/block/sda/queue/scheduler", "none", "sda");
        c.root = root.clone();
        assert!(c.validate().is_ok(), "{:?}", c.validate());
        // So is one this user made out of it (ROOT/sys -> /sys in tests).
        let outside = t.path().join("victim");
        std::fs::write(&outside, "x").unwrap();
        std::fs::remove_file(q.join("scheduler")).unwrap();
        std::os::unix::fs::symlink(&outside, q.join("scheduler")).unwrap();
        assert!(c.validate().is_ok(), "{:?}", c.validate());
        // Not one another user owns, nor anything in a directory of theirs.
        std::os::unix::fs::lchown(q.join("scheduler"), Some(65534), None).unwrap();
        let why = c.validate().unwrap_err();
        assert!(why.contains("owned by uid 65534"), "{why}");
        std::os::unix::fs::lchown(q.join("scheduler"), Some(0), None).unwrap();
        std::os::unix::fs::chown(root.join("sys"), Some(65534), None).unwrap();
        assert!(c.validate().unwrap_err().contains("owned by uid 65534"));
        std::os::unix::fs::chown(root.join("sys"), Some(0), None).unwrap();
        // The root itself must be reached without a link.
        std::os::unix::fs::symlink(&root, t.path().join("alias")).unwrap();
        c.root = t.path().join("alias");
        assert!(c
            .validate()
            .unwrap_err()
            .contains("through a symbolic link"));
        c.root = PathBuf::from("relative");
        assert!(c.validate().is_err());
    }

    #[test]
    fn masks_and_choices_compare_normalised() {
        let m = Path::new("/sys/class/net/e/queues/rx-0/rps_cpus");
        assert_eq!(norm(m, "00000000,00000003\n"), "3");
        let s = Path::new("/sys/block/a/queue/scheduler");
        assert_eq!(norm(s, "none [mq-deadline] kyber\n"), "mq-deadline");
        assert_eq!(norm(s, "none\n"), "none");
    }
}
