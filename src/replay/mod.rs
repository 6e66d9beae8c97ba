//! `innotune replay LOG`: the user's own statements, from a slow log
//! captured with `long_query_time = 0` or a general query log
//! ([`general`]), run again against a server (a
//! copy: `innotune sandbox start --from-live`), per session and in order,
//! timed per fingerprint class.
//!
//! Flow: [`cli::ReplayArgs`] → its [`Command`] impl → [`general::Source`]
//! (which kind of log) → [`log::Dispatcher`] (the log read in file order
//! by [`crate::slowlog::input::stream_reader`] or [`general::stream`],
//! classed by slowlog's fingerprints, each statement given its connection:
//! one per session, or `--concurrency` of them) → the statements kept in
//! memory when they fit `--preload` and every round run from there
//! ([`run::from_memory`]), else each round streamed to
//! [`run::connection`] threads → [`report::ReplayReport`] → exporters.
//! `--compare FILE` puts each class's mean latency per round beside FILE's
//! through `stats::compare_effect`.

pub mod cli;
mod general;
mod log;
mod render;
pub mod report;
mod run;

use crate::command::{Command, Env};
use crate::error::Fix;
use crate::slowlog::input::{stream_reader, Limit};
use anyhow::Result;
use cli::{ReplayArgs, Speed};
use log::Dispatcher;
pub use report::ReplayReport;
use report::{ClassCompare, ClassReport, CompareInfo, ErrorReport, LogReport, TotalsReport};
use run::{ConnRun, Senders};
use std::time::Instant;

/// Connections at most when each session gets its own (a sandbox makes
/// room for 1024 client threads); more sessions share them.
pub const MAX_CONNECTIONS: usize = 1024;

/// A log whose fastest statement took this long or more was not captured
/// with `long_query_time = 0` (a BEGIN or a primary-key read takes
/// microseconds).
pub const COVERAGE_MIN_NS: u64 = 1_000_000;

impl Command for ReplayArgs {
    type Report = ReplayReport;

    fn execute(env: &Env, args: Self) -> Result<ReplayReport> {
        replay(env, &args)
    }
}

fn replay(env: &Env, args: &ReplayArgs) -> Result<ReplayReport> {
    if args.rounds == 0 {
        return Err(Fix::new("--rounds 0 replays nothing", "give --rounds 1 or more").into());
    }
    if args.concurrency == Some(0) {
        return Err(Fix::new(
            "--concurrency 0 has no connection to replay on",
            "give --concurrency 1 or more, or leave it out (one connection per session)",
        )
        .into());
    }
    if args.log.as_os_str() == "-" && args.rounds > 1 && args.preload == 0 {
        return Err(Fix::new(
            format!(
                "--rounds {} from stdin with --preload 0: stdin cannot be read twice, and --preload 0 keeps nothing in memory",
                args.rounds
            ),
            "give the log as a file, or a --preload SIZE its statements fit in",
        )
        .into());
    }
    // Read before anything runs: a bad file, or one mixing a slow and a
    // general log, costs no replay.
    let mut source = general::Source::open(&args.log)?;
    let before = args
        .compare
        .as_deref()
        .map(report::load_before)
        .transpose()?;
    let spec = args.conn.resolve(&env.host)?;
    // One connection first: an unreachable server is one line, before the
    // log is read.
    let mut probe = spec.connect()?;
    let server = crate::db::server_version(&mut probe)?.raw;
    drop(probe);
    let limit = Limit {
        bytes: args.max_entry_size,
        flag: "--max-entry-size",
    };
    let max_entry = usize::try_from(args.max_entry_size).unwrap_or(usize::MAX);
    let mut d = Dispatcher::new(args.concurrency, args.read_only, max_entry);
    let mut rounds: Vec<(f64, ConnRun)> = Vec::new();
    let mut gzip = false;
    let mut stopped = None;
    // The statements per connection, once the log was read into memory.
    let mut memory: Option<Vec<Vec<run::Stmt>>> = None;
    let mut load_s = None;
    let stdin = args.log.as_os_str() == "-";
    for round in 0..args.rounds {
        if let Some(conns) = &memory {
            rounds.push(run::from_memory(&spec, conns, args.speed)?);
            continue;
        }
        let start = Instant::now();
        let origin = std::sync::OnceLock::new();
        let spec = &spec;
        let d = &mut d;
        let preload = round == 0 && args.preload > 0;
        let outcome = std::thread::scope(|scope| -> Result<_> {
            let mut senders = Senders::new(scope, spec, args.speed, &origin);
            let mut load = Load {
                on: preload,
                kept: Vec::new(),
                bytes: 0,
                budget: args.preload,
                streamed_from: None,
                refused: false,
            };
            let streamed = {
                let mut send =
                    |c: usize, s| load.take(c, s, &mut senders, stdin && args.rounds > 1);
                read_round(&mut source, d, limit, max_entry, &mut send)
            };
            let handles = senders.finish();
            let mut all = ConnRun::default();
            let mut failed = None;
            for h in handles {
                match h.join() {
                    Ok(Ok(r)) => all.merge(r),
                    Ok(Err(e)) => {
                        failed.get_or_insert(e);
                    }
                    Err(p) => std::panic::resume_unwind(p),
                }
            }
            let streamed = streamed?;
            if let Some(e) = failed {
                return Err(e);
            }
            Ok((streamed, all, load))
        })?;
        let (streamed, run, load) = outcome;
        d.end_round();
        gzip = streamed.gzip;
        stopped = streamed.stopped;
        if load.refused {
            return Err(Fix::new(
                format!(
                    "the log on stdin holds more than --preload {} of statements, and --rounds {} needs it {} times: stdin cannot be read twice",
                    crate::units::fmt_size(args.preload),
                    args.rounds,
                    args.rounds
                ),
                "give the log as a file, or a larger --preload",
            )
            .into());
        }
        if load.on {
            // It fitted: nothing ran yet. This round and the next run from
            // memory.
            load_s = Some(start.elapsed().as_secs_f64());
            // Sized first, so sorting by connection holds each record at
            // most twice (as STMT_OVERHEAD counts), never a doubled Vec.
            let mut per = vec![0usize; d.connections];
            for (c, _) in &load.kept {
                per[*c] += 1;
            }
            let mut conns: Vec<Vec<run::Stmt>> = per.into_iter().map(Vec::with_capacity).collect();
            for (c, s) in load.kept {
                conns[c].push(s);
            }
            rounds.push(run::from_memory(spec, &conns, args.speed)?);
            memory = Some(conns);
        } else {
            let from = load.streamed_from.unwrap_or(start);
            rounds.push((from.elapsed().as_secs_f64(), run));
        }
    }
    Ok(build(
        args,
        &d,
        rounds,
        server,
        Read {
            format: source.format,
            gzip,
            stopped,
            load_s,
        },
        before,
    ))
}

