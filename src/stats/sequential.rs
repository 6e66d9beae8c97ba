//! Group-sequential boundaries for the exact rank-sum test: after every
//! round the sweep may test again, and stop as soon as the answer is clear,
//! while the chance of a false "better"/"worse" over *all* looks together
//! stays at most alpha.
//!
//! **Spending function.** Lan–DeMets alpha spending with the Pocock-type
//! function α(t) = α·ln(1 + (e − 1)·t), t = round / max rounds: the error
//! allowed by the end of look t. Why Pocock-type and not the
//! O'Brien–Fleming-type 2 − 2Φ(z_{α/2}/√t) the literature often shows: the
//! exact rank test is discrete, and its smallest two-sided p-value is
//! 2/C(2R, R) (R = 4: 0.029, 5: 0.0079, 6: 0.0022, 7: 0.00058). A look can
//! only stop the sweep if the error spent by then reaches that value.
//! With 10 rounds at most and alpha 0.05, O'Brien–Fleming has spent 0.0019
//! after round 4, 0.0056 after 5 and 0.011 after 6, so even a difference
//! that separates every trial cannot be declared before round 6 (round 7
//! at alpha 0.0125, four workloads). Pocock has spent 0.026 after round 4
//! and 0.031 after 5: complete separation is declared at round 5 (round 6
//! at 0.0125), which is what makes a sequential sweep of short trials at
//! least twice as fast as a fixed 5-round run of 8 s trials. The price is
//! the usual one: a lower level at the last look than a fixed design would
//! use (for 10 rounds at 0.05: 0.016 at round 5, 0.026 at 6, then 0.017,
//! 0.015, 0.014 and 0.011 at round 10, instead of 0.05; see the tests), so
//! a small effect needs more rounds to be found than in a fixed design.
//!
//! **Calibration.** Under "no difference" the trial values are exchangeable
//! (randomised order), so the joint law of the rank statistics at all looks
//! is the same for every continuous distribution. It is sampled once, with
//! a fixed seed: [`PATHS`] sequences of R_max rounds of two independent
//! uniforms, the Mann–Whitney U after each round. At each look the nominal
//! level is the largest attainable exact p-value (the no-ties null
//! distribution, computed exactly) such that the simulated probability of
//! crossing at this look or an earlier one stays below α(t) minus 2.58
//! Monte Carlo standard errors (a 99.5% one-sided margin, about 0.0013 at
//! alpha 0.05): so the false-positive bound holds with the simulation's
//! error included. A look whose spent error cannot reach the smallest
//! attainable p-value has no boundary (level 0) and spends nothing, and
//! what it did not spend is left for the later looks. Ties in real data
//! (midranks) only make the test's p-values coarser.
//!
//! A verdict also needs the confidence interval at level 1 − the look's
//! nominal level to exclude 1, and the minimum effect
//! ([`super::compare`]). That interval inverts the same rank test, so it
//! excludes 1 exactly when p ≤ the level (without ties): it costs no power
//! at any look, and since each gate can only remove verdicts, the bound of
//! the rank test alone bounds the whole rule.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

/// Simulated null sequences behind every boundary. 200 000 keeps the Monte
/// Carlo standard error of a 5% crossing probability at 0.05 percentage
/// points and costs about 0.1 s for 10 rounds.
pub const PATHS: usize = 200_000;
/// The calibration's seed: boundaries are a function of (alpha, max rounds)
/// only, the same on every run.
const SEED: u64 = 0x5e9_2026;

/// Most rounds a sequential design can plan (a sweep's budget caps rounds
/// at 20; the simulation's cost grows with the square of this).
pub const MAX_ROUNDS: u32 = 40;

/// The error the Pocock-type spending function allows by information time
/// `t` (0..=1).
pub fn pocock_spent(alpha: f64, t: f64) -> f64 {
    alpha * (1.0 + (std::f64::consts::E - 1.0) * t.clamp(0.0, 1.0)).ln()
}

/// Exact null distribution of the Mann–Whitney U for `r` against `r`
/// values without ties: the number of orderings with U = u, u = 0..=r².
fn u_counts(r: usize) -> Vec<f64> {
    super::compare::u_null_counts(r, r)
}

/// Two-sided exact p-value (no ties) for each distance k = |2U − r²|,
/// indexed by k: P(|2U' − r²| ≥ k), the same statistic as
/// [`super::compare::rank_sum_p`] (rank sum minus its mean = U − r²/2).
fn p_by_distance(r: usize) -> Vec<f64> {
    let counts = u_counts(r);
    let total: f64 = counts.iter().sum();
    let r2 = (r * r) as i64;
    let mut mass = vec![0.0; r * r + 1];
    for (u, c) in counts.iter().enumerate() {
        mass[(2 * u as i64 - r2).unsigned_abs() as usize] += c;
    }
    let mut p = vec![0.0; r * r + 1];
    let mut acc = 0.0;
    for k in (0..=r * r).rev() {
        acc += mass[k];
        p[k] = (acc / total).min(1.0);
    }
    p
}

