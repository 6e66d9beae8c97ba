//! Block devices: identity (kind, model, size) and the request queue, from
//! sysfs.
//!
//! [`read_queue`] is the one reader of `queue/` in innotune: probe shows it,
//! sweep picks the devices it may switch from it, check and tune judge it.
//! Every attribute is a [`Known`]: a missing or unreadable sysfs file (old
//! kernel, bio-based device, fixture without it) becomes "unknown, because …"
//! instead of aborting the report. sysfs is not procfs, so procfs-core has
//! no parser for these one-value files; [`Host::read_u64`] is enough.

use super::choice;
use crate::host::{Host, Known};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What kind of device this is, from its driver and name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    Nvme,
    SataScsi,
    Virtio,
    Xen,
    Mmc,
    Md,
    Dm,
    Loop,
    Zram,
    Unknown,
}

impl Kind {
    pub fn as_str(&self) -> &'static str {
        match self {
            Kind::Nvme => "nvme",
            Kind::SataScsi => "sata-scsi",
            Kind::Virtio => "virtio",
            Kind::Xen => "xen",
            Kind::Mmc => "mmc",
            Kind::Md => "md",
            Kind::Dm => "dm",
            Kind::Loop => "loop",
            Kind::Zram => "zram",
            Kind::Unknown => "unknown",
        }
    }

    /// Devices that are software layers over other devices (no model, no cache of their own).
    pub fn is_virtual(&self) -> bool {
        matches!(self, Kind::Md | Kind::Dm | Kind::Loop | Kind::Zram)
    }
}

impl Kind {
    /// The kind named by [`Kind::as_str`] (check's facts keep it as text);
    /// anything else is `Unknown`.
    pub fn from_name(name: &str) -> Kind {
        [
            Kind::Nvme,
            Kind::SataScsi,
            Kind::Virtio,
            Kind::Xen,
            Kind::Mmc,
            Kind::Md,
            Kind::Dm,
            Kind::Loop,
            Kind::Zram,
        ]
        .into_iter()
        .find(|k| k.as_str() == name)
        .unwrap_or(Kind::Unknown)
    }
}

/// What class of disk a device is, for the scheduler class rule (check)
/// and the disk survey (bench --survey): one classifier, so the two never
/// disagree about a disk. Ordered as reports list them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DiskClass {
    Nvme,
    /// SATA or SAS flash behind the SCSI disk driver (rotational=0).
    SataSsd,
    /// A spindle behind the SCSI disk driver (rotational=1).
    Hdd,
    /// A hypervisor's disk (virtio, Xen, an emulated or cloud disk) or a
    /// RAID controller's logical drive: rotational and the queue say
    /// nothing about the media behind it.
    Virtual,
    Loop,
    /// MMC/SD, software layers (md, dm, zram), an unknown rotational flag,
    /// or a driver innotune does not know.
    Other,
}

/// Models of hypervisor and cloud disks and RAID controllers' logical
/// drives (matched case-insensitively as substrings).
const VIRTUAL_MODELS: &[&str] = &[
    "virtual",
    "vmware",
    "qemu",
    "vbox",
    "msft",
    "google persistentdisk",
    "amazon elastic block store",
    "perc",
    "logical volume",
    "megaraid",
    "mr9",
    "raid",
    "smart array",
    "serveraid",
];

/// A disk's class: the driver first, then the model (an emulated disk or a
/// controller's logical drive is virtual whatever its rotational flag
/// says), then the rotational flag (unknown stays unknown: `Other`).
pub fn classify(kind: Kind, rotational: Option<bool>, model: Option<&str>) -> DiskClass {
    let model = model.unwrap_or("").to_ascii_lowercase();
    match kind {
        Kind::Nvme => DiskClass::Nvme,
        Kind::Loop => DiskClass::Loop,
        Kind::Virtio | Kind::Xen => DiskClass::Virtual,
        _ if VIRTUAL_MODELS.iter().any(|m| model.contains(m)) => DiskClass::Virtual,
        Kind::SataScsi => match rotational {
            Some(false) => DiskClass::SataSsd,
            Some(true) => DiskClass::Hdd,
            None => DiskClass::Other,
        },
        Kind::Mmc | Kind::Md | Kind::Dm | Kind::Zram | Kind::Unknown => DiskClass::Other,
    }
}

