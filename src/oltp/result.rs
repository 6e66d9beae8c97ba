//! The typed results of `oltp`: one run's figures, one prepare's tables.
//!
//! Units: the Rust fields keep sysbench's own units (latency in ms, as its
//! report prints it and as `sweep` reads it); the JSON follows
//! docs/json.md's rule (latency as integer `_ns`, rates `_per_s`,
//! durations `_s`, shares `_pct`, `{"unknown": reason}` instead of null).
//! The conversion lives here, both ways (`innotune report` reads the JSON
//! back into these types).

use super::status;
use crate::host::Known;
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct QueryCounts {
    pub read: u64,
    pub write: u64,
    pub other: u64,
    pub total: u64,
}

/// Latency of one event (a transaction), in ms (sysbench's unit).
/// JSON: `min_ns`, `avg_ns`, `max_ns`, `sum_ns`, `percentile` (asked),
/// `percentile_ns`, `p50_ns`, `p95_ns`, `p99_ns`.
#[derive(Debug, Clone)]
pub struct Latency {
    pub min: f64,
    pub avg: f64,
    pub max: f64,
    /// The `--percentile` asked for (0 = disabled) and its value.
    pub percentile: u8,
    pub percentile_value: Option<f64>,
    pub sum: f64,
    /// p50, p95, p99 from the same histogram.
    pub percentiles: BTreeMap<String, f64>,
}

/// Milliseconds as whole nanoseconds.
pub fn ms_to_ns(ms: f64) -> u64 {
    (ms * 1e6).round().max(0.0) as u64
}

fn percentile_ns(asked: u8, v: Option<f64>) -> Known<u64> {
    match v {
        Some(ms) => Known::Value(ms_to_ns(ms)),
        None if asked == 0 => Known::unknown("percentile disabled (--percentile 0)"),
        None => Known::unknown("no events"),
    }
}

impl Serialize for Latency {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("min_ns", &ms_to_ns(self.min))?;
        m.serialize_entry("avg_ns", &ms_to_ns(self.avg))?;
        m.serialize_entry("max_ns", &ms_to_ns(self.max))?;
        m.serialize_entry("sum_ns", &ms_to_ns(self.sum))?;
        m.serialize_entry("percentile", &self.percentile)?;
        m.serialize_entry(
            "percentile_ns",
            &percentile_ns(self.percentile, self.percentile_value),
        )?;
        for p in ["50", "95", "99"] {
            let v = match self.percentiles.get(p) {
                Some(&ms) => Known::Value(ms_to_ns(ms)),
                None => Known::unknown("no events"),
            };
            m.serialize_entry(&format!("p{p}_ns"), &v)?;
        }
        m.end()
    }
}

/// Whole nanoseconds as milliseconds (the inverse of [`ms_to_ns`]).
pub fn ns_to_ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

impl<'de> serde::Deserialize<'de> for Latency {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        struct Raw {
            min_ns: u64,
            avg_ns: u64,
            max_ns: u64,
            sum_ns: u64,
            percentile: u8,
            percentile_ns: Known<u64>,
            p50_ns: Known<u64>,
            p95_ns: Known<u64>,
            p99_ns: Known<u64>,
        }
        let r = <Raw as serde::Deserialize>::deserialize(d)?;
        let mut percentiles = BTreeMap::new();
        for (p, v) in [("50", r.p50_ns), ("95", r.p95_ns), ("99", r.p99_ns)] {
            if let Known::Value(ns) = v {
                percentiles.insert(p.to_string(), ns_to_ms(ns));
            }
        }
        Ok(Latency {
            min: ns_to_ms(r.min_ns),
            avg: ns_to_ms(r.avg_ns),
            max: ns_to_ms(r.max_ns),
            percentile: r.percentile,
            percentile_value: r.percentile_ns.value().map(|&ns| ns_to_ms(ns)),
            sum: ns_to_ms(r.sum_ns),
            percentiles,
        })
    }
}