/// The smallest two-sided p-value the exact test can give at `r` rounds:
/// 2/C(2r, r).
pub fn smallest_p(r: u32) -> f64 {
    if r == 0 {
        return 1.0;
    }
    *p_by_distance(r as usize).last().unwrap_or(&1.0)
}

/// One look's boundary: a verdict at `round` needs p ≤ `level`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct Look {
    pub round: u32,
    /// Nominal level of the rank test (and 1 − the CI level) at this look;
    /// 0 when this look cannot cross.
    pub level: f64,
    /// Simulated chance, under no difference, of a crossing at this look
    /// or before (at most the spending function's value).
    pub spent: f64,
}

/// Nominal levels for every look of one family of comparisons.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Boundaries {
    pub alpha: f64,
    pub max_rounds: u32,
    pub looks: Vec<Look>,
}

impl Boundaries {
    /// Boundaries for a test at `alpha` looked at after every round
    /// 1..=`max_rounds`.
    pub fn new(alpha: f64, max_rounds: u32) -> Boundaries {
        let rmax = max_rounds.clamp(1, MAX_ROUNDS) as usize;
        let ks = simulate(rmax);
        let mut crossed = vec![false; PATHS];
        let mut n_crossed = 0usize;
        let mut looks = Vec::with_capacity(rmax);
        let se = |p: f64| 2.58 * (p.max(0.0) * (1.0 - p).max(0.0) / PATHS as f64).sqrt();
        for r in 1..=rmax {
            let target = pocock_spent(alpha, r as f64 / rmax as f64);
            let allowed = target - se(target);
            let p = p_by_distance(r);
            // Not-yet-crossed paths by distance at this look.
            let mut hist = vec![0usize; r * r + 1];
            for (i, &k) in ks[r - 1].iter().enumerate() {
                if !crossed[i] {
                    hist[k as usize] += 1;
                }
            }
            // Lower the threshold distance while the cumulative crossing
            // probability stays allowed; only distances whose p-value is a
            // real step count (every k with the same p is taken together).
            let mut best: Option<usize> = None;
            let mut extra = 0usize;
            let mut k = r * r;
            loop {
                extra += hist[k];
                let same_next = k > 0 && p[k - 1] == p[k];
                if !same_next {
                    let prob = (n_crossed + extra) as f64 / PATHS as f64;
                    if prob <= allowed && p[k] <= alpha {
                        best = Some(k);
                    } else {
                        break;
                    }
                }
                if k == 0 {
                    break;
                }
                k -= 1;
            }
            let level = match best {
                Some(kstar) => {
                    for (i, &k) in ks[r - 1].iter().enumerate() {
                        if !crossed[i] && k as usize >= kstar {
                            crossed[i] = true;
                            n_crossed += 1;
                        }
                    }
                    p[kstar]
                }
                None => 0.0,
            };
            looks.push(Look {
                round: r as u32,
                level,
                spent: n_crossed as f64 / PATHS as f64,
            });
        }
        Boundaries {
            alpha,
            max_rounds: rmax as u32,
            looks,
        }
    }

    /// The nominal level at `round` (1-based); 0 when it cannot cross.
    pub fn level(&self, round: u32) -> f64 {
        self.looks
            .get(round.wrapping_sub(1) as usize)
            .map_or(0.0, |l| l.level)
    }

    /// The first round at which a verdict is possible.
    pub fn first_look(&self) -> Option<u32> {
        self.looks.iter().find(|l| l.level > 0.0).map(|l| l.round)
    }

    /// Does `p` cross the boundary at `round`? (A hair of slack for the
    /// floating-point sums behind the two p-values.)
    pub fn crosses(&self, round: u32, p: f64) -> bool {
        let l = self.level(round);
        l > 0.0 && p <= l * (1.0 + 1e-9)
    }
}

