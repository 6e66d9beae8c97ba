//! The job loop: threads, ramp exclusion, stop rules, syncs, time series and
//! CPU accounting. Engines do the I/O; this file decides what to do next and
//! what counts.
//!
//! Hot-path rules (the target is fio's CPU per I/O): no allocation, no lock
//! and no shared write per I/O. Each thread owns its histograms, counters and
//! buffers; the only shared state it touches per I/O is a relaxed load of the
//! stop flag and, with a progress line, relaxed stores to its own padded
//! counters. Timestamps are `Instant` (CLOCK_MONOTONIC via the vDSO, no
//! system call); an asynchronous batch shares one submission and one
//! completion timestamp, as fio's io_u batches do.

use super::engine::{sync::SyncEngine, uring::UringEngine, Buffers, Engine, Fds, Io, Op};
use super::files::{io_fix, JobFiles};
use super::job::{EngineKind, JobSpec};
use super::result::*;
use crate::error::Fix;
use anyhow::{anyhow, Result};
use hdrhistogram::Histogram;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::ffi::CString;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

/// Latencies up to 100 s at 3 significant digits (0.1% bucket error, finer
/// than fio's 1/128).
fn new_hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 100_000_000_000, 3).expect("static histogram bounds")
}

/// What one run needs besides the jobs.
pub struct Window {
    /// Time-based window; `None` = stop on `io_size`.
    pub runtime: Option<Duration>,
    pub ramp: Duration,
    pub progress: bool,
    /// Set from outside (Ctrl-C) to end the run early, keeping results.
    pub interrupt: Option<Arc<AtomicBool>>,
}

/// Per-thread live counters for the progress line, one cache line each so
/// threads never share a line.
#[repr(align(128))]
#[derive(Default)]
struct Live {
    ios: AtomicU64,
    bytes: AtomicU64,
}

struct Shared {
    stop: AtomicBool,
    interrupt: Option<Arc<AtomicBool>>,
    barrier: Barrier,
    live: Vec<Live>,
    /// Per job, latencies so far for the progress line's p99 (threads add
    /// their recent samples a few times a second).
    live_hist: Vec<Mutex<Histogram<u64>>>,
}

impl Shared {
    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
            || self
                .interrupt
                .as_ref()
                .is_some_and(|f| f.load(Ordering::Relaxed))
    }
}

struct ThreadOut {
    hist: [Histogram<u64>; 2],
    sync: Histogram<u64>,
    runtime: Duration,
    user_ns: u64,
    sys_ns: u64,
    series: Vec<[u64; 4]>,
}

/// Where the next I/O goes: uniform block-aligned random offsets from a
/// per-thread SmallRng (fio's `norandommap`: blocks drawn with replacement;
/// fio's default random map visits each block once per pass, which matters
/// only for runs shorter than one pass over the files), or sequential from a
/// per-thread start point, wrapping.
struct OffsetGen {
    rng: SmallRng,
    random: bool,
    read_pct: u32,
    nfiles: usize,
    blocks_per_file: u64,
    bs: u64,
    pos: u64,
}

impl OffsetGen {
    #[inline]
    fn next(&mut self) -> (Op, usize, u64) {
        let op = match self.read_pct {
            100 => Op::Read,
            0 => Op::Write,
            p => {
                if self.rng.gen_range(0..100) < p {
                    Op::Read
                } else {
                    Op::Write
                }
            }
        };
        let (file, block) = if self.random {
            let f = if self.nfiles > 1 {
                self.rng.gen_range(0..self.nfiles)
            } else {
                0
            };
            (f, self.rng.gen_range(0..self.blocks_per_file))
        } else {
            let total = self.blocks_per_file * self.nfiles as u64;
            let b = self.pos;
            self.pos = (self.pos + 1) % total;
            (
                (b / self.blocks_per_file) as usize,
                b % self.blocks_per_file,
            )
        };
        (op, file, block * self.bs)
    }
}

fn thread_cpu_ns() -> (u64, u64) {
    // SAFETY: getrusage writes into the struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    (ns(ru.ru_utime), ns(ru.ru_stime))
}

