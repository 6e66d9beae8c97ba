//! `innotune slowlog`: digest a MySQL/MariaDB/Percona slow query log into
//! classes of statements, with pt-query-digest's classes and far faster.
//!
//! - [`parse`]: bytes → entries (pure, borrowed, memchr-based).
//! - [`fingerprint`]: pt-query-digest's fingerprint and class id.
//! - [`aggregate`]: entries → per-class statistics (one aggregator per thread).
//! - [`input`]: files (mapped, one byte range per thread), gzip and stdin (streamed).
//! - [`report`]: the typed result; [`render`]: its document.
//!
//! Flow: [`cli::SlowlogArgs`] → its [`Command`] impl → [`digest`] →
//! [`report::SlowlogReport`] → exporters. `--capture` is its own command
//! ([`capture::Capture`]): journaled server variables for a window, then
//! [`capture::CaptureReport`].
pub mod aggregate;
pub mod capture;
pub mod cli;
pub mod fingerprint;
pub mod input;
pub mod parse;
pub mod render;
pub mod report;

use crate::command::{Command, Env};
use crate::error::Fix;
use aggregate::{Class, Filter};
use anyhow::Result;
use cli::{SlowlogArgs, Sort};
use report::{ClassReport, SlowlogReport, TotalsReport};
use std::time::Instant;

/// `innotune slowlog`: options → [`digest`].
impl Command for SlowlogArgs {
    type Report = SlowlogReport;

    fn execute(_env: &Env, args: Self) -> Result<SlowlogReport> {
        digest(&args)
    }
}

/// The attribute and function classes are ranked by.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Order {
    attr: Attr,
    func: Func,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Attr {
    QueryTime,
    LockTime,
    RowsSent,
    RowsExamined,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Func {
    Sum,
    Avg,
    Max,
    Min,
    Cnt,
}

impl Order {
    pub fn parse(s: &str) -> Result<Order> {
        let bad = || {
            Fix::new(
                format!("--order-by {s} is not ATTRIBUTE:FUNCTION"),
                "give Query_time, Lock_time, Rows_sent or Rows_examined, then :sum, :avg, :max, :min or :cnt (e.g. Query_time:sum)",
            )
        };
        let (a, f) = s.split_once(':').ok_or_else(bad)?;
        let attr = match a.to_ascii_lowercase().as_str() {
            "query_time" => Attr::QueryTime,
            "lock_time" => Attr::LockTime,
            "rows_sent" => Attr::RowsSent,
            "rows_examined" => Attr::RowsExamined,
            _ => return Err(bad().into()),
        };
        let func = match f.to_ascii_lowercase().as_str() {
            "sum" => Func::Sum,
            "avg" => Func::Avg,
            "max" => Func::Max,
            "min" => Func::Min,
            "cnt" | "count" => Func::Cnt,
            _ => return Err(bad().into()),
        };
        Ok(Order { attr, func })
    }

    pub fn of_sort(s: Sort) -> Order {
        let (attr, func) = match s {
            Sort::T => (Attr::QueryTime, Func::Sum),
            Sort::At => (Attr::QueryTime, Func::Avg),
            Sort::L => (Attr::LockTime, Func::Sum),
            Sort::Al => (Attr::LockTime, Func::Avg),
            Sort::R => (Attr::RowsSent, Func::Sum),
            Sort::Ar => (Attr::RowsSent, Func::Avg),
            Sort::C => (Attr::QueryTime, Func::Cnt),
        };
        Order { attr, func }
    }

    fn key(&self, c: &Class) -> u64 {
        let s = match self.attr {
            Attr::QueryTime => &c.query_time,
            Attr::LockTime => &c.lock_time,
            Attr::RowsSent => &c.rows_sent,
            Attr::RowsExamined => &c.rows_examined,
        };
        match self.func {
            Func::Sum => s.sum,
            Func::Avg => s.sum / c.count.max(1),
            Func::Max => s.max,
            Func::Min => s.min_or_zero(),
            Func::Cnt => c.count,
        }
    }

    pub fn name(&self) -> String {
        let a = match self.attr {
            Attr::QueryTime => "Query_time",
            Attr::LockTime => "Lock_time",
            Attr::RowsSent => "Rows_sent",
            Attr::RowsExamined => "Rows_examined",
        };
        let f = match self.func {
            Func::Sum => "sum",
            Func::Avg => "avg",
            Func::Max => "max",
            Func::Min => "min",
            Func::Cnt => "cnt",
        };
        format!("{a}:{f}")
    }
}

/// `--since`/`--until`: a date, a date and time (read as UTC, like the
/// log's own times), epoch seconds, or a duration back from now.
pub fn parse_when(flag: &str, v: &str) -> Result<i64> {
    let v = v.trim();
    if let Ok(n) = v.parse::<i64>() {
        return Ok(n);
    }
    if let Ok(d) = humantime::parse_duration(v) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        return Ok(now - d.as_secs() as i64);
    }
    let full = if v.len() == 10 {
        format!("{v} 00:00:00")
    } else {
        v.to_string()
    };
    if let Ok(t) = humantime::parse_rfc3339_weak(&full) {
        if let Ok(d) = t.duration_since(std::time::UNIX_EPOCH) {
            return Ok(d.as_secs() as i64);
        }
    }
    Err(Fix::new(
        format!("{flag} {v} is not a time"),
        "give a date (2024-11-25), a date and time (2024-11-25 10:00:00, UTC), epoch seconds, or a duration back from now (3h)",
    )
    .into())
}

