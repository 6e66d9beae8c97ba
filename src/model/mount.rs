//! Mounts, from `/proc/self/mountinfo` only.
//!
//! mountinfo (not /proc/mounts) because it carries the device number
//! (`maj:min`), which is the reliable way into `/sys/dev/block`: the `source`
//! column is free text (`/dev/root`, `/dev/mapper/…`, a label) and for btrfs
//! or overlay the number is the only link to a device. This module is the one
//! mount reader in innotune ([`Mounts::read`]).
//!
//! The line parser is hand-written rather than procfs-core's
//! `MountInfo::from_line`, because that one (0.18) keeps the kernel's octal
//! escapes (`/mnt/backup\040disk` stays as is, so a mount point with a space
//! never matches its path), stores the options in a `HashMap` (losing the
//! kernel's order, which users compare with `findmnt`), and turns a source
//! named `none` into no source. The format is one line of space-separated
//! fields (proc(5)); the parser is short and tested below.

use crate::host::Host;
use anyhow::{Context, Result};
use serde::Serialize;
use std::path::{Component, Path};

/// One line of mountinfo, decoded.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Mount {
    /// Where it is mounted (octal escapes such as `\040` decoded).
    pub mount_point: String,
    /// `maj:min` of the filesystem's device (major 0 = no block device).
    pub maj_min: String,
    /// The mount source as the kernel shows it (`/dev/vda`, `/dev/mapper/vg-lv`).
    pub source: String,
    pub fs_type: String,
    /// Subtree of the filesystem mounted here (not `/` for bind mounts).
    pub fs_root: String,
    /// Per-mount options (ro/rw, atime handling, nosuid, …), in the kernel's order.
    pub mount_options: Vec<String>,
    /// Filesystem (super block) options: barrier, discard, data=, …
    pub super_options: Vec<String>,
    /// Decoded meaning of the options InnoDB cares about.
    pub decoded: MountDecoded,
    /// For an overlay filesystem (container images and datadirs): the
    /// directory that receives every write, whose filesystem does the I/O.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upperdir: Option<String>,
}

/// The options that change what InnoDB's I/O costs, decoded from both lists.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct MountDecoded {
    /// `noatime`, `relatime` or `strictatime` (no flag in mountinfo = strict).
    pub atime: String,
    /// `on`, `off`, or `default` (the filesystem's default: on for ext4/xfs).
    pub barrier: String,
    /// `on` (online discard), `async` (btrfs), or `off`.
    pub discard: String,
    pub read_only: bool,
}

impl Mount {
    pub fn major(&self) -> Option<u32> {
        self.maj_min.split(':').next()?.parse().ok()
    }

    /// A filesystem with no block device of its own (tmpfs, proc, overlay,
    /// network filesystems, btrfs' anonymous numbers).
    pub fn is_anonymous(&self) -> bool {
        self.major() == Some(0)
    }

    /// `/dev/NAME` (or `/dev/mapper/NAME`) of the source, when it is one.
    pub fn source_device_name(&self) -> Option<&str> {
        let dev = self.source.strip_prefix("/dev/")?;
        Some(dev.rsplit('/').next().unwrap_or(dev))
    }
}

