//! `innotune merge`: one OLTP result from several clients that drove one
//! server together (the practice reaches 512 connections from two client
//! machines).
//!
//! Counts add up; rates are the sum of each client's rate (each measured
//! over its own run of the same length); latency percentiles come from the
//! sum of the clients' histograms, since a percentile of the union is not
//! any mix of the clients' percentiles. The inputs are read as JSON values,
//! only the fields merging needs.

pub mod cli;

use crate::command::{Command, Env};
use crate::error::Fix;
use crate::export::doc::{Cell, Column, KeyValues, Table};
use crate::export::Document;
use crate::oltp::hist::percentile;
use crate::oltp::result::{ms_to_ns, HistogramJson};
use anyhow::Result;
use serde::Serialize;
use serde_json::Value;
use std::path::Path;

#[derive(Debug, Serialize, serde::Deserialize)]
pub struct MergeReport {
    pub workload: String,
    pub clients: Vec<Client>,
    /// One per thread count of the clients' runs (clients ran the same
    /// list: merge refuses others, and a result given twice).
    pub runs: Vec<MergedRun>,
}

#[derive(Debug, Serialize, serde::Deserialize)]
pub struct Client {
    pub file: String,
    pub hostname: Value,
    pub generated_at: String,
}

#[derive(Debug, Serialize, serde::Deserialize)]
pub struct MergedRun {
    /// Threads over all clients.
    pub threads: u64,
    pub transactions: u64,
    pub queries: u64,
    pub events: u64,
    pub ignored_errors: u64,
    pub transactions_per_s: f64,
    pub queries_per_s: f64,
    /// The longest client run.
    pub total_time_s: f64,
    /// Seconds between the first and the last client's start (from each
    /// run's `started_at`); null when a client's result has no start time.
    pub start_spread_s: Option<f64>,
    pub latency: MergedLatency,
    /// Per client, in input order.
    pub per_client: Vec<ClientShare>,
    /// The merged histogram (same layout as the inputs').
    pub histogram: HistogramJson,
}

#[derive(Debug, Serialize, serde::Deserialize)]
pub struct MergedLatency {
    pub min_ns: u64,
    pub avg_ns: u64,
    pub max_ns: u64,
    pub p50_ns: u64,
    pub p95_ns: u64,
    pub p99_ns: u64,
}

#[derive(Debug, Serialize, serde::Deserialize)]
pub struct ClientShare {
    pub threads: u64,
    pub transactions: u64,
    pub transactions_per_s: f64,
    /// This client's share of the merged transactions, %.
    pub share_pct: f64,
    pub p95_ns: u64,
}

