//! Several results side by side: the figures they share, one column per
//! run, and charts with one line (or bar) per run.
//!
//! Each command's headline figures are pulled out as [`Metric`]s keyed by
//! what they measure (`oltp_read_write TPS` at `8` threads, `page-read
//! throughput` of `kyber`), so `before.json` and `after.json` of the same
//! command line up, and so do a tune run's `oltp-before.json` and
//! `oltp-after.json`.

use super::load::Input;
use super::typed::Typed;
use crate::bench::report::BenchResult;
use crate::export::doc::{Cell, ChartKind, Column, Line, Point, Series, Table, Tone};
use crate::export::text::fmt_num;
use crate::finding::Severity;
use crate::oltp::OltpResult;
use crate::sweep::trials::Unit;
use serde::Serialize;

/// One figure of one run.
#[derive(Debug, Clone, Serialize)]
pub struct Metric {
    /// What it is, without the x: `oltp_read_write TPS`.
    pub family: String,
    /// Where on the family's x axis: threads, a scheduler, a job.
    pub x: String,
    /// The axis `x` is on (`threads`, `scheduler`, `job`).
    pub x_label: String,
    pub unit: String,
    pub value: f64,
    /// Some(true) when more is better, Some(false) when less is.
    pub higher_is_better: Option<bool>,
}

impl Metric {
    fn key(&self) -> (String, String) {
        (self.family.clone(), self.x.clone())
    }
}

fn m(
    family: String,
    x_label: &str,
    x: String,
    unit: &str,
    value: Option<f64>,
    higher: Option<bool>,
) -> Option<Metric> {
    Some(Metric {
        family,
        x,
        x_label: x_label.into(),
        unit: unit.into(),
        value: value.filter(|v| v.is_finite())?,
        higher_is_better: higher,
    })
}

fn oltp_runs(out: &mut Vec<Metric>, runs: &[OltpResult]) {
    for r in runs {
        let w = &r.workload;
        let t = r.threads.to_string();
        out.extend(m(
            format!("{w} TPS"),
            "threads",
            t.clone(),
            "tps",
            Some(r.tps),
            Some(true),
        ));
        out.extend(m(
            format!("{w} QPS"),
            "threads",
            t.clone(),
            "qps",
            Some(r.qps),
            Some(true),
        ));
        out.extend(m(
            format!("{w} p95"),
            "threads",
            t,
            "ms",
            r.latency_ms.percentiles.get("95").copied(),
            Some(false),
        ));
    }
}

/// The headline figures of one result.
pub fn metrics(i: &Input) -> Vec<Metric> {
    let mut out = Vec::new();
    match &i.result {
        Typed::Oltp(r) => oltp_runs(&mut out, &r.runs),
        Typed::TuneOltp(r) => oltp_runs(&mut out, &r.runs),
        Typed::Sweep(r) => {
            let max = r
                .results
                .iter()
                .filter_map(|c| c.p99_ns.as_ref().map(|p| p.median as f64))
                .fold(0.0, f64::max);
            let lat = lat_unit(max);
            for c in &r.results {
                let unit = match c.throughput.unit {
                    Unit::Iops => "iops",
                    Unit::Tps => "tps",
                };
                out.extend(m(
                    format!("{} throughput", c.workload),
                    "scheduler",
                    c.candidate.clone(),
                    unit,
                    Some(c.throughput.summary.median),
                    Some(true),
                ));
                out.extend(m(
                    format!("{} p99", c.workload),
                    "scheduler",
                    c.candidate.clone(),
                    lat.name,
                    c.p99_ns.as_ref().map(|p| p.median as f64 / lat.ns),
                    Some(false),
                ));
            }
        }
        Typed::Bench(b) => {
            if let BenchResult::Run(r) = b.as_ref() {
                for j in r.result.iter().flat_map(|w| &w.jobs) {
                    for (dir, x) in [("read", &j.read), ("write", &j.write)] {
                        let Some(x) = x else { continue };
                        out.extend(m(
                            format!("{dir} IOPS"),
                            "job",
                            j.name.clone(),
                            "IOPS",
                            Some(x.iops),
                            Some(true),
                        ));
                        out.extend(m(
                            format!("{dir} p99"),
                            "job",
                            j.name.clone(),
                            "µs",
                            Some(x.clat_ns.p99 as f64 / 1e3),
                            Some(false),
                        ));
                    }
                }
            }
        }
        Typed::Tune(r) => {
            for p in r.oltp.iter().flat_map(|o| &o.cells) {
                let t = p.threads.to_string();
                for (side, x) in [("before", p.before_tps_per_s), ("after", p.after_tps_per_s)] {
                    out.extend(m(
                        format!("{} TPS ({side})", p.workload),
                        "threads",
                        t.clone(),
                        "tps",
                        Some(x),
                        Some(true),
                    ));
                }
            }
            findings_count(
                &mut out,
                "tune",
                r.findings.iter().map(|a| a.finding.severity),
            );
        }
        Typed::Check(r) => findings_count(
            &mut out,
            "check",
            r.findings.iter().map(|a| a.finding.severity),
        ),
        Typed::Probe(r) => findings_count(&mut out, "probe", r.findings.iter().map(|f| f.severity)),
        _ => {}
    }
    out
}

