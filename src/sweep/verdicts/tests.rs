//! Tests of the verdicts: summaries, comparisons, the sequential design.

use super::super::options::Objective;
use super::super::plan::Candidate;
use super::*;
use crate::stats::{self, CompareOpts, Verdict};
use crate::trial::trials::tests::{bench_trial, oltp_trial};
use crate::trial::trials::Trial;
use rand::rngs::SmallRng;
use rand::SeedableRng;

pub(crate) fn cand(l: &str, s: &str) -> Candidate {
    Candidate {
        label: l.into(),
        scheduler: s.into(),
        nr_requests: None,
        read_ahead_kb: None,
    }
}

#[test]
fn latency_verdict_on_p99_only() {
    let cands = [cand("none", "none"), cand("mq-deadline", "mq-deadline")];
    let ws = vec!["mixed".to_string()];
    let mut trials = vec![];
    for r in 0..5 {
        let j = r as f64;
        trials.push(bench_trial(
            r,
            "none",
            "mixed",
            1000.0 + j,
            2000.0 + 30.0 * j,
        ));
        trials.push(bench_trial(
            r,
            "mq-deadline",
            "mixed",
            1001.0 - j,
            1000.0 + 25.0 * j,
        ));
    }
    let v = verdicts(
        &trials,
        &cands,
        0,
        &ws,
        Objective::Latency,
        &CompareOpts::default(),
    );
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].verdict, Verdict::Better);
    assert_eq!(
        v[0].throughput.comparison.verdict,
        Verdict::NoSignificantDifference
    );
    assert!(
        v[0].describe(Objective::Latency)
            .starts_with("p99 better on mixed"),
        "{}",
        v[0].describe(Objective::Latency)
    );
    // The same pair in the pairwise set (K = 2: alpha / W as above).
    let p = pairwise(
        &trials,
        &cands,
        &ws,
        Objective::Latency,
        &CompareOpts::default(),
    );
    assert_eq!(p.len(), 1);
    assert_eq!(
        (p[0].baseline.as_str(), p[0].verdict),
        ("none", Verdict::Better)
    );
}

#[test]
fn pairwise_skips_same_settings_and_corrects_alpha() {
    let cands = [
        cand("none#1", "none"),
        cand("none#2", "none"),
        cand("mq-deadline", "mq-deadline"),
        cand("kyber", "kyber"),
    ];
    let ws = vec!["w".to_string(), "v".to_string()];
    let mut trials = vec![];
    // 6 rounds: the smallest p-value at 6 vs 6 (2/924) is below the
    // corrected alpha, so the interval is at its nominal level (at 4
    // rounds it could not be, and would say its real level instead).
    for r in 0..6 {
        for c in &cands {
            for w in &ws {
                trials.push(bench_trial(r, &c.label, w, 1000.0 + r as f64, 100.0));
            }
        }
    }
    let p = pairwise(
        &trials,
        &cands,
        &ws,
        Objective::Throughput,
        &CompareOpts::default(),
    );
    // 5 pairs of different settings (none#1–none#2 skipped) × 2 workloads.
    assert_eq!(p.len(), 10);
    assert!(p
        .iter()
        .all(|v| !(v.baseline == "none#1" && v.candidate == "none#2")));
    // 3 distinct settings, 2 workloads: 0.05 / (2 × 2).
    let level = p[0].throughput.comparison.ci_level;
    assert!((level - (1.0 - 0.0125)).abs() < 1e-12, "{level}");
    assert_eq!(pairwise_alpha(0.05, 4, 2), 0.0125);
}

