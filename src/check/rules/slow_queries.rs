//! Statements of the slow query log (`check --slowlog FILE`) that point at
//! a missing index, a full table scan or a temporary table on disk.
//!
//! The practice reads the slow log with mysqldumpslow or pt-query-digest
//! and looks for classes whose rows examined dwarf their rows sent (the
//! classic sign of a missing index, Percona's "Rows_examined/Rows_sent"),
//! and, where the server logs the plan, for full scans and on-disk
//! temporary tables. These rules do the same on the digested classes and
//! name each class by pt-query-digest's id and fingerprint, so the DBA can
//! find it in pt's report or `innotune slowlog`.
//!
//! Only classes that carry at least [`MIN_TIME_PCT`] of the log's query
//! time are named: a one-off scan by someone's ad hoc query is not worth an
//! index. The findings recommend no value (an index is a schema decision
//! innotune cannot make); their evidence says what to EXPLAIN.

use super::{finding, Advice, Rule, Scope};
use crate::check::facts::{Facts, SlowClass, SlowlogFacts};
use crate::finding::{Layer, Severity, Source, SubjectKind};

pub const RULE: Rule = Rule {
    id: "server.queries",
    layer: Layer::Server,
    scope: Scope::SlowLog,
    about: "slow-log classes that examine far more rows than they return, scan whole tables or spill temporary tables to disk",
    run,
};

/// Rows examined per execution below which a class is cheap whatever its
/// ratio (a scan of a 500-row lookup table is fine).
pub const MIN_EXAMINED_PER_EXEC: f64 = 1000.0;
/// Rows examined per row returned (sent + affected) from which a class is
/// reading rows it throws away: an index on its WHERE/JOIN columns would
/// let it read only what it returns.
pub const MIN_RATIO: f64 = 100.0;
/// Share of the log's total query time a class must carry to be named.
pub const MIN_TIME_PCT: f64 = 1.0;
/// Share from which a finding is a warning rather than a notice.
pub const WARN_TIME_PCT: f64 = 10.0;
/// Findings per kind, worst first: a report listing 80 classes is not read.
pub const MAX_PER_KIND: usize = 10;

fn severity(c: &SlowClass) -> Severity {
    if c.time_pct >= WARN_TIME_PCT {
        Severity::Warning
    } else {
        Severity::Notice
    }
}

/// pt-query-digest's short id (`0x` + the last 16 hex digits), as its
/// profile shows it.
pub fn short_id(c: &SlowClass) -> String {
    format!("0x{}", &c.id[c.id.len().saturating_sub(16)..])
}

fn cut(fp: &str) -> String {
    const W: usize = 160;
    if fp.chars().count() <= W {
        fp.to_string()
    } else {
        format!("{}…", fp.chars().take(W - 1).collect::<String>())
    }
}

fn returned(c: &SlowClass) -> u64 {
    c.rows_sent + c.rows_affected
}

fn per_exec(n: u64, c: &SlowClass) -> f64 {
    n as f64 / c.count.max(1) as f64
}

/// Rows examined per row returned; `None` when nothing was returned.
pub fn ratio(c: &SlowClass) -> Option<f64> {
    let r = returned(c);
    (r > 0).then(|| c.rows_examined as f64 / r as f64)
}

pub fn is_missing_index(c: &SlowClass) -> bool {
    c.time_pct >= MIN_TIME_PCT
        && per_exec(c.rows_examined, c) >= MIN_EXAMINED_PER_EXEC
        && ratio(c).map_or(true, |r| r >= MIN_RATIO)
}

fn evidence_of(log: &SlowlogFacts, c: &SlowClass) -> String {
    let dbs = if c.databases.is_empty() {
        String::new()
    } else {
        format!(" in {}", c.databases.join(", "))
    };
    format!(
        "slow log {}: class {} ({} executions{dbs}, {:.3} s, {:.1} % of the log's {:.3} s): {}; rows examined {}, sent {}, affected {}. EXPLAIN a statement of this class (innotune slowlog {} shows the worst one).",
        log.file,
        short_id(c),
        c.count,
        c.query_time_ns as f64 / 1e9,
        c.time_pct,
        log.query_time_ns as f64 / 1e9,
        cut(&c.fingerprint),
        c.rows_examined,
        c.rows_sent,
        c.rows_affected,
        log.file,
    )
}

