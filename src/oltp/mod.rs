//! `innotune oltp`: sysbench-compatible OLTP load.
//!
//! The workloads match sysbench 1.0.20's Lua scripts (statement text,
//! order, counts, distributions; see `workload.rs`), the text report uses
//! sysbench's layout so existing parsers work, and the server is watched
//! with SHOW GLOBAL STATUS while it is loaded (`status.rs`).
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
pub mod hist;
pub mod rand;
mod render;
mod runner;
pub mod status;
pub mod wire;
pub mod workload;

use crate::db::{ConnSpec, Endpoint, ServerVersion};
use crate::error::Fix;
use crate::Ctx;
use anyhow::{Context, Result};
use mysql::prelude::Queryable;
use rand::{Rand, RandSpec, C_TEMPLATE, PAD_TEMPLATE};
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
pub use workload::{IgnoreErrors, Workload};

fn ser_secs<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_f64(d.as_secs_f64()),
        None => s.serialize_none(),
    }
}

/// Everything a run needs; `Default` is sysbench 1.0.20's defaults.
#[derive(Debug, Clone, Serialize)]
pub struct OltpOptions {
    pub workload: Workload,
    pub db: String,
    pub tables: u32,
    pub table_size: u32,
    pub threads: u32,
    /// Time limit (None or zero: none). JSON: `time_s`, seconds or null.
    #[serde(rename = "time_s", serialize_with = "ser_secs")]
    pub time: Option<Duration>,
    /// Event limit (0: none).
    pub events: u64,
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
}

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

#[derive(Debug, Clone, Serialize)]
pub struct QueryCounts {
    pub read: u64,
    pub write: u64,
    pub other: u64,
    pub total: u64,
}

#[derive(Debug, Clone, Serialize)]
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

#[derive(Debug, Clone, Serialize)]
pub struct Fairness {
    pub events_avg: f64,
    pub events_stddev: f64,
    pub exec_time_avg: f64,
    pub exec_time_stddev: f64,
}

/// One intermediate report line.
#[derive(Debug, Clone, Serialize)]
pub struct Interval {
    pub t: f64,
    pub threads: u32,
    pub tps: f64,
    pub qps: f64,
    pub read_qps: f64,
    pub write_qps: f64,
    pub other_qps: f64,
    pub latency_pct_ms: Option<f64>,
    pub errors_per_sec: f64,
    pub reconnects_per_sec: f64,
}

