//! `innotune tune`: the whole practice as one command.
//!
//! options ([`options`], from [`cli`]) → [`execute`]: probe → check →
//! sweep (file presets on PATH's filesystem) → check again with the
//! sweep's verdict → OLTP before/after on two sandboxes ([`oltp`]) → the
//! emitted files; a typed [`report::TuneReport`] → the report directory
//! ([`out`]: every result as JSON v2, summary.md, report.html, files/).
//!
//! One journal for the whole run: everything switched or started is put
//! back on return, on error and on a signal. A signal also writes the
//! report from what was measured so far (the journal's interrupt hook)
//! before the process exits 130.

pub mod cli;
pub mod oltp;
pub mod options;
pub mod out;
pub mod report;

use crate::check::cli::CheckOpts;
use crate::check::report::CheckReport;
use crate::command::{Command, Env};
use crate::error::Fix;
use crate::export::json::HostStamp;
use crate::host::Host;
use crate::journal::Guard;
use crate::probe::{ProbeOptions, ProbeReport};
use crate::sweep::{Event, Progress, SweepOptions};
use anyhow::{Context, Result};
use options::{Clock, TuneOptions};
use report::{Phase, Status, SweepSummary, TuneReport};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// What a signal's hook needs to write the partial report.
pub struct Shared {
    /// The host the results describe (each JSON file's envelope).
    pub stamp: HostStamp,
    pub report: TuneReport,
    pub probe: Option<ProbeReport>,
    pub check: Option<CheckReport>,
    /// The phase running now (named in an interrupted report).
    pub phase: String,
    pub phase_started: Instant,
    /// The final report is written: a late signal has nothing to add.
    pub done: bool,
}

fn lock(s: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    s.lock().unwrap_or_else(|p| p.into_inner())
}

/// `innotune tune`: resolve, journal, [`run_phases`], write the report
/// directory.
impl Command for cli::TuneArgs {
    type Report = TuneReport;

    fn execute(env: &Env, args: Self) -> Result<TuneReport> {
        tune(env, args)
    }
}

fn tune(env: &Env, args: cli::TuneArgs) -> Result<TuneReport> {
    let opts = args.options();
    let host = &env.host;
    if !host.is_live() {
        return Err(Fix::new(
            "tune measures this machine; --root replays another host",
            "drop --root (probe and check replay fixtures)",
        )
        .into());
    }
    let clock = Clock::new(opts.budget);
    let probe_t0 = Instant::now();
    // Bad input fails here, before anything is created or changed.
    let probe = crate::probe::execute(
        host,
        ProbeOptions {
            path: opts.path.clone(),
        },
    )?;
    let path = PathBuf::from(&probe.path);
    if !path.is_dir() {
        return Err(Fix::new(
            format!("{} is not a directory", path.display()),
            "give a directory on the filesystem to tune",
        )
        .into());
    }
    if let Some(f) = &opts.slowlog {
        if f.as_os_str() != "-" {
            // Refused now rather than after the sweep: a FIFO or device is
            // refused without blocking, as check refuses it.
            crate::input::Input {
                what: "--slowlog",
                fix: "give the path of a slow query log (SELECT @@slow_query_log_file)",
                max: None,
            }
            .open(f)?;
        }
    }
    // A --device that names no device under PATH is refused now, not
    // after the check phase has spent its share of the budget.
    if !opts.devices.is_empty() {
        let (_, under) = crate::sweep::target::devices_under(host, &path)?;
        crate::sweep::target::only(under, &opts.devices, &path)?;
    }
    let out_dir = out::prepare(host, opts.out.as_deref())?;
    let guard = env.guard()?;
    let mut report = TuneReport::new(
        path.clone(),
        &probe.path_source,
        out_dir.clone(),
        opts.budget.as_secs_f64(),
        opts.quick,
    );
    report.apply_command = apply_command(&path, &out_dir, &opts, false);
    let shared = Arc::new(Mutex::new(Shared {
        stamp: env.stamp().clone(),
        report,
        probe: None,
        check: None,
        phase: "probe".into(),
        phase_started: clock.started,
        done: false,
    }));
    {
        let shared = shared.clone();
        let started = clock.started;
        crate::journal::set_interrupt_hook(Some(Arc::new(move |sig: &str| {
            let mut s = lock(&shared);
            if s.done {
                return;
            }
            let phase = s.phase.clone();
            s.report.interrupted = Some(format!("{sig} during {phase}"));
            let e = s.phase_started.elapsed().as_secs_f64();
            s.report.phases.push(Phase {
                name: phase,
                status: Status::Interrupted,
                elapsed_s: e,
                note: Some(format!("{sig}: what it had measured is lost")),
            });
            s.report.elapsed_s = started.elapsed().as_secs_f64();
            match out::write_all(&mut s) {
                Ok(()) => eprintln!("innotune: partial report in {}", s.report.out_dir.display()),
                Err(e) => eprintln!(
                    "innotune: could not write the partial report: {}",
                    crate::error::one_line(&e)
                ),
            }
            s.done = true;
        })));
    }
    let result = run_phases(host, &guard, &opts, &clock, &shared, (probe, probe_t0));
    let restored = guard.restore_all();
    if restored
        .iter()
        .any(|r| matches!(r.outcome, crate::journal::Outcome::Failed { .. }))
    {
        crate::output::warn("some settings could not be restored; run `innotune restore`");
    }
    let written = {
        let mut s = lock(&shared);
        s.report.elapsed_s = clock.elapsed().as_secs_f64();
        let w = out::write_all(&mut s);
        s.done = true;
        w
    };
    drop(guard);
    env.end_journal();
    crate::journal::set_interrupt_hook(None);
    result?;
    written?;
    // The hook (and its handle on `shared`) is gone: the report is ours.
    let report = match Arc::try_unwrap(shared) {
        Ok(s) => s.into_inner().unwrap_or_else(|p| p.into_inner()).report,
        Err(_) => anyhow::bail!("internal: tune's report is still shared after the run"),
    };
    // The verdicts for `check --format prometheus`, after the report
    // directory is complete: a record that cannot be written is an error
    // of its own after the report, never the loss of the report.
    if let Err(e) = crate::check::tune_record::save(&record(&report)) {
        env.fail_after_report(e);
    }
    Ok(report)
}

