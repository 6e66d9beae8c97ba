//! Typed results of a bench run. Sweep, reports and advice consume these, so
//! field meanings are part of the JSON schema (names follow fio).
use serde::{Deserialize, Serialize};

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
}

/// Results of one job (all its threads merged, as fio's group_reporting).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct JobResult {
    pub name: String,
    pub read: Option<DirStats>,
    pub write: Option<DirStats>,
}

/// Results of all jobs of a workload that ran together.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct WorkloadResult {
    pub name: String,
    pub jobs: Vec<JobResult>,
}