/// The figures of one run (one thread count).
#[derive(Debug, Clone, Serialize)]
pub struct OltpResult {
    pub workload: String,
    pub threads: u32,
    pub rand_seed: u64,
    pub queries: QueryCounts,
    pub transactions: u64,
    pub tps: f64,
    pub qps: f64,
    pub ignored_errors: u64,
    pub errors_per_sec: f64,
    pub reconnects: u64,
    pub reconnects_per_sec: f64,
    pub total_time_s: f64,
    pub events: u64,
    pub latency_ms: Latency,
    pub fairness: Fairness,
    pub intervals: Vec<Interval>,
    /// Derived server metrics; null when SHOW GLOBAL STATUS was unavailable.
    pub server: Option<status::Derived>,
    pub status_samples: Vec<status::Sample>,
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

/// One table created by prepare.
#[derive(Debug, Clone, Serialize)]
pub struct PreparedTable {
    pub table: String,
    pub rows: u64,
    pub inserts: u64,
    pub seconds: f64,
    pub secondary_index: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct PrepareResult {
    pub tables: Vec<PreparedTable>,
    pub seconds: f64,
    pub rows_per_sec: f64,
}

/// sysbench's BULK_PACKET_SIZE.
const BULK_PACKET: usize = 512 * 1024;

fn create_table(
    conn: &mut mysql::Conn,
    o: &OltpOptions,
    n: u32,
    rng: &mut Rand,
) -> Result<PreparedTable> {
    let t0 = Instant::now();
    let id_def = if o.auto_inc {
        "INTEGER NOT NULL AUTO_INCREMENT"
    } else {
        "INTEGER NOT NULL"
    };
    let idx = if o.secondary {
        "KEY xid"
    } else {
        "PRIMARY KEY"
    };
    let ddl = ddl(n, id_def, idx, &o.storage_engine);
    conn.query_drop(&ddl).map_err(|e| match &e {
        mysql::Error::MySqlError(me) if me.code == 1050 => anyhow::Error::new(Fix::new(
            format!("table sbtest{n} already exists in {}", o.db),
            format!(
                "run `innotune oltp {} cleanup` with the same --tables first",
                o.workload.name()
            ),
        )),
        _ => anyhow::anyhow!("creating sbtest{n}: {e}"),
    })?;
    let rows = if o.workload == Workload::OltpInsert && !o.auto_inc {
        0
    } else {
        o.table_size
    };
    let prefix = if o.auto_inc {
        format!("INSERT INTO sbtest{n}(k, c, pad) VALUES")
    } else {
        format!("INSERT INTO sbtest{n}(id, k, c, pad) VALUES")
    };
    let mut q = String::with_capacity(BULK_PACKET + 256);
    let mut row = String::with_capacity(256);
    let mut inserts = 0;
    let mut pending = 0;
    for i in 1..=rows {
        use std::fmt::Write;
        row.clear();
        let k = rng.default(1, o.table_size.max(1));
        if o.auto_inc {
            let _ = write!(row, "({k}, '");
        } else {
            let _ = write!(row, "({i}, {k}, '");
        }
        rng.fill_template(C_TEMPLATE, &mut row);
        row.push_str("', '");
        rng.fill_template(PAD_TEMPLATE, &mut row);
        row.push_str("')");
        if pending > 0 && q.len() + 1 + row.len() > BULK_PACKET {
            conn.query_drop(&q)
                .with_context(|| format!("loading sbtest{n}"))?;
            inserts += 1;
            pending = 0;
        }
        if pending == 0 {
            q.clear();
            q.push_str(&prefix);
        } else {
            q.push(',');
        }
        q.push_str(&row);
        pending += 1;
    }
    if pending > 0 {
        conn.query_drop(&q)
            .with_context(|| format!("loading sbtest{n}"))?;
        inserts += 1;
    }
    if o.create_secondary {
        conn.query_drop(format!("CREATE INDEX k_{n} ON sbtest{n}(k)"))
            .with_context(|| format!("creating index k_{n}"))?;
    }
    Ok(PreparedTable {
        table: format!("sbtest{n}"),
        rows: rows as u64,
        inserts,
        seconds: t0.elapsed().as_secs_f64(),
        secondary_index: o.create_secondary,
    })
}

/// sysbench 1.0.20's CREATE TABLE text, byte for byte.
pub fn ddl(n: u32, id_def: &str, idx: &str, engine: &str) -> String {
    format!(
        "CREATE TABLE sbtest{n}(\n  id {id_def},\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  {idx} (id)\n) /*! ENGINE = {engine} */ "
    )
}

fn check_name(db: &str) -> Result<()> {
    if db.is_empty()
        || !db
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
    {
        anyhow::bail!(Fix::new(
            format!("database name {db:?} is not a plain identifier"),
            "use letters, digits and _ in --db"
        ));
    }
    Ok(())
}

/// Create the database (if missing) and the tables, in parallel: thread
/// `t` loads tables t+1, t+1+threads, … as sysbench does.
pub fn prepare(spec: &ConnSpec, opts: &OltpOptions, threads: u32) -> Result<PrepareResult> {
    check_name(&opts.db)?;
    let t0 = Instant::now();
    let mut c = spec.connect()?;
    c.query_drop(format!("CREATE DATABASE IF NOT EXISTS `{}`", opts.db))
        .context("CREATE DATABASE")?;
    drop(c);
    let spec_db = spec.clone().with_db(Some(&opts.db));
    let threads = threads.clamp(1, opts.tables.max(1));
    let seed = if opts.rand_seed == 0 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    } else {
        opts.rand_seed
    };
    let results: Vec<Result<Vec<PreparedTable>>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|tid| {
                let spec_db = &spec_db;
                s.spawn(move || -> Result<Vec<PreparedTable>> {
                    let mut conn = spec_db.connect()?;
                    let mut rng = Rand::new(
                        &opts.rand,
                        seed ^ (tid as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                    );
                    let mut out = Vec::new();
                    let mut i = tid + 1;
                    while i <= opts.tables {
                        out.push(create_table(&mut conn, opts, i, &mut rng)?);
                        i += threads;
                    }
                    Ok(out)
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a prepare thread panicked")))
            })
            .collect()
    });
    let mut tables = Vec::new();
    for r in results {
        tables.extend(r?);
    }
    tables.sort_by_key(|t| {
        t.table
            .trim_start_matches("sbtest")
            .parse::<u32>()
            .unwrap_or(0)
    });
    let secs = t0.elapsed().as_secs_f64();
    let rows: u64 = tables.iter().map(|t| t.rows).sum();
    Ok(PrepareResult {
        tables,
        seconds: secs,
        rows_per_sec: if secs > 0.0 { rows as f64 / secs } else { 0.0 },
    })
}

/// Drop sbtest1..N (IF EXISTS, as sysbench).
pub fn cleanup(spec: &ConnSpec, opts: &OltpOptions) -> Result<Vec<String>> {
    check_name(&opts.db)?;
    let mut c = spec.clone().with_db(Some(&opts.db)).connect()?;
    let mut dropped = Vec::new();
    for i in 1..=opts.tables {
        c.query_drop(format!("DROP TABLE IF EXISTS sbtest{i}"))
            .with_context(|| format!("dropping sbtest{i}"))?;
        dropped.push(format!("sbtest{i}"));
    }
    Ok(dropped)
}

/// What `innotune oltp` reports.
#[derive(Debug, Serialize)]
pub struct OltpReport {
    pub workload: String,
    pub command: String,
    pub endpoint: Endpoint,
    pub server_version: Option<ServerVersion>,
    pub options: OltpOptions,
    pub prepare: Option<PrepareResult>,
    pub cleanup: Option<Vec<String>>,
    /// One run per thread count.
    pub runs: Vec<OltpResult>,
}

fn parse_threads(s: &str) -> Result<Vec<u32>> {
    let v: Vec<u32> = s
        .split(',')
        .map(|t| t.trim().parse::<u32>().ok().filter(|&n| n > 0))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| {
            Fix::new(
                format!("--threads {s:?} is not a positive number or a list such as 8,16,32,64"),
                "give --threads N or --threads N,M,…",
            )
        })?;
    Ok(v)
}

