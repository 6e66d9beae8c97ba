//! The typed result of `innotune sweep` (JSON schema: docs/json-sweep.md);
//! the document it turns into for text, markdown and HTML (tables, and
//! [`Series`](crate::export::doc::Series) charts) is built in [`document`].

mod document;
#[cfg(test)]
mod tests;

use super::cli::Objective;
use super::plan::{Candidate, Plan};
use super::recommend::Recommendation;
use super::target::Device;
use super::verdicts::{Cell as Result_, Noise, WorkloadVerdict};
use crate::error::exit;
use crate::export::doc::Document;
use crate::journal::Restored;
use crate::trial::space::FilePlan;
use crate::trial::trials::Trial;
use serde::Serialize;
use std::borrow::Cow;
use std::path::PathBuf;

#[derive(Debug, Serialize, serde::Deserialize)]
pub struct SweepReport {
    pub path: PathBuf,
    /// Every device under the path, top first (from probe).
    pub stack: Vec<String>,
    /// The devices that were switched (those with a scheduler), as found at start.
    pub devices: Vec<Device>,
    pub candidates: Vec<Candidate>,
    /// Label of the candidate every other is compared with: the one holding
    /// the devices' current setting, else the first.
    pub baseline: String,
    pub workloads: Vec<String>,
    pub objective: Objective,
    /// Smallest relative effect that counts. JSON: `min_effect_pct`.
    #[serde(
        rename = "min_effect_pct",
        serialize_with = "crate::stats::as_pct",
        deserialize_with = "crate::stats::from_pct"
    )]
    pub min_effect: f64,
    /// `--choose`: pick among the candidates when the current setting was
    /// not measured.
    pub choose: bool,
    pub seed: u64,
    pub resamples: usize,
    pub plan: Plan,
    /// The work directory and the size of the files in it.
    pub files: FilePlan,
    /// Trials that ran (equals plan.trials for a complete run).
    pub trials_run: usize,
    /// Wall-clock seconds the sweep took, layout and server start included.
    pub elapsed_s: f64,
    /// Seconds from the first trial's start to the last trial's end (the
    /// rounds alone: no layout, no server start).
    pub rounds_s: f64,
    /// `--sequential` only: the looks, where the sweep stopped, and the
    /// time that saved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sequential: Option<SequentialSummary>,
    pub noise: Noise,
    /// Per workload and candidate: medians with 95% CIs.
    pub results: Vec<Result_>,
    /// Per workload, every candidate but the baseline against it.
    pub verdicts: Vec<WorkloadVerdict>,
    /// With `--choose` and an unmeasured current setting: every pair of
    /// candidates with different settings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pairwise: Vec<WorkloadVerdict>,
    pub recommendation: Recommendation,
    /// The server OLTP workloads ran against; absent without them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oltp: Option<crate::trial::server::OltpSetup>,
    /// What was put back at the end.
    pub restored: Vec<Restored>,
    /// Why the I/O did not (all) reach a device: a loop device under the
    /// path through the page cache, or a workload whose device counted
    /// under a tenth of the bytes its jobs moved. Absent when it did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_on_device: Vec<crate::bench::reach::NotOnDevice>,
    /// Every trial, in the order it ran.
    pub trials: Vec<Trial>,
}

/// How a group-sequential sweep went.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct SequentialSummary {
    /// `pocock`: Lan–DeMets Pocock-type alpha spending (see
    /// `stats::sequential`).
    pub spending: Cow<'static, str>,
    /// The most rounds the plan allowed.
    pub max_rounds: u32,
    pub rounds_run: u32,
    /// The first round at which a verdict could be reached.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_look: Option<u32>,
    /// Every comparison the recommendation needs crossed its boundary
    /// before the last planned round.
    pub stopped_early: bool,
    /// `verdicts` or `pairwise`: what the stop waited for.
    pub decided_on: Cow<'static, str>,
    /// The sweep stopped because no candidate could become the
    /// recommendation any more, whatever later rounds measured (a
    /// futility stop: a verdict it needed crossed against it, or the
    /// starvation veto held); why, per candidate. Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settled: Option<String>,
    /// Rounds not run, and their time estimated from the rounds that ran.
    pub saved_rounds: u32,
    pub saved_s: f64,
    /// Per look: the nominal level each verdict needed (p ≤ level, CI at
    /// 1 − level) and the false-positive chance spent by then.
    pub boundaries: Vec<crate::stats::sequential::Look>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pairwise_boundaries: Option<Vec<crate::stats::sequential::Look>>,
}

impl SequentialSummary {
    /// From a finished design; `stopped_after` the round of the stop,
    /// `rounds_s` the seconds the rounds that ran took.
    pub fn new(
        s: &super::verdicts::Sequential,
        stopped_after: Option<u32>,
        rounds_s: f64,
    ) -> SequentialSummary {
        let max = s.max_rounds();
        let run = s.rounds_run;
        let early = stopped_after.is_some_and(|r| r < max);
        let saved_rounds = max.saturating_sub(run);
        SequentialSummary {
            spending: "pocock".into(),
            max_rounds: max,
            rounds_run: run,
            first_look: s.bounds.first_look(),
            stopped_early: early,
            decided_on: if s.needs_pairwise {
                "pairwise".into()
            } else {
                "verdicts".into()
            },
            settled: s.settled.clone().filter(|_| early),
            saved_rounds,
            saved_s: if run > 0 {
                rounds_s / run as f64 * saved_rounds as f64
            } else {
                0.0
            },
            boundaries: s.bounds.looks.clone(),
            pairwise_boundaries: s.pairwise_bounds.as_ref().map(|b| b.looks.clone()),
        }
    }

    /// `stopped after round 5 of at most 10: every verdict was clear (saved ≈ 42.0s, 5 rounds)`.
    pub fn describe(&self) -> String {
        let first = self
            .first_look
            .map_or("no look can reach a verdict".to_string(), |r| {
                format!("verdicts possible from round {r}")
            });
        if let (true, Some(why)) = (self.stopped_early, &self.settled) {
            format!(
                "sequential (Pocock-type alpha spending, {first}): stopped after round {} of at most {}, the answer was settled: {why}; no later round could make a candidate the recommendation; saved ≈ {} ({} rounds)",
                self.rounds_run,
                self.max_rounds,
                super::plan::fmt_d(std::time::Duration::from_secs_f64(self.saved_s.max(0.0))),
                self.saved_rounds
            )
        } else if self.stopped_early {
            format!(
                "sequential (Pocock-type alpha spending, {first}): stopped after round {} of at most {}, every verdict the recommendation needs was clear; saved ≈ {} ({} rounds)",
                self.rounds_run,
                self.max_rounds,
                super::plan::fmt_d(std::time::Duration::from_secs_f64(self.saved_s.max(0.0))),
                self.saved_rounds
            )
        } else if self.rounds_run >= self.max_rounds {
            format!(
                "sequential (Pocock-type alpha spending, {first}): ran all {} planned rounds: not every verdict crossed its boundary",
                self.max_rounds
            )
        } else {
            format!(
                "sequential (Pocock-type alpha spending, {first}): {} of at most {} rounds ran",
                self.rounds_run, self.max_rounds
            )
        }
    }
}

impl crate::export::Report for SweepReport {
    const COMMAND: &'static str = "sweep";

    fn document(&self) -> Document {
        document::document(self)
    }

    /// 0: the recommendation is what the devices use now; 1: it differs
    /// (a pending change for the user to apply).
    fn exit_code(&self) -> i32 {
        if self.recommendation.pending_change {
            exit::FOUND
        } else {
            exit::OK
        }
    }
}
