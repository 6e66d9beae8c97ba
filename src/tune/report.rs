//! `innotune tune`'s typed result (JSON schema `tune/2`, docs/json-tune.md)
//! and the document summary.md and report.html are rendered from.

use super::oltp::Cell as OltpCell;
use super::oltp::{Comparison, SandboxVars};
use crate::check::report::{CheckReport, EmittedFile};
use crate::check::rules::{Advice, Setting};
use crate::export::doc::{
    Cell, ChartKind, Column, KeyValues, Line, Point, Series, Table, Tone, TreeNode,
};
use crate::export::text::fmt_num;
use crate::export::Document;
use crate::oltp::OltpResult;
use crate::stats::Effect;
use crate::sweep::SweepReport;
use serde::Serialize;
use std::path::PathBuf;

/// How a phase ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Done,
    Skipped,
    Failed,
    Interrupted,
}

/// One phase of the run.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Phase {
    /// `probe`, `check`, `sweep`, `oltp`, `report`.
    pub name: String,
    pub status: Status,
    pub elapsed_s: f64,
    /// Why skipped or failed, or what was cut short.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One setting apply would change: its value now and the recommended one.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Changed {
    /// `server_variable`, `queue`, `sysctl`, `thp`, `net_queue`, `nofile`, `fstab`.
    pub kind: String,
    /// `innodb_io_capacity`, `vda scheduler`, `vm.swappiness`.
    pub setting: String,
    pub before: String,
    pub after: String,
    /// The finding it fixes.
    pub finding: String,
}

/// The sweep's answer, as tune.json carries it (the whole sweep is in sweep.json).
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct SweepSummary {
    pub devices: Vec<String>,
    pub workloads: Vec<String>,
    pub baseline: String,
    pub rounds: u32,
    pub trials_run: usize,
    pub recommendation: crate::sweep::recommend::Recommendation,
}

/// The whole run.
#[derive(Debug, Serialize, serde::Deserialize)]
pub struct TuneReport {
    /// The tuned path (host path).
    pub path: PathBuf,
    /// `argument`, `mysqld_datadir` or `current_directory`.
    pub path_source: String,
    /// Where the report and files were written.
    pub out_dir: PathBuf,
    pub budget_s: f64,
    pub quick: bool,
    pub elapsed_s: f64,
    /// Set when a signal cut the run short (`SIGINT during sweep`): the
    /// report has what was measured until then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<String>,
    pub phases: Vec<Phase>,
    /// The filesystem and the device stack, `name (kind, scheduler)` top first.
    pub mount: Option<String>,
    pub stack: Vec<String>,
    /// The live server (`MariaDB 10.11.6`), or why none.
    pub server: String,
    /// check's findings, worst first, each with the settings that fix it.
    pub findings: Vec<Advice>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sweep: Option<SweepSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oltp: Option<Comparison>,
    /// Durability trade-offs check recommended: measured in "after" only
    /// with `--allow-durability-tradeoffs`; each says what a crash loses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub durability: Vec<super::oltp::Tradeoff>,
    /// What `innotune apply` would change.
    pub changed: Vec<Changed>,
    /// The files under `out_dir/files/`.
    pub emitted: Vec<EmittedFile>,
    /// Every file of the report directory, relative to it.
    pub written: Vec<String>,
    /// The command that makes the advice true (journaled, `innotune restore` undoes it).
    pub apply_command: String,
    /// The full sweep, for the document's tables: not in tune.json but in
    /// the sweep.json written next to it (`innotune report` reads it from
    /// there).
    #[serde(skip)]
    pub sweep_report: Option<SweepReport>,
}

impl TuneReport {
    pub fn new(
        path: PathBuf,
        path_source: &str,
        out_dir: PathBuf,
        budget_s: f64,
        quick: bool,
    ) -> Self {
        TuneReport {
            path,
            path_source: path_source.into(),
            out_dir,
            budget_s,
            quick,
            elapsed_s: 0.0,
            interrupted: None,
            phases: Vec::new(),
            mount: None,
            stack: Vec::new(),
            server: "not reached".into(),
            findings: Vec::new(),
            sweep: None,
            oltp: None,
            durability: Vec::new(),
            changed: Vec::new(),
            emitted: Vec::new(),
            written: Vec::new(),
            apply_command: String::new(),
            sweep_report: None,
        }
    }

