//! Running a workload: worker threads, the event loop with sysbench's
//! retry/reconnect rules, interval reports and server status samples.

use super::hist::{percentile, Histogram};
use super::rand::{Rand, Unique};
use super::result::{Fairness, Interval, Latency, OltpResult, QueryCounts};
use super::status::{self, Sample};
use super::workload::{Counters, EventError, Session};
use super::OltpOptions;
use crate::db::ConnSpec;
use anyhow::Result;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

struct Shared {
    counters: Counters,
    hist_total: Histogram,
    hist_interval: Histogram,
    min_ns: AtomicU64,
    max_ns: AtomicU64,
    started: AtomicU64,
    /// When the latest event completed, ns after `base`: a run cut short
    /// ends there (not after the failed reconnects that followed).
    last_done_ns: AtomicU64,
    base: Instant,
    stop: AtomicBool,
    running: AtomicUsize,
    fatal: Mutex<Option<anyhow::Error>>,
}

impl Shared {
    /// sysbench's `sb_more_events`: a global budget of events handed out.
    fn more_events(&self, opts: &OltpOptions, deadline: Option<Instant>) -> bool {
        if self.stop.load(Ordering::Relaxed) {
            return false;
        }
        if let Some(d) = deadline {
            if Instant::now() >= d {
                return false;
            }
        }
        if opts.events > 0 && self.started.fetch_add(1, Ordering::Relaxed) >= opts.events {
            return false;
        }
        true
    }

    fn fail(&self, e: anyhow::Error) {
        self.stop.store(true, Ordering::Relaxed);
        let mut f = self.fatal.lock().unwrap_or_else(|p| p.into_inner());
        if f.is_none() {
            *f = Some(e);
        }
    }
}

/// A run cut short by an error (the server gone, a statement failed):
/// what it had measured until then (`partial`, its `error` set) travels
/// with the error, for a caller that keeps partial results (`innotune oltp
/// run`); the others see only the error.
#[derive(Debug)]
pub struct RunFailed {
    pub partial: Box<OltpResult>,
    error: anyhow::Error,
}

impl RunFailed {
    /// `error`, carrying `partial` (whose `error` is set to it).
    pub fn wrap(mut partial: Box<OltpResult>, error: anyhow::Error) -> anyhow::Error {
        partial.error = Some(crate::error::one_line(&error));
        anyhow::Error::new(RunFailed { partial, error })
    }
}

impl std::fmt::Display for RunFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The whole chain: this error has no source of its own.
        write!(f, "{:#}", self.error)
    }
}

impl std::error::Error for RunFailed {}

struct ThreadStats {
    events: u64,
    exec_secs: f64,
}

fn seed_from_time() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
}

/// Take a status sample; a failed one (the connection's statement timeout,
/// a lost connection) ends sampling for the run with a warning, so a
/// stalled server costs one timeout, not one per interval.
fn sample_into(conn: &mut Option<mysql::Conn>, samples: &mut Vec<Sample>, t: f64) {
    if let Some(c) = conn.as_mut() {
        match status::sample(c, t) {
            Ok(s) => samples.push(s),
            Err(e) => {
                crate::output::warn(format!(
                    "SHOW GLOBAL STATUS failed at {t:.0} s, no more server samples this run: {}",
                    crate::error::one_line(&e)
                ));
                *conn = None;
            }
        }
    }
}

