//! Candidate versus baseline: the Hodges–Lehmann ratio with the exact
//! confidence interval of the rank-sum test, and the verdict rule.
//!
//! The rule (all three must hold for "better" or "worse"):
//! 1. an exact two-sided permutation test of the rank sum (Wilcoxon–Mann–
//!    Whitney, midranks for ties) gives p ≤ `alpha` (0.05);
//! 2. the (1 − alpha) confidence interval of the ratio, obtained by
//!    inverting that same test, excludes 1.0;
//! 3. the effect |ratio − 1| is at least `min_effect` (default 3%): smaller
//!    differences are real on no machine a user will run on.
//!
//! **The estimate and its interval.** The ratio is the Hodges–Lehmann
//! estimate on the log scale: the median of all m·n trial ratios
//! candidate_j / baseline_i. Its interval is the set of ratios δ the rank
//! test would not reject if the candidate were divided by δ (Moses' exact
//! interval): with the m·n ratios sorted and u* the largest count whose
//! two-sided exact tail 2·P(U ≤ u*) is still ≤ alpha, it runs from the
//! (u* + 1)-th smallest ratio to the (u* + 1)-th largest. Without ties the
//! interval excludes 1 exactly when p ≤ alpha, so rules 1 and 2 never
//! disagree; with ties (equal trial values), each is checked.
//!
//! Why not the percentile bootstrap of a ratio of medians used before
//! (until 2026-11-27): at 4–8 trials its resampled medians are a handful of
//! order statistics, so its coverage is whatever the discreteness makes it.
//! At R = 4 it alone called a difference in 7.2% of no-effect runs (too
//! liberal, which is why the rank test was added as a gate), and at the
//! fine levels of a sequential look (98.5% at round 8) one uneven trial
//! stretched it over 1.0 while the rank test had already crossed: the
//! 2026-11-26 23:46 sweep in bench/RESULTS.md (p 0.0104 against a level of
//! 0.0148, no verdict). The rank interval needs only exchangeability under
//! "no change", which the randomised trial order provides; its coverage is
//! at least 1 − alpha for a multiplicative shift for every R, and it is
//! exactly as fine as the test (for 5 vs 5 the attainable size is 8/252).
//! The smallest p-value is 2/C(2R, R): 0.008 at R = 5, 0.029 at R = 4, so
//! a clear effect is still found; at R = 3 (0.1) nothing can be, which is
//! why sweep needs at least 4 rounds. When alpha is below what the trials
//! can attain, the interval is the widest they allow (smallest to largest
//! ratio) and `ci_level` says its real, lower, level: no verdict is
//! possible then. The min-effect gate is about relevance, not error
//! control: it keeps real but tiny differences out of recommendations.
//!
//! The exact null distribution is a short textbook recursion
//! ([`u_null_counts`]): statrs, the maintained statistics crate, has
//! neither the exact Mann–Whitney distribution nor Moses' interval.

