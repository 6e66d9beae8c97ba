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
    if args.duration == Some(Duration::ZERO) {
        return Err(Fix::new(
            "--duration 0 would capture nothing",
            "give a duration such as --duration 10s, or leave it out to trace until Ctrl-C",
        )
        .into());
    }
    let targets = resolve_targets(&env.host, args.path.as_deref(), &args.devices)?;
    // Ctrl-C (or SIGTERM/SIGHUP) ends the capture and the report covers
    // the window so far. Further signals change nothing: GNU `timeout`
    // sends two at once, and the rest (the last read, removing the
    // instance, unmounting tracefs if we mounted it) is bounded: the
    // instance's removal gives up after 3 s. Caught before the journal
    // begins, so the journal leaves signals to us; after the handle drops
    // signal-hook ignores them, so rendering the report is not cut short.
    let _catch = env
        .stop
        .catch_all(&[libc::SIGINT, libc::SIGTERM, libc::SIGHUP])?;
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
            let behind = (c.behind > 0).then(|| {
                format!(
                    "the analysis fell behind the capture {} time(s) (up to {} MiB of pages waiting) and then ran at normal priority, taking CPU from the load it traced",
                    c.behind,
                    c.spool_peak >> 20
                )
            });
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
            r.notes.extend(behind);
            Ok(r)
        }
    }
}

/// Open `--input`: a regular file (anything else is refused before it is
/// read: a FIFO would block, a directory or device is no saved trace), or
/// stdin (`-`) spooled to an unnamed temporary file, since the file is
/// read twice ([`feed::Coverage`], then the analysis).
fn open_input(path: &Path) -> Result<std::fs::File> {
    use std::io::Seek;
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    if path == Path::new("-") {
        let mut spool = tempfile::tempfile().context("creating a temporary file for stdin")?;
        std::io::copy(&mut std::io::stdin().lock(), &mut spool).context("reading stdin")?;
        spool.rewind()?;
        return Ok(spool);
    }
    let fix = "give a saved trace file (tracefs trace/trace_pipe text or blkparse output), or - for stdin";
    // O_NONBLOCK: opening a FIFO must not wait for a writer; the type is
    // checked on what was opened, not on a name that could change since.
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| Fix::new(format!("cannot open --input {}: {e}", path.display()), fix))?;
    let t = f
        .metadata()
        .map_err(|e| Fix::new(format!("cannot stat --input {}: {e}", path.display()), fix))?
        .file_type();
    if !t.is_file() {
        let what = if t.is_dir() {
            "a directory"
        } else if t.is_fifo() {
            "a FIFO"
        } else if t.is_socket() {
            "a socket"
        } else if t.is_char_device() || t.is_block_device() {
            "a device"
        } else {
            "not a regular file"
        };
        return Err(Fix::new(
            format!("--input {} is {what}, not a saved trace", path.display()),
            "save the trace to a file first (cat /sys/kernel/tracing/trace > saved.trace) and give that file, or pipe it to --input -",
        )
        .into());
    }
    Ok(f)
}