/// Run one workload at `opts.threads` threads. `on_interval` gets each
/// intermediate report (every `opts.report_interval` seconds).
pub fn run(
    spec: &ConnSpec,
    opts: &OltpOptions,
    on_interval: &mut dyn FnMut(&Interval),
) -> Result<OltpResult> {
    if opts.events == 0 && opts.time.map_or(true, |t| t.is_zero()) {
        anyhow::bail!(crate::error::Fix::new(
            "no time limit and no event limit: the run would never end",
            "set OltpOptions::time or ::events (--time / --events)"
        ));
    }
    let threads = opts.threads.max(1);
    let seed = if opts.rand_seed == 0 {
        seed_from_time()
    } else {
        opts.rand_seed
    };
    let spec_db = spec.clone().with_db(Some(&opts.db));
    let unique = Unique::new(seed);
    let shared = Shared {
        counters: Counters::default(),
        hist_total: Histogram::default(),
        hist_interval: Histogram::default(),
        min_ns: AtomicU64::new(u64::MAX),
        max_ns: AtomicU64::new(0),
        started: AtomicU64::new(0),
        last_done_ns: AtomicU64::new(0),
        base: Instant::now(),
        stop: AtomicBool::new(false),
        running: AtomicUsize::new(threads as usize),
        fatal: Mutex::new(None),
    };
    // The status connection is opened before the workers so a server that
    // refuses SHOW GLOBAL STATUS costs a warning, not the run.
    let mut status_conn = spec.connect().ok();
    let barrier = Barrier::new(threads as usize + 1);
    let mut samples: Vec<Sample> = Vec::new();
    let mut intervals = Vec::new();
    let mut start = Instant::now();
    let mut started_at = std::time::SystemTime::now();

    let per_thread: Vec<ThreadStats> = std::thread::scope(|s| -> Result<Vec<ThreadStats>> {
        let mut handles = Vec::new();
        for tid in 0..threads {
            let (shared, spec_db, unique, barrier) = (&shared, &spec_db, &unique, &barrier);
            handles.push(s.spawn(move || {
                let rng = Rand::new(
                    &opts.rand,
                    seed.wrapping_add((tid as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
                );
                let sess = Session::open(spec_db, opts, &shared.counters, unique, rng);
                barrier.wait();
                let mut st = ThreadStats {
                    events: 0,
                    exec_secs: 0.0,
                };
                let mut sess = match sess {
                    Ok(s) => s,
                    Err(e) => {
                        shared.fail(e);
                        shared.running.fetch_sub(1, Ordering::Relaxed);
                        return st;
                    }
                };
                // The deadline starts after the barrier.
                let deadline = opts
                    .time
                    .filter(|t| !t.is_zero())
                    .map(|t| Instant::now() + t);
                // A statement may still be answered after the deadline
                // (sysbench waits for the events in flight), but not
                // forever: a stalled server ends the run with an error.
                let stall = opts.stall_timeout;
                match deadline {
                    Some(d) => sess.set_wait_limits(
                        Some(d + stall),
                        None,
                        format!(
                            "the run's end plus {} s (--stall-timeout)",
                            stall.as_secs_f64()
                        ),
                    ),
                    None => sess.set_wait_limits(
                        None,
                        Some(stall),
                        format!("{} s (--stall-timeout)", stall.as_secs_f64()),
                    ),
                }
                while shared.more_events(opts, deadline) {
                    let t0 = Instant::now();
                    loop {
                        match sess.event() {
                            Ok(()) => break,
                            Err(EventError::Retry) => {
                                shared.counters.errors.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(EventError::Reconnect) => {
                                shared.counters.reconnects.fetch_add(1, Ordering::Relaxed);
                                if let Err(e) = sess.reconnect() {
                                    shared.fail(e.context("reconnecting after a lost connection"));
                                    break;
                                }
                            }
                            Err(EventError::Fatal(e)) => {
                                shared.fail(e);
                                break;
                            }
                        }
                        if shared.stop.load(Ordering::Relaxed) {
                            break;
                        }
                    }
                    // `stop` is only set by a fatal error: the event did not complete.
                    if shared.stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let dt = t0.elapsed();
                    let ns = dt.as_nanos() as u64;
                    let ms = ns as f64 / 1e6;
                    shared.hist_total.record(ms);
                    shared.hist_interval.record(ms);
                    shared.min_ns.fetch_min(ns, Ordering::Relaxed);
                    shared.max_ns.fetch_max(ns, Ordering::Relaxed);
                    shared.counters.events.fetch_add(1, Ordering::Relaxed);
                    shared
                        .last_done_ns
                        .fetch_max(shared.base.elapsed().as_nanos() as u64, Ordering::Relaxed);
                    st.events += 1;
                    st.exec_secs += dt.as_secs_f64();
                }
                sess.close();
                shared.running.fetch_sub(1, Ordering::Relaxed);
                st
            }));
        }
        barrier.wait();
        start = Instant::now();
        started_at = std::time::SystemTime::now();
        if let Some(c) = status_conn.as_mut() {
            match status::sample(c, 0.0) {
                Ok(smp) => samples.push(smp),
                Err(e) => {
                    crate::output::warn(format!(
                        "SHOW GLOBAL STATUS failed, no server metrics: {e}"
                    ));
                    status_conn = None;
                }
            }
        }
        let tick = (opts.report_interval > 0).then(|| Duration::from_secs(opts.report_interval));
        let mut next = tick.map(|t| start + t);
        let c = &shared.counters;
        let mut last = (0u64, 0u64, 0u64, 0u64, 0u64, 0u64);
        let mut last_t = start;
        // Without --report-interval the server is still sampled every
        // 10 s, so gauges such as pending I/O are seen during the run.
        let status_every = tick.unwrap_or(Duration::from_secs(10));
        let mut next_status = start + status_every;
        loop {
            std::thread::sleep(Duration::from_millis(20));
            // Checked before the tick so that a tick falling due as the
            // workers stop at --time is still reported (sysbench prints
            // `[ 10s ]` for a 10 s run), then the loop ends.
            let done = shared.running.load(Ordering::Relaxed) == 0;
            if tick.is_none() && Instant::now() >= next_status {
                sample_into(
                    &mut status_conn,
                    &mut samples,
                    start.elapsed().as_secs_f64(),
                );
                next_status += status_every;
            }
            if let (Some(n), Some(t)) = (next, tick) {
                let now = Instant::now();
                if now >= n {
                    let cur = (
                        c.events.load(Ordering::Relaxed),
                        c.read.load(Ordering::Relaxed),
                        c.write.load(Ordering::Relaxed),
                        c.other.load(Ordering::Relaxed),
                        c.errors.load(Ordering::Relaxed),
                        c.reconnects.load(Ordering::Relaxed),
                    );
                    let secs = now.duration_since(last_t).as_secs_f64();
                    let counts = shared.hist_interval.snapshot(true);
                    let iv = Interval {
                        t: (now - start).as_secs_f64(),
                        threads: if done {
                            threads
                        } else {
                            shared.running.load(Ordering::Relaxed) as u32
                        },
                        tps: (cur.0 - last.0) as f64 / secs,
                        qps: ((cur.1 + cur.2 + cur.3) - (last.1 + last.2 + last.3)) as f64 / secs,
                        read_qps: (cur.1 - last.1) as f64 / secs,
                        write_qps: (cur.2 - last.2) as f64 / secs,
                        other_qps: (cur.3 - last.3) as f64 / secs,
                        latency_pct_ms: (opts.percentile > 0)
                            .then(|| percentile(&counts, opts.percentile as f64)),
                        errors_per_sec: (cur.4 - last.4) as f64 / secs,
                        reconnects_per_sec: (cur.5 - last.5) as f64 / secs,
                    };
                    on_interval(&iv);
                    intervals.push(iv);
                    sample_into(&mut status_conn, &mut samples, (now - start).as_secs_f64());
                    next_status = now + status_every;
                    last = cur;
                    last_t = now;
                    next = Some(n + t);
                }
            }
            if done {
                break;
            }
        }
        Ok(handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or(ThreadStats {
                    events: 0,
                    exec_secs: 0.0,
                })
            })
            .collect())
    })?;
    let mut total = start.elapsed().as_secs_f64();
    sample_into(&mut status_conn, &mut samples, total);
    let fatal = shared
        .fatal
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take();
    if fatal.is_some() {
        // Cut short: the figures cover the run until its last event.
        let began = start.saturating_duration_since(shared.base);
        let last = Duration::from_nanos(shared.last_done_ns.load(Ordering::Relaxed));
        total = last.saturating_sub(began).as_secs_f64();
    }

    let c = &shared.counters;
    let (read, write, other) = (
        c.read.load(Ordering::Relaxed),
        c.write.load(Ordering::Relaxed),
        c.other.load(Ordering::Relaxed),
    );
    let events = c.events.load(Ordering::Relaxed);
    let counts = shared.hist_total.snapshot(false);
    let sum_ms: f64 = per_thread.iter().map(|t| t.exec_secs * 1000.0).sum();
    let mut percentiles = BTreeMap::new();
    for p in [50u8, 95, 99] {
        percentiles.insert(p.to_string(), percentile(&counts, p as f64));
    }
    let n = per_thread.len().max(1) as f64;
    let ev_avg = per_thread.iter().map(|t| t.events as f64).sum::<f64>() / n;
    let ex_avg = per_thread.iter().map(|t| t.exec_secs).sum::<f64>() / n;
    let sd = |f: &dyn Fn(&ThreadStats) -> f64, avg: f64| {
        (per_thread.iter().map(|t| (f(t) - avg).powi(2)).sum::<f64>() / n).sqrt()
    };
    let per = |x: u64| if total > 0.0 { x as f64 / total } else { 0.0 };
    let errors = c.errors.load(Ordering::Relaxed);
    let reconnects = c.reconnects.load(Ordering::Relaxed);
    let result = OltpResult {
        workload: opts.workload.name().to_string(),
        threads,
        started_at: humantime::format_rfc3339_millis(started_at).to_string(),
        rand_seed: seed,
        queries: QueryCounts {
            read,
            write,
            other,
            total: read + write + other,
        },
        transactions: events,
        tps: per(events),
        qps: per(read + write + other),
        ignored_errors: errors,
        errors_per_sec: per(errors),
        reconnects,
        reconnects_per_sec: per(reconnects),
        total_time_s: total,
        events,
        latency_ms: Latency {
            min: if events > 0 {
                shared.min_ns.load(Ordering::Relaxed) as f64 / 1e6
            } else {
                0.0
            },
            avg: if events > 0 {
                sum_ms / events as f64
            } else {
                0.0
            },
            max: shared.max_ns.load(Ordering::Relaxed) as f64 / 1e6,
            percentile: opts.percentile,
            percentile_value: (opts.percentile > 0)
                .then(|| percentile(&counts, opts.percentile as f64)),
            sum: sum_ms,
            percentiles,
        },
        fairness: Fairness {
            events_avg: ev_avg,
            events_stddev: sd(&|t| t.events as f64, ev_avg),
            exec_time_avg: ex_avg,
            exec_time_stddev: sd(&|t| t.exec_secs, ex_avg),
        },
        intervals,
        server: status::derive(&samples),
        status_samples: samples,
        hist_counts: counts,
        histogram: None,
        error: None,
    };
    match fatal {
        Some(e) => Err(RunFailed::wrap(Box::new(result), e)),
        None => Ok(result),
    }
}
