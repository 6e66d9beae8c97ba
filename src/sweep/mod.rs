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
pub mod options;
pub mod plan;
pub mod recommend;
pub mod report;
pub mod target;
pub mod verdicts;
pub mod workload;

/// The experiment's parts sweep shares with `prove`, where they always were.
pub use crate::trial::{diskstats, server, space, trials};

pub use options::{Event, Progress, SweepOptions, DEFAULT_WORKLOADS};
pub use report::SweepReport;

use crate::change::{CreatedDir, SysfsAttr};
use crate::command::{Command, Env};
use crate::error::Fix;
use crate::host::Host;
use crate::journal::Guard;
use crate::stats::CompareOpts;
use anyhow::Result;
use plan::Candidate;
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
    // Work files live in a directory we create (so it is certainly ours)
    // and journal; never in or around a live server's datadir.
    let (path, workdir) = crate::trial::work_path(host, &opts.path, "sweep")?;
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
    let arms: Vec<crate::trial::Arm> = cands.iter().map(|c| arm(&devices, c)).collect();
    let design = crate::trial::Design {
        rounds: plan.rounds,
        trial: plan.trial,
        warmup: plan.warmup,
        total: plan.trials,
        seed,
        trace: opts.trace,
    };
    let outcome = crate::trial::run(
        host,
        guard,
        &arms,
        &workloads,
        &dev_names,
        &design,
        &progress,
        &mut |trials, rounds| match seq.as_mut() {
            Some(s) => s.look(
                trials,
                &cands,
                baseline,
                &names,
                opts.objective,
                &copts,
                rounds,
            ),
            None => false,
        },
    )?;
    let crate::trial::Outcome {
        trials,
        stopped_after,
        rounds_s,
    } = outcome;
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
    let not_on_device = crate::trial::not_on_device(host, &path, &trials, &names);
    Ok(SweepReport {
        not_on_device,
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

/// Candidate `c` as the engine's arm: on every device, the scheduler
/// first (switching it resets nr_requests), then the extra dimensions.
/// The engine writes only values that differ (a rewrite of the scheduler
/// would reset nr_requests for nothing).
fn arm(devices: &[Device], c: &Candidate) -> crate::trial::Arm {
    let mut settings = Vec::new();
    for d in devices {
        let set = |name: &str, value: String| crate::trial::Setting::Sysfs {
            path: attr(&d.name, name).into(),
            value,
        };
        settings.push(set("scheduler", c.scheduler.clone()));
        if let Some(v) = c.nr_requests {
            settings.push(set("nr_requests", v.to_string()));
        }
        if let Some(v) = c.read_ahead_kb {
            settings.push(set("read_ahead_kb", v.to_string()));
        }
    }
    crate::trial::Arm {
        label: c.label.clone(),
        settings,
    }
}
