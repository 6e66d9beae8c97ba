//! Per-cell summaries: one candidate on one workload, over its trials
//! (medians with bootstrap intervals, device medians).

use super::super::plan::Candidate;
use crate::stats::{self, Summary};
use crate::trial::trials::{Metric, Trial, Unit};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use serde::Serialize;

/// A throughput summary with its unit: `{"unit": "iops", "n": 5, "median": …}`.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct ThroughputSummary {
    pub unit: Unit,
    #[serde(flatten)]
    pub summary: Summary,
}

/// A latency summary in whole nanoseconds (a fraction of a ns means nothing).
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct LatencySummary {
    pub n: usize,
    pub median: u64,
    pub ci_low: u64,
    pub ci_high: u64,
    #[serde(
        rename = "cv_pct",
        serialize_with = "stats::as_pct",
        deserialize_with = "stats::from_pct"
    )]
    pub cv: f64,
}

impl LatencySummary {
    fn of(s: Summary) -> LatencySummary {
        let ns = |v: f64| v.round().max(0.0) as u64;
        LatencySummary {
            n: s.n,
            median: ns(s.median),
            ci_low: ns(s.ci_low),
            ci_high: ns(s.ci_high),
            cv: s.cv,
        }
    }
}

/// Median device figures of one cell.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct DeviceMedians {
    pub device: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_await_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_await_ns: Option<u64>,
    pub avg_queue_length: f64,
    pub util_pct: f64,
}

/// A workload that reads and writes (mixed: 16 KiB random reads at depth
/// 1 beside a 1 MiB writer), each direction apart: its IOPS are of
/// different I/Os, and the cell's `p99_ns` is the reads' alone.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Directions {
    pub read_iops_per_s: Summary,
    pub write_iops_per_s: Summary,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_p99_ns: Option<LatencySummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_p99_ns: Option<LatencySummary>,
}

/// One candidate on one workload, over its trials.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Cell {
    pub candidate: String,
    pub workload: String,
    pub throughput: ThroughputSummary,
    /// Absent for OLTP workloads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bandwidth_bytes_per_s: Option<Summary>,
    /// Absent when no trial completed an I/O or transaction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p99_ns: Option<LatencySummary>,
    /// Bench workloads with reads and writes: each direction apart (the
    /// throughput above adds both). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directions: Option<Directions>,
    pub devices: Vec<DeviceMedians>,
}

/// The unit of workload `w`'s throughput (from its trials; IOPS if none ran).
pub fn unit_of(trials: &[Trial], w: &str) -> Unit {
    trials
        .iter()
        .find(|t| t.workload == w)
        .map_or(Unit::Iops, |t| t.unit())
}

pub(super) fn values(trials: &[Trial], c: &str, w: &str, m: Metric) -> Vec<f64> {
    trials
        .iter()
        .filter(|t| t.candidate == c && t.workload == w)
        .filter_map(|t| m.of(t))
        .collect()
}

pub(super) fn seed_for(seed: u64, parts: &[usize]) -> u64 {
    parts.iter().fold(seed ^ 0x9e37_79b9_7f4a_7c15, |h, &p| {
        (h ^ p as u64).wrapping_mul(0x1000_0000_01b3)
    })
}

pub fn cells(
    trials: &[Trial],
    cands: &[Candidate],
    workloads: &[String],
    resamples: usize,
    seed: u64,
) -> Vec<Cell> {
    let mut out = Vec::new();
    for (wi, w) in workloads.iter().enumerate() {
        let unit = unit_of(trials, w);
        for (ci, c) in cands.iter().enumerate() {
            let mut rng = SmallRng::seed_from_u64(seed_for(seed, &[1, wi, ci]));
            let p99 = values(trials, &c.label, w, Metric::P99);
            let bw = values(trials, &c.label, w, Metric::Bandwidth);
            let mine: Vec<&Trial> = trials
                .iter()
                .filter(|t| t.candidate == c.label && &t.workload == w)
                .collect();
            let dev_names: Vec<String> = mine
                .first()
                .map(|t| t.devices.iter().map(|d| d.device.clone()).collect())
                .unwrap_or_default();
            let devices = dev_names
                .iter()
                .map(|n| {
                    let ds: Vec<_> = mine
                        .iter()
                        .filter_map(|t| t.devices.iter().find(|d| &d.device == n))
                        .collect();
                    let med = |v: Vec<f64>| (!v.is_empty()).then(|| stats::median(&v));
                    let ns = |v: Vec<u64>| med(v.into_iter().map(|x| x as f64).collect());
                    DeviceMedians {
                        device: n.clone(),
                        read_await_ns: ns(ds.iter().filter_map(|d| d.read_await_ns).collect())
                            .map(|v| v.round() as u64),
                        write_await_ns: ns(ds.iter().filter_map(|d| d.write_await_ns).collect())
                            .map(|v| v.round() as u64),
                        avg_queue_length: med(ds.iter().map(|d| d.avg_queue_length).collect())
                            .unwrap_or(0.0),
                        util_pct: med(ds.iter().map(|d| d.util_pct).collect()).unwrap_or(0.0),
                    }
                })
                .collect();
            let directions = {
                let mut rng = SmallRng::seed_from_u64(seed_for(seed, &[4, wi, ci]));
                let of = |f: fn(&Trial) -> Option<f64>| -> Vec<f64> {
                    mine.iter().filter_map(|t| f(t)).collect()
                };
                let (r, w) = (of(|t| t.read_iops_per_s), of(|t| t.write_iops_per_s));
                let (rp, wp) = (
                    of(|t| t.read_p99_ns.map(|v| v as f64)),
                    of(|t| t.write_p99_ns.map(|v| v as f64)),
                );
                (!r.is_empty() && !w.is_empty()).then(|| Directions {
                    read_iops_per_s: stats::summarize(&r, resamples, &mut rng),
                    write_iops_per_s: stats::summarize(&w, resamples, &mut rng),
                    read_p99_ns: (!rp.is_empty())
                        .then(|| LatencySummary::of(stats::summarize(&rp, resamples, &mut rng))),
                    write_p99_ns: (!wp.is_empty())
                        .then(|| LatencySummary::of(stats::summarize(&wp, resamples, &mut rng))),
                })
            };
            out.push(Cell {
                candidate: c.label.clone(),
                workload: w.clone(),
                throughput: ThroughputSummary {
                    unit,
                    summary: stats::summarize(
                        &values(trials, &c.label, w, Metric::Throughput),
                        resamples,
                        &mut rng,
                    ),
                },
                bandwidth_bytes_per_s: (!bw.is_empty())
                    .then(|| stats::summarize(&bw, resamples, &mut rng)),
                p99_ns: (!p99.is_empty())
                    .then(|| LatencySummary::of(stats::summarize(&p99, resamples, &mut rng))),
                directions,
                devices,
            });
        }
    }
    out
}