fn bad(file: &Path, what: impl std::fmt::Display, fix: &str) -> anyhow::Error {
    Fix::new(format!("{}: {what}", file.display()), fix).into()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

/// Read and check one client's result.
fn load(file: &Path) -> Result<(Value, Vec<Vec<u64>>)> {
    let bytes = std::fs::read(file).map_err(|e| {
        bad(
            file,
            format!("cannot read: {e}"),
            "give an oltp result file",
        )
    })?;
    let v: Value = serde_json::from_slice(&bytes).map_err(|e| {
        bad(
            file,
            format!("not JSON ({e})"),
            "give the output of `innotune --format json oltp … run --json-histogram`",
        )
    })?;
    if v["schema"] != "oltp/2" || v["result"]["command"] != "run" {
        return Err(bad(
            file,
            format!("not an oltp run result (schema {})", v["schema"]),
            "give the output of `innotune --format json oltp … run --json-histogram`",
        ));
    }
    let runs = v["result"]["runs"].as_array().cloned().unwrap_or_default();
    if runs.is_empty() {
        return Err(bad(file, "has no runs", "give a result of a finished run"));
    }
    let mut hists = Vec::new();
    for r in &runs {
        if let Some(e) = r["error"].as_str() {
            return Err(bad(
                file,
                format!("has a run that was cut short ({e})"),
                "merge only runs that ran their course: run the clients again",
            ));
        }
        let h: HistogramJson = serde_json::from_value(r["histogram"].clone()).map_err(|_| {
            bad(
                file,
                "has no latency histogram",
                "run the clients with --json-histogram",
            )
        })?;
        hists.push(h.dense().ok_or_else(|| {
            bad(
                file,
                format!(
                    "histogram layout {:?} is not {}",
                    h.layout,
                    HistogramJson::LAYOUT
                ),
                "merge results of the same innotune version",
            )
        })?);
    }
    Ok((v, hists))
}

/// Each run's thread count, in order (a client's `--threads` list).
fn thread_list(v: &Value) -> Vec<u64> {
    v["result"]["runs"]
        .as_array()
        .map(|rs| rs.iter().map(|r| u(&r["threads"])).collect())
        .unwrap_or_default()
}

/// The same client given twice (the same file, a link to it, or a copy:
/// the same result, generated at the same moment) would count its load
/// twice: refused.
fn refuse_repeats(files: &[&std::path::PathBuf], docs: &[&Value]) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let ids: Vec<Option<(u64, u64)>> = files
        .iter()
        .map(|f| std::fs::metadata(f).ok().map(|m| (m.dev(), m.ino())))
        .collect();
    for j in 1..files.len() {
        for i in 0..j {
            let same_file = ids[i].is_some() && ids[i] == ids[j];
            let copy = docs[i]["generated_at"] == docs[j]["generated_at"]
                && docs[i]["result"] == docs[j]["result"];
            if same_file || copy {
                let what = if same_file {
                    format!("is the same file as {}", files[i].display())
                } else {
                    format!("is a copy of {} (the same run)", files[i].display())
                };
                return Err(bad(
                    files[j],
                    what,
                    "give each client's result once: merging one twice doubles its transactions",
                ));
            }
        }
    }
    Ok(())
}

