//! `check --slowlog FILE`: the slow query log digested by `innotune
//! slowlog`'s own reader (the same classes as pt-query-digest) into
//! [`SlowlogFacts`] for the query rules
//! ([`super::rules::slow_queries`]).

use super::facts::{SlowClass, SlowlogFacts};
use crate::slowlog::aggregate::Filter;
use anyhow::Result;
use std::path::Path;

/// Classes kept in the facts (most total query time first). The rules
/// only name classes with at least 1 % of the log's time, and no more
/// than 100 classes can each have 1 %.
pub const KEEP: usize = 100;

/// Digest `file` (a path, a `.gz`, or `-` for stdin) on every core; no
/// entry longer than `max_entry` bytes (`--slowlog-max-entry-size`). A
/// gzip file cut short is digested up to the cut, with a note.
pub fn load(file: &Path, max_entry: u64, notes: &mut Vec<String>) -> Result<SlowlogFacts> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let limit = crate::slowlog::input::Limit {
        bytes: max_entry,
        flag: "--slowlog-max-entry-size",
    };
    let read = crate::slowlog::input::read(file, threads, &Filter::default(), limit)?;
    notes.extend(read.stopped);
    let totals = read.agg.totals;
    let mut classes = read.agg.classes;
    // Ties by fingerprint, so the facts are the same on every run.
    classes.sort_by(|(fa, a), (fb, b)| {
        b.query_time
            .sum
            .cmp(&a.query_time.sum)
            .then_with(|| fa.cmp(fb))
    });
    let classes_total = classes.len();
    let kept = classes
        .iter()
        .take(KEEP)
        .map(|(fp, c)| {
            let mut dbs: Vec<(String, u64)> = c.dbs.to_map().into_iter().collect();
            dbs.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            SlowClass {
                id: crate::slowlog::fingerprint::checksum(fp),
                fingerprint: String::from_utf8_lossy(fp).into_owned(),
                count: c.count,
                time_pct: if totals.query_time > 0 {
                    100.0 * c.query_time.sum as f64 / totals.query_time as f64
                } else {
                    0.0
                },
                query_time_ns: c.query_time.sum,
                rows_sent: c.rows_sent.sum,
                rows_affected: c.rows_affected.sum,
                rows_examined: c.rows_examined.sum,
                full_scan: c.full_scan,
                tmp_table_on_disk: c.tmp_table_on_disk,
                filesort: c.filesort,
                databases: dbs.into_iter().map(|(d, _)| d).collect(),
            }
        })
        .collect();
    Ok(SlowlogFacts {
        file: file.display().to_string(),
        entries: totals.entries,
        classes_total,
        query_time_ns: totals.query_time,
        with_plan_attributes: totals.with_plan,
        classes: kept,
    })
}
