//! The workloads a trial run (sweep, prove) measures, behind one trait: a new kind of
//! workload (a replayed trace, a slow-log digest) is one more
//! `impl TrialWorkload`, and the trial loop does not change.

use super::server::OltpServer;
use super::trials::{Measurement, Unit};
use crate::bench;
use crate::error::Fix;
use anyhow::{Context, Result};
use std::path::Path;
use std::time::Duration;

/// One workload of a sweep, ready to run trial after trial.
pub trait TrialWorkload {
    /// The name the user gave (preset, job file path, OLTP workload):
    /// trials, results and verdicts are keyed by it.
    fn name(&self) -> &str;

    /// What its throughput counts.
    fn unit(&self) -> Unit;

    /// Run without measuring, so the measured window starts in a steady
    /// state under the candidate just set.
    fn warm_up(&self, window: Duration) -> Result<()>;

    /// Run for the measured window and say what it did.
    fn measure(&self, window: Duration) -> Result<Measurement>;

    /// Warm up for `warmup`, then measure `window`; `at_window` is called
    /// as the measured window opens. By default two runs, one after the
    /// other.
    fn warm_and_measure(
        &self,
        warmup: Duration,
        window: Duration,
        at_window: &mut dyn FnMut(),
    ) -> Result<Measurement> {
        if !warmup.is_zero() {
            self.warm_up(warmup)?;
        }
        at_window();
        self.measure(window)
    }
}

/// File I/O from `bench` (a preset or a job file), its files in the
/// sweep's work directory.
#[derive(Debug, Clone)]
pub struct BenchTrial {
    name: String,
    pub workload: bench::Workload,
    /// The calling command's rewrite of bench's errors ([`for_command`]).
    fix: Fixer,
}

/// A command's rewrite of `bench`'s errors into fixes it can act on.
pub type Fixer = fn(anyhow::Error) -> anyhow::Error;

impl BenchTrial {
    /// Load preset or job file `name` with its files in `workdir`, and
    /// check its jobs (nothing is created).
    pub fn load(name: &str, workdir: &Path, fix: Fixer) -> Result<BenchTrial> {
        let workload = bench::load_workload(name, workdir).map_err(fix)?;
        let t = BenchTrial {
            name: name.to_string(),
            workload,
            fix,
        };
        t.validate()?;
        Ok(t)
    }

    /// Are the jobs runnable as they are now (after any resizing)?
    pub fn validate(&self) -> Result<()> {
        for j in &self.workload.jobs {
            j.validate()
                .map_err(self.fix)
                .with_context(|| format!("workload {}", self.name))?;
        }
        Ok(())
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Bytes of files this workload lays out (a raw-device job lays out none).
    pub fn file_bytes(&self) -> u64 {
        self.workload
            .jobs
            .iter()
            .filter(|j| j.filename.is_none())
            .map(|j| j.file_size() * j.nrfiles as u64)
            .sum()
    }

    /// Lay out every job's files now, so that no trial does (and a full
    /// filesystem shows before any device is switched).
    pub fn lay_out(&self) -> Result<()> {
        let w = &self.workload;
        for j in &w.jobs {
            bench::files::prepare(&w.directory, j, w.allow_datadir, w.allow_raw_device)
                .map_err(self.fix)
                .with_context(|| format!("laying out the files of {}", self.name))?;
        }
        Ok(())
    }

    /// One run of `ramp` then `window`, `at_window` called in between.
    fn run(
        &self,
        ramp: Duration,
        window: Duration,
        at_window: Option<&mut dyn FnMut()>,
    ) -> Result<bench::result::WorkloadResult> {
        let opts = bench::RunOpts {
            runtime: window,
            ramp,
            progress: false,
        };
        bench::run_workload_hooked(&self.workload, &opts, at_window).map_err(self.fix)
    }
}

impl TrialWorkload for BenchTrial {
    fn name(&self) -> &str {
        &self.name
    }
    fn unit(&self) -> Unit {
        Unit::Iops
    }
    fn warm_up(&self, window: Duration) -> Result<()> {
        self.run(Duration::ZERO, window, None).map(|_| ())
    }
    fn measure(&self, window: Duration) -> Result<Measurement> {
        self.run(Duration::ZERO, window, None)
            .map(|r| Measurement::from_bench(&r))
    }
    /// One run, the warm-up as its ramp (fio's `ramp_time`): the window
    /// follows the warm-up with the queues still full. Two runs drained
    /// every in-flight I/O between them (for `mixed`, 32 MiB of writes
    /// behind the scheduler under test) and started from empty queues
    /// again, so the window opened on a restart rather than on the steady
    /// state the warm-up had reached.
    fn warm_and_measure(
        &self,
        warmup: Duration,
        window: Duration,
        at_window: &mut dyn FnMut(),
    ) -> Result<Measurement> {
        self.run(warmup, window, Some(at_window))
            .map(|r| Measurement::from_bench(&r))
    }
}

/// Transactions against the sweep's one OLTP server.
pub struct OltpTrial<'s> {
    name: String,
    workload: crate::oltp::Workload,
    server: &'s OltpServer,
    /// Client threads; None: the server's setting.
    threads: Option<u32>,
}