/// Memory a statement read into memory takes over its text, at the peak
/// (when the log-ordered list is sorted by connection both hold its
/// record, 56 + 48 bytes) plus the allocator's share of its text's box.
const STMT_OVERHEAD: u64 = 128;

/// The first round's reading of the log into memory (`--preload`).
struct Load {
    /// Still keeping: every statement so far fitted (false: streaming).
    on: bool,
    /// The statements in log order, with their connection.
    kept: Vec<(usize, run::Stmt)>,
    bytes: u64,
    budget: u64,
    /// When the statements outgrew the budget and the round began to run
    /// from the stream: its time is counted from then.
    streamed_from: Option<Instant>,
    /// stdin outgrew it with more rounds to run: nothing runs.
    refused: bool,
}

impl Load {
    fn take(&mut self, c: usize, s: run::Stmt, senders: &mut Senders<'_, '_>, refuse: bool) {
        if self.refused {
            return;
        }
        if !self.on {
            senders.send(c, s);
            return;
        }
        self.bytes += s.sql.len() as u64 + STMT_OVERHEAD;
        self.kept.push((c, s));
        if self.bytes <= self.budget {
            return;
        }
        self.on = false;
        let kept = std::mem::take(&mut self.kept);
        if refuse {
            self.refused = true;
            return;
        }
        // What was kept goes first, in log order, then the rest as read.
        self.streamed_from = Some(Instant::now());
        for (c, s) in kept {
            senders.send(c, s);
        }
    }
}

/// One reading of the log: its statements, classed, to `send`.
fn read_round(
    source: &mut general::Source<'_>,
    d: &mut Dispatcher,
    limit: Limit,
    max_entry: usize,
    send: &mut dyn FnMut(usize, run::Stmt),
) -> Result<crate::slowlog::input::Streamed> {
    match source.format {
        general::Format::Slow => {
            let what = format!("slow {}", source.what());
            let mut r = source.reader()?;
            let mut round = d.round(send);
            stream_reader(&mut r, &what, limit, &mut round)
        }
        general::Format::General => {
            d.begin_round();
            general::stream(source, max_entry, limit.flag, d, send).map(|g| {
                crate::slowlog::input::Streamed {
                    bytes: g.bytes,
                    gzip: g.gzip,
                    stopped: g.stopped,
                }
            })
        }
    }
}

/// How the log was read: its kind, gzip or not, where a damaged gzip
/// stopped.
struct Read {
    format: general::Format,
    gzip: bool,
    stopped: Option<String>,
    /// Time the log took to read into memory; None: it was streamed.
    load_s: Option<f64>,
}