fn merge(files: &[std::path::PathBuf]) -> Result<MergeReport> {
    let mut docs = Vec::new();
    for file in files {
        docs.push((file, load(file)?));
    }
    refuse_repeats(
        &docs.iter().map(|(f, _)| *f).collect::<Vec<_>>(),
        &docs.iter().map(|(_, (v, _))| v).collect::<Vec<_>>(),
    )?;
    let (first, (v0, h0)) = &docs[0];
    let workload = v0["result"]["workload"].as_str().unwrap_or("").to_string();
    for (file, (v, h)) in &docs[1..] {
        if v["result"]["workload"] != v0["result"]["workload"] {
            return Err(bad(
                file,
                format!(
                    "ran {} but {} ran {}",
                    v["result"]["workload"],
                    first.display(),
                    v0["result"]["workload"]
                ),
                "merge clients that ran the same workload",
            ));
        }
        if h.len() != h0.len() {
            return Err(bad(
                file,
                format!(
                    "has {} runs but {} has {}",
                    h.len(),
                    first.display(),
                    h0.len()
                ),
                "merge clients that ran the same --threads list",
            ));
        }
        // Run i of every client is one step of the load: clients that ran
        // different lists (2,64 and 64,2) would add up to steps nobody ran
        // (66 and 66).
        let (list, list0) = (thread_list(v), thread_list(v0));
        if list != list0 {
            let show = |l: &[u64]| {
                l.iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            };
            return Err(bad(
                file,
                format!(
                    "ran --threads {} but {} ran --threads {}",
                    show(&list),
                    first.display(),
                    show(&list0)
                ),
                "merge clients that ran the same --threads list (each client's share of the connections)",
            ));
        }
    }
    let clients = docs
        .iter()
        .map(|(file, (v, _))| Client {
            file: file.display().to_string(),
            hostname: v["host"]["hostname"].clone(),
            generated_at: v["generated_at"].as_str().unwrap_or("").to_string(),
        })
        .collect();
    let mut runs = Vec::new();
    for i in 0..h0.len() {
        let mut counts = vec![0u64; h0[i].len()];
        let mut m = MergedRun {
            threads: 0,
            transactions: 0,
            queries: 0,
            events: 0,
            ignored_errors: 0,
            transactions_per_s: 0.0,
            queries_per_s: 0.0,
            total_time_s: 0.0,
            start_spread_s: None,
            latency: MergedLatency {
                min_ns: u64::MAX,
                avg_ns: 0,
                max_ns: 0,
                p50_ns: 0,
                p95_ns: 0,
                p99_ns: 0,
            },
            per_client: Vec::new(),
            histogram: HistogramJson::from_counts(&[]),
        };
        let mut sum_ns: u64 = 0;
        let mut starts: Vec<Option<std::time::SystemTime>> = Vec::new();
        for (_, (v, h)) in &docs {
            let r = &v["result"]["runs"][i];
            starts.push(
                r["started_at"]
                    .as_str()
                    .and_then(|t| humantime::parse_rfc3339_weak(t).ok()),
            );
            for (a, b) in counts.iter_mut().zip(&h[i]) {
                *a += b;
            }
            m.threads += u(&r["threads"]);
            m.transactions += u(&r["transactions"]);
            m.queries += u(&r["queries"]["total"]);
            m.events += u(&r["events"]);
            m.ignored_errors += u(&r["ignored_errors"]);
            m.transactions_per_s += f(&r["transactions_per_s"]);
            m.queries_per_s += f(&r["queries_per_s"]);
            m.total_time_s = m.total_time_s.max(f(&r["total_time_s"]));
            let l = &r["latency"];
            if u(&r["events"]) > 0 {
                m.latency.min_ns = m.latency.min_ns.min(u(&l["min_ns"]));
            }
            m.latency.max_ns = m.latency.max_ns.max(u(&l["max_ns"]));
            sum_ns += u(&l["sum_ns"]);
            m.per_client.push(ClientShare {
                threads: u(&r["threads"]),
                transactions: u(&r["transactions"]),
                transactions_per_s: f(&r["transactions_per_s"]),
                share_pct: 0.0,
                p95_ns: ms_to_ns(percentile(&h[i], 95.0)),
            });
        }
        if m.latency.min_ns == u64::MAX {
            m.latency.min_ns = 0;
        }
        if let Some(st) = starts.into_iter().collect::<Option<Vec<_>>>() {
            let (lo, hi) = (st.iter().min(), st.iter().max());
            if let (Some(lo), Some(hi)) = (lo, hi) {
                let spread = hi.duration_since(*lo).unwrap_or_default().as_secs_f64();
                m.start_spread_s = Some(spread);
                // Runs that did not overlap are not one load: their sum
                // overstates what the server did at any moment.
                if spread > 1.0 && spread > 0.05 * m.total_time_s {
                    crate::output::warn(format!(
                        "run {} (threads {}): the clients started {spread:.1} s apart over a {:.0} s run, so they did not load the server together; start them with one --start-at",
                        i + 1,
                        m.threads,
                        m.total_time_s
                    ));
                }
            }
        }
        m.latency.avg_ns = sum_ns.checked_div(m.events).unwrap_or(0);
        m.latency.p50_ns = ms_to_ns(percentile(&counts, 50.0));
        m.latency.p95_ns = ms_to_ns(percentile(&counts, 95.0));
        m.latency.p99_ns = ms_to_ns(percentile(&counts, 99.0));
        for c in &mut m.per_client {
            c.share_pct = if m.transactions > 0 {
                100.0 * c.transactions as f64 / m.transactions as f64
            } else {
                0.0
            };
        }
        m.histogram = HistogramJson::from_counts(&counts);
        runs.push(m);
    }
    Ok(MergeReport {
        workload,
        clients,
        runs,
    })
}

/// `innotune merge FILE…`: one result of several clients' ([`merge`]).
impl Command for cli::MergeArgs {
    type Report = MergeReport;

    fn execute(_env: &Env, args: Self) -> Result<MergeReport> {
        merge(&args.files)
    }
}

fn ms(ns: u64) -> String {
    format!("{:.2}", ns as f64 / 1e6)
}

