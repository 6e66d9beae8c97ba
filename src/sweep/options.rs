//! What a sweep is asked to do, as plain data: `sweep::run` builds it from
//! the command line, a library caller (the future `tune`) builds it in code.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

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
    pub oltp: super::server::OltpSettings,
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

/// What a running sweep is doing, for a progress display.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Laying out a workload's files, before any device is switched.
    Layout { workload: String, bytes: u64 },
    /// Starting the OLTP server and loading its tables.
    Server {
        dir: PathBuf,
        tables: u32,
        table_size: u32,
    },
    /// A trial is about to run (`index` counts from 1 to `total`).
    Trial {
        round: u32,
        rounds: u32,
        candidate: String,
        workload: String,
        index: usize,
        total: usize,
    },
    /// The last trial is over: stopping the server, putting devices back.
    Restoring,
}

impl Event {
    /// One line for a status display.
    pub fn message(&self) -> String {
        match self {
            Event::Layout { workload, bytes } => format!(
                "laying out {} of files for {workload}",
                crate::units::fmt_size(*bytes)
            ),
            Event::Server {
                dir,
                tables,
                table_size,
            } => format!(
                "starting the OLTP server in {} and loading {tables} × {table_size} rows",
                dir.display()
            ),
            Event::Trial {
                round,
                rounds,
                candidate,
                workload,
                index,
                total,
            } => format!(
                "round {}/{rounds} · {candidate} · {workload} · trial {index}/{total}",
                round + 1
            ),
            Event::Restoring => "putting the devices back".to_string(),
        }
    }
}

/// A progress callback: called on the sweeping thread, keep it short.
pub type Callback = Arc<dyn Fn(&Event) + Send + Sync>;

/// Where [`Event`]s go. Never stdout: that is the report's.
#[derive(Clone, Default)]
pub enum Progress {
    /// innotune's status line on stderr (shown only on a terminal).
    #[default]
    StatusLine,
    /// Nowhere.
    Quiet,
    /// To the caller.
    Callback(Callback),
}

impl fmt::Debug for Progress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Progress::StatusLine => "StatusLine",
            Progress::Quiet => "Quiet",
            Progress::Callback(_) => "Callback",
        })
    }
}

/// A running progress display.
pub(super) struct Reporter {
    bar: Option<indicatif::ProgressBar>,
    callback: Option<Callback>,
}

impl Reporter {
    pub(super) fn new(p: &Progress) -> Reporter {
        match p {
            Progress::StatusLine => Reporter {
                bar: Some(crate::output::progress::status_line()),
                callback: None,
            },
            Progress::Quiet => Reporter {
                bar: None,
                callback: None,
            },
            Progress::Callback(c) => Reporter {
                bar: None,
                callback: Some(c.clone()),
            },
        }
    }

    pub(super) fn event(&self, e: Event) {
        if let Some(b) = &self.bar {
            b.set_message(e.message());
            b.tick();
        }
        if let Some(c) = &self.callback {
            c(&e);
        }
    }
}

impl Drop for Reporter {
    fn drop(&mut self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
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