fn filter_of(args: &SlowlogArgs) -> Result<Filter> {
    let mut f = Filter {
        since: args
            .since
            .as_deref()
            .map(|v| parse_when("--since", v))
            .transpose()?,
        until: args
            .until
            .as_deref()
            .map(|v| parse_when("--until", v))
            .transpose()?,
        ..Filter::default()
    };
    for kv in &args.filter {
        let Some((k, v)) = kv.split_once('=') else {
            return Err(Fix::new(
                format!("--filter {kv} is not KEY=VALUE"),
                "give db=NAME, user=NAME or host=NAME",
            )
            .into());
        };
        let slot = match k.trim() {
            "db" => &mut f.db,
            "user" => &mut f.user,
            "host" => &mut f.host,
            _ => {
                return Err(Fix::new(
                    format!("--filter {kv}: unknown key {k}"),
                    "filter on db=NAME, user=NAME or host=NAME",
                )
                .into())
            }
        };
        *slot = Some(v.to_string());
    }
    Ok(f)
}

/// Options → the report; the dispatcher renders it.
pub fn digest(args: &SlowlogArgs) -> Result<SlowlogReport> {
    let Some(file) = args.file.as_deref() else {
        return Err(Fix::new(
            "slowlog needs a FILE (or - for stdin) unless --capture is given",
            "give the slow log's path, or --capture 60s with the server's connection options",
        )
        .into());
    };
    let c = &args.conn;
    if c.socket.is_some()
        || c.host.is_some()
        || c.port.is_some()
        || c.user.is_some()
        || c.defaults_file.is_some()
    {
        return Err(Fix::new(
            "connection options are for --capture: reading a FILE connects to no server",
            "leave out --socket/--host/--port/--user/--defaults-file, or give --capture 60s instead of FILE",
        )
        .into());
    }
    let order = match args.sort {
        Some(s) => Order::of_sort(s),
        None => Order::parse(&args.order_by)?,
    };
    let filter = filter_of(args)?;
    let threads = match args.threads {
        Some(0) => {
            return Err(Fix::new(
                "--threads 0 reads nothing",
                "give --threads 1 or more, or leave it out",
            )
            .into())
        }
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let started = Instant::now();
    let limit = input::Limit {
        bytes: args.max_entry_size,
        flag: "--max-entry-size",
    };
    let read = input::read(file, threads, &filter, limit)?;
    let elapsed_s = started.elapsed().as_secs_f64();
    let agg = read.agg;
    let totals = agg.totals;
    let mut classes = agg.classes;
    // Ties broken by fingerprint so the order is the same on every run.
    classes.sort_by(|(fa, a), (fb, b)| order.key(b).cmp(&order.key(a)).then_with(|| fa.cmp(fb)));
    let classes_total = classes.len();
    let top = if args.top == 0 {
        classes_total
    } else {
        args.top
    };
    let shown = classes
        .iter()
        .take(top)
        .enumerate()
        .map(|(i, (fp, c))| ClassReport::new(i + 1, fp, c, &totals))
        .collect();
    Ok(SlowlogReport {
        source: file.display().to_string(),
        gzip: read.gzip,
        stopped: read.stopped,
        read_bytes: read.bytes,
        threads: read.threads,
        elapsed_s,
        read_bytes_per_s: if elapsed_s > 0.0 {
            read.bytes as f64 / elapsed_s
        } else {
            0.0
        },
        order_by: order.name(),
        totals: TotalsReport::new(&totals),
        classes_total,
        classes: shown,
    })
}