use super::median;
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::Serialize;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// Which way is good for a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// IOPS, MiB/s.
    HigherIsBetter,
    /// Latencies, await.
    LowerIsBetter,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum Verdict {
    #[serde(rename = "better")]
    Better,
    #[serde(rename = "worse")]
    Worse,
    #[serde(rename = "no significant difference")]
    NoSignificantDifference,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::NoSignificantDifference => "no significant difference",
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct CompareOpts {
    /// Bootstrap resamples (≥ 2000) of the per-candidate summaries
    /// ([`super::summarize`]); the comparison itself is exact and needs none.
    pub resamples: usize,
    /// Minimum relative effect to call a difference (0.03 = 3%).
    pub min_effect: f64,
    /// Significance level of the permutation gate and 1 − CI level.
    pub alpha: f64,
    /// RNG seed: the same samples and seed give the same answer.
    pub seed: u64,
}

impl Default for CompareOpts {
    fn default() -> Self {
        CompareOpts {
            resamples: super::DEFAULT_RESAMPLES,
            min_effect: 0.03,
            alpha: 0.05,
            seed: 0,
        }
    }
}

/// Candidate compared with baseline for one metric.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Comparison {
    /// The Hodges–Lehmann ratio: the median of all candidate/baseline trial
    /// ratios (log scale); none when the baseline median is 0 or missing, or
    /// a trial value is negative or not finite (JSON: `{"unknown": reason}`).
    #[serde(serialize_with = "known_ratio", deserialize_with = "known_ratio_de")]
    pub ratio: Option<f64>,
    /// Moses' exact interval of the ratio at `ci_level` (the rank test
    /// inverted).
    #[serde(serialize_with = "known_ratio", deserialize_with = "known_ratio_de")]
    pub ci_low: Option<f64>,
    #[serde(serialize_with = "known_ratio", deserialize_with = "known_ratio_de")]
    pub ci_high: Option<f64>,
    /// Confidence level of the interval: 1 − alpha (0.95 unless corrected
    /// for several comparisons); lower when alpha is finer than the trials
    /// can reach (the interval is then the whole range of trial ratios).
    /// JSON: `ci_level_pct`, in percent.
    #[serde(
        rename = "ci_level_pct",
        serialize_with = "super::as_pct",
        deserialize_with = "super::from_pct"
    )]
    pub ci_level: f64,
    /// Two-sided exact permutation p-value of the rank-sum test.
    pub p_value: f64,
    pub verdict: Verdict,
}

/// A ratio, or docs/json.md's `{"unknown": reason}` where there is none.
fn known_ratio<S: serde::Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(x) => s.serialize_f64(*x),
        None => crate::host::Known::<f64>::unknown(
            "no ratio: the baseline has no trials or a median of 0, or a trial value is not a finite number >= 0",
        )
        .serialize(s),
    }
}

/// The inverse of [`known_ratio`]: `{"unknown": …}` is no ratio.
fn known_ratio_de<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let k = <crate::host::Known<f64> as serde::Deserialize>::deserialize(d)?;
    Ok(k.value().copied())
}

/// Compare `candidate` with `baseline` (trial values of one metric).
pub fn compare(
    baseline: &[f64],
    candidate: &[f64],
    direction: Direction,
    opts: &CompareOpts,
) -> Comparison {
    let mut rng = SmallRng::seed_from_u64(opts.seed);
    let p_value = rank_sum_p(baseline, candidate, &mut rng);
    let mb = median(baseline);
    let usable = |xs: &[f64]| xs.iter().all(|x| x.is_finite() && *x >= 0.0);
    if baseline.is_empty()
        || candidate.is_empty()
        || mb.is_nan()
        || mb <= 0.0
        || !usable(baseline)
        || !usable(candidate)
    {
        return Comparison {
            ratio: None,
            ci_low: None,
            ci_high: None,
            ci_level: 1.0 - opts.alpha,
            p_value,
            verdict: Verdict::NoSignificantDifference,
        };
    }
    let ratios = pairwise_ratios(baseline, candidate);
    let ratio = log_median_sorted(&ratios);
    let ci = rank_ci(&ratios, baseline.len(), candidate.len(), opts.alpha);
    let excludes_one = ci.low > 1.0 || ci.high < 1.0;
    let big_enough = (ratio - 1.0).abs() >= opts.min_effect;
    let verdict = if excludes_one && big_enough && p_value <= opts.alpha {
        let up = ratio > 1.0;
        match (up, direction) {
            (true, Direction::HigherIsBetter) | (false, Direction::LowerIsBetter) => {
                Verdict::Better
            }
            _ => Verdict::Worse,
        }
    } else {
        Verdict::NoSignificantDifference
    };
    Comparison {
        ratio: Some(ratio),
        ci_low: Some(ci.low),
        ci_high: Some(ci.high),
        ci_level: ci.level,
        p_value,
        verdict,
    }
}

/// Every candidate_j / baseline_i, sorted. A zero baseline trial (a trial
/// that moved nothing) gives f64::MAX against a non-zero candidate and 1
/// against a zero one, so that sorting and the order statistics stay finite.
fn pairwise_ratios(b: &[f64], c: &[f64]) -> Vec<f64> {
    let mut r: Vec<f64> = c
        .iter()
        .flat_map(|&y| {
            b.iter().map(move |&x| {
                if x > 0.0 {
                    y / x
                } else if y == 0.0 {
                    1.0
                } else {
                    f64::MAX
                }
            })
        })
        .collect();
    r.sort_by(f64::total_cmp);
    r
}