/// Decode mountinfo's octal escapes (`\040` space, `\011` tab, `\012`
/// newline, `\134` backslash, and `\054` comma inside option values).
/// Anything else is kept as is.
pub fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') as u32 * 64
                + (b[i + 2] - b'0') as u32 * 8
                + (b[i + 3] - b'0') as u32;
            if v <= 255 {
                out.push(v as u8);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn options(field: &str) -> Vec<String> {
    // Split first: an escaped comma (`\054`) inside a value is not a separator.
    field
        .split(',')
        .filter(|o| !o.is_empty())
        .map(unescape)
        .collect()
}

/// Parse one mountinfo line:
/// `id parent maj:min root mount_point mount_opts [optional…] - fstype source super_opts`.
pub fn parse_line(line: &str) -> Option<Mount> {
    let (left, right) = line.split_once(" - ")?;
    let l: Vec<&str> = left.split(' ').collect();
    if l.len() < 6 || !l[2].contains(':') {
        return None;
    }
    let r: Vec<&str> = right.split(' ').collect();
    if r.len() < 2 {
        return None;
    }
    let mount_options = options(l[5]);
    let super_options = r.get(2).map(|s| options(s)).unwrap_or_default();
    let decoded = decode(&mount_options, &super_options);
    let fs_type = unescape(r[0]);
    let upperdir = (fs_type == "overlay")
        .then(|| {
            super_options
                .iter()
                .find_map(|o| o.strip_prefix("upperdir=").map(str::to_string))
        })
        .flatten();
    Some(Mount {
        mount_point: unescape(l[4]),
        maj_min: l[2].to_string(),
        source: unescape(r[1]),
        fs_type,
        fs_root: unescape(l[3]),
        mount_options,
        super_options,
        decoded,
        upperdir,
    })
}

fn decode(mount: &[String], sup: &[String]) -> MountDecoded {
    let has = |v: &[String], k: &str| v.iter().any(|o| o == k);
    let atime = if has(mount, "noatime") {
        "noatime"
    } else if has(mount, "relatime") {
        "relatime"
    } else {
        "strictatime"
    };
    // ext4 shows `nobarrier` / `barrier=0`; older kernels and other
    // filesystems may show `barrier=1` or `barrier`. XFS removed nobarrier.
    let mut barrier = "default";
    for o in sup {
        match o.as_str() {
            "nobarrier" | "barrier=0" => barrier = "off",
            "barrier" | "barrier=1" => barrier = "on",
            _ => {}
        }
    }
    let mut discard = "off";
    for o in sup {
        match o.as_str() {
            "discard" | "discard=sync" => discard = "on",
            "discard=async" => discard = "async",
            "nodiscard" => discard = "off",
            _ => {}
        }
    }
    MountDecoded {
        atime: atime.into(),
        barrier: barrier.into(),
        discard: discard.into(),
        read_only: has(mount, "ro"),
    }
}

/// Every mount of the host, in mountinfo order (a later line is mounted
/// later, so it is on top of an earlier one at the same point).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Mounts(pub Vec<Mount>);

impl Mounts {
    /// Read `/proc/self/mountinfo` through `host`. Lines that do not parse
    /// are skipped (a fixture or a future kernel may add fields we do not know).
    pub fn read(host: &Host) -> Result<Mounts> {
        let text = host
            .read("/proc/self/mountinfo")
            .with_context(|| format!("reading {}", host.path("/proc/self/mountinfo").display()))?;
        Ok(Mounts::parse(&text))
    }

    pub fn parse(text: &str) -> Mounts {
        Mounts(text.lines().filter_map(parse_line).collect())
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Mount> {
        self.0.iter()
    }

    /// The mount a (normalised, absolute) path lives on: the longest mount
    /// point containing it, whole components compared (`/var/lib/mysql2` is
    /// not under `/var/lib/mysql`); among equal mount points the last one
    /// mounted (it is on top).
    pub fn for_path(&self, path: &Path) -> Option<&Mount> {
        let mut best: Option<(&Mount, usize)> = None;
        for m in &self.0 {
            if let Some(len) = prefix_len(&m.mount_point, path) {
                if best.map_or(true, |(_, b)| len >= b) {
                    best = Some((m, len));
                }
            }
        }
        best.map(|(m, _)| m)
    }

    /// Mounts of the given device or its partitions, compared exactly: by
    /// device number, or (for filesystems that show an anonymous number, as
    /// btrfs does) by the source's `/dev/` name. Never by name prefix, so
    /// `loop1` does not match a mounted `loop10`.
    pub fn of_device<'a>(&'a self, ids: &super::block::DeviceIds) -> Vec<&'a Mount> {
        self.0
            .iter()
            .filter(|m| {
                ids.has_maj_min(&m.maj_min)
                    || (m.is_anonymous() && m.source_device_name().is_some_and(|n| ids.has_name(n)))
            })
            .collect()
    }
}

/// Number of components of `mp` when it is `path` or one of its ancestors.
/// The /etc/fstab line that mounts `mount_point` (fields `\040`-decoded
/// for the match), trimmed; `None` without one.
pub fn fstab_line(host: &Host, mount_point: &str) -> Option<String> {
    let t = host.read("/etc/fstab").ok()?;
    t.lines()
        .find(|l| {
            let l = l.trim();
            !l.starts_with('#')
                && l.split_whitespace()
                    .nth(1)
                    .is_some_and(|m| unescape(m) == mount_point)
        })
        .map(|l| l.trim().to_string())
}

/// Bytes an unprivileged user may still write on the filesystem holding
/// `path` (statvfs `f_bavail × f_frsize`); live hosts only, since a
/// fixture tree's filesystem is not the one it describes.
pub fn free_bytes(host: &Host, path: &Path) -> Option<u64> {
    if !host.is_live() {
        return None;
    }
    rustix::fs::statvfs(path)
        .ok()
        .map(|s| s.f_bavail.saturating_mul(s.f_frsize))
}