fn options_from(a: &cli::OltpArgs) -> Result<OltpOptions> {
    if a.tables == 0 {
        anyhow::bail!(Fix::new(
            "--tables must be at least 1",
            "pass --tables 1 or more"
        ));
    }
    if a.percentile > 100 {
        anyhow::bail!(Fix::new(
            "--percentile must be 0–100",
            "pass e.g. --percentile 95"
        ));
    }
    if a.time == 0 && a.events == 0 && a.command == cli::Command::Run {
        anyhow::bail!(Fix::new(
            "--time 0 and --events 0 would run forever",
            "give --time SECONDS or --events N"
        ));
    }
    Ok(OltpOptions {
        workload: a.workload,
        db: a.db.clone(),
        tables: a.tables,
        table_size: a.table_size,
        threads: 1,
        time: (a.time > 0).then(|| Duration::from_secs(a.time)),
        events: a.events,
        report_interval: a.report_interval,
        percentile: a.percentile,
        range_size: a.range_size,
        point_selects: a.point_selects,
        simple_ranges: a.simple_ranges,
        sum_ranges: a.sum_ranges,
        order_ranges: a.order_ranges,
        distinct_ranges: a.distinct_ranges,
        index_updates: a.index_updates,
        non_index_updates: a.non_index_updates,
        delete_inserts: a.delete_inserts,
        range_selects: a.range_selects,
        skip_trx: a.skip_trx,
        auto_inc: a.auto_inc,
        secondary: a.secondary,
        create_secondary: a.create_secondary,
        storage_engine: a.mysql_storage_engine.clone(),
        rand: RandSpec {
            kind: a.rand_type,
            spec_iter: a.rand_spec_iter,
            spec_pct: a.rand_spec_pct,
            spec_res: a.rand_spec_res.min(99),
            pareto_h: a.rand_pareto_h,
        },
        rand_seed: a.rand_seed,
        ignore_errors: IgnoreErrors::parse(&a.mysql_ignore_errors)?,
        ps: a.db_ps_mode == cli::PsMode::Auto,
    })
}

pub fn run(args: cli::OltpArgs, ctx: &Ctx) -> Result<i32> {
    use crate::output::Format;
    let threads = parse_threads(&args.threads)?;
    let mut opts = options_from(&args)?;
    let spec = args.conn.resolve(&ctx.host)?;
    let version = spec
        .connect()
        .and_then(|mut c| crate::db::server_version(&mut c))
        .ok();
    let text = ctx.format == Format::Text;
    let mut report = OltpReport {
        workload: args.workload.name().to_string(),
        command: format!("{:?}", args.command).to_lowercase(),
        endpoint: spec.endpoint(),
        server_version: version,
        options: opts.effective(),
        prepare: None,
        cleanup: None,
        runs: Vec::new(),
    };
    match args.command {
        cli::Command::Prepare => {
            let n = threads.iter().copied().max().unwrap_or(1);
            report.prepare = Some(prepare(&spec, &opts, n)?);
        }
        cli::Command::Cleanup => {
            report.cleanup = Some(cleanup(&spec, &opts)?);
        }
        cli::Command::Run => {
            // Check the tables exist before starting threads, with a fix.
            let mut c = spec.clone().with_db(Some(&opts.db)).connect()?;
            for i in 1..=opts.tables {
                let n: Option<String> = c
                    .query_first(format!("SHOW TABLES LIKE 'sbtest{i}'"))
                    .unwrap_or(None);
                if n.is_none() {
                    anyhow::bail!(Fix::new(
                        format!("table sbtest{i} does not exist in {}", opts.db),
                        format!(
                            "run `innotune oltp {} prepare` with the same --tables and --table-size first",
                            opts.workload.name()
                        )
                    ));
                }
            }
            drop(c);
            let single = threads.len() == 1;
            for &t in &threads {
                opts.threads = t;
                if text && single {
                    render::print_header(&opts);
                }
                let mut on_iv = |iv: &Interval| {
                    if text && single {
                        render::print_interval(iv, opts.percentile);
                    }
                };
                if !single {
                    use std::io::IsTerminal;
                    if std::io::stderr().is_terminal() {
                        eprintln!("innotune: {} with {t} threads…", opts.workload.name());
                    }
                }
                let r = runner::run(&spec, &opts.clone().effective(), &mut on_iv)?;
                report.runs.push(r);
            }
            report.options.threads = threads[0];
        }
    }
    ctx.emit(&report)
}