/// What `check --format prometheus` exports of this run: its OLTP cells'
/// ratios, intervals and verdicts as tune.json has them.
pub fn record(r: &TuneReport) -> crate::check::tune_record::TuneRecord {
    use crate::check::tune_record::{CellRecord, TuneRecord};
    TuneRecord {
        path: crate::output::path(&r.path),
        finished_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |t| t.as_secs()),
        cells: r
            .oltp
            .iter()
            .flat_map(|c| &c.cells)
            .map(|c| CellRecord {
                workload: c.workload.clone(),
                threads: c.threads,
                rounds: c.rounds,
                ratio: c.ratio,
                ci_low: c.ci_low,
                ci_high: c.ci_high,
                ci_level_pct: c.ci_level_pct,
                verdict: c.verdict,
            })
            .collect(),
    }
}

/// A progress line on stderr (always, not only on a terminal: a tune run
/// is long, and logs of it should show where it was).
fn say(clock: &Clock, phase: &str, msg: &str) {
    eprintln!(
        "innotune: tune [{phase}] {msg} · {} s left",
        clock.left().as_secs()
    );
}

fn begin(shared: &Mutex<Shared>, clock: &Clock, phase: &str, msg: &str) -> Instant {
    let mut s = lock(shared);
    s.phase = phase.into();
    s.phase_started = Instant::now();
    drop(s);
    say(clock, phase, msg);
    Instant::now()
}

fn end(shared: &Mutex<Shared>, name: &str, t0: Instant, status: Status, note: Option<String>) {
    if status == Status::Failed {
        // The next phases run, and the report records it; say it where the
        // run's progress is, too.
        crate::output::warn(format!(
            "tune: the {name} phase failed: {}",
            note.as_deref().unwrap_or("no reason given")
        ));
    }
    lock(shared).report.phases.push(Phase {
        name: name.into(),
        status,
        elapsed_s: t0.elapsed().as_secs_f64(),
        note,
    });
}