/// Findings by severity, keyed by the command: probe's and check's rules
/// differ, so only results of the same command line up.
fn findings_count(out: &mut Vec<Metric>, command: &str, list: impl Iterator<Item = Severity>) {
    let list: Vec<Severity> = list.collect();
    for sev in [
        Severity::Critical,
        Severity::Warning,
        Severity::Notice,
        Severity::Info,
    ] {
        let n = list.iter().filter(|f| **f == sev).count();
        out.extend(m(
            format!("{command} findings"),
            "severity",
            sev.as_str().into(),
            "",
            Some(n as f64),
            Some(false),
        ));
    }
}

/// Latency in ns shown in the unit that suits the largest of them.
#[derive(Clone, Copy)]
struct LatUnit {
    name: &'static str,
    ns: f64,
}

fn lat_unit(max_ns: f64) -> LatUnit {
    if max_ns >= 10e6 {
        LatUnit {
            name: "ms",
            ns: 1e6,
        }
    } else {
        LatUnit {
            name: "µs",
            ns: 1e3,
        }
    }
}

/// The comparison of two or more runs: a table and charts.
#[derive(Debug, Default, Serialize)]
pub struct Comparison {
    /// Labels of the runs, in the order given.
    pub runs: Vec<String>,
    /// Figures present in at least two runs: key and one value per run.
    pub shared: Vec<SharedMetric>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SharedMetric {
    pub family: String,
    pub x: String,
    pub x_label: String,
    pub unit: String,
    pub higher_is_better: Option<bool>,
    /// One per run; None where that run does not have it.
    pub values: Vec<Option<f64>>,
}

pub fn compare(inputs: &[Input]) -> Comparison {
    let per: Vec<Vec<Metric>> = inputs.iter().map(metrics).collect();
    let mut keys: Vec<Metric> = Vec::new();
    for ms in &per {
        for x in ms {
            if !keys.iter().any(|k| k.key() == x.key()) {
                keys.push(x.clone());
            }
        }
    }
    let shared = keys
        .into_iter()
        .filter_map(|k| {
            let values: Vec<Option<f64>> = per
                .iter()
                .map(|ms| ms.iter().find(|x| x.key() == k.key()).map(|x| x.value))
                .collect();
            (values.iter().flatten().count() >= 2).then_some(SharedMetric {
                family: k.family,
                x: k.x,
                x_label: k.x_label,
                unit: k.unit,
                higher_is_better: k.higher_is_better,
                values,
            })
        })
        .collect();
    Comparison {
        runs: inputs.iter().map(|i| i.label.clone()).collect(),
        shared,
    }
}

/// What the change of two single figures is (no interval, so no verdict).
pub const SINGLE_RUN: &str = "single run: no interval, not a measured difference";

/// Rows of text every run has (what, where, when) above the figures.
pub fn table(c: &Comparison, inputs: &[Input]) -> Table {
    let mut cols = vec![Column::text("figure"), Column::text("unit")];
    for r in &c.runs {
        cols.push(Column::num(r.as_str(), None));
    }
    cols.push(Column::num("change", Some("%")));
    // Each figure here is one number per result (one run, or a run's
    // median), with no spread to compare: the change is arithmetic, not a
    // measured difference, so it gets no colour and says so.
    cols.push(Column::text("verdict"));
    let mut t = Table::new(cols).titled("Side by side");
    let info = |label: &str, f: &dyn Fn(&Input) -> String| {
        let mut row = vec![Cell::text(label), Cell::empty()];
        row.extend(inputs.iter().map(|i| Cell::text(f(i))));
        row.push(Cell::empty());
        row.push(Cell::empty());
        row
    };
    t.row(info("result", &|i: &Input| i.command.clone()));
    t.row(info("host", &|i: &Input| i.hostname()));
    t.row(info("kernel", &|i: &Input| i.kernel()));
    t.row(info("generated", &|i: &Input| i.generated_at().to_string()));
    for s in &c.shared {
        let mut row = vec![
            Cell::text(format!("{} @ {} {}", s.family, s.x_label, s.x)),
            Cell::text(s.unit.clone()),
        ];
        row.extend(s.values.iter().map(|v| match v {
            // Counts (findings) read as counts, not 2.00.
            Some(x) if s.unit.is_empty() && x.fract() == 0.0 => Cell::num(*x, format!("{x:.0}")),
            Some(x) => Cell::num(*x, fmt_num(*x)),
            None => Cell::text("—").tone(Tone::Dim),
        }));
        // From the first run that has the figure to the last that has it.
        let have: Vec<f64> = s.values.iter().flatten().copied().collect();
        let change = match (have.first(), have.last()) {
            (Some(&a), Some(&b)) if have.len() >= 2 && a != 0.0 => {
                let pct = (b / a - 1.0) * 100.0;
                Cell::num(pct, format!("{pct:+.1}%"))
            }
            _ => Cell::text("—").tone(Tone::Dim),
        };
        let measured = have.len() >= 2;
        row.push(change);
        row.push(if measured {
            Cell::text(SINGLE_RUN).tone(Tone::Dim)
        } else {
            Cell::empty()
        });
        t.row(row);
    }
    t
}

/// One chart per family the runs share: a line per run against threads,
/// bars per run for schedulers and jobs. A family with a single x (a
/// severity count) is left to the table.
pub fn charts(c: &Comparison) -> Vec<Series> {
    let mut families: Vec<&str> = Vec::new();
    for s in &c.shared {
        if !families.contains(&s.family.as_str()) {
            families.push(&s.family);
        }
    }
    let mut out = Vec::new();
    for f in families {
        let rows: Vec<&SharedMetric> = c.shared.iter().filter(|s| s.family == f).collect();
        if rows.len() < 2 || f.ends_with(" findings") {
            continue;
        }
        let kind = if rows[0].x_label == "threads" {
            ChartKind::Line
        } else {
            ChartKind::Bar
        };
        let lines = c
            .runs
            .iter()
            .enumerate()
            .map(|(ri, run)| Line {
                name: run.clone(),
                points: rows
                    .iter()
                    .filter_map(|s| {
                        Some(Point {
                            x: s.x.clone(),
                            y: s.values[ri]?,
                            ci: None,
                        })
                    })
                    .collect(),
            })
            .filter(|l| !l.points.is_empty())
            .collect::<Vec<_>>();
        if lines.len() < 2 {
            continue;
        }
        out.push(Series {
            title: format!("{f} by {}, per run", rows[0].x_label),
            kind,
            x_label: rows[0].x_label.clone(),
            y_label: f.to_string(),
            y_unit: Some(rows[0].unit.clone()).filter(|u| !u.is_empty()),
            lines,
            table_fallback: false,
        });
    }
    out
}
