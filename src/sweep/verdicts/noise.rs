//! The run's noise, said plainly (CVs across cells, host CPU steal), and
//! its JSON form (fractions here, percent in JSON).

use super::cells::Cell;
use crate::stats;
use crate::trial::trials::{Trial, Unit};
use serde::Serialize;

/// The run's noise, said plainly: CV of each metric across cells. IOPS
/// and tps are kept apart: a database's transaction rate is usually
/// noisier than raw I/O, and one median over both would hide which is.
/// Fractions here; JSON shows percent.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct Noise {
    /// Over bench cells; absent when no bench workload ran.
    #[serde(
        rename = "iops_cv_median_pct",
        serialize_with = "opt_pct",
        deserialize_with = "opt_pct_de",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub iops_cv_median: Option<f64>,
    #[serde(
        rename = "iops_cv_max_pct",
        serialize_with = "opt_pct",
        deserialize_with = "opt_pct_de",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub iops_cv_max: Option<f64>,
    /// Over OLTP cells; absent when no OLTP workload ran.
    #[serde(
        rename = "tps_cv_median_pct",
        serialize_with = "opt_pct",
        deserialize_with = "opt_pct_de",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub tps_cv_median: Option<f64>,
    #[serde(
        rename = "tps_cv_max_pct",
        serialize_with = "opt_pct",
        deserialize_with = "opt_pct_de",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub tps_cv_max: Option<f64>,
    #[serde(
        rename = "p99_cv_median_pct",
        serialize_with = "opt_pct",
        deserialize_with = "opt_pct_de",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub p99_cv_median: Option<f64>,
    #[serde(
        rename = "p99_cv_max_pct",
        serialize_with = "opt_pct",
        deserialize_with = "opt_pct_de",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub p99_cv_max: Option<f64>,
    /// Host CPU steal over the trials' windows (the hypervisor's share on
    /// a VM), median and max over trials; absent when /proc/stat gave none.
    #[serde(
        rename = "steal_median_pct",
        serialize_with = "opt_pct",
        deserialize_with = "opt_pct_de",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub steal_median: Option<f64>,
    #[serde(
        rename = "steal_max_pct",
        serialize_with = "opt_pct",
        deserialize_with = "opt_pct_de",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub steal_max: Option<f64>,
    /// Trials whose window had steal at or above
    /// [`crate::model::cpustat::STEAL_WARN_PCT`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steal_trials: Option<usize>,
}

impl Noise {
    /// Add the steal of the trials' windows (each trial's `host_cpu`).
    pub fn with_steal(mut self, trials: &[Trial]) -> Noise {
        let pct: Vec<f64> = trials
            .iter()
            .filter_map(|t| t.host_cpu.map(|c| c.steal_pct))
            .collect();
        if !pct.is_empty() {
            // Fractions here, like the CVs (JSON shows percent).
            self.steal_median = Some(stats::median(&pct) / 100.0);
            self.steal_max = Some(pct.iter().copied().fold(0.0, f64::max) / 100.0);
            let over = |p: &&f64| **p >= crate::model::cpustat::STEAL_WARN_PCT;
            self.steal_trials = Some(pct.iter().filter(over).count());
        }
        self
    }
}

fn opt_pct_de<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Ok(<Option<f64> as serde::Deserialize>::deserialize(d)?.map(|p| p / 100.0))
}

fn opt_pct<S: serde::Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(x) => s.serialize_f64(x * 100.0),
        None => s.serialize_none(),
    }
}

pub fn noise(cells: &[Cell]) -> Noise {
    let finite = |v: Vec<f64>| v.into_iter().filter(|v| v.is_finite()).collect::<Vec<_>>();
    let of_unit = |u: Unit| {
        finite(
            cells
                .iter()
                .filter(|c| c.throughput.unit == u)
                .map(|c| c.throughput.summary.cv)
                .collect(),
        )
    };
    let p = finite(
        cells
            .iter()
            .filter_map(|c| c.p99_ns.as_ref().map(|s| s.cv))
            .collect(),
    );
    let med = |v: &[f64]| (!v.is_empty()).then(|| stats::median(v));
    let max = |v: &[f64]| (!v.is_empty()).then(|| v.iter().copied().fold(0.0, f64::max));
    let (i, t) = (of_unit(Unit::Iops), of_unit(Unit::Tps));
    Noise {
        iops_cv_median: med(&i),
        iops_cv_max: max(&i),
        tps_cv_median: med(&t),
        tps_cv_max: max(&t),
        p99_cv_median: med(&p),
        p99_cv_max: max(&p),
        ..Noise::default()
    }
}
