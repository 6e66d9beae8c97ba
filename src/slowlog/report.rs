//! The typed result of `innotune slowlog` (JSON documented in
//! docs/json-slowlog.md). Its document is built in [`super::render`].

use super::aggregate::{Class, Counter, Totals, HISTOGRAM_BUCKETS};
use serde::Serialize;
use std::borrow::Cow;
use std::collections::BTreeMap;

#[derive(Debug, Serialize, serde::Deserialize)]
pub struct SlowlogReport {
    /// The file as given (`-` for stdin).
    pub source: String,
    pub gzip: bool,
    /// Where reading stopped before the end of the input (a gzip stream cut
    /// short or corrupt): the digest covers what came before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// Bytes read (decompressed bytes for gzip).
    pub read_bytes: u64,
    pub threads: usize,
    pub elapsed_s: f64,
    pub read_bytes_per_s: f64,
    /// How classes are ordered: `Query_time:sum` style.
    pub order_by: String,
    pub totals: TotalsReport,
    /// Distinct fingerprints among the entries kept.
    pub classes_total: usize,
    /// The first `--top` classes in `order_by` order.
    pub classes: Vec<ClassReport>,
}

#[derive(Debug, Serialize, serde::Deserialize)]
pub struct TotalsReport {
    /// Entries digested (after --since/--until/--filter).
    pub entries: u64,
    /// Records that were not whole entries (no statement or no Query_time), skipped.
    pub malformed: u64,
    /// Entries left out by --since/--until/--filter.
    pub filtered_out: u64,
    pub query_time_ns: u64,
    pub lock_time_ns: u64,
    pub rows_sent: u64,
    pub rows_examined: u64,
    /// Entries that carried query-plan attributes (`Full_scan`,
    /// `Tmp_table_on_disk`; MariaDB log_slow_verbosity=query_plan, Percona,
    /// or MySQL 8 log_slow_extra). 0: the full-scan and temporary-table
    /// counts below mean "not logged", not "none".
    pub with_plan_attributes: u64,
    pub first_seen: Option<String>,
    pub last_seen: Option<String>,
}

/// A time attribute of a class in nanoseconds: sum, average, 95th
/// percentile, min and max.
#[derive(Debug, Serialize, serde::Deserialize)]
pub struct TimeMetric {
    pub sum_ns: u64,
    pub avg_ns: u64,
    /// From buckets 5 % wide (as pt's); only for query_time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p95_ns: Option<u64>,
    pub min_ns: u64,
    pub max_ns: u64,
}

/// A row count of a class: sum, average, min and max per entry.
#[derive(Debug, Serialize, serde::Deserialize)]
pub struct RowsMetric {
    pub sum: u64,
    pub avg: f64,
    pub min: u64,
    pub max: u64,
}

#[derive(Debug, Serialize, serde::Deserialize)]
pub struct Sample {
    pub query: String,
    pub query_time_ns: u64,
    pub ts: Option<String>,
    pub db: Option<String>,
}

