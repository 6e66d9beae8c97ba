//! What a sweep is asked to do, as plain data: `sweep::run` builds it from
//! the command line, a library caller (the future `tune`) builds it in code.

use std::path::PathBuf;
use std::time::Duration;

pub(super) use crate::trial::progress::Reporter;
pub use crate::trial::progress::{Callback, Event, Progress};

/// Most rounds of a `--sequential` sweep without `--rounds` or `--budget`.
pub const DEFAULT_SEQUENTIAL_ROUNDS: u32 = 10;

/// Workloads run when none is named.
pub const DEFAULT_WORKLOADS: [&str; 4] = ["page-read", "page-write", "fsync-4k", "mixed"];

/// Everything [`super::execute`] needs. `SweepOptions::new(path)` gives the
/// command line's defaults.
#[derive(Debug, Clone)]
pub struct SweepOptions {
    /// A directory on the filesystem to test; the work directory
    /// `PATH/.innotune-sweep.PID` is created in it and removed afterwards.
    pub path: PathBuf,
    /// Schedulers to compare; empty: every one all switched devices offer.
    pub schedulers: Vec<String>,
    /// Switch only these devices of the stack; empty: every one with a scheduler.
    pub devices: Vec<String>,
    /// Extra dimensions, tried with each scheduler.
    pub nr_requests: Vec<u32>,
    pub read_ahead_kb: Vec<u32>,
    /// Bench presets, job files, OLTP workloads; empty: [`DEFAULT_WORKLOADS`].
    pub workloads: Vec<String>,
    pub rounds: u32,
    pub trial: Duration,
    pub warmup: Duration,
    pub budget: Option<Duration>,
    /// Group-sequential design: `rounds` (or what the budget fits) is the
    /// most rounds, and the sweep stops after the first round at which every
    /// verdict the recommendation needs crossed its boundary. False: a fixed
    /// design of exactly `rounds` rounds.
    pub sequential: bool,
    pub objective: Objective,
    /// Smallest relative effect that counts (0.03 = 3%).
    pub min_effect: f64,
    /// Seed of trial order and bootstrap; None: random (reported).
    pub seed: Option<u64>,
    /// When the devices' current setting is not among the candidates, pick
    /// a candidate that was significantly better than every other one
    /// (instead of keeping the unmeasured current setting).
    pub choose: bool,
    /// Trace each measured window and record the split (`--trace`).
    pub trace: bool,
    /// Size of each file workload's file set (fio's `size`, split over its
    /// jobs in proportion to their own sizes); None: the workloads' own,
    /// scaled down to fit the filesystem when they do not.
    pub size: Option<u64>,
    pub oltp: crate::trial::server::OltpSettings,
    /// Where progress goes.
    pub progress: Progress,
}

impl SweepOptions {
    /// The command line's defaults for `path`.
    pub fn new(path: impl Into<PathBuf>) -> SweepOptions {
        SweepOptions {
            path: path.into(),
            schedulers: Vec::new(),
            devices: Vec::new(),
            nr_requests: Vec::new(),
            read_ahead_kb: Vec::new(),
            workloads: Vec::new(),
            rounds: 5,
            trial: Duration::from_secs(10),
            warmup: Duration::from_secs(2),
            budget: None,
            sequential: false,
            objective: Objective::Balanced,
            min_effect: 0.03,
            seed: None,
            choose: false,
            trace: false,
            size: None,
            oltp: Default::default(),
            progress: Progress::StatusLine,
        }
    }

    /// The workloads to run: as given, else the defaults.
    pub fn workload_names(&self) -> Vec<String> {
        if self.workloads.is_empty() {
            DEFAULT_WORKLOADS.iter().map(|s| s.to_string()).collect()
        } else {
            self.workloads.clone()
        }
    }
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Objective {
    /// IOPS decides (tps for OLTP workloads).
    Throughput,
    /// p99 latency decides (the transaction's for OLTP workloads).
    Latency,
    /// IOPS (tps) per millisecond of p99 latency decides (one composite per
    /// trial, so each workload is one test: +10% IOPS bought with +10% p99
    /// is a tie).
    Balanced,
}