impl<'s> OltpTrial<'s> {
    pub fn new(name: &str, workload: crate::oltp::Workload, server: &'s OltpServer) -> Self {
        OltpTrial {
            name: name.to_string(),
            workload,
            server,
            threads: None,
        }
    }

    /// The same workload at `threads` client threads, named `name`
    /// (`oltp_read_write@64`).
    pub fn with_threads(
        name: &str,
        workload: crate::oltp::Workload,
        server: &'s OltpServer,
        threads: u32,
    ) -> Self {
        OltpTrial {
            threads: Some(threads),
            ..OltpTrial::new(name, workload, server)
        }
    }

    fn run(&self, window: Duration) -> Result<crate::oltp::OltpResult> {
        match self.threads {
            Some(t) => self.server.run_threads(self.workload, window, t),
            None => self.server.run(self.workload, window),
        }
    }
}

impl TrialWorkload for OltpTrial<'_> {
    fn name(&self) -> &str {
        &self.name
    }
    fn unit(&self) -> Unit {
        Unit::Tps
    }
    fn warm_up(&self, window: Duration) -> Result<()> {
        self.run(window).map(|_| ())
    }
    fn measure(&self, window: Duration) -> Result<Measurement> {
        self.run(window).map(|r| Measurement::from_oltp(&r))
    }
}

/// A workload as loaded and checked before anything on the host changes.
#[derive(Debug, Clone)]
pub enum Spec {
    Bench(BenchTrial),
    Oltp {
        name: String,
        workload: crate::oltp::Workload,
    },
}

impl Spec {
    pub fn name(&self) -> &str {
        match self {
            Spec::Bench(b) => b.name(),
            Spec::Oltp { name, .. } => name,
        }
    }
}

/// Load every workload named (OLTP names first, then presets and job
/// files), bench's errors rewritten by `fix`.
pub fn load(names: &[String], workdir: &Path, fix: Fixer) -> Result<Vec<Spec>> {
    if let Some(log) = names.iter().find_map(|n| n.strip_prefix("replay:")) {
        // Not built: a trial is a time-boxed window on a server the trial
        // engine starts with sysbench's tables, a replay runs a log once
        // on a copy of the user's data, per class. Refused rather than
        // read as a job file named `replay:…`.
        return Err(Fix::new(
            format!("--workload replay:{log}: a replayed log is not a trial workload (trials run time-boxed windows on sysbench's tables; a replay runs the log once, on a copy of your data)"),
            format!("judge the change on the log's statements with `innotune replay {log} --rounds 6 --format json -o before.json` on a copy (`innotune sandbox start --from-live`), make the change, then `innotune replay {log} --rounds 6 --compare before.json`"),
        )
        .into());
    }
    names
        .iter()
        .map(|n| match super::server::oltp_workload(n) {
            Some(workload) => Ok(Spec::Oltp {
                name: n.clone(),
                workload,
            }),
            None => BenchTrial::load(n, workdir, fix).map(Spec::Bench),
        })
        .collect()
}

/// `bench`'s errors name `bench`'s flags (`--directory`, `--bs`); in a
/// command that runs workloads as trials (`sweep`, `prove`) those do not
/// exist. Keep what went wrong and give a fix `cmd` can act on, given the
/// long flags `flags` it has. (Checked against the caller's clap
/// definition, so a flag it gains later passes through.)
pub fn for_command(e: anyhow::Error, cmd: &str, flags: &[String]) -> anyhow::Error {
    let Some(f) = e.downcast_ref::<Fix>() else {
        return e;
    };
    let foreign = f
        .how
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .any(|w| !flags.iter().any(|f| f == w));
    if !foreign {
        return e;
    }
    let how = if f.what.contains("not enough space") {
        format!("free space on PATH's filesystem, or give the {cmd} smaller files with --size")
    } else if f.what.starts_with("job") || f.what.contains("job file") {
        "fix the job file (fio's option names: size, nrfiles, bs, …), or give --size".to_string()
    } else {
        "check PATH's filesystem (free space, permissions) and the workload, then retry".to_string()
    };
    Fix::new(f.what.clone(), how).into()
}

/// The long flags of a clap command `A` (with `--help`, `--format`,
/// `--output`), for [`for_command`].
pub fn long_flags<A: clap::Args>(name: &'static str) -> Vec<String> {
    A::augment_args(clap::Command::new(name))
        .get_arguments()
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .chain(["--help".to_string(), "--format".into(), "--output".into()])
        .collect()
}
