//! The typed result of `innotune prove` (JSON schema: docs/json-prove.md)
//! and its document: a table per workload, each arm against `current`.

use super::ChangeSpec;
use crate::export::doc::{Cell, Column, Document, KeyValues, Table, Tone};
use crate::journal::Restored;
use crate::stats::{Comparison, Effect};
use crate::trial::space::FilePlan;
use crate::trial::trials::{Trial, Unit};
use crate::trial::Arm;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// One metric of one arm against `current`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Side {
    /// Median of `current`'s trials.
    pub baseline_median: f64,
    /// Median of the arm's trials.
    pub median: f64,
    /// Hodges–Lehmann ratio arm / current with its exact interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci_low: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci_high: Option<f64>,
    /// Confidence level of the interval: 1 − the corrected level. JSON:
    /// `ci_level_pct`, in percent.
    #[serde(
        rename = "ci_level_pct",
        serialize_with = "crate::stats::as_pct",
        deserialize_with = "crate::stats::from_pct"
    )]
    pub ci_level: f64,
    pub p: f64,
    pub verdict: Effect,
}

impl Side {
    pub fn new(c: &Comparison, e: Effect, baseline_median: f64, median: f64) -> Side {
        Side {
            baseline_median,
            median,
            ratio: c.ratio,
            ci_low: c.ci_low,
            ci_high: c.ci_high,
            ci_level: c.ci_level,
            p: c.p_value,
            verdict: e,
        }
    }
}

/// One arm on one workload, against `current`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProveCell {
    pub workload: String,
    pub arm: String,
    pub unit: Unit,
    /// Trials per side (the fewer of the two).
    pub rounds: u32,
    /// The cell's verdict: throughput's (IOPS or tps).
    pub verdict: Effect,
    pub throughput: Side,
    /// Absent without latencies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p99: Option<Side>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct ProveReport {
    pub path: PathBuf,
    /// The devices whose queue attributes were changed.
    pub devices: Vec<String>,
    pub changes: Vec<ChangeSpec>,
    /// `current` first, then each change alone, then `all`.
    pub arms: Vec<Arm>,
    pub workloads: Vec<String>,
    /// Rounds planned (the most, with `sequential`).
    pub rounds: u32,
    pub rounds_run: u32,
    pub sequential: bool,
    pub trial_s: f64,
    pub warmup_s: f64,
    /// The false-claim bound over every comparison of the run.
    pub alpha: f64,
    /// The level each comparison was tested at (alpha over the
    /// comparisons; with `sequential`, the level of the last look).
    pub level: f64,
    #[serde(
        rename = "min_effect_pct",
        serialize_with = "crate::stats::as_pct",
        deserialize_with = "crate::stats::from_pct"
    )]
    pub min_effect: f64,
    pub seed: u64,
    pub files: FilePlan,
    pub elapsed_s: f64,
    pub rounds_s: f64,
    pub cells: Vec<ProveCell>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oltp: Option<crate::trial::server::OltpSetup>,
    /// What was put back at the end.
    pub restored: Vec<Restored>,
    /// Why the I/O did not (all) reach a device (as sweep's). Absent when
    /// it did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_on_device: Vec<crate::bench::reach::NotOnDevice>,
    /// Every trial, in the order it ran.
    pub trials: Vec<Trial>,
}

/// Colour follows the verdict only.
pub fn tone(e: Effect) -> Tone {
    match e {
        Effect::Faster => Tone::Good,
        Effect::Slower => Tone::Bad,
        Effect::NoDifference | Effect::TooFewRounds => Tone::Plain,
    }
}

