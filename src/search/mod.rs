//! `innotune tune --search`: find the storage configuration of the server
//! by experiment. On one throwaway server built like tune's "before" (the
//! live server's InnoDB settings, sizes scaled to the sandbox's data), the
//! storage-path variables ([`knobs`]: switched with `SET GLOBAL`, or for
//! the ones read only at start by restarting the sandbox, batched so that
//! trials sharing their levels run together) and the OS settings under
//! PATH are searched by successive halving ([`halving`]) over short
//! OLTP trials interleaved with the current settings; the best candidate
//! is then proved against the current settings as `prove` proves a change
//! (fresh interleaved rounds, ratio with its exact interval, sequential
//! stopping, [`crate::prove::cells`]). Only a significant gain becomes a
//! recommendation; otherwise the answer is "keep what you have", with the
//! best candidate's interval.
//!
//! Every switch goes through the journal; Ctrl-C stops after the trial
//! that runs, keeps what was measured, and restores everything.

pub mod halving;
pub mod knobs;
pub mod report;

pub use report::SearchReport;

use crate::change::{CreatedDir, ServerVariable};
use crate::command::{Command, Env};
use crate::db::ServerEndpoint;
use crate::error::Fix;
use crate::host::Host;
use crate::journal::Guard;
use crate::stats::{CompareOpts, Direction};
use crate::trial::server::{OltpServer, OltpSettings};
use crate::trial::trials::Trial;
use crate::trial::{Arm, Setting};
use anyhow::{Context, Result};
use knobs::{Config, Kind, Knob, Skipped};
use rand::SeedableRng;
use report::{Candidate, Confirmation, Importance, Point, Recommendation, RungRecord, SearchTrial};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// `--budget` when `--search` is given without one.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(15 * 60);
/// The least budget that fits one confirmed comparison: starting and
/// loading the sandbox (about 45 s here), a first rung of two candidates,
/// and [`crate::prove::MIN_ROUNDS`] proof rounds of current and winner,
/// at the shortest trials.
pub const MIN_BUDGET: Duration = Duration::from_secs(120);
/// The sandbox's start and load, as planned before it is measured.
const SETUP_ESTIMATE: Duration = Duration::from_secs(45);
/// Switching settings and reading diskstats, per trial.
const OVERHEAD: Duration = Duration::from_millis(400);
/// Kept back at the end to put everything back.
const RESERVE: Duration = Duration::from_secs(5);
/// Most proof rounds.
const MAX_CONFIRM_ROUNDS: u32 = 10;
/// Proof rounds the search leaves room for.
const CONFIRM_PLAN: u32 = 6;
/// The one workload: sysbench's OLTP read/write mix.
const WORKLOAD: crate::oltp::Workload = crate::oltp::Workload::OltpReadWrite;

/// `tune --search`'s command: tune's flags, searched.
pub struct SearchArgs(pub crate::tune::cli::TuneArgs);

impl Command for SearchArgs {
    type Report = SearchReport;

    fn execute(env: &Env, args: Self) -> Result<SearchReport> {
        let p = prepare(&env.host, &args.0)?;
        // Ctrl-C ends the search early (the report keeps what was
        // measured); caught before the journal begins, so it is ours.
        let _catch = env.stop.catch(&[libc::SIGINT, libc::SIGTERM])?;
        let guard = env.guard()?;
        let out = run(&env.host, &guard, env, p);
        if out.is_err() {
            crate::prove::undo_server_variables(&guard);
            guard.restore_all();
        }
        drop(guard);
        env.end_journal();
        let r = out?;
        if r.restored
            .iter()
            .any(|x| matches!(x.outcome, crate::journal::Outcome::Failed { .. }))
        {
            crate::output::warn("some settings could not be restored; run `innotune restore`");
        }
        Ok(r)
    }
}

/// Trial window and warm-up for a budget: longer windows when there is
/// time for them.
pub fn timing(budget: Duration) -> (Duration, Duration) {
    if budget >= Duration::from_secs(600) {
        (Duration::from_secs(5), Duration::from_secs(2))
    } else {
        (Duration::from_secs(3), Duration::from_secs(1))
    }
}

/// Everything checked before anything is created or switched.
pub struct Prepared {
    path: PathBuf,
    scratch: PathBuf,
    budget: Duration,
    threads: u32,
    tables: u32,
    rows: u32,
    trial: Duration,
    warmup: Duration,
    min_effect: f64,
    seed: u64,
    allow_durability_tradeoffs: bool,
    /// The live server's label and its values, when one was reached.
    live: Option<(String, BTreeMap<String, String>)>,
    profiles: crate::tune::oltp::Profiles,
    live_data: Option<u64>,
    mem_total: Option<u64>,
    devices: Vec<String>,
    /// The same disks with what they offer and hold at the start.
    queues: Vec<crate::sweep::target::Device>,
    conn: crate::db::ConnArgs,
    started: Instant,
    notes: Vec<String>,
}

/// The budget check, alone (for the CLI's one line and its test).
pub fn check_budget(budget: Duration) -> Result<()> {
    if budget < MIN_BUDGET {
        let (t, w) = timing(budget);
        return Err(Fix::new(
            format!(
                "--budget {} is too small for one confirmed comparison: tune --search needs at least {} (sandbox start and load ≈{} s, two candidates, {} proof rounds of current and winner at {} s trials)",
                crate::sweep::plan::fmt_d(budget),
                crate::sweep::plan::fmt_d(MIN_BUDGET),
                SETUP_ESTIMATE.as_secs(),
                crate::prove::MIN_ROUNDS,
                (t + w).as_secs()
            ),
            format!(
                "give --budget {} or more (the default is {})",
                crate::sweep::plan::fmt_d(MIN_BUDGET),
                crate::sweep::plan::fmt_d(DEFAULT_BUDGET)
            ),
        )
        .into());
    }
    Ok(())
}