fn run(f: &Facts) -> Vec<Advice> {
    let Some(log) = &f.slowlog else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let plan = log.with_plan_attributes > 0;

    let missing: Vec<&SlowClass> = log
        .classes
        .iter()
        .filter(|c| is_missing_index(c))
        .take(MAX_PER_KIND)
        .collect();
    for c in &missing {
        let scans = if plan && c.full_scan > 0 {
            format!("; a full scan in {} of {} executions", c.full_scan, c.count)
        } else {
            String::new()
        };
        let observed = match ratio(c) {
            Some(r) => format!(
                "examines {:.0} rows per execution to return {:.1} ({r:.0} examined per row returned){scans}",
                per_exec(c.rows_examined, c),
                per_exec(returned(c), c),
            ),
            None => format!(
                "examines {:.0} rows per execution and returns none{scans}",
                per_exec(c.rows_examined, c)
            ),
        };
        out.push(Advice::new(
            finding(
                "server.queries.missing_index",
                severity(c),
                Layer::Server,
                SubjectKind::Query,
                &short_id(c),
                observed,
                format!(
                    "this class reads rows it does not return: an index on the columns of its WHERE and JOIN conditions would let InnoDB read only the rows it needs, instead of pulling {:.0} rows per execution through the buffer pool (and from disk when they are not cached).",
                    per_exec(c.rows_examined, c)
                ),
            )
            .evidence(Source::Measured, evidence_of(log, c)),
        ));
    }

    if plan {
        // A full scan that returns most of what it reads (a report over a
        // whole table) is not a missing index, but it still reads the
        // whole table every time: named when it costs time.
        for c in log
            .classes
            .iter()
            .filter(|c| {
                c.full_scan > 0
                    && c.time_pct >= MIN_TIME_PCT
                    && per_exec(c.rows_examined, c) >= MIN_EXAMINED_PER_EXEC
                    && !missing.iter().any(|m| m.id == c.id)
            })
            .take(MAX_PER_KIND)
        {
            out.push(Advice::new(
                finding(
                    "server.queries.full_scan",
                    severity(c),
                    Layer::Server,
                    SubjectKind::Query,
                    &short_id(c),
                    format!(
                        "a full table scan in {} of {} executions, {:.0} rows examined per execution",
                        c.full_scan,
                        c.count,
                        per_exec(c.rows_examined, c)
                    ),
                    "this class reads its whole table on every execution. If it needs every row (an export, a report), move it off the busy hours or to a replica; if it filters, an index on the filtered columns avoids the scan.",
                )
                .evidence(Source::Measured, evidence_of(log, c)),
            ));
        }
        let tmp = |name: &str| {
            f.server
                .as_ref()
                .and_then(|s| s.var(name))
                .map(|v| format!(" ({name} is {v})"))
                .unwrap_or_default()
        };
        for c in log
            .classes
            .iter()
            .filter(|c| c.tmp_table_on_disk > 0 && c.time_pct >= MIN_TIME_PCT)
            .take(MAX_PER_KIND)
        {
            out.push(Advice::new(
                finding(
                    "server.queries.tmp_table_on_disk",
                    severity(c),
                    Layer::Server,
                    SubjectKind::Query,
                    &short_id(c),
                    format!(
                        "a temporary table on disk in {} of {} executions",
                        c.tmp_table_on_disk, c.count
                    ),
                    format!(
                        "this class builds an internal temporary table (GROUP BY, DISTINCT, ORDER BY on another table's columns, UNION, derived tables) that spills to disk: it is too large for the in-memory limit{}{}, or holds TEXT/BLOB columns the memory engine cannot. An index matching the GROUP BY/ORDER BY avoids the table; selecting fewer or shorter columns keeps it in memory.",
                        tmp("tmp_table_size"),
                        tmp("max_heap_table_size"),
                    ),
                )
                .evidence(Source::Measured, evidence_of(log, c)),
            ));
        }
    } else if log.entries > 0 {
        let how = match &f.server {
            Some(s) if s.is_mariadb() => "SET GLOBAL log_slow_verbosity='query_plan'",
            Some(_) => "SET GLOBAL log_slow_extra=ON (MySQL 8.0.14 and later)",
            None => "MariaDB: log_slow_verbosity=query_plan; MySQL 8.0.14+: log_slow_extra=ON; Percona Server: log_slow_verbosity=full",
        };
        out.push(Advice::new(
            finding(
                "server.queries.plan_not_logged",
                Severity::Info,
                Layer::Server,
                SubjectKind::File,
                &log.file,
                format!(
                    "none of the log's {} entries says whether it scanned a table or used a temporary table on disk",
                    log.entries
                ),
                "without the plan attributes (Full_scan, Tmp_table_on_disk) only the rows-examined rule can run; full scans and on-disk temporary tables go unnamed.",
            )
            .recommend(how)
            .evidence(
                Source::Observed,
                format!("slow log {}: no Full_scan, Tmp_table_on_disk, Select_scan or Created_tmp_disk_tables attribute in any entry", log.file),
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(id: &str, count: u64, pct: f64, examined: u64, sent: u64) -> SlowClass {
        SlowClass {
            id: format!("{id:0>32}"),
            fingerprint: format!("select * from t where c{id}=?"),
            count,
            time_pct: pct,
            query_time_ns: 1_000_000,
            rows_sent: sent,
            rows_examined: examined,
            ..SlowClass::default()
        }
    }

    fn facts(classes: Vec<SlowClass>, plan: bool) -> Facts {
        Facts {
            slowlog: Some(SlowlogFacts {
                file: "slow.log".into(),
                entries: 100,
                classes_total: classes.len(),
                query_time_ns: 10_000_000,
                with_plan_attributes: u64::from(plan) * 100,
                classes,
            }),
            ..Facts::default()
        }
    }

    fn ids(a: &[Advice]) -> Vec<(String, String, Severity)> {
        a.iter()
            .map(|a| {
                (
                    a.finding.id.clone(),
                    a.finding.subject.name.clone(),
                    a.finding.severity,
                )
            })
            .collect()
    }

    #[test]
    fn ratio_and_volume_and_share_must_all_hold() {
        let got = run(&facts(
            vec![
                // 20 000 examined per execution, 1 sent: named, warning (50 %).
                class("1", 10, 50.0, 200_000, 10),
                // Many examined but returns as much: no.
                class("2", 10, 20.0, 200_000, 100_000),
                // High ratio, but 500 per execution: cheap.
                class("3", 10, 20.0, 5_000, 10),
                // Returns none, scans: named, notice (5 %).
                class("4", 10, 5.0, 50_000, 0),
                // Would qualify but 0.5 % of the time.
                class("5", 10, 0.5, 200_000, 10),
            ],
            false,
        ));
        let got = ids(&got);
        assert_eq!(got[0].0, "server.queries.missing_index");
        assert_eq!(got[0].1, "0x0000000000000001");
        assert_eq!(got[0].2, Severity::Warning);
        assert_eq!(got[1].1, "0x0000000000000004");
        assert_eq!(got[1].2, Severity::Notice);
        assert_eq!(got[2].0, "server.queries.plan_not_logged");
        assert_eq!(got.len(), 3, "{got:?}");
    }

    #[test]
    fn plan_attributes_name_scans_and_spills_once_per_class() {
        let mut a = class("1", 10, 50.0, 200_000, 10);
        a.full_scan = 10;
        let mut b = class("2", 10, 20.0, 200_000, 150_000);
        b.full_scan = 10;
        let mut c = class("3", 10, 20.0, 100, 100);
        c.tmp_table_on_disk = 4;
        let got = ids(&run(&facts(vec![a, b, c], true)));
        assert_eq!(
            got.iter().map(|g| g.0.as_str()).collect::<Vec<_>>(),
            [
                "server.queries.missing_index",
                "server.queries.full_scan",
                "server.queries.tmp_table_on_disk"
            ]
        );
        assert_eq!(got[1].1, "0x0000000000000002");
        assert_eq!(got[2].1, "0x0000000000000003");
    }

    #[test]
    fn no_log_no_findings() {
        assert!(run(&Facts::default()).is_empty());
        assert!(run(&facts(vec![], true)).is_empty());
    }
}