#[test]
fn json_levels_name_their_units() {
    let cands = [cand("none", "none"), cand("mq-deadline", "mq-deadline")];
    let ws = vec!["oltp_read_write".to_string(), "page-read".to_string()];
    let mut trials = vec![];
    for r in 0..5 {
        let j = r as f64;
        trials.push(oltp_trial(r, "none", 800.0 + j, 20.0 + j));
        trials.push(oltp_trial(r, "mq-deadline", 1000.0 + j, 10.0 + j));
        trials.push(bench_trial(r, "none", "page-read", 1000.0 + j, 100.0));
        trials.push(bench_trial(
            r,
            "mq-deadline",
            "page-read",
            1000.0 - j,
            100.0,
        ));
    }
    let v = verdicts(
        &trials,
        &cands,
        0,
        &ws,
        Objective::Balanced,
        &CompareOpts::default(),
    );
    let oltp = serde_json::to_value(&v[0]).unwrap();
    assert_eq!(oltp["workload"], "oltp_read_write");
    assert_eq!(oltp["throughput"]["unit"], "tps");
    assert_eq!(oltp["throughput"]["verdict"], "better");
    assert_eq!(oltp["balanced"]["verdict"], "better");
    assert!(oltp.get("bandwidth").is_none(), "{oltp}");
    let bench = serde_json::to_value(&v[1]).unwrap();
    assert_eq!(bench["throughput"]["unit"], "iops");
    assert!(bench["balanced"].is_object() && bench["bandwidth"].is_object());
    assert!((bench["throughput"]["ci_level_pct"].as_f64().unwrap() - 97.5).abs() < 1e-9);

    let c = cells(&trials, &cands, &ws, 200, 1);
    let cj = serde_json::to_value(&c[0]).unwrap();
    assert_eq!(cj["throughput"]["unit"], "tps");
    assert_eq!(cj["throughput"]["n"], 5);
    assert!(cj["p99_ns"]["median"].is_u64(), "{cj}");
    assert_eq!(cj["p99_ns"]["median"], 22_000_000);
    assert!(cj.get("bandwidth_bytes_per_s").is_none());
    let n = noise(&c);
    assert!(n.tps_cv_median.is_some() && n.iops_cv_median.is_some());
}

/// Run a simulated sequential sweep of `cands` on one workload: each
/// round draws one trial per candidate from `draw(candidate, rng)`
/// (IOPS; p99 fixed), looks, and stops when the design says so.
/// Returns the design and the rounds run.
fn simulate_sequential(
    cands: &[Candidate],
    max_rounds: u32,
    objective: Objective,
    seed: u64,
    bounds: &Sequential,
    draw: &dyn Fn(usize, &mut SmallRng) -> (f64, f64),
) -> Sequential {
    let ws = vec!["w".to_string()];
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut s = bounds.clone();
    let opts = CompareOpts {
        seed,
        resamples: 2000,
        ..Default::default()
    };
    let mut trials = vec![];
    for r in 0..max_rounds {
        for (i, c) in cands.iter().enumerate() {
            let (iops, p99) = draw(i, &mut rng);
            trials.push(bench_trial(r, &c.label, "w", iops, p99));
        }
        if s.look(&trials, cands, 0, &ws, objective, &opts, r + 1) {
            break;
        }
    }
    s.finish()
}

/// A large consistent effect (+50% IOPS, 5% noise) is declared at the
/// earliest look the design allows (round 5 of 10 at alpha 0.05), and
/// the sweep stops there; the verdict names its round.
#[test]
fn large_consistent_effect_stops_at_the_earliest_round() {
    let cands = [cand("none", "none"), cand("mq-deadline", "mq-deadline")];
    let fresh = Sequential::new(0.05, 1, 2, 10, false);
    let first = fresh.bounds.first_look().unwrap();
    assert_eq!(first, 5);
    for seed in 0..20u64 {
        let s = simulate_sequential(
            &cands,
            10,
            Objective::Throughput,
            seed,
            &fresh,
            &|i, rng| {
                let base = if i == 0 { 1000.0 } else { 1500.0 };
                (base * (1.0 + 0.05 * stats::tests::normal(rng)), 100.0)
            },
        );
        assert_eq!(s.rounds_run, first, "seed {seed}: {:?}", s.verdicts[0]);
        let v = &s.verdicts[0];
        assert_eq!(v.verdict, Verdict::Better);
        let r = v.sequential.unwrap();
        assert!(r.crossed && r.round == first && !r.ran_to_budget, "{r:?}");
        assert!(v.throughput.comparison.p_value <= r.level);
        assert_eq!(r.describe(), "round 5");
    }
    // Ties run to the budget and say so.
    let s = simulate_sequential(&cands, 10, Objective::Throughput, 1, &fresh, &|_, rng| {
        (1000.0 * (1.0 + 0.05 * stats::tests::normal(rng)), 100.0)
    });
    assert_eq!(s.rounds_run, 10);
    let r = s.verdicts[0].sequential.unwrap();
    if s.verdicts[0].verdict == Verdict::NoSignificantDifference {
        assert!(!r.crossed && r.ran_to_budget && r.round == 10, "{r:?}");
        assert_eq!(r.describe(), "not crossed in all 10 rounds");
    }
    let j = serde_json::to_value(&s.verdicts[0]).unwrap();
    assert_eq!(j["sequential"]["round"], 10, "{j}");
}