fn prepare(host: &Host, a: &crate::tune::cli::TuneArgs) -> Result<Prepared> {
    let started = Instant::now();
    if !host.is_live() {
        return Err(Fix::new(
            "tune --search measures this machine; --root replays another host",
            "drop --root",
        )
        .into());
    }
    if a.quick {
        return Err(Fix::new(
            "--quick and --search: a search needs minutes, not one",
            "drop --quick and give --search a --budget (at least 2m)",
        )
        .into());
    }
    let budget = a.budget.unwrap_or(DEFAULT_BUDGET);
    check_budget(budget)?;
    if a.threads.len() > 1 {
        return Err(Fix::new(
            format!(
                "--threads {}: tune --search measures one thread count",
                a.threads
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            "give one, e.g. --threads 8",
        )
        .into());
    }
    if a.no_oltp {
        return Err(Fix::new(
            "--no-oltp and --search: the search measures OLTP on a sandbox",
            "drop one of them",
        )
        .into());
    }
    if crate::tune::find_server_binary().is_none() {
        return Err(Fix::new(
            "tune --search needs a server binary for its sandbox, and no mariadbd or mysqld is installed",
            "install the server package (apt install mariadb-server; only the binary is used), or run tune without --search",
        )
        .into());
    }
    let probe = crate::probe::execute(
        host,
        crate::probe::ProbeOptions {
            path: a.path.clone(),
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
    let scratch = crate::tune::scratch_base(host, &path);
    crate::safety::refuse_near_datadir(host, &scratch, "tune --search's work directory")?;
    let (_, devs) = crate::sweep::target::devices_under(host, &scratch)?;
    let queues = crate::sweep::target::only(devs, &a.devices, &scratch)?;
    let devices = queues.iter().map(|d| d.name.clone()).collect();
    let mut notes = Vec::new();
    // The live server: its settings are "current" (scaled to the sandbox).
    let mut facts = crate::check::facts::Facts::default();
    let mut live = None;
    match a.conn.resolve(host).and_then(|spec| {
        let ep = crate::check::server::endpoint(&spec, &a.conn);
        crate::check::server::sample(host, &spec, ep, Duration::ZERO, &mut |_| {})
            .with_context(|| format!("reading the settings of the server at {}", spec.describe()))
    }) {
        Ok((sf, _)) => {
            let vals: BTreeMap<String, String> = SEARCHED_LIVE
                .iter()
                .filter_map(|n| sf.var(n).map(|v| (n.to_string(), v.to_string())))
                .collect();
            live = Some((sf.label(), vals));
            facts.server = Some(sf);
        }
        Err(e) if crate::check::server::names_a_server(&a.conn) => return Err(e),
        Err(e) => notes.push(format!(
            "no live server reached ({}): current is the server's defaults, and sizes are not searched",
            crate::error::one_line(&e)
        )),
    }
    let live_data = facts
        .server
        .as_ref()
        .and_then(|s| s.innodb_data_bytes)
        .filter(|&b| b > 0);
    let (tables, rows) = (4, 50_000);
    let profiles = crate::tune::oltp::profiles(&facts, &[], tables, rows, false);
    // Room for the sandbox with the largest redo the search tries.
    let need = crate::trial::server::disk_estimate(tables, rows, Some(profiles.dataset_bytes * 8));
    if let Some(free) = crate::trial::space::free_bytes(&scratch) {
        if free < need {
            return Err(Fix::new(
                format!(
                    "{} has {} free; the search's sandbox needs about {}",
                    scratch.display(),
                    crate::units::fmt_size(free),
                    crate::units::fmt_size(need)
                ),
                "free some space there, or give tune a PATH on a filesystem with room",
            )
            .into());
        }
    }
    let mem_total = match crate::model::meminfo::read(host) {
        crate::host::Known::Value(m) => Some(m.total_bytes),
        _ => None,
    };
    let (trial, warmup) = timing(budget);
    Ok(Prepared {
        path,
        scratch,
        budget,
        threads: a.threads.first().copied().unwrap_or(8),
        tables,
        rows,
        trial,
        warmup,
        min_effect: 0.03,
        seed: a.seed.unwrap_or_else(rand::random),
        allow_durability_tradeoffs: a.allow_durability_tradeoffs,
        live,
        profiles,
        live_data,
        mem_total,
        devices,
        queues,
        conn: a.conn.clone(),
        started,
        notes,
    })
}

/// The live server's variables read for "current" in live terms.
const SEARCHED_LIVE: &[&str] = &[
    "innodb_buffer_pool_size",
    "innodb_log_file_size",
    "innodb_redo_log_capacity",
    "innodb_io_capacity",
    "innodb_io_capacity_max",
    "innodb_flush_neighbors",
    "innodb_lru_scan_depth",
    "innodb_adaptive_hash_index",
    "innodb_change_buffering",
    "innodb_log_buffer_size",
    "innodb_read_io_threads",
    "innodb_write_io_threads",
    "innodb_flush_log_at_trx_commit",
    "sync_binlog",
    "innodb_flush_method",
];

/// A progress line on stderr (always: a search is long, and its logs
/// should show where it was).
fn say(deadline: Instant, msg: &str) {
    eprintln!(
        "innotune: tune --search {msg} · {} s left",
        deadline.saturating_duration_since(Instant::now()).as_secs()
    );
}

/// The sandbox's global variables.
fn variables(srv: &OltpServer) -> Result<BTreeMap<String, String>> {
    use mysql::prelude::Queryable;
    let mut c = srv.spec().connect()?;
    let rows: Vec<(String, String)> = c.query("SHOW GLOBAL VARIABLES")?;
    Ok(rows
        .into_iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v))
        .collect())
}

/// Try every level of every knob on the sandbox (SET GLOBAL through the
/// journal, read back, put back): a knob the server refuses to SET as
/// read-only becomes a restart knob when it is one of
/// [`knobs::RESTART_IF_READ_ONLY`] (returned second, its levels tried by
/// [`try_restart_levels`]), else it is skipped; a level the server rejects is dropped; a
/// level it adjusts takes the server's value.
fn try_levels(
    guard: &Guard,
    host: &Host,
    ep: &ServerEndpoint,
    knobs: Vec<Knob>,
    skipped: &mut Vec<Skipped>,
    notes: &mut Vec<String>,
) -> Result<(Vec<Knob>, Vec<Knob>)> {
    let mut out = Vec::new();
    let mut at_start = Vec::new();
    'knob: for mut k in knobs {
        let mut keep = vec![k.levels[0].clone()];
        for l in k.levels.iter().skip(1) {
            let sv = ServerVariable::new(ep, &k.name, &l.sandbox, false);
            let id = match guard.apply(host, Box::new(sv)) {
                Ok(id) => id,
                Err(e) if crate::prove::is_read_only_error(&e) => {
                    if knobs::RESTART_IF_READ_ONLY.contains(&k.name.as_str()) {
                        k.kind = Kind::Restart;
                        at_start.push(k);
                    } else {
                        skipped.push(Skipped {
                            name: k.name.clone(),
                            reason: "read only at start on this version, and not restarted for: its levels are bounded by the redo log sizes the search tries (the server refuses a log buffer larger than the redo log)".into(),
                        });
                    }
                    continue 'knob;
                }
                Err(e) => {
                    notes.push(format!(
                        "{} = {}: the server refuses it ({}); not tried",
                        k.name,
                        l.sandbox,
                        crate::error::one_line(&e)
                    ));
                    continue;
                }
            };
            let held = ServerVariable::new(ep, &k.name, "", false).current();
            guard.undo(id)?;
            keep_held(&mut keep, &k.name, l, held?.unwrap_or_default(), notes);
        }
        out.extend(with_kept(
            k,
            keep,
            "the server accepts no other value the search tries",
            skipped,
        ));
    }
    Ok((out, at_start))
}