/// The report from the log's classes and what each round ran.
fn build(
    args: &ReplayArgs,
    d: &Dispatcher,
    rounds: Vec<(f64, ConnRun)>,
    server: String,
    read: Read,
    before: Option<(String, ReplayReport)>,
) -> ReplayReport {
    let Read {
        format,
        gzip,
        stopped,
        load_s,
    } = read;
    let elapsed_s: f64 = rounds.iter().map(|(s, _)| s).sum();
    let mut all = ConnRun::default();
    let mut means: Vec<Vec<f64>> = vec![Vec::new(); d.classes.len()];
    for (_, r) in &rounds {
        for (i, m) in means.iter_mut().enumerate() {
            let c = r.classes.get(i);
            match c {
                Some(c) if c.ok > 0 => m.push(c.ok_ns as f64 / c.ok as f64),
                _ => {}
            }
        }
    }
    for (_, r) in rounds {
        all.merge(r);
    }
    let all_busy = all.all_busy.filter(|(s, _)| *s > 0.0);
    // Bonferroni over the classes compared (those that ran on both sides),
    // as sweep and prove correct over their comparisons: a log of twenty
    // classes tested at 0.05 each would call one of them changed by chance.
    let compared = before.as_ref().map_or(0, |(_, b)| {
        d.classes
            .iter()
            .enumerate()
            .filter(|(i, lc)| {
                !means[*i].is_empty()
                    && b.classes
                        .iter()
                        .any(|bc| bc.id == lc.id && !bc.round_mean_ns.is_empty())
            })
            .count()
    });
    let mut opts = crate::stats::CompareOpts::default();
    opts.alpha /= compared.max(1) as f64;
    let mut classes: Vec<ClassReport> = d
        .classes
        .iter()
        .enumerate()
        .map(|(i, lc)| {
            let c = all.classes.get(i).cloned().unwrap_or_default();
            let compare = before.as_ref().and_then(|(_, b)| {
                // A class that ran in no round on one side (skipped by
                // --read-only, or failing throughout) has nothing to compare.
                let base = b
                    .classes
                    .iter()
                    .find(|bc| bc.id == lc.id)
                    .filter(|bc| !bc.round_mean_ns.is_empty() && !means[i].is_empty())?;
                let (comparison, effect) = crate::stats::compare_effect(
                    &base.round_mean_ns,
                    &means[i],
                    crate::stats::Direction::LowerIsBetter,
                    &opts,
                );
                Some(ClassCompare {
                    rounds_before: base.round_mean_ns.len(),
                    comparison,
                    effect,
                })
            });
            ClassReport {
                id: lc.id.clone(),
                fingerprint: lc.fingerprint.clone(),
                count: c.count,
                errors: c.errors,
                p50_ns: c.buckets.percentile(0.50),
                p95_ns: c.buckets.percentile(0.95),
                p99_ns: c.buckets.percentile(0.99),
                total_ns: c.total_ns,
                log_count: lc.count,
                log_total_ns: lc.total_ns,
                round_mean_ns: means[i].clone(),
                compare,
            }
        })
        .collect();
    classes.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then_with(|| a.id.cmp(&b.id)));
    let statements: u64 = classes.iter().map(|c| c.count).sum();
    let errors: u64 = classes.iter().map(|c| c.errors).sum();
    let t = &d.totals;
    let covered_pct = (t.session_span_ns > 0)
        .then(|| (t.query_ns as f64 / t.session_span_ns as f64 * 100.0).min(100.0));
    let coverage_warning = t.min_query_ns.filter(|&m| m >= COVERAGE_MIN_NS).map(|m| {
        format!(
            "{}: its fastest statement took {:.1} ms, so it was captured with long_query_time around that, not 0: faster statements are missing from it and from the replay{}",
            args.log.display(),
            m as f64 / 1e6,
            match covered_pct {
                Some(p) => format!(" (the logged statements cover {p:.1} % of the sessions' time)"),
                None => String::new(),
            }
        )
    });
    if let Some(w) = &coverage_warning {
        crate::output::warn(w);
    }
    let errors_by_code = all
        .errors
        .iter()
        .map(|(code, e)| ErrorReport {
            code: *code,
            count: e.count,
            message: e.message.clone(),
            sample: e.statement.clone(),
            class_id: d
                .classes
                .get(e.class as usize)
                .map(|c| c.id.clone())
                .unwrap_or_default(),
        })
        .collect();
    ReplayReport {
        source: args.log.display().to_string(),
        format: match format {
            general::Format::Slow => "slow",
            general::Format::General => "general",
        }
        .into(),
        gzip,
        stopped,
        server,
        speed: match args.speed {
            Speed::Max => "max".into(),
            Speed::Factor(f) => format!("{f}"),
        },
        read_only: args.read_only,
        rounds: args.rounds,
        connections: d.connections,
        log: LogReport {
            entries: t.entries,
            malformed: t.malformed,
            admin_skipped: t.admin,
            writes_skipped: t.writes_skipped,
            sessions: t.sessions,
            min_query_ns: t.min_query_ns,
            query_ns: t.query_ns,
            covered_pct,
            coverage_warning,
        },
        totals: TotalsReport {
            statements,
            errors,
            elapsed_s,
            load_s,
            queries_per_s: if elapsed_s > 0.0 {
                statements as f64 / elapsed_s
            } else {
                0.0
            },
            all_busy_s: all_busy.map(|(s, _)| s),
            all_busy_statements: all_busy.map(|(_, n)| n),
            all_busy_queries_per_s: all_busy.map(|(s, n)| n as f64 / s),
        },
        classes,
        errors: errors_by_code,
        compare: before.map(|(path, b)| CompareInfo {
            against: path,
            rounds_before: b.rounds,
        }),
    }
}
