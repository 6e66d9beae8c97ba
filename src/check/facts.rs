//! What the rules know about a host: a small, flat, serialisable model.
//!
//! Why a model of its own instead of probe's report: probe's structure is
//! being reworked (a shared host model), and rules should not change with
//! it. One adapter ([`super::adapter`]) fills these facts from probe, the
//! host model's readers of configuration files (`crate::model`) and the
//! server; every rule is a pure function
//! of [`Facts`], so each is unit-tested by building facts by hand.
//!
//! `None` always means "not known here" (an unreadable file, no server);
//! rules that need an unknown value skip, they never guess.

pub use crate::db::{parse_size, ServerEndpoint};
use serde::Serialize;
use std::collections::BTreeMap;

/// Everything `check` knows about the host and its server.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct Facts {
    /// The checked path (the datadir, usually), as a host path.
    pub path: String,
    /// The filesystem holding `path`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mount: Option<MountFacts>,
    /// Every device under `path`, top (the filesystem's device) first.
    pub devices: Vec<DeviceFacts>,
    pub host: HostFacts,
    /// The mysqld/mariadbd process whose datadir this is (or the one connected to).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mysqld: Option<ProcessFacts>,
    /// Rules that set a scheduler on a device of the stack at boot.
    pub scheduler_rules: Vec<SchedulerRule>,
    /// Sysctls set at boot (sysctl.d, sysctl.conf): name → (value, file).
    pub sysctl_boot: BTreeMap<String, (String, String)>,
    /// Transparent hugepages as set at boot: (value, where), from the
    /// kernel command line or a tmpfiles.d entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thp_boot: Option<(String, String)>,
    /// The /etc/fstab line of the datadir's mount, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fstab_line: Option<String>,
    /// udev is installed (its rules directories exist).
    pub udev: bool,
    /// Network interfaces carrying client traffic (the default route's).
    pub nics: Vec<NicFacts>,
    /// net.core.rps_sock_flow_entries.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rps_sock_flow_entries: Option<u64>,
    /// Online CPU ids (`/sys/devices/system/cpu/online`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpus_online: Vec<u32>,
    /// CPU frequency scaling of the online CPUs that have it; empty when
    /// none has a cpufreq directory (a VM, no driver): not visible here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpufreq: Vec<CpuFreqFacts>,
    /// irqbalance runs (it moves interrupts every 10 s, undoing a manual
    /// affinity). Written only when true, so results from before the
    /// client rules read back and write again unchanged.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub irqbalance: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerFacts>,
    /// Sweep results given with `--results`.
    pub sweeps: Vec<SweepFacts>,
    /// Write IOPS of the datadir's filesystem (16 KiB random O_DIRECT
    /// writes), from `--results` or `--measure`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(rename = "write_iops_per_s")]
    pub write_iops: Option<Measured>,
    /// The slow query log given with `--slowlog`, digested.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowlog: Option<SlowlogFacts>,
}

/// A slow query log digested into classes (`check --slowlog FILE`).
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct SlowlogFacts {
    pub file: String,
    pub entries: u64,
    pub classes_total: usize,
    pub query_time_ns: u64,
    /// Entries that carried query-plan attributes (`Full_scan`,
    /// `Tmp_table_on_disk`, …); 0 = the log cannot say whether a statement
    /// scanned or spilled.
    pub with_plan_attributes: u64,
    /// The classes, most total query time first (at most
    /// [`crate::check::slowlog::KEEP`]).
    pub classes: Vec<SlowClass>,
}

/// One class (fingerprint) of the slow log. Only the fingerprint is kept,
/// never a sample statement: samples carry literal values (names, e-mail
/// addresses, password hashes) that a check result shared in a ticket or a
/// fleet report must not spread.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct SlowClass {
    /// pt-query-digest's class id (upper-case MD5 of the fingerprint).
    pub id: String,
    pub fingerprint: String,
    pub count: u64,
    /// Share of the log's total query time, percent.
    pub time_pct: f64,
    pub query_time_ns: u64,
    pub rows_sent: u64,
    pub rows_affected: u64,
    pub rows_examined: u64,
    pub full_scan: u64,
    pub tmp_table_on_disk: u64,
    pub filesort: u64,
    pub databases: Vec<String>,
}

