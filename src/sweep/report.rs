//! The typed result of `innotune sweep` (JSON schema: docs/json-sweep.md)
//! and the document it turns into for text and markdown (and, later, the
//! HTML report's charts, from the [`Series`] blocks).

use super::cli::Objective;
use super::plan::{Candidate, Plan};
use super::recommend::{Action, Recommendation};
use super::space::FilePlan;
use super::target::Device;
use super::trials::{Trial, Unit};
use super::verdicts::{Cell as Result_, Noise, WorkloadVerdict};
use crate::error::exit;
use crate::export::doc::{
    Cell, ChartKind, Column, Document, KeyValues, Line, Point, Series, Table, Tone,
};
use crate::export::text::fmt_num;
use crate::journal::{Outcome, Restored};
use crate::stats::Verdict;
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
    pub oltp: Option<super::server::OltpSetup>,
    /// What was put back at the end.
    pub restored: Vec<Restored>,
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
                "sequential (Pocock-type alpha spending, {first}): ran all {} rounds (the budget): not every verdict crossed its boundary",
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
        document(self)
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

fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

/// How latencies of one table are shown: µs, or ms once they reach 10 ms.
#[derive(Clone, Copy)]
struct LatencyUnit {
    name: &'static str,
    ns: f64,
}

/// Windows of one candidate, workload and direction that starved (nothing
/// completed) or stalled (one I/O past the stall limit), for the notes.
#[derive(Default)]
struct Stalls {
    cand: String,
    work: String,
    dir: &'static str,
    /// Windows of this candidate on this workload.
    n: usize,
    starved: usize,
    stalled: usize,
    longest: u64,
}

fn latency_unit(max_ns: u64) -> LatencyUnit {
    if max_ns >= 10_000_000 {
        LatencyUnit {
            name: "ms",
            ns: 1e6,
        }
    } else {
        LatencyUnit {
            name: "µs",
            ns: 1e3,
        }
    }
}

fn ci(lo: f64, hi: f64) -> String {
    format!("{}–{}", fmt_num(lo), fmt_num(hi))
}

fn verdict_cell(v: Verdict) -> Cell {
    let tone = match v {
        Verdict::Better => Tone::Good,
        Verdict::Worse => Tone::Bad,
        Verdict::NoSignificantDifference => Tone::Plain,
    };
    Cell::text(v.as_str()).tone(tone)
}

fn ratio(c: &crate::stats::Comparison) -> String {
    match (c.ratio, c.ci_low, c.ci_high) {
        (Some(x), Some(l), Some(h)) => format!("{x:.2}× [{l:.2}–{h:.2}], p = {:.3}", c.p_value),
        _ => "no ratio".into(),
    }
}

