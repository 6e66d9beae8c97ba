//! What a sweep will run: candidates (scheduler × extra dimensions), rounds,
//! trial length, and how a `--budget` is spent.

use super::options::SweepOptions;
use super::target::Device;
use crate::error::Fix;
use anyhow::Result;
use serde::Serialize;
use std::time::Duration;

/// Fewest rounds that can ever give a verdict: the exact rank test's
/// smallest two-sided p-value is 2/C(2R,R) = 0.1 at R = 3, 0.029 at R = 4.
pub const MIN_ROUNDS: u32 = 4;

/// Fewest rounds at which a verdict is possible at all with `workloads`
/// workloads: each comparison runs at the corrected level alpha / W
/// (0.05 / 2 = 0.025, which 4 rounds cannot reach: 2/C(8,4) = 0.029), so
/// 4 rounds with one workload, 5 with two to six. With `sequential` the
/// group-sequential boundary must also have a look that can cross within
/// that many rounds at most ([`crate::stats::sequential::Boundaries::first_look`]).
pub fn rounds_needed(workloads: usize, sequential: bool) -> u32 {
    let level = crate::stats::CompareOpts::default().alpha / workloads.max(1) as f64;
    let mut r = MIN_ROUNDS;
    while !crate::stats::effect::reachable(r as usize, r as usize, level) {
        r += 1;
    }
    if sequential {
        while r < crate::stats::sequential::MAX_ROUNDS
            && crate::stats::sequential::Boundaries::new(level, r)
                .first_look()
                .is_none()
        {
            r += 1;
        }
    }
    r
}
/// Time per trial outside the windows: switching, file reuse, snapshots.
const OVERHEAD: Duration = Duration::from_millis(250);
const MAX_BUDGET_ROUNDS: u32 = 20;
/// The floor when a plan names no workload (see [`min_trial`]).
const MIN_TRIAL: Duration = Duration::from_secs(1);

/// The shortest measured window at which workload `name` is in a steady
/// state and a scheduler effect on it can show. Measured on this VM
/// (virtio disk vda, 2 cores, load average 3–4 from parallel builds) with
/// `bench/steady-state.sh`: fio runs each preset's job shape for 21 s with
/// a per-I/O latency log, twice under `none` and twice under
/// `mq-deadline`, alternating; the log is cut into windows of T s after a
/// 1 s warm-up (bench/RESULTS.md, "Steady state of the sweep workloads"):
///
/// - **mixed**: the reader's p99 under `none` swings between ~5 ms and
///   ~1 s from one second to the next (it catches a stall behind the
///   writer's queue or not); `mq-deadline` is 70 ms–1.4 s. The share of
///   (none, mq-deadline) window pairs in the wrong order is 0.15 at 1 s,
///   0.07 at 2 s, 0.10 at 3 s, 0.02 at 4 s, 0.03 at 5–6 s, 0 at 8 s: from
///   4 s the effect (median p99 65 ms vs 446 ms) shows in nearly every
///   trial pair, which the rank test needs. The 1.7 s trials sit
///   where one pair in ten is inverted. **4 s.**
/// - **page-write** (24 writers): under `mq-deadline` throughput alternates
///   between ~12–20k IOPS and ~1k IOPS phases of 5–9 s; windows shorter
///   than a phase land in one or the other (p99 CV 62% at 1 s, 43–55% at
///   3–6 s, 13% at 8 s; wrong-order share 0.3–0.4 below 8 s, 0 at 8 s).
///   **8 s.**
/// - **fsync-4k**: 10–1000 fsyncs a second, so a 1 s window often holds
///   too few I/Os for a p99 (p99 CV 96%/63% at 1 s, 42%/52% at 4 s, no
///   better beyond). **4 s.**
/// - **page-read** (24 readers): each second is like the others within a
///   run (p99 CV 74%/57% at 1 s and 87%/51% at 10 s: what varies is run to
///   run, which longer trials cannot fix, more rounds can). **1 s.**
///
/// Workloads not measured here (job files, OLTP, the other presets) get
/// the longest measured minimum rather than a guess.
pub fn min_trial(name: &str) -> Duration {
    let s = Duration::from_secs;
    match name {
        "page-read" => s(1),
        "fsync-4k" | "mixed" => s(4),
        "page-write" => s(8),
        _ => s(8),
    }
}

