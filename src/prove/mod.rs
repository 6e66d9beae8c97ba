//! `innotune prove`: a host-wide change as a controlled experiment. The
//! arms are the current state, each change alone and all together; the
//! trial engine ([`crate::trial`]) switches them through the journal
//! between interleaved, randomised rounds; each arm is compared with the
//! current state per workload with `stats::compare_effect` at a
//! Bonferroni-corrected level. Everything is put back on every exit path.

pub mod cli;
pub mod report;

pub use report::{ProveCell, ProveReport};

use crate::change::{CreatedDir, ServerVariable, SysfsAttr};
use crate::command::{Command, Env};
use crate::db::{ConnSpec, ServerEndpoint};
use crate::error::Fix;
use crate::host::Host;
use crate::journal::Guard;
use crate::stats::{effect, CompareOpts, Direction};
use crate::trial::server::{self, OltpSettings};
use crate::trial::trials::{Metric, Trial};
use crate::trial::workload::{self, Spec, TrialWorkload};
use crate::trial::{queue_attr, Arm, Setting};
use anyhow::{Context, Result};
use std::path::Path;
use std::time::{Duration, Instant};

/// The family's false-claim bound, split over every comparison.
pub const ALPHA: f64 = 0.05;
/// Fewest rounds that can ever give a verdict (2/C(8,4) = 0.029).
pub const MIN_ROUNDS: u32 = 4;
/// Most rounds a budget buys.
const MAX_BUDGET_ROUNDS: u32 = 20;
/// Time per trial outside the windows: switching, snapshots.
const OVERHEAD: Duration = Duration::from_millis(250);

/// One `--change KEY=VALUE`, checked against the host.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ChangeSpec {
    pub key: String,
    pub value: String,
    /// `sysfs` (a block-queue attribute of every switched device),
    /// `sysctl`, `server_variable` (SET GLOBAL on the OLTP server), or
    /// `remount` (a mount option of PATH's filesystem).
    pub kind: String,
    /// `remount`: the mount point switched (PATH's filesystem, checked by
    /// `safety::refuse_remount`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount_point: Option<std::path::PathBuf>,
}

impl ChangeSpec {
    /// `read_ahead_kb=1024`.
    pub fn label(&self) -> String {
        format!("{}={}", self.key, self.value)
    }

    pub fn is_server_variable(&self) -> bool {
        self.kind == "server_variable"
    }
}

