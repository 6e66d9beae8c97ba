//! The block-device stack under a mount, walked through sysfs.
//!
//! Entry is the mount's `maj:min` → `/sys/dev/block/MAJ:MIN`, a symlink into
//! `/sys/devices/…/NAME`. From a device directory:
//! - a partition (it has a `partition` file) sits in its disk's directory, so
//!   the parent directory is the whole disk;
//! - md and dm list their members in `slaves/` (symlinks to the members'
//!   directories), which may be partitions, other md/dm devices, …;
//! - a loop device names its backing file in `loop/backing_file`; the stack
//!   continues under the mount holding that file (found in mountinfo, so a
//!   fixture root replays it the same way);
//! - an overlay mount (container images and datadirs) has no device: its
//!   writes land in `upperdir`, so the stack continues under the mount
//!   holding that directory.
//!
//! The walk is depth-first, top device first, and guarded against cycles
//! (a device already visited is not walked again) and absurd depth. What
//! went wrong on the way is kept as typed [`Problem`]s; probe turns them into
//! findings.

use super::block::{self, Kind, Queue};
use super::mount::{Mount, Mounts};
use crate::host::{Host, Known};
use serde::Serialize;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// How a device was reached from the one above it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Relation {
    /// The filesystem's own device (top of the stack).
    Mounted,
    /// The whole disk holding the partition above.
    WholeDisk,
    /// A member (slave) of the md/dm device above.
    Member,
    /// The device under the loop device's backing file.
    Backing,
    /// The device of the filesystem holding an overlay mount's upperdir.
    Upperdir,
}

impl Relation {
    pub fn as_str(&self) -> &'static str {
        match self {
            Relation::Mounted => "mounted",
            Relation::WholeDisk => "whole disk",
            Relation::Member => "member",
            Relation::Backing => "holds the backing file",
            Relation::Upperdir => "holds the overlay upperdir",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Partition {
    pub number: Known<u64>,
    /// Where the partition starts on its disk (`start` × 512).
    pub start_bytes: Known<u64>,
    /// Kernel name of the whole disk.
    pub disk: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Md {
    /// `raid0`, `raid1`, `raid10`, `raid5`, …
    pub level: Known<String>,
    /// Chunk (stripe unit) in bytes; raid1 reports 0.
    pub chunk_bytes: Known<u64>,
    /// Member slots of the array (md/raid_disks).
    pub raid_disks: Known<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Dm {
    /// The mapper name (`vg0-mysql`), as under /dev/mapper.
    pub name: Known<String>,
    pub uuid: Known<String>,
    /// From the uuid prefix: `lvm`, `crypt`, `multipath`, or `other`.
    pub target: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoopInfo {
    /// The backing file as the kernel recorded it (host path).
    pub backing_file: Known<String>,
    /// The kernel marks a backing file that was unlinked with " (deleted)".
    pub backing_deleted: bool,
    /// Whether the loop device does direct I/O to its backing file (loop/dio).
    pub direct_io: Known<bool>,
    /// The mount holding the backing file: its options matter too.
    pub backing_mount: Known<Mount>,
}

/// One device of the stack, with how it was reached.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StackDevice {
    /// Kernel name: `nvme0n1p2`, `sda`, `md0`, `dm-0`, `loop0`, …
    pub name: String,
    /// 0 for the mounted device, +1 per level down.
    pub depth: usize,
    /// Name of the device above (null for the top).
    pub parent: Option<String>,
    pub relation: Relation,
    /// Host path of the device's sysfs directory.
    pub sysfs_path: String,
    pub maj_min: Known<String>,
    /// For a partition, the kind of its disk.
    pub kind: Kind,
    pub model: Known<String>,
    pub size_bytes: Known<u64>,
    /// Set when this is a partition (then `queue` is null: it uses the disk's).
    pub partition: Option<Partition>,
    pub queue: Option<Queue>,
    pub md: Option<Md>,
    pub dm: Option<Dm>,
    #[serde(rename = "loop")]
    pub loop_dev: Option<LoopInfo>,
    /// Names of md/dm members (slaves/), in sysfs order.
    pub members: Vec<String>,
}

/// An overlay mount on the way down: where its writes go.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Overlay {
    /// Mount point of the overlay.
    pub mount_point: String,
    pub upperdir: String,
    /// The mount holding `upperdir` (its filesystem does the overlay's I/O).
    pub upper_mount: Known<Mount>,
}

/// Something the walk could not follow; each becomes a finding in probe.
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    /// A host file or link that could not be read (host path, error).
    Unreadable { path: String, error: String },
    /// A device reached a second time (a cycle in `slaves/`, or a member
    /// shared by two devices of the stack); not walked again.
    Revisited { device: String, from: String },
    /// The stack is deeper than [`MAX_DEPTH`]; the walk stopped.
    TooDeep { device: String },
    /// The mount has no block device under it (tmpfs, proc, network fs).
    NoBlockDevice { mount: Box<Mount> },
    /// An overlay whose upperdir is in no mount visible here (probe runs in
    /// another mount namespace than the container runtime).
    UpperdirNotVisible {
        mount_point: String,
        upperdir: String,
    },
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Problem::Unreadable { path, error } => write!(f, "{path}: {error}"),
            Problem::Revisited { device, from } => write!(
                f,
                "{device} reached again from {from}; not walked twice (cycle or shared member)"
            ),
            Problem::TooDeep { device } => {
                write!(f, "stack deeper than {MAX_DEPTH} levels at {device}; stopped")
            }
            Problem::NoBlockDevice { mount: m } => write!(
                f,
                "{} ({} from {}, device {}) is not backed by a block device",
                m.mount_point, m.fs_type, m.source, m.maj_min
            ),
            Problem::UpperdirNotVisible {
                mount_point,
                upperdir,
            } => write!(
                f,
                "overlay {mount_point}: no mount here contains its upperdir {upperdir} (another mount namespace?)"
            ),
        }
    }
}

