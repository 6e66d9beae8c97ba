//! What one measured window yields: a [`Trial`], in JSON units (latency in
//! ns, rates per second, throughput `{value, unit}`). No I/O here: the
//! workloads ([`super::workload`]) measure, this module only holds and
//! converts.

use super::diskstats::DeviceStats;
use crate::bench::result::{DirStats, WorkloadResult};
use crate::oltp::OltpResult;
use serde::Serialize;

/// What a workload's throughput counts. The analysis treats both alike
/// (higher is better, ratios are unitless); reports name the unit so a
/// transaction rate is never read as an I/O rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// I/O operations per second: bench presets and job files.
    Iops,
    /// Transactions per second: OLTP workloads (sysbench's "transactions").
    Tps,
}

impl Unit {
    /// As written in text reports and column headers.
    pub fn label(self) -> &'static str {
        match self {
            Unit::Iops => "IOPS",
            Unit::Tps => "tps",
        }
    }
}

/// A throughput whose unit varies between workloads: `{"value": 1234.5,
/// "unit": "iops"}` (docs/json.md's rule for quantities whose unit varies).
#[derive(Debug, Clone, Copy, Serialize, serde::Deserialize)]
pub struct Throughput {
    pub value: f64,
    pub unit: Unit,
}

/// What a workload reports about one measured window, before the sweep
/// adds where and when it ran. Latencies in ns, rates per second.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Measurement {
    /// IOPS (bench: all jobs, reads + writes) or tps (OLTP).
    pub throughput: f64,
    /// Bench: all jobs' bandwidth. OLTP: none (the device figures have bytes).
    pub bandwidth_bytes_per_s: Option<f64>,
    /// Bench: the reads' and the writes' share of `throughput` and of
    /// the bandwidth (None for a direction no job uses, and for OLTP). A
    /// mixed workload's 16 KiB reads and 1 MiB writes are different I/Os:
    /// reports show them apart, and the bytes are what the device's
    /// counters are held against (`bench::reach`).
    pub read_iops: Option<f64>,
    pub write_iops: Option<f64>,
    pub read_bytes_per_s: Option<f64>,
    pub write_bytes_per_s: Option<f64>,
    /// The latency that decides for the workload: bench, read p99 if it
    /// reads, else write p99 (max over jobs); OLTP, the transaction p99.
    /// None when nothing completed.
    pub p99_ns: Option<u64>,
    pub read_p99_ns: Option<u64>,
    pub write_p99_ns: Option<u64>,
    pub read_p50_ns: Option<u64>,
    /// OLTP: queries per second.
    pub queries_per_s: Option<f64>,
    /// OLTP: events re-run after an ignored error (deadlock, lock wait
    /// timeout, lost connection) per second: a trial full of them measured
    /// contention, not storage.
    pub errors_per_s: Option<f64>,
    /// Bench: directions (`read`, `write`) that completed no I/O in the
    /// window; their latencies above are the window length, a lower bound.
    pub starved: Vec<String>,
    /// Bench: the longest read and write of the window (max over jobs; the
    /// window length for a starved direction).
    pub read_max_ns: Option<u64>,
    pub write_max_ns: Option<u64>,
    /// Bench: directions that stalled: one of their I/Os waited longer than
    /// [`stall_limit_ns`], or none completed (every starved direction is
    /// stalled too).
    pub stalled: Vec<String>,
}

/// How long one I/O may wait before its window counts as stalled:
/// mq-deadline's default expiry (`read_expire` 500 ms, `write_expire`
/// 5 s), the kernel's own bound on how long that scheduler lets a request
/// starve behind others.
///
/// The mixed workload's reader has one read in flight, so its longest read
/// is the longest time no read completed. Measured on vda here
/// (bench/RESULTS.md, 2026-11-27 08:51): under `none` the longest read was
/// 0.46–2.6 s in 5 of 8 windows of 8 s while the read p99 stayed at
/// 0.33–0.41 ms, one read of ~30 000 being far below the 1 % a p99 can
/// see; under mq-deadline it never passed 21 ms. Only a window with no read
/// at all counted as starved, so sweeps that caught such stalls and sweeps
/// that did not gave opposite answers.
pub fn stall_limit_ns(read: bool) -> u64 {
    if read {
        500_000_000
    } else {
        5_000_000_000
    }
}

