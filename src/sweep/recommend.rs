//! From verdicts to one answer: keep the setting the devices hold, or
//! change to a candidate. No I/O here.
//!
//! The rule, most conservative first:
//! - **The current setting was measured** (one candidate holds every
//!   switched device's values at start; it is the baseline): a candidate
//!   with a different setting qualifies when it is better than the
//!   baseline on at least one workload and worse on none; the most wins
//!   take it (ties: the kernel default, else the first). With no
//!   qualifier, the baseline and every candidate that differs on nothing
//!   are tied, and the tie goes to the kernel default of the top device's
//!   class if it is among them, else the current setting is kept. If two
//!   candidates with the *same* setting (an A/A pair) were found to differ,
//!   the run's verdicts are noise and the current setting is kept.
//! - **It was not measured** (e.g. `--schedulers none,none` while the disk
//!   under a loop device is on mq-deadline): nothing in the run says how
//!   the current setting performs, so it is kept, "not measured", unless
//!   the user asked for a choice among the candidates (`--choose`) and one
//!   candidate was significantly better than every other one (pairwise,
//!   see [`super::verdicts::pairwise`]).
//!
//! Either way a recommendation names a setting (`none`), never an A/A
//! label (`none#1`), and an A/A run never recommends a change.
//!
//! **A stall vetoes a change.** A candidate that stalled a direction (one
//! read waited over 500 ms, one write over 5 s: mq-deadline's own expiry
//! times; or nothing completed in a whole trial window) on a workload where
//! the setting it would replace never did is not recommended, win or tie:
//! medians rank windows, and a scheduler whose reads are better in most
//! windows but stop for seconds in some would pass a rank test while
//! stalling InnoDB's page reads in production. Measured on this VM (AMD
//! host, bench/RESULTS.md 2026-11-26 13:18): `none` starved the mixed
//! workload's reads in 26 of 65 windows and mq-deadline in none, yet 3 of
//! 20 sweeps recommended `none` on its median. The veto first counted only
//! windows with no read at all; a stall shorter than the window hid below
//! the p99 (one read of ~30 000), so sweeps that caught a whole-window stall
//! and sweeps that did not answered differently (6 of 10 alike,
//! 2026-11-27 08:50; [`crate::trial::trials::stall_limit_ns`]). The veto is
//! one-sided, as the rest of the rule: it can only keep what the host runs.

use super::options::Objective;
use super::plan::Candidate;
use super::target::Device;
use super::verdicts::{starves_alone, WorkloadVerdict};
use crate::stats::Verdict;
use crate::trial::trials::Trial;
use serde::Serialize;

/// Keep what the devices hold, or change it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Keep,
    Change,
}

/// The one answer.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Recommendation {
    pub action: Action,
    /// The setting to hold on every switched device (`mq-deadline`,
    /// `kyber/nr=64`); absent when keeping a current setting that was not
    /// measured (the devices may even differ from each other).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub setting: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nr_requests: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_ahead_kb: Option<u32>,
    /// Did one candidate hold every switched device's values at start?
    pub current_measured: bool,
    /// One line: why.
    pub reason: String,
    /// True when some device does not hold the recommended setting now
    /// (exit code 1). Never true for an A/A run.
    pub pending_change: bool,
}

impl Recommendation {
    /// `keep none`, `change to mq-deadline`, `keep the current setting`.
    pub fn headline(&self) -> String {
        match (self.action, &self.setting) {
            (Action::Change, Some(s)) => format!("change to {s}"),
            (Action::Keep, Some(s)) => format!("keep {s}"),
            _ => "keep the current setting".to_string(),
        }
    }
}

/// Index of the candidate that holds every switched device's values now.
pub fn current(cands: &[Candidate], devices: &[Device]) -> Option<usize> {
    cands
        .iter()
        .position(|c| devices.iter().all(|d| c.matches(d)))
}

/// `loop0 none, vda mq-deadline`.
fn current_settings(devices: &[Device]) -> String {
    devices
        .iter()
        .map(|d| format!("{} {}", d.name, d.scheduler))
        .collect::<Vec<_>>()
        .join(", ")
}

fn objective_name(o: Objective) -> &'static str {
    match o {
        Objective::Throughput => "throughput",
        Objective::Latency => "latency",
        Objective::Balanced => "balanced",
    }
}