/// Kind of a whole disk: the bound driver is authoritative (an `sd` name can
/// be SATA, SAS or USB, all behind the SCSI disk driver); the kernel name is
/// the fallback for virtual devices, which have no `device/driver`.
pub fn kind_of(host: &Host, disk_sys: &Path, name: &str) -> Kind {
    if let Ok(target) = host.resolve(disk_sys.join("device/driver")) {
        let drv = target
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        match drv.as_str() {
            "virtio_blk" => return Kind::Virtio,
            "sd" => return Kind::SataScsi,
            "nvme" => return Kind::Nvme,
            "mmcblk" => return Kind::Mmc,
            "vbd" => return Kind::Xen,
            _ => {}
        }
    }
    let starts = |p: &str| name.starts_with(p);
    if starts("nvme") {
        Kind::Nvme
    } else if starts("sd") {
        Kind::SataScsi
    } else if starts("vd") {
        Kind::Virtio
    } else if starts("xvd") {
        Kind::Xen
    } else if starts("mmcblk") {
        Kind::Mmc
    } else if starts("md") {
        Kind::Md
    } else if starts("dm-") {
        Kind::Dm
    } else if starts("loop") {
        Kind::Loop
    } else if starts("zram") {
        Kind::Zram
    } else {
        Kind::Unknown
    }
}

/// Request-queue settings of a whole device (partitions share their disk's).
///
/// Sizes are in bytes and latencies in nanoseconds, per docs/json.md's units
/// rule: the kernel's `X_kb` attributes appear as `X_bytes` (× 1024),
/// `wbt_lat_usec` as `wbt_lat_ns` (× 1000). The scheduler's own tunables
/// keep the kernel's names and text, since their units differ per scheduler
/// and kernel version and a tool writes them back verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Queue {
    /// The active I/O scheduler (the bracketed one in queue/scheduler).
    pub scheduler: Known<String>,
    /// Every scheduler the kernel offers for this queue.
    pub schedulers_available: Known<Vec<String>>,
    pub rotational: Known<bool>,
    pub nr_requests: Known<u64>,
    /// queue/read_ahead_kb × 1024.
    pub read_ahead_bytes: Known<u64>,
    /// queue/max_sectors_kb × 1024: the largest request the block layer builds.
    pub max_sectors_bytes: Known<u64>,
    pub logical_block_size_bytes: Known<u64>,
    pub physical_block_size_bytes: Known<u64>,
    /// `write back` or `write through`, as the kernel prints it.
    pub write_cache: Known<String>,
    /// 0 = merges on, 1 = only simple merges, 2 = no merges.
    pub nomerges: Known<u64>,
    /// 0, 1 (complete on the submitting CPU's group) or 2 (on the submitting CPU).
    pub rq_affinity: Known<u64>,
    /// Writeback-throttling target latency (queue/wbt_lat_usec × 1000); 0 = off.
    pub wbt_lat_ns: Known<u64>,
    /// blk-mq hardware queues (entries of the device's `mq/` directory).
    pub hw_queues: Known<u64>,
    /// The active scheduler's own tunables (queue/iosched/*), name → value.
    pub scheduler_tunables: Known<BTreeMap<String, String>>,
    /// The tag-set flags that decide the kernel's default scheduler, from
    /// debugfs when it is mounted and readable (`None` otherwise). Input
    /// to [`kernel_default`]; not part of the JSON.
    #[serde(skip)]
    pub tag_flags: Option<TagFlags>,
}

impl Queue {
    /// The scheduler can be switched: the kernel offers more than one.
    /// Bio-based md/dm print a bare `none`, which offers nothing.
    pub fn switchable(&self) -> bool {
        self.schedulers_available
            .value()
            .is_some_and(|v| v.len() > 1)
    }
}

/// The blk-mq tag-set flags that decide a queue's default scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct TagFlags {
    /// `BLK_MQ_F_NO_SCHED_BY_DEFAULT`: the driver wants no scheduler unless
    /// one is chosen (loop, a stacking driver whose disk below schedules).
    pub no_sched_by_default: bool,
    /// `BLK_MQ_F_TAG_HCTX_SHARED`: one tag space for all hardware queues
    /// (SCSI hosts with `host_tagset`, e.g. megaraid_sas, smartpqi,
    /// hisi_sas): the kernel schedules them like a single queue.
    pub shared_tags: bool,
}

impl TagFlags {
    /// Parse a debugfs `hctxN/flags` line (block/blk-mq-debugfs.c): names
    /// joined by `|`, after an `alloc_policy=…` word on older kernels
    /// (`alloc_policy=FIFO SHOULD_MERGE|TAG_HCTX_SHARED`).
    pub fn parse(text: &str) -> TagFlags {
        let names: Vec<&str> = text
            .split(|c: char| c == '|' || c.is_whitespace())
            .collect();
        TagFlags {
            no_sched_by_default: names.contains(&"NO_SCHED_BY_DEFAULT"),
            shared_tags: names.contains(&"TAG_HCTX_SHARED"),
        }
    }