fn document(r: &SweepReport) -> Document {
    let mut d = Document::new(format!("innotune sweep {}", r.path.display()));
    d.key_values(overview(r));
    for w in &r.workloads {
        let cells: Vec<&Result_> = r.results.iter().filter(|c| &c.workload == w).collect();
        if cells.is_empty() {
            continue;
        }
        let unit = cells[0].throughput.unit;
        let lat = latency_unit(
            cells
                .iter()
                .filter_map(|c| c.p99_ns.as_ref().map(|p| p.median))
                .max()
                .unwrap_or(0),
        );
        d.table(workload_table(r, w, &cells, unit, lat));
        for s in workload_series(w, &cells, unit, lat) {
            d.series(s);
        }
    }
    if let Some(t) = trace_table(r) {
        d.table(t);
    }
    let alpha = 0.05 / r.workloads.len().max(1) as f64;
    if let Some(sq) = &r.sequential {
        let levels: Vec<String> = sq
            .boundaries
            .iter()
            .filter(|l| l.level > 0.0)
            .map(|l| format!("round {} p ≤ {}", l.round, fmt_num(l.level)))
            .collect();
        d.paragraph(format!(
            "Sequential design: after each round a verdict needs the rank test's p at most that look's level ({}; Pocock-type spending of {} = 0.05 over {} workload{} across all looks), the ratio's exact interval at 1 − level (the same test inverted) to exclude 1, and an effect of at least {}; a verdict reached at a look is kept; the {} objective decides. From the first look the sweep also stops when the answer is settled: every other candidate has a kept verdict against it or stalled a direction where the current setting never did, so no later round could make it the recommendation.",
            if levels.is_empty() { "no look can cross".to_string() } else { levels.join(", ") },
            fmt_num(alpha),
            r.workloads.len(),
            if r.workloads.len() == 1 { "" } else { "s" },
            pct(r.min_effect),
            objective_name(r.objective)
        ));
    } else {
        d.paragraph(format!(
        "Verdicts need an exact rank test p ≤ {3} (0.05 over {4} workload{5}), the ratio to {1} (median of all trial ratios) with its exact {0} interval (the same test inverted) excluding 1, and an effect of at least {2}; the {6} objective decides.",
        pct(1.0 - alpha),
        r.baseline,
        pct(r.min_effect),
        fmt_num(alpha),
        r.workloads.len(),
        if r.workloads.len() == 1 { "" } else { "s" },
        objective_name(r.objective)
    ));
    }
    // A pairwise comparison of the same two candidates on the same workload
    // as a verdict against the baseline (with --choose, when the baseline is
    // one of them) says the same thing: note it once.
    let same = |a: &WorkloadVerdict, b: &WorkloadVerdict| {
        a.workload == b.workload
            && ((a.candidate == b.candidate && a.baseline == b.baseline)
                || (a.candidate == b.baseline && a.baseline == b.candidate))
    };
    let pairwise = r
        .pairwise
        .iter()
        .filter(|p| !r.verdicts.iter().any(|v| same(v, p)));
    for v in r
        .verdicts
        .iter()
        .chain(pairwise)
        .filter(|v| v.verdict != Verdict::NoSignificantDifference)
    {
        let tone = if v.verdict == Verdict::Better {
            Tone::Good
        } else {
            Tone::Warn
        };
        let mut parts = vec![format!(
            "{} {}",
            v.unit().label(),
            ratio(&v.throughput.comparison)
        )];
        if let Some(p) = &v.p99 {
            parts.push(format!("p99 {}", ratio(p)));
        }
        let at = v
            .sequential
            .map(|s| format!(", reached at {}", s.describe()))
            .unwrap_or_default();
        d.note(
            tone,
            format!(
                "{} vs {} on {}: {}{at} ({})",
                v.candidate,
                v.baseline,
                v.workload,
                v.verdict.as_str(),
                parts.join("; ")
            ),
        );
    }
    // Stalled trials: a direction that completed nothing in its window
    // counts at the window length, and one I/O that waited past the stall
    // limit hides below the p99; say so, since a median hides both.
    let mut stalls: Vec<Stalls> = Vec::new();
    for t in &r.trials {
        for dir in ["read", "write"] {
            // A starved direction is listed as stalled too: count it once,
            // as starved.
            let starved = t.starved.iter().any(|d| d == dir);
            if !starved && !t.stalled.iter().any(|d| d == dir) {
                continue;
            }
            let i = match stalls
                .iter()
                .position(|s| s.cand == t.candidate && s.work == t.workload && s.dir == dir)
            {
                Some(i) => i,
                None => {
                    let n = r
                        .trials
                        .iter()
                        .filter(|u| u.candidate == t.candidate && u.workload == t.workload)
                        .count();
                    stalls.push(Stalls {
                        cand: t.candidate.clone(),
                        work: t.workload.clone(),
                        dir,
                        n,
                        ..Default::default()
                    });
                    stalls.len() - 1
                }
            };
            let s = &mut stalls[i];
            if starved {
                s.starved += 1;
            } else {
                s.stalled += 1;
                let m = if dir == "read" {
                    t.read_max_ns
                } else {
                    t.write_max_ns
                };
                s.longest = s.longest.max(m.unwrap_or(0));
            }
        }
    }
    for s in stalls {
        let Stalls {
            cand: c,
            work: w,
            dir,
            n,
            ..
        } = &s;
        if s.starved > 0 {
            d.note(
                Tone::Warn,
                format!(
                    "{w} under {c}: no {dir} completed in {} of {n} trial windows (starved; counted at the window length, a lower bound)",
                    s.starved
                ),
            );
        }
        if s.stalled > 0 {
            d.note(
                Tone::Warn,
                format!(
                    "{w} under {c}: a {dir} waited over {} in {} of {n} trial windows (longest {}), a stall the p99 does not show",
                    crate::units::fmt_ns(super::trials::stall_limit_ns(*dir == "read")),
                    s.stalled,
                    crate::units::fmt_ns(s.longest)
                ),
            );
        }
    }
    // Steal: on a shared VM the hypervisor's share moves every figure. The
    // design (rounds, shuffled order, paired by round) turns it into wider
    // CIs rather than a bias, so it explains a missing verdict, not a wrong one.
    if let (Some(k), Some(max)) = (r.noise.steal_trials, r.noise.steal_max) {
        if k > 0 {
            d.note(
                Tone::Warn,
                format!(
                    "the hypervisor took {} % or more of this VM's CPU time in {k} of {} trial windows (steal, max {}): \
                     it widens the confidence intervals; a difference that did not reach a verdict may at a quieter time",
                    crate::model::cpustat::STEAL_WARN_PCT,
                    r.trials.iter().filter(|t| t.host_cpu.is_some()).count(),
                    pct(max)
                ),
            );
        }
    }
    let rec = &r.recommendation;
    let mut kv = KeyValues::new();
    let exit = if rec.pending_change {
        "a pending change, exit 1"
    } else {
        "nothing to change, exit 0"
    };
    kv.add(
        "Recommendation",
        Cell::text(format!("{} ({exit})", rec.headline())).tone(match rec.action {
            Action::Change => Tone::Strong,
            Action::Keep => Tone::Good,
        }),
    );
    kv.add("Why", rec.reason.clone());
    d.key_values(kv);
    if !r.restored.is_empty() {
        d.table(restored_table(&r.restored));
    }
    d
}