/// The median of sorted positive ratios on the log scale: for an even
/// count, the geometric mean of the middle two (so that swapping baseline
/// and candidate gives exactly 1/ratio).
fn log_median_sorted(r: &[f64]) -> f64 {
    let n = r.len();
    if n % 2 == 1 {
        return r[n / 2];
    }
    let (a, b) = (r[n / 2 - 1], r[n / 2]);
    if a > 0.0 && b > 0.0 && a < f64::MAX && b < f64::MAX {
        (a * b).sqrt()
    } else {
        a / 2.0 + b / 2.0
    }
}

/// A confidence interval of the ratio and its real level.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Interval {
    low: f64,
    high: f64,
    level: f64,
}

/// Moses' exact interval from the sorted pairwise ratios of `m` baseline
/// and `n` candidate trials (see the module doc): the ratios from the
/// (u* + 1)-th smallest to the (u* + 1)-th largest, u* the largest count
/// with 2·P(U ≤ u*) ≤ alpha under no difference. When no count qualifies
/// (alpha finer than the trials can give), the whole range, at its own
/// level 1 − 2·P(U = 0).
fn rank_ci(sorted: &[f64], m: usize, n: usize, alpha: f64) -> Interval {
    let total = sorted.len();
    let tail = lower_tail(m, n);
    // The same hair of slack as the sequential boundary's `crosses`, so
    // that a p-value equal to a look's level gives an interval that
    // excludes 1 as the test does.
    let within = |p: f64| 2.0 * p <= alpha * (1.0 + 1e-9);
    // u < total / 2: the centre's two-sided p is 1.
    let u_star = (0..total.div_ceil(2))
        .take_while(|&u| within(tail[u]))
        .last();
    match u_star {
        Some(u) => Interval {
            low: sorted[u],
            high: sorted[total - 1 - u],
            level: 1.0 - alpha,
        },
        None => Interval {
            low: sorted[0],
            high: sorted[total - 1],
            level: 1.0 - (2.0 * tail[0]).min(1.0),
        },
    }
}

/// P(U ≤ u) for u = 0..=m·n under no difference, no ties: exact from
/// [`u_null_counts`] up to [`EXACT_CI_PAIRS`] pairs, beyond that the normal
/// approximation with continuity correction (there the discreteness that
/// made the exact law necessary is gone).
fn lower_tail(m: usize, n: usize) -> Rc<Vec<f64>> {
    /// P(U ≤ u) for every u, by group sizes.
    type Tails = HashMap<(usize, usize), Rc<Vec<f64>>>;
    thread_local! {
        // A sweep asks for the same few (m, n) at every look and metric.
        static CACHE: RefCell<Tails> = Default::default();
    }
    CACHE.with(|c| {
        c.borrow_mut()
            .entry((m, n))
            .or_insert_with(|| Rc::new(lower_tail_uncached(m, n)))
            .clone()
    })
}

fn lower_tail_uncached(m: usize, n: usize) -> Vec<f64> {
    let total = m * n;
    if total <= EXACT_CI_PAIRS {
        let counts = u_null_counts(m, n);
        let all: f64 = counts.iter().sum();
        let mut acc = 0.0;
        counts
            .iter()
            .map(|c| {
                acc += c;
                (acc / all).min(1.0)
            })
            .collect()
    } else {
        let (mf, nf) = (m as f64, n as f64);
        let mu = mf * nf / 2.0;
        let sd = (mf * nf * (mf + nf + 1.0) / 12.0).sqrt();
        (0..=total)
            .map(|u| normal_cdf((u as f64 + 0.5 - mu) / sd))
            .collect()
    }
}

/// Largest m·n whose null law is computed exactly: 40 trials a side (a
/// sweep's most rounds) costs m·n·(m·n) ≈ 2.6 million additions.
const EXACT_CI_PAIRS: usize = 1600;

