//! The group-sequential design's state machine: look after each round,
//! freeze what crossed its boundary, stop when the answer is known or
//! settled.

use super::super::options::Objective;
use super::super::plan::Candidate;
use super::compare::{pairwise_alpha, pairwise_at, verdicts_at, Reached, WorkloadVerdict};
use super::veto::starves_alone;
use crate::stats::sequential::Boundaries;
use crate::stats::{CompareOpts, Verdict};
use crate::trial::trials::Trial;

/// A group-sequential sweep's verdicts, look by look (see
/// [`crate::stats::sequential`] for the boundaries). A comparison that
/// crosses its boundary at a look keeps that verdict, computed on the
/// rounds up to that look; the others are tested again at the next look.
/// The sweep stops when every comparison the recommendation needs has
/// crossed: the verdicts against the current setting, or with `--choose`
/// and an unmeasured current setting, the pairwise ones.
///
/// It also stops when **the answer is settled**: no candidate can become
/// the recommendation whatever the remaining rounds measure, so they could
/// only refine verdicts nobody acts on (a futility stop, in the language of
/// group-sequential trials). A candidate is out when a verdict it needs
/// crossed against it (worse than the current setting on a workload, or
/// worse than another candidate in a `--choose` run: crossed verdicts are
/// kept), or when the stall veto of [`super::super::recommend`] holds: it
/// stalled a direction in a window where the setting it would replace
/// never did. Such a stop can only keep what the host runs, so it adds no
/// false change and the A/A bound holds; what it gives up is the case where
/// the current setting stalls in a later round and lifts the veto (0 of
/// 334 mq-deadline windows starved on this VM's mixed workload,
/// bench/RESULTS.md 2026-11-27 02:22, 05:17 and 05:54; its longest read
/// stayed under the 500 ms limit in all 08:51 and 09:10 windows). Measured why it is needed: on days the disk stalls reads
/// under `none` in about one window in three and serves them 10× faster
/// than mq-deadline in the others, the rank test sees a mixture and never
/// crosses, and every sequential sweep ran to its budget to keep
/// mq-deadline through the veto (bench/RESULTS.md 2026-11-27 02:22). The
/// stop waits for a look at which a verdict could cross (`first_look`), so
/// it is never earlier than a clear difference could be.
///
/// Multiplicity across workloads and settings is as in the fixed design:
/// each comparison's sequential test runs at alpha / W ([`verdicts`]) or
/// [`pairwise_alpha`] ([`pairwise`]), and the spending bounds each one's
/// error over all looks, so the union bound over comparisons holds as
/// before.
#[derive(Debug, Clone)]
pub struct Sequential {
    pub bounds: Boundaries,
    pub pairwise_bounds: Option<Boundaries>,
    /// The recommendation rests on `pairwise` (else on `verdicts`).
    pub needs_pairwise: bool,
    pub verdicts: Vec<WorkloadVerdict>,
    pub pairwise: Vec<WorkloadVerdict>,
    pub rounds_run: u32,
    /// Why the sweep stopped on a settled answer (see above); None when it
    /// stopped on crossed verdicts, or ran to the budget.
    pub settled: Option<String>,
}

impl Sequential {
    /// Boundaries for up to `max_rounds` rounds at the fixed design's
    /// alphas; `pairwise` with `--choose` and an unmeasured current
    /// setting.
    pub fn new(
        alpha: f64,
        workloads: usize,
        settings: usize,
        max_rounds: u32,
        pairwise: bool,
    ) -> Sequential {
        Sequential {
            bounds: Boundaries::new(alpha / workloads.max(1) as f64, max_rounds),
            pairwise_bounds: pairwise
                .then(|| Boundaries::new(pairwise_alpha(alpha, workloads, settings), max_rounds)),
            needs_pairwise: pairwise,
            verdicts: Vec::new(),
            pairwise: Vec::new(),
            rounds_run: 0,
            settled: None,
        }
    }

    pub fn max_rounds(&self) -> u32 {
        self.bounds.max_rounds
    }

    /// Look after `round` rounds (1-based) of `trials`; true when every
    /// comparison the recommendation needs has crossed its boundary (the
    /// sweep may stop).
    #[allow(clippy::too_many_arguments)]
    pub fn look(
        &mut self,
        trials: &[Trial],
        cands: &[Candidate],
        reference: usize,
        workloads: &[String],
        objective: Objective,
        opts: &CompareOpts,
        round: u32,
    ) -> bool {
        self.rounds_run = round;
        let last = round >= self.max_rounds();
        let v = &self.bounds;
        if v.level(round) > 0.0 || last {
            let fresh =
                |o: &CompareOpts| verdicts_at(trials, cands, reference, workloads, objective, o);
            merge(&mut self.verdicts, v, round, opts, fresh);
        }
        if let Some(b) = &self.pairwise_bounds {
            if b.level(round) > 0.0 || last {
                let fresh = |o: &CompareOpts| pairwise_at(trials, cands, workloads, objective, o);
                merge(&mut self.pairwise, b, round, opts, fresh);
            }
        }
        let needed = if self.needs_pairwise {
            &self.pairwise
        } else {
            &self.verdicts
        };
        if !needed.is_empty()
            && needed
                .iter()
                .all(|v| v.sequential.is_some_and(|r| r.crossed))
        {
            return true;
        }
        let could_cross = match (&self.pairwise_bounds, self.needs_pairwise) {
            (Some(b), true) => b.level(round) > 0.0,
            _ => v.level(round) > 0.0,
        };
        if could_cross && !last {
            self.settled = if self.needs_pairwise {
                settled_pairwise(&self.pairwise, trials, cands, objective)
            } else {
                settled_measured(&self.verdicts, trials, cands, reference, objective)
            };
        }
        self.settled.is_some()
    }

