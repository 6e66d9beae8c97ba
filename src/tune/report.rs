//! `innotune tune`'s typed result (JSON schema `tune/2`, docs/json-tune.md)
//! and the document summary.md and report.html are rendered from.

use super::oltp::{Comparison, SandboxVars};
use crate::check::report::{CheckReport, EmittedFile};
use crate::check::rules::{Advice, Setting};
use crate::export::doc::{
    Cell, ChartKind, Column, KeyValues, Line, Point, Series, Table, Tone, TreeNode,
};
use crate::export::text::fmt_num;
use crate::export::Document;
use crate::oltp::OltpResult;
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

fn pct(v: Option<f64>) -> Cell {
    match v {
        Some(p) => {
            let tone = if p >= 3.0 {
                Tone::Good
            } else if p <= -3.0 {
                Tone::Bad
            } else {
                Tone::Plain
            };
            Cell::num(p, format!("{p:+.1}%")).tone(tone)
        }
        None => Cell::text("—").tone(Tone::Dim),
    }
}

/// The before/after table: one row per workload and thread count.
pub fn before_after_table(pairs: &[super::oltp::Pair]) -> Table {
    let mut t = Table::new(vec![
        Column::text("workload"),
        Column::num("threads", None),
        Column::num("TPS before", Some("tps")),
        Column::num("TPS after", Some("tps")),
        Column::num("TPS change", Some("%")),
        Column::num("QPS before", Some("qps")),
        Column::num("QPS after", Some("qps")),
        Column::num("p95 before", Some("ms")),
        Column::num("p95 after", Some("ms")),
    ])
    .titled("Before / after (measured)");
    for p in pairs {
        t.row(vec![
            Cell::text(&p.workload),
            Cell::num(p.threads as f64, p.threads.to_string()),
            Cell::num(p.before.tps_per_s, fmt_num(p.before.tps_per_s)),
            Cell::num(p.after.tps_per_s, fmt_num(p.after.tps_per_s)),
            pct(p.tps_change_pct()),
            Cell::num(p.before.queries_per_s, fmt_num(p.before.queries_per_s)),
            Cell::num(p.after.queries_per_s, fmt_num(p.after.queries_per_s)),
            p95_ms(p.before.p95_ns),
            p95_ms(p.after.p95_ns),
        ]);
    }
    t
}

/// TPS and QPS against threads, before and after: one chart per workload
/// and metric (the numbers are in the before/after table).
pub fn before_after_series(pairs: &[super::oltp::Pair]) -> Vec<Series> {
    let mut workloads: Vec<&str> = Vec::new();
    for p in pairs {
        if !workloads.contains(&p.workload.as_str()) {
            workloads.push(&p.workload);
        }
    }
    type Get = fn(&super::oltp::Pair) -> f64;
    let metrics: [(&str, &str, Get, Get); 2] = [
        ("TPS", "tps", |p| p.before.tps_per_s, |p| p.after.tps_per_s),
        (
            "QPS",
            "qps",
            |p| p.before.queries_per_s,
            |p| p.after.queries_per_s,
        ),
    ];
    let mut out = Vec::new();
    for w in workloads {
        for (metric, unit, before, after) in metrics {
            let line = |name: &str, get: Get| Line {
                name: name.into(),
                points: pairs
                    .iter()
                    .filter(|p| p.workload == w)
                    .map(|p| Point {
                        x: p.threads.to_string(),
                        y: get(p),
                        ci: None,
                    })
                    .collect(),
            };
            out.push(Series {
                title: format!("{w}: {metric} against threads, before and after"),
                kind: ChartKind::Line,
                x_label: "threads".into(),
                y_label: metric.into(),
                y_unit: Some(unit.into()),
                lines: vec![line("before", before), line("after", after)],
                table_fallback: false,
            });
        }
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
        match &self.oltp {
            Some(c) => {
                d.paragraph(c.profiles.note.clone());
                d.paragraph(format!(
                    "{} on {} tables × {} rows, {:.1} s per run; {} of {} pairs measured.",
                    c.server_version,
                    c.tables,
                    c.table_size,
                    c.window_s,
                    c.pairs.len(),
                    c.planned
                ));
                d.table(before_after_table(&c.pairs));
                for s in before_after_series(&c.pairs) {
                    d.series(s);
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
