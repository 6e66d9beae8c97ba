//! The typed result of `innotune tune --search` (JSON schema `search/2`,
//! fields in docs/json-tune.md) and its document.

use super::knobs::{Knob, Skipped};
use crate::export::doc::{Cell, ChartKind, Column, Document, KeyValues, Line, Series, Table, Tone};
use crate::journal::Restored;
use crate::prove::ProveCell;
use crate::trial::trials::Trial;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// One configuration tried.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Candidate {
    pub label: String,
    /// Level index per knob (0: the current value), in `knobs` order.
    pub config: Vec<usize>,
    /// What it changes, in the live server's terms.
    pub changes: Vec<Change>,
    /// Rounds it ran (each next to the current settings).
    pub rounds: u32,
    /// Median of its per-round ratios to current; absent before a trial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// Its ratio in the first rung (one trial), for the importance table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_ratio: Option<f64>,
    /// With two rounds or more: the Hodges–Lehmann ratio to current and
    /// its exact 95 % interval (search trials; the proof is separate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_low: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_high: Option<f64>,
}

/// One variable a candidate changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    pub name: String,
    /// The live server's value now (empty when it follows another, as
    /// innodb_io_capacity_max follows the capacity).
    pub from: String,
    pub to: String,
}

impl Candidate {
    pub fn new(label: String, config: Vec<usize>, changes: Vec<(String, String, String)>) -> Self {
        Candidate {
            label,
            config,
            changes: changes
                .into_iter()
                .map(|(name, from, to)| Change { name, from, to })
                .collect(),
            rounds: 0,
            score: None,
            first_ratio: None,
            ratio: None,
            ci_low: None,
            ci_high: None,
        }
    }

    /// `1.84 (1.52–2.10)` or the median ratio alone.
    pub fn interval_words(&self) -> String {
        match (self.ratio, self.ci_low, self.ci_high) {
            (Some(r), Some(a), Some(b)) => format!("{r:.3} (95 % interval {a:.3}–{b:.3})"),
            _ => match self.score {
                Some(s) => format!("{s:.3} (median of {} round(s), no interval)", self.rounds),
                None => "? (not measured)".into(),
            },
        }
    }

    fn describe(&self) -> String {
        self.changes
            .iter()
            .filter(|c| !c.from.is_empty() || c.name != "innodb_io_capacity_max")
            .map(|c| format!("{}={}", c.name, c.to))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// One rung of the halving.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RungRecord {
    pub rung: u32,
    pub candidates: Vec<String>,
    pub rounds: u32,
    /// The ones that went on (the last rung's first is the winner).
    pub survivors: Vec<String>,
}

/// Best so far after a round.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Point {
    pub elapsed_s: f64,
    pub trials: usize,
    pub best: String,
    /// Its median ratio to current so far.
    pub score: f64,
}

/// How much one knob moved the result (first rung, main effects).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Importance {
    pub knob: String,
    /// The level with the highest geometric-mean ratio (live terms).
    pub best: String,
    pub worst: String,
    pub current: String,
    /// Best level's geometric-mean ratio over the worst level's.
    pub spread: f64,
    /// Best level's over the current level's, when the current level ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub over_current: Option<f64>,
    /// First-rung candidates it is estimated from.
    pub candidates: usize,
}

/// The proof: the winner against current, as `prove` compares.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Confirmation {
    pub arm: String,
    /// Rounds planned (the most; sequential looks may stop earlier).
    pub rounds: u32,
    pub rounds_run: u32,
    /// The level of the last look.
    pub level: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell: Option<ProveCell>,
}

/// What to do.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Recommendation {
    /// True: keep the current settings.
    pub keep: bool,
    pub reason: String,
    /// The proved candidate's changes (live terms).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<Change>,
    /// A `[mysqld]` drop-in with them.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub dropin: String,
    /// `SET GLOBAL` statements that make them true now (the dynamic ones).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub set_global: Vec<String>,
    /// Changes the server reads only at start: they take effect at its
    /// next restart (from the drop-in).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub at_restart: Vec<String>,
    /// The command that makes it so, journaled.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub apply_command: String,
}

