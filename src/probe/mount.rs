//! Which mount a path lives on, from `/proc/self/mountinfo`.
//!
//! mountinfo (not /proc/mounts) because it carries the device number
//! (`maj:min`), which is the reliable way into `/sys/dev/block`: the `source`
//! column is free text (`/dev/root`, `/dev/mapper/…`, a label) and for btrfs
//! or overlay the number is the only link to a device.

use crate::host::{Host, Known};
use anyhow::{Context, Result};
use serde::Serialize;
use std::path::{Component, Path};

/// One line of mountinfo, decoded.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
    /// Per-mount options (ro/rw, atime handling, nosuid, …).
    pub mount_options: Vec<String>,
    /// Filesystem (super block) options: barrier, discard, data=, …
    pub super_options: Vec<String>,
    /// Decoded meaning of the options InnoDB cares about.
    pub decoded: MountDecoded,
}

/// The options that change what InnoDB's I/O costs, decoded from both lists.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
}

/// Decode mountinfo's octal escapes (`\040` space, `\011` tab, `\012`
/// newline, `\134` backslash). Anything else is kept as is.
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

/// Parse one mountinfo line:
/// `id parent maj:min root mount_point mount_opts [optional…] - fstype source super_opts`.
pub fn parse_line(line: &str) -> Option<Mount> {
    let (left, right) = line.split_once(" - ")?;
    let l: Vec<&str> = left.split(' ').collect();
    if l.len() < 6 {
        return None;
    }
    let r: Vec<&str> = right.split(' ').collect();
    if r.len() < 2 {
        return None;
    }
    let mount_options: Vec<String> = l[5].split(',').map(str::to_string).collect();
    let super_options: Vec<String> = r
        .get(2)
        .map(|s| s.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    let decoded = decode(&mount_options, &super_options);
    Some(Mount {
        mount_point: unescape(l[4]),
        maj_min: l[2].to_string(),
        source: unescape(r[1]),
        fs_type: r[0].to_string(),
        fs_root: unescape(l[3]),
        mount_options,
        super_options,
        decoded,
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

/// Every mount of the host, in mountinfo order (later lines are on top).
pub fn read_mounts(host: &Host) -> Result<Vec<Mount>> {
    let text = host
        .read("/proc/self/mountinfo")
        .with_context(|| format!("reading {}", host.path("/proc/self/mountinfo").display()))?;
    Ok(text.lines().filter_map(parse_line).collect())
}

/// True when `mp` is `path` or one of its ancestors, comparing whole
/// components (so `/var/lib/mysql2` is not under `/var/lib/mysql`).
fn contains(mp: &str, path: &Path) -> bool {
    let mp = Path::new(mp);
    let a: Vec<Component> = mp.components().collect();
    let b: Vec<Component> = path.components().collect();
    a.len() <= b.len() && a.iter().zip(b.iter()).all(|(x, y)| x == y)
}

/// The mount a (normalised, absolute) path lives on: the longest mount point
/// containing it; among equal mount points the last one (it is on top).
pub fn mount_for<'a>(mounts: &'a [Mount], path: &Path) -> Option<&'a Mount> {
    let mut best: Option<&Mount> = None;
    for m in mounts {
        if contains(&m.mount_point, path) {
            let len = Path::new(&m.mount_point).components().count();
            if best.map_or(true, |b| {
                len >= Path::new(&b.mount_point).components().count()
            }) {
                best = Some(m);
            }
        }
    }
    best
}

/// [`mount_for`] as a [`Known`] for the report.
pub fn known_mount_for(host: &Host, path: &Path) -> Known<Mount> {
    match read_mounts(host) {
        Err(e) => Known::unknown(format!("{e:#}")),
        Ok(ms) => match mount_for(&ms, path) {
            Some(m) => Known::Value(m.clone()),
            None => Known::unknown(format!("no mount in mountinfo contains {}", path.display())),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_optional_fields_escapes_and_options() {
        let l = r"36 35 98:0 /mnt1 /mnt/backup\040disk rw,noatime master:1 shared:7 - ext4 /dev/sda4 rw,nobarrier,discard,data=ordered";
        let m = parse_line(l).unwrap();
        assert_eq!(m.mount_point, "/mnt/backup disk");
        assert_eq!(m.maj_min, "98:0");
        assert_eq!(m.major(), Some(98));
        assert_eq!(m.fs_root, "/mnt1");
        assert_eq!(m.source, "/dev/sda4");
        assert_eq!(m.decoded.atime, "noatime");
        assert_eq!(m.decoded.barrier, "off");
        assert_eq!(m.decoded.discard, "on");
        assert!(!m.decoded.read_only);
        let m = parse_line("27 1 254:0 / / ro,relatime - ext4 /dev/vda ro").unwrap();
        assert_eq!(m.decoded.atime, "relatime");
        assert_eq!(m.decoded.barrier, "default");
        assert_eq!(m.decoded.discard, "off");
        assert!(m.decoded.read_only);
        assert_eq!(unescape(r"a\134b\011c\x"), "a\\b\tc\\x");
    }

    #[test]
    fn longest_component_prefix_wins_and_top_mount_wins() {
        let ms: Vec<Mount> = [
            "1 0 8:1 / / rw - ext4 /dev/sda1 rw",
            "2 1 8:2 / /var/lib/mysql rw - xfs /dev/sda2 rw",
            "3 1 8:3 / /var/lib/mysql rw,noatime - xfs /dev/sda3 rw",
        ]
        .iter()
        .filter_map(|l| parse_line(l))
        .collect();
        assert_eq!(
            mount_for(&ms, Path::new("/var/lib/mysql/ibdata1"))
                .unwrap()
                .maj_min,
            "8:3"
        );
        assert_eq!(
            mount_for(&ms, Path::new("/var/lib/mysql2"))
                .unwrap()
                .maj_min,
            "8:1"
        );
        assert_eq!(mount_for(&ms, Path::new("/")).unwrap().maj_min, "8:1");
    }
}