    /// Fill the summary fields from check's report.
    pub fn set_check(&mut self, c: &CheckReport) {
        let f = &c.facts;
        self.mount = f.mount.as_ref().map(|m| {
            format!(
                "{} ({}, {}, from {})",
                m.mount_point, m.fs_type, m.atime, m.source
            )
        });
        self.stack = f
            .devices
            .iter()
            .map(|d| {
                let mut s = format!("{}{} ({}", "  ".repeat(d.depth), d.name, d.kind);
                if let Some(sch) = &d.scheduler {
                    s.push_str(&format!(", scheduler {sch}"));
                }
                s.push(')');
                s
            })
            .collect();
        self.server = match (&f.server, &c.server.note) {
            (Some(s), _) => s.label(),
            (None, Some(n)) => n.clone(),
            (None, None) => "not reached".into(),
        };
        self.findings = c.findings.clone();
        self.changed = changed(c);
    }
}

impl TuneReport {
    /// Say on each finding what the before/after measured of it: the
    /// cells, for findings whose server variables went into "after"; else
    /// why not (`phase_note`: why the OLTP phase did not measure, when it
    /// did not).
    pub fn attach_measurements(
        &mut self,
        profiles: &super::oltp::Profiles,
        phase_note: Option<&str>,
    ) {
        let diffs = profiles.differences();
        let cells: Vec<crate::finding::Measurement> = self
            .oltp
            .iter()
            .flat_map(|c| &c.cells)
            .filter_map(|c| {
                Some(crate::finding::Measurement {
                    workload: c.workload.clone(),
                    threads: c.threads,
                    ratio: c.ratio?,
                    ci_low: c.ci_low?,
                    ci_high: c.ci_high?,
                    p: c.p,
                    rounds: c.rounds,
                    verdict: serde_json::to_value(c.verdict)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default(),
                })
            })
            .collect();
        for a in &mut self.findings {
            let f = &mut a.finding;
            f.measured.clear();
            f.not_measured = None;
            let vars: Vec<&str> = a
                .settings
                .iter()
                .filter_map(|s| match s {
                    Setting::ServerVariable { name, .. } => Some(name.as_str()),
                    _ => None,
                })
                .collect();
            if a.settings.is_empty() {
                continue;
            }
            let held = profiles
                .durability
                .iter()
                .any(|t| !t.measured && vars.contains(&t.name.as_str()));
            let in_after = vars.iter().any(|v| diffs.iter().any(|d| d == v));
            f.not_measured = if held {
                Some("durability trade-off not allowed: left out of \"after\" (--allow-durability-tradeoffs measures it)".into())
            } else if in_after && !cells.is_empty() {
                f.measured = cells.clone();
                None
            } else if in_after {
                Some(format!(
                    "the OLTP before/after measured no cell: {}",
                    phase_note.unwrap_or("it did not run")
                ))
            } else if !vars.is_empty() && vars.iter().all(|v| super::oltp::invisible(v)) {
                Some(
                    "not measurable on a sandbox: logging changes nothing an OLTP run shows".into(),
                )
            } else if !vars.is_empty() {
                Some(format!(
                    "\"after\" does not differ from \"before\" in {}",
                    vars.join(", ")
                ))
            } else if f.evidence.source == crate::finding::Source::Measured {
                Some("not measurable on a sandbox (a host-wide setting two sandboxes cannot differ in); its evidence above was measured on this host".into())
            } else if f.evidence.source == crate::finding::Source::RuleOfThumb {
                Some(
                    "rule of thumb only: a host-wide setting two sandboxes cannot differ in".into(),
                )
            } else {
                Some("not measurable on a sandbox: a host-wide setting two sandboxes cannot differ in; the advice rests on what was observed".into())
            };
        }
    }
}

