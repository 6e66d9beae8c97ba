//! `innotune oltp`: sysbench-compatible OLTP load.
//!
//! The workloads match sysbench 1.0.20's Lua scripts (statement text,
//! order, counts, distributions; see `workload.rs`), the text report uses
//! sysbench's layout so existing parsers work, and the server is watched
//! with SHOW GLOBAL STATUS while it is loaded (`status.rs`).
//!
//! Layout: options and the library entry points here; `prepare.rs`
//! (schema, load, cleanup), `workload.rs` (statements, one event),
//! `wire.rs` (the hot path on the socket), `runner.rs` (threads, intervals,
//! status samples), `limits.rs` (server limits checked first),
//! `result.rs` (typed results and their JSON units), `report.rs` (the
//! command: options → its `Command` impl → [`OltpReport`]), `render.rs` (the
//! report as a document, sysbench's layout kept verbatim).
//!
//! Library use (sweep): [`run_workload`] takes a connection spec and
//! [`OltpOptions`] and returns an [`OltpResult`] without printing.
//! (It takes a [`ConnSpec`] rather than one open connection because every
//! worker thread needs its own.) A sweep over a filesystem does:
//!
//! ```no_run
//! use innotune::{oltp, sandbox::{Sandbox, SandboxOpts}};
//! # fn main() -> anyhow::Result<()> {
//! let sb = Sandbox::start(SandboxOpts::new("/mnt/swept/innotune-sb"))?;
//! let opts = oltp::OltpOptions { threads: 16, ..Default::default() };
//! oltp::prepare(&sb.conn_spec(), &opts, 4)?;
//! let r = oltp::run_workload(&sb.conn_spec(), &opts)?;
//! println!("{:.0} tps, p95 {:?} ms", r.tps, r.latency_ms.percentile_value);
//! # Ok(()) }
//! ```

pub mod cli;
pub mod died;
pub mod hist;
pub mod limits;
mod lines;
mod prepare;
pub mod rand;
mod render;
mod report;
pub mod result;
mod runner;
pub mod status;
pub mod wire;
pub mod workload;

use crate::db::ConnSpec;
use anyhow::Result;
pub use died::ServerProcess;
pub use prepare::{check_tables, cleanup, ddl, prepare};
use rand::RandSpec;
pub use render::thread_series;
pub use report::OltpReport;
pub use result::{
    Fairness, Interval, Latency, OltpResult, PrepareResult, PreparedTable, QueryCounts,
};
pub use runner::RunFailed;
use serde::Serialize;
use std::time::Duration;
pub use workload::{IgnoreErrors, Workload};

fn ser_secs<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_f64(d.as_secs_f64()),
        None => crate::host::Known::<f64>::unknown("no time limit (--time 0)").serialize(s),
    }
}

/// Everything a run needs; `Default` is sysbench 1.0.20's defaults.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct OltpOptions {
    pub workload: Workload,
    pub db: String,
    pub tables: u32,
    pub table_size: u32,
    pub threads: u32,
    /// Time limit (None or zero: none). JSON: `time_s`, seconds, or
    /// `{"unknown": …}` without a limit.
    #[serde(
        rename = "time_s",
        serialize_with = "ser_secs",
        deserialize_with = "de_secs"
    )]
    pub time: Option<Duration>,
    /// Event limit (0: none).
    pub events: u64,
    #[serde(rename = "report_interval_s")]
    pub report_interval: u64,
    pub percentile: u8,
    pub range_size: u32,
    pub point_selects: u32,
    pub simple_ranges: u32,
    pub sum_ranges: u32,
    pub order_ranges: u32,
    pub distinct_ranges: u32,
    pub index_updates: u32,
    pub non_index_updates: u32,
    pub delete_inserts: u32,
    pub range_selects: bool,
    pub skip_trx: bool,
    pub auto_inc: bool,
    pub secondary: bool,
    pub create_secondary: bool,
    pub storage_engine: String,
    pub rand: RandSpec,
    /// 0: seed from the current time.
    pub rand_seed: u64,
    pub ignore_errors: IgnoreErrors,
    /// Server-side prepared statements (sysbench `--db-ps-mode=auto`).
    pub ps: bool,
    /// How long a statement may stay unanswered after the run's end (or,
    /// in an event-limited run, at all) before the run fails naming the
    /// server. Above InnoDB's default lock wait (50 s), so a lock wait in
    /// flight at the end is not mistaken for a stall.
    #[serde(
        rename = "stall_timeout_s",
        serialize_with = "ser_secs_f64",
        deserialize_with = "de_secs_f64"
    )]
    pub stall_timeout: Duration,
}

fn ser_secs_f64<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

fn de_secs_f64<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let s = <f64 as serde::Deserialize>::deserialize(d)?;
    Duration::try_from_secs_f64(s).map_err(serde::de::Error::custom)
}

/// The inverse of [`ser_secs`]: `{"unknown": …}` is no time limit.
fn de_secs<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    match <crate::host::Known<f64> as serde::Deserialize>::deserialize(d)? {
        crate::host::Known::Value(s) => Duration::try_from_secs_f64(s)
            .map(Some)
            .map_err(serde::de::Error::custom),
        crate::host::Known::Unknown { .. } => Ok(None),
    }
}

/// The default `--stall-timeout`.
pub const DEFAULT_STALL_TIMEOUT: Duration = Duration::from_secs(60);

impl Default for OltpOptions {
    fn default() -> Self {
        OltpOptions {
            workload: Workload::OltpReadWrite,
            db: "sbtest".into(),
            tables: 1,
            table_size: 10_000,
            threads: 1,
            time: Some(Duration::from_secs(10)),
            events: 0,
            report_interval: 0,
            percentile: 95,
            range_size: 100,
            point_selects: 10,
            simple_ranges: 1,
            sum_ranges: 1,
            order_ranges: 1,
            distinct_ranges: 1,
            index_updates: 1,
            non_index_updates: 1,
            delete_inserts: 1,
            range_selects: true,
            skip_trx: false,
            auto_inc: true,
            secondary: false,
            create_secondary: true,
            storage_engine: "innodb".into(),
            rand: RandSpec::default(),
            rand_seed: 0,
            ignore_errors: IgnoreErrors::Codes(vec![1213, 1020, 1205, 2013, 2006, 2011, 2055]),
            ps: true,
            stall_timeout: DEFAULT_STALL_TIMEOUT,
        }
    }
}

impl OltpOptions {
    /// The effective options: oltp_point_select forces one point select per
    /// event, as its Lua script does.
    pub fn effective(&self) -> OltpOptions {
        let mut o = self.clone();
        if o.workload == Workload::OltpPointSelect {
            o.point_selects = 1;
        }
        o
    }
}

/// Run a workload (no printing).
pub fn run_workload(spec: &ConnSpec, opts: &OltpOptions) -> Result<OltpResult> {
    runner::run(spec, &opts.effective(), &mut |_| {})
}

/// Run a workload, handing each intermediate report to `on_interval`.
pub fn run_workload_with(
    spec: &ConnSpec,
    opts: &OltpOptions,
    on_interval: &mut dyn FnMut(&Interval),
) -> Result<OltpResult> {
    runner::run(spec, &opts.effective(), on_interval)
}
