//! Redo log capacity against the write rate sampled under load: Percona's
//! rule (Schwartz, 2008) is to hold about an hour of writes at peak, so
//! checkpoints are driven by age rather than by the log filling up; and at
//! least ten times the largest BLOB a client can write (the MySQL manual's
//! innodb_log_file_size note), bounded by max_allowed_packet.
//!
//! Rates come from the `--sample` window, never from since-uptime
//! averages: a quiet night would hide the peak. A window without redo
//! writes gives no finding (nothing was measured).

use super::{server_advice, Advice, Rule, Scope, Versions};
use crate::check::facts::{human_bytes, Facts};
use crate::finding::{Severity, Source};

pub const RULE: Rule = Rule {
    id: "server.redo",
    layer: crate::finding::Layer::Server,
    scope: Scope::Server(Versions::ALL),
    about: "redo capacity vs one hour of Innodb_os_log_written at the sampled rate, and ≥ 10× the largest BLOB",
    run,
};

const STEP: u64 = 128 << 20;
/// innodb_redo_log_capacity's maximum (MySQL 8.0.30+); a sane cap elsewhere.
const MAX: u64 = 128 << 30;

fn run(f: &Facts) -> Vec<Advice> {
    let Some(s) = &f.server else {
        return Vec::new();
    };
    let Some(w) = &s.window else {
        return Vec::new();
    };
    let (var, files, cap) = if s.is_mysql() && s.at_least(8, 0, 30) {
        let Some(c) = s.var_u64("innodb_redo_log_capacity") else {
            return Vec::new();
        };
        ("innodb_redo_log_capacity", 1, c)
    } else {
        let Some(size) = s.var_u64("innodb_log_file_size") else {
            return Vec::new();
        };
        // MariaDB ≥ 10.5 has one redo file (the variable is gone or 1).
        let n = s.var_u64("innodb_log_files_in_group").unwrap_or(1).max(1);
        ("innodb_log_file_size", n, size * n)
    };
    let Some(rate) = w.rate("innodb_os_log_written").filter(|r| *r > 0.0) else {
        return Vec::new();
    };
    let hour = (rate * 3600.0) as u64;
    let minutes = cap as f64 / rate / 60.0;
    let blob_min = match (s.has_blob_columns, s.var_u64("max_allowed_packet")) {
        (Some(true), Some(p)) => Some(10 * p),
        _ => None,
    };
    let short_hour = cap < hour;
    let short_blob = blob_min.is_some_and(|b| cap < b);
    if !short_hour && !short_blob {
        return Vec::new();
    }
    let mut want = if short_hour { hour } else { cap };
    if let Some(b) = blob_min {
        want = want.max(b);
    }
    want = want.div_ceil(STEP) * STEP;
    want = want.min(MAX);
    let mut limited = String::new();
    if let Some(free) = f.mount.as_ref().and_then(|m| m.free_bytes) {
        let room = (free / 4 / STEP) * STEP;
        if want > room && room > cap {
            limited = format!(
                " An hour would need {}, but the datadir's filesystem has {} free: capped at a quarter of it.",
                human_bytes(want),
                human_bytes(free)
            );
            want = room;
        }
    }
    if want <= cap {
        return Vec::new();
    }
    let sev = if minutes < 15.0 {
        Severity::Warning
    } else {
        Severity::Notice
    };
    let mut reason = if short_hour {
        format!(
            "the redo log holds {} but the server wrote {}/s during the sample: it fills in {}, so InnoDB must flush dirty pages to free log space (a furious flush that stalls writes) instead of checkpointing by age. An hour of writes at this rate is {}.",
            human_bytes(cap),
            human_bytes(rate as u64),
            if minutes < 1.0 { format!("{:.0} seconds", minutes * 60.0) } else { format!("{minutes:.1} minutes") },
            human_bytes(hour)
        )
    } else {
        format!("the redo log holds {}, less than ten times max_allowed_packet, the largest BLOB a client can write: a BLOB write larger than a tenth of the redo log fails.", human_bytes(cap))
    };
    if short_hour {
        if let Some(b) = blob_min.filter(|b| *b > hour) {
            reason.push_str(&format!(
                " Tables have BLOB/TEXT columns: at least {} (10 × max_allowed_packet).",
                human_bytes(b)
            ));
        }
    }
    reason.push_str(&limited);
    let value = want / files;
    let var_note = if files > 1 {
        format!(" ({files} files of {})", human_bytes(value))
    } else {
        String::new()
    };
    reason.push_str(&var_note);
    vec![server_advice(
        s,
        "server.redo",
        sev,
        var,
        value,
        reason,
        Source::Measured,
        format!(
            "Innodb_os_log_written +{} in {:.0} s = {}/s; capacity {} ({var} × {files})",
            w.delta("innodb_os_log_written").unwrap_or(0),
            w.seconds,
            human_bytes(rate as u64),
            human_bytes(cap)
        ),
    )]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::rules::testing::*;

    #[test]
    fn hour_of_writes() {
        let mut s = with_vars(
            server("mariadb", 10, 11, 19),
            &[
                ("innodb_log_file_size", "8388608"),
                ("max_allowed_packet", "16777216"),
            ],
        );
        // 60 s at 1 MiB/s → 3600 MiB per hour → rounded to 3712 MiB.
        s.window = Some(window(60.0, &[("Innodb_os_log_written", 60 << 20)]));
        let f = Facts {
            server: Some(s),
            ..Default::default()
        };
        let a = run(&f);
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].finding.subject.name, "innodb_log_file_size");
        assert_eq!(a[0].finding.severity, Severity::Warning);
        assert_eq!(
            a[0].finding.recommended.as_deref(),
            Some(&*(29u64 * STEP).to_string())
        );
    }

    #[test]
    fn mysql_8_0_30_uses_capacity_and_no_window_no_finding() {
        let mut s = with_vars(
            server("mysql", 8, 0, 36),
            &[("innodb_redo_log_capacity", "104857600")],
        );
        let f = Facts {
            server: Some(s.clone()),
            ..Default::default()
        };
        assert!(run(&f).is_empty());
        s.window = Some(window(10.0, &[("Innodb_os_log_written", 10 << 20)]));
        let a = run(&Facts {
            server: Some(s),
            ..Default::default()
        });
        assert_eq!(a[0].finding.subject.name, "innodb_redo_log_capacity");
    }
}
