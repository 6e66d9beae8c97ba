//! `innotune replay LOG`: the user's own statements, from a slow log
//! captured with `long_query_time = 0` or a general query log
//! ([`general`]), run again against a server (a
//! copy: `innotune sandbox start --from-live`), per session and in order,
//! timed per fingerprint class.
//!
//! Flow: [`cli::ReplayArgs`] → its [`Command`] impl → [`general::Source`]
//! (which kind of log) → rounds of [`log::Dispatcher`] (the log streamed
//! in file order by [`crate::slowlog::input::stream_reader`] or
//! [`general::stream`], classed by slowlog's
//! fingerprints) feeding [`run::connection`] threads (one per session, or
//! `--concurrency` of them) → [`report::ReplayReport`] → exporters.
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
    for _ in 0..args.rounds {
        let start = Instant::now();
        let origin = std::sync::OnceLock::new();
        let spec = &spec;
        let d = &mut d;
        let (streamed, run) = std::thread::scope(|scope| -> Result<_> {
            let mut senders = Senders::new(scope, spec, args.speed, &origin);
            let streamed = {
                let mut send = |c: usize, s| senders.send(c, s);
                match source.format {
                    general::Format::Slow => {
                        let what = format!("slow {}", source.what());
                        source.reader().and_then(|mut r| {
                            let mut round = d.round(&mut send);
                            stream_reader(&mut r, &what, limit, &mut round)
                        })
                    }
                    general::Format::General => {
                        d.begin_round();
                        general::stream(&mut source, max_entry, limit.flag, d, &mut send).map(|g| {
                            crate::slowlog::input::Streamed {
                                bytes: g.bytes,
                                gzip: g.gzip,
                                stopped: g.stopped,
                            }
                        })
                    }
                }
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
            Ok((streamed, all))
        })?;
        d.end_round();
        gzip = streamed.gzip;
        stopped = streamed.stopped;
        rounds.push((start.elapsed().as_secs_f64(), run));
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
        },
        before,
    ))
}

/// How the log was read: its kind, gzip or not, where a damaged gzip
/// stopped.
struct Read {
    format: general::Format,
    gzip: bool,
    stopped: Option<String>,
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
            queries_per_s: if elapsed_s > 0.0 {
                statements as f64 / elapsed_s
            } else {
                0.0
            },
        },
        classes,
        errors: errors_by_code,
        compare: before.map(|(path, b)| CompareInfo {
            against: path,
            rounds_before: b.rounds,
        }),
    }
}