fn dirs(r: &WorkloadResult) -> impl Iterator<Item = (&DirStats, bool)> {
    r.jobs.iter().flat_map(|j| {
        j.read
            .iter()
            .map(|d| (d, true))
            .chain(j.write.iter().map(|d| (d, false)))
    })
}

fn max_ns(r: &WorkloadResult, read: bool, f: fn(&DirStats) -> u64) -> Option<u64> {
    dirs(r)
        .filter(|(d, is_read)| *is_read == read && d.clat_ns.n > 0)
        .map(|(d, _)| f(d))
        .max()
}

impl Measurement {
    /// A bench run: IOPS and bandwidth of every job and direction summed;
    /// latencies the worst job's (max over jobs).
    ///
    /// A direction that completed nothing in a timed window was starved
    /// (its I/O waited the whole window, e.g. reads behind a write flood
    /// under `none`): its latencies are the window length, a lower bound,
    /// and it is named in `starved`. Leaving them absent let a starved
    /// reader's trial fall back to the writer's p99 and rank as the best
    /// of the run (measured on vda here: reads at 0.3–1.3 ms p99 under
    /// none, with whole 4 s windows of no completed read between them).
    pub fn from_bench(r: &WorkloadResult) -> Measurement {
        let window_ns = r
            .time_based
            .then(|| r.jobs.iter().map(|j| j.runtime_s).fold(0.0, f64::max))
            .filter(|s| *s > 0.0)
            .map(|s| (s * 1e9) as u64);
        let starved = |read: bool| {
            window_ns.is_some() && dirs(r).any(|(d, is_read)| is_read == read && d.clat_ns.n == 0)
        };
        let lat = |read: bool, f: fn(&DirStats) -> u64| {
            let seen = max_ns(r, read, f);
            match window_ns.filter(|_| starved(read)) {
                Some(w) => Some(seen.map_or(w, |x| x.max(w))),
                None => seen,
            }
        };
        let read_p99_ns = lat(true, |d| d.clat_ns.p99);
        let write_p99_ns = lat(false, |d| d.clat_ns.p99);
        let read_max_ns = lat(true, |d| d.clat_ns.max);
        let write_max_ns = lat(false, |d| d.clat_ns.max);
        let stalled = |read: bool| {
            starved(read)
                || (if read { read_max_ns } else { write_max_ns })
                    .is_some_and(|m| m > stall_limit_ns(read))
        };
        let sum = |read: bool, f: fn(&DirStats) -> f64| {
            let mut v = dirs(r).filter(|(_, is_read)| *is_read == read).peekable();
            v.peek().is_some().then(|| v.map(|(d, _)| f(d)).sum())
        };
        Measurement {
            throughput: dirs(r).map(|(d, _)| d.iops).sum(),
            bandwidth_bytes_per_s: Some(dirs(r).map(|(d, _)| d.bw_bytes).sum()),
            read_iops: sum(true, |d| d.iops),
            write_iops: sum(false, |d| d.iops),
            read_bytes_per_s: sum(true, |d| d.bw_bytes),
            write_bytes_per_s: sum(false, |d| d.bw_bytes),
            p99_ns: read_p99_ns.or(write_p99_ns),
            read_p99_ns,
            write_p99_ns,
            read_p50_ns: lat(true, |d| d.clat_ns.p50),
            queries_per_s: None,
            errors_per_s: None,
            starved: [(true, "read"), (false, "write")]
                .into_iter()
                .filter(|(read, _)| starved(*read))
                .map(|(_, n)| n.to_string())
                .collect(),
            read_max_ns,
            write_max_ns,
            stalled: [(true, "read"), (false, "write")]
                .into_iter()
                .filter(|(read, _)| stalled(*read))
                .map(|(_, n)| n.to_string())
                .collect(),
        }
    }

