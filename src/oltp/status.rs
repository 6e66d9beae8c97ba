//! Watching the server: SHOW GLOBAL STATUS samples and what the practice
//! derives from them (redo rate, buffer pool hit ratio, dirty pages, log
//! waits, temp tables on disk, fsync rate, pending I/O).

use crate::host::Known;
use anyhow::Result;
use mysql::prelude::Queryable;
use serde::Serialize;
use std::collections::BTreeMap;

/// The counters kept from each sample (the rest of SHOW GLOBAL STATUS is
/// dropped to keep reports small).
pub const KEPT: &[&str] = &[
    "Innodb_os_log_written",
    "Innodb_buffer_pool_reads",
    "Innodb_buffer_pool_read_requests",
    "Innodb_buffer_pool_pages_dirty",
    "Innodb_buffer_pool_pages_total",
    "Innodb_log_waits",
    "Created_tmp_tables",
    "Created_tmp_disk_tables",
    "Innodb_data_fsyncs",
    "Innodb_data_pending_reads",
    "Innodb_data_pending_writes",
    "Innodb_data_pending_fsyncs",
    "Innodb_data_read",
    "Innodb_data_written",
    "Innodb_rows_read",
    "Innodb_row_lock_waits",
    "Questions",
];

/// One sample: seconds since the run started and the kept counters.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Sample {
    #[serde(rename = "t_s")]
    pub t: f64,
    pub values: BTreeMap<String, u64>,
}

impl Sample {
    pub fn get(&self, k: &str) -> Option<u64> {
        self.values.get(k).copied()
    }
}

/// Take one sample.
pub fn sample(conn: &mut mysql::Conn, t: f64) -> Result<Sample> {
    let rows: Vec<(String, String)> = conn.query("SHOW GLOBAL STATUS")?;
    let values = rows
        .into_iter()
        .filter(|(k, _)| KEPT.iter().any(|w| w.eq_ignore_ascii_case(k)))
        .filter_map(|(k, v)| v.trim().parse::<u64>().ok().map(|v| (k, v)))
        .collect();
    Ok(Sample { t, values })
}

/// What the advisor reads after a run. A figure is `{"unknown": reason}`
/// when the server does not report the counters it needs (e.g. a
/// non-InnoDB server).
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Derived {
    /// Seconds between the first and the last sample.
    pub elapsed_s: f64,
    /// Redo written (Δ`Innodb_os_log_written`), bytes per second.
    pub redo_bytes_per_s: Known<f64>,
    /// 100 × (1 − physical reads / logical read requests), over the run.
    pub buffer_pool_hit_pct: Known<f64>,
    /// Dirty pages as % of the buffer pool at the end, and the highest sampled.
    pub dirty_pages_pct: Known<f64>,
    pub dirty_pages_max_pct: Known<f64>,
    /// Times a transaction waited for the redo log buffer (should be 0).
    pub log_waits: Known<u64>,
    /// Share of implicit temporary tables created on disk, %.
    pub tmp_tables_on_disk_pct: Known<f64>,
    pub data_fsyncs_per_s: Known<f64>,
    /// Highest pending reads / writes / fsyncs seen in any sample.
    pub pending_reads_max: Known<u64>,
    pub pending_writes_max: Known<u64>,
    pub pending_fsyncs_max: Known<u64>,
}

fn delta(a: &Sample, b: &Sample, k: &str) -> Option<u64> {
    Some(b.get(k)?.saturating_sub(a.get(k)?))
}

fn dirty_pct(s: &Sample) -> Option<f64> {
    let total = s.get("Innodb_buffer_pool_pages_total")?;
    (total > 0)
        .then(|| s.get("Innodb_buffer_pool_pages_dirty").unwrap_or(0) as f64 * 100.0 / total as f64)
}

fn known<T>(v: Option<T>, counters: &str) -> Known<T> {
    match v {
        Some(v) => Known::Value(v),
        None => Known::unknown(format!("the server does not report {counters}")),
    }
}

