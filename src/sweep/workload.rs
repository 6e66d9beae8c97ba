//! The workloads a sweep measures, behind one trait: a new kind of
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
}

impl BenchTrial {
    /// Load preset or job file `name` with its files in `workdir`, and
    /// check its jobs (nothing is created).
    pub fn load(name: &str, workdir: &Path) -> Result<BenchTrial> {
        let workload = bench::load_workload(name, workdir).map_err(for_sweep)?;
        let t = BenchTrial {
            name: name.to_string(),
            workload,
        };
        t.validate()?;
        Ok(t)
    }

    /// Are the jobs runnable as they are now (after any resizing)?
    pub fn validate(&self) -> Result<()> {
        for j in &self.workload.jobs {
            j.validate()
                .map_err(for_sweep)
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
                .map_err(for_sweep)
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
        bench::run_workload_hooked(&self.workload, &opts, at_window).map_err(for_sweep)
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
}

impl<'s> OltpTrial<'s> {
    pub fn new(name: &str, workload: crate::oltp::Workload, server: &'s OltpServer) -> Self {
        OltpTrial {
            name: name.to_string(),
            workload,
            server,
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
        self.server.run(self.workload, window).map(|_| ())
    }
    fn measure(&self, window: Duration) -> Result<Measurement> {
        self.server
            .run(self.workload, window)
            .map(|r| Measurement::from_oltp(&r))
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

/// Load every workload named (OLTP names first, then presets and job files).
pub fn load(names: &[String], workdir: &Path) -> Result<Vec<Spec>> {
    names
        .iter()
        .map(|n| match super::server::oltp_workload(n) {
            Some(workload) => Ok(Spec::Oltp {
                name: n.clone(),
                workload,
            }),
            None => BenchTrial::load(n, workdir).map(Spec::Bench),
        })
        .collect()
}

/// The long flags `innotune sweep` has.
fn sweep_flags() -> Vec<String> {
    use clap::Args;
    super::cli::SweepArgs::augment_args(clap::Command::new("sweep"))
        .get_arguments()
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .chain(["--help".to_string(), "--format".into(), "--output".into()])
        .collect()
}

/// `bench`'s errors name `bench`'s flags (`--directory`, `--bs`); in a
/// sweep those do not exist. Keep what went wrong and give a fix that
/// sweep can act on. (Checked against the clap definition, so a flag sweep
/// gains later passes through.)
pub fn for_sweep(e: anyhow::Error) -> anyhow::Error {
    let Some(f) = e.downcast_ref::<Fix>() else {
        return e;
    };
    let flags = sweep_flags();
    let foreign = f
        .how
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .any(|w| !flags.iter().any(|f| f == w));
    if !foreign {
        return e;
    }
    let how = if f.what.contains("not enough space") {
        "free space on PATH's filesystem, or give the sweep smaller files with --size"
    } else if f.what.starts_with("job") || f.what.contains("job file") {
        "fix the job file (fio's option names: size, nrfiles, bs, …), or give --size"
    } else {
        "check PATH's filesystem (free space, permissions) and the workload, then retry"
    };
    Fix::new(f.what.clone(), how).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_fixes_never_name_flags_sweep_lacks() {
        let e = for_sweep(
            Fix::new(
                "not enough space in /x: the files need 1GiB, 10MiB is free",
                "lower --size, or choose another --directory",
            )
            .into(),
        );
        let s = e.to_string();
        assert!(!s.contains("--directory"), "{s}");
        assert!(
            s.contains("--size") && s.contains("not enough space"),
            "{s}"
        );
        // A fix naming only sweep's own flags is kept as it is.
        let kept = for_sweep(Fix::new("x", "give --size 1g or --choose").into());
        assert_eq!(kept.to_string(), "x (fix: give --size 1g or --choose)");
        assert!(sweep_flags().contains(&"--oltp-threads".to_string()));
    }

    #[test]
    fn presets_load_with_their_file_bytes() {
        let t = BenchTrial::load("mixed", Path::new("/nonexistent/work")).unwrap();
        assert_eq!(t.file_bytes(), 2 << 30, "two jobs of 1 GiB");
        assert_eq!(t.unit(), Unit::Iops);
        assert!(matches!(
            load(&["oltp_insert".into()], Path::new("/x")).unwrap()[0],
            Spec::Oltp { .. }
        ));
        let e = load(&["no-such".into()], Path::new("/x")).unwrap_err();
        assert!(e.to_string().contains("no preset or job file"), "{e}");
    }
}