/// Φ(x) from erfc by the Numerical Recipes Chebyshev fit (|relative error|
/// < 1.2e-7): only the large-sample branch of [`lower_tail`] (and a test of
/// the sequential design) needs it, so not worth a dependency.
pub(crate) fn normal_cdf(x: f64) -> f64 {
    let z = -x / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.5 * z.abs());
    let y = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    let erfc = if z >= 0.0 { y } else { 2.0 - y };
    erfc / 2.0
}

/// Exact null distribution of the Mann–Whitney U for `m` against `n`
/// values without ties: the number of orderings with U = u, u = 0..=m·n.
/// f(m, n, u) = f(m − 1, n, u) + f(m, n − 1, u − m) (the largest value is
/// a baseline one, or a candidate above all m baseline values); counts up
/// to C(80, 40) < 1.1e23 lose nothing that matters in f64 (ratios only).
pub(crate) fn u_null_counts(m: usize, n: usize) -> Vec<f64> {
    let max_u = m * n;
    // row[j] = distribution for (i, j) with i the baseline count so far.
    let mut row: Vec<Vec<f64>> = (0..=n)
        .map(|_| {
            let mut v = vec![0.0; max_u + 1];
            v[0] = 1.0;
            v
        })
        .collect(); // i = 0: U = 0 for every j
    for i in 1..=m {
        let mut next: Vec<Vec<f64>> = Vec::with_capacity(n + 1);
        let mut v0 = vec![0.0; max_u + 1];
        v0[0] = 1.0; // j = 0
        next.push(v0);
        for j in 1..=n {
            let mut v = vec![0.0; max_u + 1];
            for u in 0..=max_u {
                let a = row[j][u]; // largest is a baseline value
                let b = if u >= i { next[j - 1][u - i] } else { 0.0 };
                v[u] = a + b;
            }
            next.push(v);
        }
        row = next;
    }
    row.swap_remove(n)
}

/// Largest number of splits enumerated exactly; beyond it, Monte Carlo.
const EXACT_LIMIT: u64 = 200_000;
const MONTE_CARLO_DRAWS: usize = 20_000;

/// Two-sided p-value of the rank-sum statistic under random assignment of
/// the pooled values to the two groups: exact enumeration of all C(N, m)
/// splits when feasible (C(10,5) = 252 for 5 rounds), else a seeded Monte
/// Carlo estimate (p = (k+1)/(draws+1), which keeps the test valid).
pub fn rank_sum_p(a: &[f64], b: &[f64], rng: &mut SmallRng) -> f64 {
    let (n, m) = (a.len(), b.len());
    if n == 0 || m == 0 {
        return 1.0;
    }
    // Without ties every split's rank sum is U + m(m + 1)/2, so the
    // enumeration equals the exact null law of U, computed once per
    // (n, m) and cached: a sequential sweep asks at every look, and C(20,
    // 10) splits at round 10 cost far more than the table.
    let mut pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    pooled.sort_by(f64::total_cmp);
    let tied = pooled.windows(2).any(|w| w[0] == w[1]);
    if !tied && n * m <= EXACT_CI_PAIRS {
        let u: usize = b.iter().map(|y| a.iter().filter(|x| y > *x).count()).sum();
        let low = u.min(n * m - u);
        if 2 * low == n * m {
            return 1.0;
        }
        return (2.0 * lower_tail(n, m)[low]).min(1.0);
    }
    rank_sum_p_by_splits(a, b, rng)
}

