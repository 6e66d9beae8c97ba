//! The `oltp` command: its typed report, and options → its [`Command`] impl.

use super::prepare::{check_tables, cleanup, prepare};
use super::rand::RandSpec;
use super::result::{Interval, OltpResult, PrepareResult};
use super::{cli, lines, runner, IgnoreErrors, OltpOptions};
use crate::command::{Command, Env};
use crate::db::{Endpoint, ServerVersion};
use crate::error::Fix;
use anyhow::Result;
use serde::Serialize;
use std::time::Duration;

/// What `innotune oltp` reports.
#[derive(Debug, Serialize, serde::Deserialize)]
pub struct OltpReport {
    pub workload: String,
    pub command: String,
    pub endpoint: Endpoint,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_version: Option<ServerVersion>,
    pub options: OltpOptions,
    /// Present for `prepare`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prepare: Option<PrepareResult>,
    /// Present for `cleanup`.
    #[serde(skip_serializing_if = "Option::is_none")]
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
        stall_timeout: match a.stall_timeout {
            0 => anyhow::bail!(Fix::new(
                "--stall-timeout 0 would give up on every statement",
                "give --stall-timeout SECONDS (default 60)"
            )),
            s => Duration::from_secs(s),
        },
    })
}

/// `innotune oltp …`: prepare, run or cleanup, streaming sysbench's
/// header and interval lines to `env.stream` while a single run goes on.
impl Command for cli::OltpArgs {
    type Report = OltpReport;

    fn execute(env: &Env, args: Self) -> Result<OltpReport> {
        let report = drive(env, &args)?;
        // A run cut short: its partial results are in the report, then the
        // error that ended it is the command's (one line, exit 2).
        if let Some(e) = report.runs.iter().find_map(|r| r.error.clone()) {
            env.fail_after_report(anyhow::anyhow!(e));
        }
        Ok(report)
    }
}

fn drive(env: &Env, args: &cli::OltpArgs) -> Result<OltpReport> {
    let (host, stream) = (&env.host, &env.stream);
    let threads = parse_threads(&args.threads)?;
    let mut opts = options_from(args)?;
    let spec = args.conn.resolve(host)?;
    // Connect once first: an unreachable server is one error line naming
    // it, before anything else.
    // One control connection, open through the checks, so that the
    // limits check counts exactly the other clients.
    let mut ctl = spec.connect()?;
    let version = crate::db::server_version(&mut ctl).ok();
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
            drop(ctl);
            let n = threads.iter().copied().max().unwrap_or(1);
            report.prepare = Some(prepare(&spec, &opts, n)?);
        }
        cli::Command::Cleanup => {
            drop(ctl);
            report.cleanup = Some(cleanup(&spec, &opts)?);
        }
        cli::Command::Run => {
            // Before any thread starts: the tables exist, and the server
            // allows the connections and statements of the largest count.
            check_tables(&mut ctl, &spec, &opts)?;
            let most = threads.iter().copied().max().unwrap_or(1);
            super::limits::check_server(&mut ctl, &spec, &opts, most)?;
            // The server's process, when it runs here: a run that fails
            // because it died says so.
            let server = super::died::ServerProcess::of_conn(&mut ctl, &spec);
            drop(ctl);
            if let Some(at) = args.start_at {
                wait_until(at)?;
            }
            // sysbench's header and interval lines belong to one run;
            // a thread list reports one table at the end instead.
            let single = threads.len() == 1;
            for &t in &threads {
                opts.threads = t;
                if single && stream.is_enabled() {
                    stream.line(lines::header(&opts.effective()));
                }
                let pct = opts.percentile;
                let mut on_iv = |iv: &Interval| {
                    if single {
                        stream.line(lines::interval_line(iv, pct));
                    }
                };
                if !single && env.progress.shown() {
                    eprintln!("innotune: {} with {t} threads…", opts.workload.name());
                }
                let run = runner::run(&spec, &opts.clone().effective(), &mut on_iv);
                let who = format!("the server at {}", spec.describe());
                let run = run.map_err(|e| match &server {
                    Some(s) => s.explain(e, &who),
                    None => e,
                });
                let mut r = match run {
                    Ok(r) => r,
                    // Cut short: keep what it measured (and the runs before
                    // it); `run` reports the error after the results.
                    Err(e) => match e.downcast::<runner::RunFailed>() {
                        Ok(failed) => {
                            let mut r = *failed.partial;
                            if args.json_histogram {
                                r.histogram =
                                    Some(super::result::HistogramJson::from_counts(&r.hist_counts));
                            }
                            report.runs.push(r);
                            break;
                        }
                        Err(e) => return Err(e),
                    },
                };
                if args.json_histogram {
                    r.histogram = Some(super::result::HistogramJson::from_counts(&r.hist_counts));
                }
                report.runs.push(r);
            }
            report.options.threads = threads[0];
        }
    }
    Ok(report)
}

/// `--start-at`: wait for the agreed wall-clock time. The longest wait is a
/// day, so a mistyped date fails at once instead of hanging a fleet.
fn wait_until(at: std::time::SystemTime) -> Result<()> {
    let now = std::time::SystemTime::now();
    let shown = humantime::format_rfc3339_seconds(at);
    let wait = at.duration_since(now).map_err(|_| {
        Fix::new(
            format!("--start-at {shown} has passed"),
            "give a time a little in the future, the same on every client",
        )
    })?;
    if wait > Duration::from_secs(86_400) {
        return Err(Fix::new(
            format!("--start-at {shown} is more than a day away"),
            "give a time within the next day",
        )
        .into());
    }
    std::thread::sleep(wait);
    Ok(())
}
