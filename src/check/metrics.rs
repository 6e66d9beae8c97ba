//! `innotune check --format prometheus`: check's result as node_exporter
//! textfile metrics (names, labels and example alerts in docs/metrics.md).
//!
//! What a fleet wants to alert on, and nothing that changes every run: the
//! active scheduler per disk and whether a boot rule keeps it (a scheduler
//! that drifted after a reboot), each finding by id and severity, the last
//! `checksum --record` result and its age per path, the last `tune`'s
//! before/after verdicts (each ratio with its interval and verdict, never
//! alone), and an unfinished journal (a run that was killed and left host
//! settings changed).
//!
//! Rendering reads nothing: what is not a result of the rules (the
//! checksum records and the journal, innotune's own state) is read into
//! the report's [`State`] while `check` runs.

use super::facts::Facts;
use super::rules::Advice;
use super::tune_record::TuneRecord;
use crate::checksum::record::Record;
use crate::export::prometheus::Metric;

/// innotune's own state as `check` found it: read from the state directory
/// even when `--root` replays another host's tree.
#[derive(Debug, Clone, Default)]
pub struct State {
    /// When it was read (Unix seconds): when check ran.
    pub read_unix: f64,
    /// The last `checksum --record` result per path.
    pub checksum_records: Vec<Record>,
    /// An interrupted run's journal is waiting for `innotune restore`.
    pub journal_pending: bool,
    /// Host changes recorded in the journal (a running innotune has some).
    pub journal_entries: usize,
    /// The last `innotune tune`'s verdicts, when one was recorded.
    pub tune: Option<TuneRecord>,
}

impl State {
    pub fn read() -> State {
        let (journal_pending, journal_entries) =
            match crate::journal::load(&crate::journal::journal_path()) {
                Ok(Some(j)) if !j.entries.is_empty() && !j.owner.is_alive() => {
                    (true, j.entries.len())
                }
                Ok(Some(j)) => (false, j.entries.len()),
                _ => (false, 0),
            };
        State {
            read_unix: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |t| t.as_secs_f64()),
            checksum_records: crate::checksum::record::load_all(),
            journal_pending,
            journal_entries,
            tune: super::tune_record::load(),
        }
    }
}

/// The metrics of one check: whether it reached a server, the facts it
/// read, the advice it gave and the state it found (a `CheckReport`'s
/// parts).
pub fn metrics(
    server_reached: bool,
    facts: &Facts,
    findings: &[Advice],
    state: &State,
) -> Vec<Metric> {
    let mut out = Vec::new();
    out.push(
        Metric::gauge(
            "innotune_check_last_run_timestamp_seconds",
            "When innotune check wrote these metrics (Unix time).",
        )
        .with(&[], state.read_unix.floor()),
    );
    out.push(
        Metric::gauge(
            "innotune_check_server_reached",
            "1 when check reached a MySQL/MariaDB server and ran the server rules.",
        )
        .with(&[], f64::from(u8::from(server_reached))),
    );

    let mut active = Metric::gauge(
        "innotune_block_scheduler",
        "I/O scheduler of a whole disk: 1 for the active one, 0 for the others it offers.",
    );
    let mut rotational = Metric::gauge(
        "innotune_block_rotational",
        "The kernel's rotational flag of a disk under the checked path.",
    );
    let mut persisted = Metric::gauge(
        "innotune_block_scheduler_persisted",
        "1 when a boot rule (udev, systemd unit, tmpfiles.d) sets the disk's active scheduler.",
    );
    let mut drift = Metric::gauge(
        "innotune_block_scheduler_drift",
        "1 when a boot rule names a scheduler other than the active one (changed since boot, or the rule no longer applies).",
    );
    for d in facts.devices.iter().filter(|d| d.is_scheduled_disk()) {
        let cur = d.scheduler.as_deref().unwrap_or_default();
        for s in &d.schedulers_available {
            active.sample(
                &[("device", d.name.as_str()), ("scheduler", s.as_str())],
                f64::from(u8::from(s == cur)),
            );
        }
        if let Some(rot) = d.rotational {
            rotational.sample(&[("device", &d.name)], f64::from(u8::from(rot)));
        }
        let rules: Vec<_> = facts
            .scheduler_rules
            .iter()
            .filter(|x| x.devices.contains(&d.name))
            .collect();
        let keeps = rules.iter().any(|x| x.scheduler.as_deref() == Some(cur));
        let drifted = rules
            .iter()
            .any(|x| x.scheduler.as_deref().is_some_and(|s| s != cur));
        persisted.sample(&[("device", &d.name)], f64::from(u8::from(keeps)));
        drift.sample(&[("device", &d.name)], f64::from(u8::from(drifted)));
    }
    out.extend([active, rotational, persisted, drift]);

    let mut finding = Metric::gauge(
        "innotune_finding",
        "A finding of innotune check, by id, severity, layer and subject (always 1; absent when fixed).",
    );
    let mut by_sev = Metric::gauge(
        "innotune_findings",
        "Number of findings of innotune check, by severity.",
    );
    for a in findings {
        let f = &a.finding;
        let layer = serde_json::to_value(f.layer)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        finding.sample(
            &[
                ("id", f.id.as_str()),
                ("severity", f.severity.as_str()),
                ("layer", layer.as_str()),
                ("subject", f.subject.name.as_str()),
            ],
            1.0,
        );
    }
    for sev in [
        crate::finding::Severity::Info,
        crate::finding::Severity::Notice,
        crate::finding::Severity::Warning,
        crate::finding::Severity::Critical,
    ] {
        let n = findings
            .iter()
            .filter(|a| a.finding.severity == sev)
            .count();
        by_sev.sample(&[("severity", sev.as_str())], n as f64);
    }
    out.extend([finding, by_sev]);

    // Checksum records and the journal: this innotune's own state.
    {
        let mut last = Metric::gauge(
            "innotune_checksum_last_run_timestamp_seconds",
            "When `innotune checksum --record` last finished on a path (Unix time).",
        );
        let mut bad = Metric::gauge(
            "innotune_checksum_bad_pages",
            "Pages whose checksum failed in the last recorded run on a path.",
        );
        let mut errors = Metric::gauge(
            "innotune_checksum_file_errors",
            "Files that could not be checked in the last recorded run on a path.",
        );
        let mut pages = Metric::gauge(
            "innotune_checksum_pages_checked",
            "Pages checked in the last recorded run on a path.",
        );
        for rec in &state.checksum_records {
            let l = [("path", rec.path.as_str())];
            last.sample(&l, rec.finished_unix as f64);
            bad.sample(&l, rec.bad_pages as f64);
            errors.sample(&l, rec.files_with_errors as f64);
            pages.sample(&l, rec.pages_checked as f64);
        }
        out.extend([last, bad, errors, pages]);

        let pending = f64::from(u8::from(state.journal_pending));
        let entries = state.journal_entries;
        out.push(
            Metric::gauge(
                "innotune_journal_pending",
                "1 when an interrupted innotune run left host changes unrestored (run `innotune restore`).",
            )
            .with(&[], pending),
        );
        out.push(
            Metric::gauge(
                "innotune_journal_entries",
                "Host changes recorded in the journal (a running innotune has some; 0 when idle).",
            )
            .with(&[], entries as f64),
        );
    }
    out.extend(tune_metrics(state.tune.as_ref()));
    out
}