    /// An OLTP run: transactions per second, and the transaction p99 from
    /// sysbench's histogram (ms there, ns here like every latency).
    pub fn from_oltp(r: &OltpResult) -> Measurement {
        let p99_ns = r
            .latency_ms
            .percentiles
            .get("99")
            .copied()
            .filter(|ms| r.events > 0 && ms.is_finite() && *ms >= 0.0)
            .map(|ms| (ms * 1e6).round() as u64);
        Measurement {
            throughput: r.tps,
            bandwidth_bytes_per_s: None,
            read_iops: None,
            write_iops: None,
            read_bytes_per_s: None,
            write_bytes_per_s: None,
            p99_ns,
            read_p99_ns: None,
            write_p99_ns: None,
            read_p50_ns: None,
            queries_per_s: Some(r.qps),
            errors_per_s: Some(r.errors_per_sec),
            starved: Vec::new(),
            read_max_ns: None,
            write_max_ns: None,
            stalled: Vec::new(),
        }
    }
}

/// iostat -x figures of one switched device over one measured window, in
/// JSON units (from /proc/diskstats deltas, see [`super::diskstats`]).
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct DeviceWindow {
    pub device: String,
    /// iostat `r/s`.
    pub reads_per_s: f64,
    /// iostat `w/s`.
    pub writes_per_s: f64,
    /// iostat `rkB/s`, in bytes.
    pub read_bytes_per_s: f64,
    /// iostat `wkB/s`, in bytes.
    pub write_bytes_per_s: f64,
    /// iostat `r_await`: mean time per completed read; absent without reads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_await_ns: Option<u64>,
    /// iostat `w_await`; absent without writes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_await_ns: Option<u64>,
    /// iostat `aqu-sz`: the average number of requests queued or in flight.
    pub avg_queue_length: f64,
    /// iostat `%util`: share of the window with at least one I/O in flight
    /// (not saturation on devices that serve several at once).
    pub util_pct: f64,
}

/// Milliseconds (diskstats' tick unit) to whole nanoseconds.
pub(super) fn ms_to_ns(ms: f64) -> u64 {
    (ms * 1e6).round().max(0.0) as u64
}

impl From<&DeviceStats> for DeviceWindow {
    fn from(s: &DeviceStats) -> DeviceWindow {
        DeviceWindow {
            device: s.device.clone(),
            reads_per_s: s.r_s,
            writes_per_s: s.w_s,
            read_bytes_per_s: s.rkb_s * 1024.0,
            write_bytes_per_s: s.wkb_s * 1024.0,
            read_await_ns: s.r_await.map(ms_to_ns),
            write_await_ns: s.w_await.map(ms_to_ns),
            avg_queue_length: s.aqu_sz,
            util_pct: s.util,
        }
    }
}

/// One measured window of one workload under one candidate.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Trial {
    pub round: u32,
    /// Position in the whole run (0-based), to see drift over time.
    pub seq: usize,
    pub candidate: String,
    pub workload: String,
    pub throughput: Throughput,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bandwidth_bytes_per_s: Option<f64>,
    /// Bench: the reads' and the writes' part of `throughput` (IOPS) and
    /// of the bandwidth; absent for a direction no job uses, and for OLTP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_iops_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_iops_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_bytes_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_bytes_per_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p99_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_p99_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_p99_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_p50_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queries_per_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors_per_s: Option<f64>,
    /// Directions that completed no I/O in the window (their latencies are
    /// the window length, a lower bound).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub starved: Vec<String>,
    /// Bench: the longest read / write of the window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_max_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_max_ns: Option<u64>,
    /// Directions with an I/O that waited longer than [`stall_limit_ns`]
    /// (or none completed): what the starvation veto counts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stalled: Vec<String>,
    /// Each switched device over the window.
    pub devices: Vec<DeviceWindow>,
    /// `--trace`: where the window's I/O spent its time, per device.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trace: Vec<crate::trace::split::TraceSplit>,
    /// Where the host's CPU time went over the window (steal above all).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_cpu: Option<crate::model::cpustat::HostCpu>,
}