/// Run every phase; results go into `shared` as each phase ends, so an
/// interrupt keeps them (`probe` ran before the journal began, at the
/// given instant). A phase that fails is recorded and the next one
/// runs; only the report directory failing ends the run.
pub fn run_phases(
    host: &Host,
    guard: &Guard,
    opts: &TuneOptions,
    clock: &Clock,
    shared: &Arc<Mutex<Shared>>,
    (probe, t0): (ProbeReport, Instant),
) -> Result<()> {
    let path = PathBuf::from(&probe.path);
    let out_dir = lock(shared).report.out_dir.clone();
    say(clock, "probe", &format!("{}", path.display()));
    lock(shared).probe = Some(probe);
    end(shared, "probe", t0, Status::Done, None);

    // check: the findings, and the live server's settings for "before".
    let sample = opts.check_sample().min(clock.left() / 10);
    let t0 = begin(
        shared,
        clock,
        "check",
        &format!(
            "running the rules; sampling server status over {} s",
            sample.as_secs()
        ),
    );
    let copts = CheckOpts {
        path: Some(path.clone()),
        conn: opts.conn.clone(),
        sample,
        no_server: false,
        results: Vec::new(),
        measure: false,
        scratch: None,
        slowlog: opts.slowlog.clone(),
        slowlog_max_entry_size: crate::slowlog::input::DEFAULT_MAX_ENTRY,
        only: Vec::new(),
        no_host_facts: false,
        provider: None,
        server_capture: None,
        client: false,
    };
    match crate::check::execute(host, &copts) {
        Ok(c) => {
            let mut s = lock(shared);
            s.report.set_check(&c.report);
            s.check = Some(c.report);
            drop(s);
            end(shared, "check", t0, Status::Done, None);
        }
        Err(e) => end(
            shared,
            "check",
            t0,
            Status::Failed,
            Some(crate::error::one_line(&e)),
        ),
    }

    let server_bin = find_server_binary();
    let oltp_follows = opts.oltp && server_bin.is_some();

    // sweep: file presets in a scratch directory on PATH's filesystem
    // (outside the datadir when PATH is one, as it is by default).
    let scratch = scratch_base(host, &path);
    let share = options::sweep_share(clock.left(), oltp_follows);
    let t0 = begin(
        shared,
        clock,
        "sweep",
        &format!(
            "comparing schedulers under {} in {} s",
            path.display(),
            share.as_secs()
        ),
    );
    if scratch != path {
        say(
            clock,
            "sweep",
            &format!(
                "{} is a datadir: scratch files go to {} on the same filesystem",
                path.display(),
                scratch.display()
            ),
        );
    }
    match sweep(host, guard, opts, clock, &scratch, share) {
        Ok(r) => {
            let note = Some(r.plan.note.clone());
            let mut s = lock(shared);
            s.report.sweep = Some(SweepSummary {
                devices: r.devices.iter().map(|d| d.name.clone()).collect(),
                workloads: r.workloads.clone(),
                baseline: r.baseline.clone(),
                rounds: r.plan.rounds,
                trials_run: r.trials_run,
                recommendation: r.recommendation.clone(),
            });
            s.report.sweep_report = Some(r);
            s.report.apply_command = apply_command(&path, &out_dir, opts, true);
            // check again, with the sweep's significant winner.
            let sweep_json = out_dir.join("sweep.json");
            let w = out::write_one(
                &s.stamp,
                &sweep_json,
                s.report.sweep_report.as_ref().unwrap(),
            );
            if w.is_ok() {
                let measured = s.report.sweep_report.as_ref().and_then(page_write_iops);
                if let Some(c) = s.check.as_mut() {
                    if let Err(e) = recheck(host, c, &sweep_json, measured) {
                        crate::output::warn(format!(
                            "check with the sweep's results: {}",
                            crate::error::one_line(&e)
                        ));
                    }
                    let c = c.clone();
                    s.report.set_check(&c);
                }
            }
            drop(s);
            end(shared, "sweep", t0, Status::Done, note);
        }
        Err(e) => end(
            shared,
            "sweep",
            t0,
            Status::Failed,
            Some(crate::error::one_line(&e)),
        ),
    }

    // OLTP before/after: only when "after" differs from "before" in
    // something a sandbox can show.
    let profiles = {
        let (tables, rows) = opts.oltp_tables();
        let s = lock(shared);
        match &s.check {
            Some(c) => oltp::profiles(
                &c.facts,
                &c.findings,
                tables,
                rows,
                opts.allow_durability_tradeoffs,
            ),
            None => oltp::profiles(
                &Default::default(),
                &[],
                tables,
                rows,
                opts.allow_durability_tradeoffs,
            ),
        }
    };
    let skip = if !opts.oltp {
        Some("skipped: --no-oltp".to_string())
    } else if server_bin.is_none() {
        Some("skipped: no mariadbd or mysqld installed".to_string())
    } else if let Some(why) = profiles.nothing_to_compare() {
        Some(why)
    } else if clock.left() < Duration::from_secs(15) {
        Some("skipped: the budget ran out before it".to_string())
    } else {
        None
    };
    lock(shared).report.durability = profiles.durability.clone();
    let t0 = begin(shared, clock, "oltp", "before and after on two sandboxes");
    let phase_note = match skip {
        Some(n) => {
            say(clock, "oltp", &n);
            end(shared, "oltp", t0, Status::Skipped, Some(n.clone()));
            Some(n)
        }
        None => match oltp_phase(
            host,
            guard,
            opts,
            clock,
            shared,
            &scratch,
            &out_dir,
            profiles.clone(),
        ) {
            Ok(note) => {
                end(shared, "oltp", t0, Status::Done, note.clone());
                note
            }
            Err(e) => {
                let n = crate::error::one_line(&e);
                end(shared, "oltp", t0, Status::Failed, Some(n.clone()));
                Some(n)
            }
        },
    };
    lock(shared)
        .report
        .attach_measurements(&profiles, phase_note.as_deref());

    // The files that persist the advice.
    let t0 = begin(
        shared,
        clock,
        "report",
        &format!("writing {}", out_dir.display()),
    );
    let mut s = lock(shared);
    if let Some(c) = &s.check {
        match crate::check::report::emit_to(host, &out_dir.join("files"), c) {
            Ok(e) => s.report.emitted = e,
            Err(e) => {
                crate::output::warn(format!("emitting files: {}", crate::error::one_line(&e)))
            }
        }
    }
    drop(s);
    end(shared, "report", t0, Status::Done, None);
    Ok(())
}