/// sysbench's "Threads fairness" (exec times in seconds).
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Fairness {
    pub events_avg: f64,
    pub events_stddev: f64,
    #[serde(rename = "exec_time_avg_s")]
    pub exec_time_avg: f64,
    #[serde(rename = "exec_time_stddev_s")]
    pub exec_time_stddev: f64,
}

/// One intermediate report line.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Interval {
    /// Seconds since the start.
    #[serde(rename = "t_s")]
    pub t: f64,
    pub threads: u32,
    #[serde(rename = "transactions_per_s")]
    pub tps: f64,
    #[serde(rename = "queries_per_s")]
    pub qps: f64,
    #[serde(rename = "reads_per_s")]
    pub read_qps: f64,
    #[serde(rename = "writes_per_s")]
    pub write_qps: f64,
    #[serde(rename = "others_per_s")]
    pub other_qps: f64,
    /// The interval's `--percentile` latency, ms.
    #[serde(
        rename = "percentile_ns",
        serialize_with = "ser_opt_ms",
        deserialize_with = "de_opt_ms"
    )]
    pub latency_pct_ms: Option<f64>,
    #[serde(rename = "ignored_errors_per_s")]
    pub errors_per_sec: f64,
    #[serde(rename = "reconnects_per_s")]
    pub reconnects_per_sec: f64,
}

fn ser_opt_ms<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(ms) => Known::Value(ms_to_ns(*ms)),
        None => Known::unknown("percentile disabled (--percentile 0)"),
    }
    .serialize(s)
}

fn de_opt_ms<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let k = <Known<u64> as serde::Deserialize>::deserialize(d)?;
    Ok(k.value().map(|&ns| ns_to_ms(ns)))
}

fn de_server<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<status::Derived>, D::Error> {
    let k = <Known<status::Derived> as serde::Deserialize>::deserialize(d)?;
    Ok(match k {
        Known::Value(v) => Some(v),
        Known::Unknown { .. } => None,
    })
}

fn ser_server<S: Serializer>(v: &Option<status::Derived>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(d) => Known::Value(d),
        None => Known::unknown("SHOW GLOBAL STATUS could not be read twice during the run"),
    }
    .serialize(s)
}