fn pick(c: &Candidate, devices: &[Device], measured: bool, reason: String) -> Recommendation {
    let pending = devices.iter().any(|d| !c.matches(d));
    Recommendation {
        action: if pending {
            Action::Change
        } else {
            Action::Keep
        },
        setting: Some(c.setting()),
        scheduler: Some(c.scheduler.clone()),
        nr_requests: c.nr_requests,
        read_ahead_kb: c.read_ahead_kb,
        current_measured: measured,
        reason,
        pending_change: pending,
    }
}

fn keep_unmeasured(reason: String) -> Recommendation {
    Recommendation {
        action: Action::Keep,
        setting: None,
        scheduler: None,
        nr_requests: None,
        read_ahead_kb: None,
        current_measured: false,
        reason,
        pending_change: false,
    }
}

/// What the run says. `verdicts` compare every candidate with `baseline`;
/// `pairwise` (with `choose`) compares candidates of different settings
/// with each other; `trials` say which windows stalled (the veto).
#[allow(clippy::too_many_arguments)]
pub fn recommend(
    cands: &[Candidate],
    baseline: usize,
    verdicts: &[WorkloadVerdict],
    pairwise: &[WorkloadVerdict],
    trials: &[Trial],
    devices: &[Device],
    objective: Objective,
    choose: bool,
) -> Recommendation {
    match current(cands, devices) {
        Some(cur) if cur == baseline => measured(cands, cur, verdicts, trials, devices, objective),
        // The caller compares with the current setting whenever it was
        // measured; be safe if it did not.
        Some(_) | None => unmeasured(cands, pairwise, trials, devices, objective, choose),
    }
}

fn measured(
    cands: &[Candidate],
    base_i: usize,
    verdicts: &[WorkloadVerdict],
    trials: &[Trial],
    devices: &[Device],
    objective: Objective,
) -> Recommendation {
    let base = &cands[base_i];
    let veto = |c: &Candidate| starves_alone(c, &[base], trials);
    let by_label = |l: &str| cands.iter().find(|c| c.label == l);
    let count = |label: &str, v: Verdict| {
        verdicts
            .iter()
            .filter(|x| x.candidate == label && x.verdict == v)
            .count()
    };
    // An A/A pair that differs: the differences of this run are noise.
    let aa_noise: Vec<String> = verdicts
        .iter()
        .filter(|v| v.verdict != Verdict::NoSignificantDifference)
        .filter(|v| by_label(&v.candidate).is_some_and(|c| c.same_setting(base)))
        .map(|v| format!("{} {}", v.candidate, v.describe(objective)))
        .collect();
    if !aa_noise.is_empty() {
        return pick(
            base,
            devices,
            true,
            format!(
                "keeping the current setting: candidates with the same setting as {} measured different ({}), so this run's differences are noise; rerun on a quieter host or with more --rounds",
                base.label,
                aa_noise.join(", ")
            ),
        );
    }
    let default = &devices[0].kernel_default;
    let winners: Vec<(usize, usize)> = cands
        .iter()
        .enumerate()
        .filter(|(_, c)| !c.same_setting(base))
        .map(|(i, c)| {
            (
                i,
                count(&c.label, Verdict::Better),
                count(&c.label, Verdict::Worse),
            )
        })
        .filter(|&(_, b, w)| b > 0 && w == 0)
        .map(|(i, b, _)| (i, b))
        .collect();
    // Winners on their medians that stalled where the baseline never did.
    let mut vetoed: Vec<String> = Vec::new();
    let qualified: Vec<(usize, usize)> = winners
        .into_iter()
        .filter(|&(i, _)| match veto(&cands[i]) {
            Some(why) => {
                let wins: Vec<String> = verdicts
                    .iter()
                    .filter(|v| v.candidate == cands[i].label && v.verdict == Verdict::Better)
                    .map(|v| v.describe(objective))
                    .collect();
                vetoed.push(format!(
                    "{} vs {}: {}, but {why}",
                    cands[i].setting(),
                    base.setting(),
                    wins.join(", ")
                ));
                false
            }
            None => true,
        })
        .collect();
    if let Some(max) = qualified.iter().map(|q| q.1).max() {
        let tied: Vec<usize> = qualified
            .iter()
            .filter(|q| q.1 == max)
            .map(|q| q.0)
            .collect();
        let i = tied
            .iter()
            .copied()
            .find(|&i| &cands[i].scheduler == default)
            .unwrap_or(tied[0]);
        let wins: Vec<String> = verdicts
            .iter()
            .filter(|v| v.candidate == cands[i].label && v.verdict == Verdict::Better)
            .map(|v| v.describe(objective))
            .collect();
        return pick(
            &cands[i],
            devices,
            true,
            format!(
                "{} vs {}: {}; worse on no workload",
                cands[i].setting(),
                base.setting(),
                wins.join(", ")
            ),
        );
    }
    // Say what lost, and by how much: "keeping the current setting" alone
    // hides that the alternative was measurably worse.
    let losses: Vec<String> = verdicts
        .iter()
        .filter(|v| v.verdict == Verdict::Worse)
        .map(|v| format!("{} {}", v.candidate, v.describe(objective)))
        .collect();
    let losses = if losses.is_empty() {
        String::new()
    } else {
        format!("; {}", losses.join(", "))
    };
    if !vetoed.is_empty() {
        return pick(
            base,
            devices,
            true,
            format!(
                "keeping {}: {}; a candidate that stalls a direction where the setting it would replace never did is not recommended on its medians{losses}",
                base.setting(),
                vetoed.join("; ")
            ),
        );
    }
    let tie_default = cands.iter().find(|c| {
        &c.scheduler == default
            && (c.same_setting(base)
                || (count(&c.label, Verdict::Better) == 0
                    && count(&c.label, Verdict::Worse) == 0
                    && veto(c).is_none()))
    });
    let aa = super::plan::distinct_settings(cands) == 1;
    match tie_default {
        Some(c) if !c.same_setting(base) => pick(
            c,
            devices,
            true,
            format!(
                "no candidate beat {} on any workload ({} objective); ties go to the kernel default for {} ({default}){losses}",
                base.setting(),
                objective_name(objective),
                devices[0].name
            ),
        ),
        _ => pick(
            base,
            devices,
            true,
            format!(
                "{} ({} objective); keeping the current setting{losses}",
                if aa {
                    format!(
                        "an A/A run: every candidate is {}, and no difference was found",
                        base.setting()
                    )
                } else {
                    format!("no candidate beat {} on any workload", base.setting())
                },
                objective_name(objective),
            ),
        ),
    }
}