/// Derive the practice's figures from the first and last samples (and the
/// maxima of the gauges across all samples). None without two samples.
pub fn derive(samples: &[Sample]) -> Option<Derived> {
    let (a, b) = (samples.first()?, samples.last()?);
    let secs = b.t - a.t;
    if samples.len() < 2 || secs <= 0.0 {
        return None;
    }
    let redo = delta(a, b, "Innodb_os_log_written");
    let reads = delta(a, b, "Innodb_buffer_pool_reads");
    let reqs = delta(a, b, "Innodb_buffer_pool_read_requests");
    let tmp = delta(a, b, "Created_tmp_tables");
    let tmp_disk = delta(a, b, "Created_tmp_disk_tables");
    let gauge_max = |k: &str| known(samples.iter().filter_map(|s| s.get(k)).max(), k);
    Some(Derived {
        elapsed_s: secs,
        redo_bytes_per_s: known(redo.map(|r| r as f64 / secs), "Innodb_os_log_written"),
        buffer_pool_hit_pct: match (reads, reqs) {
            (Some(r), Some(q)) if q > 0 => {
                Known::Value(100.0 * q.saturating_sub(r) as f64 / q as f64)
            }
            (Some(_), Some(_)) => Known::unknown("no buffer pool read requests during the run"),
            _ => known(None, "Innodb_buffer_pool_reads/_read_requests"),
        },
        dirty_pages_pct: known(dirty_pct(b), "Innodb_buffer_pool_pages_total"),
        dirty_pages_max_pct: known(
            samples.iter().filter_map(dirty_pct).reduce(f64::max),
            "Innodb_buffer_pool_pages_total",
        ),
        log_waits: known(delta(a, b, "Innodb_log_waits"), "Innodb_log_waits"),
        tmp_tables_on_disk_pct: match (tmp, tmp_disk) {
            (Some(t), Some(d)) if t > 0 => Known::Value(100.0 * d as f64 / t as f64),
            (Some(0), Some(_)) => Known::Value(0.0),
            _ => known(None, "Created_tmp_tables/Created_tmp_disk_tables"),
        },
        data_fsyncs_per_s: known(
            delta(a, b, "Innodb_data_fsyncs").map(|f| f as f64 / secs),
            "Innodb_data_fsyncs",
        ),
        pending_reads_max: gauge_max("Innodb_data_pending_reads"),
        pending_writes_max: gauge_max("Innodb_data_pending_writes"),
        pending_fsyncs_max: gauge_max("Innodb_data_pending_fsyncs"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(t: f64, kv: &[(&str, u64)]) -> Sample {
        Sample {
            t,
            values: kv.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        }
    }

    #[test]
    fn derives_rates_and_ratios() {
        let a = s(
            0.0,
            &[
                ("Innodb_os_log_written", 1000),
                ("Innodb_buffer_pool_reads", 10),
                ("Innodb_buffer_pool_read_requests", 1000),
                ("Created_tmp_tables", 5),
                ("Created_tmp_disk_tables", 1),
                ("Innodb_data_fsyncs", 0),
                ("Innodb_buffer_pool_pages_total", 100),
                ("Innodb_buffer_pool_pages_dirty", 50),
            ],
        );
        let b = s(
            30.0,
            &[
                ("Innodb_os_log_written", 1000 + 30_000),
                ("Innodb_buffer_pool_reads", 20),
                ("Innodb_buffer_pool_read_requests", 2000),
                ("Created_tmp_tables", 15),
                ("Created_tmp_disk_tables", 3),
                ("Innodb_data_fsyncs", 60),
                ("Innodb_buffer_pool_pages_total", 100),
                ("Innodb_buffer_pool_pages_dirty", 10),
            ],
        );
        let d = derive(&[a, b]).unwrap();
        assert_eq!(d.redo_bytes_per_s, Known::Value(1000.0));
        assert_eq!(d.buffer_pool_hit_pct, Known::Value(99.0));
        assert_eq!(d.tmp_tables_on_disk_pct, Known::Value(20.0));
        assert_eq!(d.data_fsyncs_per_s, Known::Value(2.0));
        assert_eq!(d.dirty_pages_pct, Known::Value(10.0));
        assert_eq!(d.dirty_pages_max_pct, Known::Value(50.0));
        assert!(d.log_waits.value().is_none());
        let j = serde_json::to_value(&d).unwrap();
        assert!(j["log_waits"]["unknown"]
            .as_str()
            .unwrap()
            .contains("Innodb_log_waits"));
    }
}
