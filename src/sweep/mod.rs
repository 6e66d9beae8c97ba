//! `innotune sweep`: scheduler comparison with confidence intervals.
//!
//! measure (this file: switch, run, snapshot; `server` for OLTP workloads)
//! → analyse (`analysis`, on top of `stats`) → render (`render`). Every
//! switch, and the OLTP server, goes through the journal, so the devices
//! are put back and the server stopped on return, on error, on a signal,
//! and by `innotune restore` after a crash.
pub mod analysis;
pub mod cli;
pub mod diskstats;
pub mod plan;
mod render;
pub mod report;
pub mod server;
pub mod target;

use crate::bench;
use crate::error::Fix;
use crate::host::Host;
use crate::journal::{Guard, Journal};
use crate::stats::CompareOpts;
use crate::Ctx;
use anyhow::{Context, Result};
use plan::Candidate;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::time::Instant;
use target::{attr, Device};

/// Workloads run when none is named.
pub const DEFAULT_WORKLOADS: [&str; 4] = ["page-read", "page-write", "fsync-4k", "mixed"];

/// One workload of a sweep, loaded before anything is changed.
enum Loaded {
    /// File I/O from `bench` (a preset or a job file).
    Bench(bench::Workload),
    /// Transactions against the sweep's OLTP server.
    Oltp(crate::oltp::Workload),
}