/// Keep level `l` of knob `name` as the server holds it (`held`): a value
/// the server adjusts is tried as that (and said so), a duplicate dropped.
fn keep_held(
    keep: &mut Vec<knobs::Level>,
    name: &str,
    l: &knobs::Level,
    held: String,
    notes: &mut Vec<String>,
) {
    let mut l = l.clone();
    if !ServerVariable::same(&held, &l.sandbox) {
        notes.push(format!(
            "{name} = {}: the server sets {held}; tried as that",
            l.sandbox
        ));
        l.sandbox = held;
    }
    if !keep
        .iter()
        .any(|x| ServerVariable::same(&x.sandbox, &l.sandbox))
    {
        keep.push(l);
    }
}

/// `k` with the levels kept; skipped, with `why`, when only its current
/// level is left.
fn with_kept(
    mut k: Knob,
    keep: Vec<knobs::Level>,
    why: &str,
    skipped: &mut Vec<Skipped>,
) -> Option<Knob> {
    if keep.len() < 2 {
        skipped.push(Skipped {
            name: k.name,
            reason: why.into(),
        });
        return None;
    }
    k.levels = keep;
    Some(k)
}

/// The sandbox's restart knobs as it runs now, and what its restarts
/// took.
#[derive(Default)]
struct Restarts {
    /// (name, value) of every restart knob the server runs with; empty
    /// after a failed start.
    running: Vec<(String, String)>,
    /// Set at every restart as well: the buffer pool dumped at shutdown
    /// (all of it) and loaded at start, so trials after a restart start
    /// warm.
    extra: Vec<(String, String)>,
    count: u32,
    seconds: f64,
}

impl Restarts {
    /// Restart the sandbox with `want` unless it runs with it.
    fn to(&mut self, guard: &Guard, srv: &mut OltpServer, want: &[(String, String)]) -> Result<()> {
        if self.running == want && srv.is_up() {
            return Ok(());
        }
        let t = Instant::now();
        let vars: Vec<(String, String)> = self.extra.iter().chain(want).cloned().collect();
        self.running.clear();
        let r = srv.restart(guard, &vars);
        self.count += 1;
        self.seconds += t.elapsed().as_secs_f64();
        r?;
        self.running = want.to_vec();
        Ok(())
    }

    /// Seconds one restart takes (0 before any).
    fn each(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.seconds / f64::from(self.count)
        }
    }
}

/// The restart knobs' values in `config`, in knob order.
fn restart_vars(knobs: &[Knob], config: &Config) -> Vec<(String, String)> {
    knobs
        .iter()
        .zip(config)
        .filter(|(k, _)| k.kind == Kind::Restart)
        .map(|(k, &li)| (k.name.clone(), k.levels[li].sandbox.clone()))
        .collect()
}

/// Try every level of the restart knobs by restarting the sandbox with
/// it (through the journal, as it was started) and reading it back: a
/// level the server does not start with is dropped (the sandbox then
/// restarts with the current levels), one it adjusts takes the server's
/// value. The sandbox is left running with the current levels.
fn try_restart_levels(
    guard: &Guard,
    srv: &mut OltpServer,
    knobs: Vec<Knob>,
    restarts: &mut Restarts,
    skipped: &mut Vec<Skipped>,
    notes: &mut Vec<String>,
) -> Result<Vec<Knob>> {
    if knobs.is_empty() {
        return Ok(knobs);
    }
    let base: Vec<(String, String)> = knobs
        .iter()
        .map(|k| (k.name.clone(), k.levels[0].sandbox.clone()))
        .collect();
    restarts.running = base.clone();
    let mut out = Vec::new();
    for (ki, k) in knobs.into_iter().enumerate() {
        let mut keep = vec![k.levels[0].clone()];
        for l in k.levels.iter().skip(1) {
            let mut want = base.clone();
            want[ki].1 = l.sandbox.clone();
            if let Err(e) = restarts.to(guard, srv, &want) {
                notes.push(format!(
                    "{} = {}: the server does not start with it ({}); not tried",
                    k.name,
                    l.sandbox,
                    crate::error::one_line(&e)
                ));
                continue;
            }
            let held = variables(srv)?.get(&k.name).cloned().unwrap_or_default();
            keep_held(&mut keep, &k.name, l, held, notes);
        }
        out.extend(with_kept(
            k,
            keep,
            "the server starts with no other value the search tries",
            skipped,
        ));
    }
    restarts.to(guard, srv, &base)?;
    // The knobs dropped above stay at their current values.
    restarts.running = out
        .iter()
        .map(|k| (k.name.clone(), k.levels[0].sandbox.clone()))
        .collect();
    Ok(out)
}