/// The last tune's before/after cells. A ratio and its interval bounds are
/// three families with the same labels (so PromQL can join them), written
/// only together and always with the verdict as a label: a cell without an
/// interval exports its rounds and its verdict, never a bare ratio.
fn tune_metrics(rec: Option<&TuneRecord>) -> Vec<Metric> {
    use crate::stats::Effect;
    let Some(rec) = rec else {
        return Vec::new();
    };
    let mut last = Metric::gauge(
        "innotune_tune_last_run_timestamp_seconds",
        "When the last `innotune tune` finished (Unix time), by tuned path.",
    );
    let mut ratio = Metric::gauge(
        "innotune_tune_cell_ratio",
        "Last tune: after / before TPS ratio of a cell (Hodges-Lehmann), with its verdict; read with innotune_tune_cell_ci_low/high.",
    );
    let mut low = Metric::gauge(
        "innotune_tune_cell_ci_low",
        "Last tune: lower bound of the cell's after / before TPS interval (level in ci_level, percent).",
    );
    let mut high = Metric::gauge(
        "innotune_tune_cell_ci_high",
        "Last tune: upper bound of the cell's after / before TPS interval (level in ci_level, percent).",
    );
    let mut rounds = Metric::gauge(
        "innotune_tune_cell_rounds",
        "Last tune: rounds measured in a cell (one run on each side per round), with its verdict.",
    );
    let mut cells = Metric::gauge(
        "innotune_tune_cells",
        "Last tune: before/after cells per verdict (faster, slower, no_difference, too_few_rounds).",
    );
    last.sample(&[("path", rec.path.as_str())], rec.finished_unix as f64);
    for c in &rec.cells {
        let verdict = effect_label(c.verdict);
        let threads = c.threads.to_string();
        let base = [
            ("workload", c.workload.as_str()),
            ("threads", threads.as_str()),
            ("verdict", verdict),
        ];
        rounds.sample(&base, f64::from(c.rounds));
        if let Some((r, l, h)) = c.interval() {
            let level = format!("{}", c.ci_level_pct);
            let labels = [base[0], base[1], base[2], ("ci_level", level.as_str())];
            ratio.sample(&labels, r);
            low.sample(&labels, l);
            high.sample(&labels, h);
        }
    }
    for e in [
        Effect::Faster,
        Effect::Slower,
        Effect::NoDifference,
        Effect::TooFewRounds,
    ] {
        let n = rec.cells.iter().filter(|c| c.verdict == e).count();
        cells.sample(&[("verdict", effect_label(e))], n as f64);
    }
    vec![last, ratio, low, high, rounds, cells]
}

