//! From trials to verdicts and one recommendation. No I/O here.

use super::cli::Objective;
use super::diskstats::DeviceStats;
use super::plan::Candidate;
use super::target::Device;
use crate::bench::result::{DirStats, WorkloadResult};
use crate::oltp::OltpResult;
use crate::stats::{self, compare, CompareOpts, Comparison, Direction, Summary, Verdict};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use serde::Serialize;

/// What a workload's throughput counts. The analysis treats both alike
/// (higher is better, ratios are unitless); reports name the unit so a
/// transaction rate is never read as an I/O rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// I/O operations per second: bench presets and job files.
    Iops,
    /// Transactions per second: OLTP workloads (sysbench's "transactions").
    Tps,
}

impl Unit {
    /// As written in text reports.
    pub fn label(self) -> &'static str {
        match self {
            Unit::Iops => "IOPS",
            Unit::Tps => "tps",
        }
    }
}

/// A throughput figure named by its unit in JSON, flattened into its
/// parent: `"iops": …` for bench workloads, `"tps": …` for OLTP ones. (An
/// `iops` field holding transactions would change what `iops` means.)
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PerUnit<T> {
    Iops(T),
    Tps(T),
}

impl<T> PerUnit<T> {
    pub fn new(unit: Unit, v: T) -> PerUnit<T> {
        match unit {
            Unit::Iops => PerUnit::Iops(v),
            Unit::Tps => PerUnit::Tps(v),
        }
    }
    pub fn get(&self) -> &T {
        match self {
            PerUnit::Iops(v) | PerUnit::Tps(v) => v,
        }
    }
}

/// The `balanced` composite named by its unit, flattened into its parent:
/// `"iops_per_p99_ms": …` or `"tps_per_p99_ms": …`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PerP99<T> {
    IopsPerP99Ms(T),
    TpsPerP99Ms(T),
}

impl<T> PerP99<T> {
    pub fn new(unit: Unit, v: T) -> PerP99<T> {
        match unit {
            Unit::Iops => PerP99::IopsPerP99Ms(v),
            Unit::Tps => PerP99::TpsPerP99Ms(v),
        }
    }
    pub fn get(&self) -> &T {
        match self {
            PerP99::IopsPerP99Ms(v) | PerP99::TpsPerP99Ms(v) => v,
        }
    }
}

/// One measured window.
#[derive(Debug, Clone, Serialize)]
pub struct Trial {
    pub round: u32,
    /// Position in the whole run (0-based), to see drift over time.
    pub seq: usize,
    pub candidate: String,
    pub workload: String,
    pub throughput_unit: Unit,
    /// Bench: all jobs, reads + writes, as `iops`. OLTP: transactions per
    /// second, as `tps`.
    #[serde(flatten)]
    pub throughput: PerUnit<f64>,
    /// Bench: bandwidth of all jobs. OLTP: null (see `devices` for bytes).
    pub mib_s: Option<f64>,
    /// The latency that matters for the workload (µs). Bench: read p99 if
    /// it reads, else write p99 (max over jobs); null if no I/O completed.
    /// OLTP: transaction p99; null if no transaction completed.
    pub p99_us: Option<f64>,
    pub read_p99_us: Option<f64>,
    pub write_p99_us: Option<f64>,
    pub read_p50_us: Option<f64>,
    /// OLTP: queries per second.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qps: Option<f64>,
    /// OLTP: events re-run after an ignored error (deadlock, lock wait
    /// timeout, lost connection), per second: a trial full of them measured
    /// contention, not storage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors_per_sec: Option<f64>,
    /// iostat -x figures of each switched device over the window.
    pub devices: Vec<DeviceStats>,
}

fn dirs(r: &WorkloadResult) -> impl Iterator<Item = (&DirStats, bool)> {
    r.jobs.iter().flat_map(|j| {
        j.read
            .iter()
            .map(|d| (d, true))
            .chain(j.write.iter().map(|d| (d, false)))
    })
}

fn max_p99(r: &WorkloadResult, read: bool, f: fn(&DirStats) -> u64) -> Option<f64> {
    dirs(r)
        .filter(|(d, is_read)| *is_read == read && d.clat_ns.n > 0)
        .map(|(d, _)| f(d) as f64 / 1000.0)
        .reduce(f64::max)
}

