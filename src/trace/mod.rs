//! `innotune trace`: where block I/O time goes (queueing, the scheduler,
//! the device) from the kernel's block tracepoints, as blkparse + btt
//! would tell it, without blktrace or debugfs.
//!
//! measurement: [`capture`] (a journaled tracefs instance read as binary
//! per-CPU pages, decoded by [`raw`], with [`iostat`] over the same
//! window) or a saved file; analysis: [`event`] (the line formats of a
//! saved file) → [`feed`] → [`analysis`]
//! (btt's correlation) with [`latency`] summaries; presentation:
//! [`report`].

pub mod analysis;
pub mod capture;
pub mod cli;
pub mod event;
pub mod feed;
pub mod iostat;
pub mod latency;
pub mod raw;
pub mod report;
pub mod split;

pub use report::TraceReport;

use crate::command::{Command, Env};
use crate::error::Fix;
use crate::host::Host;
use crate::journal::Guard;
use analysis::{Analysis, DirectionFigures};
use anyhow::{Context, Result};
use capture::Target;
use feed::{Feeder, Lines};
use report::{DeviceTrace, Source};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// What to trace or read.
#[derive(Debug, Clone)]
pub enum TraceOptions {
    Capture {
        targets: Vec<Target>,
        duration: Option<Duration>,
        /// The instance's per-CPU buffer, KiB ([`capture::BUFFER_KB`]).
        buffer_kb: u32,
    },
    File(PathBuf),
}

/// `innotune trace`: resolve, capture (journaled) or read → [`execute`].
impl Command for cli::TraceArgs {
    type Report = TraceReport;

    fn execute(env: &Env, args: Self) -> Result<TraceReport> {
        match args.input {
            Some(input) => from_file(&input),
            None => capture_cli(env, args),
        }
    }
}

fn capture_cli(env: &Env, args: cli::TraceArgs) -> Result<TraceReport> {
    let targets = resolve_targets(&env.host, args.path.as_deref(), &args.devices)?;
    // Ctrl-C (or SIGTERM/SIGHUP) ends the capture and the report covers
    // the window so far; a second one exits at once (then `innotune
    // restore` removes the instance). Caught before the journal begins, so
    // the journal leaves signals to us.
    let _catch = env
        .stop
        .catch(&[libc::SIGINT, libc::SIGTERM, libc::SIGHUP])?;
    let guard = env.guard()?;
    let names: Vec<&str> = targets.iter().map(|t| t.name.as_str()).collect();
    let pb = env.progress.status_line();
    let label = names.join(", ");
    let progress = |p: capture::Progress| {
        let secs = p.elapsed.as_secs_f64();
        pb.set_message(format!(
            "tracing {label}: {secs:.1} s, {} events ({:.0}/s){}",
            p.events,
            p.events as f64 / secs.max(0.001),
            if args.duration.is_none() {
                "; Ctrl-C to stop"
            } else {
                ""
            }
        ));
        pb.tick();
    };
    let opts = TraceOptions::Capture {
        targets,
        duration: args.duration,
        buffer_kb: args.buffer_kb,
    };
    let report = execute(&env.host, Some(&guard), &opts, env.stop.flag(), &progress);
    pb.finish_and_clear();
    drop(guard);
    env.end_journal();
    report
}

/// Capture (through `guard`) or read a saved trace, and analyse it.
pub fn execute(
    host: &Host,
    guard: Option<&Guard>,
    opts: &TraceOptions,
    stop: &AtomicBool,
    progress: &dyn Fn(capture::Progress),
) -> Result<TraceReport> {
    match opts {
        TraceOptions::File(path) => from_file(path),
        TraceOptions::Capture {
            targets,
            duration,
            buffer_kb,
        } => {
            let guard = guard.context("internal: a capture needs a journal")?;
            let c = capture::capture(host, guard, targets, *duration, *buffer_kb, stop, progress)?;
            let lines = c.feeder.lines;
            if lines.lost_events > 0 {
                // Never silently missing: the figures lack these events.
                crate::output::warn(format!(
                    "the kernel lost {} block events (per-CPU buffers of {buffer_kb} KiB overran: {} overwritten, {} dropped): the figures miss the bios they belonged to; trace with a larger --buffer-kb",
                    lines.lost_events, lines.overrun, lines.dropped
                ));
            }
            let source = Source::Capture {
                devices: targets.iter().map(|t| t.name.clone()).collect(),
                window_s: c.window_s,
                interrupted: c.interrupted,
            };
            let mut r = build(c.feeder.analyzer.finish(), lines, source, c.iostat);
            for d in &mut r.devices {
                if let Some(t) = targets.iter().find(|t| t.dev.to_string() == d.device) {
                    d.name = Some(t.name.clone());
                    d.scheduler = host
                        .read(format!("/sys/block/{}/queue/scheduler", t.name))
                        .ok()
                        .and_then(|s| crate::model::choice::parse(&s))
                        .map(|c| c.active);
                }
            }
            for t in targets {
                if !r.devices.iter().any(|d| d.name.as_deref() == Some(&t.name)) {
                    r.notes.push(format!(
                        "no block events on {} ({}) during the window: was there I/O on it?",
                        t.name, t.dev
                    ));
                }
            }
            Ok(r)
        }
    }
}

