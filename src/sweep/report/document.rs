//! A [`SweepReport`] as a document: the overview, per workload a table and
//! bar charts with 95% CIs, the verdicts, device figures and what was put
//! back.

use super::super::cli::Objective;
use super::super::recommend::Action;
use super::super::verdicts::{Cell as Result_, WorkloadVerdict};
use super::SweepReport;
use crate::export::doc::{
    Cell, ChartKind, Column, Document, KeyValues, Line, Point, Series, Table, Tone,
};
use crate::export::text::fmt_num;
use crate::journal::{Outcome, Restored};
use crate::stats::Verdict;
use crate::trial::trials::Unit;

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
        (Some(x), Some(l), Some(h)) => format!(
            "{x:.2}× [{l:.2}–{h:.2}] ({}% CI), p = {:.3}",
            format!("{:.2}", c.ci_level * 100.0)
                .trim_end_matches('0')
                .trim_end_matches('.'),
            c.p_value
        ),
        _ => "no ratio".into(),
    }
}

/// Whether the recommendation overrode this run's verdicts as noise: a
/// candidate with the baseline's own setting (an A/A pair) measured
/// different (the rule of `recommend`).
fn aa_noise(r: &SweepReport) -> bool {
    let Some(base) = r.candidates.iter().find(|c| c.label == r.baseline) else {
        return false;
    };
    r.verdicts.iter().any(|v| {
        v.verdict != Verdict::NoSignificantDifference
            && r.candidates
                .iter()
                .any(|c| c.label == v.candidate && c.same_setting(base))
    })
}

/// The verdict word as the table shows it: when the recommendation called
/// this run's differences noise, a claimed difference says so.
fn table_verdict(v: Verdict, noise: bool) -> Cell {
    if noise && v != Verdict::NoSignificantDifference {
        Cell::text(format!("{} (vetoed: A/A noise)", v.as_str())).tone(Tone::Dim)
    } else {
        verdict_cell(v)
    }
}