    /// What the driver of `kind` is known to set, for hosts whose debugfs
    /// cannot be read: loop sets NO_SCHED_BY_DEFAULT (drivers/block/loop.c);
    /// for the others innotune assumes neither flag.
    pub fn of_kind(kind: Kind) -> TagFlags {
        TagFlags {
            no_sched_by_default: kind == Kind::Loop,
            shared_tags: false,
        }
    }
}

/// The tag-set flags of the disk `name` (`sda`, `loop0`) from debugfs
/// (`/sys/kernel/debug/block/NAME/hctx0/flags`, the only place the kernel
/// shows them); `None` when debugfs is not mounted or not readable (it is
/// root-only).
pub fn read_tag_flags(host: &Host, name: &str) -> Option<TagFlags> {
    host.read(format!("/sys/kernel/debug/block/{name}/hctx0/flags"))
        .ok()
        .map(|t| TagFlags::parse(&t))
}

/// The scheduler the kernel gives a blk-mq queue when nothing sets one,
/// as block/elevator.c decides it (`elevator_get_default`; in newer
/// kernels `use_default_elevator`/`elevator_set_default`):
/// - no scheduler (`none`) when the tag set has NO_SCHED_BY_DEFAULT;
/// - `none` when the queue has other than one hardware queue and its tags
///   are not shared across them;
/// - else `mq-deadline` if the kernel offers it, `none` if not.
///
/// Whether the disk spins does not enter into it. `flags` are the tag-set
/// flags when debugfs showed them, else [`TagFlags::of_kind`]. An unknown
/// queue count (no `mq/` directory in a fixture) is taken as one queue.
pub fn kernel_default(
    kind: Kind,
    hw_queues: Option<u64>,
    flags: Option<TagFlags>,
    offered: &[String],
) -> &'static str {
    let flags = flags.unwrap_or(TagFlags::of_kind(kind));
    if flags.no_sched_by_default {
        return "none";
    }
    if hw_queues.is_some_and(|n| n != 1) && !flags.shared_tags {
        return "none";
    }
    if offered.iter().any(|s| s == "mq-deadline") {
        "mq-deadline"
    } else {
        "none"
    }
}

fn num(host: &Host, p: &Path, what: &str) -> Known<u64> {
    Known::from_io(host.read_u64(p), what)
}

/// `attr` × `factor`, for the kernel's KiB and µs attributes.
fn scaled(host: &Host, p: &Path, what: &str, factor: u64) -> Known<u64> {
    match host.read_u64(p) {
        Ok(v) => match v.checked_mul(factor) {
            Some(x) => Known::Value(x),
            None => Known::unknown(format!("{what}: {v} is out of range")),
        },
        Err(e) => Known::unknown(format!("{what}: {e}")),
    }
}

/// Read the request queue of the device whose sysfs directory (host path)
/// is `dev_sys`, e.g. `/sys/devices/virtual/block/loop0` or `/sys/block/vda`.
pub fn read_queue(host: &Host, dev_sys: &Path) -> Queue {
    let q = dev_sys.join("queue");
    let (scheduler, schedulers_available) = match host.read(q.join("scheduler")) {
        Ok(s) => match choice::parse(&s) {
            Some(c) => (Known::Value(c.active), Known::Value(c.offered)),
            None => {
                let r = format!("queue/scheduler: unexpected content {:?}", s.trim());
                (Known::unknown(&r), Known::unknown(r))
            }
        },
        Err(e) => {
            let r = format!("queue/scheduler: {e}");
            (Known::unknown(&r), Known::unknown(r))
        }
    };
    let rotational = match host.read_u64(q.join("rotational")) {
        Ok(v) => Known::Value(v != 0),
        Err(e) => Known::unknown(format!("queue/rotational: {e}")),
    };
    let hw_queues = match host.list(dev_sys.join("mq")) {
        Ok(v) => Known::Value(v.len() as u64),
        Err(e) => Known::unknown(format!(
            "mq/: {e} (bio-based devices have no blk-mq queues)"
        )),
    };
    let scheduler_tunables = match (&scheduler, host.list(q.join("iosched"))) {
        (Known::Value(s), _) if s == "none" => Known::Value(BTreeMap::new()),
        (_, Ok(names)) => {
            let mut m = BTreeMap::new();
            for n in names {
                if let Ok(v) = host.read_trim(q.join("iosched").join(&n)) {
                    m.insert(n, v);
                }
            }
            Known::Value(m)
        }
        (_, Err(e)) => Known::unknown(format!("queue/iosched/: {e}")),
    };
    Queue {
        scheduler,
        schedulers_available,
        rotational,
        nr_requests: num(host, &q.join("nr_requests"), "queue/nr_requests"),
        read_ahead_bytes: scaled(host, &q.join("read_ahead_kb"), "queue/read_ahead_kb", 1024),
        max_sectors_bytes: scaled(
            host,
            &q.join("max_sectors_kb"),
            "queue/max_sectors_kb",
            1024,
        ),
        logical_block_size_bytes: num(
            host,
            &q.join("logical_block_size"),
            "queue/logical_block_size",
        ),
        physical_block_size_bytes: num(
            host,
            &q.join("physical_block_size"),
            "queue/physical_block_size",
        ),
        write_cache: Known::from_io(host.read_trim(q.join("write_cache")), "queue/write_cache"),
        nomerges: num(host, &q.join("nomerges"), "queue/nomerges"),
        rq_affinity: num(host, &q.join("rq_affinity"), "queue/rq_affinity"),
        wbt_lat_ns: scaled(host, &q.join("wbt_lat_usec"), "queue/wbt_lat_usec", 1000),
        hw_queues,
        scheduler_tunables,
        tag_flags: dev_sys
            .file_name()
            .and_then(|n| read_tag_flags(host, &n.to_string_lossy())),
    }
}