impl Trial {
    pub fn new(
        round: u32,
        seq: usize,
        candidate: &str,
        workload: &str,
        unit: Unit,
        m: Measurement,
        devices: &[DeviceStats],
    ) -> Trial {
        Trial {
            round,
            seq,
            candidate: candidate.to_string(),
            workload: workload.to_string(),
            throughput: Throughput {
                value: m.throughput,
                unit,
            },
            bandwidth_bytes_per_s: m.bandwidth_bytes_per_s,
            read_iops_per_s: m.read_iops,
            write_iops_per_s: m.write_iops,
            read_bytes_per_s: m.read_bytes_per_s,
            write_bytes_per_s: m.write_bytes_per_s,
            p99_ns: m.p99_ns,
            read_p99_ns: m.read_p99_ns,
            write_p99_ns: m.write_p99_ns,
            read_p50_ns: m.read_p50_ns,
            queries_per_s: m.queries_per_s,
            errors_per_s: m.errors_per_s,
            starved: m.starved,
            read_max_ns: m.read_max_ns,
            write_max_ns: m.write_max_ns,
            stalled: m.stalled,
            devices: devices.iter().map(DeviceWindow::from).collect(),
            trace: Vec::new(),
            host_cpu: None,
        }
    }

    pub fn unit(&self) -> Unit {
        self.throughput.unit
    }
}

/// Per workload, whether its I/O reached the device its trials watched
/// (the first switched device, the top of the stack): the median over the
/// workload's trials of what the device counted against the median of
/// what the jobs moved, per direction ([`crate::bench::reach`]). OLTP
/// trials (no bytes of their own) and trials without device figures say
/// nothing.
pub fn few_device_bytes(
    trials: &[Trial],
    workloads: &[String],
) -> Vec<crate::bench::reach::NotOnDevice> {
    let mut out = Vec::new();
    for w in workloads {
        let mine: Vec<&Trial> = trials
            .iter()
            .filter(|t| &t.workload == w && !t.devices.is_empty())
            .collect();
        let Some(dev) = mine.first().map(|t| t.devices[0].device.clone()) else {
            continue;
        };
        let med = |f: &dyn Fn(&Trial) -> Option<f64>| {
            let v: Vec<f64> = mine.iter().filter_map(|t| f(t)).collect();
            if v.is_empty() {
                0.0
            } else {
                crate::stats::median(&v)
            }
        };
        let on_dev = |t: &Trial, read: bool| {
            t.devices.iter().find(|d| d.device == dev).map(|d| {
                if read {
                    d.read_bytes_per_s
                } else {
                    d.write_bytes_per_s
                }
            })
        };
        let issued = |read: bool| {
            med(&|t: &Trial| {
                if read {
                    t.read_bytes_per_s
                } else {
                    t.write_bytes_per_s
                }
            })
        };
        out.extend(crate::bench::reach::few_device_bytes(
            &dev,
            Some(w),
            (issued(true), med(&|t: &Trial| on_dev(t, true))),
            (issued(false), med(&|t: &Trial| on_dev(t, false))),
        ));
    }
    out
}

/// The figures a verdict can rest on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// IOPS (bench) or tps (OLTP): see [`Unit`].
    Throughput,
    Bandwidth,
    P99,
    /// Throughput per millisecond of p99 latency, per trial: the `balanced`
    /// objective's one metric. Testing throughput and p99 separately and
    /// taking either verdict would be two tests per workload and double the
    /// false-positive rate; a composite keeps one test per workload, so the
    /// Bonferroni split over workloads still bounds the whole run at alpha.
    Balanced,
}

impl Metric {
    pub fn direction(self) -> crate::stats::Direction {
        match self {
            Metric::P99 => crate::stats::Direction::LowerIsBetter,
            _ => crate::stats::Direction::HigherIsBetter,
        }
    }

