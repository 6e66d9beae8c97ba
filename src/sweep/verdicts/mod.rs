//! From trials to per-cell summaries and verdicts (on top of `stats`). No
//! I/O, no choice of a setting here: that is [`super::recommend`].
//!
//! - [`cells`]: one candidate on one workload, summarised.
//! - [`compare`]: a candidate against another, and the objective's verdict,
//!   against the current setting or pairwise.
//! - [`sequential`]: the group-sequential design, look by look.
//! - [`veto`]: the stall veto the recommendation and the design share.
//! - [`noise`]: the run's noise.

mod cells;
mod compare;
mod noise;
mod sequential;
mod veto;

pub use cells::{
    cells, unit_of, Cell, DeviceMedians, Directions, LatencySummary, ThroughputSummary,
};
pub use compare::{
    objective_verdict, pairwise, pairwise_alpha, verdicts, Reached, ThroughputComparison,
    WorkloadVerdict,
};
pub use noise::{noise, Noise};
pub use sequential::Sequential;
pub use veto::starves_alone;

#[cfg(test)]
pub(crate) mod tests;