#[derive(Debug, Serialize, serde::Deserialize)]
pub struct ClassReport {
    pub rank: usize,
    /// pt-query-digest's checksum: upper-case MD5 of the fingerprint.
    pub id: String,
    pub fingerprint: String,
    pub count: u64,
    /// Share of all entries, percent.
    pub count_pct: f64,
    /// Share of the total query time, percent.
    pub time_pct: f64,
    pub query_time: TimeMetric,
    pub lock_time: TimeMetric,
    pub rows_sent: RowsMetric,
    pub rows_examined: RowsMetric,
    /// Rows examined per row sent (null when no row was sent).
    pub rows_examined_per_sent: Option<f64>,
    pub first_seen: Option<String>,
    pub last_seen: Option<String>,
    /// Entries per database, user and host (at most 32 names, the rest under "(others)").
    pub databases: BTreeMap<String, u64>,
    pub users: BTreeMap<String, u64>,
    pub hosts: BTreeMap<String, u64>,
    /// Entries that had a temporary table on disk, a full scan, a filesort
    /// (MariaDB/Percona extra attributes, or MySQL 8 log_slow_extra).
    pub tmp_table_on_disk: u64,
    pub full_scan: u64,
    pub filesort: u64,
    /// Entries per query-time bucket; bucket names in `histogram_buckets`.
    pub histogram: [u64; 8],
    pub histogram_buckets: [Cow<'static, str>; 8],
    /// The statement with the longest query time.
    pub sample: Sample,
}

pub fn rfc3339(ts: Option<i64>) -> Option<String> {
    let t = ts?;
    let st = if t >= 0 {
        std::time::UNIX_EPOCH + std::time::Duration::from_secs(t as u64)
    } else {
        std::time::UNIX_EPOCH - std::time::Duration::from_secs(t.unsigned_abs())
    };
    Some(humantime::format_rfc3339_seconds(st).to_string())
}

fn time(s: &super::aggregate::Stat, count: u64, p95: Option<u64>) -> TimeMetric {
    TimeMetric {
        sum_ns: s.sum,
        avg_ns: s.sum / count.max(1),
        p95_ns: p95,
        min_ns: s.min_or_zero(),
        max_ns: s.max,
    }
}

fn rows(s: &super::aggregate::Stat, count: u64) -> RowsMetric {
    RowsMetric {
        sum: s.sum,
        avg: s.sum as f64 / count.max(1) as f64,
        min: s.min_or_zero(),
        max: s.max,
    }
}

fn names(c: &Counter) -> BTreeMap<String, u64> {
    c.to_map()
}

impl ClassReport {
    pub fn new(rank: usize, fingerprint: &[u8], c: &Class, totals: &Totals) -> ClassReport {
        ClassReport {
            rank,
            id: super::fingerprint::checksum(fingerprint),
            fingerprint: String::from_utf8_lossy(fingerprint).into_owned(),
            count: c.count,
            count_pct: 100.0 * c.count as f64 / totals.entries.max(1) as f64,
            time_pct: if totals.query_time > 0 {
                100.0 * c.query_time.sum as f64 / totals.query_time as f64
            } else {
                0.0
            },
            query_time: time(&c.query_time, c.count, Some(c.buckets.percentile(0.95))),
            lock_time: time(&c.lock_time, c.count, None),
            rows_sent: rows(&c.rows_sent, c.count),
            rows_examined: rows(&c.rows_examined, c.count),
            rows_examined_per_sent: (c.rows_sent.sum > 0)
                .then(|| c.rows_examined.sum as f64 / c.rows_sent.sum as f64),
            first_seen: rfc3339(c.first_ts),
            last_seen: rfc3339(c.last_ts),
            databases: names(&c.dbs),
            users: names(&c.users),
            hosts: names(&c.hosts),
            tmp_table_on_disk: c.tmp_table_on_disk,
            full_scan: c.full_scan,
            filesort: c.filesort,
            histogram: c.histogram,
            histogram_buckets: HISTOGRAM_BUCKETS.map(Cow::Borrowed),
            sample: Sample {
                query: c.sample.query.clone(),
                query_time_ns: c.sample.query_time,
                ts: rfc3339(c.sample.ts),
                db: c.sample.db.clone(),
            },
        }
    }
}

impl TotalsReport {
    pub fn new(t: &Totals) -> TotalsReport {
        TotalsReport {
            entries: t.entries,
            malformed: t.malformed,
            filtered_out: t.filtered_out,
            query_time_ns: t.query_time,
            lock_time_ns: t.lock_time,
            rows_sent: t.rows_sent,
            rows_examined: t.rows_examined,
            with_plan_attributes: t.with_plan,
            first_seen: rfc3339(t.first_ts),
            last_seen: rfc3339(t.last_ts),
        }
    }
}
