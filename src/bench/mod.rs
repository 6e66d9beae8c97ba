//! `innotune bench`: the I/O load generator.
//!
//! - [`job`]: typed job options (fio's names, one table for CLI/TOML/presets)
//! - [`presets`]: the practice's measurements, named for what they model
//! - [`files`]: layout, raw devices, datadir refusals; [`manifest`]: which
//!   files are provably innotune's (no symlink, inode and owner recorded)
//! - [`engine`]: sync (pread/pwrite) and io_uring behind one trait
//! - [`runner`]: threads, ramp, stop rules, syncs, series, CPU; [`progress`]:
//!   the live status line
//! - [`result`]: typed results of a run; [`report`]: what the command
//!   returns (the JSON schema); [`render`]: the document for text/markdown
//! - [`survey`]: `--survey`, every whole disk read-only, alone and per class
//!
//! Flow: [`cli::BenchArgs`] → its [`Command`] impl (a workload:
//! `measure` → [`run_workload`], which sweep calls too) →
//! [`report::BenchReport`] in [`BenchOutput`] → exporters.
pub mod cli;
pub mod engine;
pub mod files;
pub mod job;
pub mod jobfile;
pub mod manifest;
pub mod presets;
pub mod progress;
pub mod reach;
pub mod render;
pub mod report;
pub mod result;
pub mod runner;
pub mod survey;
pub mod worker;

use crate::command::{Command, Env, Stop};
use crate::error::Fix;
use crate::host::Host;
use anyhow::{bail, Result};
use job::JobSpec;
pub use jobfile::{load_job_file, parse_job_file};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// A set of jobs that run together (e.g. `mixed` = a random reader and a
/// sequential writer), as named by a preset or a job file.
#[derive(Debug, Clone)]
pub struct Workload {
    pub name: String,
    pub jobs: Vec<JobSpec>,
    /// Where the jobs' files live.
    pub directory: PathBuf,
    /// The preset's or job file's own window, used by the CLI when the user
    /// gives no `--runtime` (run_workload always takes [`RunOpts`]).
    pub default_runtime: Option<Duration>,
    pub default_ramp: Duration,
    pub allow_datadir: bool,
    pub allow_raw_device: bool,
}

/// Options for one measured run of a workload.
#[derive(Debug, Clone)]
pub struct RunOpts {
    /// Measured window. `Duration::ZERO` means not time-based: each job
    /// stops after its `io_size` per thread (default one pass over its files).
    pub runtime: Duration,
    /// Warm-up before the window, excluded from results.
    pub ramp: Duration,
    /// Show a live progress line (only honoured on a terminal).
    pub progress: bool,
}

/// Set by Ctrl-C or SIGTERM during `innotune bench` (the process's
/// [`Stop`] flag, while bench catches signals): a layout stops and removes
/// its partial file, a run ends early and keeps its results.
pub fn interrupt_flag() -> Arc<AtomicBool> {
    Stop::process().flag().clone()
}