/// Analyse a saved trace (`-` is stdin).
pub fn from_file(path: &Path) -> Result<TraceReport> {
    use std::io::Seek;
    let mut f = open_input(path)?;
    let read_err = || format!("reading {}", path.display());
    let coverage =
        feed::Coverage::scan(&mut std::io::BufReader::new(&mut f)).with_context(read_err)?;
    f.rewind().with_context(read_err)?;
    let mut feeder = Feeder::default();
    let cut = coverage.window_start();
    if let Some((start, _)) = cut {
        feeder.analyzer.set_window_start(start);
    }
    feeder.read_all(&mut f).with_context(read_err)?;
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
    let analysis = feeder.analyzer.finish();
    let window = cut.map(|(start, cpu)| {
        let earliest = coverage.earliest().unwrap_or(start);
        report::Window {
            start_s: start as f64 / 1e9,
            last_cpu: cpu,
            dropped_s: start.saturating_sub(earliest) as f64 / 1e9,
            events_dropped: analysis.before_window,
            overwritten: coverage.overwritten(),
        }
    });
    let mut r = build(analysis, lines, source, Vec::new());
    if let Some(w) = &window {
        r.notes.insert(
            0,
            format!(
                "the trace's per-CPU buffers had overwritten {} older events, so each CPU's events begin at a different time: only the window every CPU covers is analysed, from {:.6} s (CPU {}'s first event); the {:.3} s before it ({} events) were dropped, since bios queued then may have lost their completions",
                w.overwritten, w.start_s, w.last_cpu, w.dropped_s, w.events_dropped
            ),
        );
    }
    r.window = window;
    Ok(r)
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
    for d in &a.devices {
        for (dir, s) in &d.dirs {
            if let Some(w) = accounting(s) {
                let w = format!("{} {}: {w}", d.dev, dir.label());
                crate::output::warn(w.clone());
                notes.push(w);
            }
        }
    }
    for d in &devices {
        let (n, of) = (d.all.requests_issued_without_insert, d.all.requests_issued);
        if n > 0 {
            notes.push(format!(
                "{}: {n} of {of} requests were issued with no insert event (scheduler none, or a flush, issued directly): they have no I2D; their Q2C is Q2G + G2D + D2C",
                d.device
            ));
        }
        if d.unmatched.out_of_range > 0 {
            notes.push(format!(
                "{}: {} events with a sector range past 2⁶⁴ were skipped",
                d.device, d.unmatched.out_of_range
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
            "{} lines were of neither format, or held impossible values (a sector range past 2⁶⁴, a time past 2⁶⁴ ns), and were skipped",
            lines.unparsed
        ));
    }
    TraceReport {
        source,
        window: None,
        lines,
        events: a.events,
        span_s: a.span_ns as f64 / 1e9,
        devices,
        iostat,
        notes,
    }
}

/// How far the summed intervals may be from the summed Q2C before the
/// figures are called inconsistent, percent: each bio's intervals add up
/// to its Q2C, so only bios cut by the trace's ends (a few, in a trace of
/// many) move the sums apart.
pub const ACCOUNTING_TOLERANCE_PCT: f64 = 10.0;

/// Do the intervals of one direction add up? `None` when they do; else
/// why the figures cannot be trusted. Also checks D2C against Q2C: a
/// bio's device time is part of its whole time, so no summary of D2C can
/// exceed Q2C's.
fn accounting(s: &analysis::DirStats) -> Option<String> {
    let mut why = Vec::new();
    if let Some(e) = s.explained_pct() {
        if (e - 100.0).abs() > ACCOUNTING_TOLERANCE_PCT {
            why.push(format!(
                "the intervals (Q2G+G2I+I2D+D2C, or Q2M+M2D+D2C for merged bios) add up to {e:.1}% of Q2C, not 100% ± {ACCOUNTING_TOLERANCE_PCT}%"
            ));
        }
    }
    if let (Some(d), Some(q)) = (s.t.d2c.summary(), s.t.q2c.summary()) {
        let over: Vec<&str> = [
            ("avg", d.avg_ns > q.avg_ns),
            ("p50", d.p50_ns > q.p50_ns),
            ("p95", d.p95_ns > q.p95_ns),
            ("p99", d.p99_ns > q.p99_ns),
            ("max", d.max_ns > q.max_ns),
        ]
        .iter()
        .filter(|(_, x)| *x)
        .map(|(k, _)| *k)
        .collect();
        if !over.is_empty() {
            why.push(format!("D2C exceeds Q2C ({})", over.join(", ")));
        }
    }
    if why.is_empty() {
        return None;
    }
    Some(format!(
        "{}: events are missing or were matched to the wrong bio; do not trust these figures",
        why.join("; ")
    ))
}

/// The whole disks to trace: those under PATH that have a request queue
/// (the ones the block tracepoints report), or the ones named.
pub fn resolve_targets(host: &Host, path: Option<&Path>, names: &[String]) -> Result<Vec<Target>> {
    let names: Vec<String> = match path {
        Some(p) => {
            let abs = std::path::absolute(p)
                .map_err(|e| Fix::new(format!("{}: {e}", p.display()), "give an existing path"))?;
            // As probe: a missing path is refused, not traced as its
            // parent's filesystem.
            std::fs::metadata(host.path(&abs)).map_err(|e| {
                Fix::new(
                    format!("PATH {} cannot be traced: {e}", p.display()),
                    "give an existing file or directory, e.g. the MySQL datadir",
                )
            })?;
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