    /// The verdicts to report: crossed ones as reached, the others from the
    /// last look.
    pub fn finish(mut self) -> Sequential {
        let all = self.rounds_run >= self.max_rounds();
        for v in self.verdicts.iter_mut().chain(self.pairwise.iter_mut()) {
            if let Some(r) = v.sequential.as_mut() {
                if !r.crossed {
                    r.round = self.rounds_run;
                    r.ran_to_budget = all;
                }
            }
        }
        self
    }
}

/// Crossed verdicts of `verdicts` (the kept ones).
fn crossed(verdicts: &[WorkloadVerdict]) -> impl Iterator<Item = &WorkloadVerdict> {
    verdicts
        .iter()
        .filter(|v| v.sequential.is_some_and(|r| r.crossed))
}

/// The current setting (`cands[base]`) was measured: settled when every
/// candidate with another setting is out (see [`Sequential`]); why, one
/// clause per candidate. None while any can still qualify, or when no
/// candidate differs from the current setting (an A/A run keeps it anyway
/// and runs for its verdicts).
fn settled_measured(
    verdicts: &[WorkloadVerdict],
    trials: &[Trial],
    cands: &[Candidate],
    base: usize,
    objective: Objective,
) -> Option<String> {
    let base = &cands[base];
    let mut why = Vec::new();
    for c in cands.iter().filter(|c| !c.same_setting(base)) {
        let lost =
            crossed(verdicts).find(|v| v.candidate == c.label && v.verdict == Verdict::Worse);
        if let Some(v) = lost {
            why.push(format!(
                "{} cannot qualify: {} against {}",
                c.setting(),
                v.describe(objective),
                base.setting()
            ));
        } else if let Some(s) = starves_alone(c, &[base], trials) {
            why.push(format!("{} is vetoed: {s}", c.setting()));
        } else {
            return None;
        }
    }
    (!why.is_empty()).then(|| why.join("; "))
}

/// `--choose` with an unmeasured current setting: settled when no
/// candidate can still be significantly better than every other one
/// without stalling alone, i.e. the current setting will be kept.
fn settled_pairwise(
    pairwise: &[WorkloadVerdict],
    trials: &[Trial],
    cands: &[Candidate],
    objective: Objective,
) -> Option<String> {
    let mut why = Vec::new();
    for x in cands {
        let others: Vec<&Candidate> = cands.iter().filter(|y| !y.same_setting(x)).collect();
        if others.is_empty() {
            return None;
        }
        // A kept verdict in which `x` lost to another candidate.
        let lost = crossed(pairwise).find(|v| {
            (v.candidate == x.label && v.verdict == Verdict::Worse)
                || (v.baseline == x.label && v.verdict == Verdict::Better)
        });
        if let Some(v) = lost {
            why.push(format!(
                "{} cannot be chosen: {} vs {}: {}",
                x.label,
                v.candidate,
                v.baseline,
                v.describe(objective)
            ));
        } else if let Some(s) = starves_alone(x, &others, trials) {
            why.push(format!("{} is vetoed: {s}", x.label));
        } else {
            return None;
        }
    }
    (!why.is_empty()).then(|| why.join("; "))
}

/// Test again every comparison of `state` that has not crossed, at the
/// look's level; freeze the ones that cross now.
fn merge(
    state: &mut Vec<WorkloadVerdict>,
    bounds: &Boundaries,
    round: u32,
    opts: &CompareOpts,
    fresh: impl Fn(&CompareOpts) -> Vec<WorkloadVerdict>,
) {
    let level = bounds.level(round);
    // A last look without a boundary (everything spent earlier) is
    // reported at the family's alpha, but can cross nothing.
    let alpha = if level > 0.0 { level } else { bounds.alpha };
    let now = fresh(&CompareOpts { alpha, ..*opts });
    if state.is_empty() {
        // First look: nothing has crossed yet.
        state.extend(now.iter().cloned());
    }
    for (old, mut new) in state.iter_mut().zip(now) {
        if old.sequential.is_some_and(|r| r.crossed) {
            continue;
        }
        let crossed = level > 0.0 && new.verdict != Verdict::NoSignificantDifference;
        if !crossed {
            new.verdict = Verdict::NoSignificantDifference;
            if level == 0.0 {
                for c in [
                    Some(&mut new.throughput.comparison),
                    new.bandwidth.as_mut(),
                    new.p99.as_mut(),
                    new.balanced.as_mut(),
                ]
                .into_iter()
                .flatten()
                {
                    c.verdict = Verdict::NoSignificantDifference;
                }
            }
        }
        new.sequential = Some(Reached {
            round,
            crossed,
            level,
            ran_to_budget: false,
        });
        *old = new;
    }
}