fn objective_name(o: Objective) -> &'static str {
    match o {
        Objective::Throughput => "throughput",
        Objective::Latency => "latency",
        Objective::Balanced => "balanced",
    }
}

fn overview(r: &SweepReport) -> KeyValues {
    let mut kv = KeyValues::new();
    kv.add("Stack", r.stack.join(" → "));
    let devs: Vec<String> = r
        .devices
        .iter()
        .map(|d| format!("{} (was {})", d.name, d.scheduler))
        .collect();
    kv.add("Switched", devs.join(", "));
    let labels: Vec<&str> = r.candidates.iter().map(|c| c.label.as_str()).collect();
    let base = if r.recommendation.current_measured {
        format!("{} holds the current setting", r.baseline)
    } else {
        format!(
            "{} is the reference: the current setting was not a candidate",
            r.baseline
        )
    };
    kv.add("Candidates", format!("{} ({base})", labels.join(", ")));
    kv.add("Workloads", r.workloads.join(", "));
    kv.add(
        "Objective",
        format!(
            "{}, minimum effect {}{}",
            objective_name(r.objective),
            pct(r.min_effect),
            if r.choose { ", --choose" } else { "" }
        ),
    );
    kv.add("Plan", r.plan.note.clone());
    if let Some(sq) = &r.sequential {
        kv.add("Design", sq.describe());
    }
    kv.add("Files", r.files.describe());
    if let Some(o) = &r.oltp {
        let data = o
            .dataset_bytes
            .map(|b| format!(" ≈ {}", crate::units::fmt_size(b)))
            .unwrap_or_default();
        kv.add(
            "OLTP",
            format!(
                "{} on {} in {} (profile {}, buffer pool {}; {} × {} rows{data}, loaded in {:.0}s; {} threads); throughput in transactions/s (tps), p99 the transaction's",
                o.workloads.join(", "),
                o.server_version,
                o.sandbox_dir.display(),
                o.profile,
                crate::units::fmt_size(o.buffer_pool_bytes),
                o.tables,
                o.table_size,
                o.prepare_s,
                o.threads
            ),
        );
    }
    kv.add(
        "Ran",
        format!(
            "{} trials in {} (seed {})",
            r.trials_run,
            super::plan::fmt_d(std::time::Duration::from_secs_f64(r.elapsed_s.max(0.0))),
            r.seed
        ),
    );
    let n = &r.noise;
    let cv = |name: &str, m: Option<f64>, x: Option<f64>| match (m, x) {
        (Some(m), Some(x)) => Some(format!("{name} CV median {} (max {})", pct(m), pct(x))),
        _ => None,
    };
    let noise: Vec<String> = [
        cv("IOPS", n.iops_cv_median, n.iops_cv_max),
        cv("tps", n.tps_cv_median, n.tps_cv_max),
        cv("p99", n.p99_cv_median, n.p99_cv_max),
        match (n.steal_median, n.steal_max) {
            (Some(m), Some(x)) => {
                Some(format!("host CPU steal median {} (max {})", pct(m), pct(x)))
            }
            _ => None,
        },
    ]
    .into_iter()
    .flatten()
    .collect();
    if !noise.is_empty() {
        kv.add("Noise", noise.join(", "));
    }
    kv
}