/// Try every level of the OS knobs on the host, through the journal (the
/// disks' nr_requests remembered first: a scheduler switch resets it): a
/// scheduler the kernel refuses is dropped; an nr_requests level is kept
/// only when every kept scheduler takes it (a candidate may pair any two);
/// a read_ahead_kb or sysctl level the kernel adjusts takes the kernel's
/// value. Returns the kept knobs and nr_requests as each kept scheduler
/// sets it on switching. The host is left at the current levels.
fn try_os_levels(
    guard: &Guard,
    host: &Host,
    knobs: Vec<Knob>,
    devices: &[String],
    skipped: &mut Vec<Skipped>,
    notes: &mut Vec<String>,
) -> Result<(Vec<Knob>, BTreeMap<String, String>)> {
    use crate::sweep::target::attr;
    let mut nr_default = BTreeMap::new();
    if knobs.is_empty() {
        return Ok((knobs, nr_default));
    }
    for d in devices {
        let nr = attr(d, "nr_requests");
        if host.read(Path::new(&nr)).is_ok() {
            guard.apply(host, Box::new(crate::change::SysfsAttr::remember(nr)))?;
        }
    }
    let arm_of = |k: &Knob, v: &str| -> Arm {
        let settings = match k.kind {
            Kind::Sysctl => vec![Setting::Sysctl {
                key: k.name.clone(),
                value: v.into(),
            }],
            _ => devices
                .iter()
                .map(|d| Setting::Sysfs {
                    path: attr(d, k.name.trim_start_matches("queue/")).into(),
                    value: v.into(),
                })
                .collect(),
        };
        Arm {
            label: k.name.clone(),
            settings,
        }
    };
    // What the first device (or /proc/sys) holds for `k` now.
    let held = |k: &Knob| -> Option<String> {
        let p = match k.kind {
            Kind::Sysctl => Path::new("/proc/sys").join(k.name.replace('.', "/")),
            _ => PathBuf::from(attr(devices.first()?, k.name.trim_start_matches("queue/"))),
        };
        crate::change::sysfs::read_value(host, &p).ok()
    };
    let refused = |k: &Knob, v: &str, e: &anyhow::Error| {
        format!(
            "{} = {v}: the kernel refuses it ({}); not tried",
            k.name,
            crate::error::one_line(e)
        )
    };
    let mut current: Vec<Arm> = Vec::new();
    let mut schedulers: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for mut k in knobs {
        let mut keep = vec![k.levels[0].clone()];
        for l in k.levels.iter().skip(1) {
            let v = l.sandbox.as_str();
            let mut ok = true;
            if k.name == "queue/nr_requests" && !schedulers.is_empty() {
                // Under every kept scheduler, current first.
                for s in &schedulers {
                    let sched = Arm {
                        label: "scheduler".into(),
                        settings: devices
                            .iter()
                            .map(|d| Setting::Sysfs {
                                path: attr(d, "scheduler").into(),
                                value: s.clone(),
                            })
                            .collect(),
                    };
                    crate::trial::apply_arm(guard, host, &sched)?;
                    if let Err(e) = crate::trial::apply_arm(guard, host, &arm_of(&k, v)) {
                        notes.push(format!(
                            "{} = {v}: the kernel refuses it under {s} ({}); not tried",
                            k.name,
                            crate::error::one_line(&e)
                        ));
                        ok = false;
                        break;
                    }
                    if held(&k).as_deref() != Some(v) {
                        notes.push(format!(
                            "{} = {v}: the kernel sets {} under {s}; not tried",
                            k.name,
                            held(&k).unwrap_or_default()
                        ));
                        ok = false;
                        break;
                    }
                }
            } else if let Err(e) = crate::trial::apply_arm(guard, host, &arm_of(&k, v)) {
                notes.push(refused(&k, v, &e));
                ok = false;
            } else if k.name == "queue/scheduler" {
                if let Some(n) = devices.first().and_then(|d| {
                    crate::change::sysfs::read_value(host, Path::new(&attr(d, "nr_requests"))).ok()
                }) {
                    nr_default.insert(v.to_string(), n);
                }
            }
            if !ok {
                continue;
            }
            let mut l = l.clone();
            if k.name != "queue/nr_requests" {
                if let Some(h) = held(&k).filter(|h| h != v) {
                    notes.push(format!(
                        "{} = {v}: the kernel sets {h}; tried as that",
                        k.name
                    ));
                    l.live = h.clone();
                    l.sandbox = h;
                }
            }
            if !keep.iter().any(|x| x.sandbox == l.sandbox) {
                keep.push(l);
            }
        }
        // Back to the current level. nr_requests was last tried under
        // another scheduler, which may not take the current value (none
        // allows no more than the queue's tags): the current scheduler
        // first.
        if k.name == "queue/nr_requests" {
            if let Some(s) = schedulers.first() {
                crate::trial::apply_arm(
                    guard,
                    host,
                    &arm_of(
                        &Knob {
                            name: "queue/scheduler".into(),
                            ..k.clone()
                        },
                        s,
                    ),
                )?;
            }
        }
        let back = arm_of(&k, &k.levels[0].sandbox);
        crate::trial::apply_arm(guard, host, &back)?;
        if k.name == "queue/scheduler" {
            schedulers = keep.iter().map(|l| l.sandbox.clone()).collect();
        }
        current.push(back);
        if keep.len() < 2 {
            skipped.push(Skipped {
                name: k.name.clone(),
                reason: "the kernel accepts no other value the search tries".into(),
            });
            continue;
        }
        k.levels = keep;
        out.push(k);
    }
    // Everything at its current level again, in order.
    for a in &current {
        crate::trial::apply_arm(guard, host, a)?;
    }
    Ok((out, nr_default))
}

/// Where the OS knobs are set, and what they fall back to.
struct Os<'a> {
    devices: &'a [String],
    /// nr_requests as each scheduler sets it on switching (read when the
    /// levels were tried): a candidate that switches the scheduler and
    /// keeps nr_requests "current" gets the new scheduler's own value.
    nr_default: &'a BTreeMap<String, String>,
}

/// The settings of `config`: the server variables on the sandbox, in an
/// order the server takes from any state (innodb_io_capacity_max first
/// raised to `io_top`, so the capacity may be set, then the capacity,
/// then its max: twice the capacity, or `current_max` for the current
/// settings); then the OS knobs on the host, the scheduler before
/// nr_requests (a switch resets it).
fn settings(
    knobs: &[Knob],
    config: &Config,
    ep: &ServerEndpoint,
    io_top: u64,
    current_max: Option<&str>,
    os: &Os<'_>,
) -> Vec<Setting> {
    let set = |name: &str, value: String| Setting::ServerVariable {
        endpoint: ep.clone(),
        name: name.into(),
        value,
    };
    let sched = knobs
        .iter()
        .zip(config)
        .find(|(k, _)| k.name == "queue/scheduler")
        .map(|(k, &li)| (li, k.levels[li].sandbox.clone()));
    let mut out = Vec::new();
    for (k, &li) in knobs.iter().zip(config) {
        let v = k.levels[li].sandbox.clone();
        match k.kind {
            Kind::Queue => {
                let attr = k.name.trim_start_matches("queue/");
                let v = match (attr, li, &sched) {
                    ("nr_requests", 0, Some((si, s))) if *si != 0 => match os.nr_default.get(s) {
                        Some(d) => d.clone(),
                        None => continue,
                    },
                    _ => v,
                };
                for d in os.devices {
                    out.push(Setting::Sysfs {
                        path: crate::sweep::target::attr(d, attr).into(),
                        value: v.clone(),
                    });
                }
            }
            Kind::Sysctl => out.push(Setting::Sysctl {
                key: k.name.clone(),
                value: v,
            }),
            Kind::Server if k.name == "innodb_io_capacity" => {
                out.push(set("innodb_io_capacity_max", io_top.to_string()));
                let max = match (li, current_max) {
                    (0, Some(m)) => m.to_string(),
                    _ => (v.parse::<u64>().unwrap_or(200) * 2).to_string(),
                };
                out.push(set(&k.name, v));
                out.push(set("innodb_io_capacity_max", max));
            }
            Kind::Server => out.push(set(&k.name, v)),
            // In the sandbox's my.cnf, by a restart ([`Restarts`]).
            Kind::Restart => {}
        }
    }
    out
}