fn open_fds(job: &JobSpec, files: &JobFiles) -> Result<Fds> {
    let writes = job.rw.writes(job.rwmixread);
    let mut flags = if writes { libc::O_RDWR } else { libc::O_RDONLY } | libc::O_CLOEXEC;
    if job.direct {
        flags |= libc::O_DIRECT;
    }
    if job.sync {
        flags |= libc::O_DSYNC;
    }
    let mut fds = Fds(Vec::with_capacity(files.paths.len()));
    for p in &files.paths {
        let c = CString::new(p.as_os_str().as_bytes())?;
        // SAFETY: c is a valid NUL-terminated path.
        let fd = unsafe { libc::open(c.as_ptr(), flags) };
        if fd < 0 {
            let e = std::io::Error::last_os_error();
            let doing = if job.direct {
                "open with O_DIRECT"
            } else {
                "open"
            };
            return Err(io_fix(e, p, doing));
        }
        fds.0.push(fd);
    }
    Ok(fds)
}

/// Everything a worker thread needs, prepared (and fallible) before any
/// thread starts, so a bad file never leaves threads waiting on a barrier.
struct ThreadPlan {
    job: usize,
    thread: usize,
    fds: Fds,
    engine: Box<dyn Engine + Send>,
    gen: OffsetGen,
    bs: u64,
    depth: usize,
    sync_every: u64,
    fdatasync: bool,
    io_size: Option<u64>,
    direct: bool,
}

/// Run all jobs together and merge each job's threads.
pub fn run(jobs: &[JobSpec], files: &[JobFiles], win: &Window) -> Result<WorkloadResult> {
    let mut plans = Vec::new();
    let mut engines_used = Vec::new();
    for (ji, (job, jf)) in jobs.iter().zip(files).enumerate() {
        let kind = job.engine();
        engines_used.push(kind);
        if !jf.raw && !job.direct {
            // fio's invalidate=1: start buffered jobs with a cold page cache.
            for p in &jf.paths {
                if let Ok(f) = std::fs::File::open(p) {
                    use std::os::fd::AsRawFd;
                    // SAFETY: plain advice on an fd we own.
                    unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
                }
            }
        }
        let blocks_per_file = jf.file_size / job.bs;
        let total_blocks = blocks_per_file * jf.paths.len() as u64;
        for t in 0..job.numjobs as usize {
            let fds = open_fds(job, jf)?;
            let depth = match kind {
                EngineKind::IoUring => job.iodepth as usize,
                _ => 1,
            };
            let bufs = Buffers::new(job.bs as usize, depth);
            let engine: Box<dyn Engine + Send> = match kind {
                EngineKind::IoUring => Box::new(UringEngine::new(fds.0.clone(), bufs)?),
                _ => Box::new(SyncEngine::new(fds.0.clone(), bufs)),
            };
            plans.push(ThreadPlan {
                job: ji,
                thread: t,
                fds,
                engine,
                gen: OffsetGen {
                    // Same sequence on every run (fio's randrepeat=1), distinct per thread.
                    rng: SmallRng::seed_from_u64(seed(ji, t)),
                    random: job.rw.is_random(),
                    read_pct: job.rw.read_pct(job.rwmixread),
                    nfiles: jf.paths.len(),
                    blocks_per_file,
                    bs: job.bs,
                    pos: total_blocks * t as u64 / job.numjobs as u64,
                },
                bs: job.bs,
                depth,
                sync_every: job.fsync.max(job.fdatasync),
                fdatasync: job.fdatasync > 0,
                io_size: if win.runtime.is_some() {
                    None
                } else {
                    Some(
                        job.io_size
                            .unwrap_or(jf.file_size * jf.paths.len() as u64 / job.numjobs as u64)
                            .max(job.bs),
                    )
                },
                direct: job.direct,
            });
        }
    }

    let shared = Shared {
        stop: AtomicBool::new(false),
        interrupt: win.interrupt.clone(),
        barrier: Barrier::new(plans.len() + 1),
        live: (0..plans.len()).map(|_| Live::default()).collect(),
        live_hist: jobs.iter().map(|_| Mutex::new(new_hist())).collect(),
    };
    let thread_jobs: Vec<usize> = plans.iter().map(|p| p.job).collect();

    let outs: Vec<Result<ThreadOut>> = std::thread::scope(|s| {
        let handles: Vec<_> = plans
            .into_iter()
            .enumerate()
            .map(|(i, plan)| {
                let shared = &shared;
                std::thread::Builder::new()
                    .name(format!("bench-{}-{}", plan.job, plan.thread))
                    .spawn_scoped(s, move || {
                        let r = worker(i, plan, shared, win);
                        if r.is_err() {
                            shared.stop.store(true, Ordering::Relaxed);
                        }
                        r
                    })
                    .expect("spawn bench thread")
            })
            .collect();
        shared.barrier.wait();
        let t0 = Instant::now();
        if win.progress {
            progress_loop(&handles, &shared, jobs, &thread_jobs, win, t0);
        }
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow!("a bench thread panicked")))
            })
            .collect()
    });

    let mut per_job: Vec<Vec<ThreadOut>> = jobs.iter().map(|_| Vec::new()).collect();
    for (o, &j) in outs.into_iter().zip(&thread_jobs) {
        per_job[j].push(o?);
    }
    let interrupted = win
        .interrupt
        .as_ref()
        .is_some_and(|f| f.load(Ordering::Relaxed));
    let jobs_out = jobs
        .iter()
        .zip(files)
        .zip(per_job)
        .zip(engines_used)
        .map(|(((job, jf), outs), kind)| merge(job, jf, kind, outs))
        .collect();
    Ok(WorkloadResult {
        name: String::new(),
        jobs: jobs_out,
        ramp_ms: win.ramp.as_millis() as u64,
        time_based: win.runtime.is_some(),
        interrupted,
    })
}