/// The stack under one mount.
#[derive(Debug, Clone, Default)]
pub struct Stack {
    /// Top (the filesystem's device) first, depth-first.
    pub devices: Vec<StackDevice>,
    /// Overlay mounts met on the way, top first.
    pub overlays: Vec<Overlay>,
    pub problems: Vec<Problem>,
}

impl Stack {
    /// Kernel names of the devices, each once, top first.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for d in &self.devices {
            if !names.contains(&d.name) {
                names.push(d.name.clone());
            }
        }
        names
    }

    /// The devices that queue requests through an I/O scheduler the kernel
    /// lets one switch (whole disks, loop devices; not bio-based md/dm,
    /// whose `scheduler` is a bare `none`), top first, each once: what
    /// sweep switches and trace's block tracepoints report.
    pub fn scheduled(&self) -> Vec<&StackDevice> {
        let mut out: Vec<&StackDevice> = Vec::new();
        for d in &self.devices {
            if d.queue.as_ref().is_some_and(|q| q.switchable())
                && !out.iter().any(|x| x.name == d.name)
            {
                out.push(d);
            }
        }
        out
    }
}

/// Keep the `devices` that `wanted` names (`--device`), in stack order;
/// every name must be one of them. Nothing wanted keeps them all.
pub fn only<T>(
    devices: Vec<T>,
    name: impl Fn(&T) -> &str,
    wanted: &[String],
    path: &std::path::Path,
) -> anyhow::Result<Vec<T>> {
    if wanted.is_empty() {
        return Ok(devices);
    }
    if let Some(bad) = wanted
        .iter()
        .find(|n| !devices.iter().any(|d| name(d) == n.as_str()))
    {
        let have: Vec<&str> = devices.iter().map(&name).collect();
        return Err(crate::error::Fix::new(
            format!(
                "{bad} is not a device with a scheduler under {}",
                path.display()
            ),
            format!("--device takes one or more of: {}", have.join(", ")),
        )
        .into());
    }
    Ok(devices
        .into_iter()
        .filter(|d| wanted.iter().any(|n| n == name(d)))
        .collect())
}

pub const MAX_DEPTH: usize = 16;

/// Walk everything under mount `m`.
pub fn walk(host: &Host, mounts: &Mounts, m: &Mount) -> Stack {
    let mut w = Walker {
        host,
        mounts,
        visited: HashSet::new(),
        overlays_seen: HashSet::new(),
        stack: Stack::default(),
    };
    w.walk_mount(m, 0, None, Relation::Mounted);
    w.stack
}