/// One setting to try on every device.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct Candidate {
    /// Unique label: `mq-deadline`, `none#2` (A/A), `kyber/nr=64/ra=128`.
    pub label: String,
    pub scheduler: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nr_requests: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_ahead_kb: Option<u32>,
}

/// `kyber/nr=64/ra=128`: how a setting is named (a label without the A/A
/// `#k`).
fn setting_name(scheduler: &str, nr: Option<u32>, ra: Option<u32>) -> String {
    let mut s = scheduler.to_string();
    if let Some(n) = nr {
        s.push_str(&format!("/nr={n}"));
    }
    if let Some(r) = ra {
        s.push_str(&format!("/ra={r}"));
    }
    s
}

impl Candidate {
    /// The setting's name: the label without the `#k` an A/A run adds, so
    /// a recommendation names `none`, never `none#1`.
    pub fn setting(&self) -> String {
        setting_name(&self.scheduler, self.nr_requests, self.read_ahead_kb)
    }

    /// Do both set the devices the same way (an A/A pair)?
    pub fn same_setting(&self, o: &Candidate) -> bool {
        self.scheduler == o.scheduler
            && self.nr_requests == o.nr_requests
            && self.read_ahead_kb == o.read_ahead_kb
    }

    /// Does `d` hold this candidate's settings now?
    pub fn matches(&self, d: &Device) -> bool {
        self.scheduler == d.scheduler
            && self.nr_requests.is_none_or_eq(d.nr_requests)
            && self.read_ahead_kb.is_none_or_eq(d.read_ahead_kb)
    }
}

trait NoneOrEq {
    fn is_none_or_eq(&self, other: Option<u32>) -> bool;
}
impl NoneOrEq for Option<u32> {
    fn is_none_or_eq(&self, other: Option<u32>) -> bool {
        self.is_none() || *self == other
    }
}

/// How many different settings `cands` hold (A/A duplicates count once).
pub fn distinct_settings(cands: &[Candidate]) -> usize {
    cands
        .iter()
        .enumerate()
        .filter(|(i, c)| !cands[..*i].iter().any(|o| o.same_setting(c)))
        .count()
}

/// Build the candidate list from the options and what the devices offer.
pub fn candidates(args: &SweepOptions, devices: &[Device]) -> Result<Vec<Candidate>> {
    let offered_by_all = |s: &str| devices.iter().all(|d| d.offered.iter().any(|o| o == s));
    let scheds: Vec<String> = if args.schedulers.is_empty() {
        devices[0]
            .offered
            .iter()
            .filter(|s| offered_by_all(s))
            .cloned()
            .collect()
    } else {
        for s in &args.schedulers {
            if let Some(d) = devices.iter().find(|d| !d.offered.iter().any(|o| o == s)) {
                return Err(Fix::new(
                    format!(
                        "{} does not offer scheduler {s:?} (it offers: {})",
                        d.name,
                        d.offered.join(", ")
                    ),
                    "pick from the offered names, or load the module (e.g. `modprobe bfq`)",
                )
                .into());
            }
        }
        args.schedulers.clone()
    };
    if scheds.is_empty() {
        return Err(Fix::new(
            "the devices have no scheduler in common",
            "name schedulers with --schedulers",
        )
        .into());
    }
    let nrs: Vec<Option<u32>> = if args.nr_requests.is_empty() {
        vec![None]
    } else {
        args.nr_requests.iter().map(|&v| Some(v)).collect()
    };
    let ras: Vec<Option<u32>> = if args.read_ahead_kb.is_empty() {
        vec![None]
    } else {
        args.read_ahead_kb.iter().map(|&v| Some(v)).collect()
    };
    let mut out = Vec::new();
    for s in &scheds {
        for nr in &nrs {
            for ra in &ras {
                out.push(Candidate {
                    label: setting_name(s, *nr, *ra),
                    scheduler: s.clone(),
                    nr_requests: *nr,
                    read_ahead_kb: *ra,
                });
            }
        }
    }
    // The same setting named twice is an A/A run: number each occurrence.
    let labels: Vec<String> = out.iter().map(|c| c.label.clone()).collect();
    let mut seen = std::collections::HashMap::<String, usize>::new();
    for c in out.iter_mut() {
        if labels.iter().filter(|l| **l == c.label).count() > 1 {
            let k = seen.entry(c.label.clone()).or_insert(0);
            *k += 1;
            c.label = format!("{}#{k}", c.label);
        }
    }
    if out.len() < 2 {
        return Err(Fix::new(
            format!("only one candidate ({}) to compare", out[0].label),
            "name at least two with --schedulers (the same one twice is an A/A noise check)",
        )
        .into());
    }
    Ok(out)
}

