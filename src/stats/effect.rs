//! The words every before/after shows (`prove`, tune's before/after,
//! `report A.json B.json`): one of `faster`, `slower`, `no measurable
//! difference`, or `too few rounds`, always beside the ratio and its
//! interval. Derived from [`super::compare`]'s verdict, so the rule
//! behind the word is the one rule of `stats::compare`.
//!
//! `too few rounds` is said up front, not after the fact: when the exact
//! rank test cannot reach `alpha` with the rounds each side has (4 vs 4
//! gives at best p = 2/70 = 0.029, above a 0.025 level), no verdict was
//! possible, and "no difference" would be a claim the data cannot make.

use super::compare::{Comparison, Direction, Verdict};
use serde::{Deserialize, Serialize};

/// What a comparison says, in the words a report shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// Better with the change: more throughput, or lower latency.
    Faster,
    /// Worse with the change.
    Slower,
    /// The rule was applicable and found no difference of `min_effect` or
    /// more that the interval supports.
    NoDifference,
    /// The rounds each side has cannot reach the significance level: no
    /// verdict was possible either way.
    TooFewRounds,
}

impl Effect {
    /// As shown in text, markdown and HTML.
    pub fn words(self) -> &'static str {
        match self {
            Effect::Faster => "faster",
            Effect::Slower => "slower",
            Effect::NoDifference => "no measurable difference",
            Effect::TooFewRounds => "too few rounds",
        }
    }

    /// Whether the word claims a difference (colour only these).
    pub fn claims(self) -> bool {
        matches!(self, Effect::Faster | Effect::Slower)
    }
}

/// The smallest two-sided p-value the exact rank-sum test can give with
/// `n` and `m` trials: 2 / C(n + m, n) (1 when either side is empty).
pub fn smallest_p(n: usize, m: usize) -> f64 {
    if n == 0 || m == 0 {
        return 1.0;
    }
    // C(n+m, n) as f64, multiplicatively: exact enough for the sizes here
    // (a few dozen rounds) and no overflow.
    let k = n.min(m);
    let mut c = 1.0f64;
    for i in 0..k {
        c = c * (n + m - i) as f64 / (i + 1) as f64;
    }
    (2.0 / c).min(1.0)
}

/// Whether `n` vs `m` trials can reach a verdict at level `alpha`.
pub fn reachable(n: usize, m: usize, alpha: f64) -> bool {
    smallest_p(n, m) <= alpha
}

/// The word for `c`, a comparison of `n` baseline trials with `m`
/// candidate trials at level `alpha`. The direction is the one `c` was
/// computed with; `better` reads as `faster` for throughput and latency
/// alike (lower latency is faster).
pub fn effect(c: &Comparison, n: usize, m: usize, alpha: f64) -> Effect {
    if !reachable(n, m, alpha) {
        return Effect::TooFewRounds;
    }
    match c.verdict {
        Verdict::Better => Effect::Faster,
        Verdict::Worse => Effect::Slower,
        Verdict::NoSignificantDifference => Effect::NoDifference,
    }
}

/// Compare and name the effect in one call: `stats::compare` at `opts`,
/// then [`effect`].
pub fn compare_effect(
    baseline: &[f64],
    candidate: &[f64],
    direction: Direction,
    opts: &super::CompareOpts,
) -> (Comparison, Effect) {
    let c = super::compare(baseline, candidate, direction, opts);
    let e = effect(&c, baseline.len(), candidate.len(), opts.alpha);
    (c, e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::CompareOpts;

    #[test]
    fn smallest_p_matches_the_exact_test() {
        assert!((smallest_p(4, 4) - 2.0 / 70.0).abs() < 1e-12);
        assert!((smallest_p(5, 5) - 2.0 / 252.0).abs() < 1e-12);
        assert!((smallest_p(3, 3) - 0.1).abs() < 1e-12);
        assert_eq!(smallest_p(0, 4), 1.0);
        // Agrees with the sequential module's equal-sizes formula.
        for r in 1..10u32 {
            let a = smallest_p(r as usize, r as usize);
            let b = crate::stats::sequential::smallest_p(r);
            assert!((a - b).abs() < 1e-9, "r={r}: {a} vs {b}");
        }
    }

    #[test]
    fn four_rounds_cannot_reach_a_corrected_level() {
        let base = [100.0, 101.0, 99.0, 100.5];
        let cand = [200.0, 201.0, 199.0, 200.5];
        let opts = CompareOpts {
            alpha: 0.025,
            ..Default::default()
        };
        let (_, e) = compare_effect(&base, &cand, Direction::HigherIsBetter, &opts);
        assert_eq!(e, Effect::TooFewRounds);
        let opts = CompareOpts {
            alpha: 0.05,
            ..Default::default()
        };
        let (c, e) = compare_effect(&base, &cand, Direction::HigherIsBetter, &opts);
        assert_eq!(e, Effect::Faster, "{c:?}");
        let (_, e) = compare_effect(&base, &cand, Direction::LowerIsBetter, &opts);
        assert_eq!(e, Effect::Slower);
        let (_, e) = compare_effect(&base, &base, Direction::HigherIsBetter, &opts);
        assert_eq!(e, Effect::NoDifference);
        assert!(!Effect::NoDifference.claims() && Effect::Faster.claims());
    }

    #[test]
    fn json_words_are_the_documented_ones() {
        let s = serde_json::to_string(&[
            Effect::Faster,
            Effect::Slower,
            Effect::NoDifference,
            Effect::TooFewRounds,
        ])
        .unwrap();
        assert_eq!(s, r#"["faster","slower","no_difference","too_few_rounds"]"#);
    }
}