/// A whole disk's `device/serial` (SCSI) or `serial` (NVMe namespace's
/// controller), trimmed; `None` when absent or empty.
pub fn read_serial(host: &Host, disk_sys: &Path) -> Option<String> {
    ["device/serial", "serial"]
        .iter()
        .find_map(|a| host.read_trim(disk_sys.join(a)).ok())
        .filter(|s| !s.is_empty())
}

/// `device/model` alone, trimmed (what a udev rule matches with
/// `ATTRS{model}`); `None` when absent or empty.
pub fn read_model_attr(host: &Host, disk_sys: &Path) -> Option<String> {
    host.read_trim(disk_sys.join("device/model"))
        .ok()
        .filter(|m| !m.is_empty())
}

/// `queue/zoned`: `none`, `host-aware` or `host-managed`.
pub fn read_zoned(host: &Host, dev_sys: &Path) -> Option<String> {
    host.read_trim(dev_sys.join("queue/zoned")).ok()
}

/// `vendor model` of a disk (SCSI has both, NVMe only model; virtual devices none).
pub fn read_model(host: &Host, disk_sys: &Path, kind: Kind) -> Known<String> {
    if kind.is_virtual() {
        return Known::unknown(format!("{} devices have no model", kind.as_str()));
    }
    match host.read_trim(disk_sys.join("device/model")) {
        Ok(m) => {
            let vendor = host
                .read_trim(disk_sys.join("device/vendor"))
                .unwrap_or_default();
            // SCSI-ATA translation reports every SATA disk's vendor as "ATA".
            if vendor.is_empty() || vendor == "ATA" {
                Known::Value(m)
            } else {
                Known::Value(format!("{vendor} {m}"))
            }
        }
        Err(e) if kind == Kind::Virtio => Known::unknown(format!(
            "device/model: {e} (virtio-blk exposes no model; the hypervisor's disk is behind it)"
        )),
        Err(e) => Known::unknown(format!("device/model: {e}")),
    }
}

/// Size from the `size` attribute, which is always in 512-byte sectors
/// whatever the device's logical block size.
pub fn read_size(host: &Host, dev_sys: &Path) -> Known<u64> {
    scaled(host, &dev_sys.join("size"), "size", 512)
}

/// The sysfs directory (host path) of a device or partition by kernel name
/// (`sda`, `sda1`, `loop0`, `dm-0`), through `/sys/class/block`.
pub fn sys_dir(host: &Host, name: &str) -> std::io::Result<PathBuf> {
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{name:?} is not a block device name"),
        ));
    }
    host.resolve(format!("/sys/class/block/{name}"))
}

/// A device and its partitions by exact kernel name and `maj:min`, so one
/// device is never taken for another whose name merely starts the same
/// (`loop1` / `loop10`, `sda` / `sdaa`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceIds {
    /// (kernel name, `maj:min`) of the device first, then its partitions.
    pub ids: Vec<(String, String)>,
}

impl DeviceIds {
    /// The device named `name` and its partitions (subdirectories of its
    /// sysfs directory that have a `partition` file).
    pub fn of(host: &Host, name: &str) -> std::io::Result<DeviceIds> {
        let dir = sys_dir(host, name)?;
        let mut ids = vec![(name.to_string(), host.read_trim(dir.join("dev"))?)];
        for sub in host.list(&dir).unwrap_or_default() {
            let p = dir.join(&sub);
            if host.exists(p.join("partition")) {
                if let Ok(mm) = host.read_trim(p.join("dev")) {
                    ids.push((sub, mm));
                }
            }
        }
        Ok(DeviceIds { ids })
    }