/// Candidates most wanted first, each with why, for a budget that cannot
/// hold them all: the one holding the current setting, then the kernel's
/// default for the top switched device, then what check's class rule
/// accepts for it (preferred first); the rest keep the sweep's order.
pub fn priority(cands: &[Candidate], devices: &[Device]) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut add = |i: usize, why: &str| match out.iter_mut().find(|(j, _)| *j == i) {
        Some((_, w)) => {
            if !w.contains(why) {
                if !w.is_empty() {
                    w.push_str(", ");
                }
                w.push_str(why);
            }
        }
        None => out.push((i, why.to_string())),
    };
    let Some(top) = devices.first() else {
        return out;
    };
    for (i, c) in cands.iter().enumerate() {
        if devices.iter().all(|d| c.matches(d)) {
            add(i, "current setting");
        }
    }
    for (i, c) in cands.iter().enumerate() {
        if c.scheduler == top.kernel_default {
            add(i, "kernel default");
        }
    }
    for (k, s) in top.class_schedulers.iter().enumerate() {
        for (i, c) in cands.iter().enumerate() {
            if &c.scheduler == s {
                add(
                    i,
                    if k == 0 {
                        "class rule's choice"
                    } else {
                        "class rule accepts"
                    },
                );
            }
        }
    }
    out
}

/// Rounds and trial timing, and how they were chosen.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Plan {
    pub rounds: u32,
    #[serde(
        rename = "trial_s",
        serialize_with = "secs",
        deserialize_with = "secs_de"
    )]
    pub trial: Duration,
    #[serde(
        rename = "warmup_s",
        serialize_with = "secs",
        deserialize_with = "secs_de"
    )]
    pub warmup: Duration,
    /// Trials in total (rounds × candidates × workloads).
    pub trials: usize,
    /// Expected duration, excluding the layout of work files and the OLTP
    /// server's start and load.
    #[serde(
        rename = "estimated_s",
        serialize_with = "secs",
        deserialize_with = "secs_de"
    )]
    pub estimated: Duration,
    #[serde(
        rename = "budget_s",
        serialize_with = "opt_secs",
        deserialize_with = "opt_secs_de",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub budget: Option<Duration>,
    /// A group-sequential design: `rounds` is the most rounds; the sweep
    /// stops early once every verdict the recommendation needs is clear.
    pub sequential: bool,
    /// The shortest measured window this plan allows: the longest
    /// [`min_trial`] of its workloads (or `--trial`, if shorter).
    #[serde(
        rename = "min_trial_s",
        serialize_with = "secs",
        deserialize_with = "secs_de"
    )]
    pub min_trial: Duration,
    /// Candidates left out because the budget could not hold them at
    /// `min_trial` (absent when every candidate is tested).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
    /// Indices of the candidates tested, in the sweep's order (not in
    /// JSON: empty when read back; no document uses it).
    #[serde(skip)]
    pub kept: Vec<usize>,
    /// One sentence: what was chosen and why.
    pub note: String,
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}
fn opt_secs<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_f64(d.as_secs_f64()),
        None => s.serialize_none(),
    }
}