struct Walker<'a> {
    host: &'a Host,
    mounts: &'a Mounts,
    visited: HashSet<PathBuf>,
    overlays_seen: HashSet<String>,
    stack: Stack,
}

impl Walker<'_> {
    fn problem(&mut self, p: Problem) {
        self.stack.problems.push(p);
    }

    fn walk_mount(&mut self, m: &Mount, depth: usize, parent: Option<String>, rel: Relation) {
        if let Some(upper) = &m.upperdir {
            // An overlay writes into its upperdir: the stack is that
            // directory's filesystem's. Seen once, so an upperdir inside the
            // overlay itself cannot loop.
            if !self.overlays_seen.insert(m.mount_point.clone()) || depth > MAX_DEPTH {
                return;
            }
            let under = self.mounts.for_path(Path::new(upper)).cloned();
            self.stack.overlays.push(Overlay {
                mount_point: m.mount_point.clone(),
                upperdir: upper.clone(),
                upper_mount: match &under {
                    Some(u) => Known::Value(u.clone()),
                    None => Known::unknown(format!(
                        "no mount contains {upper} (another mount namespace?)"
                    )),
                },
            });
            match under {
                Some(u) if u.mount_point != m.mount_point => {
                    let rel = if depth == 0 { Relation::Upperdir } else { rel };
                    self.walk_mount(&u, depth, parent, rel);
                }
                _ => self.problem(Problem::UpperdirNotVisible {
                    mount_point: m.mount_point.clone(),
                    upperdir: upper.clone(),
                }),
            }
            return;
        }
        match device_dir_of_mount(self.host, m) {
            Ok(sys) => self.walk(sys, rel, depth, parent),
            Err(p) => self.problem(p),
        }
    }

    fn walk(&mut self, sys: PathBuf, relation: Relation, depth: usize, parent: Option<String>) {
        let name = sys
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if depth > MAX_DEPTH {
            self.problem(Problem::TooDeep { device: name });
            return;
        }
        if !self.visited.insert(sys.clone()) {
            self.problem(Problem::Revisited {
                device: name,
                from: parent.unwrap_or_else(|| "?".into()),
            });
            return;
        }
        let host = self.host;
        let maj_min = Known::from_io(host.read_trim(sys.join("dev")), "dev");
        let is_part = host.exists(sys.join("partition"));
        let disk_sys = if is_part {
            sys.parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| sys.clone())
        } else {
            sys.clone()
        };
        let disk_name = disk_sys
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let kind = block::kind_of(host, &disk_sys, &disk_name);
        let partition = is_part.then(|| Partition {
            number: Known::from_io(host.read_u64(sys.join("partition")), "partition"),
            start_bytes: match host.read_u64(sys.join("start")) {
                Ok(s) => s
                    .checked_mul(512)
                    .map(Known::Value)
                    .unwrap_or_else(|| Known::unknown(format!("start: {s} is out of range"))),
                Err(e) => Known::unknown(format!("start: {e}")),
            },
            disk: disk_name.clone(),
        });
        let queue = (!is_part).then(|| block::read_queue(host, &sys));
        let md = (kind == Kind::Md && !is_part).then(|| Md {
            level: Known::from_io(host.read_trim(sys.join("md/level")), "md/level"),
            chunk_bytes: Known::from_io(host.read_u64(sys.join("md/chunk_size")), "md/chunk_size"),
            raid_disks: Known::from_io(host.read_u64(sys.join("md/raid_disks")), "md/raid_disks"),
        });
        let dm = (kind == Kind::Dm).then(|| {
            let uuid = Known::from_io(host.read_trim(sys.join("dm/uuid")), "dm/uuid");
            let target = match uuid.value() {
                Some(u) if u.starts_with("LVM-") => "lvm",
                Some(u) if u.starts_with("CRYPT-") => "crypt",
                Some(u) if u.starts_with("mpath-") => "multipath",
                _ => "other",
            };
            Dm {
                name: Known::from_io(host.read_trim(sys.join("dm/name")), "dm/name"),
                uuid,
                target: target.into(),
            }
        });
        let mut members = Vec::new();
        let mut member_dirs = Vec::new();
        if !is_part {
            if let Ok(names) = host.list(sys.join("slaves")) {
                for n in names {
                    let link = sys.join("slaves").join(&n);
                    match host.resolve(&link) {
                        Ok(p) => {
                            members.push(n);
                            member_dirs.push(p);
                        }
                        Err(e) => self.problem(Problem::Unreadable {
                            path: link.display().to_string(),
                            error: e.to_string(),
                        }),
                    }
                }
            }
        }
        let mut backing: Option<Mount> = None;
        let loop_dev = (kind == Kind::Loop && !is_part).then(|| {
            let raw = host.read_trim(sys.join("loop/backing_file"));
            let (file, deleted) = match &raw {
                Ok(s) => match s.strip_suffix(" (deleted)") {
                    Some(f) => (Known::Value(f.to_string()), true),
                    None => (Known::Value(s.clone()), false),
                },
                Err(e) => (
                    Known::unknown(format!(
                        "loop/backing_file: {e} (loop device not attached?)"
                    )),
                    false,
                ),
            };
            let backing_mount = match file.value() {
                Some(f) => match self.mounts.for_path(Path::new(f)) {
                    Some(m) => {
                        backing = Some(m.clone());
                        Known::Value(m.clone())
                    }
                    None => Known::unknown(format!(
                        "no mount contains {f} (backing file in another mount namespace?)"
                    )),
                },
                None => Known::unknown("backing file unknown"),
            };
            LoopInfo {
                backing_file: file,
                backing_deleted: deleted,
                direct_io: match host.read_u64(sys.join("loop/dio")) {
                    Ok(v) => Known::Value(v != 0),
                    Err(e) => Known::unknown(format!("loop/dio: {e}")),
                },
                backing_mount,
            }
        });
        self.stack.devices.push(StackDevice {
            name: name.clone(),
            depth,
            parent,
            relation,
            sysfs_path: sys.display().to_string(),
            maj_min,
            kind,
            model: block::read_model(host, &disk_sys, kind),
            size_bytes: block::read_size(host, &sys),
            partition,
            queue,
            md,
            dm,
            loop_dev,
            members,
        });
        if is_part {
            self.walk(disk_sys, Relation::WholeDisk, depth + 1, Some(name.clone()));
        }
        for d in member_dirs {
            self.walk(d, Relation::Member, depth + 1, Some(name.clone()));
        }
        if let Some(m) = backing {
            self.walk_mount(&m, depth + 1, Some(name), Relation::Backing);
        }
    }
}