/// What a candidate changes, in live terms: (name, current, new).
fn changes_of(knobs: &[Knob], config: &Config) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for (k, &li) in knobs.iter().zip(config) {
        if li == 0 {
            continue;
        }
        out.push((
            k.name.clone(),
            k.levels[0].live.clone(),
            k.levels[li].live.clone(),
        ));
        if k.name == "innodb_io_capacity" {
            let v = k.levels[li].live.parse::<u64>().unwrap_or(200) * 2;
            out.push((
                "innodb_io_capacity_max".into(),
                String::new(),
                v.to_string(),
            ));
        }
    }
    out
}

fn label_of(i: usize) -> String {
    format!("c{:02}", i + 1)
}

/// The run: sandbox, search, proof, restore.
fn run(host: &Host, guard: &Guard, env: &Env, mut p: Prepared) -> Result<SearchReport> {
    let deadline = p.started + p.budget;
    let workdir = p
        .scratch
        .join(format!(".innotune-search.{}", std::process::id()));
    std::fs::create_dir(&workdir).map_err(|e| {
        Fix::new(
            format!("cannot create work directory {}: {e}", workdir.display()),
            "give a directory you can write to",
        )
    })?;
    guard.apply(&Host::live(), Box::new(CreatedDir::adopt(&workdir)))?;
    let settings_o = OltpSettings {
        threads: p.threads,
        tables: p.tables,
        table_size: p.rows,
        ..Default::default()
    };
    let wname = format!("{}@{}", WORKLOAD.name(), p.threads);
    let plan = crate::trial::server::plan(&settings_o, &[WORKLOAD.name().to_string()], &workdir)?
        .carry("before", &p.profiles.before.variables);
    let ep = plan.endpoint();
    say(
        deadline,
        &format!(
            "[setup] starting a sandbox in {} with the current settings ({}) and loading {} × {} rows",
            workdir.display(),
            p.profiles.note.split("; after:").next().unwrap_or_default(),
            p.tables,
            p.rows
        ),
    );
    let mut srv = OltpServer::start(plan, guard)?;
    let setup_s = p.started.elapsed().as_secs_f64();
    let mut report = SearchReport::new(&p, &wname, setup_s);
    let mut restarts = Restarts::default();
    let measured = search(
        host,
        guard,
        env,
        &mut p,
        &mut srv,
        &ep,
        &wname,
        deadline,
        &mut report,
        &mut restarts,
    );
    report.restarts = restarts.count;
    report.restart_s = restarts.seconds;
    if let Err(e) = measured {
        crate::prove::undo_server_variables(guard);
        drop(srv);
        return Err(e);
    }
    say(deadline, "[restore] putting everything back");
    let mut restored = crate::prove::undo_server_variables(guard);
    report.sandbox = Some(srv.stop(guard)?);
    restored.extend(guard.restore_all());
    report.restored = restored;
    report.notes.extend(std::mem::take(&mut p.notes));
    report.elapsed_s = p.started.elapsed().as_secs_f64();
    Ok(report)
}

/// One trial of `arm`.
#[allow(clippy::too_many_arguments)]
fn one_trial(
    host: &Host,
    guard: &Guard,
    srv: &OltpServer,
    p: &Prepared,
    wname: &str,
    arm: &Arm,
    seed: u64,
) -> Result<Trial> {
    let w: Vec<Box<dyn crate::trial::workload::TrialWorkload + '_>> = vec![Box::new(
        crate::trial::workload::OltpTrial::with_threads(wname, WORKLOAD, srv, p.threads),
    )];
    let design = crate::trial::Design {
        rounds: 1,
        trial: p.trial,
        warmup: p.warmup,
        total: 1,
        seed,
        trace: false,
    };
    let quiet = crate::trial::progress::Reporter::new(&crate::trial::progress::Progress::Quiet);
    let out = crate::trial::run(
        host,
        guard,
        std::slice::from_ref(arm),
        &w,
        &p.devices,
        &design,
        &quiet,
        &mut |_, _| false,
    )?;
    out.trials
        .into_iter()
        .next()
        .ok_or_else(|| anyhow::anyhow!("internal: a trial gave no result"))
}