/// The datadir's mount.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct MountFacts {
    pub mount_point: String,
    pub fs_type: String,
    pub source: String,
    pub options: Vec<String>,
    pub super_options: Vec<String>,
    /// `noatime`, `relatime` or `strictatime`.
    pub atime: String,
    /// `on`, `off` or `default`.
    pub barrier: String,
    /// Free bytes (statvfs, live host only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub free_bytes: Option<u64>,
}

/// One block device of the stack.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct DeviceFacts {
    /// Kernel name: `nvme0n1`, `sda`, `md0`, `loop0`.
    pub name: String,
    /// 0 for the filesystem's device, +1 per level down.
    pub depth: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// `mounted`, `whole_disk`, `member` or `backing`.
    pub relation: String,
    /// `nvme`, `sata-scsi`, `virtio`, `xen`, `mmc`, `md`, `dm`, `loop`, …
    pub kind: String,
    /// `vendor model` as the disk reports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// `device/model` alone, trimmed: what a udev rule matches with ATTRS{model}.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_attr: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    pub partition: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_sector: Option<u64>,
    /// The whole disk of a partition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<String>,
    pub schedulers_available: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rotational: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nr_requests: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_ahead_kb: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hw_queues: Option<u64>,
    /// queue/zoned: `none`, `host-aware`, `host-managed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zoned: Option<String>,
    /// The queue's tag-set flags when debugfs showed them: input to the
    /// kernel's default scheduler (`model::block::kernel_default`), not JSON.
    #[serde(skip)]
    pub tag_flags: Option<crate::model::block::TagFlags>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub md_level: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub md_chunk_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub md_raid_disks: Option<u64>,
    /// `lvm`, `crypt`, `multipath`, `other`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dm_target: Option<String>,
    /// The mapper name (`vg0-mysql`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dm_name: Option<String>,
    /// A loop device's backing file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loop_backing: Option<String>,
    pub members: Vec<String>,
}

impl DeviceFacts {
    /// A whole disk whose scheduler can be chosen: a physical or loop
    /// device with blk-mq schedulers (md and dm are skipped: bio-based md
    /// has none, and request-based dm passes requests to the disks under
    /// it, which are checked themselves).
    pub fn is_scheduled_disk(&self) -> bool {
        !self.partition
            && self.kind != "dm"
            && self.kind != "md"
            && self.scheduler.is_some()
            && self.schedulers_available.len() > 1
    }
}

/// Host-wide settings.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct HostFacts {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_release: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpus: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub numa_nodes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swappiness: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dirty_ratio: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dirty_background_ratio: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dirty_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dirty_background_bytes: Option<u64>,
    /// `always`, `madvise` or `never`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thp_enabled: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aio_max_nr: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nr_open: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cmdline: Option<String>,
}

impl HostFacts {
    /// (major, minor) of the running kernel.
    pub fn kernel(&self) -> Option<(u32, u32)> {
        let r = self.kernel_release.as_deref()?;
        let mut it = r.split(|c: char| !c.is_ascii_digit());
        Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
    }

    /// The value of `name=` on the kernel command line.
    pub fn cmdline_param(&self, name: &str) -> Option<String> {
        self.cmdline.as_deref()?.split_whitespace().find_map(|w| {
            w.strip_prefix(name)
                .and_then(|r| r.strip_prefix('='))
                .map(str::to_string)
        })
    }
}

/// An rlimit: a number or unlimited.
/// Serialises as the number, or `"unlimited"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Value(u64),
    Unlimited,
}

impl Serialize for Limit {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Limit::Value(v) => s.serialize_u64(*v),
            Limit::Unlimited => s.serialize_str("unlimited"),
        }
    }
}

impl<'de> serde::Deserialize<'de> for Limit {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(
            match <crate::model::process::LimitValue as serde::Deserialize>::deserialize(d)? {
                crate::model::process::LimitValue::Value(v) => Limit::Value(v),
                crate::model::process::LimitValue::Unlimited => Limit::Unlimited,
            },
        )
    }
}

impl Limit {
    /// Is the limit below `n`?
    pub fn below(&self, n: u64) -> bool {
        matches!(self, Limit::Value(v) if *v < n)
    }
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Limit::Value(v) => write!(f, "{v}"),
            Limit::Unlimited => f.write_str("unlimited"),
        }
    }
}