/// The sysfs directory (host path) of a mount's device: through its
/// `maj:min`, else (btrfs and friends report major 0) through the source
/// `/dev/NAME` or `/dev/mapper/NAME`.
pub fn device_dir_of_mount(host: &Host, m: &Mount) -> Result<PathBuf, Problem> {
    if m.major().is_some_and(|maj| maj != 0) {
        let link = format!("/sys/dev/block/{}", m.maj_min);
        match host.resolve(&link) {
            Ok(p) => return Ok(p),
            Err(e) if !m.source.starts_with("/dev/") => {
                return Err(Problem::Unreadable {
                    path: link,
                    error: e.to_string(),
                });
            }
            Err(_) => {}
        }
    }
    if let Some(mapper) = m.source.strip_prefix("/dev/mapper/") {
        for d in host.list("/sys/block").unwrap_or_default() {
            if d.starts_with("dm-") {
                if let Ok(n) = host.read_trim(format!("/sys/block/{d}/dm/name")) {
                    if n == mapper {
                        return host.resolve(format!("/sys/block/{d}")).map_err(|e| {
                            Problem::Unreadable {
                                path: format!("/sys/block/{d}"),
                                error: e.to_string(),
                            }
                        });
                    }
                }
            }
        }
    }
    if let Some(dev) = m.source_device_name() {
        if let Ok(p) = block::sys_dir(host, dev) {
            return Ok(p);
        }
    }
    Err(Problem::NoBlockDevice {
        mount: Box::new(m.clone()),
    })
}