impl Recommendation {
    pub fn keep(reason: &str) -> Recommendation {
        Recommendation {
            keep: true,
            reason: reason.into(),
            ..Default::default()
        }
    }

    /// The changes that proved faster, in live terms. Server variables go
    /// into the drop-in and, unless named in `restart` (read only at
    /// start), `SET GLOBAL`; OS settings (`queue/ATTR` of the disks under
    /// `path`, sysctls) only into the apply command, which persists them as
    /// check's own advice is (a udev rule, sysctl.d).
    #[allow(clippy::too_many_arguments)]
    pub fn change(
        winner: &str,
        changes: Vec<(String, String, String)>,
        restart: &[String],
        conn: &crate::db::ConnArgs,
        cell: Option<&ProveCell>,
        path: &std::path::Path,
        devices: &[String],
    ) -> Recommendation {
        let changes: Vec<Change> = changes
            .into_iter()
            .map(|(name, from, to)| Change { name, from, to })
            .collect();
        let is_os = |c: &&Change| c.name.starts_with("queue/") || c.name.contains('.');
        let server: Vec<&Change> = changes.iter().filter(|c| !is_os(c)).collect();
        let mut dropin = String::new();
        if !server.is_empty() {
            dropin.push_str(
                "# innotune tune --search: proved faster than the settings it replaces\n[mysqld]\n",
            );
        }
        for c in &server {
            dropin.push_str(&format!("{} = {}\n", c.name, c.to));
        }
        let at_restart: Vec<String> = server
            .iter()
            .filter(|c| restart.contains(&c.name))
            .map(|c| c.name.clone())
            .collect();
        let set_global = server
            .iter()
            .filter(|c| !restart.contains(&c.name))
            .map(|c| {
                let v = crate::db::parse_size(&c.to)
                    .filter(|_| c.to.ends_with(['M', 'G', 'K']))
                    .map_or(c.to.clone(), |b| b.to_string());
                format!("SET GLOBAL {} = {v};", c.name)
            })
            .collect();
        let mut w = vec!["innotune".to_string(), "apply".into()];
        if changes.iter().any(|c| is_os(&c)) {
            // The OS settings are the disks' under PATH.
            w.push(crate::output::shell_quote(&path.display().to_string()));
        }
        w.extend(["--only".into(), "server".into()]);
        if let Some(s) = &conn.socket {
            w.push(format!("--socket {}", s.display()));
        }
        if let Some(h) = &conn.host {
            w.push(format!("--host {h}"));
        }
        if let Some(p) = conn.port {
            w.push(format!("--port {p}"));
        }
        if let Some(u) = &conn.user {
            w.push(format!("--user {u}"));
        }
        for c in &changes {
            match c.name.strip_prefix("queue/") {
                // The disks the search switched, by name: apply's
                // `queue/ATTR` alone would take every disk under PATH,
                // the one under a loop device's file too.
                Some(attr) => {
                    for d in devices {
                        w.push(format!("--set {d}/queue/{attr}={}", c.to));
                    }
                }
                None => w.push(format!("--set {}={}", c.name, c.to)),
            }
        }
        w.push("--yes".into());
        let (ratio, lo, hi, level) = cell.map_or((None, None, None, 0.95), |c| {
            (
                c.throughput.ratio,
                c.throughput.ci_low,
                c.throughput.ci_high,
                c.throughput.ci_level,
            )
        });
        Recommendation {
            keep: false,
            reason: format!(
                "{winner} is faster than the current settings: ×{} ({:.1} % interval {}–{}), proved in interleaved rounds",
                super::fmt_opt(ratio),
                level * 100.0,
                super::fmt_opt(lo),
                super::fmt_opt(hi)
            ),
            changes,
            dropin,
            set_global,
            at_restart,
            apply_command: w.join(" "),
        }
    }
}