/// The server process.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct ProcessFacts {
    pub pid: u32,
    /// `mysqld` or `mariadbd`.
    pub comm: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nofile_soft: Option<Limit>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nofile_hard: Option<Limit>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nproc_soft: Option<Limit>,
    /// The systemd service it runs in (`mariadb.service`), from its cgroup.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    /// LimitNOFILE set for that service by a unit file or drop-in: (value, file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit_nofile: Option<(String, String)>,
}

/// A rule (udev, systemd unit, tmpfiles.d) that sets a scheduler at boot.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct SchedulerRule {
    /// `udev`, `systemd` or `tmpfiles`.
    pub mechanism: String,
    pub file: String,
    pub line: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<String>,
    /// Stack devices it applies to.
    pub devices: Vec<String>,
}

/// One NIC and its receive queues.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct NicFacts {
    pub name: String,
    pub rx_queues: Vec<RxQueue>,
    /// Interrupt counts of the NIC's MSI vectors, when they can be read
    /// (`/sys/class/net/NIC/device/msi_irqs` joined with /proc/interrupts).
    pub irq_counts: Vec<u64>,
    /// Its receive vectors (named rx/input), by irq number.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rx_irqs: Vec<IrqFacts>,
}

/// One receive interrupt of a NIC.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct IrqFacts {
    pub irq: u32,
    /// Its name in /proc/interrupts (`eth0-rx-0`, `virtio2-input.0`).
    pub name: String,
    /// (CPU, interrupts since boot).
    pub per_cpu: Vec<(u32, u64)>,
    /// `smp_affinity`: the hex mask of CPUs it may land on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub smp_affinity: Option<String>,
    /// `effective_affinity_list`: where the kernel delivers it now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effective: Option<Vec<u32>>,
}

/// One online CPU's frequency scaling.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct CpuFreqFacts {
    pub cpu: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub governor: Option<String>,
    /// Governors the driver offers.
    pub available: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// Its policy (`policy0`): CPUs of one policy share one governor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct RxQueue {
    /// `rx-0`.
    pub name: String,
    /// Hex CPU mask as sysfs shows it (`0` = RPS off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rps_cpus: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rps_flow_cnt: Option<u64>,
}

/// The server, as seen through one connection.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct ServerFacts {
    /// `mysql` or `mariadb`.
    pub flavor: String,
    pub version: String,
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
    /// How innotune reached it (socket or host:port, user; never a password).
    pub endpoint: ServerEndpoint,
    /// SHOW GLOBAL VARIABLES, names lowercase.
    pub variables: BTreeMap<String, String>,
    /// SHOW GLOBAL STATUS at the end of the sample window, names lowercase.
    pub status: BTreeMap<String, u64>,
    /// Counter deltas over the sample window; `None` without a window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<Window>,
    /// Values set in the server's option files: name → (value, `file:line`).
    pub configured: BTreeMap<String, (String, String)>,
    /// The server's option files, in the order it reads them.
    pub option_files: Vec<String>,
    /// `!includedir` directories of those files, in order.
    pub includedirs: Vec<String>,
    /// Bytes of InnoDB tablespaces in the datadir.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub innodb_data_bytes: Option<u64>,
    /// Some user table has a BLOB/TEXT column.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub has_blob_columns: Option<bool>,
}

/// Counters over the sample window.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct Window {
    #[serde(rename = "duration_s")]
    pub seconds: f64,
    /// End minus start of every numeric status counter, names lowercase.
    pub delta: BTreeMap<String, i64>,
    /// Average of Innodb_data_pending_reads over the per-second samples.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_reads_avg: Option<f64>,
    /// Highest dirty share of the buffer pool seen, percent.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(rename = "dirty_max_pct")]
    pub dirty_pct_max: Option<f64>,
}

impl Window {
    /// Rate per second of a counter over the window.
    pub fn rate(&self, name: &str) -> Option<f64> {
        let d = *self.delta.get(&name.to_ascii_lowercase())?;
        (self.seconds > 0.0).then(|| d as f64 / self.seconds)
    }
    pub fn delta(&self, name: &str) -> Option<i64> {
        self.delta.get(&name.to_ascii_lowercase()).copied()
    }
}

