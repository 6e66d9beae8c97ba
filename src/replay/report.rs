//! The typed result of `innotune replay` (JSON: docs/json-replay.md).

use crate::error::Fix;
use crate::stats::{Comparison, Effect};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Serialize, Deserialize)]
pub struct ReplayReport {
    /// The log as given (`-` for stdin).
    pub source: String,
    /// `slow` or `general`: the kind of log LOG is.
    #[serde(default = "slow")]
    pub format: String,
    pub gzip: bool,
    /// Where reading stopped before the end (a gzip stream cut short).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// The server replayed on: its VERSION().
    pub server: String,
    /// `max`, or the factor on the log's pace.
    pub speed: String,
    pub read_only: bool,
    pub rounds: u32,
    /// Connections the sessions ran on.
    pub connections: usize,
    pub log: LogReport,
    pub totals: TotalsReport,
    /// Every class of the log, most replay time first.
    pub classes: Vec<ClassReport>,
    /// Failed statements by error code, one sample each.
    pub errors: Vec<ErrorReport>,
    /// `--compare FILE`: what the classes' `compare` are against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compare: Option<CompareInfo>,
}

fn slow() -> String {
    "slow".into()
}

/// What the log held (counted once, whatever the rounds).
#[derive(Debug, Serialize, Deserialize)]
pub struct LogReport {
    /// Entries with a statement (replayed unless skipped).
    pub entries: u64,
    pub malformed: u64,
    /// `administrator command:` entries (Prepare, Close stmt, Quit…): not statements.
    pub admin_skipped: u64,
    /// Statements that change data, skipped by --read-only.
    pub writes_skipped: u64,
    /// Distinct sessions (thread ids).
    pub sessions: u64,
    /// The fastest logged statement's Query_time.
    pub min_query_ns: Option<u64>,
    /// Query_time summed over the entries.
    pub query_ns: u64,
    /// The logged statements' time as a share of the sessions' spans
    /// (first start to last end, summed), in percent.
    pub covered_pct: Option<f64>,
    /// Set when the log was not captured with long_query_time = 0.
    pub coverage_warning: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct TotalsReport {
    /// Statements run, over every round (errors included).
    pub statements: u64,
    pub errors: u64,
    /// Wall time of the rounds.
    pub elapsed_s: f64,
    /// Time the log took to read into memory before the first round (not
    /// in `elapsed_s`); None when it was streamed.
    #[serde(default)]
    pub load_s: Option<f64>,
    pub queries_per_s: f64,
    /// Rounds read from memory: the time from each round's start until its
    /// first connection ran out of statements (every connection busy),
    /// summed; None when the log was streamed.
    #[serde(default)]
    pub all_busy_s: Option<f64>,
    /// The statements finished in `all_busy_s`.
    #[serde(default)]
    pub all_busy_statements: Option<u64>,
    /// `all_busy_statements / all_busy_s`: the rate at the concurrency
    /// asked for, without the tail on fewer connections that ends a round.
    #[serde(default)]
    pub all_busy_queries_per_s: Option<f64>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct ClassReport {
    /// slowlog's (pt-query-digest's) class id.
    pub id: String,
    pub fingerprint: String,
    /// Statements run, over every round.
    pub count: u64,
    pub errors: u64,
    /// Latency of the successful statements (5 % buckets, as slowlog's).
    pub p50_ns: u64,
    pub p95_ns: u64,
    pub p99_ns: u64,
    /// Time of every statement run, errors included.
    pub total_ns: u64,
    /// Entries of the class in the log, and their Query_time summed.
    pub log_count: u64,
    pub log_total_ns: u64,
    /// Mean latency of the successful statements, per round.
    pub round_mean_ns: Vec<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compare: Option<ClassCompare>,
}

/// One class against the same class of `--compare FILE`.
#[derive(Debug, Serialize, Deserialize)]
pub struct ClassCompare {
    pub rounds_before: usize,
    /// Ratio this/before of the mean latency, its interval, p-value and verdict.
    pub comparison: Comparison,
    /// `slower`, `faster`, `no_difference` or `too_few_rounds`.
    pub effect: Effect,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct ErrorReport {
    /// The server's error number (2013: the connection was lost).
    pub code: u16,
    pub count: u64,
    /// The first one's message and statement (truncated to 300 characters).
    pub message: String,
    pub sample: String,
    pub class_id: String,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct CompareInfo {
    pub against: String,
    pub rounds_before: u32,
}

/// Read `--compare FILE`: a replay result (`replay/2`).
pub fn load_before(path: &Path) -> Result<(String, ReplayReport)> {
    const RESULT: crate::input::Input = crate::input::Input {
        what: "replay result",
        fix: "give a file written by `innotune replay LOG --format json -o FILE`",
        max: Some(256 << 20),
    };
    let text = RESULT.read_to_string(path)?;
    let bad = |why: String| {
        Fix::new(
            format!("--compare {}: {why}", path.display()),
            "give a file written by `innotune replay LOG --rounds 5 --format json -o FILE`",
        )
    };
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| bad(format!("not JSON ({e})")))?;
    let schema = v["schema"].as_str().unwrap_or("");
    if schema != "replay/2" {
        return Err(bad(format!("its schema is {schema:?}, not \"replay/2\"")).into());
    }
    let r: ReplayReport = serde_json::from_value(v["result"].clone())
        .map_err(|e| bad(format!("not a replay result this innotune reads ({e})")))?;
    Ok((path.display().to_string(), r))
}
