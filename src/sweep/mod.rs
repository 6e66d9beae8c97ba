//! `innotune sweep`: scheduler comparison with confidence intervals.
//!
//! options ([`options`], from [`cli`] or built in code) → [`execute`]
//! (switch, run each [`workload::TrialWorkload`], snapshot the devices:
//! [`trials`]) → analysis ([`verdicts`] on top of `stats`, then
//! [`recommend`]) → a typed [`SweepReport`] that the exporters render.
//! Every switch, the work directory and the OLTP server ([`server`]) go
//! through the journal, so the devices are put back and the server stopped
//! on return, on error, on a signal, and by `innotune restore` after a
//! crash.
pub mod cli;
pub mod diskstats;
pub mod options;
pub mod plan;
pub mod recommend;
pub mod report;
pub mod server;
pub mod space;
pub mod target;
pub mod trials;
pub mod verdicts;
pub mod workload;

pub use options::{Event, Progress, SweepOptions, DEFAULT_WORKLOADS};
pub use report::SweepReport;

use crate::change::{CreatedDir, SysfsAttr};
use crate::command::{Command, Env};
use crate::error::Fix;
use crate::host::Host;
use crate::journal::Guard;
use crate::stats::CompareOpts;
use anyhow::{Context, Result};
use plan::Candidate;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::time::Instant;
use target::{attr, Device};
use workload::{Spec, TrialWorkload};

/// `innotune sweep`: journal, [`execute`].
impl Command for cli::SweepArgs {
    type Report = SweepReport;

    fn execute(env: &Env, args: Self) -> Result<SweepReport> {
        let guard = env.guard()?;
        let report = execute(&env.host, &guard, args.options());
        drop(guard);
        env.end_journal();
        let report = report?;
        warn_unrestored(&report);
        Ok(report)
    }
}

fn warn_unrestored(report: &SweepReport) {
    if report
        .restored
        .iter()
        .any(|r| matches!(r.outcome, crate::journal::Outcome::Failed { .. }))
    {
        crate::output::warn("some settings could not be restored; run `innotune restore`");
    }
}

/// Run a sweep on `host`, journaling through `guard`, and return its
/// report. Nothing is printed: progress goes to `opts.progress`, warnings
/// to [`crate::output::warn`].
///
/// The guard must hold no changes yet: the sweep puts back everything in
/// it before returning (the devices must be as found for the
/// recommendation to mean anything), on success and on error. Bad input
/// fails before anything on the host changes.
pub fn execute(host: &Host, guard: &Guard, opts: SweepOptions) -> Result<SweepReport> {
    if !guard.entries().is_empty() {
        anyhow::bail!(
            "internal: sweep::execute needs a journal with no changes in it (it restores everything in it when done)"
        );
    }
    let out = sweep(host, guard, opts);
    if out.is_err() {
        // What could not be put back stays journaled; the guard's owner
        // warns when it drops it.
        guard.restore_all();
    }
    out
}