fn secs_de<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let s = <f64 as serde::Deserialize>::deserialize(d)?;
    Duration::try_from_secs_f64(s).map_err(serde::de::Error::custom)
}
fn opt_secs_de<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    match <Option<f64> as serde::Deserialize>::deserialize(d)? {
        Some(s) => Duration::try_from_secs_f64(s)
            .map(Some)
            .map_err(serde::de::Error::custom),
        None => Ok(None),
    }
}

/// `2m05s` from a minute up (whole seconds, rounded once before splitting
/// so 179.6 s reads `3m00s`, not `2m60s`), `12.5s` below.
pub fn fmt_d(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 59.95 {
        let whole = s.round() as u64;
        format!("{}m{:02}s", whole / 60, whole % 60)
    } else {
        format!("{s:.1}s")
    }
}

/// What [`plan`] is asked to fit.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    pub rounds: u32,
    pub trial: Duration,
    pub warmup: Duration,
    pub budget: Option<Duration>,
    /// A group-sequential design: `rounds` (or what the budget fits) is the
    /// most rounds, and the sweep stops once every verdict is clear.
    pub sequential: bool,
    pub workloads: &'a [String],
    /// Candidate labels, in the sweep's order.
    pub candidates: &'a [String],
    /// Candidate indices, most wanted first, each with why it is wanted
    /// (`current setting`, `kernel default`, `class rule`; empty for the
    /// rest): when the budget cannot hold every candidate, the first ones
    /// are tested.
    pub priority: &'a [(usize, String)],
}