impl Trial {
    pub fn from_result(
        round: u32,
        seq: usize,
        candidate: &str,
        r: &WorkloadResult,
        devices: Vec<DeviceStats>,
    ) -> Trial {
        let iops = dirs(r).map(|(d, _)| d.iops).sum();
        let bw: f64 = dirs(r).map(|(d, _)| d.bw_bytes).sum();
        let read_p99_us = max_p99(r, true, |d| d.clat_ns.p99);
        let write_p99_us = max_p99(r, false, |d| d.clat_ns.p99);
        Trial {
            round,
            seq,
            candidate: candidate.to_string(),
            workload: r.name.clone(),
            throughput_unit: Unit::Iops,
            throughput: PerUnit::Iops(iops),
            mib_s: Some(bw / (1024.0 * 1024.0)),
            p99_us: read_p99_us.or(write_p99_us),
            read_p99_us,
            write_p99_us,
            read_p50_us: max_p99(r, true, |d| d.clat_ns.p50),
            qps: None,
            errors_per_sec: None,
            devices,
        }
    }

    /// An OLTP trial: throughput is transactions per second, latency the
    /// transaction p99 (sysbench's histogram, ms → µs so that bench and
    /// OLTP latencies share one unit).
    pub fn from_oltp(
        round: u32,
        seq: usize,
        candidate: &str,
        workload: &str,
        r: &OltpResult,
        devices: Vec<DeviceStats>,
    ) -> Trial {
        let p99_ms = r
            .latency_ms
            .percentiles
            .get("99")
            .copied()
            .filter(|_| r.events > 0);
        Trial {
            round,
            seq,
            candidate: candidate.to_string(),
            workload: workload.to_string(),
            throughput_unit: Unit::Tps,
            throughput: PerUnit::Tps(r.tps),
            mib_s: None,
            p99_us: p99_ms.map(|ms| ms * 1000.0),
            read_p99_us: None,
            write_p99_us: None,
            read_p50_us: None,
            qps: Some(r.qps),
            errors_per_sec: Some(r.errors_per_sec),
            devices,
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub enum Metric {
    /// IOPS (bench) or tps (OLTP): see [`Unit`].
    Throughput,
    MibS,
    P99,
    /// Throughput per millisecond of p99 latency, per trial: the `balanced`
    /// objective's one metric. Testing throughput and p99 separately and
    /// taking either verdict would be two tests per workload and double the
    /// false-positive rate; a composite keeps one test per workload, so the
    /// Bonferroni split over workloads still bounds the whole run at alpha.
    Balanced,
}

impl Metric {
    pub fn direction(self) -> Direction {
        match self {
            Metric::P99 => Direction::LowerIsBetter,
            _ => Direction::HigherIsBetter,
        }
    }
    pub fn of(self, t: &Trial) -> Option<f64> {
        let x = *t.throughput.get();
        match self {
            Metric::Throughput => Some(x),
            Metric::MibS => t.mib_s,
            Metric::P99 => t.p99_us,
            Metric::Balanced => t.p99_us.filter(|p| *p > 0.0).map(|p| x / (p / 1000.0)),
        }
    }
}

/// The unit of workload `w`'s throughput (from its trials; IOPS if none ran).
fn unit_of(trials: &[Trial], w: &str) -> Unit {
    trials
        .iter()
        .find(|t| t.workload == w)
        .map_or(Unit::Iops, |t| t.throughput_unit)
}

/// Median device figures of one cell.
#[derive(Debug, Clone, Serialize)]
pub struct DeviceMedians {
    pub device: String,
    pub r_await: Option<f64>,
    pub w_await: Option<f64>,
    #[serde(rename = "aqu-sz")]
    pub aqu_sz: f64,
    pub util: f64,
}

/// One candidate on one workload, over its trials.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    pub candidate: String,
    pub workload: String,
    pub throughput_unit: Unit,
    /// `iops` or `tps`.
    #[serde(flatten)]
    pub throughput: PerUnit<Summary>,
    /// Null for OLTP workloads.
    pub mib_s: Option<Summary>,
    pub p99_us: Option<Summary>,
    pub devices: Vec<DeviceMedians>,
}

/// A candidate against the baseline on one workload.
#[derive(Debug, Clone, Serialize)]
pub struct WorkloadVerdict {
    pub candidate: String,
    pub workload: String,
    /// The candidate it is compared with (the setting active at start).
    pub baseline: String,
    /// The verdict for the objective: `better`, `worse` or
    /// `no significant difference`.
    pub verdict: Verdict,
    pub throughput_unit: Unit,
    /// `iops` or `tps`.
    #[serde(flatten)]
    pub throughput: PerUnit<Comparison>,
    /// Null for OLTP workloads.
    pub mib_s: Option<Comparison>,
    pub p99_us: Option<Comparison>,
    /// The composite the `balanced` objective decides on (throughput ÷ p99
    /// ms): `iops_per_p99_ms` or `tps_per_p99_ms`; absent without p99.
    #[serde(flatten)]
    pub balanced: Option<PerP99<Comparison>>,
}

fn values(trials: &[Trial], c: &str, w: &str, m: Metric) -> Vec<f64> {
    trials
        .iter()
        .filter(|t| t.candidate == c && t.workload == w)
        .filter_map(|t| m.of(t))
        .collect()
}

fn seed_for(seed: u64, parts: &[usize]) -> u64 {
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
            let mib_s = values(trials, &c.label, w, Metric::MibS);
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
                    let ds: Vec<&DeviceStats> = mine
                        .iter()
                        .filter_map(|t| t.devices.iter().find(|d| &d.device == n))
                        .collect();
                    let med = |f: fn(&DeviceStats) -> Option<f64>| {
                        let v: Vec<f64> = ds.iter().filter_map(|d| f(d)).collect();
                        (!v.is_empty()).then(|| stats::median(&v))
                    };
                    DeviceMedians {
                        device: n.clone(),
                        r_await: med(|d| d.r_await),
                        w_await: med(|d| d.w_await),
                        aqu_sz: med(|d| Some(d.aqu_sz)).unwrap_or(0.0),
                        util: med(|d| Some(d.util)).unwrap_or(0.0),
                    }
                })
                .collect();
            out.push(Cell {
                candidate: c.label.clone(),
                workload: w.clone(),
                throughput_unit: unit,
                throughput: PerUnit::new(
                    unit,
                    stats::summarize(
                        &values(trials, &c.label, w, Metric::Throughput),
                        resamples,
                        &mut rng,
                    ),
                ),
                mib_s: (!mib_s.is_empty()).then(|| stats::summarize(&mib_s, resamples, &mut rng)),
                p99_us: (!p99.is_empty()).then(|| stats::summarize(&p99, resamples, &mut rng)),
                devices,
            });
        }
    }
    out
}