/// Parse and check `KEY=VALUE` against the devices' sysfs (or /proc/sys)
/// on `host`: one line naming the fix for anything innotune would not
/// write or the host lacks. A key is classified by its spelling: with a
/// '.' a sysctl, one of [`crate::change::allowed::QUEUE_ATTRS`] a
/// block-queue attribute, any other a server variable (checked against
/// the server later, before any round: [`try_server_variables`]).
pub fn parse_change(host: &Host, s: &str, devices: &[String]) -> Result<ChangeSpec> {
    // `mount:noatime` is `mount=noatime`.
    let s = &match s.strip_prefix("mount:") {
        Some(o) => format!("mount={o}"),
        None => s.to_string(),
    };
    let Some((k, v)) = s.split_once('=') else {
        return Err(Fix::new(
            format!("--change {s:?} is not KEY=VALUE"),
            "write it as --change read_ahead_kb=1024 or --change vm.swappiness=1",
        )
        .into());
    };
    let (k, v) = (k.trim(), v.trim());
    if v.is_empty() || !crate::change::plain_value(v) {
        return Err(Fix::new(
            format!("--change {s:?}: {v:?} is not a value innotune writes"),
            "give a number or a word, e.g. --change read_ahead_kb=1024",
        )
        .into());
    }
    if k == "mount" {
        if crate::change::remount::family(v).is_none() {
            return Err(Fix::new(
                format!("--change mount={v}: not a mount option innotune switches"),
                format!(
                    "use one of {}",
                    crate::change::remount::OPTIONS
                        .iter()
                        .map(|(o, _)| format!("mount={o}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
            .into());
        }
        return Ok(ChangeSpec {
            key: k.into(),
            value: v.into(),
            kind: "remount".into(),
            mount_point: None,
        });
    }
    if k.contains('.') {
        if !crate::change::allowed::SYSCTLS.contains(&k) {
            return Err(Fix::new(
                format!("--change {k}: not a sysctl innotune may change"),
                format!(
                    "use one of {} (src/change/allowed.rs lists what `innotune restore` accepts)",
                    crate::change::allowed::SYSCTLS.join(", ")
                ),
            )
            .into());
        }
        let p = Path::new("/proc/sys").join(k.replace('.', "/"));
        if host.read(&p).is_err() {
            return Err(Fix::new(
                format!("--change {k}: this kernel has no {}", p.display()),
                "check the name with `sysctl -a`",
            )
            .into());
        }
        return Ok(ChangeSpec {
            key: k.into(),
            value: v.into(),
            kind: "sysctl".into(),
            mount_point: None,
        });
    }
    if !crate::change::allowed::QUEUE_ATTRS.contains(&k) {
        if crate::change::allowed::SERVER_VARIABLES.contains(&k) {
            return Ok(ChangeSpec {
                key: k.into(),
                value: v.into(),
                kind: "server_variable".into(),
                mount_point: None,
            });
        }
        return Err(Fix::new(
            format!(
                "--change {k}: not a block-queue attribute, sysctl or server variable innotune may change"
            ),
            format!(
                "use a queue attribute ({}), a sysctl such as vm.swappiness, or a server variable ({})",
                crate::change::allowed::QUEUE_ATTRS.join(", "),
                crate::change::allowed::SERVER_VARIABLES.join(", ")
            ),
        )
        .into());
    }
    for d in devices {
        let p = queue_attr(d, k);
        let now = match host.read(&p) {
            Ok(s) => s,
            Err(_) => {
                return Err(Fix::new(
                    format!("--change {k}: {d} has no {}", p.display()),
                    "drop this change, or choose the devices that have it with --device",
                )
                .into())
            }
        };
        if k == "scheduler" {
            let offered = crate::model::choice::parse(&now)
                .map(|c| c.offered)
                .unwrap_or_default();
            if !offered.iter().any(|o| o == v) {
                return Err(Fix::new(
                    format!(
                        "--change scheduler={v}: {d} does not offer it (it offers: {})",
                        offered.join(", ")
                    ),
                    "pick from the offered names, or load the module (e.g. `modprobe bfq`)",
                )
                .into());
            }
        }
    }
    Ok(ChangeSpec {
        key: k.into(),
        value: v.into(),
        kind: "sysfs".into(),
        mount_point: None,
    })
}

/// The settings `c` stands for on `devices` (a server variable: on the
/// server at `server`).
fn settings_of(
    c: &ChangeSpec,
    devices: &[String],
    server: Option<&ServerEndpoint>,
    value: &str,
) -> Vec<Setting> {
    if c.is_server_variable() {
        server
            .map(|e| Setting::ServerVariable {
                endpoint: e.clone(),
                name: c.key.clone(),
                value: value.into(),
            })
            .into_iter()
            .collect()
    } else if c.kind == "sysctl" {
        vec![Setting::Sysctl {
            key: c.key.clone(),
            value: value.into(),
        }]
    } else if c.kind == "remount" {
        c.mount_point
            .iter()
            .map(|mp| Setting::Mount {
                mount_point: mp.clone(),
                value: value.into(),
            })
            .collect()
    } else {
        devices
            .iter()
            .map(|d| Setting::Sysfs {
                path: queue_attr(d, &c.key),
                value: value.into(),
            })
            .collect()
    }
}

/// The arms: `current` (what the host holds now for every key a change
/// touches), each change alone (the others at their current values), and
/// `all` when there are two or more. Within an arm the scheduler comes
/// first (switching it resets nr_requests); `current` also puts back
/// nr_requests when a scheduler is switched. Server variables are read
/// from the server at `server` (so it must be running).
pub fn arms(
    host: &Host,
    changes: &[ChangeSpec],
    devices: &[String],
    server: Option<&ServerEndpoint>,
) -> Result<Vec<Arm>> {
    let rank = |c: &ChangeSpec| if c.key == "scheduler" { 0 } else { 1 };
    refuse_twice(changes)?;
    let mut keys: Vec<ChangeSpec> = changes.to_vec();
    keys.sort_by_key(|c| rank(c));
    let current_of = |c: &ChangeSpec| -> Result<Vec<Setting>> {
        let mut out = Vec::new();
        for s in settings_of(c, devices, server, "") {
            let now = s
                .current(host)
                .with_context(|| format!("reading {}", c.key))?;
            out.push(match s {
                Setting::Sysfs { path, .. } => Setting::Sysfs { path, value: now },
                Setting::Sysctl { key, .. } => Setting::Sysctl { key, value: now },
                Setting::ServerVariable { endpoint, name, .. } => Setting::ServerVariable {
                    endpoint,
                    name,
                    value: now,
                },
                Setting::Mount { mount_point, .. } => Setting::Mount {
                    mount_point,
                    value: now,
                },
            });
        }
        Ok(out)
    };
    let mut base: Vec<Vec<Setting>> = Vec::new();
    for c in &keys {
        base.push(current_of(c)?);
    }
    let switches_scheduler = keys.iter().any(|c| c.key == "scheduler");
    let has_nr = keys.iter().any(|c| c.key == "nr_requests");
    let nr_back: Vec<Setting> = if switches_scheduler && !has_nr {
        devices
            .iter()
            .filter_map(|d| {
                let path = queue_attr(d, "nr_requests");
                let value = crate::change::sysfs::read_value(host, &path).ok()?;
                Some(Setting::Sysfs { path, value })
            })
            .collect()
    } else {
        Vec::new()
    };
    let build = |label: String, on: &dyn Fn(&ChangeSpec) -> bool| {
        let mut settings = Vec::new();
        let mut sched_changed = false;
        for (c, b) in keys.iter().zip(&base) {
            if on(c) {
                sched_changed |= c.key == "scheduler";
                settings.extend(settings_of(c, devices, server, &c.value));
            } else {
                settings.extend(b.iter().cloned());
            }
            if c.key == "scheduler" && !sched_changed {
                settings.extend(nr_back.iter().cloned());
            }
        }
        Arm { label, settings }
    };
    let mut out = vec![build("current".into(), &|_| false)];
    for c in changes {
        let l = c.label();
        out.push(build(l, &|k| k.key == c.key));
    }
    if changes.len() >= 2 {
        out.push(build("all".into(), &|_| true));
    }
    Ok(out)
}

/// Each key once: prove compares each change with the current state.
fn refuse_twice(changes: &[ChangeSpec]) -> Result<()> {
    for (i, c) in changes.iter().enumerate() {
        if changes[..i].iter().any(|k| k.key == c.key) {
            return Err(Fix::new(
                format!("--change {} is given twice", c.key),
                "give each key once; prove compares each change with the current state",
            )
            .into());
        }
    }
    Ok(())
}

/// How many arms `changes` make: `current`, each alone, and `all` for two
/// or more.
fn arm_count(changes: &[ChangeSpec]) -> usize {
    1 + changes.len() + usize::from(changes.len() >= 2)
}

/// A server variable's state as read before any round.
fn server_error(what: String, fix: &str) -> anyhow::Error {
    Fix::new(what, fix).into()
}

/// Whether the server says `name` is read-only (needs a restart): MariaDB's
/// information_schema.SYSTEM_VARIABLES; None where the server has no such
/// table (MySQL: its SET is refused with error 1238 instead).
fn read_only(conn: &mut mysql::Conn, name: &str) -> Option<bool> {
    use mysql::prelude::Queryable;
    conn.exec_first::<String, _, _>(
        "SELECT READ_ONLY FROM information_schema.SYSTEM_VARIABLES WHERE VARIABLE_NAME = ?",
        (name.to_ascii_uppercase(),),
    )
    .ok()
    .flatten()
    .map(|r| r.eq_ignore_ascii_case("YES"))
}

/// Before the journal begins (`--live-server`): every server variable of
/// `changes` exists on the server `spec` reaches and is dynamic; one line
/// naming the fix otherwise.
fn check_server_variables(spec: &ConnSpec, changes: &[ChangeSpec], live: bool) -> Result<()> {
    use mysql::prelude::Queryable;
    let mut c = spec.connect()?;
    for ch in changes.iter().filter(|c| c.is_server_variable()) {
        let k = &ch.key;
        let now: Option<(String, String)> = c
            .query_first(format!("SHOW GLOBAL VARIABLES LIKE '{k}'"))
            .with_context(|| format!("reading {k} at {}", spec.describe()))?;
        if now.is_none() {
            return Err(server_error(
                format!(
                    "--change {k}: the server at {} has no variable {k}",
                    spec.describe()
                ),
                "drop this change (SHOW GLOBAL VARIABLES lists what this server version has)",
            ));
        }
        if read_only(&mut c, k) == Some(true) {
            return Err(needs_restart(k, live));
        }
    }
    Ok(())
}

fn needs_restart(k: &str, live: bool) -> anyhow::Error {
    if live {
        server_error(
            format!("--change {k}: {k} is not dynamic (it needs a server restart), and prove never restarts the live server"),
            "drop --live-server to prove it on a throwaway server built with it, or compare two servers with `innotune tune`",
        )
    } else {
        server_error(
            format!("--change {k}: {k} is not dynamic (it needs a server restart), so it cannot be switched between rounds"),
            "compare servers started with each value (`innotune sandbox start --profile FILE`, or `innotune tune`), or drop this change",
        )
    }
}

/// Is `e` (or its cause) MySQL's "is a read only variable" (1238)?
pub fn is_read_only_error(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        matches!(
            c.downcast_ref::<mysql::Error>(),
            Some(mysql::Error::MySqlError(m)) if m.code == 1238
        )
    })
}

/// The server's own words for a refused statement.
fn server_words(e: &anyhow::Error) -> String {
    e.chain()
        .find_map(|c| match c.downcast_ref::<mysql::Error>() {
            Some(mysql::Error::MySqlError(m)) => Some(m.message.clone()),
            _ => None,
        })
        .unwrap_or_else(|| crate::error::one_line(e))
}

/// Before any round: try each server variable of `changes` on the server
/// at `endpoint` (SET GLOBAL through the journal, read back, put back).
/// A variable the server lacks, one that needs a restart, a value it
/// rejects or adjusts: one line naming the fix, with nothing left changed.
pub fn try_server_variables(
    guard: &Guard,
    host: &Host,
    changes: &[ChangeSpec],
    endpoint: &ServerEndpoint,
    spec: &ConnSpec,
    live: bool,
) -> Result<()> {
    check_server_variables(spec, changes, live)?;
    for ch in changes.iter().filter(|c| c.is_server_variable()) {
        let (k, v) = (&ch.key, &ch.value);
        let id = match guard.apply(host, Box::new(ServerVariable::new(endpoint, k, v, false))) {
            Ok(id) => id,
            Err(e) if is_read_only_error(&e) => return Err(needs_restart(k, live)),
            Err(e) => {
                return Err(server_error(
                    format!("--change {k}={v}: the server rejects it: {}", server_words(&e)),
                    &format!("give a value the server accepts for {k} (SHOW GLOBAL VARIABLES LIKE '{k}' shows the current one)"),
                ))
            }
        };
        let held = ServerVariable::new(endpoint, k, v, false).current();
        guard.undo(id)?;
        let held = held?.unwrap_or_default();
        if !ServerVariable::same(&held, v) {
            return Err(server_error(
                format!("--change {k}={v}: the server holds {held} after SET GLOBAL {k} = {v} (it adjusts the value)"),
                &format!("give --change {k}={held}, the value the server sets"),
            ));
        }
    }
    Ok(())
}

/// Put back the server variables switched on a sandbox (before it is
/// stopped), reported as `restore` reports them.
pub fn undo_server_variables(guard: &Guard) -> Vec<crate::journal::Restored> {
    let mut out = Vec::new();
    for e in guard.entries() {
        if e.kind() != "server_variable" {
            continue;
        }
        let target = e.change().target();
        match guard.undo(e.id()) {
            Ok(u) => out.push(crate::journal::Restored {
                kind: "server_variable".into(),
                path: target.into(),
                original: u.original,
                found: u.found,
                pid: u.pid,
                outcome: u.outcome,
            }),
            Err(err) => out.push(crate::journal::Restored {
                kind: "server_variable".into(),
                path: target.into(),
                original: None,
                found: None,
                pid: None,
                outcome: crate::journal::Outcome::Failed {
                    reason: crate::error::one_line(&err),
                },
            }),
        }
    }
    out
}

/// The per-comparison level: [`ALPHA`] over every arm-vs-current
/// comparison (Bonferroni, as sweep splits it over its workloads).
pub fn corrected_alpha(arms: usize, workloads: usize) -> f64 {
    ALPHA / (arms.saturating_sub(1).max(1) * workloads.max(1)) as f64
}

/// Fewest equal rounds whose exact rank test can reach `alpha`.
pub fn rounds_needed(alpha: f64) -> u32 {
    (1..=100)
        .find(|&r| effect::reachable(r as usize, r as usize, alpha))
        .unwrap_or(100)
}

/// Rounds to run: `--rounds`, or what `--budget` fits. Refuses before
/// anything changes when fewer than [`MIN_ROUNDS`] fit or the rounds
/// cannot reach `level` (the corrected level, or the last look's).
pub fn plan_rounds(
    rounds: Option<u32>,
    sequential: bool,
    budget: Option<Duration>,
    per_round: Duration,
) -> Result<u32> {
    let default = if sequential { 10 } else { 5 };
    let r = match budget {
        None => rounds.unwrap_or(default),
        Some(b) => {
            let fit = (b.as_secs_f64() / per_round.as_secs_f64().max(1e-9)).floor() as u32;
            if fit < MIN_ROUNDS {
                return Err(Fix::new(
                    format!(
                        "--budget {} fits {fit} round(s) of {} each; a verdict needs at least {MIN_ROUNDS}",
                        crate::sweep::plan::fmt_d(b),
                        crate::sweep::plan::fmt_d(per_round)
                    ),
                    format!(
                        "give --budget {} or more, fewer workloads or changes, or a shorter --trial",
                        crate::sweep::plan::fmt_d(per_round * MIN_ROUNDS)
                    ),
                )
                .into());
            }
            fit.min(rounds.unwrap_or(MAX_BUDGET_ROUNDS))
        }
    };
    if r < MIN_ROUNDS {
        return Err(Fix::new(
            format!("--rounds {r} can never show a significant difference"),
            format!("use at least {MIN_ROUNDS} rounds (5 is the default)"),
        )
        .into());
    }
    if sequential && r > crate::stats::sequential::MAX_ROUNDS {
        return Err(Fix::new(
            format!(
                "--sequential with {r} rounds: a sequential design plans at most {}",
                crate::stats::sequential::MAX_ROUNDS
            ),
            format!(
                "use --rounds {} or fewer",
                crate::stats::sequential::MAX_ROUNDS
            ),
        )
        .into());
    }
    Ok(r)
}

/// Refuse rounds whose rank test can never reach `level`.
fn refuse_unreachable(rounds: u32, level: f64, comparisons: usize) -> Result<()> {
    if effect::reachable(rounds as usize, rounds as usize, level) {
        return Ok(());
    }
    let need = rounds_needed(level);
    Err(Fix::new(
        format!(
            "{rounds} rounds can never reach a verdict at the corrected level {level:.4} ({ALPHA} over {comparisons} comparisons)"
        ),
        format!("use --rounds {need} or more (or a --budget that fits them), or fewer changes or workloads"),
    )
    .into())
}

/// Each arm but `current` against it, per workload, at level `alpha`.
pub fn cells(
    trials: &[Trial],
    arms: &[Arm],
    workloads: &[String],
    alpha: f64,
    min_effect: f64,
    seed: u64,
) -> Vec<ProveCell> {
    let base = &arms[0].label;
    let mut out = Vec::new();
    for (wi, w) in workloads.iter().enumerate() {
        let of = |arm: &str, m: Metric| -> Vec<f64> {
            trials
                .iter()
                .filter(|t| t.candidate == arm && &t.workload == w)
                .filter_map(|t| m.of(t))
                .collect()
        };
        let unit = trials
            .iter()
            .find(|t| &t.workload == w)
            .map(|t| t.unit())
            .unwrap_or(crate::trial::trials::Unit::Iops);
        for (ai, a) in arms.iter().enumerate().skip(1) {
            let opts = CompareOpts {
                alpha,
                min_effect,
                seed: seed ^ ((wi as u64) << 32) ^ ai as u64,
                ..Default::default()
            };
            let (b, c) = (
                of(base, Metric::Throughput),
                of(&a.label, Metric::Throughput),
            );
            let (cmp, verdict) =
                crate::stats::compare_effect(&b, &c, Direction::HigherIsBetter, &opts);
            let (bp, cp) = (of(base, Metric::P99), of(&a.label, Metric::P99));
            let p99 = (!bp.is_empty() && !cp.is_empty()).then(|| {
                let (c99, e99) =
                    crate::stats::compare_effect(&bp, &cp, Direction::LowerIsBetter, &opts);
                report::Side::new(
                    &c99,
                    e99,
                    crate::stats::median(&bp),
                    crate::stats::median(&cp),
                )
            });
            out.push(ProveCell {
                workload: w.clone(),
                arm: a.label.clone(),
                unit,
                rounds: c.len().min(b.len()) as u32,
                throughput: report::Side::new(
                    &cmp,
                    verdict,
                    crate::stats::median(&b),
                    crate::stats::median(&c),
                ),
                p99,
                verdict,
            });
        }
    }
    out
}

/// `innotune prove`: journal, [`execute`], put everything back.
impl Command for cli::ProveArgs {
    type Report = ProveReport;

    fn execute(env: &Env, args: Self) -> Result<ProveReport> {
        // Bad input is refused before the journal is even begun.
        let prepared = prepare(&env.host, &args)?;
        let guard = env.guard()?;
        let out = run(&env.host, &guard, &args, prepared);
        if out.is_err() {
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

/// Everything checked before the host is touched.
pub struct Prepared {
    path: std::path::PathBuf,
    workdir: std::path::PathBuf,
    devices: Vec<String>,
    changes: Vec<ChangeSpec>,
    /// None until the OLTP server runs, when a change is a server variable
    /// (its current value is the server's).
    arms: Option<Vec<Arm>>,
    n_arms: usize,
    specs: Vec<Spec>,
    names: Vec<String>,
    oltp_plan: Option<server::OltpPlan>,
    /// `--live-server`: the server, checked, and its journal endpoint.
    live: Option<(server::OltpServer, ServerEndpoint)>,
    files: crate::trial::space::FilePlan,
    rounds: u32,
    alpha: f64,
    seed: u64,
}

fn prove_flags() -> Vec<String> {
    workload::long_flags::<cli::ProveArgs>("prove")
}

fn for_prove(e: anyhow::Error) -> anyhow::Error {
    workload::for_command(e, "prove", &prove_flags())
}

/// Workload names as cells: OLTP workloads once per `--threads` value.
fn cell_names(specs: &[Spec], threads: &[u32]) -> Vec<String> {
    let mut out = Vec::new();
    for s in specs {
        match s {
            Spec::Oltp { name, .. } if threads.len() > 1 => {
                out.extend(threads.iter().map(|t| format!("{name}@{t}")))
            }
            Spec::Oltp { name, .. } => out.push(format!("{name}@{}", threads[0])),
            Spec::Bench(b) => out.push(b.name().to_string()),
        }
    }
    out
}

/// Connection options without `--live-server`: the throwaway server starts
/// with that server's InnoDB settings, sizes scaled to the sandbox's data,
/// as tune builds its "before" (`tune::oltp::profiles`); only read here.
fn carry_live_settings(
    host: &Host,
    args: &cli::ProveArgs,
    plan: server::OltpPlan,
) -> Result<server::OltpPlan> {
    let spec = args.conn.resolve(host)?;
    let endpoint = crate::check::server::endpoint(&spec, &args.conn);
    let (sf, _) = crate::check::server::sample(host, &spec, endpoint, Duration::ZERO, &mut |_| {})
        .with_context(|| format!("reading the settings of the server at {}", spec.describe()))?;
    let facts = crate::check::facts::Facts {
        server: Some(sf),
        ..Default::default()
    };
    let p = crate::tune::oltp::profiles(&facts, &[], args.oltp_tables, args.oltp_table_size, false);
    Ok(plan.carry("before", &p.before.variables))
}

/// Parse, validate and plan, reading the host only.
pub fn prepare(host: &Host, args: &cli::ProveArgs) -> Result<Prepared> {
    let (path, workdir) = crate::trial::work_path(host, &args.path, "prove")?;
    let (_, devices) = crate::sweep::target::devices_under(host, &path)?;
    let devices = crate::sweep::target::only(devices, &args.devices, &path)?;
    let devices: Vec<String> = devices.into_iter().map(|d| d.name).collect();
    let mut changes = args
        .changes
        .iter()
        .map(|c| parse_change(host, c, &devices))
        .collect::<Result<Vec<_>>>()?;
    // A mount option: PATH's filesystem, refused in one line when it is
    // the root filesystem or holds a datadir (unless scratch).
    for c in changes.iter_mut().filter(|c| c.kind == "remount") {
        c.mount_point = Some(crate::safety::refuse_remount(host, &path)?);
    }
    if args.threads.contains(&0) {
        return Err(Fix::new("--threads 0", "give --threads 1 or more").into());
    }
    refuse_twice(&changes)?;
    let server_vars = changes.iter().any(|c| c.is_server_variable());
    let arms = if server_vars {
        None
    } else {
        Some(arms(host, &changes, &devices, None)?)
    };
    let n_arms = arm_count(&changes);
    let names_in = if args.workloads.is_empty() {
        crate::sweep::DEFAULT_WORKLOADS
            .iter()
            .map(|s| s.to_string())
            .collect()
    } else {
        args.workloads.clone()
    };
    let mut specs = workload::load(&names_in, &workdir, for_prove)?;
    let names = cell_names(&specs, &args.threads);
    let oltp_names: Vec<String> = specs
        .iter()
        .filter(|s| matches!(s, Spec::Oltp { .. }))
        .map(|s| s.name().to_string())
        .collect();
    if oltp_names.is_empty() && (server_vars || args.live_server) {
        let what = match changes.iter().find(|c| c.is_server_variable()) {
            Some(c) => format!("--change {}: a server variable", c.key),
            None => "--live-server".to_string(),
        };
        return Err(Fix::new(
            format!("{what} needs an OLTP workload to show a difference"),
            "add --workload oltp_read_write (or another oltp_* workload)",
        )
        .into());
    }
    let mut live = None;
    let oltp_plan = if oltp_names.is_empty() {
        None
    } else if args.live_server {
        let spec = args.conn.resolve(host)?;
        check_server_variables(&spec, &changes, true)?;
        let endpoint = crate::check::server::endpoint(&spec, &args.conn);
        let settings = OltpSettings {
            threads: args.threads[0],
            tables: args.oltp_tables,
            table_size: args.oltp_table_size,
            ..Default::default()
        };
        live = Some((
            server::OltpServer::live(spec, &settings, &oltp_names)?,
            endpoint,
        ));
        None
    } else {
        let settings = OltpSettings {
            threads: args.threads[0],
            tables: args.oltp_tables,
            table_size: args.oltp_table_size,
            buffer_pool: args.oltp_buffer_pool.clone(),
            ..Default::default()
        };
        let plan = server::plan(&settings, &oltp_names, &workdir)?;
        if crate::check::server::names_a_server(&args.conn) {
            Some(carry_live_settings(host, args, plan)?)
        } else {
            Some(plan)
        }
    };
    let (files, warning) = crate::trial::space::fit(
        &mut specs,
        args.size,
        oltp_plan.as_ref().map_or(0, |p| p.disk_estimate()),
        crate::trial::space::free_bytes(&path),
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
    let per_trial = args.trial + args.warmup + OVERHEAD;
    let per_round = per_trial * (n_arms * names.len()) as u32;
    let rounds = plan_rounds(args.rounds, args.sequential, args.budget, per_round)?;
    let comparisons = (n_arms - 1) * names.len();
    let alpha = corrected_alpha(n_arms, names.len());
    let level = if args.sequential {
        crate::stats::sequential::Boundaries::new(alpha, rounds).level(rounds)
    } else {
        alpha
    };
    refuse_unreachable(rounds, level, comparisons)?;
    Ok(Prepared {
        path,
        workdir,
        devices,
        changes,
        arms,
        n_arms,
        specs,
        names,
        oltp_plan,
        live,
        files,
        rounds,
        alpha,
        seed: args.seed.unwrap_or_else(rand::random),
    })
}

/// Lay out, start the server, run the rounds, put everything back.
fn run(host: &Host, guard: &Guard, args: &cli::ProveArgs, p: Prepared) -> Result<ProveReport> {
    let started = Instant::now();
    let progress =
        crate::trial::progress::Reporter::new(&crate::trial::progress::Progress::StatusLine);
    std::fs::create_dir(&p.workdir).map_err(|e| {
        Fix::new(
            format!("cannot create work directory {}: {e}", p.workdir.display()),
            "give a directory you can write to",
        )
    })?;
    guard.apply(&Host::live(), Box::new(CreatedDir::adopt(&p.workdir)))?;
    // Switching the scheduler resets nr_requests: remember it up front, so
    // a restore after a crash puts the value found at start back.
    if p.changes.iter().any(|c| c.key == "scheduler") {
        for d in &p.devices {
            let nr = queue_attr(d, "nr_requests");
            if host.read(&nr).is_ok() {
                guard.apply(host, Box::new(SysfsAttr::remember(nr)))?;
            }
        }
    }
    // Put every arm in place once before anything is laid out or timed: a
    // combination the kernel refuses (nr_requests above the hardware queue
    // depth without a scheduler) fails here, naming the arm, not rounds in.
    // (Arms with server variables are tried on their server once it is up:
    // `try_server_variables`.)
    let host_arms: &[Arm] = p.arms.as_deref().unwrap_or(&[]);
    for arm in host_arms.iter().skip(1) {
        if let Err(e) = crate::trial::apply_arm(guard, host, arm) {
            let (what, how) = match e.downcast_ref::<Fix>() {
                Some(f) => (f.what.clone(), f.how.clone()),
                None => (crate::error::one_line(&e), String::new()),
            };
            let how = if what.contains("nr_requests") {
                "nr_requests cannot exceed the device's queue depth when no scheduler is set (`none`); \
                 give a smaller --change nr_requests or leave it out"
                    .to_string()
            } else if how.is_empty() {
                "leave this change out or give a value the device accepts".to_string()
            } else {
                how
            };
            return Err(Fix::new(format!("arm {}: {what}", arm.label), how).into());
        }
    }
    if let Some(current) = host_arms.first() {
        crate::trial::apply_arm(guard, host, current)?;
    }
    for s in &p.specs {
        if let Spec::Bench(b) = s {
            progress.event(crate::trial::progress::Event::Layout {
                workload: b.name().to_string(),
                bytes: b.file_bytes(),
            });
            b.lay_out()?;
        }
    }
    let (oltp_server, endpoint) = match (p.oltp_plan, p.live) {
        (Some(plan), _) => {
            progress.event(crate::trial::progress::Event::Server {
                dir: plan.setup.sandbox_dir.clone(),
                tables: plan.setup.tables,
                table_size: plan.setup.table_size,
            });
            let endpoint = plan.endpoint();
            (
                Some(server::OltpServer::start(plan, guard)?),
                Some(endpoint),
            )
        }
        (None, Some((srv, endpoint))) => (Some(srv), Some(endpoint)),
        (None, None) => (None, None),
    };
    // Server variables: tried on the server before any round, then the
    // arms read their current values from it.
    let bounds = args
        .sequential
        .then(|| crate::stats::sequential::Boundaries::new(p.alpha, p.rounds));
    let (names, min_effect, seed) = (&p.names, args.min_effect, p.seed);
    // Everything from the first SET on the server to the last round: on an
    // error a sandbox's variables are put back before it stops (dropping
    // the server stops it; the journal could not reach it after).
    let measured = (|| -> Result<(Vec<Arm>, crate::trial::Outcome)> {
        let arms_v = match p.arms {
            Some(a) => a,
            None => {
                let (srv, ep) = oltp_server.as_ref().zip(endpoint.as_ref()).ok_or_else(|| {
                    anyhow::anyhow!("internal: server variables without a server")
                })?;
                try_server_variables(guard, host, &p.changes, ep, srv.spec(), args.live_server)?;
                arms(host, &p.changes, &p.devices, Some(ep))?
            }
        };
        debug_assert_eq!(arms_v.len(), p.n_arms);
        let mut workloads: Vec<Box<dyn TrialWorkload + '_>> = Vec::new();
        for s in p.specs {
            match s {
                Spec::Bench(b) => workloads.push(Box::new(b)),
                Spec::Oltp { name, workload } => {
                    let srv = oltp_server.as_ref().ok_or_else(|| {
                        anyhow::anyhow!("internal: OLTP workload without its server")
                    })?;
                    for t in &args.threads {
                        workloads.push(Box::new(crate::trial::workload::OltpTrial::with_threads(
                            &format!("{name}@{t}"),
                            workload,
                            srv,
                            *t,
                        )));
                    }
                }
            }
        }
        let design = crate::trial::Design {
            rounds: p.rounds,
            trial: args.trial,
            warmup: args.warmup,
            total: p.rounds as usize * arms_v.len() * workloads.len(),
            seed: p.seed,
            trace: false,
        };
        let arms = &arms_v;
        let outcome = crate::trial::run(
            host,
            guard,
            arms,
            &workloads,
            &p.devices,
            &design,
            &progress,
            &mut |trials, round| match &bounds {
                Some(b) if b.level(round) > 0.0 && round < p.rounds => {
                    cells(trials, arms, names, b.level(round), min_effect, seed)
                        .iter()
                        .all(|c| c.verdict.claims())
                }
                _ => false,
            },
        )?;
        drop(workloads);
        Ok((arms_v, outcome))
    })();
    let (arms_v, outcome) = match measured {
        Ok(m) => m,
        Err(e) => {
            if !args.live_server {
                undo_server_variables(guard);
            }
            return Err(e);
        }
    };
    progress.event(crate::trial::progress::Event::Restoring);
    // A sandbox's variables are put back while it still runs; a live
    // server's with the rest.
    let mut restored = if args.live_server {
        Vec::new()
    } else {
        undo_server_variables(guard)
    };
    let oltp = oltp_server.map(|s| s.stop(guard)).transpose()?;
    restored.extend(guard.restore_all());
    drop(progress);
    let rounds_run = outcome.stopped_after.unwrap_or(p.rounds);
    let level = match &bounds {
        Some(b) => b.level(rounds_run),
        None => p.alpha,
    };
    let cells = cells(&outcome.trials, &arms_v, &p.names, level, min_effect, seed);
    let not_on_device = crate::trial::not_on_device(host, &p.path, &outcome.trials, &p.names);
    Ok(ProveReport {
        path: p.path,
        devices: p.devices,
        changes: p.changes,
        arms: arms_v,
        workloads: p.names,
        rounds: p.rounds,
        rounds_run,
        sequential: args.sequential,
        trial_s: args.trial.as_secs_f64(),
        warmup_s: args.warmup.as_secs_f64(),
        alpha: ALPHA,
        level,
        min_effect,
        seed,
        files: p.files,
        elapsed_s: started.elapsed().as_secs_f64(),
        rounds_s: outcome.rounds_s,
        cells,
        oltp,
        restored,
        not_on_device,
        trials: outcome.trials,
    })
}

#[cfg(test)]
mod tests;