/// `--trace`: per workload, candidate, device and direction, the medians
/// over trials of where the I/O's time went.
fn trace_table(r: &SweepReport) -> Option<Table> {
    use crate::stats::median;
    let mut keys: Vec<(String, String, String, &'static str)> = Vec::new();
    for t in &r.trials {
        for s in &t.trace {
            let k = (
                t.workload.clone(),
                t.candidate.clone(),
                s.device.clone(),
                s.direction.label(),
            );
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    if keys.is_empty() {
        return None;
    }
    let mut tab = Table::new(vec![
        Column::text("workload"),
        Column::text("candidate"),
        Column::text("device"),
        Column::text("I/O"),
        Column::num("Q2C p99", Some("µs")),
        Column::num("I2D avg", Some("µs")),
        Column::num("D2C avg", Some("µs")),
        Column::num("D2C p99", Some("µs")),
        Column::num("scheduler", Some("%")),
        Column::num("device", Some("%")),
    ])
    .titled("Where the time went (--trace; medians over trials)");
    for (w, c, dev, dir) in keys {
        let splits: Vec<&crate::trace::split::TraceSplit> = r
            .trials
            .iter()
            .filter(|t| t.workload == w && t.candidate == c)
            .flat_map(|t| t.trace.iter())
            .filter(|s| s.device == dev && s.direction.label() == dir)
            .collect();
        let med = |f: &dyn Fn(&crate::trace::split::TraceSplit) -> Option<f64>| {
            let xs: Vec<f64> = splits.iter().filter_map(|s| f(s)).collect();
            if xs.is_empty() {
                Cell::text("-").tone(Tone::Dim)
            } else {
                let m = median(&xs);
                Cell::num(m, fmt_num(m))
            }
        };
        let us = |ns: u64| Some(ns as f64 / 1000.0);
        tab.row(vec![
            Cell::text(w.clone()),
            Cell::text(c.clone()),
            Cell::text(dev.clone()),
            Cell::text(dir),
            med(&|s| us(s.q2c_p99_ns)),
            med(&|s| s.i2d_avg_ns.and_then(us)),
            med(&|s| us(s.d2c_avg_ns)),
            med(&|s| us(s.d2c_p99_ns)),
            med(&|s| Some(s.scheduler_pct)),
            med(&|s| Some(s.device_pct)),
        ]);
    }
    Some(tab)
}

fn workload_table(
    r: &SweepReport,
    w: &str,
    cells: &[&Result_],
    unit: Unit,
    lat: LatencyUnit,
) -> Table {
    let has_bw = cells.iter().any(|c| c.bandwidth_bytes_per_s.is_some());
    let mut cols = vec![
        Column::text("candidate"),
        Column::num("throughput", Some(unit.label())),
        Column::num("95% CI", Some(unit.label())),
    ];
    if has_bw {
        cols.push(Column::num("bandwidth", Some("MiB/s")));
    }
    cols.push(Column::num("p99", Some(lat.name)));
    cols.push(Column::num("95% CI", Some(lat.name)));
    cols.push(Column::text(format!("vs {}", r.baseline)));
    if r.sequential.is_some() {
        cols.push(Column::text("reached"));
    }
    let mut t = Table::new(cols).titled(format!("{w} ({})", unit.label()));
    for c in cells {
        let s = &c.throughput.summary;
        let mut row = vec![
            Cell::text(c.candidate.clone()),
            Cell::num(s.median, fmt_num(s.median)),
            Cell::text(ci(s.ci_low, s.ci_high)),
        ];
        if has_bw {
            row.push(match &c.bandwidth_bytes_per_s {
                Some(b) => {
                    let mib = b.median / (1024.0 * 1024.0);
                    Cell::num(mib, fmt_num(mib))
                }
                None => Cell::empty(),
            });
        }
        match &c.p99_ns {
            Some(p) => {
                let m = p.median as f64 / lat.ns;
                row.push(Cell::num(m, fmt_num(m)));
                row.push(Cell::text(ci(
                    p.ci_low as f64 / lat.ns,
                    p.ci_high as f64 / lat.ns,
                )));
            }
            None => {
                row.push(Cell::text("-"));
                row.push(Cell::empty());
            }
        }
        let verdict = r
            .verdicts
            .iter()
            .find(|v| v.candidate == c.candidate && v.workload == w);
        row.push(if c.candidate == r.baseline {
            Cell::text("baseline").tone(Tone::Dim)
        } else {
            match verdict {
                Some(v) => verdict_cell(v.verdict),
                None => Cell::text("-"),
            }
        });
        if r.sequential.is_some() {
            row.push(
                match verdict
                    .and_then(|v| v.sequential)
                    .filter(|_| c.candidate != r.baseline)
                {
                    Some(s) => Cell::text(s.describe()),
                    None => Cell::empty(),
                },
            );
        }
        t.row(row);
    }
    t
}

/// Bars with 95% CIs per candidate: throughput, and p99 when there is one.
fn workload_series(w: &str, cells: &[&Result_], unit: Unit, lat: LatencyUnit) -> Vec<Series> {
    let bars = |title: String, y: &str, y_unit: &str, points: Vec<Point>| Series {
        title,
        kind: ChartKind::Bar,
        x_label: "candidate".into(),
        y_label: y.into(),
        y_unit: Some(y_unit.into()),
        lines: vec![Line {
            name: "median".into(),
            points,
        }],
        // The workload's table has these numbers.
        table_fallback: false,
    };
    let mut out = vec![bars(
        format!("{w}: throughput by candidate (median, 95% CI)"),
        "throughput",
        unit.label(),
        cells
            .iter()
            .map(|c| {
                let s = &c.throughput.summary;
                Point {
                    x: c.candidate.clone(),
                    y: s.median,
                    ci: Some((s.ci_low, s.ci_high)),
                }
            })
            .collect(),
    )];
    let p99: Vec<Point> = cells
        .iter()
        .filter_map(|c| {
            let p = c.p99_ns.as_ref()?;
            Some(Point {
                x: c.candidate.clone(),
                y: p.median as f64 / lat.ns,
                ci: Some((p.ci_low as f64 / lat.ns, p.ci_high as f64 / lat.ns)),
            })
        })
        .collect();
    if !p99.is_empty() {
        out.push(bars(
            format!("{w}: p99 latency by candidate (median, 95% CI)"),
            "p99",
            lat.name,
            p99,
        ));
    }
    out
}

fn restored_table(restored: &[Restored]) -> Table {
    let mut t = Table::new(vec![
        Column::text("kind"),
        Column::text("path"),
        Column::text("put back"),
        Column::text("outcome"),
    ])
    .titled("Restored");
    for x in restored {
        let tone = match x.outcome {
            Outcome::Failed { .. } | Outcome::Conflict { .. } => Tone::Bad,
            _ => Tone::Plain,
        };
        t.row(vec![
            Cell::text(x.kind.as_ref()),
            Cell::text(x.path.display().to_string()),
            Cell::text(x.original.clone().unwrap_or_else(|| "-".into())),
            Cell::text(x.outcome.to_string()).tone(tone),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::super::plan;
    use super::super::recommend::{current, recommend};
    use super::super::space::{FilePlan, Sizing};
    use super::super::trials::tests::{bench_trial, oltp_trial};
    use super::super::verdicts::{cells, noise, tests::cand, verdicts};
    use super::*;
    use crate::export::doc::Block;
    use crate::export::{Exporter, Report};
    use crate::stats::CompareOpts;

    fn report() -> SweepReport {
        let cands = vec![cand("none", "none"), cand("mq-deadline", "mq-deadline")];
        let ws = vec!["mixed".to_string(), "oltp_read_write".to_string()];
        let mut trials = vec![];
        for r in 0..5u32 {
            let j = r as f64;
            trials.push(bench_trial(
                r,
                "none",
                "mixed",
                1000.0 + j,
                20_000.0 + 300.0 * j,
            ));
            trials.push(bench_trial(
                r,
                "mq-deadline",
                "mixed",
                1001.0 - j,
                900.0 + 25.0 * j,
            ));
            trials.push(oltp_trial(r, "none", 800.0 + j, 20.0 + j));
            trials.push(oltp_trial(r, "mq-deadline", 805.0 - j, 20.0 - j / 2.0));
        }
        let devices = vec![Device {
            name: "loop0".into(),
            offered: vec!["none".into(), "mq-deadline".into()],
            scheduler: "none".into(),
            nr_requests: Some(128),
            read_ahead_kb: Some(128),
            rotational: Some(false),
            hw_queues: Some(1),
            kernel_default: "none".into(),
            class_schedulers: vec!["none".into(), "mq-deadline".into()],
        }];
        let o = Objective::Latency;
        let copts = CompareOpts::default();
        let base = current(&cands, &devices).unwrap();
        let results = cells(&trials, &cands, &ws, 500, 1);
        let vs = verdicts(&trials, &cands, base, &ws, o, &copts);
        let recommendation = recommend(&cands, base, &vs, &[], &trials, &devices, o, false);
        SweepReport {
            path: "/mnt/x".into(),
            stack: vec!["loop0".into()],
            devices,
            baseline: cands[base].label.clone(),
            candidates: cands,
            workloads: ws,
            objective: o,
            min_effect: 0.03,
            choose: false,
            seed: 1,
            resamples: 500,
            plan: plan::plan(&plan::Request {
                rounds: 5,
                trial: std::time::Duration::from_secs(1),
                warmup: Default::default(),
                budget: None,
                sequential: false,
                workloads: &["mixed".to_string(), "oltp_read_write".to_string()],
                candidates: &["none".to_string(), "mq-deadline".to_string()],
                priority: &[],
            })
            .unwrap(),
            files: FilePlan {
                work_dir: "/mnt/x/.innotune-sweep.1".into(),
                free_bytes: Some(10 << 30),
                need_bytes: 2 << 30,
                oltp_estimate_bytes: 0,
                sizing: Sizing::Workloads,
                workloads: vec![],
            },
            trials_run: trials.len(),
            elapsed_s: 179.6,
            rounds_s: 170.0,
            sequential: None,
            noise: noise(&results),
            results,
            verdicts: vs,
            pairwise: vec![],
            recommendation,
            oltp: None,
            restored: vec![],
            trials,
        }
    }

    fn render(r: &SweepReport, e: &dyn Exporter) -> String {
        let mut out = Vec::new();
        e.export(&r.document(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_pairwise_duplicate_of_a_verdict_is_noted_once() {
        let mut r = report();
        let v = r
            .verdicts
            .iter()
            .find(|v| v.verdict != Verdict::NoSignificantDifference)
            .expect("the sample report has a verdict")
            .clone();
        let key = format!("{} vs {} on {}", v.candidate, v.baseline, v.workload);
        r.pairwise = vec![v];
        let doc = format!("{:?}", r.document());
        assert_eq!(doc.matches(&key).count(), 1, "{doc}");
    }

    #[test]
    fn starved_trials_get_a_note() {
        let mut r = report();
        let plain = format!("{:?}", r.document());
        assert!(!plain.contains("starved"), "{plain}");
        let (c, w) = (r.trials[0].candidate.clone(), r.trials[0].workload.clone());
        let n = r
            .trials
            .iter()
            .filter(|t| t.candidate == c && t.workload == w)
            .count();
        r.trials[0].starved = vec!["read".into()];
        let doc = format!("{:?}", r.document());
        let want = format!("{w} under {c}: no read completed in 1 of {n} trial windows");
        assert!(doc.contains(&want), "{want} not in {doc}");
        // Listed as stalled too (as from_bench does), it is still one
        // starved window and no stall note.
        r.trials[0].stalled = vec!["read".into()];
        let doc = format!("{:?}", r.document());
        assert!(doc.contains(&want) && !doc.contains("waited over"), "{doc}");
        // Two windows whose longest read passed the limit: a stall note
        // with the longest of them.
        let more: Vec<usize> = (1..r.trials.len())
            .filter(|&i| r.trials[i].candidate == c && r.trials[i].workload == w)
            .take(2)
            .collect();
        for (&i, ms) in more.iter().zip([700u64, 2640]) {
            r.trials[i].stalled = vec!["read".into()];
            r.trials[i].read_max_ns = Some(ms * 1_000_000);
        }
        let doc = format!("{:?}", r.document());
        let want = format!(
            "{w} under {c}: a read waited over 500 ms in 2 of {n} trial windows (longest 2.64 s), a stall the p99 does not show"
        );
        assert!(doc.contains(&want), "{want} not in {doc}");
    }

    #[test]
    fn steal_is_summed_up_under_noise_and_warned_about_from_five_percent() {
        use crate::model::cpustat::HostCpu;
        let mut r = report();
        let quiet = format!("{:?}", r.document());
        assert!(!quiet.contains("steal"), "no host_cpu, no steal: {quiet}");
        let n = r.trials.len();
        for (i, t) in r.trials.iter_mut().enumerate() {
            // Every trial 1 % steal, two of them 5 % and 12 %.
            let steal = match i {
                0 => 12.0,
                1 => 5.0,
                _ => 1.0,
            };
            t.host_cpu = Some(HostCpu {
                busy_pct: 50.0,
                iowait_pct: 10.0,
                steal_pct: steal,
                idle_pct: 40.0 - steal,
            });
        }
        r.noise = r.noise.clone().with_steal(&r.trials);
        assert_eq!(r.noise.steal_trials, Some(2));
        assert!((r.noise.steal_max.unwrap() - 0.12).abs() < 1e-12);
        assert!((r.noise.steal_median.unwrap() - 0.01).abs() < 1e-12);
        let doc = format!("{:?}", r.document());
        assert!(
            doc.contains("host CPU steal median 1.0% (max 12.0%)"),
            "{doc}"
        );
        let want = format!("5 % or more of this VM's CPU time in 2 of {n} trial windows");
        assert!(doc.contains(&want), "{want} not in {doc}");
        let j = serde_json::to_value(&r.noise).unwrap();
        assert_eq!(j["steal_trials"], 2);
        assert!((j["steal_max_pct"].as_f64().unwrap() - 12.0).abs() < 1e-9);
        // Below the threshold everywhere: the figure stays, the warning goes.
        for t in r.trials.iter_mut() {
            t.host_cpu.as_mut().unwrap().steal_pct = 4.9;
        }
        r.noise = noise(&r.results).with_steal(&r.trials);
        assert_eq!(r.noise.steal_trials, Some(0));
        let doc = format!("{:?}", r.document());
        assert!(doc.contains("host CPU steal median 4.9%"), "{doc}");
        assert!(!doc.contains("of this VM's CPU time"), "{doc}");
    }

    #[test]
    fn document_has_tables_with_units_series_and_the_recommendation() {
        let r = report();
        assert_eq!(r.recommendation.setting.as_deref(), Some("mq-deadline"));
        let doc = r.document();
        let tables: Vec<&Table> = doc
            .blocks
            .iter()
            .filter_map(|b| match b {
                Block::Table(t) => Some(t),
                _ => None,
            })
            .collect();
        // One per workload (nothing was restored in this synthetic run).
        assert_eq!(tables.len(), 2);
        let heads = |t: &Table| t.columns.iter().map(|c| c.header()).collect::<Vec<_>>();
        let mixed = heads(tables[0]);
        assert!(
            mixed.contains(&"throughput (IOPS)".to_string()),
            "{mixed:?}"
        );
        // none's mixed p99 is 20 ms: shown in ms.
        assert!(mixed.contains(&"p99 (ms)".to_string()), "{mixed:?}");
        assert!(
            mixed.contains(&"bandwidth (MiB/s)".to_string()),
            "{mixed:?}"
        );
        let oltp = heads(tables[1]);
        assert!(oltp.contains(&"throughput (tps)".to_string()), "{oltp:?}");
        assert!(!oltp.iter().any(|h| h.contains("MiB/s")), "{oltp:?}");
        let series: Vec<&Series> = doc
            .blocks
            .iter()
            .filter_map(|b| match b {
                Block::Series(s) => Some(s),
                _ => None,
            })
            .collect();
        assert_eq!(series.len(), 4, "throughput and p99 per workload");
        for s in &series {
            assert_eq!(s.kind, ChartKind::Bar);
            for p in &s.lines[0].points {
                let (lo, hi) = p.ci.unwrap();
                assert!(lo <= p.y && p.y <= hi, "{s:?}");
            }
        }

        let text = render(
            &r,
            &crate::export::text::Text::new(crate::output::Style::plain()),
        );
        assert!(
            text.contains("Recommendation: change to mq-deadline (a pending change, exit 1)"),
            "{text}"
        );
        assert!(text.contains("mixed (IOPS)"), "{text}");
        assert!(text.contains("Ran:"), "{text}");
        assert!(text.contains("3m00s"), "elapsed 179.6 s: {text}");
        assert!(!text.contains("\n\n\n"), "no empty blocks: {text}");
        let md = render(&r, &crate::export::markdown::Markdown);
        assert!(
            md.contains("| candidate | throughput (IOPS) | 95% CI (IOPS) |"),
            "{md}"
        );
        assert!(md.contains("p99 (ms)"), "{md}");
    }

    /// A sequential sweep's report names where it stopped, what that
    /// saved, and the round of each verdict (text and JSON).
    #[test]
    fn sequential_report_names_the_round_of_each_verdict() {
        let mut r = report();
        let mut s = super::super::verdicts::Sequential::new(0.05, 2, 2, 10, false);
        s.rounds_run = 5;
        for (i, v) in r.verdicts.iter_mut().enumerate() {
            v.sequential = Some(super::super::verdicts::Reached {
                round: 5,
                crossed: i == 0,
                level: 0.0043,
                ran_to_budget: false,
            });
        }
        s.verdicts = r.verdicts.clone();
        r.sequential = Some(SequentialSummary::new(&s, Some(5), 50.0));
        let sq = r.sequential.as_ref().unwrap();
        assert!(sq.stopped_early && sq.saved_rounds == 5);
        assert!((sq.saved_s - 50.0).abs() < 1e-9);
        let text = render(
            &r,
            &crate::export::text::Text::new(crate::output::Style::plain()),
        );
        assert!(
            text.contains("stopped after round 5 of at most 10"),
            "{text}"
        );
        assert!(text.contains("saved ≈ 50.0s (5 rounds)"), "{text}");
        assert!(text.contains("reached at round 5"), "{text}");
        assert!(
            text.contains("open when the sweep stopped at round 5"),
            "{text}"
        );
        assert!(text.contains("Sequential design"), "{text}");
        let j = serde_json::to_value(&r).unwrap();
        assert_eq!(j["sequential"]["rounds_run"], 5);
        assert_eq!(j["sequential"]["spending"], "pocock");
        assert_eq!(j["verdicts"][0]["sequential"]["round"], 5);
        assert_eq!(j["verdicts"][0]["sequential"]["crossed"], true);
        assert!(j["sequential"].get("settled").is_none(), "{j}");

        // A stop on a settled answer says why, in text and JSON.
        s.settled = Some(
            "none is vetoed: none starved reads in 1 of 5 mixed windows, mq-deadline in none of 5"
                .into(),
        );
        r.sequential = Some(SequentialSummary::new(&s, Some(5), 50.0));
        let text = render(
            &r,
            &crate::export::text::Text::new(crate::output::Style::plain()),
        );
        assert!(
            text.contains("stopped after round 5 of at most 10, the answer was settled: none is vetoed: none starved reads in 1 of 5"),
            "{text}"
        );
        let j = serde_json::to_value(&r).unwrap();
        assert!(j["sequential"]["settled"]
            .as_str()
            .unwrap()
            .starts_with("none is vetoed"));
        // A run to the budget never reports a settled stop.
        s.rounds_run = 10;
        let sq = SequentialSummary::new(&s, None, 100.0);
        assert!(!sq.stopped_early && sq.settled.is_none());
        // Fixed designs keep their JSON: no sequential keys anywhere.
        let fixed = serde_json::to_value(report()).unwrap();
        assert!(fixed.get("sequential").is_none());
        assert!(fixed["verdicts"][0].get("sequential").is_none());
    }

    #[test]
    fn json_has_units_in_keys() {
        let r = report();
        let j = serde_json::to_value(&r).unwrap();
        assert_eq!(j["min_effect_pct"], 3.0);
        assert!(j["plan"]["trial_s"].is_number(), "{}", j["plan"]);
        assert_eq!(j["recommendation"]["action"], "change");
        assert_eq!(j["recommendation"]["current_measured"], true);
        assert!(j.get("pairwise").is_none());
        // No key anywhere holds a slash, a dash or the old µs suffix.
        fn walk(v: &serde_json::Value, path: &str) {
            match v {
                serde_json::Value::Object(m) => {
                    for (k, x) in m {
                        // Device names are values, not keys; sysfs names
                        // (read_ahead_kb) are the attribute's own.
                        assert!(
                            !k.contains('/') && !k.contains('-') && !k.ends_with("_us"),
                            "{path}.{k}"
                        );
                        assert!(!x.is_null(), "{path}.{k} is null");
                        walk(x, &format!("{path}.{k}"));
                    }
                }
                serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, path)),
                _ => {}
            }
        }
        walk(&j, "result");
    }
}
