//! One block device's identity and queue settings, from its sysfs directory.
//!
//! Every attribute is a [`Known`]: a missing or unreadable sysfs file (old
//! kernel, bio-based device, fixture without it) becomes "unknown, because …"
//! instead of aborting the report.

use crate::host::{Host, Known};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// What kind of device this is, from its driver and name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Queue {
    /// The active I/O scheduler (the bracketed one in queue/scheduler).
    pub scheduler: Known<String>,
    /// Every scheduler the kernel offers for this queue.
    pub schedulers_available: Known<Vec<String>>,
    pub rotational: Known<bool>,
    pub nr_requests: Known<u64>,
    pub read_ahead_kb: Known<u64>,
    pub max_sectors_kb: Known<u64>,
    pub logical_block_size: Known<u64>,
    pub physical_block_size: Known<u64>,
    /// `write back` or `write through`, as the kernel prints it.
    pub write_cache: Known<String>,
    /// 0 = merges on, 1 = only simple merges, 2 = no merges.
    pub nomerges: Known<u64>,
    /// 0, 1 (complete on the submitting CPU's group) or 2 (on the submitting CPU).
    pub rq_affinity: Known<u64>,
    /// Writeback-throttling target latency in µs; 0 = off.
    pub wbt_lat_usec: Known<u64>,
    /// blk-mq hardware queues (entries of the device's `mq/` directory).
    pub hw_queues: Known<u64>,
    /// The active scheduler's own tunables (queue/iosched/*), name → value.
    pub scheduler_tunables: Known<BTreeMap<String, String>>,
}

/// Split `none [mq-deadline] kyber bfq` into (active, available). A file
/// without brackets (bio-based md/dm print just `none`) has that one active.
pub fn parse_scheduler(s: &str) -> Option<(String, Vec<String>)> {
    let mut active = None;
    let mut all = Vec::new();
    for w in s.split_whitespace() {
        if let Some(inner) = w.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
            active = Some(inner.to_string());
            all.push(inner.to_string());
        } else {
            all.push(w.to_string());
        }
    }
    if active.is_none() && all.len() == 1 {
        active = Some(all[0].clone());
    }
    Some((active?, all))
}

fn num(host: &Host, p: &Path, what: &str) -> Known<u64> {
    Known::from_io(host.read_u64(p), what)
}

pub fn read_queue(host: &Host, dev_sys: &Path) -> Queue {
    let q = dev_sys.join("queue");
    let sched = host.read_trim(q.join("scheduler"));
    let (scheduler, schedulers_available) = match &sched {
        Ok(s) => match parse_scheduler(s) {
            Some((a, all)) => (Known::Value(a), Known::Value(all)),
            None => {
                let r = format!("queue/scheduler: unexpected content {s:?}");
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
        read_ahead_kb: num(host, &q.join("read_ahead_kb"), "queue/read_ahead_kb"),
        max_sectors_kb: num(host, &q.join("max_sectors_kb"), "queue/max_sectors_kb"),
        logical_block_size: num(
            host,
            &q.join("logical_block_size"),
            "queue/logical_block_size",
        ),
        physical_block_size: num(
            host,
            &q.join("physical_block_size"),
            "queue/physical_block_size",
        ),
        write_cache: Known::from_io(host.read_trim(q.join("write_cache")), "queue/write_cache"),
        nomerges: num(host, &q.join("nomerges"), "queue/nomerges"),
        rq_affinity: num(host, &q.join("rq_affinity"), "queue/rq_affinity"),
        wbt_lat_usec: num(host, &q.join("wbt_lat_usec"), "queue/wbt_lat_usec"),
        hw_queues,
        scheduler_tunables,
    }
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
    match host.read_u64(dev_sys.join("size")) {
        Ok(s) => Known::Value(s * 512),
        Err(e) => Known::unknown(format!("size: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduler_line() {
        assert_eq!(
            parse_scheduler("none [mq-deadline] kyber bfq"),
            Some((
                "mq-deadline".into(),
                vec![
                    "none".into(),
                    "mq-deadline".into(),
                    "kyber".into(),
                    "bfq".into()
                ]
            ))
        );
        assert_eq!(
            parse_scheduler("none"),
            Some(("none".into(), vec!["none".into()]))
        );
        assert_eq!(parse_scheduler("none kyber"), None);
    }
}