/// One trial, with the phase it belongs to.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SearchTrial {
    /// `rung N` or `proof`.
    pub phase: String,
    /// Round within the search (all rungs counted) or within the proof.
    pub search_round: u32,
    /// Seconds since the run started, at the trial's end.
    pub at_s: f64,
    #[serde(flatten)]
    pub trial: Trial,
}

impl SearchTrial {
    pub fn new(phase: &str, round: u32, at_s: f64, trial: Trial) -> SearchTrial {
        SearchTrial {
            phase: phase.into(),
            search_round: round,
            at_s,
            trial,
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub struct SearchReport {
    pub path: PathBuf,
    /// The live server (`MariaDB 10.11.6 at /run/mysqld/mysqld.sock`), or
    /// why none.
    pub live_server: String,
    pub server_version: String,
    /// How "current" was built on the sandbox from the live server.
    pub current_note: String,
    pub workload: String,
    pub budget_s: f64,
    pub elapsed_s: f64,
    /// Seconds from the start to the loaded sandbox.
    pub setup_s: f64,
    pub trial_s: f64,
    pub warmup_s: f64,
    #[serde(
        rename = "min_effect_pct",
        serialize_with = "crate::stats::as_pct",
        deserialize_with = "crate::stats::from_pct"
    )]
    pub min_effect: f64,
    pub seed: u64,
    pub knobs: Vec<Knob>,
    pub skipped: Vec<Skipped>,
    pub planned_trials: usize,
    /// Restarts of the sandbox for restart knobs (trying their levels,
    /// then between groups of trials), and the seconds they took, each
    /// until the buffer pool was loaded again.
    #[serde(default)]
    pub restarts: u32,
    #[serde(default)]
    pub restart_s: f64,
    pub candidates: Vec<Candidate>,
    pub rungs: Vec<RungRecord>,
    pub trajectory: Vec<Point>,
    pub importance: Vec<Importance>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_early: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub winner: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmation: Option<Confirmation>,
    pub recommendation: Recommendation,
    /// `SIGINT`/`SIGTERM` when a signal ended the run early.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<crate::trial::server::OltpSetup>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    pub restored: Vec<Restored>,
    pub trials: Vec<SearchTrial>,
}

impl SearchReport {
    pub fn new(p: &super::Prepared, workload: &str, setup_s: f64) -> SearchReport {
        SearchReport {
            path: p.path.clone(),
            live_server: p
                .live
                .as_ref()
                .map_or("not reached".to_string(), |(l, _)| l.clone()),
            server_version: String::new(),
            current_note: p
                .profiles
                .note
                .split("; after:")
                .next()
                .unwrap_or_default()
                .to_string(),
            workload: workload.into(),
            budget_s: p.budget.as_secs_f64(),
            elapsed_s: 0.0,
            setup_s,
            trial_s: p.trial.as_secs_f64(),
            warmup_s: p.warmup.as_secs_f64(),
            min_effect: p.min_effect,
            seed: p.seed,
            knobs: Vec::new(),
            skipped: Vec::new(),
            planned_trials: 0,
            restarts: 0,
            restart_s: 0.0,
            candidates: Vec::new(),
            rungs: Vec::new(),
            trajectory: Vec::new(),
            importance: Vec::new(),
            stopped_early: None,
            winner: None,
            confirmation: None,
            recommendation: Recommendation::keep("the run ended before a result"),
            interrupted: None,
            sandbox: None,
            notes: Vec::new(),
            restored: Vec::new(),
            trials: Vec::new(),
        }
    }
}

fn opt3(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{v:.3}"))
}

impl crate::export::Report for SearchReport {
    const COMMAND: &'static str = "search";

    fn exit_code(&self) -> i32 {
        match self.interrupted.as_deref() {
            Some("SIGTERM") => 128 + libc::SIGTERM,
            Some(_) => 128 + libc::SIGINT,
            None => crate::error::exit::OK,
        }
    }

