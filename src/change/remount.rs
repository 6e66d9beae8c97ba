//! A mount option of one filesystem, switched live with
//! `mount -o remount,OPTION MOUNT_POINT` (`innotune prove --change
//! mount=noatime`). Only the access-time options are switched
//! ([`OPTIONS`]): each belongs to a family (`noatime`/`relatime`/
//! `strictatime`, `nodiratime`/`diratime`, `lazytime`/`nolazytime`), and
//! `capture` records the family's state found in mountinfo (read through
//! [`Host`]) and the filesystem's device number, so `undo` remounts with
//! exactly that state, and only while the same filesystem is mounted there.
//! Which filesystems may be switched at all is decided before anything is
//! (`safety::refuse_remount`); `validate` refuses a journal entry for `/`,
//! a kernel or runtime filesystem, or any option but those.

use super::{plain_abs, Change, Outcome, Priority, Undone};
use crate::error::Fix;
use crate::host::Host;
use crate::model::mount::{Mount, Mounts};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The mount options innotune switches, each with its family: the options
/// that set the same thing (one of a family holds at a time).
pub const OPTIONS: &[(&str, &str)] = &[
    ("noatime", "atime"),
    ("relatime", "atime"),
    ("strictatime", "atime"),
    ("nodiratime", "diratime"),
    ("diratime", "diratime"),
    ("lazytime", "lazytime"),
    ("nolazytime", "lazytime"),
];

/// The family of `option`, if innotune switches it.
pub fn family(option: &str) -> Option<&'static str> {
    OPTIONS.iter().find(|(o, _)| *o == option).map(|(_, f)| *f)
}

/// Which option of `family` holds on `m` (mountinfo shows no flag for
/// strictatime, diratime or nolazytime).
pub fn state(m: &Mount, family: &str) -> String {
    let has = |o: &str| {
        m.mount_options
            .iter()
            .chain(&m.super_options)
            .any(|x| x == o)
    };
    match family {
        "atime" => m.decoded.atime.clone(),
        "diratime" if has("nodiratime") => "nodiratime".into(),
        "diratime" => "diratime".into(),
        _ if has("lazytime") => "lazytime".into(),
        _ => "nolazytime".into(),
    }
}

/// The mount whose mount point is `mp` exactly (the top one).
pub fn mounted_at(host: &Host, mp: &Path) -> Result<Option<Mount>> {
    let mounts = Mounts::read(host)?;
    Ok(mounts
        .iter()
        .rfind(|m| Path::new(&m.mount_point) == mp)
        .cloned())
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Remount {
    /// The filesystem's mount point, host-absolute.
    pub mount_point: PathBuf,
    /// The option this change sets (`noatime`).
    pub option: String,
    /// Its family's option before; set by `capture`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<String>,
    /// `maj:min` of the filesystem captured there: undo touches no other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maj_min: Option<String>,
}

impl Remount {
    /// Set `option` on the filesystem mounted at `mount_point`.
    pub fn set(mount_point: impl Into<PathBuf>, option: &str) -> Remount {
        Remount {
            mount_point: mount_point.into(),
            option: option.into(),
            original: None,
            maj_min: None,
        }
    }

    fn family(&self) -> &'static str {
        family(&self.option).unwrap_or("atime")
    }
}

/// What `mount -o remount,…` is given for `option`. mount(8) keeps the
/// flags the mount has (from mountinfo) and adds the given ones, and the
/// kernel lets `noatime` win over `relatime`: leaving `noatime` takes an
/// explicit `atime` (clear it) first.
fn remount_options(option: &str) -> String {
    match option {
        "relatime" | "strictatime" => format!("remount,atime,{option}"),
        o => format!("remount,{o}"),
    }
}

/// `mount -o remount,OPTION MP`, one error line with mount's own words.
fn remount(mp: &Path, option: &str) -> Result<()> {
    let opts = remount_options(option);
    let out = std::process::Command::new("mount")
        .arg("-o")
        .arg(&opts)
        .arg(mp)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| {
            Fix::new(
                format!("cannot run mount: {e}"),
                "install util-linux's mount",
            )
        })?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(Fix::new(
            format!("mount -o {opts} {} failed: {}", mp.display(), err.trim()),
            if rustix::process::geteuid().is_root() {
                "check that the filesystem accepts this option"
            } else {
                "run as root"
            },
        )
        .into());
    }
    Ok(())
}