/// The figures of one run (one thread count).
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct OltpResult {
    pub workload: String,
    pub threads: u32,
    /// When the measured run began (after connecting and warm-up), RFC 3339
    /// with milliseconds: `merge` uses it to check that clients ran together.
    pub started_at: String,
    pub rand_seed: u64,
    pub queries: QueryCounts,
    pub transactions: u64,
    #[serde(rename = "transactions_per_s")]
    pub tps: f64,
    #[serde(rename = "queries_per_s")]
    pub qps: f64,
    pub ignored_errors: u64,
    #[serde(rename = "ignored_errors_per_s")]
    pub errors_per_sec: f64,
    pub reconnects: u64,
    #[serde(rename = "reconnects_per_s")]
    pub reconnects_per_sec: f64,
    pub total_time_s: f64,
    pub events: u64,
    /// Milliseconds here; JSON `latency` in ns.
    #[serde(rename = "latency")]
    pub latency_ms: Latency,
    pub fairness: Fairness,
    pub intervals: Vec<Interval>,
    /// Derived server metrics; None when SHOW GLOBAL STATUS was unavailable.
    #[serde(serialize_with = "ser_server", deserialize_with = "de_server")]
    pub server: Option<status::Derived>,
    pub status_samples: Vec<status::Sample>,
    /// The whole-run latency histogram's slot counts (sysbench's 1024
    /// slots, see [`super::hist`]); in JSON only with `--json-histogram`
    /// (as `histogram`); empty when read back (no document uses it).
    #[serde(skip)]
    pub hist_counts: Vec<u64>,
    /// `--json-histogram`: the histogram, so results of several clients can
    /// be merged exactly (`innotune merge`), never by averaging percentiles.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub histogram: Option<HistogramJson>,
    /// Why the run ended before its time or events (the server died, a
    /// statement failed); the figures above are what it measured until
    /// then. Absent for a run that ran its course.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A latency histogram in JSON: the slot layout and the non-empty slots as
/// `[slot, count]` pairs (most of the 1024 slots are empty).
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct HistogramJson {
    /// `sysbench-log-1024`: slot i's value is exp(i / m + ln lo) ms with
    /// m = 1023 / (ln hi - ln lo).
    pub layout: String,
    pub lo_ms: f64,
    pub hi_ms: f64,
    pub slots: usize,
    pub counts: Vec<(usize, u64)>,
}

impl HistogramJson {
    pub const LAYOUT: &'static str = "sysbench-log-1024";

    pub fn from_counts(counts: &[u64]) -> HistogramJson {
        HistogramJson {
            layout: Self::LAYOUT.into(),
            lo_ms: super::hist::LO_MS,
            hi_ms: super::hist::HI_MS,
            slots: counts.len(),
            counts: counts
                .iter()
                .enumerate()
                .filter(|(_, c)| **c > 0)
                .map(|(i, c)| (i, *c))
                .collect(),
        }
    }

    /// Back to dense slot counts; None when the layout is not ours.
    pub fn dense(&self) -> Option<Vec<u64>> {
        if self.layout != Self::LAYOUT || self.slots != super::hist::SLOTS {
            return None;
        }
        let mut v = vec![0u64; self.slots];
        for &(i, c) in &self.counts {
            *v.get_mut(i)? += c;
        }
        Some(v)
    }
}

/// One table created by prepare.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct PreparedTable {
    pub table: String,
    pub rows: u64,
    pub inserts: u64,
    #[serde(rename = "elapsed_s")]
    pub seconds: f64,
    pub secondary_index: bool,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct PrepareResult {
    pub tables: Vec<PreparedTable>,
    #[serde(rename = "elapsed_s")]
    pub seconds: f64,
    #[serde(rename = "rows_per_s")]
    pub rows_per_sec: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_latency_is_integer_ns_and_never_null() {
        let l = Latency {
            min: 0.5,
            avg: 1.25,
            max: 9.0,
            percentile: 0,
            percentile_value: None,
            sum: 100.0,
            percentiles: [("99".to_string(), 2.5)].into_iter().collect(),
        };
        let j = serde_json::to_value(&l).unwrap();
        assert_eq!(j["min_ns"], 500_000);
        assert_eq!(j["avg_ns"], 1_250_000);
        assert_eq!(j["sum_ns"], 100_000_000);
        assert_eq!(j["p99_ns"], 2_500_000);
        assert!(j["percentile_ns"]["unknown"].is_string(), "{j}");
        assert!(j["p50_ns"]["unknown"].is_string(), "{j}");
        assert!(!j.to_string().contains("null"), "{j}");
    }

    #[test]
    fn latency_reads_back_in_ms() {
        let l = Latency {
            min: 0.5,
            avg: 1.25,
            max: 9.0,
            percentile: 95,
            percentile_value: Some(3.5),
            sum: 100.0,
            percentiles: [("50".to_string(), 1.0), ("99".to_string(), 2.5)]
                .into_iter()
                .collect(),
        };
        let j = serde_json::to_value(&l).unwrap();
        let back: Latency = serde_json::from_value(j.clone()).unwrap();
        assert_eq!(back.avg, 1.25);
        assert_eq!(back.percentile_value, Some(3.5));
        // p95 was not measured: it stays absent, not 0.
        assert_eq!(back.percentiles.len(), 2);
        assert_eq!(back.percentiles["99"], 2.5);
        assert_eq!(serde_json::to_value(&back).unwrap(), j);
        let none: Latency = serde_json::from_value(
            serde_json::to_value(Latency {
                percentile: 0,
                percentile_value: None,
                ..l
            })
            .unwrap(),
        )
        .unwrap();
        assert_eq!(none.percentile_value, None);
    }
}