/// [`rank_sum_p`] by its definition: every split of the pooled midranks
/// (or a Monte Carlo sample of them), which also handles ties.
fn rank_sum_p_by_splits(a: &[f64], b: &[f64], rng: &mut SmallRng) -> f64 {
    let (n, m) = (a.len(), b.len());
    let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    let ranks = midranks(&pooled);
    let total = n + m;
    let expect = m as f64 * (total as f64 + 1.0) / 2.0;
    let observed: f64 = ranks[n..].iter().sum();
    let d_obs = (observed - expect).abs() - 1e-9;
    let extreme = |s: f64| (s - expect).abs() >= d_obs;

    if total <= 63 && binomial(total as u64, m as u64) <= EXACT_LIMIT {
        // Gosper's hack: every m-bit subset of `total` bits, in order.
        let mut mask: u64 = (1u64 << m) - 1;
        let limit: u64 = 1u64 << total;
        let (mut hits, mut all) = (0u64, 0u64);
        while mask < limit {
            let mut s = 0.0;
            let mut bits = mask;
            while bits != 0 {
                s += ranks[bits.trailing_zeros() as usize];
                bits &= bits - 1;
            }
            hits += extreme(s) as u64;
            all += 1;
            let c = mask & mask.wrapping_neg();
            let r = mask + c;
            mask = (((r ^ mask) >> 2) / c) | r;
        }
        hits as f64 / all as f64
    } else {
        let mut idx: Vec<usize> = (0..total).collect();
        let mut hits = 0usize;
        for _ in 0..MONTE_CARLO_DRAWS {
            idx.shuffle(rng);
            let s: f64 = idx[..m].iter().map(|&i| ranks[i]).sum();
            hits += extreme(s) as usize;
        }
        (hits + 1) as f64 / (MONTE_CARLO_DRAWS + 1) as f64
    }
}

/// Ranks 1..=N, ties sharing the mean of their positions.
fn midranks(xs: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..xs.len()).collect();
    idx.sort_by(|&i, &j| xs[i].total_cmp(&xs[j]));
    let mut ranks = vec![0.0; xs.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && xs[idx[j + 1]] == xs[idx[i]] {
            j += 1;
        }
        let r = (i + j) as f64 / 2.0 + 1.0;
        for &k in &idx[i..=j] {
            ranks[k] = r;
        }
        i = j + 1;
    }
    ranks
}

fn binomial(n: u64, k: u64) -> u64 {
    let k = k.min(n - k);
    let mut r: u64 = 1;
    for i in 0..k {
        r = match r.checked_mul(n - i) {
            Some(v) => v / (i + 1),
            None => return u64::MAX,
        };
    }
    r
}

#[cfg(test)]
mod tests {
    use super::super::tests::normal;
    use super::*;

    fn sample(rng: &mut SmallRng, n: usize, center: f64, noise: f64) -> Vec<f64> {
        (0..n)
            .map(|_| center * (1.0 + noise * normal(rng)))
            .collect()
    }

    #[test]
    fn exact_rank_test_matches_known_values() {
        let mut rng = SmallRng::seed_from_u64(1);
        // Complete separation, 5 vs 5: only the observed split and its mirror
        // are as extreme → 2/252.
        let a = [1.0, 2.0, 3.0, 4.0, 5.0];
        let b = [6.0, 7.0, 8.0, 9.0, 10.0];
        let p = rank_sum_p(&a, &b, &mut rng);
        assert!((p - 2.0 / 252.0).abs() < 1e-12, "{p}");
        // Identical groups: p = 1.
        assert_eq!(rank_sum_p(&[1.0; 5], &[1.0; 5], &mut rng), 1.0);
        // Interleaved: not significant.
        assert!(
            rank_sum_p(
                &[1.0, 3.0, 5.0, 7.0, 9.0],
                &[2.0, 4.0, 6.0, 8.0, 10.0],
                &mut rng
            ) > 0.5
        );
        assert_eq!(midranks(&[10.0, 20.0, 10.0]), vec![1.5, 3.0, 1.5]);
        assert_eq!(binomial(10, 5), 252);
    }

    /// The cached null law gives the enumeration's p-value on tie-free
    /// data, for equal and unequal groups.
    #[test]
    fn null_law_shortcut_equals_enumeration() {
        let mut rng = SmallRng::seed_from_u64(5);
        for seed in 0..200u64 {
            let mut g = SmallRng::seed_from_u64(60_000 + seed);
            let (n, m) = (3 + seed as usize % 6, 3 + (seed as usize / 6) % 6);
            let shift = 1.0 + 0.05 * (seed % 4) as f64;
            let a = sample(&mut g, n, 1000.0, 0.05);
            let b = sample(&mut g, m, 1000.0 * shift, 0.05);
            let fast = rank_sum_p(&a, &b, &mut rng);
            let slow = rank_sum_p_by_splits(&a, &b, &mut rng);
            assert!((fast - slow).abs() < 1e-12, "{n} vs {m}: {fast} {slow}");
        }
    }