pub(super) fn document(r: &SweepReport) -> Document {
    let mut d = Document::new(format!("innotune sweep {}", r.path.display()));
    d.key_values(overview(r));
    for x in &r.not_on_device {
        d.note(Tone::Warn, x.describe());
    }
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
        if let Some(t) = directions_table(w, &cells) {
            d.table(t);
        }
        for s in workload_series(w, &cells, unit, lat) {
            d.series(s);
        }
        if let Some(s) = percentile_series(r, w, &cells, lat) {
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
        let noise = aa_noise(r);
        let tone = if noise {
            Tone::Dim
        } else if v.verdict == Verdict::Better {
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
                "{} vs {} on {}: {}{}{at} ({})",
                v.candidate,
                v.baseline,
                v.workload,
                v.verdict.as_str(),
                if noise { " (vetoed: A/A noise)" } else { "" },
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
                    crate::units::fmt_ns(crate::trial::trials::stall_limit_ns(*dir == "read")),
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
                "{} on {} in {} (profile {}, buffer pool {}; {} × {} rows{data}, loaded in {}; {} threads); throughput in transactions/s (tps), p99 the transaction's",
                o.workloads.join(", "),
                o.server_version,
                o.sandbox_dir.display(),
                o.profile,
                crate::units::fmt_size(o.buffer_pool_bytes),
                o.tables,
                o.table_size,
                crate::units::fmt_secs(o.prepare_s),
                o.threads
            ),
        );
    }
    kv.add(
        "Ran",
        format!(
            "{} trials in {} (seed {})",
            r.trials_run,
            super::super::plan::fmt_d(std::time::Duration::from_secs_f64(r.elapsed_s.max(0.0))),
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
    // Say what the figures are: IOPS add every job's reads and writes
    // (of whatever block sizes), and p99 is the reads' when the workload
    // reads (else the writes'), the transaction's for OLTP.
    let (tput, p99) = match unit {
        Unit::Tps => ("throughput", "transaction p99"),
        Unit::Iops => {
            let reads = r
                .trials
                .iter()
                .any(|t| t.workload == w && t.read_p99_ns.is_some());
            let writes = r
                .trials
                .iter()
                .any(|t| t.workload == w && t.write_p99_ns.is_some());
            let p99 = if reads { "read p99" } else { "write p99" };
            let tput = match (reads, writes) {
                (true, true) => "throughput, reads + writes",
                _ => "throughput",
            };
            (tput, p99)
        }
    };
    let mut cols = vec![
        Column::text("candidate"),
        Column::num(tput, Some(unit.label())),
        Column::num("95% CI", Some(unit.label())),
    ];
    if has_bw {
        cols.push(Column::num("bandwidth", Some("MiB/s")));
    }
    cols.push(Column::num(p99, Some(lat.name)));
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
                Some(v) => table_verdict(v.verdict, aa_noise(r)),
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

/// A workload that reads and writes (mixed): its reads and its writes
/// apart, since the workload table's throughput adds 16 KiB reads to
/// 1 MiB writes and its p99 is the reads'. Medians over the candidate's
/// trials with their 95% bootstrap intervals; no verdict rests on these.
fn directions_table(w: &str, cells: &[&Result_]) -> Option<Table> {
    if cells.iter().all(|c| c.directions.is_none()) {
        return None;
    }
    let lat = latency_unit(
        cells
            .iter()
            .filter_map(|c| c.directions.as_ref())
            .flat_map(|d| [&d.read_p99_ns, &d.write_p99_ns])
            .flatten()
            .map(|p| p.median)
            .max()
            .unwrap_or(0),
    );
    let mut t = Table::new(vec![
        Column::text("candidate"),
        Column::num("read IOPS", None),
        Column::num("95% CI", None),
        Column::num("read p99", Some(lat.name)),
        Column::num("95% CI", Some(lat.name)),
        Column::num("write IOPS", None),
        Column::num("95% CI", None),
        Column::num("write p99", Some(lat.name)),
        Column::num("95% CI", Some(lat.name)),
    ])
    .titled(format!(
        "{w}: reads and writes apart (medians over trials, 95% CI; the verdicts rest on the table above)"
    ));
    for c in cells {
        let Some(d) = &c.directions else { continue };
        let mut row = vec![Cell::text(c.candidate.clone())];
        for (iops, p99) in [
            (&d.read_iops_per_s, &d.read_p99_ns),
            (&d.write_iops_per_s, &d.write_p99_ns),
        ] {
            row.push(Cell::num(iops.median, fmt_num(iops.median)));
            row.push(Cell::text(ci(iops.ci_low, iops.ci_high)));
            match p99 {
                Some(p) => {
                    let m = p.median as f64 / lat.ns;
                    row.push(Cell::num(m, fmt_num(m)));
                    row.push(Cell::text(ci(
                        p.ci_low as f64 / lat.ns,
                        p.ci_high as f64 / lat.ns,
                    )));
                }
                None => row.extend([Cell::text("-"), Cell::empty()]),
            }
        }
        t.row(row);
    }
    Some(t)
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

/// Latency percentiles per candidate, each the median over the
/// candidate's trials: read p50 and p99 and write p99 (bench workloads),
/// else the transaction p99 (OLTP). A chart only: the table has the p99s.
fn percentile_series(
    r: &SweepReport,
    w: &str,
    cells: &[&Result_],
    lat: LatencyUnit,
) -> Option<Series> {
    type Get = fn(&crate::trial::trials::Trial) -> Option<u64>;
    let keys: [(&str, Get); 4] = [
        ("read p50", |t| t.read_p50_ns),
        ("read p99", |t| t.read_p99_ns),
        ("write p99", |t| t.write_p99_ns),
        ("p99", |t| t.p99_ns),
    ];
    let mut lines: Vec<Line> = Vec::new();
    for (name, get) in keys {
        let points: Vec<Point> = cells
            .iter()
            .filter_map(|c| {
                let v: Vec<f64> = r
                    .trials
                    .iter()
                    .filter(|t| t.workload == w && t.candidate == c.candidate)
                    .filter_map(|t| get(t).map(|ns| ns as f64))
                    .collect();
                (!v.is_empty()).then(|| Point {
                    x: c.candidate.clone(),
                    y: crate::stats::median(&v) / lat.ns,
                    ci: None,
                })
            })
            .collect();
        if !points.is_empty() {
            lines.push(Line {
                name: name.into(),
                points,
            });
        }
    }
    // `p99` repeats read or write p99 for bench workloads.
    if lines.len() > 1 {
        lines.retain(|l| l.name != "p99");
    }
    (!lines.is_empty()).then(|| Series {
        title: format!("{w}: latency percentiles per candidate (median of trials)"),
        kind: ChartKind::Bar,
        x_label: "candidate".into(),
        y_label: "latency".into(),
        y_unit: Some(lat.name.into()),
        lines,
        table_fallback: false,
    })
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