fn fmt_num(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

fn interval(s: &Side) -> String {
    match (s.ci_low, s.ci_high) {
        (Some(a), Some(b)) => format!("{a:.3}–{b:.3} ({:.1}%)", s.ci_level * 100.0),
        _ => "-".into(),
    }
}

impl crate::export::Report for ProveReport {
    const COMMAND: &'static str = "prove";

    fn document(&self) -> Document {
        let mut d = Document::new(format!("prove {}", self.path.display()));
        let mut kv = KeyValues::new();
        kv.add(
            "changes",
            self.changes
                .iter()
                .map(|c| match &c.mount_point {
                    Some(mp) => format!("{} (remounting {})", c.label(), mp.display()),
                    None => c.label(),
                })
                .collect::<Vec<_>>()
                .join(", "),
        );
        kv.add("devices", self.devices.join(", "));
        if let Some(o) = &self.oltp {
            let sv = self.changes.iter().any(|c| c.is_server_variable());
            let on = match &o.live_server {
                Some(l) => format!("the live server at {l} (its sbtest tables)"),
                None => format!("a throwaway server in {}", o.sandbox_dir.display()),
            };
            kv.add(
                "server",
                if sv {
                    format!("{on}; server variables SET GLOBAL there between rounds")
                } else {
                    on
                },
            );
        }
        kv.add(
            "rounds",
            if self.sequential {
                format!(
                    "{} of at most {} (sequential)",
                    self.rounds_run, self.rounds
                )
            } else {
                self.rounds_run.to_string()
            },
        );
        kv.add(
            "trial",
            format!("{:.1}s after {:.1}s warm-up", self.trial_s, self.warmup_s),
        );
        kv.add(
            "level",
            format!(
                "p ≤ {:.4} per comparison ({} over {} comparisons), effect ≥ {:.0}%",
                self.level,
                self.alpha,
                self.cells.len(),
                self.min_effect * 100.0
            ),
        );
        kv.add("seed", self.seed.to_string());
        d.key_values(kv);
        for x in &self.not_on_device {
            d.note(Tone::Warn, x.describe());
        }
        for w in &self.workloads {
            let cells: Vec<&ProveCell> = self.cells.iter().filter(|c| &c.workload == w).collect();
            let Some(first) = cells.first() else { continue };
            let unit = first.unit.label();
            // Say what the figures are: a workload that reads and writes
            // (mixed) adds its reads' and writes' IOPS, and its p99 is the
            // reads'; one that only writes has the writes' p99.
            let has = |f: fn(&Trial) -> bool| self.trials.iter().any(|t| &t.workload == w && f(t));
            let (reads, writes) = (
                has(|t| t.read_iops_per_s.is_some()),
                has(|t| t.write_iops_per_s.is_some()),
            );
            let (median, p99) = match (reads, writes) {
                (true, true) => ("median, reads + writes", "read p99"),
                (false, true) => ("median", "write p99"),
                (true, false) => ("median", "read p99"),
                (false, false) => ("median", "p99"),
            };
            let mut t = Table::new(vec![
                Column::text("arm"),
                Column::num(median, Some(unit)),
                Column::num("ratio", None),
                Column::text("interval"),
                Column::num("p", None),
                Column::text("verdict"),
                Column::num(format!("{p99} ratio"), None),
                Column::text(format!("{p99} interval")),
                Column::text(format!("{p99} verdict")),
            ])
            .titled(format!("{w} ({unit})"));
            let base = first.throughput.baseline_median;
            t.row(vec![
                Cell::text("current"),
                Cell::num(base, fmt_num(base)),
                Cell::text("1"),
                Cell::empty(),
                Cell::empty(),
                Cell::text("(baseline)").tone(Tone::Dim),
                Cell::empty(),
                Cell::empty(),
                Cell::empty(),
            ]);
            for c in cells {
                let s = &c.throughput;
                let r = s.ratio.unwrap_or(f64::NAN);
                let mut row = vec![
                    Cell::text(c.arm.clone()),
                    Cell::num(s.median, fmt_num(s.median)),
                    Cell::num(r, format!("{r:.3}")),
                    Cell::text(interval(s)),
                    Cell::num(s.p, format!("{:.4}", s.p)),
                    Cell::text(c.verdict.words()).tone(tone(c.verdict)),
                ];
                match &c.p99 {
                    Some(p) => {
                        let r = p.ratio.unwrap_or(f64::NAN);
                        row.push(Cell::num(r, format!("{r:.3}")));
                        row.push(Cell::text(interval(p)));
                        row.push(Cell::text(p.verdict.words()).tone(tone(p.verdict)));
                    }
                    None => row.extend([Cell::empty(), Cell::empty(), Cell::empty()]),
                }
                t.row(row);
            }
            d.table(t);
        }
        d.paragraph(
            "Ratios are arm / current (throughput: above 1 is faster; p99: below 1 is faster), \
             Hodges–Lehmann medians of all trial ratios with the exact interval of the rank test at 1 − the corrected level. \
             Every arm was journaled and put back.",
        );
        d
    }

    fn exit_code(&self) -> i32 {
        crate::error::exit::OK
    }
}