#[typetag::serde(name = "remount")]
impl Change for Remount {
    fn target(&self) -> String {
        format!("{} ({})", self.mount_point.display(), self.family())
    }
    fn describe(&self) -> String {
        match &self.original {
            Some(o) => format!(
                "{} mount option: {o} → {}",
                self.mount_point.display(),
                self.option
            ),
            None => format!(
                "{} mount option: set {}",
                self.mount_point.display(),
                self.option
            ),
        }
    }
    fn capture(&mut self, host: &Host) -> Result<()> {
        let m = mounted_at(host, &self.mount_point)?.ok_or_else(|| {
            Fix::new(
                format!("{} is not a mount point", self.mount_point.display()),
                "give the mount point of the filesystem to switch; nothing was changed",
            )
        })?;
        self.original = Some(state(&m, self.family()));
        self.maj_min = Some(m.maj_min);
        Ok(())
    }
    fn apply(&mut self, _host: &Host) -> Result<()> {
        remount(&self.mount_point, &self.option)
    }
    fn is_applied(&self, host: &Host) -> Result<bool> {
        Ok(mounted_at(host, &self.mount_point)?
            .is_some_and(|m| state(&m, self.family()) == self.option))
    }
    fn undo(&self, dry_run: bool) -> Undone {
        let Some(original) = &self.original else {
            return Undone::outcome(Outcome::Gone);
        };
        let mut u = Undone::outcome(Outcome::Restored);
        u.original = Some(original.clone());
        let now = match mounted_at(&Host::live(), &self.mount_point) {
            Ok(Some(m)) => m,
            Ok(None) => {
                u.outcome = Outcome::Gone;
                return u;
            }
            Err(e) => {
                u.outcome = Outcome::Failed {
                    reason: crate::error::one_line(&e),
                };
                return u;
            }
        };
        if self.maj_min.as_ref().is_some_and(|mm| *mm != now.maj_min) {
            u.outcome = Outcome::Conflict {
                reason: format!(
                    "another filesystem ({}) is mounted at {} now",
                    now.maj_min,
                    self.mount_point.display()
                ),
            };
            return u;
        }
        let found = state(&now, self.family());
        u.found = Some(found.clone());
        if &found == original {
            u.outcome = Outcome::AlreadyOriginal;
            return u;
        }
        if dry_run {
            u.outcome = Outcome::WouldRestore;
            return u;
        }
        if let Err(e) = remount(&self.mount_point, original) {
            u.outcome = Outcome::Failed {
                reason: crate::error::one_line(&e),
            };
            return u;
        }
        match mounted_at(&Host::live(), &self.mount_point) {
            Ok(Some(m)) if state(&m, self.family()) == *original => {}
            Ok(m) => {
                u.outcome = Outcome::Failed {
                    reason: format!(
                        "remounted with {original} but it reads {}",
                        m.map(|m| state(&m, self.family()))
                            .unwrap_or_else(|| "unmounted".into())
                    ),
                }
            }
            Err(e) => {
                u.outcome = Outcome::Failed {
                    reason: crate::error::one_line(&e),
                }
            }
        }
        u
    }
    /// The first entry's original is the state to put back.
    fn journal_once(&self) -> bool {
        true
    }
    fn priority(&self) -> Priority {
        Priority::ATTRIBUTE
    }
    /// Only an access-time option ([`OPTIONS`]) as option and original, of
    /// one family, on a plain absolute mount point that is not `/` nor a
    /// kernel or runtime filesystem (`/proc`, `/sys`, `/dev`, `/run`, `/boot`).
    fn validate(&self) -> Result<(), String> {
        let mp = &self.mount_point;
        if !plain_abs(mp) || mp.as_os_str().len() > 4096 {
            return Err(format!(
                "{} is not a plain absolute mount point",
                mp.display()
            ));
        }
        if mp == Path::new("/")
            || ["/proc", "/sys", "/dev", "/run", "/boot"]
                .iter()
                .any(|s| mp.starts_with(s))
        {
            return Err(format!(
                "{} is not a filesystem innotune remounts (never /, /proc, /sys, /dev, /run or /boot)",
                mp.display()
            ));
        }
        let Some(f) = family(&self.option) else {
            return Err(format!(
                "{:?} is not a mount option innotune switches (only {})",
                self.option,
                OPTIONS
                    .iter()
                    .map(|(o, _)| *o)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        };
        if let Some(o) = &self.original {
            if family(o) != Some(f) {
                return Err(format!(
                    "{o:?} is not a {f} option to put back on {}",
                    mp.display()
                ));
            }
        }
        if let Some(mm) = &self.maj_min {
            let ok = mm
                .split_once(':')
                .is_some_and(|(a, b)| a.parse::<u32>().is_ok() && b.parse::<u32>().is_ok());
            if !ok {
                return Err(format!("{mm:?} is not a device number"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validate_refuses_what_innotune_never_remounts() {
        let ok = |mp: &str, o: &str, orig: Option<&str>| {
            let mut r = Remount::set(mp, o);
            r.original = orig.map(String::from);
            r.maj_min = Some("7:3".into());
            r.validate()
        };
        assert!(ok("/mnt/scratch", "noatime", Some("relatime")).is_ok());
        assert!(ok("/var/tmp/x", "lazytime", Some("nolazytime")).is_ok());
        for (mp, o, orig) in [
            ("/", "noatime", Some("relatime")),
            ("/proc", "noatime", None),
            ("/sys/fs/cgroup", "noatime", None),
            ("/run/user/0", "noatime", None),
            ("/boot", "noatime", None),
            ("relative", "noatime", None),
            ("/mnt/../", "noatime", None),
            ("/mnt/x", "ro", None),
            ("/mnt/x", "rw", None),
            ("/mnt/x", "noatime,ro", None),
            ("/mnt/x", "remount", None),
            ("/mnt/x", "noatime", Some("ro")),
            ("/mnt/x", "noatime", Some("nodiratime")),
        ] {
            assert!(ok(mp, o, orig).is_err(), "{mp} {o} {orig:?}");
        }
        let mut r = Remount::set("/mnt/x", "noatime");
        r.maj_min = Some("7:3; rm".into());
        assert!(r.validate().is_err());
    }

    #[test]
    fn state_reads_each_family_from_mountinfo() {
        let m = crate::model::mount::parse_line(
            "36 35 7:3 / /mnt/s rw,nodiratime,relatime shared:1 - ext4 /dev/loop3 rw,lazytime",
        )
        .unwrap();
        assert_eq!(state(&m, "atime"), "relatime");
        assert_eq!(state(&m, "diratime"), "nodiratime");
        assert_eq!(state(&m, "lazytime"), "lazytime");
        let m = crate::model::mount::parse_line(
            "36 35 7:3 / /mnt/s rw,noatime shared:1 - ext4 /dev/loop3 rw",
        )
        .unwrap();
        assert_eq!(state(&m, "atime"), "noatime");
        assert_eq!(state(&m, "diratime"), "diratime");
        assert_eq!(state(&m, "lazytime"), "nolazytime");
    }
}
