//! `innotune check --format prometheus`: check's result as node_exporter
//! textfile metrics (names, labels and example alerts in docs/metrics.md).
//!
//! What a fleet wants to alert on, and nothing that changes every run: the
//! active scheduler per disk and whether a boot rule keeps it (a scheduler
//! that drifted after a reboot), each finding by id and severity, the last
//! `checksum --record` result and its age per path, and an unfinished
//! journal (a run that was killed and left host settings changed).

use super::facts::Facts;
use super::rules::Advice;
use crate::export::prometheus::Metric;

/// The metrics of one check: whether it reached a server, the facts it
/// read and the advice it gave (a `CheckReport`'s parts).
pub fn metrics(server_reached: bool, facts: &Facts, findings: &[Advice]) -> Vec<Metric> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |t| t.as_secs_f64());
    let mut out = Vec::new();
    out.push(
        Metric::gauge(
            "innotune_check_last_run_timestamp_seconds",
            "When innotune check wrote these metrics (Unix time).",
        )
        .with(&[], now.floor()),
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

    // Checksum records and the journal are this innotune's own state (its
    // state directory), read even when --root replays another host's tree.
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
        for rec in crate::checksum::record::load_all() {
            let l = [("path", rec.path.as_str())];
            last.sample(&l, rec.finished_unix as f64);
            bad.sample(&l, rec.bad_pages as f64);
            errors.sample(&l, rec.files_with_errors as f64);
            pages.sample(&l, rec.pages_checked as f64);
        }
        out.extend([last, bad, errors, pages]);

        let (pending, entries) = match crate::journal::load(&crate::journal::journal_path()) {
            Ok(Some(j)) if !j.entries.is_empty() && !j.owner.is_alive() => (1.0, j.entries.len()),
            Ok(Some(j)) => (0.0, j.entries.len()),
            _ => (0.0, 0),
        };
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
    out
}