    pub fn of(self, t: &Trial) -> Option<f64> {
        let x = t.throughput.value;
        match self {
            Metric::Throughput => Some(x),
            Metric::Bandwidth => t.bandwidth_bytes_per_s,
            Metric::P99 => t.p99_ns.map(|p| p as f64),
            Metric::Balanced => t.p99_ns.filter(|p| *p > 0).map(|p| x / (p as f64 / 1e6)),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::bench::result::{JobResult, LatencyNs};

    /// A bench trial of one reading job.
    pub(crate) fn bench_trial(round: u32, c: &str, w: &str, iops: f64, p99_us: f64) -> Trial {
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
                        p99: (p99_us * 1000.0) as u64,
                        p50: (p99_us * 500.0) as u64,
                        // The longest is at least the p99; at it, a test's
                        // window stalls exactly when its p99 says so.
                        max: (p99_us * 1000.0) as u64,
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
        Trial::new(round, 0, c, w, Unit::Iops, Measurement::from_bench(&r), &[])
    }

    /// A mixed trial: a 16 KiB reader and a 1 MiB writer, timed.
    pub(crate) fn mixed_trial(
        round: u32,
        c: &str,
        (read_iops, read_p99_us): (f64, f64),
        (write_iops, write_p99_us): (f64, f64),
    ) -> Trial {
        let dir = |iops: f64, bs: f64, p99_us: f64| DirStats {
            total_ios: iops as u64,
            iops,
            bw_bytes: iops * bs,
            clat_ns: LatencyNs {
                p99: (p99_us * 1000.0) as u64,
                p50: (p99_us * 300.0) as u64,
                max: (p99_us * 1000.0) as u64,
                n: iops as u64,
                ..Default::default()
            },
            ..Default::default()
        };
        let r = WorkloadResult {
            name: "mixed".into(),
            time_based: true,
            jobs: vec![
                JobResult {
                    name: "mixed-read".into(),
                    runtime_s: 1.0,
                    read: Some(dir(read_iops, 16384.0, read_p99_us)),
                    ..Default::default()
                },
                JobResult {
                    name: "mixed-write".into(),
                    runtime_s: 1.0,
                    write: Some(dir(write_iops, 1048576.0, write_p99_us)),
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        Trial::new(
            round,
            0,
            c,
            "mixed",
            Unit::Iops,
            Measurement::from_bench(&r),
            &[],
        )
    }

    pub(crate) fn oltp_result(tps: f64, p99_ms: f64) -> OltpResult {
        use crate::oltp::{Fairness, Latency, QueryCounts};
        OltpResult {
            started_at: String::new(),
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
            hist_counts: Vec::new(),
            histogram: None,
            error: None,
        }
    }

    pub(crate) fn oltp_trial(round: u32, c: &str, tps: f64, p99_ms: f64) -> Trial {
        Trial::new(
            round,
            0,
            c,
            "oltp_read_write",
            Unit::Tps,
            Measurement::from_oltp(&oltp_result(tps, p99_ms)),
            &[],
        )
    }

    /// The mixed workload's reader completing nothing in an 8 s window
    /// while the writer ran: its p99 is the window (a lower bound), never
    /// the writer's p99, and the trial ranks worse than any served one.
    #[test]
    fn a_starved_direction_is_the_window_not_the_other_direction() {
        let dir = |n: u64, p99: u64| DirStats {
            total_ios: n,
            iops: n as f64 / 8.0,
            clat_ns: LatencyNs {
                p99,
                p50: p99 / 2,
                n,
                ..Default::default()
            },
            ..Default::default()
        };
        let run = |reads: u64, read_p99: u64| WorkloadResult {
            name: "mixed".into(),
            time_based: true,
            jobs: vec![
                JobResult {
                    name: "mixed-read".into(),
                    runtime_s: 8.0,
                    read: Some(dir(reads, read_p99)),
                    ..Default::default()
                },
                JobResult {
                    name: "mixed-write".into(),
                    runtime_s: 8.0,
                    write: Some(dir(400, 20_000_000)),
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let starved = Measurement::from_bench(&run(0, 0));
        assert_eq!(starved.p99_ns, Some(8_000_000_000));
        assert_eq!(starved.read_p99_ns, Some(8_000_000_000));
        assert_eq!(starved.read_p50_ns, Some(8_000_000_000));
        assert_eq!(starved.write_p99_ns, Some(20_000_000));
        assert_eq!(starved.starved, vec!["read".to_string()]);
        let served = Measurement::from_bench(&run(5000, 900_000));
        assert_eq!(served.p99_ns, Some(900_000));
        assert!(served.starved.is_empty());
        let t = Trial::new(0, 0, "none", "mixed", Unit::Iops, starved, &[]);
        let v = serde_json::to_value(&t).unwrap();
        assert_eq!(v["starved"], serde_json::json!(["read"]));
        assert!(
            Metric::P99.of(&t).unwrap()
                > Metric::P99
                    .of(&Trial::new(0, 1, "x", "mixed", Unit::Iops, served, &[]))
                    .unwrap()
        );
        // A run bounded by io_size (not timed) has no window to bound it.
        let mut untimed = run(0, 0);
        untimed.time_based = false;
        let m = Measurement::from_bench(&untimed);
        assert_eq!(m.read_p99_ns, None);
        assert!(m.starved.is_empty());
    }

    /// The mixed workload's reader at depth 1 under `none` on vda
    /// (bench/RESULTS.md 2026-11-27 08:51): ~30 000 reads at 0.4 ms p99,
    /// one of which waited 2.64 s. The window is stalled, not starved; the
    /// p99 stays what it was. A longest read of 460 ms (the same run) is
    /// under the limit, and a write stalls only past 5 s.
    #[test]
    fn one_read_past_the_limit_stalls_the_window() {
        let dir = |p99: u64, max: u64| DirStats {
            total_ios: 30_000,
            iops: 3750.0,
            clat_ns: LatencyNs {
                p99,
                p50: p99 / 4,
                max,
                n: 30_000,
                ..Default::default()
            },
            ..Default::default()
        };
        let run = |read_max: u64, write_max: u64, timed: bool| WorkloadResult {
            name: "mixed".into(),
            time_based: timed,
            jobs: vec![
                JobResult {
                    name: "mixed-read".into(),
                    runtime_s: 8.0,
                    read: Some(dir(400_000, read_max)),
                    ..Default::default()
                },
                JobResult {
                    name: "mixed-write".into(),
                    runtime_s: 8.0,
                    write: Some(dir(20_000_000, write_max)),
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let m = Measurement::from_bench(&run(2_640_000_000, 90_000_000, true));
        assert_eq!(m.stalled, vec!["read".to_string()]);
        assert!(m.starved.is_empty());
        assert_eq!(m.read_p99_ns, Some(400_000));
        assert_eq!(
            (m.read_max_ns, m.write_max_ns),
            (Some(2_640_000_000), Some(90_000_000))
        );
        let t = Trial::new(0, 0, "none", "mixed", Unit::Iops, m, &[]);
        let v = serde_json::to_value(&t).unwrap();
        assert_eq!(v["stalled"], serde_json::json!(["read"]));
        assert_eq!(v["read_max_ns"], 2_640_000_000u64);
        assert!(v.get("starved").is_none());

        assert!(Measurement::from_bench(&run(460_000_000, 90_000_000, true))
            .stalled
            .is_empty());
        assert!(
            Measurement::from_bench(&run(1_000_000, 4_900_000_000, true))
                .stalled
                .is_empty()
        );
        assert_eq!(
            Measurement::from_bench(&run(1_000_000, 5_100_000_000, true)).stalled,
            vec!["write".to_string()]
        );
        // A starved direction is stalled too.
        let mut starved = run(0, 90_000_000, true);
        starved.jobs[0].read = Some(DirStats::default());
        let m = Measurement::from_bench(&starved);
        assert_eq!((m.starved.len(), m.stalled.len()), (1, 1));
        assert_eq!(m.read_max_ns, Some(8_000_000_000));
        // A read that waited is a stall in an untimed (io_size) run too,
        // where no window can starve.
        let m = Measurement::from_bench(&run(2_640_000_000, 0, false));
        assert_eq!((m.stalled.len(), m.starved.len()), (1, 0));
    }

    /// Page-cache reads: the jobs read 16 MB/s per trial, loop0 counted a
    /// few KiB; O_DIRECT reads: loop0 counted all of it. Per workload,
    /// medians over its trials; OLTP trials say nothing.
    #[test]
    fn a_workload_whose_device_saw_a_fraction_of_its_bytes_is_named() {
        let win = |read: f64| DeviceWindow {
            device: "loop0".into(),
            reads_per_s: read / 16384.0,
            writes_per_s: 0.0,
            read_bytes_per_s: read,
            write_bytes_per_s: 0.0,
            read_await_ns: None,
            write_await_ns: None,
            avg_queue_length: 0.0,
            util_pct: 0.0,
        };
        let mut trials = Vec::new();
        for r in 0..5 {
            let mut cached = bench_trial(r, "none", "cached", 1000.0, 100.0);
            cached.devices = vec![win(4096.0)];
            let mut direct = bench_trial(r, "none", "direct", 1000.0, 100.0);
            direct.devices = vec![win(1000.0 * 4096.0)];
            let mut oltp = oltp_trial(r, "none", 800.0, 10.0);
            oltp.devices = vec![win(0.0)];
            trials.extend([cached, direct, oltp]);
        }
        assert_eq!(trials[0].read_bytes_per_s, Some(1000.0 * 4096.0));
        assert_eq!(trials[0].write_bytes_per_s, None);
        let names: Vec<String> = ["cached", "direct", "oltp_read_write"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let f = few_device_bytes(&trials, &names);
        assert_eq!(
            f,
            vec![crate::bench::reach::NotOnDevice::FewDeviceBytes {
                device: "loop0".into(),
                workload: Some("cached".into()),
                direction: "read".into(),
                issued_bytes_per_s: 1000.0 * 4096.0,
                device_bytes_per_s: 4096.0,
            }]
        );
    }

    #[test]
    fn bench_metrics_are_in_json_units() {
        let t = bench_trial(0, "none", "page-read", 1000.0, 250.0);
        assert_eq!(t.throughput.value, 1000.0);
        assert_eq!(t.unit(), Unit::Iops);
        assert_eq!(t.bandwidth_bytes_per_s, Some(1000.0 * 4096.0));
        assert_eq!(t.p99_ns, Some(250_000));
        assert_eq!(t.read_p50_ns, Some(125_000));
        assert_eq!(t.write_p99_ns, None);
        let j = serde_json::to_value(&t).unwrap();
        assert_eq!(
            j["throughput"],
            serde_json::json!({"value": 1000.0, "unit": "iops"})
        );
        assert_eq!(j["p99_ns"], 250_000);
        assert!(j.get("write_p99_ns").is_none(), "absent, never null: {j}");
        assert!(j.get("queries_per_s").is_none());
        // The balanced composite: IOPS per ms of p99.
        assert_eq!(Metric::Balanced.of(&t), Some(1000.0 / 0.25));
    }

    #[test]
    fn oltp_throughput_is_tps_and_latency_ns() {
        let t = oltp_trial(0, "none", 800.0, 12.5);
        assert_eq!(t.throughput.value, 800.0);
        assert_eq!(t.p99_ns, Some(12_500_000), "transaction p99, ms → ns");
        assert_eq!(t.bandwidth_bytes_per_s, None);
        let j = serde_json::to_value(&t).unwrap();
        assert_eq!(j["throughput"]["unit"], "tps");
        assert_eq!(j["queries_per_s"], 16_000.0);
        assert_eq!(j["errors_per_s"], 0.5);
        assert!(j.get("iops").is_none() && j.get("bandwidth_bytes_per_s").is_none());
    }

    #[test]
    fn device_windows_use_json_units() {
        let s = DeviceStats {
            device: "vda".into(),
            r_s: 100.0,
            w_s: 400.0,
            rkb_s: 800.0,
            wkb_s: 1600.0,
            r_await: Some(2.5),
            w_await: None,
            aqu_sz: 1.5,
            util: 50.0,
        };
        let j = serde_json::to_value(DeviceWindow::from(&s)).unwrap();
        assert_eq!(j["read_bytes_per_s"], 800.0 * 1024.0);
        assert_eq!(j["read_await_ns"], 2_500_000);
        assert!(j.get("write_await_ns").is_none());
        assert_eq!(j["avg_queue_length"], 1.5);
        assert_eq!(j["util_pct"], 50.0);
        let keys: Vec<&String> = j.as_object().unwrap().keys().collect();
        assert!(
            keys.iter().all(|k| !k.contains('/') && !k.contains('-')),
            "{keys:?}"
        );
    }
}