pub fn run(args: cli::SweepArgs, ctx: &Ctx) -> Result<i32> {
    let host = &ctx.host;
    let path = &args.path;
    if !path.is_dir() {
        return Err(Fix::new(
            format!("{} is not a directory", path.display()),
            "give a directory on the filesystem to test; work files go in a temporary subdirectory",
        )
        .into());
    }
    let path = path
        .canonicalize()
        .with_context(|| format!("resolving {}", path.display()))?;
    let (stack, devices) = target::devices_under(host, &path)?;
    let devices = target::only(devices, &args.devices, &path)?;
    let cands = plan::candidates(&args, &devices)?;
    let workloads: Vec<String> = if args.workloads.is_empty() {
        DEFAULT_WORKLOADS.iter().map(|s| s.to_string()).collect()
    } else {
        args.workloads.clone()
    };
    let plan = plan::plan(
        args.rounds,
        args.trial,
        args.warmup,
        args.budget,
        cands.len() * workloads.len(),
    )?;
    let seed = args.seed.unwrap_or_else(rand::random);
    let baseline = cands
        .iter()
        .position(|c| c.matches(&devices[0]))
        .unwrap_or(0);

    let command = std::iter::once("innotune".to_string())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ");
    // Work files live in a directory we create (so it is certainly ours)
    // and journal, so even a crash leaves nothing behind after `restore`.
    // Workloads are loaded first: a typo must not touch the host.
    let workdir = path.join(format!(".innotune-sweep.{}", std::process::id()));
    let loaded: Vec<Loaded> = workloads
        .iter()
        .map(|w| match server::oltp_workload(w) {
            Some(o) => Ok(Loaded::Oltp(o)),
            None => bench::load_workload(w, &workdir).map(Loaded::Bench),
        })
        .collect::<Result<_>>()?;
    let oltp_names: Vec<String> = workloads
        .iter()
        .zip(&loaded)
        .filter(|(_, l)| matches!(l, Loaded::Oltp(_)))
        .map(|(w, _)| w.clone())
        .collect();
    let oltp_plan = if oltp_names.is_empty() {
        None
    } else {
        Some(server::plan(&args.oltp, &oltp_names, &workdir)?)
    };

    let guard = Journal::begin(&command)?;
    let started = Instant::now();
    std::fs::create_dir(&workdir).map_err(|e| {
        Fix::new(
            format!("cannot create work directory {}: {e}", workdir.display()),
            "give a directory you can write to",
        )
    })?;
    guard.track_created(&workdir)?;
    // Switching the scheduler resets nr_requests: remember it up front.
    for d in &devices {
        if d.nr_requests.is_some() {
            guard.remember_sysfs(host, attr(&d.name, "nr_requests"))?;
        }
    }

    let progress = crate::output::progress::status_line();
    // Started before any switch, under the settings found at start.
    // Declared after the guard: on an error it is dropped (and stops
    // cleanly) before the guard restores the rest.
    let oltp_server = match oltp_plan {
        Some(p) => {
            progress.set_message(format!(
                "starting the OLTP server in {} and loading {} × {} rows",
                p.setup.sandbox_dir.display(),
                p.setup.tables,
                p.setup.table_size
            ));
            progress.tick();
            Some(server::OltpServer::start(p, &guard)?)
        }
        None => None,
    };

    let names: Vec<String> = devices.iter().map(|d| d.name.clone()).collect();
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    let mut trials = Vec::with_capacity(plan.trials);
    for round in 0..plan.rounds {
        let mut order: Vec<usize> = (0..cands.len()).collect();
        order.shuffle(&mut rng);
        for &ci in &order {
            let c = &cands[ci];
            apply(&guard, host, &devices, c)?;
            let mut worder: Vec<usize> = (0..loaded.len()).collect();
            worder.shuffle(&mut rng);
            for &wi in &worder {
                progress.set_message(format!(
                    "round {}/{} · {} · {} · trial {}/{}",
                    round + 1,
                    plan.rounds,
                    c.label,
                    workloads[wi],
                    trials.len() + 1,
                    plan.trials
                ));
                progress.tick();
                let seq = trials.len();
                let under = || format!("{} under {}", workloads[wi], c.label);
                let trial = match &loaded[wi] {
                    Loaded::Bench(w) => {
                        if !plan.warmup.is_zero() {
                            bench::run_workload(w, &opts(plan.warmup))
                                .with_context(|| format!("warm-up of {}", under()))?;
                        }
                        let before = diskstats::snapshot(host)?;
                        let mut res =
                            bench::run_workload(w, &opts(plan.trial)).with_context(under)?;
                        let after = diskstats::snapshot(host)?;
                        // Results are keyed by the name the user typed (a job
                        // file's internal name may differ from its path).
                        res.name = workloads[wi].clone();
                        analysis::Trial::from_result(
                            round,
                            seq,
                            &c.label,
                            &res,
                            diskstats::delta(&before, &after, &names),
                        )
                    }
                    Loaded::Oltp(w) => {
                        let srv = oltp_server.as_ref().ok_or_else(|| {
                            anyhow::anyhow!("internal: OLTP workload without its server")
                        })?;
                        if !plan.warmup.is_zero() {
                            srv.run(*w, plan.warmup)
                                .with_context(|| format!("warm-up of {}", under()))?;
                        }
                        let before = diskstats::snapshot(host)?;
                        let res = srv.run(*w, plan.trial).with_context(under)?;
                        let after = diskstats::snapshot(host)?;
                        analysis::Trial::from_oltp(
                            round,
                            seq,
                            &c.label,
                            &workloads[wi],
                            &res,
                            diskstats::delta(&before, &after, &names),
                        )
                    }
                };
                trials.push(trial);
            }
        }
    }
    progress.finish_and_clear();
    // Stopped before the devices are put back: its shutdown flush is
    // I/O on the swept devices, and nothing measures it.
    let oltp = oltp_server.map(|s| s.stop(&guard)).transpose()?;
    let restored = guard.restore_all();
    drop(guard);
    let elapsed_s = started.elapsed().as_secs_f64();

    let copts = CompareOpts {
        min_effect: args.min_effect,
        seed,
        ..Default::default()
    };
    let results = analysis::cells(&trials, &cands, &workloads, copts.resamples, seed);
    let verdicts = analysis::verdicts(
        &trials,
        &cands,
        baseline,
        &workloads,
        args.objective,
        &copts,
    );
    let recommendation = analysis::recommend(&cands, baseline, &verdicts, &devices, args.objective);
    let report = report::SweepReport {
        path,
        stack,
        baseline: cands[baseline].label.clone(),
        noise: analysis::noise(&results),
        candidates: cands,
        devices,
        workloads,
        objective: args.objective,
        min_effect: args.min_effect,
        seed,
        resamples: copts.resamples,
        plan,
        trials_run: trials.len(),
        elapsed_s,
        results,
        verdicts,
        recommendation,
        oltp,
        restored,
        trials,
    };
    if report
        .restored
        .iter()
        .any(|r| matches!(r.outcome, crate::journal::Outcome::Failed { .. }))
    {
        crate::output::warn("some settings could not be restored; run `innotune restore`");
    }
    ctx.emit(&report)
}

fn opts(runtime: std::time::Duration) -> bench::RunOpts {
    bench::RunOpts {
        runtime,
        ramp: std::time::Duration::ZERO,
        progress: false,
    }
}

/// Put candidate `c` on every device: scheduler first (it resets
/// nr_requests), then the extra dimensions. Unchanged values are not
/// rewritten (a rewrite would reset nr_requests for nothing).
fn apply(guard: &Guard, host: &Host, devices: &[Device], c: &Candidate) -> Result<()> {
    for d in devices {
        let sched = attr(&d.name, "scheduler");
        let now = host
            .read(&sched)
            .map(|s| crate::journal::sysfs_value(&s))
            .unwrap_or_default();
        if now != c.scheduler {
            guard.set_sysfs(host, &sched, &c.scheduler)?;
        }
        let nr = c.nr_requests.map(|v| v.to_string());
        let ra = c.read_ahead_kb.map(|v| v.to_string());
        for (name, v) in [("nr_requests", nr), ("read_ahead_kb", ra)] {
            if let Some(v) = v {
                let p = attr(&d.name, name);
                if host.read_trim(&p).ok().as_deref() != Some(v.as_str()) {
                    guard.set_sysfs(host, &p, &v)?;
                }
            }
        }
    }
    Ok(())
}