fn seed(job: usize, thread: usize) -> u64 {
    0x1a2b_3c4d_5e6f_7081 ^ ((job as u64) << 32) ^ thread as u64
}

/// Per-thread mutable state of the job loop.
struct State {
    hist: [Histogram<u64>; 2],
    /// Recent samples not yet shown on the progress line.
    recent: Option<Histogram<u64>>,
    sync: Histogram<u64>,
    series: Vec<[u64; 4]>,
    measure_start: Instant,
    end: Option<Instant>,
    issuing: bool,
    last_done: Instant,
    /// Including the ramp, for the progress line only.
    all_ios: u64,
    bs: u64,
    err: Option<anyhow::Error>,
    direct: bool,
}

impl State {
    #[inline]
    fn complete(&mut self, op: Op, start: Instant, res: i64, done: Instant) {
        self.all_ios += 1;
        if res != self.bs as i64 {
            if self.err.is_none() {
                self.err = Some(io_error(res, op, self.bs, self.direct));
            }
            self.issuing = false;
            return;
        }
        if done >= self.measure_start && self.end.map_or(true, |e| done <= e) {
            let lat = done.saturating_duration_since(start).as_nanos() as u64;
            let d = op as usize;
            self.hist[d].saturating_record(lat.max(1));
            if let Some(r) = &mut self.recent {
                r.saturating_record(lat.max(1));
            }
            let sec = (done - self.measure_start).as_secs() as usize;
            if sec >= self.series.len() {
                self.series.resize(sec + 1, [0; 4]);
            }
            self.series[sec][d * 2] += 1;
            self.series[sec][d * 2 + 1] += self.bs;
            self.last_done = done;
        }
        if self.end.is_some_and(|e| done >= e) {
            self.issuing = false;
        }
    }
}

fn io_error(res: i64, op: Op, bs: u64, direct: bool) -> anyhow::Error {
    let what = if op == Op::Read { "read" } else { "write" };
    if res >= 0 {
        return anyhow!("short {what}: {res} of {bs} bytes (file changed under the run?)");
    }
    let errno = (-res) as i32;
    if errno == libc::EINVAL && direct {
        return Fix::new(
            format!("the kernel refused an O_DIRECT {what} of {bs} bytes (EINVAL)"),
            "use a --bs that is a multiple of the device's logical block size, or --direct=0",
        )
        .into();
    }
    if errno == libc::ENOSPC {
        return Fix::new(
            format!("no space left during a {what}"),
            "free space or lower --size",
        )
        .into();
    }
    anyhow!(
        "{what} failed: {}",
        std::io::Error::from_raw_os_error(errno)
    )
}