/// The objective's verdict: exactly one test per workload (see
/// [`Metric::IopsPerP99`] for why `balanced` is a composite).
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

pub fn verdicts(
    trials: &[Trial],
    cands: &[Candidate],
    baseline: usize,
    workloads: &[String],
    objective: Objective,
    opts: &CompareOpts,
) -> Vec<WorkloadVerdict> {
    let base = &cands[baseline].label;
    // Bonferroni over workloads: see stats::compare.
    let opts = &CompareOpts {
        alpha: opts.alpha / workloads.len().max(1) as f64,
        ..*opts
    };
    let mut out = Vec::new();
    for (wi, w) in workloads.iter().enumerate() {
        let unit = unit_of(trials, w);
        for (ci, c) in cands.iter().enumerate() {
            if ci == baseline {
                continue;
            }
            let cmp = |m: Metric, k: usize| {
                let o = CompareOpts {
                    seed: seed_for(opts.seed, &[2, wi, ci, k]),
                    ..*opts
                };
                compare(
                    &values(trials, base, w, m),
                    &values(trials, &c.label, w, m),
                    m.direction(),
                    &o,
                )
            };
            let has = |m: Metric| {
                !values(trials, base, w, m).is_empty() && !values(trials, &c.label, w, m).is_empty()
            };
            let throughput = cmp(Metric::Throughput, 0);
            let mib_s = has(Metric::MibS).then(|| cmp(Metric::MibS, 1));
            let has_p99 = has(Metric::P99);
            let p99_us = has_p99.then(|| cmp(Metric::P99, 2));
            let balanced = has_p99.then(|| cmp(Metric::Balanced, 3));
            out.push(WorkloadVerdict {
                candidate: c.label.clone(),
                workload: w.clone(),
                baseline: base.clone(),
                verdict: objective_verdict(
                    objective,
                    &throughput,
                    p99_us.as_ref(),
                    balanced.as_ref(),
                ),
                throughput_unit: unit,
                throughput: PerUnit::new(unit, throughput),
                mib_s,
                p99_us,
                balanced: balanced.map(|b| PerP99::new(unit, b)),
            });
        }
    }
    out
}