/// The A/A check of the fixed design (stats::compare), for the
/// sequential one: no effect, up to 10 looks, the whole verdict rule
/// (rank test at the look's level, CI, minimum effect) on the balanced
/// composite and on IOPS, at 5% and 20% noise: at most 5% of runs
/// reach any verdict at any look.
///
/// 4000 runs, not 400: since the interval inverts the rank test
/// (2026-11-27) the whole rule spends what the design allows, ≈ 4.7%
/// over 10 looks, and 400 runs (standard error 1.1 points) cannot tell
/// that from 5.5% (their first 400 seeds flag 22, 18, 23 and 17). 4000
/// runs bring the error to 0.33 points; measured 186, 193, 189 and 191
/// (4.65–4.83%). The exact null law makes them cost about a second.
#[test]
fn a_a_false_positives_at_most_5_percent_over_all_looks() {
    let cands = [cand("none#1", "none"), cand("none#2", "none")];
    let fresh = Sequential::new(0.05, 1, 1, 10, false);
    for noise in [0.05, 0.20] {
        for objective in [Objective::Throughput, Objective::Balanced] {
            let seeds = 4000u64;
            let mut fp = 0;
            let mut fp400 = 0;
            for seed in 0..seeds {
                let s =
                    simulate_sequential(&cands, 10, objective, 30_000 + seed, &fresh, &|_, rng| {
                        (
                            1000.0 * (1.0 + noise * stats::tests::normal(rng)),
                            100.0 * (1.0 + noise * stats::tests::normal(rng)),
                        )
                    });
                fp += (s.verdicts[0].verdict != Verdict::NoSignificantDifference) as u32;
                if seed == 399 {
                    fp400 = fp;
                }
            }
            eprintln!(
                "sequential A/A, noise {noise}, {objective:?}: {fp}/{seeds} runs flagged, first 400: {fp400}"
            );
            assert!(
                fp as f64 <= 0.05 * seeds as f64,
                "noise {noise} {objective:?}: {fp}/{seeds}"
            );
        }
    }
}

/// The shape that missed before 2026-11-27 (bench/RESULTS.md, AMD
/// sweep 23:46, run 7): `none`'s read p99 far below mq-deadline's in
/// most windows, two uneven windows (one stall, one level), 8 rounds.
/// The rank test crosses the round-8 level; the interval, the same test
/// inverted, must then exclude 1 too, so the verdict is reached there.
/// The rule before, a 98.5% percentile bootstrap of the ratio of
/// medians, spans 1 on these numbers (computed with 5000 resamples:
/// 0.016–95, 1.1% of resampled ratios at or above 1), so it missed.
/// The stalled window's p99 is 400 ms here, not the measured 4 s: the
/// ranks are the same, and since the veto counts any read past 500 ms
/// as a stall, a 4 s window now settles the sweep at the first look
/// (`a_candidate_vetoed_for_starving_settles_the_answer`).
#[test]
fn uneven_large_effect_crosses_when_the_rank_test_does() {
    let cands = [cand("mq-deadline", "mq-deadline"), cand("none", "none")];
    let ws = vec!["mixed".to_string()];
    let mut s = Sequential::new(0.05, 1, 2, 8, false);
    // p99 in µs per round: the stall in round 2 keeps round 4 (the
    // first look: complete separation needed) from crossing.
    let mqd = [17e3, 18e3, 19e3, 20e3, 21e3, 22e3, 23e3, 24e3];
    let none = [400.0, 4e5, 300.0, 500.0, 350.0, 450.0, 17.5e3, 380.0];
    let opts = CompareOpts {
        seed: 7,
        ..Default::default()
    };
    let mut trials = vec![];
    for r in 0..8u32 {
        trials.push(bench_trial(
            r,
            "mq-deadline",
            "mixed",
            1000.0,
            mqd[r as usize],
        ));
        trials.push(bench_trial(r, "none", "mixed", 1000.0, none[r as usize]));
        if s.look(&trials, &cands, 0, &ws, Objective::Latency, &opts, r + 1) {
            break;
        }
    }
    let s = s.finish();
    let v = &s.verdicts[0];
    let reached = v.sequential.unwrap();
    let p99 = v.p99.as_ref().unwrap();
    eprintln!(
        "{reached:?} p {} ratio {:?} [{:?}, {:?}]",
        p99.p_value, p99.ratio, p99.ci_low, p99.ci_high
    );
    assert!(reached.round > 4, "{reached:?}");
    assert!(
        reached.crossed && p99.p_value <= reached.level,
        "{reached:?} {p99:?}"
    );
    assert_eq!(v.verdict, Verdict::Better, "{v:?}");
    assert!(
        p99.ci_high.unwrap() < 1.0 && p99.ratio.unwrap() < 0.1,
        "{p99:?}"
    );
}