fn prefix_len(mp: &str, path: &Path) -> Option<usize> {
    let a: Vec<Component> = Path::new(mp).components().collect();
    let b: Vec<Component> = path.components().collect();
    (a.len() <= b.len() && a.iter().zip(b.iter()).all(|(x, y)| x == y)).then_some(a.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::block::DeviceIds;

    #[test]
    fn parses_optional_fields_escapes_and_options() {
        let l = r"36 35 98:0 /mnt1 /mnt/backup\040disk rw,noatime master:1 shared:7 - ext4 /dev/sda4 rw,nobarrier,discard,data=ordered";
        let m = parse_line(l).unwrap();
        assert_eq!(m.mount_point, "/mnt/backup disk");
        assert_eq!(m.maj_min, "98:0");
        assert_eq!(m.major(), Some(98));
        assert_eq!(m.fs_root, "/mnt1");
        assert_eq!(m.source, "/dev/sda4");
        assert_eq!(m.mount_options, ["rw", "noatime"], "kernel order kept");
        assert_eq!(m.decoded.atime, "noatime");
        assert_eq!(m.decoded.barrier, "off");
        assert_eq!(m.decoded.discard, "on");
        assert!(!m.decoded.read_only);
        assert_eq!(m.upperdir, None);
        let m = parse_line("27 1 254:0 / / ro,relatime - ext4 /dev/vda ro").unwrap();
        assert_eq!(m.decoded.atime, "relatime");
        assert_eq!(m.decoded.barrier, "default");
        assert_eq!(m.decoded.discard, "off");
        assert!(m.decoded.read_only);
        assert_eq!(unescape(r"a\134b\011c\x"), "a\\b\tc\\x");
        assert_eq!(unescape(r"new\012line\0"), "new\nline\\0");
        assert_eq!(unescape(r"end\04"), "end\\04", "a cut escape stays as is");
        assert_eq!(parse_line("garbage"), None);
        assert_eq!(parse_line("1 2 3 4 5 6 - x y z"), None, "no maj:min");
    }

    #[test]
    fn overlay_upperdir_is_decoded_per_option() {
        let l = r"812 600 0:52 / /var/lib/docker/overlay2/abc/merged rw,relatime - overlay overlay rw,lowerdir=/var/lib/docker/overlay2/l/X:/var/lib/docker/overlay2/l/Y,upperdir=/var/lib/docker/overlay2/abc/d\054iff,workdir=/var/lib/docker/overlay2/abc/work";
        let m = parse_line(l).unwrap();
        assert_eq!(m.fs_type, "overlay");
        assert!(m.is_anonymous());
        assert_eq!(
            m.upperdir.as_deref(),
            Some("/var/lib/docker/overlay2/abc/d,iff"),
            "an escaped comma does not split the option"
        );
    }

    #[test]
    fn longest_component_prefix_wins_and_top_mount_wins() {
        let ms = Mounts::parse(
            "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n\
             2 1 8:2 / /var/lib/mysql rw - xfs /dev/sda2 rw\n\
             3 1 8:3 / /var/lib/mysql rw,noatime - xfs /dev/sda3 rw\n\
             4 1 8:4 / /var rw - xfs /dev/sda4 rw\n",
        );
        let at = |p: &str| ms.for_path(Path::new(p)).unwrap().maj_min.clone();
        assert_eq!(at("/var/lib/mysql/ibdata1"), "8:3", "last mounted wins");
        assert_eq!(at("/var/lib/mysql2"), "8:4", "whole components only");
        assert_eq!(at("/"), "8:1");
        assert_eq!(at("/varx"), "8:1");
    }

    #[test]
    fn device_matching_is_exact_loop1_is_not_loop10() {
        let ms = Mounts::parse(
            "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n\
             2 1 7:10 / /mnt/ten rw - ext4 /dev/loop10 rw\n\
             3 1 0:44 / /mnt/btrfs rw - btrfs /dev/loop2 rw\n",
        );
        let ids = |v: &[(&str, &str)]| DeviceIds {
            ids: v
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
        };
        assert!(ms.of_device(&ids(&[("loop1", "7:1")])).is_empty());
        let ten = ms.of_device(&ids(&[("loop10", "7:10")]));
        assert_eq!(ten.len(), 1);
        assert_eq!(ten[0].mount_point, "/mnt/ten");
        let sda = ms.of_device(&ids(&[("sda", "8:0"), ("sda1", "8:1")]));
        assert_eq!(sda[0].mount_point, "/", "a partition's mount is the disk's");
        let b = ms.of_device(&ids(&[("loop2", "7:2")]));
        assert_eq!(
            b.len(),
            1,
            "btrfs: anonymous number, matched by source name"
        );
        assert!(ms.of_device(&ids(&[("loop", "7:0")])).is_empty());
    }
}
