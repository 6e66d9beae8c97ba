//! Successive halving: every candidate gets one short trial next to the
//! current settings, the better half goes on with twice the rounds, and so
//! on until one is left for the proof. The plan is fitted to a number of
//! trials; the ranking is each candidate's median ratio to the current
//! settings measured in the same rounds (so drift of the sandbox over the
//! run cancels out of the ratio).

/// Each rung keeps this share of its candidates (1/η, η = 2).
pub const ETA: usize = 2;
/// Most candidates the first rung draws.
pub const MAX_CANDIDATES: usize = 24;

/// One rung: how many candidates run, and how many rounds each (every
/// round also runs the current settings once).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rung {
    pub candidates: usize,
    pub rounds: u32,
}

impl Rung {
    /// Trials the rung takes: its candidates and `current`, each round.
    pub fn trials(&self) -> usize {
        (self.candidates + 1) * self.rounds as usize
    }
}

/// The rungs for `n` first candidates: n, n/2, … down to 2 (the last rung
/// picks the one the proof confirms), rounds 1, 2, 4, ….
pub fn rungs(n: usize) -> Vec<Rung> {
    let mut out = Vec::new();
    let (mut c, mut r) = (n, 1u32);
    while c >= 2 {
        out.push(Rung {
            candidates: c,
            rounds: r,
        });
        c = c.div_ceil(ETA);
        if c < 2 {
            break;
        }
        r *= ETA as u32;
    }
    if out.is_empty() && n == 1 {
        out.push(Rung {
            candidates: 1,
            rounds: 1,
        });
    }
    out
}

/// Trials all of [`rungs`]`(n)` take.
pub fn cost(n: usize) -> usize {
    rungs(n).iter().map(Rung::trials).sum()
}

/// Rounds all of [`rungs`]`(n)` take.
pub fn rounds(n: usize) -> u32 {
    rungs(n).iter().map(|r| r.rounds).sum()
}

/// The most first candidates (at most `grid` and [`MAX_CANDIDATES`])
/// whose rungs fit in `secs`, each trial taking `per_trial` and each round
/// `per_round` more (the sandbox's restarts between the groups of
/// candidates that share their restart knobs' levels); None when not even
/// two fit.
pub fn fit(secs: f64, per_trial: f64, per_round: f64, grid: usize) -> Option<usize> {
    let top = grid.min(MAX_CANDIDATES);
    (2..=top)
        .rev()
        .find(|&n| cost(n) as f64 * per_trial + f64::from(rounds(n)) * per_round <= secs)
}

/// The order of one round's arms (`keys[i]`: arm i's restart levels),
/// given a random order of the arms: arms sharing their restart levels
/// run together, so the sandbox restarts once per group and not once per
/// arm; the groups keep the order their first arms had in the random
/// order, except that the group of the levels the sandbox runs with
/// (`running`) goes first (one restart fewer). Within a group, the random
/// order stands.
pub fn batched<K: PartialEq>(keys: &[K], random: &[usize], running: &K) -> Vec<usize> {
    let mut groups: Vec<&K> = Vec::new();
    for &i in random {
        if !groups.contains(&&keys[i]) {
            groups.push(&keys[i]);
        }
    }
    if let Some(at) = groups.iter().position(|k| *k == running) {
        let k = groups.remove(at);
        groups.insert(0, k);
    }
    groups
        .iter()
        .flat_map(|g| random.iter().copied().filter(|&i| &keys[i] == *g))
        .collect()
}

/// Median of the per-round ratios candidate / current (rounds in which
/// both ran); None without any.
pub fn score(pairs: &[(f64, f64)]) -> Option<f64> {
    let r: Vec<f64> = pairs
        .iter()
        .filter(|(c, b)| *b > 0.0 && c.is_finite())
        .map(|(c, b)| c / b)
        .collect();
    (!r.is_empty()).then(|| crate::stats::median(&r))
}

/// The `keep` best of `scores` (label, score), best first; ties keep the
/// earlier one.
pub fn survivors(scores: &[(String, f64)], keep: usize) -> Vec<String> {
    let mut s: Vec<&(String, f64)> = scores.iter().collect();
    s.sort_by(|a, b| b.1.total_cmp(&a.1));
    s.into_iter().take(keep).map(|(l, _)| l.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rungs_halve_candidates_and_double_rounds() {
        assert_eq!(
            rungs(8),
            vec![
                Rung {
                    candidates: 8,
                    rounds: 1
                },
                Rung {
                    candidates: 4,
                    rounds: 2
                },
                Rung {
                    candidates: 2,
                    rounds: 4
                },
            ]
        );
        assert_eq!(cost(8), 9 + 10 + 12);
        assert_eq!(rungs(5).len(), 3);
        assert_eq!(cost(2), 3);
    }

    #[test]
    fn fit_takes_the_most_candidates_that_fit() {
        // One second a trial, nothing a round: trials.
        assert_eq!(fit(31.0, 1.0, 0.0, 100), Some(8));
        assert_eq!(fit(30.0, 1.0, 0.0, 100), Some(7));
        assert_eq!(fit(2.0, 1.0, 0.0, 100), None);
        assert_eq!(fit(1000.0, 1.0, 0.0, 5), Some(5));
        // rungs(8): 31 trials in 7 rounds; rungs(7): 30 in 7.
        assert_eq!(rounds(8), 7);
        assert_eq!(fit(31.0 * 3.0 + 7.0 * 10.0, 3.0, 10.0, 100), Some(8));
        assert_eq!(fit(31.0 * 3.0 + 7.0 * 10.0 - 1.0, 3.0, 10.0, 100), Some(7));
    }

    #[test]
    fn batched_rounds_restart_once_per_group_running_group_first() {
        // Arms 0..6; restart levels a/b/c; random order 4 1 5 0 3 2.
        let keys = ["a", "b", "a", "c", "b", "a"];
        let random = [4, 1, 5, 0, 3, 2];
        let order = batched(&keys, &random, &"a");
        assert_eq!(order, vec![5, 0, 2, 4, 1, 3]);
        let switches = order
            .windows(2)
            .filter(|w| keys[w[0]] != keys[w[1]])
            .count();
        assert_eq!(switches, 2, "one restart per group change");
        // Running levels none of the arms have: the random group order.
        assert_eq!(batched(&keys, &random, &"z"), vec![4, 1, 5, 0, 2, 3]);
        // One group: the random order itself.
        assert_eq!(batched(&["a"; 3], &[2, 0, 1], &"a"), vec![2, 0, 1]);
    }

    #[test]
    fn scores_are_median_ratios_and_survivors_the_best() {
        assert_eq!(score(&[(2.0, 1.0), (3.0, 1.0), (10.0, 1.0)]), Some(3.0));
        assert_eq!(score(&[(2.0, 0.0)]), None);
        let s = vec![("a".to_string(), 1.1), ("b".into(), 2.0), ("c".into(), 0.9)];
        assert_eq!(survivors(&s, 2), vec!["b", "a"]);
    }
}