/// Plan rounds, trial length and candidates. Without a budget: the flags
/// as given. With one: keep the trial length and spend the budget on rounds
/// (more rounds buy narrower intervals; longer trials mostly do not), up to
/// 20; if even `--rounds` rounds do not fit, shorten trials (and the
/// warm-up with them) but never below the longest [`min_trial`] of the
/// sweep's workloads (nor below `--trial` if that is shorter), then drop to
/// 4 rounds; then test fewer candidates, most wanted first (the current
/// setting, the kernel default, the class rule's choice); below two
/// candidates at 4 rounds, refuse with the budget the plan needs.
pub fn plan(req: &Request) -> Result<Plan> {
    let w_count = req.workloads.len().max(1);
    // The fewest rounds at which the corrected level alpha / W is reachable
    // (a --sequential design's boundary included).
    let need = if req.rounds < MIN_ROUNDS {
        MIN_ROUNDS
    } else {
        rounds_needed(w_count, req.sequential)
    };
    let level = crate::stats::CompareOpts::default().alpha / w_count as f64;
    if req.rounds < need && (req.budget.is_none() || req.rounds < MIN_ROUNDS) {
        let why = if req.sequential {
            "its sequential boundary has no look that can cross".to_string()
        } else {
            format!(
                "the exact rank test's smallest p-value is {:.3}",
                crate::stats::effect::smallest_p(req.rounds as usize, req.rounds as usize)
            )
        };
        return Err(Fix::new(
            format!(
                "--rounds {} can never show a significant difference with {w_count} workload{}: each verdict needs p ≤ {} (0.05 / {w_count}), and {why}",
                req.rounds,
                if w_count == 1 { "" } else { "s" },
                crate::export::text::fmt_num(level),
            ),
            format!("use --rounds {need} or more"),
        )
        .into());
    }
    // With a budget, rounds are planned (overriding --rounds as needed):
    // never below what a verdict needs.
    let rounds = req.rounds.max(need);
    if req.sequential && rounds > crate::stats::sequential::MAX_ROUNDS {
        return Err(Fix::new(
            format!(
                "--sequential with --rounds {rounds}: a sequential design plans at most {} rounds",
                crate::stats::sequential::MAX_ROUNDS
            ),
            format!(
                "use --rounds {} or fewer",
                crate::stats::sequential::MAX_ROUNDS
            ),
        )
        .into());
    }
    let (trial, warmup, budget) = (req.trial, req.warmup, req.budget);
    let n = req.candidates.len();
    let (floor_name, floor) = longest_min_trial(req.workloads);
    // Never shorten below what the workloads need; a --trial shorter than
    // that is the user's choice and is kept as given.
    let floor = floor.min(trial);
    let design = |r: u32| {
        if req.sequential {
            format!("at most {r} rounds (sequential: stops once every verdict is clear)")
        } else {
            format!("{r} rounds")
        }
    };
    let mk = |r: u32, t: Duration, w: Duration, kept: Vec<usize>, note: String| {
        let per_round = kept.len() * w_count;
        let mut skipped: Vec<String> = (0..n)
            .filter(|i| !kept.contains(i))
            .map(|i| req.candidates[i].clone())
            .collect();
        skipped.sort_by_key(|l| req.candidates.iter().position(|c| c == l));
        Plan {
            rounds: r,
            trial: t,
            warmup: w,
            trials: r as usize * per_round,
            estimated: (t + w + OVERHEAD) * (r * per_round as u32),
            budget,
            sequential: req.sequential,
            min_trial: floor,
            skipped,
            kept,
            note,
        }
    };
    let all: Vec<usize> = (0..n).collect();
    let Some(b) = budget else {
        let per_round = n * w_count;
        return Ok(mk(
            rounds,
            trial,
            warmup,
            all,
            format!(
                "{} of {per_round} trials, {} each",
                design(rounds),
                fmt_d(trial + warmup)
            ),
        ));
    };
    let cost = |r: u32, t: Duration, w: Duration, k: usize| {
        (t + w + OVERHEAD) * (r * (k * w_count) as u32)
    };
    let mut ordered: Vec<usize> = req.priority.iter().map(|(i, _)| *i).collect();
    for i in 0..n {
        if !ordered.contains(&i) {
            ordered.push(i);
        }
    }
    for k in (2..=n).rev() {
        let per_round = k * w_count;
        let mut kept: Vec<usize> = ordered[..k].to_vec();
        kept.sort_unstable();
        let fewer = if k < n {
            let why: Vec<String> = req
                .priority
                .iter()
                .filter(|(i, _)| kept.contains(i))
                .map(|(i, why)| {
                    if why.is_empty() {
                        req.candidates[*i].clone()
                    } else {
                        format!("{} ({why})", req.candidates[*i])
                    }
                })
                .collect();
            format!(
                "; only {k} of {n} candidates fit without shortening trials below {} ({floor_name} needs it to reach a steady state): testing {} first, not {}",
                fmt_d(floor),
                why.join(", "),
                (0..n)
                    .filter(|i| !kept.contains(i))
                    .map(|i| req.candidates[i].as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        } else {
            String::new()
        };
        let per_trial = trial + warmup + OVERHEAD;
        let fit = (b.as_secs_f64() / (per_trial.as_secs_f64() * per_round as f64)).floor() as u32;
        if fit >= rounds {
            let r = fit.min(MAX_BUDGET_ROUNDS);
            return Ok(mk(
                r,
                trial,
                warmup,
                kept,
                format!(
                    "budget {}: {} × {per_round} trials of {} + {} warm-up (≈{}){fewer}",
                    fmt_d(b),
                    design(r),
                    fmt_d(trial),
                    fmt_d(warmup),
                    fmt_d(cost(r, trial, warmup, k))
                ),
            ));
        }
        for r in [rounds, need] {
            let slot = b.as_secs_f64() / (r as f64 * per_round as f64) - OVERHEAD.as_secs_f64();
            // Split the slot 5:1 between window and warm-up, warm-up capped
            // at --warmup, window at least the workloads' minimum.
            let w = warmup.as_secs_f64().min(slot / 6.0).max(0.0);
            let t = slot - w;
            if t + 1e-9 >= floor.as_secs_f64() {
                let (t, w) = (
                    Duration::from_millis((t * 1000.0) as u64).max(floor),
                    Duration::from_millis((w * 1000.0) as u64),
                );
                let shortened = if t < trial {
                    format!(
                        ", trials shortened to {} + {} warm-up to fit",
                        fmt_d(t),
                        fmt_d(w)
                    )
                } else {
                    format!(" of {} + {} warm-up", fmt_d(t), fmt_d(w))
                };
                return Ok(mk(
                    r,
                    t,
                    w,
                    kept,
                    format!(
                        "budget {}: {} × {per_round} trials{shortened} (≈{}){fewer}",
                        fmt_d(b),
                        design(r),
                        fmt_d(cost(r, t, w, k))
                    ),
                ));
            }
        }
    }
    // Two candidates at 4 rounds of the shortest trial the workloads allow,
    // with a warm-up of a sixth of the slot (the split above).
    let slot = floor.as_secs_f64() * 6.0 / 5.0 + OVERHEAD.as_secs_f64();
    let need_t = Duration::from_secs_f64(slot * (need as usize * 2 * w_count) as f64);
    Err(Fix::new(
        format!(
            "budget {} is too small: the plan needs at least {} ({need} rounds of 2 candidates × {w_count} workload{} at {} trials, the shortest {floor_name} allows)",
            fmt_d(b),
            fmt_d(need_t + Duration::from_secs(1)),
            if w_count == 1 { "" } else { "s" },
            fmt_d(floor)
        ),
        format!(
            "give --budget {} or more, or fewer workloads",
            fmt_d(need_t + Duration::from_secs(1))
        ),
    )
    .into())
}

/// The longest [`min_trial`] of `workloads`, and whose it is.
pub fn longest_min_trial(workloads: &[String]) -> (String, Duration) {
    workloads
        .iter()
        .map(|w| (w.clone(), min_trial(w)))
        .max_by_key(|(_, d)| *d)
        .unwrap_or_else(|| ("the workload".into(), MIN_TRIAL))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: u64) -> Duration {
        Duration::from_secs(x)
    }

    #[test]
    fn durations_round_once() {
        let ms = Duration::from_millis;
        assert_eq!(fmt_d(ms(179_600)), "3m00s");
        assert_eq!(fmt_d(ms(119_500)), "2m00s");
        assert_eq!(fmt_d(ms(125_000)), "2m05s");
        assert_eq!(fmt_d(ms(59_960)), "1m00s");
        assert_eq!(fmt_d(ms(12_500)), "12.5s");
        for tenths in 0..10_000u64 {
            let f = fmt_d(ms(tenths * 100));
            if let Some((_, sec)) = f.split_once('m') {
                let sec: u64 = sec.trim_end_matches('s').parse().unwrap();
                assert!(sec < 60, "{} → {f}", tenths as f64 / 10.0);
            }
            assert_ne!(f, "60.0s");
        }
        // A budget plan's note: every duration in it well formed.
        for b in [150u64, 170, 179, 180, 181, 239, 600] {
            for per_round in [1usize, 3, 8, 16] {
                if let Ok(p) =
                    plan_for(5, s(10), s(2), Some(s(b)), &["page-read"], per_round.max(2))
                {
                    assert!(!p.note.contains("m60s"), "{}", p.note);
                }
            }
        }
    }

    #[test]
    fn settings_name_a_a_pairs_once() {
        let c = |l: &str, s: &str| Candidate {
            label: l.into(),
            scheduler: s.into(),
            nr_requests: None,
            read_ahead_kb: Some(128),
        };
        let (a, b, k) = (
            c("none/ra=128#1", "none"),
            c("none/ra=128#2", "none"),
            c("kyber/ra=128", "kyber"),
        );
        assert_eq!(a.setting(), "none/ra=128");
        assert!(a.same_setting(&b) && !a.same_setting(&k));
        assert_eq!(distinct_settings(&[a, b, k]), 2);
    }

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// A plan for `ws` workloads and `n` candidates `c0…` (priority: the
    /// sweep's order).
    fn plan_for(
        rounds: u32,
        trial: Duration,
        warmup: Duration,
        budget: Option<Duration>,
        ws: &[&str],
        n: usize,
    ) -> Result<Plan> {
        let ws = names(ws);
        let cands: Vec<String> = (0..n).map(|i| format!("c{i}")).collect();
        plan(&Request {
            rounds,
            trial,
            warmup,
            budget,
            sequential: false,
            workloads: &ws,
            candidates: &cands,
            priority: &[],
        })
    }

    const FOUR: [&str; 4] = ["page-read", "page-write", "fsync-4k", "mixed"];

    #[test]
    fn no_budget_keeps_flags() {
        let p = plan_for(5, s(10), s(2), None, &FOUR, 2).unwrap();
        assert_eq!((p.rounds, p.trial, p.trials), (5, s(10), 40));
        assert_eq!(p.kept, vec![0, 1]);
        assert!(plan_for(3, s(10), s(2), None, &FOUR, 2).is_err());
    }

    /// Four rounds cannot reach 0.05 / 2 (2/C(8,4) = 0.029): refused with
    /// the rounds needed, as 3 rounds are; a budget plans at least those.
    #[test]
    fn rounds_that_cannot_reach_the_corrected_level_are_refused() {
        assert_eq!(rounds_needed(1, false), 4);
        assert_eq!(rounds_needed(2, false), 5);
        assert_eq!(rounds_needed(4, false), 5);
        assert_eq!(rounds_needed(7, false), 6);
        let two = ["page-read", "mixed"];
        let e = plan_for(4, s(2), s(2), None, &two, 2)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--rounds 4 can never") && e.contains("0.025") && e.contains("--rounds 5"),
            "{e}"
        );
        assert!(plan_for(5, s(2), s(2), None, &two, 2).is_ok());
        assert!(plan_for(4, s(2), s(2), None, &["page-read"], 2).is_ok());
        let p = plan_for(4, s(2), s(2), Some(s(3600)), &two, 2).unwrap();
        assert!(p.rounds >= 5, "{p:?}");
    }

    #[test]
    fn budget_is_respected() {
        // 2 candidates × 2 workloads, 12.25 s each → 49 s per round; the
        // floor is mixed's 4 s.
        let ws = ["page-read", "mixed"];
        let p = plan_for(5, s(10), s(2), Some(s(3600)), &ws, 2).unwrap();
        assert_eq!(p.rounds, 20, "large budget: more rounds, capped");
        let p = plan_for(5, s(10), s(2), Some(s(600)), &ws, 2).unwrap();
        assert_eq!(p.rounds, 12);
        assert!(p.estimated <= s(600));
        let p = plan_for(5, s(10), s(2), Some(s(300)), &ws, 2).unwrap();
        assert_eq!((p.rounds, p.trial), (6, s(10)));
        let p = plan_for(5, s(10), s(2), Some(s(150)), &ws, 2).unwrap();
        assert_eq!(p.rounds, 5);
        assert!(
            p.trial < s(10) && p.trial >= s(4) && p.estimated <= s(150),
            "{p:?}"
        );
        assert!(p.note.contains("shortened"), "{}", p.note);
        // Two workloads: never below the 5 rounds a verdict at 0.025 needs.
        let p = plan_for(5, s(10), s(2), Some(s(110)), &ws, 2).unwrap();
        assert_eq!(p.rounds, 5, "{p:?}");
        assert!(p.trial >= s(4) && p.estimated <= s(110), "{p:?}");
        assert_eq!(p.min_trial, min_trial("mixed"));
        let e = plan_for(5, s(10), s(2), Some(s(60)), &ws, 2)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("too small") && e.contains("needs at least"),
            "{e}"
        );
        // A --trial shorter than the workloads' minimum is the user's: kept.
        let p = plan_for(5, s(2), s(1), Some(s(3600)), &ws, 2).unwrap();
        assert_eq!(p.trial, s(2));
    }

    /// The case: `--budget 3m`, the four default workloads and the
    /// four schedulers of a virtio disk used to cut every trial to 1.7 s +
    /// 0.3 s warm-up, where the mixed workload's effect drowns. Now trials
    /// never go below the workloads' minimum: with page-write's 8 s the
    /// four workloads do not fit even for two candidates, and the error
    /// names the budget that does; without page-write, fewer candidates
    /// are tested, the current setting, the kernel default and the class
    /// rule's choice first.
    #[test]
    fn a_small_budget_tests_fewer_candidates_not_shorter_trials() {
        let cands = names(&["none", "mq-deadline", "kyber", "bfq"]);
        let why = |s: &str| s.to_string();
        // vda: on mq-deadline (current, kernel default, class rule's
        // choice), the class rule also accepts none.
        let priority = vec![
            (
                1,
                why("current setting, kernel default, class rule's choice"),
            ),
            (0, why("class rule accepts")),
        ];
        let req = |ws: &'static [&'static str], b: u64| -> Result<Plan> {
            let ws = names(ws);
            plan(&Request {
                rounds: 5,
                trial: s(10),
                warmup: s(2),
                budget: Some(s(b)),
                sequential: false,
                workloads: &ws,
                candidates: &cands,
                priority: &priority,
            })
        };
        let e = format!("{:#}", req(&FOUR, 180).unwrap_err());
        assert!(
            e.contains("budget 3m00s is too small") && e.contains("page-write"),
            "{e}"
        );
        assert!(
            e.contains("6m35s"),
            "names the budget it needs (5 rounds at 0.05 / 4): {e}"
        );
        assert!(!e.contains('\n'), "one line: {e}");
        // That budget does fit, with two candidates and 8 s trials.
        let p = req(&FOUR, 395).unwrap();
        assert!(p.trial >= s(8) && p.kept == vec![0, 1], "{p:?}");

        let p = req(&["mixed", "page-read", "fsync-4k"], 180).unwrap();
        assert!(p.trial >= min_trial("mixed"), "{p:?}");
        assert!(p.trial > Duration::from_millis(1700), "{p:?}");
        assert!(p.estimated <= s(180), "{p:?}");
        assert_eq!(p.kept, vec![0, 1], "{p:?}");
        assert_eq!(p.skipped, names(&["kyber", "bfq"]));
        assert!(
            p.note.contains("only 2 of 4 candidates")
                && p.note.contains("mq-deadline (current setting"),
            "{}",
            p.note
        );
        assert!(
            p.note.contains("kyber, bfq"),
            "names what it left out: {}",
            p.note
        );
        let j = serde_json::to_value(&p).unwrap();
        assert_eq!(j["skipped"], serde_json::json!(["kyber", "bfq"]));
    }

    #[test]
    fn sequential_plans_say_at_most() {
        let ws = names(&["mixed"]);
        let cands = names(&["none", "mq-deadline"]);
        let p = plan(&Request {
            rounds: 10,
            trial: s(3),
            warmup: s(1),
            budget: None,
            sequential: true,
            workloads: &ws,
            candidates: &cands,
            priority: &[],
        })
        .unwrap();
        assert_eq!((p.rounds, p.trials), (10, 20));
        assert!(
            p.sequential && p.note.contains("at most 10 rounds"),
            "{}",
            p.note
        );
        let j = serde_json::to_value(&p).unwrap();
        assert_eq!(j["sequential"], true);
        assert!(j["min_trial_s"].as_f64().unwrap() > 0.0);
        assert!(j.get("kept").is_none() && j.get("skipped").is_none(), "{j}");
    }
}
