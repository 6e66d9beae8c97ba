//! Typed results of a bench run. Sweep, reports and advice consume these, so
//! field meanings are part of the JSON schema (docs/json-bench.md). Rust
//! names keep fio's (`iops`, `bw_bytes`, `clat_ns`); the JSON keys follow
//! the units rule of docs/json.md (`iops_per_s`, `bw_bytes_per_s`, `clat.p99_ns`).
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Latency summary in nanoseconds, from a histogram that counted every I/O.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LatencyNs {
    #[serde(rename = "min_ns")]
    pub min: u64,
    #[serde(rename = "mean_ns")]
    pub mean: f64,
    #[serde(rename = "p50_ns")]
    pub p50: u64,
    #[serde(rename = "p90_ns")]
    pub p90: u64,
    #[serde(rename = "p95_ns")]
    pub p95: u64,
    #[serde(rename = "p99_ns")]
    pub p99: u64,
    #[serde(rename = "p99_9_ns")]
    pub p99_9: u64,
    #[serde(rename = "max_ns")]
    pub max: u64,
    /// Number of samples (I/Os or syncs) behind the figures (fio's `N`).
    #[serde(rename = "count")]
    pub n: u64,
    #[serde(rename = "stddev_ns", default)]
    pub stddev: f64,
    /// fio's percentile list, keyed as fio prints them (`"99.900000"`), in ns.
    #[serde(rename = "percentiles_ns", default)]
    pub percentile: BTreeMap<String, u64>,
}

/// One direction (read or write) of one job.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct DirStats {
    pub total_ios: u64,
    pub io_bytes: u64,
    /// I/Os per second over the measured window (fio's `iops`).
    #[serde(rename = "iops_per_s")]
    pub iops: f64,
    /// Bytes per second over the measured window (fio's `bw_bytes`).
    #[serde(rename = "bw_bytes_per_s")]
    pub bw_bytes: f64,
    /// Completion latency (submission → completion), as fio's `clat_ns`.
    #[serde(rename = "clat")]
    pub clat_ns: LatencyNs,
    /// Measured window (fio's per-direction `runtime`, here in seconds).
    #[serde(default)]
    pub runtime_s: f64,
}

/// fsync/fdatasync calls of a job (fio's `sync` object).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SyncStats {
    /// "fsync" or "fdatasync".
    pub kind: String,
    pub total_ios: u64,
    #[serde(rename = "lat")]
    pub lat_ns: LatencyNs,
}

/// CPU innotune's own threads of a job spent in the measured window.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CpuUsage {
    pub user_s: f64,
    pub sys_s: f64,
    /// User CPU as % of the window (fio's `usr_cpu`).
    #[serde(rename = "usr_cpu_pct")]
    pub usr_cpu: f64,
    /// System CPU as % of the window (fio's `sys_cpu`).
    #[serde(rename = "sys_cpu_pct")]
    pub sys_cpu: f64,
    /// (user + sys) / I/Os: the CPU cost of one I/O.
    #[serde(rename = "cpu_per_io_ns")]
    pub ns_per_io: f64,
}

/// One second of the measured window (all threads of the job).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SecondSample {
    /// Seconds since the start of the measured window.
    pub t_s: u64,
    /// I/Os completed in this second (so: per second).
    pub read_iops_per_s: u64,
    pub read_bytes_per_s: u64,
    pub write_iops_per_s: u64,
    pub write_bytes_per_s: u64,
}

/// Results of one job (all its threads merged, as fio's group_reporting).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct JobResult {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub read: Option<DirStats>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub write: Option<DirStats>,
    /// The job's settings as fio options (`rw=randread bs=16k …`).
    #[serde(default)]
    pub options: String,
    /// Engine that ran: "sync" or "io_uring".
    #[serde(default)]
    pub ioengine: String,
    /// Measured window (max over the job's threads, as fio).
    #[serde(default)]
    pub runtime_s: f64,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sync: Option<SyncStats>,
    #[serde(default)]
    pub cpu: CpuUsage,
    #[serde(default)]
    pub series: Vec<SecondSample>,
    /// Files (or the device) the job ran on.
    #[serde(default)]
    pub files: Vec<String>,
}

/// Results of all jobs of a workload that ran together.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct WorkloadResult {
    pub name: String,
    pub jobs: Vec<JobResult>,
    /// Warm-up excluded from every figure.
    #[serde(default)]
    pub ramp_s: f64,
    /// True if the run stopped on time (`runtime`), false if on size.
    #[serde(default)]
    pub time_based: bool,
    /// True if the run was interrupted (Ctrl-C, SIGTERM) before its end.
    #[serde(default)]
    pub interrupted: bool,
    /// Where the host's CPU time went during the measured window (steal
    /// above all: on a shared VM it moves every figure). Absent when
    /// /proc/stat could not be read or the window was shorter than a tick.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub host_cpu: Option<crate::model::cpustat::HostCpu>,
    /// I/Os the jobs keep in flight when every slot is busy: iodepth ×
    /// numjobs per io_uring job, numjobs per sync job, summed.
    #[serde(default)]
    pub depth: u64,
    /// The block devices under the jobs' files, top of the stack first,
    /// over the measured window: iostat -x figures from /proc/diskstats
    /// (fio's "Disk stats", with the time per request and the number in
    /// flight). A device's `aqu_sz` against `depth` says how many of the
    /// I/Os the tool keeps in flight that device held on average; the rest
    /// were on their way through the layers above it. Empty when no block
    /// device is under the files (tmpfs) or the counters could not be read.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub devices: Vec<crate::trace::iostat::Iostat>,
}