/// The distance |2U − r²| after each round r of [`PATHS`] independent null
/// sequences: `out[r − 1][path]`.
fn simulate(rmax: usize) -> Vec<Vec<u16>> {
    let mut rng = SmallRng::seed_from_u64(SEED);
    let mut out: Vec<Vec<u16>> = (0..rmax).map(|_| Vec::with_capacity(PATHS)).collect();
    let mut a = vec![0.0f64; rmax];
    let mut b = vec![0.0f64; rmax];
    for _ in 0..PATHS {
        let mut u: i64 = 0;
        for r in 0..rmax {
            let (x, y): (f64, f64) = (rng.gen(), rng.gen());
            // New pairs (b > a) the two new values make with the old ones
            // and with each other.
            for j in 0..r {
                u += (b[j] > x) as i64 + (y > a[j]) as i64;
            }
            u += (y > x) as i64;
            a[r] = x;
            b[r] = y;
            let n = (r + 1) as i64;
            out[r].push((2 * u - n * n).unsigned_abs() as u16);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_null_matches_known_values() {
        // 5 vs 5: 252 orderings; complete separation p = 2/252.
        assert_eq!(u_counts(5).iter().sum::<f64>(), 252.0);
        assert!((smallest_p(4) - 2.0 / 70.0).abs() < 1e-12);
        assert!((smallest_p(5) - 2.0 / 252.0).abs() < 1e-12);
        assert!((smallest_p(6) - 2.0 / 924.0).abs() < 1e-12);
        assert!((smallest_p(7) - 2.0 / 3432.0).abs() < 1e-12);
        // The same p as the permutation test on real values.
        let mut rng = SmallRng::seed_from_u64(3);
        let a = [1.0, 2.0, 3.0, 5.0, 4.5];
        let b = [6.0, 7.0, 4.0, 9.0, 10.0];
        let p = super::super::compare::rank_sum_p(&a, &b, &mut rng);
        // U(b > a) = 5 + 5 + 3 + 5 + 5 = 23 → k = |46 − 25| = 21.
        assert!((p - p_by_distance(5)[21]).abs() < 1e-12, "{p}");
    }

    /// The module doc's figures: where each spending function lets
    /// complete separation stop, and what the last look keeps.
    #[test]
    fn pocock_stops_complete_separation_at_round_5_of_10() {
        let b = Boundaries::new(0.05, 10);
        assert_eq!(b.first_look(), Some(5), "{b:?}");
        assert!(b.crosses(5, smallest_p(5)));
        assert!(!b.crosses(4, smallest_p(4)));
        // Never more than alpha spent, and monotone.
        let mut last = 0.0;
        for l in &b.looks {
            assert!(l.spent >= last && l.spent <= pocock_spent(0.05, l.round as f64 / 10.0));
            last = l.spent;
        }
        let final_level = b.level(10);
        eprintln!("alpha 0.05, 10 rounds: {:?}", b.looks);
        assert!(final_level > 0.01 && final_level < 0.05, "{final_level}");
        // Four workloads (0.0125): round 6.
        let b4 = Boundaries::new(0.0125, 10);
        assert_eq!(b4.first_look(), Some(6), "{b4:?}");
        // O'Brien–Fleming-type spending would have spent too little by
        // round 5 for even complete separation (0.0079).
        // 2 − 2Φ(1.96/√t) = 2Φ(−1.96/√t).
        let obf = |t: f64| 2.0 * super::super::compare::normal_cdf(-1.959_964 / t.sqrt());
        assert!(obf(0.5) < smallest_p(5), "{}", obf(0.5));
        assert!(obf(0.4) < smallest_p(4));
    }

    /// An independent check of the calibration (other seeds, normal
    /// instead of uniform values, U counted from scratch at every look):
    /// the rank test alone, looked at after every round, crosses in at
    /// most alpha of null runs, up to this check's own sampling error
    /// (2.58 standard errors of 20 000 runs: 0.4 percentage points).
    #[test]
    fn rank_test_alone_keeps_alpha_over_all_looks() {
        for (alpha, rmax) in [(0.05, 10u32), (0.0125, 10), (0.05, 20)] {
            let b = Boundaries::new(alpha, rmax);
            let tables: Vec<Vec<f64>> = (1..=rmax as usize).map(p_by_distance).collect();
            let runs = 20_000u64;
            let mut fp = 0u64;
            let mut rng = SmallRng::seed_from_u64(90_000 + rmax as u64);
            for _ in 0..runs {
                let (mut a, mut c) = (Vec::new(), Vec::new());
                for r in 1..=rmax {
                    a.push(super::super::tests::normal(&mut rng));
                    c.push(super::super::tests::normal(&mut rng));
                    let u: i64 = c
                        .iter()
                        .map(|y| a.iter().filter(|x| y > x).count() as i64)
                        .sum();
                    let n = r as i64;
                    let k = (2 * u - n * n).unsigned_abs() as usize;
                    if b.crosses(r, tables[r as usize - 1][k]) {
                        fp += 1;
                        break;
                    }
                }
            }
            let rate = fp as f64 / runs as f64;
            let se = (alpha * (1.0 - alpha) / runs as f64).sqrt();
            eprintln!("rank test alone, alpha {alpha}, {rmax} looks, {runs} null runs: {rate:.4}");
            assert!(
                rate <= alpha + 2.58 * se,
                "alpha {alpha}, {rmax} rounds: {rate}"
            );
            // And it spends most of alpha: the looks are not wasted.
            assert!(
                rate >= alpha * 0.6,
                "alpha {alpha}, {rmax} rounds: only {rate}"
            );
        }
    }
}