impl crate::export::Report for MergeReport {
    const COMMAND: &'static str = "merge";

    fn document(&self) -> Document {
        let mut d = Document::new(format!(
            "{} from {} clients, merged",
            self.workload,
            self.clients.len()
        ));
        let mut kv = KeyValues::new();
        for (i, c) in self.clients.iter().enumerate() {
            let host = c.hostname.as_str().unwrap_or("?");
            kv.add(
                format!("client {}", i + 1),
                Cell::text(format!("{} ({host}, {})", c.file, c.generated_at)),
            );
        }
        d.key_values(kv);
        let mut t = Table::new(vec![
            Column::num("threads", None),
            Column::num("transactions", None),
            Column::num("TPS", None),
            Column::num("QPS", None),
            Column::num("p50", Some("ms")),
            Column::num("p95", Some("ms")),
            Column::num("p99", Some("ms")),
            Column::num("max", Some("ms")),
            Column::num("start spread", Some("s")),
        ]);
        for r in &self.runs {
            // How far apart the clients started: the figures above are a
            // load the clients put on the server together only when this
            // is small against the run.
            let spread = match r.start_spread_s {
                Some(s) => Cell::num(s, format!("{s:.3}")),
                None => Cell::text("unknown").tone(crate::export::doc::Tone::Dim),
            };
            t.row(vec![
                Cell::num(r.threads as f64, r.threads.to_string()),
                Cell::num(r.transactions as f64, r.transactions.to_string()),
                Cell::num(r.transactions_per_s, format!("{:.2}", r.transactions_per_s)),
                Cell::num(r.queries_per_s, format!("{:.2}", r.queries_per_s)),
                Cell::text(ms(r.latency.p50_ns)),
                Cell::text(ms(r.latency.p95_ns)),
                Cell::text(ms(r.latency.p99_ns)),
                Cell::text(ms(r.latency.max_ns)),
                spread,
            ]);
        }
        d.heading("Merged (latency from the merged histogram)");
        d.table(t);
        d.heading("Each client's share");
        let mut t = Table::new(vec![
            Column::text("client"),
            Column::num("threads", None),
            Column::num("transactions", None),
            Column::num("TPS", None),
            Column::num("share", Some("%")),
            Column::num("p95", Some("ms")),
        ]);
        for r in &self.runs {
            for (i, c) in r.per_client.iter().enumerate() {
                t.row(vec![
                    Cell::text(format!("{}", i + 1)),
                    Cell::num(c.threads as f64, c.threads.to_string()),
                    Cell::num(c.transactions as f64, c.transactions.to_string()),
                    Cell::num(c.transactions_per_s, format!("{:.2}", c.transactions_per_s)),
                    Cell::num(c.share_pct, format!("{:.1}", c.share_pct)),
                    Cell::text(ms(c.p95_ns)),
                ]);
            }
        }
        d.table(t);
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::text::Text;
    use crate::export::{Exporter, Report};

    /// Issue 46: the text page lacked the start spread the README
    /// describes. The saved merge of two real clients shows each run's
    /// spread in seconds, and "unknown" when a result had no start time.
    #[test]
    fn text_shows_the_start_spread() {
        let v: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/fixtures/results/merge.json")).unwrap();
        let mut r: MergeReport = serde_json::from_value(v["result"].clone()).unwrap();
        let page = |r: &MergeReport| {
            let mut out = Vec::new();
            Text::new(crate::output::Style::plain())
                .export(&r.document(), &mut out)
                .unwrap();
            String::from_utf8(out).unwrap()
        };
        let text = page(&r);
        assert!(text.contains("start spread (s)"), "{text}");
        for run in &r.runs {
            let s = run.start_spread_s.unwrap();
            let row = text
                .lines()
                .find(|l| l.trim_start().starts_with(&format!("{} ", run.threads)))
                .unwrap();
            assert!(row.trim_end().ends_with(&format!("{s:.3}")), "{row}");
        }
        r.runs[0].start_spread_s = None;
        assert!(page(&r).contains("unknown"));
    }
}