fn worker(idx: usize, mut plan: ThreadPlan, shared: &Shared, win: &Window) -> Result<ThreadOut> {
    let started = plan.engine.start();
    shared.barrier.wait();
    started?;
    let t0 = Instant::now();
    let measure_start = t0 + win.ramp;
    let mut st = State {
        hist: [new_hist(), new_hist()],
        recent: win.progress.then(new_hist),
        sync: new_hist(),
        series: Vec::with_capacity(win.runtime.map_or(64, |r| r.as_secs() as usize + 2)),
        measure_start,
        end: win.runtime.map(|r| measure_start + r),
        issuing: true,
        last_done: measure_start,
        all_ios: 0,
        bs: plan.bs,
        err: None,
        direct: plan.direct,
    };
    let depth = plan.depth;
    let mut free: Vec<usize> = (0..depth).rev().collect();
    let mut slot_start = vec![t0; depth];
    let mut slot_op = vec![Op::Read; depth];
    let mut inflight = 0usize;
    let mut cpu0: Option<(u64, u64)> = win.ramp.is_zero().then(thread_cpu_ns);
    let mut issued_measured = 0u64;
    let mut writes_since_sync = 0u64;
    let mut dirty = vec![false; plan.fds.0.len()];
    let mut need_sync = false;
    let mut next_flush = t0 + Duration::from_millis(250);
    let live = &shared.live[idx];
    let fds: Vec<RawFd> = plan.fds.0.clone();

    let mut now = t0;
    loop {
        if st.issuing && shared.stopping() {
            st.issuing = false;
        }
        if cpu0.is_none() && now >= measure_start {
            cpu0 = Some(thread_cpu_ns());
            now = Instant::now();
        }
        if st.issuing && !need_sync {
            while let Some(slot) = free.pop() {
                let (op, file, offset) = plan.gen.next();
                slot_start[slot] = now;
                slot_op[slot] = op;
                if op == Op::Write {
                    dirty[file] = true;
                    writes_since_sync += 1;
                    if plan.sync_every > 0 && writes_since_sync >= plan.sync_every {
                        need_sync = true;
                    }
                }
                if let Some(limit) = plan.io_size {
                    if now >= measure_start {
                        issued_measured += plan.bs;
                        if issued_measured >= limit {
                            st.issuing = false;
                        }
                    }
                }
                match plan.engine.queue(Io {
                    op,
                    file,
                    offset,
                    slot,
                })? {
                    Some(res) => {
                        // Completed inline (sync engine): its end is the
                        // next I/O's start, one clock read per I/O.
                        let done = Instant::now();
                        st.complete(op, slot_start[slot], res, done);
                        free.push(slot);
                        now = done;
                        if !st.issuing
                            || need_sync
                            || shared.stopping()
                            || (cpu0.is_none() && now >= measure_start)
                            || (win.progress && now >= next_flush)
                        {
                            break;
                        }
                    }
                    None => inflight += 1,
                }
                if !st.issuing || need_sync {
                    break;
                }
            }
        }
        if inflight > 0 {
            let mut t_done: Option<Instant> = None;
            let mut reaped = 0usize;
            plan.engine.reap(1, &mut |slot, res| {
                let t = *t_done.get_or_insert_with(Instant::now);
                st.complete(slot_op[slot], slot_start[slot], res, t);
                free.push(slot);
                reaped += 1;
            })?;
            inflight -= reaped;
            now = t_done.unwrap_or_else(Instant::now);
        }
        if st.err.is_some() {
            // Stop issuing, but let in-flight I/Os finish: the kernel may
            // still write into their buffers, which are freed on return.
            st.issuing = false;
            need_sync = false;
            if inflight == 0 {
                return Err(st.err.take().expect("checked"));
            }
            continue;
        }
        if need_sync && inflight == 0 {
            for (i, d) in dirty.iter_mut().enumerate() {
                if !*d {
                    continue;
                }
                *d = false;
                let s = Instant::now();
                // SAFETY: fd is open for the life of the thread.
                let r = unsafe {
                    if plan.fdatasync {
                        libc::fdatasync(fds[i])
                    } else {
                        libc::fsync(fds[i])
                    }
                };
                let e = Instant::now();
                if r != 0 {
                    let err = std::io::Error::last_os_error();
                    return Err(anyhow!("fsync failed: {err}"));
                }
                if e >= measure_start && st.end.map_or(true, |end| e <= end) {
                    st.sync.saturating_record((e - s).as_nanos().max(1) as u64);
                }
                now = e;
            }
            need_sync = false;
            writes_since_sync = 0;
        }
        if win.progress {
            live.ios.store(st.all_ios, Ordering::Relaxed);
            live.bytes.store(st.all_ios * st.bs, Ordering::Relaxed);
            if now >= next_flush {
                next_flush = now + Duration::from_millis(250);
                if let Some(r) = &mut st.recent {
                    if let Ok(mut h) = shared.live_hist[plan.job].lock() {
                        let _ = h.add(&*r);
                    }
                    r.reset();
                }
                // The next I/O's clock starts after this bookkeeping.
                now = Instant::now();
            }
        }
        if !st.issuing && inflight == 0 && !need_sync {
            break;
        }
    }
    let (u1, s1) = thread_cpu_ns();
    let (u0, s0) = cpu0.unwrap_or((u1, s1));
    let runtime = match st.end {
        Some(e) if !shared.stopping() => e - measure_start,
        _ => st.last_done.saturating_duration_since(measure_start),
    };
    Ok(ThreadOut {
        hist: st.hist,
        sync: st.sync,
        runtime,
        user_ns: u1 - u0,
        sys_ns: s1 - s0,
        series: st.series,
    })
}

