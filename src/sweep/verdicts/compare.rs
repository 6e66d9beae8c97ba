//! A candidate against another on one workload: the throughput, bandwidth,
//! p99 and balanced comparisons, and the objective's verdict. Against the
//! current setting ([`verdicts`]) or pairwise ([`pairwise`]), each at its
//! multiplicity-corrected level.

use super::super::options::Objective;
use super::super::plan::Candidate;
use super::cells::{seed_for, unit_of, values};
use crate::stats::{compare, CompareOpts, Comparison, Verdict};
use crate::trial::trials::{Metric, Trial, Unit};
use serde::Serialize;

/// A throughput comparison with the unit compared.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct ThroughputComparison {
    pub unit: Unit,
    #[serde(flatten)]
    pub comparison: Comparison,
}

/// A candidate against a baseline on one workload. Every comparison is a
/// unitless ratio candidate / baseline.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct WorkloadVerdict {
    pub candidate: String,
    pub workload: String,
    /// The candidate it is compared with.
    pub baseline: String,
    /// The verdict for the objective: `better`, `worse` or
    /// `no significant difference`.
    pub verdict: Verdict,
    pub throughput: ThroughputComparison,
    /// Absent for OLTP workloads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bandwidth: Option<Comparison>,
    /// Absent without latencies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p99: Option<Comparison>,
    /// The composite the `balanced` objective decides on: throughput per
    /// ms of p99, computed per trial. Absent without latencies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub balanced: Option<Comparison>,
    /// Sequential designs only: at which look the verdict was reached.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sequential: Option<Reached>,
}

/// Where a verdict of a sequential design was reached.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct Reached {
    /// Round (1-based) of the look the verdict rests on: where it crossed
    /// its boundary, else the last round run.
    pub round: u32,
    /// It crossed its boundary at `round` (`better` or `worse`).
    pub crossed: bool,
    /// The look's nominal level: the rank test's p had to be at most this,
    /// and the CI is at 1 − this (0: this look could not cross).
    pub level: f64,
    /// It never crossed and every planned round ran: a tie that used the
    /// whole budget.
    pub ran_to_budget: bool,
}

impl Reached {
    /// `round 5`, `not crossed in all 10 rounds`, `open when the sweep stopped at round 6`.
    /// (All planned rounds: `--rounds`, or what `--budget` fitted; the
    /// words name neither, as either may have set them.)
    pub fn describe(&self) -> String {
        if self.crossed {
            format!("round {}", self.round)
        } else if self.ran_to_budget {
            format!("not crossed in all {} rounds", self.round)
        } else {
            format!("open when the sweep stopped at round {}", self.round)
        }
    }
}

impl WorkloadVerdict {
    pub fn unit(&self) -> Unit {
        self.throughput.unit
    }

    /// The comparison the objective's verdict rests on, and its name.
    pub fn decisive(&self, o: Objective) -> Option<(String, &Comparison)> {
        let unit = self.unit().label();
        match o {
            Objective::Throughput => Some((unit.to_string(), &self.throughput.comparison)),
            Objective::Latency => self.p99.as_ref().map(|c| ("p99".to_string(), c)),
            Objective::Balanced => self
                .balanced
                .as_ref()
                .map(|c| (format!("{unit} per ms of p99"), c)),
        }
    }

    /// `p99 better on mixed (0.50× [0.41–0.62])`.
    pub fn describe(&self, o: Objective) -> String {
        match self.decisive(o) {
            Some((n, c)) => format!(
                "{n} {} on {} ({:.2}× [{:.2}–{:.2}])",
                self.verdict.as_str(),
                self.workload,
                c.ratio.unwrap_or(f64::NAN),
                c.ci_low.unwrap_or(f64::NAN),
                c.ci_high.unwrap_or(f64::NAN)
            ),
            None => format!("{} on {}", self.verdict.as_str(), self.workload),
        }
    }
}

/// The objective's verdict: exactly one test per workload (see
/// [`Metric::Balanced`] for why `balanced` is a composite).
pub fn objective_verdict(
    o: Objective,
    throughput: &Comparison,
    p99: Option<&Comparison>,
    balanced: Option<&Comparison>,
) -> Verdict {
    let or_none = |c: Option<&Comparison>| {
        c.map(|c| c.verdict)
            .unwrap_or(Verdict::NoSignificantDifference)
    };
    match o {
        Objective::Throughput => throughput.verdict,
        Objective::Latency => or_none(p99),
        Objective::Balanced => or_none(balanced),
    }
}