    pub fn has_maj_min(&self, mm: &str) -> bool {
        self.ids.iter().any(|(_, m)| m == mm)
    }

    pub fn has_name(&self, name: &str) -> bool {
        self.ids.iter().any(|(n, _)| n == name)
    }
}

#[cfg(test)]
mod class_tests {
    use super::*;

    fn offered(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn kernel_default_follows_elevator_c() {
        let all = offered(&["none", "mq-deadline", "kyber", "bfq"]);
        // Multi-queue, tags per queue: none, spinning or not.
        assert_eq!(kernel_default(Kind::Nvme, Some(16), None, &all), "none");
        assert_eq!(kernel_default(Kind::SataScsi, Some(4), None, &all), "none");
        // One hardware queue: mq-deadline, if the kernel has it.
        assert_eq!(
            kernel_default(Kind::SataScsi, Some(1), None, &all),
            "mq-deadline"
        );
        assert_eq!(
            kernel_default(Kind::Virtio, Some(1), None, &offered(&["none", "bfq"])),
            "none"
        );
        // loop's tag set says NO_SCHED_BY_DEFAULT, at any queue count.
        assert_eq!(kernel_default(Kind::Loop, Some(1), None, &all), "none");
        // Host-wide tags (a SAS HBA with host_tagset): scheduled like one queue.
        let shared = TagFlags {
            shared_tags: true,
            ..Default::default()
        };
        assert_eq!(
            kernel_default(Kind::SataScsi, Some(8), Some(shared), &all),
            "mq-deadline"
        );
        // debugfs overrides what the kind suggests.
        let nsbd = TagFlags {
            no_sched_by_default: true,
            ..Default::default()
        };
        assert_eq!(
            kernel_default(Kind::Virtio, Some(1), Some(nsbd), &all),
            "none"
        );
        assert_eq!(
            kernel_default(Kind::Loop, Some(1), Some(TagFlags::default()), &all),
            "mq-deadline"
        );
        // No mq/ in the tree: taken as one queue.
        assert_eq!(
            kernel_default(Kind::SataScsi, None, None, &all),
            "mq-deadline"
        );
    }

    #[test]
    fn tag_flags_from_debugfs_old_and_new() {
        let old = TagFlags::parse("alloc_policy=FIFO SHOULD_MERGE|TAG_HCTX_SHARED\n");
        assert_eq!(
            old,
            TagFlags {
                no_sched_by_default: false,
                shared_tags: true
            }
        );
        let new = TagFlags::parse("STACKING|BLOCKING|NO_SCHED_BY_DEFAULT\n");
        assert_eq!(
            new,
            TagFlags {
                no_sched_by_default: true,
                shared_tags: false
            }
        );
        assert_eq!(TagFlags::parse("TAG_QUEUE_SHARED\n"), TagFlags::default());
    }

    #[test]
    fn one_classifier_for_check_and_survey() {
        use DiskClass::*;
        assert_eq!(classify(Kind::Nvme, Some(false), None), Nvme);
        assert_eq!(
            classify(Kind::SataScsi, Some(false), Some("Samsung SSD 870")),
            SataSsd
        );
        assert_eq!(
            classify(Kind::SataScsi, Some(true), Some("ST4000NM0035")),
            Hdd
        );
        // An unknown rotational flag is not taken for a spindle.
        assert_eq!(classify(Kind::SataScsi, None, None), Other);
        // Emulated, cloud and RAID-controller drives, whatever they report.
        for m in [
            "QEMU HARDDISK",
            "Google PersistentDisk",
            "DELL PERC H730P",
            "LOGICAL VOLUME",
        ] {
            assert_eq!(
                classify(Kind::SataScsi, Some(true), Some(m)),
                Virtual,
                "{m}"
            );
        }
        assert_eq!(classify(Kind::Virtio, Some(true), None), Virtual);
        assert_eq!(classify(Kind::Loop, Some(false), None), Loop);
        assert_eq!(classify(Kind::Mmc, Some(false), None), Other);
        assert_eq!(classify(Kind::Md, Some(false), None), Other);
        for k in [Kind::Nvme, Kind::SataScsi, Kind::Loop, Kind::Zram] {
            assert_eq!(Kind::from_name(k.as_str()), k);
        }
        assert_eq!(Kind::from_name("floppy"), Kind::Unknown);
    }
}