/// The one answer.
#[derive(Debug, Clone, Serialize)]
pub struct Recommendation {
    /// The scheduler to use on every device of the stack.
    pub scheduler: String,
    /// The winning candidate's label (carries nr_requests/read_ahead_kb).
    pub candidate: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nr_requests: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_ahead_kb: Option<u32>,
    /// One line: why.
    pub reason: String,
    /// True when some device does not hold this setting now (exit code 1).
    pub pending_change: bool,
}

fn describe(v: &WorkloadVerdict, o: Objective) -> String {
    let unit = v.throughput_unit.label();
    let pick = match o {
        Objective::Throughput => Some((unit.to_string(), v.throughput.get())),
        Objective::Latency => v.p99_us.as_ref().map(|c| ("p99".to_string(), c)),
        Objective::Balanced => v
            .balanced
            .as_ref()
            .map(|c| (format!("{unit} per ms of p99"), c.get())),
    };
    match pick {
        Some((n, c)) => format!(
            "{n} {} on {} ({:.2}× [{:.2}–{:.2}])",
            v.verdict.as_str(),
            v.workload,
            c.ratio.unwrap_or(f64::NAN),
            c.ci_low.unwrap_or(f64::NAN),
            c.ci_high.unwrap_or(f64::NAN)
        ),
        None => format!("{} on {}", v.verdict.as_str(), v.workload),
    }
}

/// Pick the recommendation. A candidate qualifies when it is better than the
/// baseline on at least one workload and worse on none; the most "better"
/// wins. With no qualifier, the baseline and every candidate that differs on
/// nothing are tied, and ties go to the kernel default of the top device's
/// class (else to the current setting): never change a setting on noise.
pub fn recommend(
    cands: &[Candidate],
    baseline: usize,
    verdicts: &[WorkloadVerdict],
    devices: &[Device],
    objective: Objective,
) -> Recommendation {
    let count = |label: &str, v: Verdict| {
        verdicts
            .iter()
            .filter(|x| x.candidate == label && x.verdict == v)
            .count()
    };
    let default = &devices[0].kernel_default;
    let qualified: Vec<(usize, usize)> = cands
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != baseline)
        .map(|(i, c)| {
            (
                i,
                count(&c.label, Verdict::Better),
                count(&c.label, Verdict::Worse),
            )
        })
        .filter(|&(_, b, w)| b > 0 && w == 0)
        .map(|(i, b, _)| (i, b))
        .collect();
    let base = &cands[baseline];
    let (pick, reason) = if let Some(max) = qualified.iter().map(|q| q.1).max() {
        let tied: Vec<usize> = qualified
            .iter()
            .filter(|q| q.1 == max)
            .map(|q| q.0)
            .collect();
        let i = tied
            .iter()
            .copied()
            .find(|&i| &cands[i].scheduler == default)
            .unwrap_or(tied[0]);
        let wins: Vec<String> = verdicts
            .iter()
            .filter(|v| v.candidate == cands[i].label && v.verdict == Verdict::Better)
            .map(|v| describe(v, objective))
            .collect();
        (
            i,
            format!(
                "{} vs {}: {}; worse on no workload",
                cands[i].label,
                base.label,
                wins.join(", ")
            ),
        )
    } else {
        // Say what lost, and by how much: "keeping the current setting" alone
        // hides that the alternative was measurably worse.
        let losses: Vec<String> = verdicts
            .iter()
            .filter(|v| v.verdict == Verdict::Worse)
            .map(|v| format!("{} {}", v.candidate, describe(v, objective)))
            .collect();
        let losses = if losses.is_empty() {
            String::new()
        } else {
            format!("; {}", losses.join(", "))
        };
        let tied: Vec<usize> = (0..cands.len())
            .filter(|&i| {
                i == baseline
                    || (count(&cands[i].label, Verdict::Better) == 0
                        && count(&cands[i].label, Verdict::Worse) == 0)
            })
            .collect();
        match tied.iter().copied().find(|&i| &cands[i].scheduler == default) {
            Some(i) => (
                i,
                format!(
                    "no candidate beat {} on any workload ({} objective); ties go to the kernel default for {} ({default}){losses}",
                    base.label,
                    objective_name(objective),
                    devices[0].name
                ),
            ),
            None => (
                baseline,
                format!(
                    "no candidate beat {} on any workload ({} objective); {}{losses}",
                    base.label,
                    objective_name(objective),
                    if base.matches(&devices[0]) {
                        "keeping the current setting".to_string()
                    } else {
                        format!(
                            "ties go to the baseline (the current {} was not a candidate)",
                            devices[0].scheduler
                        )
                    }
                ),
            ),
        }
    };
    let c = &cands[pick];
    Recommendation {
        scheduler: c.scheduler.clone(),
        candidate: c.label.clone(),
        nr_requests: c.nr_requests,
        read_ahead_kb: c.read_ahead_kb,
        reason,
        pending_change: devices.iter().any(|d| !c.matches(d)),
    }
}