/// Every setting check's advice would change, with its value now.
fn changed(c: &CheckReport) -> Vec<Changed> {
    let f = &c.facts;
    let mut out = Vec::new();
    for a in &c.findings {
        for s in &a.settings {
            let (kind, setting, before, after) = match s {
                Setting::ServerVariable { name, value, .. } => (
                    "server_variable",
                    name.clone(),
                    f.server
                        .as_ref()
                        .and_then(|s| s.var(name))
                        .map(str::to_string)
                        .unwrap_or_else(|| a.finding.observed.clone()),
                    value.clone(),
                ),
                Setting::Queue {
                    device,
                    attr,
                    value,
                } => (
                    "queue",
                    format!("{device} {attr}"),
                    a.finding.observed.clone(),
                    value.clone(),
                ),
                Setting::Sysctl { name, value } => (
                    "sysctl",
                    name.clone(),
                    a.finding.observed.clone(),
                    value.clone(),
                ),
                Setting::Thp { value } => (
                    "thp",
                    "transparent_hugepage/enabled".into(),
                    a.finding.observed.clone(),
                    value.clone(),
                ),
                Setting::NetQueue {
                    nic,
                    queue,
                    attr,
                    value,
                } => (
                    "net_queue",
                    format!("{nic} {queue} {attr}"),
                    a.finding.observed.clone(),
                    value.clone(),
                ),
                Setting::IrqAffinity { irq, nic, value } => (
                    "irq_affinity",
                    format!("{nic} irq {irq} smp_affinity"),
                    a.finding.observed.clone(),
                    value.clone(),
                ),
                Setting::CpuGovernor { cpu, value } => (
                    "governor",
                    format!("cpu{cpu} scaling_governor"),
                    a.finding.observed.clone(),
                    value.clone(),
                ),
                Setting::Nofile { service, value } => (
                    "nofile",
                    format!("{service} LimitNOFILE"),
                    a.finding.observed.clone(),
                    value.to_string(),
                ),
                Setting::Fstab { mount_point, line } => (
                    "fstab",
                    format!("{mount_point} (fstab)"),
                    a.finding.observed.clone(),
                    line.clone(),
                ),
            };
            out.push(Changed {
                kind: kind.into(),
                setting,
                before,
                after,
                finding: a.finding.id.clone(),
            });
        }
    }
    out
}

fn secs(s: f64) -> String {
    format!("{s:.0} s")
}

fn p95_ms(ns: Option<u64>) -> Cell {
    match ns {
        Some(n) => {
            let ms = n as f64 / 1e6;
            Cell::num(ms, fmt_num(ms))
        }
        None => Cell::text("—").tone(Tone::Dim),
    }
}

/// The tone of a verdict: colour only for a claimed difference.
pub fn verdict_tone(e: Effect) -> Tone {
    match e {
        Effect::Faster => Tone::Good,
        Effect::Slower => Tone::Bad,
        Effect::NoDifference => Tone::Plain,
        Effect::TooFewRounds => Tone::Dim,
    }
}

/// The before/after table: one row per cell (workload × threads), the
/// median TPS of each side, the ratio after/before with its interval and
/// the verdict word; colour follows the verdict only.
pub fn before_after_table(cells: &[OltpCell]) -> Table {
    let mut t = Table::new(vec![
        Column::text("workload"),
        Column::num("threads", None),
        Column::num("rounds", None),
        Column::num("TPS before", Some("tps")),
        Column::num("TPS after", Some("tps")),
        Column::text("after / before (interval)"),
        Column::num("p", None),
        Column::text("verdict"),
        Column::num("p95 before", Some("ms")),
        Column::num("p95 after", Some("ms")),
    ])
    .titled("Before / after (measured: medians of interleaved rounds)");
    for c in cells {
        let tone = verdict_tone(c.verdict);
        let rounds = match c.stopped_at_round {
            Some(r) => format!("{} (stopped at {r})", c.rounds),
            None => c.rounds.to_string(),
        };
        let ratio = match c.ratio {
            Some(r) => Cell::num(r, c.ratio_text()),
            None => Cell::text(c.ratio_text()).tone(Tone::Dim),
        };
        t.row(vec![
            Cell::text(&c.workload),
            Cell::num(c.threads as f64, c.threads.to_string()),
            Cell::num(c.rounds as f64, rounds),
            Cell::num(c.before_tps_per_s, fmt_num(c.before_tps_per_s)),
            Cell::num(c.after_tps_per_s, fmt_num(c.after_tps_per_s)),
            ratio.tone(tone),
            Cell::num(c.p, format!("{:.3}", c.p)),
            Cell::text(c.verdict.words()).tone(tone),
            p95_ms(c.before_p95_ns),
            p95_ms(c.after_p95_ns),
        ]);
    }
    t
}