fn sweep(host: &Host, guard: &Guard, opts: SweepOptions) -> Result<SweepReport> {
    let started = Instant::now();
    let path = &opts.path;
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
    // Work files live in a directory we create (so it is certainly ours)
    // and journal, so even a crash leaves nothing behind after `restore`;
    // never in or around a live server's datadir.
    let workdir = path.join(format!(".innotune-sweep.{}", std::process::id()));
    crate::safety::refuse_near_datadir(host, &workdir, "sweep's work directory")?;
    let (stack, devices) = target::devices_under(host, &path)?;
    let devices = target::only(devices, &opts.devices, &path)?;
    let cands = plan::candidates(&opts, &devices)?;
    let names = opts.workload_names();
    let labels: Vec<String> = cands.iter().map(|c| c.label.clone()).collect();
    let priority = plan::priority(&cands, &devices);
    let plan = plan::plan(&plan::Request {
        rounds: opts.rounds,
        trial: opts.trial,
        warmup: opts.warmup,
        budget: opts.budget,
        sequential: opts.sequential,
        workloads: &names,
        candidates: &labels,
        priority: &priority,
    })?;
    // A budget too small for every candidate tests the most wanted ones.
    let cands: Vec<Candidate> = plan.kept.iter().map(|&i| cands[i].clone()).collect();
    let seed = opts.seed.unwrap_or_else(rand::random);
    let current = recommend::current(&cands, &devices);
    let baseline = current.unwrap_or(0);

    // Workloads are loaded and sized before anything changes: a typo or a
    // full filesystem must not touch the host.
    let mut specs = workload::load(&names, &workdir)?;
    let oltp_names: Vec<String> = specs
        .iter()
        .filter(|s| matches!(s, Spec::Oltp { .. }))
        .map(|s| s.name().to_string())
        .collect();
    let oltp_plan = if oltp_names.is_empty() {
        None
    } else {
        Some(server::plan(&opts.oltp, &oltp_names, &workdir)?)
    };
    let (files, warning) = space::fit(
        &mut specs,
        opts.size,
        oltp_plan.as_ref().map_or(0, |p| p.disk_estimate()),
        space::free_bytes(&path),
        &path,
        &workdir,
    )?;
    for s in &specs {
        if let Spec::Bench(b) = s {
            b.validate()?;
        }
    }
    if let Some(w) = warning {
        crate::output::warn(w);
    }

    let progress = options::Reporter::new(&opts.progress);
    std::fs::create_dir(&workdir).map_err(|e| {
        Fix::new(
            format!("cannot create work directory {}: {e}", workdir.display()),
            "give a directory you can write to",
        )
    })?;
    guard.apply(&Host::live(), Box::new(CreatedDir::adopt(&workdir)))?;
    // Switching the scheduler resets nr_requests: remember it up front.
    for d in &devices {
        if d.nr_requests.is_some() {
            let nr = attr(&d.name, "nr_requests");
            guard.apply(host, Box::new(SysfsAttr::remember(nr)))?;
        }
    }
    // Every file laid out under the settings found at start, before any
    // switch; trials then only reuse them.
    for s in &specs {
        if let Spec::Bench(b) = s {
            progress.event(Event::Layout {
                workload: b.name().to_string(),
                bytes: b.file_bytes(),
            });
            b.lay_out()?;
        }
    }
    // Started before any switch, under the settings found at start. On an
    // error it is dropped (and stops cleanly) before the devices go back.
    let oltp_server = match oltp_plan {
        Some(p) => {
            progress.event(Event::Server {
                dir: p.setup.sandbox_dir.clone(),
                tables: p.setup.tables,
                table_size: p.setup.table_size,
            });
            Some(server::OltpServer::start(p, guard)?)
        }
        None => None,
    };
    let workloads: Vec<Box<dyn TrialWorkload + '_>> = specs
        .into_iter()
        .map(|s| -> Result<Box<dyn TrialWorkload + '_>> {
            Ok(match s {
                Spec::Bench(b) => Box::new(b),
                Spec::Oltp { name, workload } => {
                    let srv = oltp_server.as_ref().ok_or_else(|| {
                        anyhow::anyhow!("internal: OLTP workload without its server")
                    })?;
                    Box::new(workload::OltpTrial::new(&name, workload, srv))
                }
            })
        })
        .collect::<Result<_>>()?;

    let dev_names: Vec<String> = devices.iter().map(|d| d.name.clone()).collect();
    let trace_targets = if opts.trace {
        dev_names
            .iter()
            .map(|n| crate::trace::capture::target(host, n))
            .collect::<Result<Vec<_>>>()?
    } else {
        Vec::new()
    };
    let copts = CompareOpts {
        min_effect: opts.min_effect,
        seed,
        ..Default::default()
    };
    let mut seq = plan.sequential.then(|| {
        verdicts::Sequential::new(
            copts.alpha,
            names.len(),
            plan::distinct_settings(&cands),
            plan.rounds,
            current.is_none() && opts.choose,
        )
    });
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    let mut trials = Vec::with_capacity(plan.trials);
    let rounds_started = Instant::now();
    let mut stopped_after: Option<u32> = None;
    for round in 0..plan.rounds {
        let mut order: Vec<usize> = (0..cands.len()).collect();
        order.shuffle(&mut rng);
        for &ci in &order {
            let c = &cands[ci];
            apply(guard, host, &devices, c)?;
            let mut worder: Vec<usize> = (0..workloads.len()).collect();
            worder.shuffle(&mut rng);
            for &wi in &worder {
                let w = &*workloads[wi];
                progress.event(Event::Trial {
                    round,
                    rounds: plan.rounds,
                    candidate: c.label.clone(),
                    workload: w.name().to_string(),
                    index: trials.len() + 1,
                    total: plan.trials,
                });
                let under = || format!("{} under {}", w.name(), c.label);
                let (m, split, before) = if opts.trace {
                    // The capture covers the window only, so the warm-up
                    // is a run of its own here.
                    if !plan.warmup.is_zero() {
                        w.warm_up(plan.warmup)
                            .with_context(|| format!("warm-up of {}", under()))?;
                    }
                    let before = diskstats::snapshot(host)?;
                    let (m, t) =
                        crate::trace::split::while_running(host, guard, &trace_targets, || {
                            w.measure(plan.trial)
                        })?;
                    (m, crate::trace::split::splits(&t), before)
                } else {
                    let mut before = None;
                    let m = w.warm_and_measure(plan.warmup, plan.trial, &mut || {
                        before = Some(diskstats::snapshot(host));
                    });
                    let before = match before {
                        Some(b) => b?,
                        // The run ended before its window opened: its error says why.
                        None => diskstats::snapshot(host)?,
                    };
                    (m, Vec::new(), before)
                };
                let m = m.with_context(under)?;
                let after = diskstats::snapshot(host)?;
                let mut trial = trials::Trial::new(
                    round,
                    trials.len(),
                    &c.label,
                    w.name(),
                    w.unit(),
                    m,
                    &diskstats::delta(&before, &after, &dev_names),
                );
                trial.trace = split;
                trial.host_cpu = diskstats::host_cpu(&before, &after);
                trials.push(trial);
            }
        }
        if let Some(s) = seq.as_mut() {
            if s.look(
                &trials,
                &cands,
                baseline,
                &names,
                opts.objective,
                &copts,
                round + 1,
            ) {
                stopped_after = Some(round + 1);
                break;
            }
        }
    }
    let rounds_s = rounds_started.elapsed().as_secs_f64();
    progress.event(Event::Restoring);
    drop(workloads);
    // Stopped before the devices are put back: its shutdown flush is
    // I/O on the swept devices, and nothing measures it.
    let oltp = oltp_server.map(|s| s.stop(guard)).transpose()?;
    let restored = guard.restore_all();
    drop(progress);
    let elapsed_s = started.elapsed().as_secs_f64();

    let results = verdicts::cells(&trials, &cands, &names, copts.resamples, seed);
    let (vs, pairwise, sequential) = match seq {
        Some(s) => {
            let s = s.finish();
            let summary = report::SequentialSummary::new(&s, stopped_after, rounds_s);
            (s.verdicts, s.pairwise, Some(summary))
        }
        None => {
            let vs = verdicts::verdicts(&trials, &cands, baseline, &names, opts.objective, &copts);
            let pairwise = if current.is_none() && opts.choose {
                verdicts::pairwise(&trials, &cands, &names, opts.objective, &copts)
            } else {
                Vec::new()
            };
            (vs, pairwise, None)
        }
    };
    let recommendation = recommend::recommend(
        &cands,
        baseline,
        &vs,
        &pairwise,
        &trials,
        &devices,
        opts.objective,
        opts.choose,
    );
    Ok(SweepReport {
        path,
        stack,
        baseline: cands[baseline].label.clone(),
        noise: verdicts::noise(&results).with_steal(&trials),
        candidates: cands,
        devices,
        workloads: names,
        objective: opts.objective,
        min_effect: opts.min_effect,
        choose: opts.choose,
        seed,
        resamples: copts.resamples,
        plan,
        files,
        trials_run: trials.len(),
        elapsed_s,
        rounds_s,
        sequential,
        results,
        verdicts: vs,
        pairwise,
        recommendation,
        oltp,
        restored,
        trials,
    })
}

/// Put candidate `c` on every device: scheduler first (it resets
/// nr_requests), then the extra dimensions. Unchanged values are not
/// rewritten (a rewrite would reset nr_requests for nothing).
fn apply(guard: &Guard, host: &Host, devices: &[Device], c: &Candidate) -> Result<()> {
    for d in devices {
        let sched = attr(&d.name, "scheduler");
        let now = crate::change::sysfs::read_value(host, std::path::Path::new(&sched))
            .unwrap_or_default();
        if now != c.scheduler {
            guard.apply(host, Box::new(SysfsAttr::set(sched, &c.scheduler)))?;
        }
        let nr = c.nr_requests.map(|v| v.to_string());
        let ra = c.read_ahead_kb.map(|v| v.to_string());
        for (name, v) in [("nr_requests", nr), ("read_ahead_kb", ra)] {
            if let Some(v) = v {
                let p = attr(&d.name, name);
                if host.read_trim(&p).ok().as_deref() != Some(v.as_str()) {
                    guard.apply(host, Box::new(SysfsAttr::set(p, &v)))?;
                }
            }
        }
    }
    Ok(())
}