/// Does `x` beat `y` on some workload and lose on none (pairwise verdicts,
/// each stored once with the earlier candidate as baseline)?
fn beats(x: &str, y: &str, pairwise: &[WorkloadVerdict]) -> bool {
    let mut better = 0;
    for v in pairwise {
        let verdict_for_x = if v.candidate == x && v.baseline == y {
            v.verdict
        } else if v.candidate == y && v.baseline == x {
            match v.verdict {
                Verdict::Better => Verdict::Worse,
                Verdict::Worse => Verdict::Better,
                n => n,
            }
        } else {
            continue;
        };
        match verdict_for_x {
            Verdict::Worse => return false,
            Verdict::Better => better += 1,
            Verdict::NoSignificantDifference => {}
        }
    }
    better > 0
}

fn unmeasured(
    cands: &[Candidate],
    pairwise: &[WorkloadVerdict],
    trials: &[Trial],
    devices: &[Device],
    objective: Objective,
    choose: bool,
) -> Recommendation {
    let now = current_settings(devices);
    let settings = super::plan::distinct_settings(cands);
    let head = format!("keep the current setting ({now}): it was not measured");
    if settings < 2 {
        return keep_unmeasured(format!(
            "{head}; an A/A run compares {} with itself and never recommends a change",
            cands[0].setting()
        ));
    }
    if !choose {
        return keep_unmeasured(
            format!(
                "{head}; add --choose to pick a candidate that is significantly better than every other one, or include the current setting among the candidates"
            ),
        );
    }
    let others = |x: &Candidate| -> Vec<&Candidate> {
        cands.iter().filter(|y| !y.same_setting(x)).collect()
    };
    let winner = cands.iter().find(|x| {
        others(x)
            .iter()
            .all(|y| beats(&x.label, &y.label, pairwise))
    });
    if let Some(x) = winner {
        if let Some(why) = starves_alone(x, &others(x), trials) {
            return keep_unmeasured(format!(
                "{head}; {} was significantly better than every other candidate on its medians, but {why}; a candidate that stalls a direction where the setting it would replace never did is not recommended on its medians",
                x.setting()
            ));
        }
    }
    match winner {
        Some(x) => {
            let wins: Vec<String> = pairwise
                .iter()
                .filter(|v| v.verdict != Verdict::NoSignificantDifference)
                .filter(|v| v.candidate == x.label || v.baseline == x.label)
                .map(|v| {
                    format!(
                        "{} vs {}: {}",
                        v.candidate,
                        v.baseline,
                        v.describe(objective)
                    )
                })
                .collect();
            pick(
                x,
                devices,
                false,
                format!(
                    "{} was significantly better than every other candidate ({} objective; {}); chosen as asked (--choose), though the current setting ({now}) was not measured",
                    x.setting(),
                    objective_name(objective),
                    wins.join(", ")
                ),
            )
        }
        None => keep_unmeasured(format!(
            "{head}; no candidate was significantly better than every other one ({} objective)",
            objective_name(objective)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::super::verdicts::tests::cand;
    use super::super::verdicts::{pairwise, verdicts};
    use super::*;
    use crate::stats::CompareOpts;
    use crate::trial::trials::tests::bench_trial;
    use crate::trial::trials::Trial;

    fn dev(name: &str, sched: &str, default: &str) -> Device {
        Device {
            name: name.into(),
            offered: vec!["none".into(), "mq-deadline".into(), "kyber".into()],
            scheduler: sched.into(),
            nr_requests: Some(128),
            read_ahead_kb: Some(128),
            rotational: Some(true),
            hw_queues: Some(1),
            kernel_default: default.into(),
            class_schedulers: vec![default.into()],
        }
    }

    /// Trials of `cands` on one workload: throughput `iops[i]` per candidate,
    /// a little noise, p99 fixed.
    fn run(cands: &[Candidate], iops: &[f64]) -> Vec<Trial> {
        let mut t = vec![];
        for r in 0..5u32 {
            for (c, x) in cands.iter().zip(iops) {
                let j = [0.0, 3.0, -2.0, 1.0, -1.0][r as usize];
                t.push(bench_trial(r, &c.label, "w", x + j, 100.0));
            }
        }
        t
    }

    fn decide(
        cands: &[Candidate],
        trials: &[Trial],
        devices: &[Device],
        choose: bool,
    ) -> Recommendation {
        let ws = vec!["w".to_string()];
        let o = Objective::Throughput;
        let base = current(cands, devices).unwrap_or(0);
        let opts = CompareOpts::default();
        let v = verdicts(trials, cands, base, &ws, o, &opts);
        let p = pairwise(trials, cands, &ws, o, &opts);
        recommend(cands, base, &v, &p, trials, devices, o, choose)
    }

    /// The case: `--schedulers none,none` on a loop device (none)
    /// over a disk on mq-deadline used to exit 1 recommending "none#1".
    #[test]
    fn a_a_run_over_an_unmeasured_disk_keeps_the_current_setting() {
        let cands = [cand("none#1", "none"), cand("none#2", "none")];
        let devs = [
            dev("loop0", "none", "none"),
            dev("vda", "mq-deadline", "mq-deadline"),
        ];
        for choose in [false, true] {
            let r = decide(&cands, &run(&cands, &[1000.0, 1000.0]), &devs, choose);
            assert_eq!(r.action, Action::Keep);
            assert!(
                !r.pending_change,
                "an A/A run never reports a pending change"
            );
            assert!(!r.current_measured);
            assert_eq!(r.setting, None);
            assert!(r.reason.contains("it was not measured"), "{}", r.reason);
            assert!(!r.reason.contains("none#1") || r.reason.contains("with itself"));
            // Even a large spurious difference between the twins.
            let r = decide(&cands, &run(&cands, &[1000.0, 1500.0]), &devs, choose);
            assert!(!r.pending_change && r.setting.is_none(), "{r:?}");
        }
    }

    #[test]
    fn a_a_run_on_the_current_setting_names_the_setting_not_a_label() {
        let cands = [cand("none#1", "none"), cand("none#2", "none")];
        let devs = [dev("loop0", "none", "none")];
        let r = decide(&cands, &run(&cands, &[1000.0, 1000.0]), &devs, false);
        assert_eq!(
            (r.action, r.setting.as_deref()),
            (Action::Keep, Some("none"))
        );
        assert!(r.current_measured && !r.pending_change);
        assert!(r.reason.contains("A/A run"), "{}", r.reason);
        // A spurious "difference" between the twins is called noise.
        let r = decide(&cands, &run(&cands, &[1000.0, 1500.0]), &devs, false);
        assert_eq!(
            (r.action, r.setting.as_deref()),
            (Action::Keep, Some("none"))
        );
        assert!(r.reason.contains("noise"), "{}", r.reason);
        assert!(!r.pending_change);
    }

    #[test]
    fn an_a_a_pair_that_differs_blocks_any_change() {
        let cands = [
            cand("none#1", "none"),
            cand("none#2", "none"),
            cand("kyber", "kyber"),
        ];
        let devs = [dev("sda", "none", "none")];
        let r = decide(
            &cands,
            &run(&cands, &[1000.0, 1500.0, 1500.0]),
            &devs,
            false,
        );
        assert_eq!(r.setting.as_deref(), Some("none"));
        assert!(
            !r.pending_change && r.reason.contains("noise"),
            "{}",
            r.reason
        );
    }

    #[test]
    fn unmeasured_current_needs_choose_and_a_candidate_better_than_all() {
        let cands = [
            cand("kyber", "kyber"),
            cand("bfq", "bfq"),
            cand("none", "none"),
        ];
        let devs = [dev("sda", "mq-deadline", "mq-deadline")];
        let clear = run(&cands, &[1000.0, 1000.0, 1500.0]);
        // Without --choose: kept, and the reason names the flag.
        let r = decide(&cands, &clear, &devs, false);
        assert_eq!(r.action, Action::Keep);
        assert!(
            !r.pending_change && r.reason.contains("--choose"),
            "{}",
            r.reason
        );
        // With it: none beat both others.
        let r = decide(&cands, &clear, &devs, true);
        assert_eq!(
            (r.action, r.setting.as_deref()),
            (Action::Change, Some("none"))
        );
        assert!(r.pending_change && !r.current_measured);
        assert!(r.reason.contains("chosen as asked"), "{}", r.reason);
        // Better than one other only: no choice.
        let r = decide(&cands, &run(&cands, &[1000.0, 1500.0, 1500.0]), &devs, true);
        assert_eq!(r.action, Action::Keep);
        assert!(
            r.reason.contains("no candidate was significantly better"),
            "{}",
            r.reason
        );
    }

    #[test]
    fn measured_current_keeps_the_documented_rule() {
        let cands = [cand("none", "none"), cand("mq-deadline", "mq-deadline")];
        // mq-deadline clearly faster: change.
        let devs = [dev("sda", "none", "none")];
        let r = decide(&cands, &run(&cands, &[1000.0, 1500.0]), &devs, false);
        assert_eq!(
            (r.action, r.setting.as_deref()),
            (Action::Change, Some("mq-deadline"))
        );
        assert!(r.pending_change);
        assert!(r.reason.contains("IOPS better on w"), "{}", r.reason);
        // The same with mq-deadline current: kept, the loss named.
        let devs = [dev("sda", "mq-deadline", "none")];
        let r = decide(&cands, &run(&cands, &[1000.0, 1500.0]), &devs, false);
        assert_eq!(
            (r.action, r.setting.as_deref()),
            (Action::Keep, Some("mq-deadline"))
        );
        assert!(
            r.reason
                .contains("keeping the current setting; none IOPS worse on w"),
            "{}",
            r.reason
        );
        // A tie goes to the kernel default (an SSD-class disk on none whose
        // default is mq-deadline).
        let devs = [dev("sda", "none", "mq-deadline")];
        let r = decide(&cands, &run(&cands, &[1000.0, 1001.0]), &devs, false);
        assert_eq!(r.setting.as_deref(), Some("mq-deadline"));
        assert!(
            r.pending_change && r.reason.contains("kernel default"),
            "{}",
            r.reason
        );
        // A tie on the kernel default itself: nothing to do.
        let devs = [dev("sda", "none", "none")];
        let r = decide(&cands, &run(&cands, &[1000.0, 1001.0]), &devs, false);
        assert_eq!(
            (r.action, r.setting.as_deref()),
            (Action::Keep, Some("none"))
        );
        assert!(!r.pending_change);
    }

    /// Mark `c`'s first `k` windows as having completed no read in their
    /// 8 s (as `Measurement::from_bench` does).
    fn starve(trials: &mut [Trial], c: &str, k: usize) {
        for t in trials.iter_mut().filter(|t| t.candidate == c).take(k) {
            t.starved = vec!["read".into()];
            t.stalled = vec!["read".into()];
            t.read_max_ns = Some(8_000_000_000);
        }
    }

    /// A stall inside a window vetoes as a whole-window one does: none's
    /// reads served in every window, its p99 far better, but one read of
    /// a window waited 2.64 s (the longest under none at 2026-11-27 08:51)
    /// where mq-deadline's longest was 21 ms. A longest read under the
    /// limit (0.46 s, the same run) does not.
    #[test]
    fn a_read_that_waited_past_the_limit_vetoes_like_a_starved_window() {
        let cands = [cand("mq-deadline", "mq-deadline"), cand("none", "none")];
        let devs = [dev("vda", "mq-deadline", "mq-deadline")];
        let mut trials = run(&cands, &[1000.0, 1500.0]);
        for t in trials.iter_mut().filter(|t| t.candidate == "mq-deadline") {
            t.read_max_ns = Some(21_000_000);
        }
        // The third window of none.
        let i = (0..trials.len())
            .filter(|&i| trials[i].candidate == "none")
            .nth(2)
            .unwrap();
        trials[i].read_max_ns = Some(460_000_000);
        let r = decide(&cands, &trials, &devs, false);
        assert_eq!(r.action, Action::Change, "{}", r.reason);
        trials[i].read_max_ns = Some(2_640_000_000);
        trials[i].stalled = vec!["read".into()];
        let r = decide(&cands, &trials, &devs, false);
        assert_eq!(
            (r.action, r.setting.as_deref()),
            (Action::Keep, Some("mq-deadline")),
            "{}",
            r.reason
        );
        assert!(
            r.reason.contains(
                "none stalled reads in 1 of 5 w windows (longest read 2.64 s; a read waited over 500 ms, or none completed), mq-deadline in none of 5 (longest read 21 ms)"
            ),
            "{}",
            r.reason
        );
    }

    /// The veto: a winner on its medians that starved reads in a window
    /// where the current setting never did is not recommended; if the
    /// current setting starved too, the medians decide again.
    #[test]
    fn a_winner_that_starved_where_the_current_setting_never_did_is_vetoed() {
        let cands = [cand("mq-deadline", "mq-deadline"), cand("none", "none")];
        let devs = [dev("vda", "mq-deadline", "mq-deadline")];
        let mut trials = run(&cands, &[1000.0, 1500.0]);
        let r = decide(&cands, &trials, &devs, false);
        assert_eq!(
            (r.action, r.setting.as_deref()),
            (Action::Change, Some("none")),
            "{}",
            r.reason
        );
        starve(&mut trials, "none", 2);
        let r = decide(&cands, &trials, &devs, false);
        assert_eq!(
            (r.action, r.setting.as_deref()),
            (Action::Keep, Some("mq-deadline")),
            "{}",
            r.reason
        );
        assert!(!r.pending_change);
        assert!(
            r.reason.contains("IOPS better on w")
                && r.reason
                    .contains("none stalled reads in 2 of 5 w windows (longest read 8 s; a read waited over 500 ms, or none completed), mq-deadline in none of 5 (longest read 100 us)"),
            "{}",
            r.reason
        );
        // Both starved: no veto, the medians decide.
        starve(&mut trials, "mq-deadline", 1);
        let r = decide(&cands, &trials, &devs, false);
        assert_eq!(
            (r.action, r.setting.as_deref()),
            (Action::Change, Some("none")),
            "{}",
            r.reason
        );
    }

    #[test]
    fn the_veto_holds_for_a_tie_to_the_kernel_default_and_for_choose() {
        // A tie would go to the kernel default (mq-deadline) from kyber.
        let cands = [cand("kyber", "kyber"), cand("mq-deadline", "mq-deadline")];
        let devs = [dev("sda", "kyber", "mq-deadline")];
        let mut trials = run(&cands, &[1000.0, 1001.0]);
        let r = decide(&cands, &trials, &devs, false);
        assert_eq!(r.setting.as_deref(), Some("mq-deadline"), "{}", r.reason);
        starve(&mut trials, "mq-deadline", 1);
        let r = decide(&cands, &trials, &devs, false);
        assert_eq!(
            (r.action, r.setting.as_deref()),
            (Action::Keep, Some("kyber")),
            "{}",
            r.reason
        );
        // --choose with the current setting unmeasured: the pairwise winner
        // is vetoed when it starved where the others never did.
        let cands = [cand("kyber", "kyber"), cand("none", "none")];
        let devs = [dev("sda", "mq-deadline", "mq-deadline")];
        let mut trials = run(&cands, &[1000.0, 1500.0]);
        let r = decide(&cands, &trials, &devs, true);
        assert_eq!(r.setting.as_deref(), Some("none"), "{}", r.reason);
        starve(&mut trials, "none", 1);
        let r = decide(&cands, &trials, &devs, true);
        assert_eq!((r.action, r.setting.as_deref()), (Action::Keep, None));
        assert!(
            r.reason
                .contains("none stalled reads in 1 of 5 w windows (longest read 8 s; a read waited over 500 ms, or none completed), kyber in none of 5 (longest read 100 us)"),
            "{}",
            r.reason
        );
    }
}