    #[test]
    fn monte_carlo_path_agrees_with_separation() {
        // 20 vs 20 (C(40,20) ≫ limit) with complete separation: p tiny.
        let mut rng = SmallRng::seed_from_u64(2);
        let a: Vec<f64> = (0..20).map(f64::from).collect();
        let b: Vec<f64> = (100..120).map(f64::from).collect();
        let p = rank_sum_p(&a, &b, &mut rng);
        assert!(p < 0.001, "{p}");
    }

    #[test]
    fn known_effect_is_found_in_both_directions() {
        // +20% with 5% noise, 5 trials each: must be found (almost) always.
        let mut found_up = 0;
        let mut found_lat = 0;
        for seed in 0..100u64 {
            let mut rng = SmallRng::seed_from_u64(seed);
            let base = sample(&mut rng, 5, 1000.0, 0.05);
            let cand = sample(&mut rng, 5, 1200.0, 0.05);
            let opts = CompareOpts {
                seed,
                ..Default::default()
            };
            let c = compare(&base, &cand, Direction::HigherIsBetter, &opts);
            if c.verdict == Verdict::Better {
                found_up += 1;
            }
            // The same numbers read as latencies: 20% higher is worse.
            let l = compare(&base, &cand, Direction::LowerIsBetter, &opts);
            if l.verdict == Verdict::Worse {
                found_lat += 1;
            }
            let r = c.ratio.unwrap();
            assert!(r > 1.0 && c.ci_low.unwrap() <= r && r <= c.ci_high.unwrap());
        }
        assert!(found_up >= 95, "found {found_up}/100");
        // Corrected for 4 workloads (alpha 0.0125) only complete separation
        // counts at R = 5: measured 85/100 (the price of a clean A/A run).
        let mut found_corrected = 0;
        for seed in 0..100u64 {
            let mut rng = SmallRng::seed_from_u64(seed);
            let base = sample(&mut rng, 5, 1000.0, 0.05);
            let cand = sample(&mut rng, 5, 1200.0, 0.05);
            let opts = CompareOpts {
                seed,
                alpha: 0.05 / 4.0,
                ..Default::default()
            };
            let c = compare(&base, &cand, Direction::HigherIsBetter, &opts);
            found_corrected += (c.verdict == Verdict::Better) as u32;
            assert!((c.ci_level - 0.9875).abs() < 1e-12);
        }
        assert!(found_corrected >= 80, "found {found_corrected}/100");
        assert!(found_lat >= 95, "found {found_lat}/100");
    }

    #[test]
    fn no_effect_false_positives_at_most_5_percent() {
        for rounds in [5, 4, 8] {
            no_effect_fp_bound(rounds, 0.05);
        }
        // Noise large relative to min-effect must not change the bound.
        no_effect_fp_bound(5, 0.20);
    }

    fn no_effect_fp_bound(rounds: usize, noise: f64) {
        let seeds = 400u64;
        let mut fp = 0;
        for seed in 0..seeds {
            let mut rng = SmallRng::seed_from_u64(10_000 + seed);
            let base = sample(&mut rng, rounds, 1000.0, noise);
            let cand = sample(&mut rng, rounds, 1000.0, noise);
            let opts = CompareOpts {
                seed,
                ..Default::default()
            };
            if compare(&base, &cand, Direction::HigherIsBetter, &opts).verdict
                != Verdict::NoSignificantDifference
            {
                fp += 1;
            }
        }
        assert!(
            fp as f64 <= 0.05 * seeds as f64,
            "R={rounds} noise={noise}: {fp}/{seeds} false positives"
        );
    }

