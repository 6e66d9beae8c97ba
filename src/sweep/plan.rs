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
/// Time per trial outside the windows: switching, file reuse, snapshots.
const OVERHEAD: Duration = Duration::from_millis(250);
const MAX_BUDGET_ROUNDS: u32 = 20;
const MIN_TRIAL: Duration = Duration::from_secs(1);

/// One setting to try on every device.
#[derive(Debug, Clone, Serialize, PartialEq)]
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

/// Rounds and trial timing, and how they were chosen.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub rounds: u32,
    #[serde(rename = "trial_s", serialize_with = "secs")]
    pub trial: Duration,
    #[serde(rename = "warmup_s", serialize_with = "secs")]
    pub warmup: Duration,
    /// Trials in total (rounds × candidates × workloads).
    pub trials: usize,
    /// Expected duration, excluding the layout of work files and the OLTP
    /// server's start and load.
    #[serde(rename = "estimated_s", serialize_with = "secs")]
    pub estimated: Duration,
    #[serde(
        rename = "budget_s",
        serialize_with = "opt_secs",
        skip_serializing_if = "Option::is_none"
    )]
    pub budget: Option<Duration>,
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

/// Plan rounds and trial length. Without a budget: the flags as given.
/// With one: keep the trial length and spend the budget on rounds (more
/// rounds buy narrower intervals; longer trials mostly do not), up to 20;
/// if even `--rounds` rounds do not fit, shorten trials (and the warm-up
/// with them) down to 1 s, then drop to 4 rounds; below that, refuse.
pub fn plan(
    rounds: u32,
    trial: Duration,
    warmup: Duration,
    budget: Option<Duration>,
    per_round: usize,
) -> Result<Plan> {
    if rounds < MIN_ROUNDS {
        return Err(Fix::new(
            format!("--rounds {rounds} can never show a significant difference"),
            format!("use at least {MIN_ROUNDS} rounds (5 is the default)"),
        )
        .into());
    }
    let cost = |r: u32, t: Duration, w: Duration| (t + w + OVERHEAD) * (r * per_round as u32);
    let mk = |r: u32, t: Duration, w: Duration, note: String| Plan {
        rounds: r,
        trial: t,
        warmup: w,
        trials: r as usize * per_round,
        estimated: cost(r, t, w),
        budget,
        note,
    };
    let Some(b) = budget else {
        return Ok(mk(
            rounds,
            trial,
            warmup,
            format!(
                "{rounds} rounds of {per_round} trials, {} each",
                fmt_d(trial + warmup)
            ),
        ));
    };
    let per_trial = trial + warmup + OVERHEAD;
    let fit = (b.as_secs_f64() / (per_trial.as_secs_f64() * per_round as f64)).floor() as u32;
    if fit >= rounds {
        let r = fit.min(MAX_BUDGET_ROUNDS);
        return Ok(mk(
            r,
            trial,
            warmup,
            format!(
                "budget {}: {r} rounds × {per_round} trials of {} + {} warm-up (≈{})",
                fmt_d(b),
                fmt_d(trial),
                fmt_d(warmup),
                fmt_d(cost(r, trial, warmup))
            ),
        ));
    }
    for r in [rounds, MIN_ROUNDS] {
        let slot = b.as_secs_f64() / (r as f64 * per_round as f64) - OVERHEAD.as_secs_f64();
        // Split the slot 5:1 between window and warm-up, warm-up capped at --warmup.
        let w = warmup.as_secs_f64().min(slot / 6.0).max(0.0);
        let t = slot - w;
        if t >= MIN_TRIAL.as_secs_f64() {
            let (t, w) = (
                Duration::from_millis((t * 1000.0) as u64),
                Duration::from_millis((w * 1000.0) as u64),
            );
            return Ok(mk(
                r,
                t,
                w,
                format!(
                    "budget {}: {r} rounds × {per_round} trials, trials shortened to {} + {} warm-up to fit (≈{})",
                    fmt_d(b),
                    fmt_d(t),
                    fmt_d(w),
                    fmt_d(cost(r, t, w))
                ),
            ));
        }
    }
    let need = (MIN_TRIAL + OVERHEAD) * (MIN_ROUNDS * per_round as u32);
    Err(Fix::new(
        format!(
            "budget {} is too small for {per_round} trials per round",
            fmt_d(b)
        ),
        format!(
            "allow at least {} (4 rounds of 1 s trials), or fewer candidates/workloads",
            fmt_d(need)
        ),
    )
    .into())
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
                if let Ok(p) = plan(5, s(10), s(2), Some(s(b)), per_round) {
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

    #[test]
    fn no_budget_keeps_flags() {
        let p = plan(5, s(10), s(2), None, 8).unwrap();
        assert_eq!((p.rounds, p.trial, p.trials), (5, s(10), 40));
        assert!(plan(3, s(10), s(2), None, 8).is_err());
    }

    #[test]
    fn budget_is_respected() {
        // 8 trials per round, 12.25 s each → 98 s per round.
        let p = plan(5, s(10), s(2), Some(s(3600)), 8).unwrap();
        assert_eq!(p.rounds, 20, "large budget: more rounds, capped");
        let p = plan(5, s(10), s(2), Some(s(600)), 8).unwrap();
        assert_eq!(p.rounds, 6);
        assert!(p.estimated <= s(600));
        let p = plan(5, s(10), s(2), Some(s(300)), 8).unwrap();
        assert_eq!(p.rounds, 5);
        assert!(p.trial < s(10) && p.estimated <= s(300), "{p:?}");
        assert!(p.note.contains("shortened"));
        let p = plan(5, s(10), s(2), Some(s(60)), 8).unwrap();
        assert_eq!(p.rounds, 5, "{p:?}");
        assert!(p.trial >= s(1) && p.estimated <= s(60));
        let p = plan(5, s(10), s(2), Some(s(50)), 8).unwrap();
        assert_eq!(p.rounds, 4, "{p:?}");
        assert!(p.trial >= s(1) && p.estimated <= s(50));
        let e = plan(5, s(10), s(2), Some(s(20)), 8).unwrap_err();
        assert!(e.to_string().contains("too small"));
    }
}