/// Search, then prove; fills `r` (`restarts`: the sandbox's restarts,
/// counted by the caller on every exit path).
#[allow(clippy::too_many_arguments)]
fn search(
    host: &Host,
    guard: &Guard,
    env: &Env,
    p: &mut Prepared,
    srv: &mut OltpServer,
    ep: &ServerEndpoint,
    wname: &str,
    deadline: Instant,
    r: &mut SearchReport,
    restarts: &mut Restarts,
) -> Result<()> {
    use rand::seq::SliceRandom;
    let t0 = p.started;
    let sb_vars = variables(srv)?;
    r.server_version = srv.setup.server_version.clone();
    let (knobs, mut skipped) = knobs::space(&knobs::Inputs {
        sandbox: &sb_vars,
        live: p.live.as_ref().map(|(_, v)| v),
        scale: p.profiles.scale,
        live_data: p.live_data,
        sandbox_data: p.profiles.dataset_bytes,
        mem_total: p.mem_total,
        allow_durability_tradeoffs: p.allow_durability_tradeoffs,
    });
    say(
        deadline,
        &format!(
            "[setup] trying every level of {} on the sandbox",
            knobs
                .iter()
                .map(|k| k.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    );
    // The server moves innodb_io_capacity_max with a tried capacity:
    // journal its value first, so the one found is the one put back.
    if let Some(m) = sb_vars.get("innodb_io_capacity_max") {
        guard.apply(
            host,
            Box::new(ServerVariable::new(ep, "innodb_io_capacity_max", m, false)),
        )?;
    }
    let (at_start, dynamic): (Vec<Knob>, Vec<Knob>) =
        knobs.into_iter().partition(|k| k.kind == Kind::Restart);
    let (mut knobs, refused) = try_levels(guard, host, ep, dynamic, &mut skipped, &mut p.notes)?;
    let at_start: Vec<Knob> = at_start.into_iter().chain(refused).collect();
    if !at_start.is_empty() {
        say(
            deadline,
            &format!(
                "[setup] restarting the sandbox to try every level of {} (read only at start)",
                at_start
                    .iter()
                    .map(|k| k.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
        // Every restart dumps the whole pool at shutdown and loads it at
        // start, so a trial after one starts warm: the first shutdown's
        // settings through the journal, every later start's in my.cnf.
        for (n, v) in [
            ("innodb_buffer_pool_dump_pct", "100"),
            ("innodb_buffer_pool_dump_at_shutdown", "ON"),
        ] {
            if sb_vars.contains_key(n) {
                guard.apply(host, Box::new(ServerVariable::new(ep, n, v, false)))?;
                restarts.extra.push((n.into(), v.into()));
            }
        }
        if sb_vars.contains_key("innodb_buffer_pool_load_at_startup") {
            restarts
                .extra
                .push(("innodb_buffer_pool_load_at_startup".into(), "ON".into()));
        }
    }
    let at_start = try_restart_levels(guard, srv, at_start, restarts, &mut skipped, &mut p.notes)?;
    knobs.extend(at_start);
    // The OS knobs: the disks under PATH and the dirty ratios.
    let sysctls: BTreeMap<String, Option<String>> = knobs::SYSCTL_LEVELS
        .iter()
        .flat_map(|(n, _)| [n.to_string(), n.replace("_ratio", "_bytes")])
        .map(|n| {
            let v = crate::change::sysfs::read_value(
                host,
                &Path::new("/proc/sys").join(n.replace('.', "/")),
            )
            .ok();
            (n, v)
        })
        .collect();
    let (os_knobs, os_skipped) = knobs::os_space(&knobs::OsNow {
        devices: &p.queues,
        sysctls: &sysctls,
    });
    skipped.extend(os_skipped);
    if !os_knobs.is_empty() {
        say(
            deadline,
            &format!(
                "[setup] trying every level of {} on {}",
                os_knobs
                    .iter()
                    .map(|k| k.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                if p.devices.is_empty() {
                    "this host".to_string()
                } else {
                    p.devices.join(", ")
                }
            ),
        );
    }
    let (os_knobs, nr_default) = try_os_levels(
        guard,
        host,
        os_knobs,
        &p.devices,
        &mut skipped,
        &mut p.notes,
    )?;
    knobs.extend(os_knobs);
    let os = Os {
        devices: &p.devices,
        nr_default: &nr_default,
    };
    r.knobs = knobs.clone();
    r.skipped = skipped;
    let current_max = sb_vars.get("innodb_io_capacity_max").cloned();
    let io_top = knobs
        .iter()
        .filter(|k| k.name == "innodb_io_capacity")
        .flat_map(|k| k.levels.iter())
        .filter_map(|l| l.sandbox.parse::<u64>().ok())
        .map(|v| v * 2)
        .chain(current_max.as_deref().and_then(|m| m.parse().ok()))
        .max()
        .unwrap_or(2000);
    let current = Arm {
        label: "current".into(),
        settings: settings(
            &knobs,
            &vec![0; knobs.len()],
            ep,
            io_top,
            current_max.as_deref(),
            &os,
        ),
    };
    // Back to the current settings after the tries (the server adjusts
    // io_capacity_max when a capacity is tried).
    crate::trial::apply_arm(guard, host, &current)?;
    if knobs.is_empty() {
        r.recommendation = Recommendation::keep(
            "nothing to search: the server can switch none of the searched variables with SET GLOBAL, and the host none of the OS settings",
        );
        return Ok(());
    }
    let per_trial = p.trial + p.warmup + OVERHEAD;
    let grid: usize = knobs.iter().map(|k| k.levels.len()).product::<usize>() - 1;
    let left = deadline.saturating_duration_since(Instant::now());
    // Restarts: at most one per group of restart levels but the running
    // one in a search round, and one per proof round when the winner's
    // levels differ from current's.
    let groups: u32 = knobs
        .iter()
        .filter(|k| k.kind == Kind::Restart)
        .map(|k| k.levels.len() as u32)
        .product();
    let restart = Duration::from_secs_f64(restarts.each());
    let per_round = restart * groups.saturating_sub(1);
    let confirm =
        (per_trial * 2 + if groups > 1 { restart } else { Duration::ZERO }) * CONFIRM_PLAN;
    let Some(n0) = halving::fit(
        left.saturating_sub(confirm + RESERVE).as_secs_f64(),
        per_trial.as_secs_f64(),
        per_round.as_secs_f64(),
        grid,
    ) else {
        r.recommendation = Recommendation::keep(&format!(
            "the budget ran out before the search: {} s were left after the sandbox started, and two candidates with their proof need {} s",
            left.as_secs(),
            (per_trial * 3 + confirm + RESERVE).as_secs()
        ));
        return Ok(());
    };
    let mut rng = rand::rngs::SmallRng::seed_from_u64(p.seed);
    let configs = knobs::sample(&knobs, n0, &mut rng);
    let plan = halving::rungs(configs.len());
    let planned: usize = plan.iter().map(halving::Rung::trials).sum();
    r.planned_trials = planned;
    let arms: Vec<Arm> = configs
        .iter()
        .enumerate()
        .map(|(i, c)| Arm {
            label: label_of(i),
            settings: settings(&knobs, c, ep, io_top, current_max.as_deref(), &os),
        })
        .collect();
    let current_rv = restart_vars(&knobs, &vec![0; knobs.len()]);
    let arm_rv: Vec<Vec<(String, String)>> =
        configs.iter().map(|c| restart_vars(&knobs, c)).collect();
    r.candidates = configs
        .iter()
        .enumerate()
        .map(|(i, c)| Candidate::new(label_of(i), c.clone(), changes_of(&knobs, c)))
        .collect();
    say(
        deadline,
        &format!(
            "[search] {} candidates of {grid}, successive halving in {} rungs, ≈{planned} trials of {} s",
            configs.len(),
            plan.len(),
            per_trial.as_secs()
        ),
    );
    // Per candidate, (its tps, current's tps) of each round it ran.
    let mut pairs: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    let mut alive: Vec<String> = arms.iter().map(|a| a.label.clone()).collect();
    let mut round_no = 0u32;
    let mut winner: Option<String> = None;
    let tps = |t: &Trial| {
        crate::trial::trials::Metric::Throughput
            .of(t)
            .unwrap_or(0.0)
    };
    'rungs: for (ri, rung) in plan.iter().enumerate() {
        let mut rec = RungRecord {
            rung: ri as u32 + 1,
            candidates: alive.clone(),
            rounds: 0,
            survivors: Vec::new(),
        };
        for _ in 0..rung.rounds {
            // Time for this round and the proof?
            let round_cost = per_trial * (alive.len() as u32 + 1) + per_round;
            if Instant::now() + round_cost + confirm + RESERVE > deadline && rec.rounds > 0 {
                p.notes.push(format!(
                    "rung {} stopped after {} of {} rounds: the budget left only the proof's time",
                    ri + 1,
                    rec.rounds,
                    rung.rounds
                ));
                r.rungs.push(rec);
                break 'rungs;
            }
            let pool: Vec<(&Arm, &Vec<(String, String)>)> =
                std::iter::once((&current, &current_rv))
                    .chain(
                        arms.iter()
                            .zip(&arm_rv)
                            .filter(|(a, _)| alive.contains(&a.label)),
                    )
                    .collect();
            let mut random: Vec<usize> = (0..pool.len()).collect();
            random.shuffle(&mut rng);
            let keys: Vec<&Vec<(String, String)>> = pool.iter().map(|x| x.1).collect();
            let order = halving::batched(&keys, &random, &&restarts.running);
            let mut got: BTreeMap<String, f64> = BTreeMap::new();
            for (arm, rv) in order.into_iter().map(|i| pool[i]) {
                if env.stop.requested() {
                    r.interrupted = Some(signal_name(env));
                    r.rungs.push(rec);
                    r.recommendation = Recommendation::keep(&format!(
                        "keep what you have: the search was interrupted ({}) in rung {} before any proof",
                        signal_name(env),
                        ri + 1
                    ));
                    return Ok(());
                }
                say(
                    deadline,
                    &format!(
                        "[rung {}/{}] trial {} of ≈{planned} · {} · best so far {}",
                        ri + 1,
                        plan.len(),
                        r.trials.len() + 1,
                        arm.label,
                        r.trajectory
                            .last()
                            .map_or("none yet".to_string(), |b| format!(
                                "{} ×{:.2}",
                                b.best, b.score
                            ))
                    ),
                );
                restarts.to(guard, srv, rv)?;
                let t = one_trial(host, guard, srv, p, wname, arm, rng.gen_seed())?;
                got.insert(arm.label.clone(), tps(&t));
                r.trials.push(SearchTrial::new(
                    &format!("rung {}", ri + 1),
                    round_no,
                    t0.elapsed().as_secs_f64(),
                    t,
                ));
            }
            let base = got.get("current").copied().unwrap_or(0.0);
            for (l, v) in &got {
                if l != "current" {
                    pairs.entry(l.clone()).or_default().push((*v, base));
                }
            }
            round_no += 1;
            rec.rounds += 1;
            // Best so far: the highest median ratio to current.
            if let Some((l, s)) = pairs
                .iter()
                .filter_map(|(l, v)| halving::score(v).map(|s| (l, s)))
                .max_by(|a, b| a.1.total_cmp(&b.1))
            {
                r.trajectory.push(Point {
                    elapsed_s: t0.elapsed().as_secs_f64(),
                    trials: r.trials.len(),
                    best: l.clone(),
                    score: s,
                });
            }
        }
        let scores: Vec<(String, f64)> = alive
            .iter()
            .filter_map(|l| {
                pairs
                    .get(l)
                    .and_then(|v| halving::score(v))
                    .map(|s| (l.clone(), s))
            })
            .collect();
        let keep = alive.len().div_ceil(halving::ETA).max(1);
        let next = halving::survivors(&scores, keep);
        rec.survivors = next.clone();
        r.rungs.push(rec);
        if ri > 0 {
            // Can any survivor still beat current by the minimum effect?
            let hopeless = next.iter().all(|l| {
                let v = pairs.get(l).cloned().unwrap_or_default();
                let c = compare_pairs(&v, 0.05, p.min_effect, p.seed);
                c.ci_high.is_some_and(|h| h < 1.0 + p.min_effect)
            });
            if hopeless {
                r.stopped_early = Some(format!(
                    "after rung {}: no remaining candidate's 95 % interval reaches a gain of {:.0} % over the current settings",
                    ri + 1,
                    p.min_effect * 100.0
                ));
                winner = halving::survivors(&scores, 1).into_iter().next();
                break;
            }
        }
        if next.len() < 2 || ri + 1 == plan.len() {
            winner = halving::survivors(&scores, 1).into_iter().next();
            break;
        }
        alive = next;
    }
    if winner.is_none() {
        // Stopped by the budget mid-rung: the best so far.
        winner = r.trajectory.last().map(|b| b.best.clone());
    }
    // Each candidate's standing: its ratio to current from its own rounds.
    for c in &mut r.candidates {
        let v = pairs.get(&c.label).cloned().unwrap_or_default();
        c.rounds = v.len() as u32;
        c.score = halving::score(&v);
        c.first_ratio = v.first().and_then(|x| halving::score(&[*x]));
        if v.len() >= 2 {
            let cmp = compare_pairs(&v, 0.05, p.min_effect, p.seed);
            c.ratio = cmp.ratio;
            c.ci_low = cmp.ci_low;
            c.ci_high = cmp.ci_high;
        }
    }
    r.importance = importance(&knobs, &configs, &r.candidates);
    let Some(winner) = winner else {
        r.recommendation = Recommendation::keep("no candidate finished a trial");
        return Ok(());
    };
    let wi = r
        .candidates
        .iter()
        .position(|c| c.label == winner)
        .ok_or_else(|| anyhow::anyhow!("internal: winner {winner} is not a candidate"))?;
    r.winner = Some(winner.clone());
    if r.stopped_early.is_some() {
        let c = &r.candidates[wi];
        r.recommendation = Recommendation::keep(&format!(
            "keep what you have: the search stopped early, and its best candidate, {winner}, measured ×{} against the current settings",
            c.interval_words()
        ));
        return Ok(());
    }
    // The proof: current vs the winner, fresh interleaved rounds.
    let warm = &arms[wi];
    let left = deadline
        .saturating_duration_since(Instant::now())
        .saturating_sub(RESERVE);
    // With other restart levels than current's, a restart per round: the
    // round starts with the levels the sandbox runs with (so the order
    // alternates, current–winner then winner–current), and each trial
    // after a restart starts from a reloaded pool.
    let pair_rv = [current_rv.clone(), arm_rv[wi].clone()];
    let per_proof_round = per_trial * 2
        + if pair_rv[0] != pair_rv[1] {
            restart
        } else {
            Duration::ZERO
        };
    let rounds =
        ((left.as_secs_f64() / per_proof_round.as_secs_f64()) as u32).min(MAX_CONFIRM_ROUNDS);
    if rounds < crate::prove::MIN_ROUNDS {
        r.recommendation = Recommendation::keep(&format!(
            "not proved: {} s were left for the proof, and {} rounds need {} s; the search's best, {winner}, measured ×{} (search trials, not a proof)",
            left.as_secs(),
            crate::prove::MIN_ROUNDS,
            (per_proof_round * crate::prove::MIN_ROUNDS).as_secs(),
            r.candidates[wi].interval_words()
        ));
        return Ok(());
    }
    let bounds = crate::stats::sequential::Boundaries::new(crate::prove::ALPHA, rounds);
    let pair = [current.clone(), warm.clone()];
    let names = [wname.to_string()];
    let mut trials: Vec<Trial> = Vec::new();
    let mut rounds_run = 0;
    for round in 0..rounds {
        let mut random = vec![0, 1];
        random.shuffle(&mut rng);
        let order = halving::batched(&pair_rv, &random, &restarts.running);
        for (arm, rv) in order.into_iter().map(|i| (&pair[i], &pair_rv[i])) {
            if env.stop.requested() {
                r.interrupted = Some(signal_name(env));
                break;
            }
            restarts.to(guard, srv, rv)?;
            say(
                deadline,
                &format!(
                    "[proof] round {}/{rounds} · {winner} against current · {}",
                    round + 1,
                    arm.label
                ),
            );
            let mut t = one_trial(host, guard, srv, p, wname, arm, rng.gen_seed())?;
            t.round = round;
            trials.push(t.clone());
            r.trials.push(SearchTrial::new(
                "proof",
                round,
                t0.elapsed().as_secs_f64(),
                t,
            ));
        }
        if r.interrupted.is_some() {
            break;
        }
        rounds_run = round + 1;
        let level = bounds.level(rounds_run);
        if level > 0.0 && rounds_run < rounds {
            let cells = crate::prove::cells(&trials, &pair, &names, level, p.min_effect, p.seed);
            if cells.iter().all(|c| c.verdict.claims()) {
                break;
            }
        }
    }
    let level = bounds.level(rounds_run.max(1));
    let level = if level > 0.0 {
        level
    } else {
        crate::prove::ALPHA
    };
    let cell = crate::prove::cells(&trials, &pair, &names, level, p.min_effect, p.seed)
        .into_iter()
        .next();
    r.confirmation = Some(Confirmation {
        arm: winner.clone(),
        rounds,
        rounds_run,
        level,
        cell: cell.clone(),
    });
    let proved = cell.as_ref().is_some_and(|c| {
        c.verdict == crate::stats::Effect::Faster && c.throughput.ci_low.is_some_and(|l| l > 1.0)
    });
    if let Some(sig) = &r.interrupted {
        r.recommendation = Recommendation::keep(&format!(
            "keep what you have: the proof of {winner} was interrupted ({sig}) after {rounds_run} round(s)"
        ));
        return Ok(());
    }
    let ch: Vec<(String, String, String)> = r.candidates[wi]
        .changes
        .iter()
        .map(|c| (c.name.clone(), c.from.clone(), c.to.clone()))
        .collect();
    r.recommendation = if proved {
        let at_start: Vec<String> = knobs
            .iter()
            .filter(|k| k.kind == Kind::Restart)
            .map(|k| k.name.clone())
            .collect();
        Recommendation::change(
            &winner,
            ch,
            &at_start,
            &p.conn,
            cell.as_ref(),
            &p.path,
            &p.devices,
        )
    } else {
        let words = cell.as_ref().map_or("no interval".to_string(), |c| {
            format!(
                "×{:.3} ({:.1} % interval {}–{}, {})",
                c.throughput.ratio.unwrap_or(f64::NAN),
                c.throughput.ci_level * 100.0,
                fmt_opt(c.throughput.ci_low),
                fmt_opt(c.throughput.ci_high),
                c.verdict.words()
            )
        });
        Recommendation::keep(&format!(
            "keep what you have: the best candidate, {winner}, did not beat the current settings significantly in the proof: {words}"
        ))
    };
    Ok(())
}

fn fmt_opt(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{v:.3}"))
}

fn signal_name(env: &Env) -> String {
    match env.stop.signal() {
        Some(libc::SIGTERM) => "SIGTERM".into(),
        _ => "SIGINT".into(),
    }
}

/// A candidate against current from paired rounds: the two sides'
/// throughputs through `stats::compare_effect`.
fn compare_pairs(
    v: &[(f64, f64)],
    alpha: f64,
    min_effect: f64,
    seed: u64,
) -> crate::stats::Comparison {
    let cand: Vec<f64> = v.iter().map(|x| x.0).collect();
    let base: Vec<f64> = v.iter().map(|x| x.1).collect();
    let opts = CompareOpts {
        alpha,
        min_effect,
        seed,
        ..Default::default()
    };
    crate::stats::compare_effect(&base, &cand, Direction::HigherIsBetter, &opts).0
}

/// How much each knob moved the result: from every candidate's first
/// trial (the first rung measures each once, a random design), the
/// geometric mean of the ratio to current at each level; the effect is
/// the best level's over the current level's.
fn importance(knobs: &[Knob], configs: &[Config], cands: &[Candidate]) -> Vec<Importance> {
    let first: Vec<Option<f64>> = cands.iter().map(|c| c.first_ratio).collect();
    let mut out = Vec::new();
    for (ki, k) in knobs.iter().enumerate() {
        let gm = |li: usize| -> Option<(f64, usize)> {
            let logs: Vec<f64> = configs
                .iter()
                .zip(&first)
                .filter(|(c, _)| c[ki] == li)
                .filter_map(|(_, r)| r.filter(|&x| x > 0.0).map(f64::ln))
                .collect();
            (!logs.is_empty()).then(|| {
                (
                    (logs.iter().sum::<f64>() / logs.len() as f64).exp(),
                    logs.len(),
                )
            })
        };
        let per: Vec<(usize, f64, usize)> = (0..k.levels.len())
            .filter_map(|li| gm(li).map(|(g, n)| (li, g, n)))
            .collect();
        let Some(&(best, bg, _)) = per.iter().max_by(|a, b| a.1.total_cmp(&b.1)) else {
            continue;
        };
        let Some(&(worst, wg, _)) = per.iter().min_by(|a, b| a.1.total_cmp(&b.1)) else {
            continue;
        };
        let at_current = per.iter().find(|x| x.0 == 0).map(|x| x.1);
        out.push(Importance {
            knob: k.name.clone(),
            best: k.levels[best].live.clone(),
            worst: k.levels[worst].live.clone(),
            current: k.levels[0].live.clone(),
            spread: bg / wg,
            over_current: at_current.map(|c| bg / c),
            candidates: per.iter().map(|x| x.2).sum(),
        });
    }
    out.sort_by(|a, b| b.spread.total_cmp(&a.spread));
    out
}

trait GenSeed {
    fn gen_seed(&mut self) -> u64;
}

impl GenSeed for rand::rngs::SmallRng {
    fn gen_seed(&mut self) -> u64 {
        rand::Rng::gen(self)
    }
}

/// The path a search ran under, for the report.
pub fn shown(p: &Path) -> String {
    crate::output::path(p)
}