/// The sweep's workloads, most telling first: page reads during a flush
/// storm is where schedulers differ most; page writes next, since their
/// IOPS is also what check's innodb_io_capacity rule is judged against
/// ([`page_write_iops`]).
const SWEEP_WORKLOADS: [&str; 4] = ["mixed", "page-write", "page-read", "fsync-4k"];

fn sweep(
    host: &Host,
    guard: &Guard,
    opts: &TuneOptions,
    clock: &Clock,
    path: &Path,
    share: Duration,
) -> Result<crate::sweep::SweepReport> {
    let mut so = SweepOptions::new(path);
    so.rounds = crate::sweep::plan::MIN_ROUNDS;
    so.size = Some(opts.sweep_file_size());
    so.budget = Some(share);
    so.choose = true;
    so.devices = opts.devices.clone();
    // The most telling workloads that fit: as many as fit with every
    // candidate at its workloads' minimum trial length (plan::min_trial),
    // else as many as fit with fewer candidates (the plan then tests the
    // current setting, the kernel default and the class rule's choice),
    // else the first single workload that fits at all.
    let (_, all) = crate::sweep::target::devices_under(host, path)?;
    let names = |ds: &[crate::sweep::target::Device]| {
        ds.iter()
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let every = names(&all);
    let devices = crate::sweep::target::only(all, &so.devices, path)?;
    // The plan says which devices it switches before any is switched.
    let switching = names(&devices);
    say(
        clock,
        "sweep",
        &if so.devices.is_empty() {
            format!(
                "will switch the scheduler of {switching} (every device under {} with one; --device NAME switches only those named)",
                path.display()
            )
        } else {
            format!(
                "will switch the scheduler of {switching} only (--device; under {}: {every})",
                path.display()
            )
        },
    );
    let cands = crate::sweep::plan::candidates(&so, &devices)?;
    let labels: Vec<String> = cands.iter().map(|c| c.label.clone()).collect();
    let priority = crate::sweep::plan::priority(&cands, &devices);
    let try_plan = |ws: &[&str]| {
        let ws: Vec<String> = ws.iter().map(|s| s.to_string()).collect();
        crate::sweep::plan::plan(&crate::sweep::plan::Request {
            rounds: so.rounds,
            trial: so.trial,
            warmup: so.warmup,
            budget: so.budget,
            sequential: so.sequential,
            workloads: &ws,
            candidates: &labels,
            priority: &priority,
        })
    };
    let prefixes: Vec<&[&str]> = (1..=SWEEP_WORKLOADS.len())
        .rev()
        .map(|k| &SWEEP_WORKLOADS[..k])
        .collect();
    let chosen: Vec<&str> = prefixes
        .iter()
        .find(|ws| try_plan(ws).is_ok_and(|p| p.skipped.is_empty()))
        .or_else(|| prefixes.iter().find(|ws| try_plan(ws).is_ok()))
        .map(|ws| ws.to_vec())
        .or_else(|| {
            SWEEP_WORKLOADS
                .iter()
                .find(|w| try_plan(&[**w]).is_ok())
                .map(|w| vec![*w])
        })
        .ok_or_else(|| {
            // Not even one workload fits with two candidates: the plan's
            // error names the budget it needs.
            try_plan(&SWEEP_WORKLOADS[..1])
                .err()
                .unwrap_or_else(|| anyhow::anyhow!("internal: no sweep workload fits"))
                .context(format!("{} s left for the sweep", share.as_secs()))
        })?;
    so.workloads = chosen.iter().map(|s| s.to_string()).collect();
    let c = *clock;
    so.progress = Progress::Callback(Arc::new(move |e: &Event| {
        say(&c, "sweep", &e.message());
    }));
    crate::sweep::execute(host, guard, so)
}

/// The device's 16 KiB random-write IOPS as the sweep measured it: the
/// median of the page-write workload under the current setting (the
/// baseline), when the sweep ran that workload.
fn page_write_iops(r: &crate::sweep::SweepReport) -> Option<crate::check::facts::Measured> {
    r.results
        .iter()
        .find(|c| c.workload == "page-write" && c.candidate == r.baseline)
        .filter(|c| c.throughput.summary.median > 0.0)
        .map(|c| crate::check::facts::Measured {
            value: c.throughput.summary.median,
            source: format!(
                "tune's sweep: page-write under {} ({} trials)",
                r.baseline, c.throughput.summary.n
            ),
        })
}

/// check's rules again, with the sweep's result as evidence (its
/// significant winner overrides the scheduler class rule), on the facts
/// check already gathered (no second sample).
fn recheck(
    host: &Host,
    c: &mut CheckReport,
    sweep_json: &Path,
    write_iops: Option<crate::check::facts::Measured>,
) -> Result<()> {
    let notes = crate::check::results::load(host, &[sweep_json.to_path_buf()], &mut c.facts)?;
    c.notes.extend(notes);
    // What tune measured is an input of the rules too: the sweep's
    // page-write IOPS under the current scheduler is the device's write
    // rate innodb_io_capacity is judged against (as `check --measure`).
    if let Some(m) = write_iops {
        if c.facts
            .write_iops
            .as_ref()
            .map_or(true, |x| m.value > x.value)
        {
            c.facts.write_iops = Some(m);
        }
    }
    let (mut advice, rules) =
        crate::check::rules::run(&c.facts, &[], c.server.note.as_deref(), None);
    for a in &mut advice {
        a.finding.change = a
            .settings
            .iter()
            .find_map(|s| s.runtime_change(&c.facts, None));
    }
    c.findings = advice;
    c.rules = rules;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn oltp_phase(
    _host: &Host,
    guard: &Guard,
    opts: &TuneOptions,
    clock: &Clock,
    shared: &Arc<Mutex<Shared>>,
    path: &Path,
    out_dir: &Path,
    profiles: oltp::Profiles,
) -> Result<Option<String>> {
    let (tables, rows) = opts.oltp_tables();
    let workdir = path.join(format!(".innotune-tune.{}", std::process::id()));
    crate::safety::refuse_near_datadir(_host, &workdir, "tune's work directory")?;
    std::fs::create_dir(&workdir).map_err(|e| {
        Fix::new(
            format!("cannot create work directory {}: {e}", workdir.display()),
            "give a directory you can write to",
        )
    })?;
    guard.apply(
        &Host::live(),
        Box::new(crate::change::CreatedDir::adopt(&workdir)),
    )?;
    let c = *clock;
    let progress = move |m: String| say(&c, "oltp", &m);
    let sh = shared.clone();
    let mut on_pair = move |cmp: &oltp::Comparison| {
        lock(&sh).report.oltp = Some(cmp.clone());
    };
    let cmp = oltp::run(oltp::Phase {
        guard,
        workdir: &workdir,
        profile_dir: out_dir,
        profiles,
        tables,
        table_size: rows,
        threads: &opts.threads,
        seed: opts.seed.unwrap_or_else(rand::random),
        deadline: clock.deadline - options::RESERVE,
        progress: &progress,
        on_pair: &mut on_pair,
    })
    .context("OLTP before/after")?;
    let note = cmp.note.clone();
    lock(shared).report.oltp = Some(cmp);
    Ok(note)
}

/// Where tune's scratch files go: PATH itself when it is not a datadir
/// (nor inside or around one); otherwise the first of /var/tmp, /tmp and
/// PATH's ancestors that is on PATH's filesystem and clear of every
/// datadir, so the default run (PATH = the running server's datadir)
/// measures the same disks without writing into the datadir. When none
/// qualifies, PATH is returned and the phases refuse it with their fix.
pub fn scratch_base(host: &Host, path: &Path) -> PathBuf {
    use std::os::unix::fs::MetadataExt;
    if crate::safety::refuse_near_datadir(host, path, "tune's work directory").is_ok() {
        return path.to_path_buf();
    }
    let Ok(dev) = std::fs::metadata(path).map(|m| m.dev()) else {
        return path.to_path_buf();
    };
    let mut candidates = vec![PathBuf::from("/var/tmp"), PathBuf::from("/tmp")];
    candidates.extend(path.ancestors().skip(1).map(Path::to_path_buf));
    candidates
        .into_iter()
        .find(|c| {
            std::fs::metadata(c).is_ok_and(|m| m.is_dir() && m.dev() == dev)
                && crate::safety::refuse_near_datadir(host, c, "tune's work directory").is_ok()
        })
        .unwrap_or_else(|| path.to_path_buf())
}

/// mariadbd or mysqld on PATH or in the usual sbin directories (as the
/// sandbox looks for it).
pub fn find_server_binary() -> Option<PathBuf> {
    let mut p = std::env::var_os("PATH").unwrap_or_default();
    p.push(":/usr/sbin:/usr/local/sbin:/usr/local/mysql/bin:/usr/bin");
    ["mariadbd", "mysqld"]
        .iter()
        .find_map(|n| which::which_in(n, Some(&p), "/").ok())
}

/// Quote a word for a POSIX shell: as is when it is plainly safe, else in
/// single quotes (hand-written: four lines, not worth a crate).
fn sh_quote(s: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_-./:=,@%+".contains(c);
    if !s.is_empty() && s.chars().all(safe) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The exact command that makes the advice true: check's rules with the
/// sweep's verdict, applied and journaled.
fn apply_command(path: &Path, out_dir: &Path, opts: &TuneOptions, with_sweep: bool) -> String {
    let mut w = vec![
        "innotune".to_string(),
        "apply".to_string(),
        sh_quote(&path.to_string_lossy()),
    ];
    if let Some(s) = &opts.conn.socket {
        w.push(format!("--socket {}", sh_quote(&s.to_string_lossy())));
    }
    if let Some(h) = &opts.conn.host {
        w.push(format!("--host {}", sh_quote(h)));
    }
    if let Some(p) = opts.conn.port {
        w.push(format!("--port {p}"));
    }
    if let Some(u) = &opts.conn.user {
        w.push(format!("--user {}", sh_quote(u)));
    }
    if with_sweep {
        w.push(format!(
            "--results {}",
            sh_quote(&out_dir.join("sweep.json").to_string_lossy())
        ));
    }
    w.push("--yes".into());
    w.join(" ")
}

#[cfg(test)]
mod tests {
    use super::sh_quote;

    #[test]
    fn quoting() {
        assert_eq!(sh_quote("/var/lib/mysql"), "/var/lib/mysql");
        assert_eq!(sh_quote("/a b"), "'/a b'");
        assert_eq!(sh_quote("it's"), "'it'\\''s'");
    }
}