impl ServerFacts {
    pub fn is_mariadb(&self) -> bool {
        self.flavor == "mariadb"
    }
    pub fn is_mysql(&self) -> bool {
        self.flavor == "mysql"
    }
    /// Version at least (major, minor, patch).
    pub fn at_least(&self, major: u32, minor: u32, patch: u32) -> bool {
        (self.major, self.minor, self.patch) >= (major, minor, patch)
    }
    pub fn var(&self, name: &str) -> Option<&str> {
        self.variables
            .get(&name.to_ascii_lowercase())
            .map(|s| s.as_str())
    }
    pub fn var_u64(&self, name: &str) -> Option<u64> {
        let v = self.var(name)?;
        v.parse::<u64>()
            .ok()
            .or_else(|| v.parse::<f64>().ok().map(|f| f as u64))
    }
    /// ON/OFF, 1/0, YES/NO as a bool.
    pub fn var_on(&self, name: &str) -> Option<bool> {
        match self.var(name)?.to_ascii_uppercase().as_str() {
            "ON" | "1" | "YES" | "TRUE" => Some(true),
            "OFF" | "0" | "NO" | "FALSE" => Some(false),
            _ => None,
        }
    }
    pub fn status(&self, name: &str) -> Option<u64> {
        self.status.get(&name.to_ascii_lowercase()).copied()
    }
    /// `MySQL 8.0.36` / `MariaDB 10.11.19`.
    pub fn label(&self) -> String {
        format!(
            "{} {}.{}.{}",
            if self.is_mariadb() {
                "MariaDB"
            } else {
                "MySQL"
            },
            self.major,
            self.minor,
            self.patch
        )
    }
    /// The value configured in the option files for `name`, if any.
    pub fn configured(&self, name: &str) -> Option<&(String, String)> {
        self.configured
            .get(&name.to_ascii_lowercase().replace('-', "_"))
    }
}

/// A sweep's verdict for the devices it switched.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct SweepFacts {
    /// The results file.
    pub file: String,
    /// Devices the sweep switched.
    pub devices: Vec<String>,
    /// Its recommended scheduler.
    pub scheduler: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nr_requests: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_ahead_kb: Option<u64>,
    /// Some workload measured it significantly better than the baseline.
    pub significant: bool,
    /// The sweep's own one-line reason.
    pub reason: String,
}

/// A measured quantity and where it comes from.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct Measured {
    pub value: f64,
    /// `bench --results FILE` or `page-write bench, 10 s in DIR`.
    pub source: String,
}

/// Bytes for people: `192 MiB`, `1.5 GiB`.
pub fn human_bytes(b: u64) -> String {
    const U: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1024.0 && i < U.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if (v - v.round()).abs() < 0.05 {
        format!("{:.0} {}", v, U[i])
    } else {
        format!("{:.1} {}", v, U[i])
    }
}

/// Bytes the way my.cnf writes them: the largest exact unit (`192M`, `2G`).
pub fn cnf_bytes(b: u64) -> String {
    for (suffix, m) in [("G", 1u64 << 30), ("M", 1 << 20), ("K", 1 << 10)] {
        if b >= m && b % m == 0 {
            return format!("{}{}", b / m, suffix);
        }
    }
    b.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("128M"), Some(128 << 20));
        assert_eq!(parse_size("134217728"), Some(134217728));
        assert_eq!(parse_size("1g"), Some(1 << 30));
        assert_eq!(parse_size("x"), None);
        assert_eq!(cnf_bytes(192 << 20), "192M");
        assert_eq!(cnf_bytes(3 << 30), "3G");
        assert_eq!(cnf_bytes(1000), "1000");
        assert_eq!(human_bytes(200 << 20), "200 MiB");
        assert_eq!(human_bytes(1536 << 20), "1.5 GiB");
    }

    #[test]
    fn kernel_and_cmdline() {
        let h = HostFacts {
            kernel_release: Some("6.1.0-18-amd64".into()),
            cmdline: Some("ro quiet elevator=deadline transparent_hugepage=never".into()),
            ..Default::default()
        };
        assert_eq!(h.kernel(), Some((6, 1)));
        assert_eq!(h.cmdline_param("elevator").as_deref(), Some("deadline"));
        assert_eq!(
            h.cmdline_param("transparent_hugepage").as_deref(),
            Some("never")
        );
        assert_eq!(h.cmdline_param("root"), None);
    }
}