/// A preset (`page-read`, `mixed`, …) or a TOML job file, with its files in `directory`.
pub fn load_workload(name_or_file: &str, directory: &Path) -> Result<Workload> {
    let mut w = if let Some(p) = presets::find(name_or_file) {
        Workload {
            name: p.name.to_string(),
            jobs: p.jobs()?,
            directory: directory.to_path_buf(),
            default_runtime: Some(presets::DEFAULT_RUNTIME),
            default_ramp: Duration::ZERO,
            allow_datadir: false,
            allow_raw_device: false,
        }
    } else if Path::new(name_or_file).exists() {
        // Whatever is there: load_job_file refuses all but a regular file.
        load_job_file(Path::new(name_or_file))?
    } else {
        bail!(Fix::new(
            format!("no preset or job file named {name_or_file:?}"),
            format!(
                "use one of {} or the path of a TOML job file",
                presets::PRESETS
                    .iter()
                    .map(|p| p.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        ));
    };
    w.directory = directory.to_path_buf();
    Ok(w)
}

/// A duration option, its errors naming the option and the fix.
pub(crate) fn duration_opt(what: &str, v: &str) -> Result<Duration> {
    crate::units::parse_duration(v).map_err(|e| {
        Fix::new(
            format!("{what}: {e}"),
            format!(
                "give {what} as a duration such as 30s, 5m or 1h30m (at most {}d)",
                crate::units::MAX_DURATION.as_secs() / 86400
            ),
        )
        .into()
    })
}

/// A measured window: zero would measure nothing (it used to fall back
/// silently to a one-pass run).
pub(crate) fn runtime_opt(what: &str, v: &str) -> Result<Duration> {
    let d = duration_opt(what, v)?;
    if d.is_zero() {
        bail!(Fix::new(
            format!("{what} 0 measures nothing"),
            "give a window such as 30s, or leave runtime out and give io_size for a size-based run"
        ));
    }
    Ok(d)
}

pub(crate) fn check_unique_names(jobs: &[JobSpec]) -> Result<()> {
    for (i, a) in jobs.iter().enumerate() {
        if jobs[..i].iter().any(|b| b.name == a.name) {
            bail!(Fix::new(
                format!("two jobs are named {:?}; they would share files", a.name),
                "give each job its own name"
            ));
        }
    }
    Ok(())
}

/// Lay out (or reuse) the workload's files, then run it once.
/// Prints nothing (a progress line only if `opts.progress` and on a terminal).
pub fn run_workload(w: &Workload, opts: &RunOpts) -> Result<result::WorkloadResult> {
    run_workload_hooked(w, opts, None)
}

/// [`run_workload`], calling `at_window` as the measured window opens
/// (after `opts.ramp`), with the I/O still running: see [`runner::run_hooked`].
pub fn run_workload_hooked(
    w: &Workload,
    opts: &RunOpts,
    at_window: Option<&mut dyn FnMut()>,
) -> Result<result::WorkloadResult> {
    if w.jobs.is_empty() {
        bail!(Fix::new(
            "the workload has no jobs",
            "give --rw, --preset or --job-file"
        ));
    }
    for j in &w.jobs {
        j.validate()?;
    }
    check_unique_names(&w.jobs)?;
    files::check_space(&w.directory, &w.jobs)?;
    let files = w
        .jobs
        .iter()
        .map(|j| files::prepare(&w.directory, j, w.allow_datadir, w.allow_raw_device))
        .collect::<Result<Vec<_>>>()?;
    let win = runner::Window {
        runtime: (!opts.runtime.is_zero()).then_some(opts.runtime),
        ramp: opts.ramp,
        progress: opts.progress,
        interrupt: Some(interrupt_flag()),
    };
    let mut r = runner::run_hooked(&w.jobs, &files, &win, at_window)?;
    r.name = w.name.clone();
    Ok(r)
}

/// What `innotune bench` returns: the presets, a survey, or a run (each
/// serialised as itself: the JSON `result` is the inner report).
#[derive(Debug, serde::Serialize)]
#[serde(untagged)]
pub enum BenchOutput {
    Presets(report::PresetList),
    Survey(survey::SurveyReport),
    Run(report::BenchReport),
}

impl crate::export::Report for BenchOutput {
    const COMMAND: &'static str = "bench";

    fn document(&self) -> crate::export::Document {
        match self {
            BenchOutput::Presets(r) => crate::export::Report::document(r),
            BenchOutput::Survey(r) => crate::export::Report::document(r),
            BenchOutput::Run(r) => crate::export::Report::document(r),
        }
    }

    fn exit_code(&self) -> i32 {
        match self {
            BenchOutput::Presets(r) => crate::export::Report::exit_code(r),
            BenchOutput::Survey(r) => crate::export::Report::exit_code(r),
            BenchOutput::Run(r) => crate::export::Report::exit_code(r),
        }
    }
}

/// The command: `--list-presets`, `--survey`, or a workload ([`measure`]).
/// The live progress line shows with a text page on a terminal.
impl Command for cli::BenchArgs {
    type Report = BenchOutput;

    fn execute(env: &Env, args: Self) -> Result<BenchOutput> {
        if args.list_presets {
            return Ok(BenchOutput::Presets(report::PresetList::build()?));
        }
        let progress = env.progress.live();
        if args.survey {
            let opts = survey_opts(&args, progress)?;
            return Ok(BenchOutput::Survey(survey::execute(&env.host, &opts)?));
        }
        check_survey_only(&args)?;
        measure(env, &args).map(BenchOutput::Run)
    }
}

/// Device names and `--dry-run` go with `--survey` only.
fn check_survey_only(args: &cli::BenchArgs) -> Result<()> {
    if !args.devices.is_empty() || args.dry_run {
        bail!(Fix::new(
            if args.dry_run {
                "--dry-run applies to --survey".to_string()
            } else {
                format!("unexpected argument {}", args.devices[0].display())
            },
            "device names and --dry-run go with --survey (innotune bench --survey /dev/sda); a job on a device takes --filename DEV"
        ));
    }
    Ok(())
}

/// `--survey`'s options, checked: it runs its own fixed read jobs, so job
/// flags are refused (writes with the way to measure them instead).
fn survey_opts(args: &cli::BenchArgs, progress: bool) -> Result<survey::SurveyOpts> {
    if let Some(rw) = &args.rw {
        if job::Rw::parse(rw)?.writes(50) {
            return Err(survey::writes_refused(rw));
        }
    }
    let mut other: Vec<String> = args
        .job_options()
        .into_iter()
        .map(|(k, _)| format!("--{k}"))
        .collect();
    for (given, flag) in [
        (args.preset.is_some(), "--preset"),
        (args.job_file.is_some(), "--job-file"),
        (args.directory.is_some(), "--directory"),
        (args.cleanup, "--cleanup"),
        (args.name.is_some(), "--name"),
        (args.allow_raw_device, "--allow-raw-device"),
        (args.allow_datadir, "--allow-datadir"),
    ] {
        if given {
            other.push(flag.to_string());
        }
    }
    if !other.is_empty() {
        bail!(Fix::new(
            format!(
                "--survey runs its own read jobs; {} does not apply",
                other.join(", ")
            ),
            "leave it out (only --runtime, --ramp_time, --dry-run and device names go with --survey)"
        ));
    }
    Ok(survey::SurveyOpts {
        devices: args.devices.clone(),
        runtime: match &args.runtime {
            Some(r) => runtime_opt("--runtime", r)?,
            None => survey::DEFAULT_RUNTIME,
        },
        ramp: match &args.ramp_time {
            Some(r) => duration_opt("--ramp_time", r)?,
            None => Duration::ZERO,
        },
        dry_run: args.dry_run,
        progress,
    })
}

/// Build the workload the options describe, lay out its files, run it
/// (or only clean up), and return the report. Progress: a live line on
/// stderr when `env.progress` shows live figures; Ctrl-C or SIGTERM
/// (`env.stop`) ends the run early, keeping its results.
fn measure(env: &Env, args: &cli::BenchArgs) -> Result<report::BenchReport> {
    let host = &env.host;
    let progress = env.progress.live();
    let have_job = args.preset.is_some() || args.job_file.is_some() || args.rw.is_some();
    if args.preset.is_some() && args.job_file.is_some() {
        bail!(Fix::new(
            "--preset and --job-file both given",
            "choose one of them"
        ));
    }
    if !have_job {
        if args.cleanup {
            let dir = args.directory.clone().ok_or_else(|| {
                Fix::new("--cleanup needs --directory", "give the directory to clean")
            })?;
            let removed = files::cleanup(&dir)?;
            return Ok(report::BenchReport {
                directory: dir.display().to_string(),
                result: None,
                removed: removed.iter().map(|p| p.display().to_string()).collect(),
                not_on_device: Vec::new(),
                signal: None,
            });
        }
        bail!(Fix::new(
            "nothing to run",
            "give --rw MODE, --preset NAME (see --list-presets) or --job-file FILE.toml"
        ));
    }

    let mut w = if let Some(p) = &args.preset {
        load_workload(p, Path::new("."))?
    } else if let Some(f) = &args.job_file {
        load_job_file(f)?
    } else {
        Workload {
            name: "cli".into(),
            jobs: vec![JobSpec::default()],
            directory: PathBuf::from("."),
            default_runtime: None,
            default_ramp: Duration::ZERO,
            allow_datadir: false,
            allow_raw_device: false,
        }
    };
    let file_dir = args.job_file.is_some() && !w.directory.as_os_str().is_empty();
    match (&args.directory, &args.filename) {
        (Some(d), _) => w.directory = d.clone(),
        (None, _) if file_dir => {}
        (None, Some(_)) => {}
        (None, None) => bail!(Fix::new(
            "no --directory given",
            "give --directory DIR on the filesystem to measure (innotune creates its files there)"
        )),
    }
    w.allow_datadir = args.allow_datadir;
    w.allow_raw_device = args.allow_raw_device;
    let opts = args.job_options();
    for j in &mut w.jobs {
        for (k, v) in &opts {
            j.set(k, v)?;
        }
    }
    if let Some(n) = &args.name {
        if w.jobs.len() != 1 {
            bail!(Fix::new(
                "--name applies to a single job",
                "name jobs in the job file"
            ));
        }
        w.jobs[0].set("name", n)?;
    }
    if args.rw.is_some() && args.preset.is_none() && args.job_file.is_none() && args.name.is_none()
    {
        w.jobs[0].name = w.jobs[0].rw.as_str().to_string();
    }
    if args.preset.is_none() && args.job_file.is_none() {
        w.name = w.jobs[0].name.clone();
    }
    let runtime = match &args.runtime {
        Some(r) => runtime_opt("--runtime", r)?,
        None if args.io_size.is_some() => Duration::ZERO,
        None => w.default_runtime.unwrap_or(Duration::ZERO),
    };
    let ramp = match &args.ramp_time {
        Some(r) => duration_opt("--ramp_time", r)?,
        None => w.default_ramp,
    };
    for j in &w.jobs {
        j.validate()?;
        if j.engine() == job::EngineKind::Sync && j.iodepth > 1 {
            crate::output::warn(format!(
                "job {}: the sync engine keeps one I/O in flight per thread; iodepth={} is ignored (use --ioengine io_uring, or --numjobs for parallelism)",
                j.name, j.iodepth
            ));
        }
    }
    let uses_dir = w.jobs.iter().any(|j| j.filename.is_none());
    if uses_dir {
        // A live server's datadir (or one the option files name), anything
        // inside it, and anything containing it, whatever --allow-datadir
        // says: that flag only overrides the look-alike heuristics.
        crate::safety::refuse_near_datadir(host, &w.directory, "bench --directory")?;
    }
    let run_opts = RunOpts {
        runtime,
        ramp,
        progress,
    };
    // The host's CPU shares over the measured window (steal above all),
    // from /proc/stat as the window opens and as the run returns, and the
    // counters of the devices under the files over the same window (how
    // full the tool kept each layer of the stack: `WorkloadResult::devices`).
    // A failed read only leaves them out: they qualify the figures, not
    // make them.
    let (dev_names, mut not_on_device) = devices_under_jobs(host, &w);
    let mut cpu_at_window = None;
    let mut disks_at_window = None;
    let mut hook = || {
        cpu_at_window = crate::model::cpustat::read(host).ok();
        if !dev_names.is_empty() {
            disks_at_window = crate::model::diskstats::read(host)
                .ok()
                .map(|d| (std::time::Instant::now(), d));
        }
    };
    let catch = env.stop.catch(&[libc::SIGINT, libc::SIGTERM]);
    let res = run_workload_hooked(&w, &run_opts, Some(&mut hook as &mut dyn FnMut()));
    drop(catch);
    let mut res = res?;
    if let (Some(a), Ok(b)) = (cpu_at_window, crate::model::cpustat::read(host)) {
        res.host_cpu = a.delta(&b);
    }
    if let (Some((t0, a)), Ok(b)) = (disks_at_window, crate::model::diskstats::read(host)) {
        let secs = t0.elapsed().as_secs_f64();
        res.devices = dev_names
            .iter()
            .filter_map(|n| {
                let (x, y) = (a.get(n)?, b.get(n)?);
                Some(crate::trace::iostat::Iostat::compute(n, x, y, secs))
            })
            .collect();
    }
    if uses_dir {
        // After the run: a run that failed has no results to qualify.
        not_on_device.extend(reach::memory_filesystem(
            &w.directory,
            w.jobs.iter().any(|j| j.direct),
        ));
    }
    // The top device under the files against what the jobs moved over the
    // same window.
    if let Some(top) = res.devices.first() {
        let issued = |read: bool| -> f64 {
            res.jobs
                .iter()
                .filter_map(|j| {
                    if read {
                        j.read.as_ref()
                    } else {
                        j.write.as_ref()
                    }
                })
                .map(|d| d.bw_bytes)
                .sum()
        };
        not_on_device.extend(reach::few_device_bytes(
            &top.device,
            None,
            (issued(true), top.read_bytes_per_s),
            (issued(false), top.write_bytes_per_s),
        ));
    }
    let removed = if args.cleanup {
        files::cleanup(&w.directory)?
    } else {
        Vec::new()
    };
    let shown = match (&args.directory, &args.filename) {
        (None, Some(dev)) => dev.display().to_string(),
        _ => w.directory.display().to_string(),
    };
    let signal = res.interrupted.then(|| env.stop.signal()).flatten();
    Ok(report::BenchReport {
        directory: shown,
        result: Some(res),
        removed: removed.iter().map(|p| p.display().to_string()).collect(),
        not_on_device,
        signal,
    })
}

/// Kernel names of the block devices under the jobs' files, top of each
/// stack first, each once: the stack under the directory (a loop device,
/// the partition and disk under its backing file, md members…), or the raw
/// device `--filename` names (always a block device, see `files`). Best
/// effort: a directory no block device holds (tmpfs) adds nothing, as these
/// figures only qualify the run. With them, the loop devices of those
/// stacks that go through the page cache ([`reach::buffered_loops`]).
fn devices_under_jobs(host: &Host, w: &Workload) -> (Vec<String>, Vec<reach::NotOnDevice>) {
    let model = crate::model::HostModel::read(host);
    let mut names: Vec<String> = Vec::new();
    let mut loops: Vec<reach::NotOnDevice> = Vec::new();
    // mountinfo names absolute paths: a relative --directory found no mount.
    let dir = std::fs::canonicalize(&w.directory).unwrap_or_else(|_| w.directory.clone());
    for j in &w.jobs {
        let found = match &j.filename {
            Some(f) => std::fs::canonicalize(f)
                .ok()
                .and_then(|c| c.file_name().map(|n| n.to_string_lossy().into_owned()))
                .into_iter()
                .collect(),
            None => match model.stack_of(&dir) {
                Ok(stack) => {
                    for l in reach::buffered_loops(&stack) {
                        if !loops.contains(&l) {
                            loops.push(l);
                        }
                    }
                    stack.names()
                }
                Err(_) => Vec::new(),
            },
        };
        for n in found {
            if !names.contains(&n) {
                names.push(n);
            }
        }
    }
    (names, loops)
}

/// Run `f` with SIGINT and SIGTERM both setting [`interrupt_flag`] (the
/// same outcome for both: a layout removes its partial file and entry, a
/// run keeps partial results). A second signal ends the process at once.
fn with_interrupt_signals<T>(f: impl FnOnce() -> T) -> T {
    let _catch = Stop::process().catch(&[libc::SIGINT, libc::SIGTERM]);
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_job(dir: &Path, set: &[(&str, &str)]) -> Workload {
        let mut j = JobSpec::default();
        for (k, v) in [
            ("name", "t"),
            ("rw", "randread"),
            ("bs", "4k"),
            ("size", "1m"),
        ]
        .iter()
        .chain(set)
        {
            j.set(k, v).unwrap();
        }
        Workload {
            name: "t".into(),
            jobs: vec![j],
            directory: dir.to_path_buf(),
            default_runtime: None,
            default_ramp: Duration::ZERO,
            allow_datadir: false,
            allow_raw_device: false,
        }
    }

    /// A batch that does not divide the depth leaves I/Os queued but not
    /// submitted; the reap must submit them or the run would hang or lose
    /// I/Os. One pass over the file is exactly size / bs I/Os.
    #[test]
    fn every_submit_batch_completes_every_io() {
        let d = tempfile::tempdir().unwrap();
        for batch in ["1", "3", "0", "64"] {
            let w = one_job(
                d.path(),
                &[
                    ("ioengine", "io_uring"),
                    ("iodepth", "8"),
                    ("iodepth_batch_submit", batch),
                ],
            );
            let opts = RunOpts {
                runtime: Duration::ZERO,
                ramp: Duration::ZERO,
                progress: false,
            };
            let r = match run_workload(&w, &opts) {
                Ok(r) => r,
                // A kernel without io_uring (or one that forbids it) cannot run this.
                Err(e) if e.to_string().contains("io_uring is not available") => return,
                Err(e) => panic!("batch {batch}: {e:#}"),
            };
            let read = r.jobs[0].read.as_ref().unwrap();
            assert_eq!(read.total_ios, 256, "batch {batch}");
        }
    }

    /// The hook runs once, on the calling thread, when the ramp ends and
    /// before the window does; the results cover the window only.
    #[test]
    fn hook_runs_as_the_window_opens() {
        let d = tempfile::tempdir().unwrap();
        let w = one_job(d.path(), &[]);
        let opts = RunOpts {
            runtime: Duration::from_millis(400),
            ramp: Duration::from_millis(300),
            progress: false,
        };
        let t0 = std::time::Instant::now();
        let mut calls = Vec::new();
        let mut hook = || calls.push(t0.elapsed());
        let r = run_workload_hooked(&w, &opts, Some(&mut hook as &mut dyn FnMut())).unwrap();
        let total = t0.elapsed();
        assert_eq!(calls.len(), 1, "{calls:?}");
        assert!(calls[0] >= Duration::from_millis(300), "{calls:?}");
        assert!(
            calls[0] + Duration::from_millis(350) <= total,
            "{calls:?} of {total:?}"
        );
        assert_eq!(r.ramp_s, 0.3);
        let rt = r.jobs[0].runtime_s;
        assert!((0.35..0.6).contains(&rt), "window {rt}");
    }

    #[test]
    fn unknown_preset_names_the_choices() {
        let e = load_workload("nope", Path::new("/tmp"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("page-read") && e.contains("fix:"), "{e}");
    }
}