fn progress_loop(
    handles: &[std::thread::ScopedJoinHandle<'_, Result<ThreadOut>>],
    shared: &Shared,
    jobs: &[JobSpec],
    thread_jobs: &[usize],
    win: &Window,
    t0: Instant,
) {
    let pb = crate::output::progress::status_line();
    let total = win.ramp + win.runtime.unwrap_or_default();
    let (mut last_ios, mut last_bytes, mut last_t) = (0u64, 0u64, Instant::now());
    while !handles.iter().all(|h| h.is_finished()) {
        std::thread::sleep(Duration::from_millis(250));
        let now = Instant::now();
        if now.duration_since(last_t) < Duration::from_millis(900) {
            continue;
        }
        let mut parts = Vec::new();
        for (j, job) in jobs.iter().enumerate() {
            let (ios, bytes) = thread_jobs
                .iter()
                .enumerate()
                .filter(|(_, &tj)| tj == j)
                .fold((0, 0), |(a, b), (i, _)| {
                    (
                        a + shared.live[i].ios.load(Ordering::Relaxed),
                        b + shared.live[i].bytes.load(Ordering::Relaxed),
                    )
                });
            let p99 = shared.live_hist[j]
                .lock()
                .map(|h| h.value_at_quantile(0.99))
                .unwrap_or(0);
            parts.push((job.name.clone(), ios, bytes, p99));
        }
        let (ios, bytes): (u64, u64) = parts.iter().fold((0, 0), |(a, b), p| (a + p.1, b + p.2));
        let dt = now.duration_since(last_t).as_secs_f64();
        let iops = (ios.saturating_sub(last_ios)) as f64 / dt;
        let mibs = (bytes.saturating_sub(last_bytes)) as f64 / dt / 1048576.0;
        (last_ios, last_bytes, last_t) = (ios, bytes, now);
        let p99s: Vec<String> = parts
            .iter()
            .map(|p| format!("{} p99 {:.0}µs", p.0, p.3 as f64 / 1000.0))
            .collect();
        let elapsed = now.duration_since(t0);
        let phase = if elapsed < win.ramp { "ramp " } else { "" };
        let left = if win.runtime.is_some() {
            format!(
                ", {}s left",
                total.saturating_sub(elapsed).as_secs_f64().ceil() as u64
            )
        } else {
            String::new()
        };
        pb.set_message(format!(
            "{phase}{:.0} IOPS, {:.1} MiB/s, {}{left}",
            iops,
            mibs,
            p99s.join(", ")
        ));
        pb.tick();
    }
    pb.finish_and_clear();
}

fn latency(h: &Histogram<u64>) -> LatencyNs {
    if h.is_empty() {
        return LatencyNs::default();
    }
    const FIO_PCTS: [f64; 17] = [
        1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9,
        99.95, 99.99,
    ];
    LatencyNs {
        min: h.min(),
        mean: h.mean(),
        p50: h.value_at_quantile(0.50),
        p90: h.value_at_quantile(0.90),
        p95: h.value_at_quantile(0.95),
        p99: h.value_at_quantile(0.99),
        p99_9: h.value_at_quantile(0.999),
        max: h.max(),
        n: h.len(),
        stddev: h.stdev(),
        percentile: FIO_PCTS
            .iter()
            .map(|p| (format!("{p:.6}"), h.value_at_quantile(p / 100.0)))
            .collect(),
    }
}

fn merge(job: &JobSpec, jf: &JobFiles, kind: EngineKind, outs: Vec<ThreadOut>) -> JobResult {
    let mut hist = [new_hist(), new_hist()];
    let mut sync = new_hist();
    let mut runtime = Duration::ZERO;
    let (mut user, mut sys) = (0u64, 0u64);
    let mut series: Vec<[u64; 4]> = Vec::new();
    for o in &outs {
        for (h, oh) in hist.iter_mut().zip(&o.hist) {
            let _ = h.add(oh);
        }
        let _ = sync.add(&o.sync);
        runtime = runtime.max(o.runtime);
        user += o.user_ns;
        sys += o.sys_ns;
        if o.series.len() > series.len() {
            series.resize(o.series.len(), [0; 4]);
        }
        for (i, s) in o.series.iter().enumerate() {
            for k in 0..4 {
                series[i][k] += s[k];
            }
        }
    }
    let rt_ms = runtime.as_millis() as u64;
    let secs = runtime.as_secs_f64().max(1e-9);
    let dir = |h: &Histogram<u64>| {
        let ios = h.len();
        let bytes = ios * job.bs;
        DirStats {
            total_ios: ios,
            io_bytes: bytes,
            iops: ios as f64 / secs,
            bw_bytes: bytes as f64 / secs,
            bw: bytes as f64 / secs / 1024.0,
            runtime: rt_ms,
            clat_ns: latency(h),
        }
    };
    let read_pct = job.rw.read_pct(job.rwmixread);
    let total_ios = hist[0].len() + hist[1].len();
    // Only whole seconds are a rate; a partial last second would read low.
    let whole = (runtime.as_secs() as usize).min(series.len());
    JobResult {
        name: job.name.clone(),
        read: (read_pct > 0).then(|| dir(&hist[0])),
        write: (read_pct < 100).then(|| dir(&hist[1])),
        options: job.describe(),
        ioengine: kind.as_str().to_string(),
        runtime_ms: rt_ms,
        sync: (job.fsync > 0 || job.fdatasync > 0).then(|| SyncStats {
            kind: if job.fdatasync > 0 {
                "fdatasync"
            } else {
                "fsync"
            }
            .into(),
            total_ios: sync.len(),
            lat_ns: latency(&sync),
        }),
        cpu: CpuUsage {
            user_ns: user,
            sys_ns: sys,
            usr_cpu: user as f64 / 1e9 / secs * 100.0,
            sys_cpu: sys as f64 / 1e9 / secs * 100.0,
            ns_per_io: if total_ios > 0 {
                (user + sys) as f64 / total_ios as f64
            } else {
                0.0
            },
        },
        series: series[..whole]
            .iter()
            .enumerate()
            .map(|(t, s)| SecondSample {
                t: t as u64,
                read_iops: s[0],
                read_bw_bytes: s[1],
                write_iops: s[2],
                write_bw_bytes: s[3],
            })
            .collect(),
        files: jf.paths.iter().map(|p| p.display().to_string()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_aligned_in_range_and_mixed() {
        let mut g = OffsetGen {
            rng: SmallRng::seed_from_u64(1),
            random: true,
            read_pct: 70,
            nfiles: 3,
            blocks_per_file: 100,
            bs: 16384,
            pos: 0,
        };
        let mut reads = 0;
        for _ in 0..10_000 {
            let (op, f, off) = g.next();
            assert!(f < 3 && off % 16384 == 0 && off < 100 * 16384);
            reads += (op == Op::Read) as u32;
        }
        assert!((6500..7500).contains(&reads), "{reads}");
        let mut s = OffsetGen {
            random: false,
            read_pct: 100,
            pos: 199,
            ..g
        };
        assert_eq!(s.next(), (Op::Read, 1, 99 * 16384));
        assert_eq!(s.next(), (Op::Read, 2, 0));
    }

    #[test]
    fn fio_percentile_keys() {
        let mut h = new_hist();
        for v in 1..=1000u64 {
            h.record(v * 1000).unwrap();
        }
        let l = latency(&h);
        assert!(l.percentile.contains_key("99.900000"));
        assert!(l.percentile.contains_key("50.000000"));
        assert!((l.p50 as f64 - 500_000.0).abs() < 1000.0);
        assert_eq!(l.n, 1000);
    }
}