/// Run the looks of a sequential mixed-workload sweep of mq-deadline
/// (the current setting, index 0) and none over p99s in ms per round;
/// `starved[c]` lists the 0-based rounds in which candidate c's reads
/// starved (their p99 is then the 4 s window).
fn settle_run(none_ms: &[f64], mqd_ms: &[f64], starved: [&[u32]; 2], pairwise: bool) -> Sequential {
    let cands = [cand("mq-deadline", "mq-deadline"), cand("none", "none")];
    let ws = vec!["mixed".to_string()];
    let rounds = none_ms.len() as u32;
    let mut s = Sequential::new(0.05, 1, 2, rounds, pairwise);
    let opts = CompareOpts {
        seed: 7,
        ..Default::default()
    };
    let mut trials = vec![];
    for r in 0..rounds {
        for (c, (label, ms)) in [("mq-deadline", mqd_ms), ("none", none_ms)]
            .iter()
            .enumerate()
        {
            let mut t = bench_trial(r, label, "mixed", 1000.0, ms[r as usize] * 1000.0);
            if starved[c].contains(&r) {
                t.starved = vec!["read".into()];
            }
            trials.push(t);
        }
        if s.look(&trials, &cands, 0, &ws, Objective::Latency, &opts, r + 1) {
            break;
        }
    }
    s.finish()
}

/// The settled stop, on a sequential sweep measured on this VM
/// (bench/RESULTS.md 2026-11-27 05:17, run 1, Intel host): none's
/// read p99 was far below mq-deadline's in most windows but its reads
/// starved for the whole 4 s window in rounds 5 and 7, so the rank test
/// never crossed and the sweep ran all 8 rounds to keep mq-deadline
/// through the veto. With the settled stop it ends at round 5, the
/// first look after none starved, with the same answer; the verdict is
/// left open and says so.
#[test]
fn a_candidate_vetoed_for_starving_settles_the_answer() {
    let none = [3.29, 31.26, 2.75, 13.04, 4000.0, 0.86, 4000.0, 1.61];
    let mqd = [17.51, 18.45, 17.87, 18.87, 18.33, 21.69, 20.05, 17.42];
    let s = settle_run(&none, &mqd, [&[], &[4, 6]], false);
    assert!(s.bounds.first_look().unwrap() <= 5);
    assert_eq!(s.rounds_run, 5, "{:?}", s.verdicts[0]);
    let why = s.settled.as_deref().expect("settled");
    assert_eq!(
        why,
        "none is vetoed: none stalled reads in 1 of 5 mixed windows (longest read 4 s; a read waited over 500 ms, or none completed), mq-deadline in none of 5 (longest read 18.9 ms)"
    );
    let v = &s.verdicts[0];
    assert_eq!(v.verdict, Verdict::NoSignificantDifference);
    let r = v.sequential.unwrap();
    assert!(!r.crossed && !r.ran_to_budget && r.round == 5, "{r:?}");
    assert_eq!(r.describe(), "open when the sweep stopped at round 5");

    // Without a starved window the same numbers run to the budget: the
    // stop is the veto's, not the rank test's.
    let calm: Vec<f64> = none.iter().map(|&x| x.min(40.0)).collect();
    let s = settle_run(&calm, &mqd, [&[], &[]], false);
    assert_eq!((s.rounds_run, s.settled.as_deref()), (8, None));

    // When the current setting starved too, the veto does not hold
    // and nothing is settled.
    let mut both = mqd;
    both[1] = 4000.0;
    let s = settle_run(&none, &both, [&[1], &[4, 6]], false);
    assert_eq!((s.rounds_run, s.settled.as_deref()), (8, None));

    // Starving before any verdict is possible settles nothing yet: the
    // stop waits for the first look.
    let first = Sequential::new(0.05, 1, 2, 8, false)
        .bounds
        .first_look()
        .unwrap();
    let s = settle_run(&none, &mqd, [&[], &[0, 4, 6]], false);
    assert_eq!(s.rounds_run, first, "{:?}", s.settled);
    assert!(s.settled.is_some());

    // With --choose and an unmeasured current setting, mq-deadline can
    // still be chosen over the starving none: nothing is settled.
    let s = settle_run(&none, &mqd, [&[], &[4, 6]], true);
    assert!(s.settled.is_none(), "{:?}", s.settled);
}