    fn closing_line(&self) -> Option<String> {
        (!self.recommendation.keep)
            .then(|| format!("to apply: {}", self.recommendation.apply_command))
    }

    fn document(&self) -> Document {
        let mut d = Document::new(format!("tune --search {}", self.path.display()));
        if let Some(i) = &self.interrupted {
            d.note(
                Tone::Warn,
                format!("Interrupted ({i}): this report has what was measured until then; everything switched was put back."),
            );
        }
        let rec = &self.recommendation;
        d.heading("Recommendation");
        if rec.keep {
            d.note(Tone::Plain, rec.reason.clone());
        } else {
            d.note(Tone::Good, rec.reason.clone());
            d.preformatted(rec.dropin.clone());
            if !rec.set_global.is_empty() {
                d.paragraph(format!(
                    "Now, on the running server: {}",
                    rec.set_global.join(" ")
                ));
            }
            if !rec.at_restart.is_empty() {
                d.paragraph(format!(
                    "At the server's next restart (read only at start): {}",
                    rec.at_restart.join(", ")
                ));
            }
        }
        let mut kv = KeyValues::new();
        kv.add("live server", self.live_server.clone());
        kv.add(
            "sandbox",
            format!("{} · {}", self.server_version, self.current_note),
        );
        kv.add("workload", self.workload.clone());
        kv.add(
            "time",
            format!(
                "{:.0} s of a {:.0} s budget (sandbox ready after {:.0} s); trials {:.0} s after {:.0} s warm-up",
                self.elapsed_s, self.budget_s, self.setup_s, self.trial_s, self.warmup_s
            ),
        );
        kv.add(
            "search",
            format!(
                "successive halving: {} candidates, {} rungs, {} trials (≈{} planned)",
                self.candidates.len(),
                self.rungs.len(),
                self.trials.iter().filter(|t| t.phase != "proof").count(),
                self.planned_trials
            ),
        );
        if self.restarts > 0 {
            kv.add(
                "restarts",
                format!(
                    "{} sandbox restarts for {} ({:.0} s in all, each until its buffer pool was loaded); trials sharing their levels run together",
                    self.restarts,
                    self.knobs
                        .iter()
                        .filter(|k| k.kind == super::knobs::Kind::Restart)
                        .map(|k| k.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    self.restart_s
                ),
            );
        }
        if let Some(s) = &self.stopped_early {
            kv.add("stopped early", s.clone());
        }
        kv.add("seed", self.seed.to_string());
        d.key_values(kv);
        if let Some(c) = &self.confirmation {
            d.heading("Proof");
            let mut t = Table::new(vec![
                Column::text("arm"),
                Column::num("median", Some("tps")),
                Column::num("ratio", None),
                Column::text("interval"),
                Column::num("p", None),
                Column::text("verdict"),
                Column::num("rounds", None),
            ]);
            if let Some(cell) = &c.cell {
                let s = &cell.throughput;
                t.row(vec![
                    Cell::text("current"),
                    Cell::num(s.baseline_median, format!("{:.0}", s.baseline_median)),
                    Cell::text("1"),
                    Cell::empty(),
                    Cell::empty(),
                    Cell::text("(baseline)").tone(Tone::Dim),
                    Cell::empty(),
                ]);
                t.row(vec![
                    Cell::text(c.arm.clone()),
                    Cell::num(s.median, format!("{:.0}", s.median)),
                    Cell::num(s.ratio.unwrap_or(f64::NAN), opt3(s.ratio)),
                    Cell::text(format!(
                        "{}–{} ({:.1}%)",
                        opt3(s.ci_low),
                        opt3(s.ci_high),
                        s.ci_level * 100.0
                    )),
                    Cell::num(s.p, format!("{:.4}", s.p)),
                    Cell::text(cell.verdict.words()).tone(crate::prove::report::tone(cell.verdict)),
                    Cell::num(
                        c.rounds_run as f64,
                        format!("{} of ≤{}", c.rounds_run, c.rounds),
                    ),
                ]);
            }
            d.table(t);
        }
        d.heading("Top configurations");
        let mut ranked: Vec<&Candidate> = self
            .candidates
            .iter()
            .filter(|c| c.score.is_some())
            .collect();
        ranked.sort_by(|a, b| {
            b.rounds
                .cmp(&a.rounds)
                .then(b.score.unwrap_or(0.0).total_cmp(&a.score.unwrap_or(0.0)))
        });
        let mut t = Table::new(vec![
            Column::text("candidate"),
            Column::num("rounds", None),
            Column::num("median ratio", None),
            Column::text("95 % interval"),
            Column::text("changes"),
        ]);
        for c in ranked.iter().take(8) {
            t.row(vec![
                Cell::text(c.label.clone()),
                Cell::num(c.rounds as f64, c.rounds.to_string()),
                Cell::num(c.score.unwrap_or(f64::NAN), opt3(c.score)),
                Cell::text(match (c.ci_low, c.ci_high) {
                    (Some(a), Some(b)) => format!("{a:.3}–{b:.3}"),
                    _ => "-".into(),
                }),
                Cell::text(c.describe()),
            ]);
        }
        d.table(t);
        if !self.trajectory.is_empty() {
            d.series(Series {
                title: "Best so far against time".into(),
                kind: ChartKind::Line,
                x_label: "seconds since start".into(),
                y_label: "best median ratio to current".into(),
                y_unit: None,
                lines: vec![Line {
                    name: "best so far".into(),
                    points: self
                        .trajectory
                        .iter()
                        .map(|p| crate::export::doc::Point {
                            x: format!("{:.0}", p.elapsed_s),
                            y: p.score,
                            ci: None,
                        })
                        .collect(),
                }],
                table_fallback: true,
            });
        }
        if !self.importance.is_empty() {
            d.heading("Which settings mattered");
            let mut t = Table::new(vec![
                Column::text("setting"),
                Column::text("current"),
                Column::text("best level"),
                Column::text("worst level"),
                Column::num("best / worst", None),
                Column::num("best / current", None),
                Column::num("candidates", None),
            ]);
            for i in &self.importance {
                t.row(vec![
                    Cell::text(i.knob.clone()),
                    Cell::text(i.current.clone()),
                    Cell::text(i.best.clone()),
                    Cell::text(i.worst.clone()),
                    Cell::num(i.spread, format!("{:.2}", i.spread)),
                    Cell::num(i.over_current.unwrap_or(f64::NAN), opt3(i.over_current)),
                    Cell::num(i.candidates as f64, i.candidates.to_string()),
                ]);
            }
            d.table(t);
            d.paragraph(
                "Main effects from the first rung (one short trial per candidate, a random design): \
                 for each setting, the geometric mean of the candidates' ratios to current at each level. \
                 An estimate to read with the intervals above, not a verdict.",
            );
        }
        if !self.skipped.is_empty() {
            d.heading("Not searched");
            let mut t = Table::new(vec![Column::text("setting"), Column::text("why")]);
            for s in &self.skipped {
                t.row(vec![
                    Cell::text(s.name.clone()),
                    Cell::text(s.reason.clone()),
                ]);
            }
            d.table(t);
        }
        for k in self.knobs.iter().filter(|k| k.durability.is_some()) {
            d.note(
                Tone::Warn,
                format!(
                    "{} is a durability trade-off (searched with --allow-durability-tradeoffs): at another value a crash loses {}",
                    k.name,
                    k.durability.as_deref().unwrap_or("")
                ),
            );
        }
        for n in &self.notes {
            d.note(Tone::Dim, n.clone());
        }
        d.paragraph(
            "Ratios are candidate / current settings in OLTP transactions per second on a throwaway server built like the live one \
             (above 1 is faster). The proof runs fresh interleaved rounds of current and the winner and compares them as `innotune prove` does \
             (Hodges–Lehmann ratio, exact interval, sequential looks). Every setting was journaled and put back, and the sandbox removed.",
        );
        if !rec.keep {
            d.paragraph(format!("To make it so: {}", rec.apply_command));
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A search with a restart knob: the page says how many restarts and
    /// for what, and a proved change to it is for the next restart, never
    /// a SET GLOBAL.
    #[test]
    fn restarts_and_restart_only_changes_are_shown() {
        use crate::export::{Exporter, Report};
        let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/results/search.json");
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
        let mut r: SearchReport = serde_json::from_value(v["result"].clone()).unwrap();
        r.restarts = 3;
        r.restart_s = 4.2;
        r.knobs.push(super::super::knobs::Knob {
            name: "innodb_flush_method".into(),
            kind: super::super::knobs::Kind::Restart,
            levels: ["O_DIRECT", "fsync"]
                .iter()
                .map(|v| super::super::knobs::Level {
                    live: v.to_string(),
                    sandbox: v.to_string(),
                })
                .collect(),
            durability: None,
        });
        r.recommendation = Recommendation::change(
            "c02",
            vec![(
                "innodb_flush_method".into(),
                "O_DIRECT".into(),
                "fsync".into(),
            )],
            &["innodb_flush_method".to_string()],
            &crate::db::ConnArgs::default(),
            None,
            std::path::Path::new("/srv/db"),
            &[],
        );
        let mut out = Vec::new();
        crate::export::text::Text::new(crate::output::Style::plain())
            .export(&r.document(), &mut out)
            .unwrap();
        let text = String::from_utf8_lossy(&out);
        assert!(
            text.contains("3 sandbox restarts for innodb_flush_method (4 s in all"),
            "{text}"
        );
        assert!(
            text.contains("At the server's next restart (read only at start): innodb_flush_method"),
            "{text}"
        );
        assert!(!text.contains("SET GLOBAL innodb_flush_method"), "{text}");
        let j = serde_json::to_value(&r).unwrap();
        assert_eq!(
            j["knobs"].as_array().unwrap().last().unwrap()["kind"],
            "restart"
        );
        assert_eq!(j["restarts"], 3);
    }

    /// A winner with a server variable and an OS setting: the drop-in and
    /// SET GLOBAL hold the variable only; the apply command names PATH
    /// and each disk the search switched.
    #[test]
    fn os_changes_go_to_apply_by_disk_and_not_into_the_drop_in() {
        let conn = crate::db::ConnArgs {
            socket: Some("/run/mysqld/mysqld.sock".into()),
            ..Default::default()
        };
        let r = Recommendation::change(
            "c01",
            vec![
                ("innodb_io_capacity".into(), "200".into(), "1000".into()),
                (
                    "queue/scheduler".into(),
                    "mq-deadline".into(),
                    "none".into(),
                ),
                ("vm.dirty_ratio".into(), "20".into(), "10".into()),
                (
                    "innodb_flush_method".into(),
                    "O_DIRECT".into(),
                    "fsync".into(),
                ),
            ],
            &["innodb_flush_method".to_string()],
            &conn,
            None,
            std::path::Path::new("/srv/my db"),
            &["loop0".to_string(), "loop1".to_string()],
        );
        assert!(!r.keep);
        assert_eq!(
            r.dropin
                .lines()
                .filter(|l| !l.starts_with('#'))
                .collect::<Vec<_>>(),
            [
                "[mysqld]",
                "innodb_io_capacity = 1000",
                "innodb_flush_method = fsync"
            ]
        );
        // A variable read only at start is never SET GLOBAL.
        assert_eq!(r.set_global, ["SET GLOBAL innodb_io_capacity = 1000;"]);
        assert_eq!(r.at_restart, ["innodb_flush_method"]);
        assert_eq!(
            r.apply_command,
            "innotune apply '/srv/my db' --only server --socket /run/mysqld/mysqld.sock \
             --set innodb_io_capacity=1000 --set loop0/queue/scheduler=none \
             --set loop1/queue/scheduler=none --set vm.dirty_ratio=10 \
             --set innodb_flush_method=fsync --yes"
        );
    }
}