/// The ratio after/before of TPS against threads with its interval: one
/// chart per workload (the verdicts are in the table).
pub fn before_after_series(cells: &[OltpCell]) -> Vec<Series> {
    let mut workloads: Vec<&str> = Vec::new();
    for c in cells {
        if !workloads.contains(&c.workload.as_str()) {
            workloads.push(&c.workload);
        }
    }
    let mut out = Vec::new();
    for w in workloads {
        let points: Vec<Point> = cells
            .iter()
            .filter(|c| c.workload == w)
            .filter_map(|c| {
                Some(Point {
                    x: c.threads.to_string(),
                    y: c.ratio?,
                    ci: c.ci_low.zip(c.ci_high),
                })
            })
            .collect();
        if points.is_empty() {
            continue;
        }
        out.push(Series {
            title: format!("{w}: TPS after / before against threads, with its interval"),
            kind: ChartKind::Line,
            x_label: "threads".into(),
            y_label: "after / before".into(),
            y_unit: Some("×".into()),
            lines: vec![Line {
                name: "after / before".into(),
                points,
            }],
            table_fallback: false,
        });
    }
    out
}

/// `stack` lines (`  name (kind, scheduler X)`, two spaces a level) as a tree.
pub fn stack_tree(stack: &[String]) -> Vec<TreeNode> {
    stack
        .iter()
        .map(|l| {
            let t = l.trim_start_matches(' ');
            let depth = (l.len() - t.len()) / 2;
            let (label, detail) = match t.split_once(" (") {
                Some((n, d)) => (n, d.strip_suffix(')').unwrap_or(d)),
                None => (t, ""),
            };
            TreeNode {
                depth,
                label: label.into(),
                detail: detail.into(),
            }
        })
        .collect()
}

fn vars_table(b: &SandboxVars, a: &SandboxVars) -> Table {
    let mut t = Table::new(vec![
        Column::text("variable"),
        Column::text("before"),
        Column::text("after"),
    ])
    .titled("Sandbox server variables (sized to the sandbox's data)");
    let mut names: Vec<&String> = b.variables.iter().map(|(k, _)| k).collect();
    for (k, _) in &a.variables {
        if !names.contains(&k) {
            names.push(k);
        }
    }
    let get = |v: &SandboxVars, n: &str| {
        v.variables
            .iter()
            .find(|(k, _)| k == n)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| "(default)".into())
    };
    for n in names {
        let (bv, av) = (get(b, n), get(a, n));
        let tone = if bv != av { Tone::Strong } else { Tone::Plain };
        t.row(vec![
            Cell::text(n.as_str()),
            Cell::text(bv),
            Cell::text(av).tone(tone),
        ]);
    }
    t
}

impl crate::export::Report for TuneReport {
    const COMMAND: &'static str = "tune";

    /// The text page ends with the apply command.
    fn closing_line(&self) -> Option<String> {
        Some(format!("to apply: {}", self.apply_command))
    }