/// `cand` against `base` on workload `w`; `key` seeds the rank test's
/// Monte Carlo branch (used only past its exact limit).
#[allow(clippy::too_many_arguments)]
fn judge(
    trials: &[Trial],
    base: &str,
    cand: &str,
    w: &str,
    unit: Unit,
    objective: Objective,
    opts: &CompareOpts,
    key: &[usize],
) -> WorkloadVerdict {
    let cmp = |m: Metric, k: usize| {
        let mut parts = key.to_vec();
        parts.push(k);
        let o = CompareOpts {
            seed: seed_for(opts.seed, &parts),
            ..*opts
        };
        compare(
            &values(trials, base, w, m),
            &values(trials, cand, w, m),
            m.direction(),
            &o,
        )
    };
    let has = |m: Metric| {
        !values(trials, base, w, m).is_empty() && !values(trials, cand, w, m).is_empty()
    };
    let throughput = cmp(Metric::Throughput, 0);
    let bandwidth = has(Metric::Bandwidth).then(|| cmp(Metric::Bandwidth, 1));
    let has_p99 = has(Metric::P99);
    let p99 = has_p99.then(|| cmp(Metric::P99, 2));
    let balanced = has_p99.then(|| cmp(Metric::Balanced, 3));
    WorkloadVerdict {
        candidate: cand.to_string(),
        workload: w.to_string(),
        baseline: base.to_string(),
        verdict: objective_verdict(objective, &throughput, p99.as_ref(), balanced.as_ref()),
        throughput: ThroughputComparison {
            unit,
            comparison: throughput,
        },
        bandwidth,
        p99,
        balanced,
        sequential: None,
    }
}

/// Every candidate but `reference` against it, per workload, at alpha / W
/// (Bonferroni over the W workloads one recommendation rests on).
pub fn verdicts(
    trials: &[Trial],
    cands: &[Candidate],
    reference: usize,
    workloads: &[String],
    objective: Objective,
    opts: &CompareOpts,
) -> Vec<WorkloadVerdict> {
    let opts = CompareOpts {
        alpha: opts.alpha / workloads.len().max(1) as f64,
        ..*opts
    };
    verdicts_at(trials, cands, reference, workloads, objective, &opts)
}

/// [`verdicts`] with `opts.alpha` the level of each comparison (already
/// corrected for the workloads).
pub(super) fn verdicts_at(
    trials: &[Trial],
    cands: &[Candidate],
    reference: usize,
    workloads: &[String],
    objective: Objective,
    opts: &CompareOpts,
) -> Vec<WorkloadVerdict> {
    let base = &cands[reference].label;
    let mut out = Vec::new();
    for (wi, w) in workloads.iter().enumerate() {
        let unit = unit_of(trials, w);
        for (ci, c) in cands.iter().enumerate() {
            if ci != reference {
                out.push(judge(
                    trials,
                    base,
                    &c.label,
                    w,
                    unit,
                    objective,
                    opts,
                    &[2, wi, ci],
                ));
            }
        }
    }
    out
}

/// Alpha of each pairwise comparison behind a choice among `settings`
/// distinct settings over `workloads` workloads (see [`pairwise`]).
pub fn pairwise_alpha(alpha: f64, workloads: usize, settings: usize) -> f64 {
    alpha / (workloads.max(1) * settings.saturating_sub(1).max(1)) as f64
}

/// Every pair of candidates with different settings (the later one against
/// the earlier), per workload: the evidence behind `--choose`, which needs
/// one candidate significantly better than every other.
///
/// Why alpha / (W × (K − 1)) for K distinct settings: "X beats every other"
/// needs X better than some Y on a workload, so under no difference at all
/// P(X is chosen) ≤ W × a / 2 (one direction of a two-sided test, over W
/// workloads); the K events "X is chosen" are disjoint (two candidates
/// cannot each beat the other and be worse on none), so P(any choice) ≤
/// K × W × a / 2, which is ≤ alpha with a = alpha / (W × (K − 1)) for K ≥ 2.
pub fn pairwise(
    trials: &[Trial],
    cands: &[Candidate],
    workloads: &[String],
    objective: Objective,
    opts: &CompareOpts,
) -> Vec<WorkloadVerdict> {
    let settings = super::super::plan::distinct_settings(cands);
    let opts = CompareOpts {
        alpha: pairwise_alpha(opts.alpha, workloads.len(), settings),
        ..*opts
    };
    pairwise_at(trials, cands, workloads, objective, &opts)
}

/// [`pairwise`] with `opts.alpha` the level of each comparison.
pub(super) fn pairwise_at(
    trials: &[Trial],
    cands: &[Candidate],
    workloads: &[String],
    objective: Objective,
    opts: &CompareOpts,
) -> Vec<WorkloadVerdict> {
    let mut out = Vec::new();
    for (wi, w) in workloads.iter().enumerate() {
        let unit = unit_of(trials, w);
        for i in 0..cands.len() {
            for j in i + 1..cands.len() {
                if cands[i].same_setting(&cands[j]) {
                    continue;
                }
                out.push(judge(
                    trials,
                    &cands[i].label,
                    &cands[j].label,
                    w,
                    unit,
                    objective,
                    opts,
                    &[3, wi, i, j],
                ));
            }
        }
    }
    out
}
