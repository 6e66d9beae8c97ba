//! Typed results of a bench run. Sweep, reports and advice consume these, so
//! field meanings are part of the JSON schema (names follow fio; see
//! docs/json-bench.md).
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Latency summary in nanoseconds, from a histogram that counted every I/O.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LatencyNs {
    pub min: u64,
    pub mean: f64,
    pub p50: u64,
    pub p90: u64,
    pub p95: u64,
    pub p99: u64,
    pub p99_9: u64,
    pub max: u64,
    /// Number of samples (I/Os or syncs) behind the figures.
    pub n: u64,
    #[serde(default)]
    pub stddev: f64,
    /// fio's percentile list, keyed as fio prints them (`"99.900000"`).
    #[serde(default)]
    pub percentile: BTreeMap<String, u64>,
}

/// One direction (read or write) of one job.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct DirStats {
    pub total_ios: u64,
    pub io_bytes: u64,
    /// I/Os per second over the measured window.
    pub iops: f64,
    /// Bytes per second over the measured window.
    pub bw_bytes: f64,
    /// Completion latency (submission → completion), as fio's `clat_ns`.
    pub clat_ns: LatencyNs,
    /// KiB per second, as fio's `bw`.
    #[serde(default)]
    pub bw: f64,
    /// Measured window in milliseconds (fio's `runtime`).
    #[serde(default)]
    pub runtime: u64,
}

/// fsync/fdatasync calls of a job (fio's `sync` object).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SyncStats {
    /// "fsync" or "fdatasync".
    pub kind: String,
    pub total_ios: u64,
    pub lat_ns: LatencyNs,
}

/// CPU innotune's own threads of a job spent in the measured window.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CpuUsage {
    pub user_ns: u64,
    pub sys_ns: u64,
    /// User CPU as % of the window (fio's `usr_cpu`).
    pub usr_cpu: f64,
    /// System CPU as % of the window (fio's `sys_cpu`).
    pub sys_cpu: f64,
    /// (user + sys) / I/Os, in ns: the cost of one I/O.
    pub ns_per_io: f64,
}

/// One second of the measured window (all threads of the job).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SecondSample {
    /// Seconds since the start of the measured window.
    pub t: u64,
    pub read_iops: u64,
    pub read_bw_bytes: u64,
    pub write_iops: u64,
    pub write_bw_bytes: u64,
}

/// Results of one job (all its threads merged, as fio's group_reporting).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct JobResult {
    pub name: String,
    pub read: Option<DirStats>,
    pub write: Option<DirStats>,
    /// The job's settings, fio-style (`rw=randread bs=16KiB …`).
    #[serde(default)]
    pub options: String,
    /// Engine that ran: "sync" or "io_uring".
    #[serde(default)]
    pub ioengine: String,
    /// Measured window in ms (max over the job's threads, as fio).
    #[serde(default)]
    pub runtime_ms: u64,
    #[serde(default)]
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
    /// Warm-up excluded from every figure, in ms.
    #[serde(default)]
    pub ramp_ms: u64,
    /// True if the run stopped on time (`runtime`), false if on size.
    #[serde(default)]
    pub time_based: bool,
    /// True if the run was interrupted (Ctrl-C) before its end.
    #[serde(default)]
    pub interrupted: bool,
}