    fn document(&self) -> Document {
        let mut d = Document::new(format!("innotune tune: {}", self.path.display()));
        if let Some(i) = &self.interrupted {
            d.note(
                Tone::Warn,
                format!("Interrupted ({i}): this report has what was measured until then; everything switched was put back."),
            );
        }
        d.heading("Host and stack");
        let mut kv = KeyValues::new();
        kv.add(
            "path",
            format!("{} ({})", self.path.display(), self.path_source),
        );
        if let Some(m) = &self.mount {
            kv.add("mount", m.as_str());
        }
        kv.add("server", self.server.as_str());
        kv.add(
            "time",
            format!(
                "{} of a {} budget",
                secs(self.elapsed_s),
                secs(self.budget_s)
            ),
        );
        d.key_values(kv);
        d.tree(stack_tree(&self.stack));
        let mut ph = Table::new(vec![
            Column::text("phase"),
            Column::text("status"),
            Column::num("time", Some("s")),
            Column::text("note"),
        ]);
        for p in &self.phases {
            let tone = match p.status {
                Status::Done => Tone::Good,
                Status::Skipped => Tone::Dim,
                Status::Failed | Status::Interrupted => Tone::Warn,
            };
            ph.row(vec![
                Cell::text(&p.name),
                Cell::text(format!("{:?}", p.status).to_lowercase()).tone(tone),
                Cell::num(p.elapsed_s, format!("{:.1}", p.elapsed_s)),
                Cell::text(p.note.clone().unwrap_or_default()),
            ]);
        }
        d.table(ph);

        d.heading("Findings");
        if self.findings.is_empty() {
            d.paragraph("No findings (or check did not run).");
        } else {
            let f: Vec<_> = self.findings.iter().map(|a| a.finding.clone()).collect();
            d.findings(&f);
        }

        d.heading("Scheduler sweep");
        match (&self.sweep, &self.sweep_report) {
            (Some(s), Some(r)) => {
                d.note(
                    Tone::Strong,
                    format!(
                        "Recommendation: {} ({})",
                        s.recommendation.headline(),
                        s.recommendation.reason
                    ),
                );
                // The sweep's own tables and verdicts, below its title.
                let sd = crate::export::Report::document(r);
                for b in sd.blocks {
                    if let crate::export::doc::Block::Heading { level, text } = b {
                        d.push(crate::export::doc::Block::Heading {
                            level: (level + 1).min(4),
                            text,
                        });
                    } else {
                        d.push(b);
                    }
                }
            }
            (Some(s), None) => {
                d.note(
                    Tone::Strong,
                    format!(
                        "Recommendation: {} ({})",
                        s.recommendation.headline(),
                        s.recommendation.reason
                    ),
                );
                d.paragraph("The sweep's tables and verdicts are in sweep.json, which is not next to this tune.json.");
            }
            (None, _) => {
                d.paragraph("The sweep did not complete: no scheduler verdicts.");
            }
        }

        d.heading("OLTP before and after");
        for t in &self.durability {
            if t.measured {
                d.note(
                    Tone::Warn,
                    format!(
                        "\"after\" includes the durability trade-off {} = {} (--allow-durability-tradeoffs): on a crash it loses {}.",
                        t.name, t.value, t.loses
                    ),
                );
            } else {
                d.note(
                    Tone::Plain,
                    format!(
                        "{} = {} is a durability trade-off (a crash would lose {}): left out of \"after\" and not measured; --allow-durability-tradeoffs measures it.",
                        t.name, t.value, t.loses
                    ),
                );
            }
        }
        match &self.oltp {
            Some(c) => {
                d.paragraph(c.profiles.note.clone());
                d.paragraph(format!(
                    "{} on {} tables × {} rows; both servers loaded and warmed ({:.0} s per workload each) before anything was timed. Each cell ran up to {} rounds of {:.1} s on each side, the cells in a shuffled order and the side that goes first drawn each time (seed {}){}. Each verdict is the exact rank test of the rounds' TPS at 5 %, a difference of 3 % or more.",
                    c.server_version,
                    c.tables,
                    c.table_size,
                    c.warmup_s,
                    c.rounds_planned,
                    c.window_s,
                    c.seed,
                    if c.sequential {
                        "; a cell stops once its verdict crosses its sequential boundary"
                    } else {
                        ""
                    }
                ));
                d.table(before_after_table(&c.cells));
                for s in before_after_series(&c.cells) {
                    d.series(s);
                }
                if !c.dropped.is_empty() {
                    let mut t = Table::new(vec![
                        Column::text("workload"),
                        Column::num("threads", None),
                        Column::text("why"),
                    ])
                    .titled("Cells not measured");
                    for x in &c.dropped {
                        t.row(vec![
                            Cell::text(&x.workload),
                            Cell::num(x.threads as f64, x.threads.to_string()),
                            Cell::text(&x.why),
                        ]);
                    }
                    d.table(t);
                }
                if let Some(n) = &c.note {
                    d.note(Tone::Warn, n.clone());
                }
                d.table(vars_table(&c.profiles.before, &c.profiles.after));
            }
            None => {
                let why = self
                    .phases
                    .iter()
                    .find(|p| p.name == "oltp")
                    .and_then(|p| p.note.clone())
                    .unwrap_or_else(|| "not run".into());
                d.paragraph(format!("No before/after measurement: {why}."));
            }
        }

        d.heading("Changed settings");
        if self.changed.is_empty() {
            d.paragraph("Nothing to change.");
        } else {
            let mut t = Table::new(vec![
                Column::text("setting"),
                Column::text("before"),
                Column::text("after"),
                Column::text("finding"),
            ]);
            for c in &self.changed {
                t.row(vec![
                    Cell::text(&c.setting),
                    Cell::text(&c.before),
                    Cell::text(&c.after).tone(Tone::Strong),
                    Cell::text(&c.finding),
                ]);
            }
            d.table(t);
        }

        d.heading("Emitted files");
        if self.emitted.is_empty() {
            d.paragraph("None.");
        } else {
            let mut t = Table::new(vec![
                Column::text("kind"),
                Column::text("installs as"),
                Column::text("written to"),
            ]);
            for e in &self.emitted {
                t.row(vec![
                    Cell::text(e.file.kind.as_ref()),
                    Cell::text(&e.file.path),
                    Cell::text(&e.written),
                ]);
            }
            d.table(t);
        }

        d.heading("Apply");
        d.paragraph("This makes the advice true now and at boot, journaled (`innotune restore` undoes it); without --yes it only shows the plan:");
        d.preformatted(format!("{}\n", self.apply_command));
        d
    }
}