/// `--choose` with an unmeasured current setting settles only when no
/// candidate can still be chosen: mq-deadline lost a kept pairwise
/// verdict to none on workload a, and none starved where mq-deadline
/// never did, while workload b is still open.
#[test]
fn a_choose_run_settles_when_every_candidate_is_out() {
    let cands = [cand("mq-deadline", "mq-deadline"), cand("none", "none")];
    let ws = vec!["a".to_string(), "b".to_string()];
    let mut s = Sequential::new(0.05, 2, 2, 10, true);
    let opts = CompareOpts {
        seed: 5,
        ..Default::default()
    };
    let mut trials = vec![];
    for r in 0..10u32 {
        let j = r as f64;
        trials.push(bench_trial(r, "mq-deadline", "a", 500.0 + j, 100.0));
        let mut t = bench_trial(r, "none", "a", 1000.0 + j, 100.0);
        if r == 0 {
            t.starved = vec!["write".into()];
        }
        trials.push(t);
        trials.push(bench_trial(
            r,
            "mq-deadline",
            "b",
            1000.0 + (j % 3.0),
            100.0,
        ));
        trials.push(bench_trial(
            r,
            "none",
            "b",
            1000.0 + ((j + 1.0) % 3.0),
            100.0,
        ));
        if s.look(&trials, &cands, 0, &ws, Objective::Throughput, &opts, r + 1) {
            break;
        }
    }
    let s = s.finish();
    let first = s.pairwise_bounds.as_ref().unwrap().first_look().unwrap();
    assert_eq!(s.rounds_run, first, "{:?}", s.pairwise);
    let why = s.settled.as_deref().expect("settled");
    assert!(
        why.starts_with("mq-deadline cannot be chosen: ")
            && why.contains("; none is vetoed: none stalled writes in 1 of"),
        "{why}"
    );
}

/// A kept "worse" verdict settles too: once the only other candidate
/// crossed against the current setting on one workload, the other
/// workload's open verdict cannot make it qualify.
#[test]
fn a_kept_worse_verdict_settles_the_answer() {
    let cands = [cand("mq-deadline", "mq-deadline"), cand("none", "none")];
    let ws = vec!["a".to_string(), "b".to_string()];
    let mut s = Sequential::new(0.05, 2, 2, 10, false);
    let opts = CompareOpts {
        seed: 3,
        ..Default::default()
    };
    let mut trials = vec![];
    for r in 0..10u32 {
        let j = r as f64;
        // a: none clearly slower; b: level.
        trials.push(bench_trial(r, "mq-deadline", "a", 1000.0 + j, 100.0));
        trials.push(bench_trial(r, "none", "a", 500.0 + j, 100.0));
        trials.push(bench_trial(
            r,
            "mq-deadline",
            "b",
            1000.0 + (j % 3.0),
            100.0,
        ));
        trials.push(bench_trial(
            r,
            "none",
            "b",
            1000.0 + ((j + 1.0) % 3.0),
            100.0,
        ));
        if s.look(&trials, &cands, 0, &ws, Objective::Throughput, &opts, r + 1) {
            break;
        }
    }
    let s = s.finish();
    let first = s.bounds.first_look().unwrap();
    assert_eq!(s.rounds_run, first);
    assert_eq!(s.verdicts[0].verdict, Verdict::Worse);
    assert!(s.verdicts[0].sequential.unwrap().crossed);
    assert!(!s.verdicts[1].sequential.unwrap().crossed);
    let why = s.settled.as_deref().unwrap();
    assert!(
        why.starts_with("none cannot qualify: IOPS worse on a ("),
        "{why}"
    );
    assert!(why.ends_with("against mq-deadline"), "{why}");
}

#[test]
fn noise_summary_in_percent() {
    let cands = [cand("a", "none")];
    let ws = vec!["w".to_string()];
    let trials: Vec<Trial> = [100.0, 110.0, 90.0]
        .iter()
        .enumerate()
        .map(|(i, &x)| bench_trial(i as u32, "a", "w", x, 10.0))
        .collect();
    let c = cells(&trials, &cands, &ws, 2000, 1);
    let n = noise(&c);
    assert!((n.iops_cv_median.unwrap() - 0.1).abs() < 1e-9);
    assert_eq!(n.tps_cv_median, None);
    assert_eq!(n.p99_cv_median, Some(0.0));
    let j = serde_json::to_value(&n).unwrap();
    assert!((j["iops_cv_median_pct"].as_f64().unwrap() - 10.0).abs() < 1e-9);
    assert!(j.get("tps_cv_median_pct").is_none(), "{j}");
}