/// The verdict as tune.json spells it (`no_difference`), a stable label.
fn effect_label(e: crate::stats::Effect) -> &'static str {
    use crate::stats::Effect;
    match e {
        Effect::Faster => "faster",
        Effect::Slower => "slower",
        Effect::NoDifference => "no_difference",
        Effect::TooFewRounds => "too_few_rounds",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::Host;
    use clap::Parser;
    use std::path::Path;

    /// The metrics are the report's: the journal and checksum records come
    /// from the state `check` read while it ran, whatever the state
    /// directory holds when they are rendered.
    #[test]
    fn metrics_come_from_the_report_not_the_state_directory() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts/check-planted");
        let cli = crate::cli::Cli::try_parse_from(["innotune", "check", "--no-server"]).unwrap();
        let crate::cli::Command::Check(args) = cli.command else {
            panic!("not check");
        };
        let mut r = crate::check::execute(&Host::with_root(&root), &args.opts)
            .unwrap()
            .report;
        r.state = State {
            read_unix: 1_700_000_000.7,
            checksum_records: vec![Record {
                path: "/data/db".into(),
                finished_unix: 1_699_999_000,
                files: 3,
                files_with_errors: 1,
                pages_checked: 96,
                bad_pages: 2,
                exit_code: 1,
            }],
            journal_pending: true,
            journal_entries: 4,
            tune: Some(TuneRecord {
                path: "/data/db".into(),
                finished_unix: 1_699_998_000,
                cells: vec![
                    crate::check::tune_record::CellRecord {
                        workload: "oltp_read_only".into(),
                        threads: 8,
                        rounds: 9,
                        ratio: Some(1.75),
                        ci_low: Some(1.5),
                        ci_high: Some(2.0),
                        ci_level_pct: 95.0,
                        verdict: crate::stats::Effect::Faster,
                    },
                    // No ratio (a side had a median of 0): its rounds and
                    // verdict, and no bare ratio or half an interval.
                    crate::check::tune_record::CellRecord {
                        workload: "oltp_read_write".into(),
                        threads: 8,
                        rounds: 4,
                        ratio: None,
                        ci_low: Some(0.5),
                        ci_high: None,
                        ci_level_pct: 95.0,
                        verdict: crate::stats::Effect::TooFewRounds,
                    },
                ],
            }),
        };
        let text = crate::export::prometheus::render(&metrics(
            r.server.reached,
            &r.facts,
            &r.findings,
            &r.state,
        ));
        for line in [
            "innotune_check_last_run_timestamp_seconds 1700000000\n",
            "innotune_checksum_last_run_timestamp_seconds{path=\"/data/db\"} 1699999000\n",
            "innotune_checksum_bad_pages{path=\"/data/db\"} 2\n",
            "innotune_checksum_file_errors{path=\"/data/db\"} 1\n",
            "innotune_checksum_pages_checked{path=\"/data/db\"} 96\n",
            "innotune_journal_pending 1\n",
            "innotune_journal_entries 4\n",
            "innotune_tune_last_run_timestamp_seconds{path=\"/data/db\"} 1699998000\n",
            "innotune_tune_cell_ratio{ci_level=\"95\",threads=\"8\",verdict=\"faster\",workload=\"oltp_read_only\"} 1.75\n",
            "innotune_tune_cell_ci_low{ci_level=\"95\",threads=\"8\",verdict=\"faster\",workload=\"oltp_read_only\"} 1.5\n",
            "innotune_tune_cell_ci_high{ci_level=\"95\",threads=\"8\",verdict=\"faster\",workload=\"oltp_read_only\"} 2\n",
            "innotune_tune_cell_rounds{threads=\"8\",verdict=\"too_few_rounds\",workload=\"oltp_read_write\"} 4\n",
            "innotune_tune_cells{verdict=\"faster\"} 1\n",
            "innotune_tune_cells{verdict=\"slower\"} 0\n",
            "innotune_tune_cells{verdict=\"no_difference\"} 0\n",
            "innotune_tune_cells{verdict=\"too_few_rounds\"} 1\n",
        ] {
            assert!(text.contains(line), "no {line:?} in\n{text}");
        }
        assert!(!text.contains("oltp_read_write\",ci"), "{text}");
        assert_eq!(
            text.matches("workload=\"oltp_read_write\"").count(),
            1,
            "only its rounds: {text}"
        );
        // And the rules' part: the planted fixture's scheduler finding.
        assert!(
            text.contains("innotune_finding{id=\"storage.scheduler"),
            "{text}"
        );
    }
}