    #[test]
    fn small_effect_below_min_effect_is_not_called() {
        // +2% with almost no noise is real but below the 3% minimum.
        let base = [1000.0, 1000.5, 999.5, 1000.2, 999.8];
        let cand: Vec<f64> = base.iter().map(|x| x * 1.02).collect();
        let c = compare(&base, &cand, Direction::HigherIsBetter, &Default::default());
        assert!(c.ci_low.unwrap() > 1.0, "the CI does exclude 1");
        assert_eq!(c.verdict, Verdict::NoSignificantDifference);
        // With a 1% minimum the same data is "better".
        let opts = CompareOpts {
            min_effect: 0.01,
            ..Default::default()
        };
        let c = compare(&base, &cand, Direction::HigherIsBetter, &opts);
        assert_eq!(c.verdict, Verdict::Better);
    }

    #[test]
    fn zero_baseline_has_no_ratio() {
        let c = compare(
            &[0.0; 5],
            &[1.0; 5],
            Direction::LowerIsBetter,
            &Default::default(),
        );
        assert!(c.ratio.is_none());
        assert_eq!(c.verdict, Verdict::NoSignificantDifference);
        // JSON: never null, a reason instead; the level in percent.
        let j = serde_json::to_value(&c).unwrap();
        assert!(j["ratio"]["unknown"].is_string(), "{j}");
        assert_eq!(j["ci_level_pct"], 95.0);
    }

    /// Rules 1 and 2 of the module doc agree: on values without ties the
    /// interval excludes 1 exactly when p ≤ alpha, at the fixed levels, at
    /// the sequential design's levels and for unequal group sizes, whenever
    /// alpha is attainable at those sizes.
    #[test]
    fn interval_excludes_one_exactly_when_the_test_rejects() {
        let seq = super::super::sequential::Boundaries::new(0.05, 8);
        let mut levels = vec![0.05, 0.0125, 0.05 / 12.0];
        levels.extend(seq.looks.iter().map(|l| l.level).filter(|&l| l > 0.0));
        let (mut rejected, mut kept) = (0, 0);
        for seed in 0..300u64 {
            let mut rng = SmallRng::seed_from_u64(40_000 + seed);
            let (m, n) = (4 + seed as usize % 7, 4 + (seed as usize / 7) % 7);
            let shift = [1.0, 1.05, 1.2][seed as usize % 3];
            let base = sample(&mut rng, m, 1000.0, 0.05);
            let cand = sample(&mut rng, n, 1000.0 * shift, 0.05);
            for &alpha in &levels {
                let opts = CompareOpts {
                    alpha,
                    min_effect: 0.0,
                    seed,
                    ..Default::default()
                };
                let c = compare(&base, &cand, Direction::HigherIsBetter, &opts);
                let (lo, hi) = (c.ci_low.unwrap(), c.ci_high.unwrap());
                let excludes = lo > 1.0 || hi < 1.0;
                let rejects = c.p_value <= alpha * (1.0 + 1e-9);
                if c.ci_level < 1.0 - alpha - 1e-12 {
                    // Alpha finer than these sizes can reach: the whole
                    // range at its own level, and never a verdict.
                    assert!(!rejects && c.verdict == Verdict::NoSignificantDifference);
                    continue;
                }
                assert_eq!(
                    excludes, rejects,
                    "m {m} n {n} alpha {alpha}: p {} CI {lo}–{hi}",
                    c.p_value
                );
                assert_eq!(c.verdict != Verdict::NoSignificantDifference, rejects);
                if rejects {
                    rejected += 1
                } else {
                    kept += 1
                }
            }
        }
        // Both sides of the equivalence were exercised.
        assert!(rejected > 100 && kept > 100, "{rejected} / {kept}");
    }

