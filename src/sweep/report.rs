//! The typed result of `innotune sweep` (JSON schema: docs/json-sweep.md).

use super::analysis::{Cell, Noise, Recommendation, Trial, WorkloadVerdict};
use super::cli::Objective;
use super::plan::{Candidate, Plan};
use super::target::Device;
use crate::error::exit;
use crate::journal::Restored;
use serde::Serialize;
use std::path::PathBuf;

#[derive(Debug, Serialize)]
pub struct SweepReport {
    pub path: PathBuf,
    /// Every device under the path, top first (from probe).
    pub stack: Vec<String>,
    /// The devices that were switched (those with a scheduler), as found at start.
    pub devices: Vec<Device>,
    pub candidates: Vec<Candidate>,
    /// Label of the candidate every other is compared with: the setting
    /// active at start on the top device (else the first candidate).
    pub baseline: String,
    pub workloads: Vec<String>,
    pub objective: Objective,
    pub min_effect: f64,
    pub seed: u64,
    pub resamples: usize,
    pub plan: Plan,
    /// Trials that ran (equals plan.trials for a complete run).
    pub trials_run: usize,
    /// Wall-clock seconds the sweep took.
    pub elapsed_s: f64,
    pub noise: Noise,
    /// Per candidate and workload: medians with 95% CIs.
    pub results: Vec<Cell>,
    /// Per workload and non-baseline candidate.
    pub verdicts: Vec<WorkloadVerdict>,
    pub recommendation: Recommendation,
    /// The server OLTP workloads ran against; absent without them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oltp: Option<super::server::OltpSetup>,
    /// What was put back at the end (every switched attribute).
    pub restored: Vec<Restored>,
    /// Every trial, in the order it ran.
    pub trials: Vec<Trial>,
}

impl crate::output::Report for SweepReport {
    const COMMAND: &'static str = "sweep";
    fn render_text(
        &self,
        out: &mut dyn std::io::Write,
        style: crate::output::Style,
    ) -> std::io::Result<()> {
        super::render::text(self, out, style)
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