/// oltp-before.json / oltp-after.json: one side's variables and runs.
#[derive(Debug, Serialize, serde::Deserialize)]
pub struct OltpSide {
    pub side: String,
    pub variables: Vec<(String, String)>,
    pub runs: Vec<OltpResult>,
}

impl crate::export::Report for OltpSide {
    const COMMAND: &'static str = "tune-oltp";

    fn document(&self) -> Document {
        let mut d = Document::new(format!("OLTP {}", self.side));
        let mut v = Table::new(vec![Column::text("variable"), Column::text("value")])
            .titled(format!("Sandbox server variables ({})", self.side));
        for (k, val) in &self.variables {
            v.row(vec![Cell::text(k), Cell::text(val)]);
        }
        d.table(v);
        let mut t = Table::new(vec![
            Column::text("workload"),
            Column::num("threads", None),
            Column::num("TPS", Some("tps")),
            Column::num("QPS", Some("qps")),
            Column::num("p95", Some("ms")),
            Column::num("p99", Some("ms")),
        ]);
        let ms = |r: &OltpResult, p: &str| match r.latency_ms.percentiles.get(p) {
            Some(&v) => Cell::num(v, fmt_num(v)),
            None => Cell::text("—").tone(Tone::Dim),
        };
        for r in &self.runs {
            t.row(vec![
                Cell::text(&r.workload),
                Cell::num(r.threads as f64, r.threads.to_string()),
                Cell::num(r.tps, fmt_num(r.tps)),
                Cell::num(r.qps, fmt_num(r.qps)),
                ms(r, "95"),
                ms(r, "99"),
            ]);
        }
        d.table(t);
        for s in crate::oltp::thread_series(&self.runs) {
            d.series(s);
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::super::oltp::{self, Profiles, Samples, SandboxVars, Tradeoff};
    use super::*;
    use crate::finding::{Finding, Layer, Severity, Subject, SubjectKind};

    fn advice(id: &str, s: Setting) -> Advice {
        Advice::new(Finding::new(
            id,
            Severity::Warning,
            Layer::Server,
            Subject::new(SubjectKind::ServerVariable, id),
            "x",
            "y",
        ))
        .set(s)
    }

    fn var(name: &str, value: &str) -> Setting {
        Setting::ServerVariable {
            name: name.into(),
            value: value.into(),
            dynamic: true,
            reason: "test".into(),
        }
    }

    fn vars(side: &str, v: &[(&str, &str)]) -> SandboxVars {
        SandboxVars {
            side: side.into(),
            variables: v
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
        }
    }

    #[test]
    fn findings_say_what_was_measured_or_why_not() {
        let profiles = Profiles {
            before: vars("before", &[("innodb_buffer_pool_size", "16M")]),
            after: vars(
                "after",
                &[("innodb_buffer_pool_size", "64M"), ("slow_query_log", "ON")],
            ),
            dataset_bytes: 1,
            scale: None,
            note: String::new(),
            durability: vec![Tradeoff {
                name: "innodb_flush_log_at_trx_commit".into(),
                value: "2".into(),
                loses: "x".into(),
                measured: false,
            }],
        };
        let s = Samples {
            before: vec![100.0, 101.0, 99.0, 100.5],
            after: vec![150.0, 151.0, 149.0, 150.5],
            ..Default::default()
        };
        let key = oltp::CellKey {
            workload: crate::oltp::Workload::OltpReadOnly,
            threads: 4,
        };
        let mut r = TuneReport::new("/x".into(), "argument", "/o".into(), 60.0, true);
        r.oltp = Some(Comparison {
            profiles: profiles.clone(),
            tables: 2,
            table_size: 10,
            server_version: "v".into(),
            window_s: 1.0,
            rounds_planned: 4,
            seed: 1,
            warmup_s: 2.0,
            sequential: false,
            cells: vec![oltp::judge(key, &s, oltp::ALPHA, 1)],
            dropped: Vec::new(),
            note: None,
            runs_before: Vec::new(),
            runs_after: Vec::new(),
        });
        r.findings = vec![
            advice("server.pool", var("innodb_buffer_pool_size", "1G")),
            advice("server.slowlog", var("slow_query_log", "ON")),
            advice(
                "server.durability",
                var("innodb_flush_log_at_trx_commit", "2"),
            ),
            advice(
                "os.swappiness",
                Setting::Sysctl {
                    name: "vm.swappiness".into(),
                    value: "1".into(),
                },
            ),
        ];
        r.attach_measurements(&profiles, None);
        let f = |i: usize| &r.findings[i].finding;
        assert_eq!(f(0).measured.len(), 1);
        assert_eq!(f(0).measured[0].verdict, "faster");
        assert!(f(0).measured[0].ci_low > 1.0);
        assert!(f(0).not_measured.is_none());
        assert!(f(1)
            .not_measured
            .as_deref()
            .unwrap()
            .contains("not measurable on a sandbox"));
        assert!(f(2)
            .not_measured
            .as_deref()
            .unwrap()
            .contains("durability trade-off not allowed"));
        assert!(f(3).not_measured.as_deref().unwrap().contains("host-wide"));
        // JSON: measured[] on the finding, not_measured absent when measured.
        let v = serde_json::to_value(f(0)).unwrap();
        assert_eq!(v["measured"][0]["workload"], "oltp_read_only");
        assert!(v.get("not_measured").is_none());
        let back: Finding = serde_json::from_value(v).unwrap();
        assert_eq!(back.measured, f(0).measured);
        // The card shows it, coloured by the verdict.
        let mut d = Document::new("t");
        d.findings(&[f(0).clone()]);
        let html = crate::export::html::render_page("t", &[d]);
        assert!(
            html.contains("<dt>measured</dt><dd class=\"good\">oltp_read_only at 4 thread(s)"),
            "{html}"
        );
    }
}