/// Analyse a saved trace (`-` is stdin).
pub fn from_file(path: &Path) -> Result<TraceReport> {
    let mut feeder = Feeder::default();
    let read = if path == Path::new("-") {
        feeder.read_all(&mut std::io::stdin().lock())
    } else {
        let mut f = std::fs::File::open(path).map_err(|e| {
            Fix::new(
                format!("cannot open --input {}: {e}", path.display()),
                "give a saved trace file (tracefs trace/trace_pipe text or blkparse output)",
            )
        })?;
        feeder.read_all(&mut f)
    };
    read.with_context(|| format!("reading {}", path.display()))?;
    let lines = feeder.lines;
    if lines.events == 0 {
        return Err(Fix::new(
            format!(
                "{} holds no block events ({} lines, {} of neither format)",
                path.display(),
                lines.total,
                lines.unparsed
            ),
            "give a trace with block_bio_queue … block_rq_complete events (tracefs text) or blkparse's default output",
        )
        .into());
    }
    let format = if lines.blkparse * 2 > lines.events {
        "blkparse"
    } else {
        "tracefs"
    };
    let source = Source::File {
        path: path.to_path_buf(),
        format: format.into(),
    };
    Ok(build(feeder.analyzer.finish(), lines, source, Vec::new()))
}

fn build(a: Analysis, lines: Lines, source: Source, iostat: Vec<iostat::Iostat>) -> TraceReport {
    let mut notes = Vec::new();
    let devices: Vec<DeviceTrace> = a
        .devices
        .iter()
        .map(|d| {
            let all = DirectionFigures::of(analysis::Direction::All, &d.all());
            DeviceTrace {
                device: d.dev.to_string(),
                name: None,
                scheduler: None,
                directions: d
                    .dirs
                    .iter()
                    .filter(|(_, s)| s.queued > 0 || s.completed > 0)
                    .map(|(dir, s)| DirectionFigures::of(*dir, s))
                    .collect(),
                all,
                unmatched: d.unmatched,
                incomplete_bios: d.incomplete,
            }
        })
        .collect();
    for d in &devices {
        let (n, of) = (d.all.requests_issued_without_insert, d.all.requests_issued);
        if n > 0 {
            notes.push(format!(
                "{}: {n} of {of} requests were issued with no insert event (scheduler none, or a flush, issued directly): they have no I2D; their Q2C is Q2G + G2D + D2C",
                d.device
            ));
        }
        if d.incomplete_bios > 0 {
            notes.push(format!(
                "{}: {} bios were still in flight at the end (not in Q2C)",
                d.device, d.incomplete_bios
            ));
        }
    }
    if lines.lost_events > 0 {
        notes.push(format!(
            "the kernel dropped {} events (buffer full): some bios have no completion and are missing from the figures",
            lines.lost_events
        ));
    }
    if lines.unparsed > 0 {
        notes.push(format!(
            "{} lines were of neither format and were skipped",
            lines.unparsed
        ));
    }
    TraceReport {
        source,
        lines,
        events: a.events,
        span_s: a.span_ns as f64 / 1e9,
        devices,
        iostat,
        notes,
    }
}

/// The whole disks to trace: those under PATH that have a request queue
/// (the ones the block tracepoints report), or the ones named.
pub fn resolve_targets(host: &Host, path: Option<&Path>, names: &[String]) -> Result<Vec<Target>> {
    let names: Vec<String> = match path {
        Some(p) => {
            let abs = std::path::absolute(p)
                .map_err(|e| Fix::new(format!("{}: {e}", p.display()), "give an existing path"))?;
            let stack = crate::model::HostModel::read(host).scheduled_under(&abs)?;
            let under: Vec<String> = stack.scheduled().iter().map(|d| d.name.clone()).collect();
            crate::model::stack::only(under, |n| n.as_str(), names, &abs)?
        }
        None if names.is_empty() => {
            return Err(Fix::new(
                "nothing to trace",
                "give a PATH, --device NAME, or --input FILE",
            )
            .into())
        }
        None => names.to_vec(),
    };
    names.iter().map(|n| capture::target(host, n)).collect()
}