fn objective_name(o: Objective) -> &'static str {
    match o {
        Objective::Throughput => "throughput",
        Objective::Latency => "latency",
        Objective::Balanced => "balanced",
    }
}

/// The run's noise, said plainly: CV of each metric across cells. IOPS
/// and tps are kept apart: a database's transaction rate is usually
/// noisier than raw I/O, and one median over both would hide which is.
#[derive(Debug, Clone, Serialize)]
pub struct Noise {
    /// Over bench cells; null when no bench workload ran.
    pub iops_cv_median: Option<f64>,
    pub iops_cv_max: Option<f64>,
    /// Over OLTP cells; absent when no OLTP workload ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tps_cv_median: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tps_cv_max: Option<f64>,
    pub p99_cv_median: Option<f64>,
    pub p99_cv_max: Option<f64>,
}

pub fn noise(cells: &[Cell]) -> Noise {
    let finite = |v: Vec<f64>| v.into_iter().filter(|v| v.is_finite()).collect::<Vec<_>>();
    let of_unit = |u: Unit| {
        finite(
            cells
                .iter()
                .filter(|c| c.throughput_unit == u)
                .map(|c| c.throughput.get().cv)
                .collect(),
        )
    };
    let p = finite(
        cells
            .iter()
            .filter_map(|c| c.p99_us.as_ref().map(|s| s.cv))
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::result::{JobResult, LatencyNs};

    fn cand(l: &str, s: &str) -> Candidate {
        Candidate {
            label: l.into(),
            scheduler: s.into(),
            nr_requests: None,
            read_ahead_kb: None,
        }
    }

    fn dev(sched: &str, default: &str) -> Device {
        Device {
            name: "loop0".into(),
            offered: vec!["none".into(), "mq-deadline".into()],
            scheduler: sched.into(),
            nr_requests: Some(128),
            read_ahead_kb: Some(128),
            rotational: Some(true),
            hw_queues: Some(1),
            kernel_default: default.into(),
        }
    }

    fn trial(round: u32, c: &str, w: &str, iops: f64, p99: f64) -> Trial {
        let r = WorkloadResult {
            name: w.into(),
            jobs: vec![JobResult {
                name: "j".into(),
                read: Some(DirStats {
                    total_ios: 1,
                    io_bytes: 4096,
                    iops,
                    bw_bytes: iops * 4096.0,
                    clat_ns: LatencyNs {
                        p99: (p99 * 1000.0) as u64,
                        n: 100,
                        ..Default::default()
                    },
                    ..Default::default()
                }),
                write: None,
                ..Default::default()
            }],
            ..Default::default()
        };
        Trial::from_result(round, 0, c, &r, vec![])
    }

    #[test]
    fn metrics_come_from_bench_results() {
        let t = trial(0, "none", "page-read", 1000.0, 250.0);
        assert_eq!(*t.throughput.get(), 1000.0);
        assert_eq!(t.throughput_unit, Unit::Iops);
        assert!((t.mib_s.unwrap() - 1000.0 * 4096.0 / 1048576.0).abs() < 1e-9);
        assert_eq!(t.p99_us, Some(250.0));
        assert_eq!(t.write_p99_us, None);
    }

    #[test]
    fn latency_objective_recommends_the_lower_p99() {
        let cands = [cand("none", "none"), cand("mq-deadline", "mq-deadline")];
        let ws = vec!["mixed".to_string()];
        let mut trials = vec![];
        for r in 0..5 {
            let j = r as f64;
            trials.push(trial(r, "none", "mixed", 1000.0 + j, 2000.0 + 30.0 * j));
            trials.push(trial(
                r,
                "mq-deadline",
                "mixed",
                1001.0 - j,
                1000.0 + 25.0 * j,
            ));
        }
        let v = verdicts(
            &trials,
            &cands,
            0,
            &ws,
            Objective::Latency,
            &CompareOpts::default(),
        );
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].verdict, Verdict::Better);
        assert_eq!(
            v[0].throughput.get().verdict,
            Verdict::NoSignificantDifference
        );
        let rec = recommend(&cands, 0, &v, &[dev("none", "none")], Objective::Latency);
        assert_eq!(rec.scheduler, "mq-deadline");
        assert!(rec.pending_change);
        assert!(rec.reason.contains("p99 better on mixed"), "{}", rec.reason);
        // The same trials with mq-deadline as the current setting: it is
        // kept, and the reason says how the alternative lost.
        let v = verdicts(
            &trials,
            &cands,
            1,
            &ws,
            Objective::Latency,
            &CompareOpts::default(),
        );
        assert_eq!(v[0].verdict, Verdict::Worse);
        let rec = recommend(
            &cands,
            1,
            &v,
            &[dev("mq-deadline", "none")],
            Objective::Latency,
        );
        assert_eq!(rec.scheduler, "mq-deadline");
        assert!(!rec.pending_change);
        assert!(
            rec.reason
                .contains("keeping the current setting; none p99 worse on mixed"),
            "{}",
            rec.reason
        );
        // Throughput objective: no difference → tie → kernel default (none).
        let v = verdicts(
            &trials,
            &cands,
            0,
            &ws,
            Objective::Throughput,
            &CompareOpts::default(),
        );
        let rec = recommend(&cands, 0, &v, &[dev("none", "none")], Objective::Throughput);
        assert_eq!(rec.scheduler, "none");
        assert!(!rec.pending_change);
        assert!(rec.reason.contains("kernel default"), "{}", rec.reason);
    }

    #[test]
    fn ties_go_to_the_kernel_default_not_the_baseline() {
        let cands = [cand("none", "none"), cand("mq-deadline", "mq-deadline")];
        let ws = vec!["page-read".to_string()];
        let mut trials = vec![];
        for r in 0..5 {
            let n = [1000.0, 1010.0, 990.0, 1005.0, 995.0][r as usize];
            trials.push(trial(r, "none", "page-read", n, 100.0));
            trials.push(trial(r, "mq-deadline", "page-read", n + 1.0, 100.0));
        }
        let v = verdicts(
            &trials,
            &cands,
            0,
            &ws,
            Objective::Balanced,
            &CompareOpts::default(),
        );
        assert_eq!(v[0].verdict, Verdict::NoSignificantDifference);
        // Current none on an SSD-class device whose default is mq-deadline.
        let rec = recommend(
            &cands,
            0,
            &v,
            &[dev("none", "mq-deadline")],
            Objective::Balanced,
        );
        assert_eq!(rec.scheduler, "mq-deadline");
        assert!(rec.pending_change);
    }

    fn oltp_trial(round: u32, c: &str, tps: f64, p99_ms: f64) -> Trial {
        use crate::oltp::{Fairness, Latency, QueryCounts};
        let r = OltpResult {
            workload: "oltp_read_write".into(),
            threads: 8,
            rand_seed: 1,
            queries: QueryCounts {
                read: 0,
                write: 0,
                other: 0,
                total: 0,
            },
            transactions: 100,
            tps,
            qps: tps * 20.0,
            ignored_errors: 0,
            errors_per_sec: 0.5,
            reconnects: 0,
            reconnects_per_sec: 0.0,
            total_time_s: 1.0,
            events: 100,
            latency_ms: Latency {
                min: 0.1,
                avg: 1.0,
                max: 9.0,
                percentile: 95,
                percentile_value: Some(p99_ms / 2.0),
                sum: 100.0,
                percentiles: [("99".to_string(), p99_ms)].into_iter().collect(),
            },
            fairness: Fairness {
                events_avg: 0.0,
                events_stddev: 0.0,
                exec_time_avg: 0.0,
                exec_time_stddev: 0.0,
            },
            intervals: vec![],
            server: None,
            status_samples: vec![],
        };
        Trial::from_oltp(round, 0, c, "oltp_read_write", &r, vec![])
    }

    #[test]
    fn oltp_throughput_is_tps_and_every_json_level_says_so() {
        let t = oltp_trial(0, "none", 800.0, 12.5);
        assert_eq!(*t.throughput.get(), 800.0);
        assert_eq!(t.p99_us, Some(12_500.0), "transaction p99, ms → µs");
        assert_eq!(t.mib_s, None);
        let j = serde_json::to_value(&t).unwrap();
        assert_eq!(j["throughput_unit"], "tps");
        assert_eq!(j["tps"], 800.0);
        assert!(
            j.get("iops").is_none(),
            "tps must not be reported as IOPS: {j}"
        );
        assert_eq!(j["qps"], 16_000.0);
        // A bench trial keeps its fields as before.
        let b = serde_json::to_value(trial(0, "none", "page-read", 1000.0, 250.0)).unwrap();
        assert_eq!(
            (b["iops"].as_f64(), &b["throughput_unit"]),
            (Some(1000.0), &serde_json::json!("iops"))
        );
        assert!(b.get("tps").is_none() && b.get("qps").is_none(), "{b}");

        let cands = [cand("none", "none"), cand("mq-deadline", "mq-deadline")];
        let ws = vec!["oltp_read_write".to_string(), "page-read".to_string()];
        let mut trials = vec![];
        for r in 0..5 {
            let j = r as f64;
            trials.push(oltp_trial(r, "none", 800.0 + j, 20.0 + j));
            trials.push(oltp_trial(r, "mq-deadline", 1000.0 + j, 10.0 + j));
            trials.push(trial(r, "none", "page-read", 1000.0 + j, 100.0));
            trials.push(trial(r, "mq-deadline", "page-read", 1000.0 - j, 100.0));
        }
        let v = verdicts(
            &trials,
            &cands,
            0,
            &ws,
            Objective::Balanced,
            &CompareOpts::default(),
        );
        let oltp = serde_json::to_value(&v[0]).unwrap();
        assert_eq!(oltp["workload"], "oltp_read_write");
        assert_eq!(oltp["throughput_unit"], "tps");
        assert_eq!(oltp["tps"]["verdict"], "better");
        assert_eq!(oltp["tps_per_p99_ms"]["verdict"], "better");
        assert!(oltp["mib_s"].is_null());
        assert!(oltp.get("iops").is_none() && oltp.get("iops_per_p99_ms").is_none());
        let bench = serde_json::to_value(&v[1]).unwrap();
        assert!(bench["iops"].is_object() && bench["iops_per_p99_ms"].is_object());
        assert!(bench["mib_s"].is_object());
        let rec = recommend(&cands, 0, &v, &[dev("none", "none")], Objective::Balanced);
        assert_eq!(rec.scheduler, "mq-deadline");
        assert!(
            rec.reason
                .contains("tps per ms of p99 better on oltp_read_write"),
            "{}",
            rec.reason
        );

        let c = cells(&trials, &cands, &ws, 200, 1);
        let cj = serde_json::to_value(&c[0]).unwrap();
        assert_eq!(cj["tps"]["n"], 5);
        assert!(cj["mib_s"].is_null());
        let n = noise(&c);
        assert!(n.tps_cv_median.is_some() && n.iops_cv_median.is_some());
    }

    #[test]
    fn noise_summary() {
        let cands = [cand("a", "none")];
        let ws = vec!["w".to_string()];
        let trials: Vec<Trial> = [100.0, 110.0, 90.0]
            .iter()
            .enumerate()
            .map(|(i, &x)| trial(i as u32, "a", "w", x, 10.0))
            .collect();
        let c = cells(&trials, &cands, &ws, 2000, 1);
        let n = noise(&c);
        assert!((n.iops_cv_median.unwrap() - 0.1).abs() < 1e-9);
        assert_eq!(n.tps_cv_median, None);
        assert_eq!(n.p99_cv_median, Some(0.0));
    }
}