    /// The interval's promise: for a multiplicative effect it covers the
    /// true ratio in at least 1 − alpha of runs (up to 2.58 standard errors
    /// of this check's 2000 runs).
    #[test]
    fn interval_covers_the_true_ratio() {
        for (rounds, alpha) in [(4, 0.05), (5, 0.05), (8, 0.0148), (6, 0.0125)] {
            let runs = 2000u64;
            let mut covered = 0;
            for seed in 0..runs {
                let mut rng = SmallRng::seed_from_u64(50_000 + seed);
                let lognormal = |rng: &mut SmallRng, c: f64| c * (0.1 * normal(rng)).exp();
                let base: Vec<f64> = (0..rounds).map(|_| lognormal(&mut rng, 1000.0)).collect();
                let cand: Vec<f64> = (0..rounds).map(|_| lognormal(&mut rng, 1300.0)).collect();
                let opts = CompareOpts {
                    alpha,
                    seed,
                    ..Default::default()
                };
                let c = compare(&base, &cand, Direction::HigherIsBetter, &opts);
                covered += (c.ci_low.unwrap() <= 1.3 && 1.3 <= c.ci_high.unwrap()) as u32;
                assert!((c.ci_level - (1.0 - alpha)).abs() < 1e-12);
            }
            let rate = covered as f64 / runs as f64;
            let se = (alpha * (1.0 - alpha) / runs as f64).sqrt();
            eprintln!("R={rounds} alpha {alpha}: coverage {rate:.4}");
            assert!(rate >= 1.0 - alpha - 2.58 * se, "R={rounds}: {rate}");
        }
    }

    /// Alpha finer than the trials can give (4 vs 4 at 0.0125: the smallest
    /// p is 2/70): the whole range, at its real level, and no verdict even
    /// for complete separation.
    #[test]
    fn unattainable_level_gives_the_whole_range_at_its_real_level() {
        let base = [100.0, 101.0, 102.0, 103.0];
        let cand = [200.0, 201.0, 202.0, 204.0];
        let opts = CompareOpts {
            alpha: 0.0125,
            ..Default::default()
        };
        let c = compare(&base, &cand, Direction::HigherIsBetter, &opts);
        assert!((c.ci_low.unwrap() - 200.0 / 103.0).abs() < 1e-12);
        assert!((c.ci_high.unwrap() - 204.0 / 100.0).abs() < 1e-12);
        assert!(
            (c.ci_level - (1.0 - 2.0 / 70.0)).abs() < 1e-12,
            "{}",
            c.ci_level
        );
        assert_eq!(c.verdict, Verdict::NoSignificantDifference);
        // At 0.05 the same data is "better", with the same p.
        let c = compare(&base, &cand, Direction::HigherIsBetter, &Default::default());
        assert_eq!(c.verdict, Verdict::Better);
        assert!((c.p_value - 2.0 / 70.0).abs() < 1e-12);
    }

    /// The estimate is the median of all trial ratios on the log scale:
    /// one wild trial moves it little, and swapping the sides inverts it.
    #[test]
    fn hodges_lehmann_ratio_is_robust_and_symmetric() {
        let base = [100.0, 102.0, 98.0, 101.0, 99.0];
        let cand = [150.0, 153.0, 147.0, 151.0, 5000.0];
        let o = CompareOpts::default();
        let c = compare(&base, &cand, Direction::HigherIsBetter, &o);
        let r = c.ratio.unwrap();
        assert!((1.45..1.6).contains(&r), "{r}");
        let back = compare(&cand, &base, Direction::HigherIsBetter, &o);
        assert!((back.ratio.unwrap() * r - 1.0).abs() < 1e-12);
        assert!((back.ci_low.unwrap() * c.ci_high.unwrap() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn null_law_of_u_for_unequal_groups_and_the_large_sample_branch() {
        // 2 vs 3: C(5, 2) = 10 orderings.
        assert_eq!(u_null_counts(2, 3), vec![1.0, 1.0, 2.0, 2.0, 2.0, 1.0, 1.0]);
        assert_eq!(u_null_counts(3, 2), u_null_counts(2, 3));
        // Past the exact limit the normal approximation takes over; at
        // 41 vs 41 it is within 0.1 percentage point of the exact tail
        // where the levels live.
        let exact = u_null_counts(41, 41);
        let all: f64 = exact.iter().sum();
        let approx = lower_tail(41, 41);
        let mut acc = 0.0;
        for (u, c) in exact.iter().enumerate() {
            acc += c;
            let e = acc / all;
            if (0.0005..0.05).contains(&e) {
                assert!((approx[u] - e).abs() < 1e-3, "u {u}: {} vs {e}", approx[u]);
            }
        }
    }
}
