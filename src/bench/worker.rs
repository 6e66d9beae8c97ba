//! One job thread's loop: issue, reap, sync, count. The runner
//! ([`super::runner`]) prepares a [`ThreadPlan`] per thread and merges what
//! [`worker`] returns.
//!
//! Hot-path rules (the target is fio's CPU per I/O): no allocation, no lock
//! and no shared write per I/O. Each thread owns its histograms, counters and
//! buffers; the only shared state it touches per I/O is a relaxed load of the
//! stop flag and, with a progress line, relaxed stores to its own padded
//! counters. Timestamps are `Instant` (CLOCK_MONOTONIC via the vDSO, no
//! system call); an asynchronous batch shares one submission and one
//! completion timestamp, as fio's io_u batches do.

use super::engine::{Engine, Fds, Io, Op};
use crate::error::Fix;
use anyhow::{anyhow, Result};
use hdrhistogram::Histogram;
use rand::rngs::SmallRng;
use rand::Rng;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

/// Latencies up to 100 s at 3 significant digits (0.1% bucket error, finer
/// than fio's 1/128).
pub(super) fn new_hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 100_000_000_000, 3).expect("static histogram bounds")
}

/// How often a thread publishes its recent latencies for the progress line.
const FLUSH_EVERY: Duration = Duration::from_millis(250);

/// What one run needs besides the jobs.
pub struct Window {
    /// Time-based window; `None` = stop on `io_size`.
    pub runtime: Option<Duration>,
    pub ramp: Duration,
    pub progress: bool,
    /// Set from outside (Ctrl-C, SIGTERM) to end the run early, keeping results.
    pub interrupt: Option<Arc<AtomicBool>>,
}

/// Per-thread live counters for the progress line, one cache line each so
/// threads never share a line.
#[repr(align(128))]
#[derive(Default)]
pub struct Live {
    pub ios: AtomicU64,
    pub bytes: AtomicU64,
}

/// State every thread of a run shares.
pub(super) struct Shared {
    pub stop: AtomicBool,
    pub interrupt: Option<Arc<AtomicBool>>,
    pub barrier: Barrier,
    pub live: Vec<Live>,
    /// Per job, latencies so far for the progress line's p99 (threads add
    /// their recent samples a few times a second).
    pub live_hist: Vec<Mutex<Histogram<u64>>>,
}

impl Shared {
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
            || self
                .interrupt
                .as_ref()
                .is_some_and(|f| f.load(Ordering::Relaxed))
    }
}

/// What a thread measured.
pub(super) struct ThreadOut {
    pub hist: [Histogram<u64>; 2],
    pub sync: Histogram<u64>,
    pub runtime: Duration,
    pub user_ns: u64,
    pub sys_ns: u64,
    pub series: Vec<[u64; 4]>,
}

/// Where the next I/O goes: uniform block-aligned random offsets from a
/// per-thread SmallRng (fio's `norandommap`: blocks drawn with replacement;
/// fio's default random map visits each block once per pass, which matters
/// only for runs shorter than one pass over the files), or sequential from a
/// per-thread start point, wrapping.
pub(super) struct OffsetGen {
    pub rng: SmallRng,
    pub random: bool,
    pub read_pct: u32,
    pub nfiles: usize,
    pub blocks_per_file: u64,
    pub bs: u64,
    pub pos: u64,
}

impl OffsetGen {
    #[inline]
    pub fn next(&mut self) -> (Op, usize, u64) {
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

/// Everything a worker thread needs, prepared (and fallible) before any
/// thread starts, so a bad file never leaves threads waiting on a barrier.
pub(super) struct ThreadPlan {
    pub job: usize,
    pub thread: usize,
    pub fds: Fds,
    pub engine: Box<dyn Engine + Send>,
    pub gen: OffsetGen,
    pub bs: u64,
    pub depth: usize,
    pub sync_every: u64,
    pub fdatasync: bool,
    pub io_size: Option<u64>,
    pub direct: bool,
}

/// What was measured so far, and the window it counts in.
struct Tally {
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

impl Tally {
    fn in_window(&self, t: Instant) -> bool {
        t >= self.measure_start && self.end.map_or(true, |e| t <= e)
    }

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
        if self.in_window(done) {
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

/// A thread's loop state between steps.
struct Worker<'a> {
    plan: ThreadPlan,
    shared: &'a Shared,
    live: &'a Live,
    progress: bool,
    t: Tally,
    fds: Vec<RawFd>,
    /// Free I/O slots, and the start time and kind of each one in flight.
    free: Vec<usize>,
    slot_start: Vec<Instant>,
    slot_op: Vec<Op>,
    inflight: usize,
    /// CPU times at the start of the measured window, once reached.
    cpu0: Option<(u64, u64)>,
    issued_measured: u64,
    writes_since_sync: u64,
    dirty: Vec<bool>,
    need_sync: bool,
    next_flush: Instant,
    now: Instant,
}

impl Worker<'_> {
    /// Fill free slots with new I/Os (a sync engine completes each inline).
    fn issue(&mut self) -> Result<()> {
        while let Some(slot) = self.free.pop() {
            let (op, file, offset) = self.plan.gen.next();
            self.slot_start[slot] = self.now;
            self.slot_op[slot] = op;
            if op == Op::Write {
                self.dirty[file] = true;
                self.writes_since_sync += 1;
                if self.plan.sync_every > 0 && self.writes_since_sync >= self.plan.sync_every {
                    self.need_sync = true;
                }
            }
            if let Some(limit) = self.plan.io_size {
                if self.now >= self.t.measure_start {
                    self.issued_measured += self.plan.bs;
                    if self.issued_measured >= limit {
                        self.t.issuing = false;
                    }
                }
            }
            let io = Io {
                op,
                file,
                offset,
                slot,
            };
            match self.plan.engine.queue(io)? {
                Some(res) => {
                    // Completed inline (sync engine): its end is the next
                    // I/O's start, one clock read per I/O.
                    let done = Instant::now();
                    self.t.complete(op, self.slot_start[slot], res, done);
                    self.free.push(slot);
                    self.now = done;
                    if self.must_pause() {
                        break;
                    }
                }
                None => self.inflight += 1,
            }
            if !self.t.issuing || self.need_sync {
                break;
            }
        }
        Ok(())
    }

    /// Leave the inline issue loop for bookkeeping the next step must do.
    fn must_pause(&self) -> bool {
        !self.t.issuing
            || self.need_sync
            || self.shared.stopping()
            || (self.cpu0.is_none() && self.now >= self.t.measure_start)
            || (self.progress && self.now >= self.next_flush)
    }

    /// Wait for at least one completion of what is in flight.
    fn reap(&mut self) -> Result<()> {
        let mut t_done: Option<Instant> = None;
        let mut reaped = 0usize;
        let (t, free, slot_op, slot_start) =
            (&mut self.t, &mut self.free, &self.slot_op, &self.slot_start);
        self.plan.engine.reap(1, &mut |slot, res| {
            let at = *t_done.get_or_insert_with(Instant::now);
            t.complete(slot_op[slot], slot_start[slot], res, at);
            free.push(slot);
            reaped += 1;
        })?;
        self.inflight -= reaped;
        self.now = t_done.unwrap_or_else(Instant::now);
        Ok(())
    }

    /// fsync/fdatasync every file written since the last sync.
    fn sync_files(&mut self) -> Result<()> {
        for (i, d) in self.dirty.iter_mut().enumerate() {
            if !*d {
                continue;
            }
            *d = false;
            let s = Instant::now();
            // SAFETY: the fd is open for the life of the thread (self.plan.fds).
            let r = unsafe {
                if self.plan.fdatasync {
                    libc::fdatasync(self.fds[i])
                } else {
                    libc::fsync(self.fds[i])
                }
            };
            let e = Instant::now();
            if r != 0 {
                let err = std::io::Error::last_os_error();
                return Err(anyhow!("fsync failed: {err}"));
            }
            if self.t.in_window(e) {
                self.t
                    .sync
                    .saturating_record((e - s).as_nanos().max(1) as u64);
            }
            self.now = e;
        }
        self.need_sync = false;
        self.writes_since_sync = 0;
        Ok(())
    }

    /// Publish counters (and, every [`FLUSH_EVERY`], recent latencies) for
    /// the progress line.
    fn publish(&mut self) {
        self.live.ios.store(self.t.all_ios, Ordering::Relaxed);
        self.live
            .bytes
            .store(self.t.all_ios * self.t.bs, Ordering::Relaxed);
        if self.now >= self.next_flush {
            self.next_flush = self.now + FLUSH_EVERY;
            if let Some(r) = &mut self.t.recent {
                if let Ok(mut h) = self.shared.live_hist[self.plan.job].lock() {
                    let _ = h.add(&*r);
                }
                r.reset();
            }
            // The next I/O's clock starts after this bookkeeping.
            self.now = Instant::now();
        }
    }

    /// One round: issue, reap, sync, publish. `Ok(false)` when done.
    fn step(&mut self) -> Result<bool> {
        if self.t.issuing && self.shared.stopping() {
            self.t.issuing = false;
        }
        if self.cpu0.is_none() && self.now >= self.t.measure_start {
            self.cpu0 = Some(thread_cpu_ns());
            self.now = Instant::now();
        }
        if self.t.issuing && !self.need_sync {
            self.issue()?;
        }
        if self.inflight > 0 {
            self.reap()?;
        }
        if self.t.err.is_some() {
            // Stop issuing, but let in-flight I/Os finish: the kernel may
            // still write into their buffers, which are freed on return.
            self.t.issuing = false;
            self.need_sync = false;
            if self.inflight == 0 {
                return Err(self.t.err.take().expect("checked"));
            }
            return Ok(true);
        }
        if self.need_sync && self.inflight == 0 {
            self.sync_files()?;
        }
        if self.progress {
            self.publish();
        }
        Ok(self.t.issuing || self.inflight > 0 || self.need_sync)
    }

    fn finish(self) -> ThreadOut {
        let (u1, s1) = thread_cpu_ns();
        let (u0, s0) = self.cpu0.unwrap_or((u1, s1));
        let runtime = match self.t.end {
            Some(e) if !self.shared.stopping() => e - self.t.measure_start,
            _ => self
                .t
                .last_done
                .saturating_duration_since(self.t.measure_start),
        };
        ThreadOut {
            hist: self.t.hist,
            sync: self.t.sync,
            runtime,
            user_ns: u1 - u0,
            sys_ns: s1 - s0,
            series: self.t.series,
        }
    }
}

/// Run one thread's I/O from the barrier to the end of the window (or of
/// its `io_size`, or an interrupt, or the first error).
pub(super) fn worker(
    idx: usize,
    mut plan: ThreadPlan,
    shared: &Shared,
    win: &Window,
) -> Result<ThreadOut> {
    let started = plan.engine.start();
    shared.barrier.wait();
    started?;
    let t0 = Instant::now();
    let measure_start = t0 + win.ramp;
    let depth = plan.depth;
    let fds = plan.fds.raw();
    let t = Tally {
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
    let mut w = Worker {
        dirty: vec![false; fds.len()],
        fds,
        plan,
        shared,
        live: &shared.live[idx],
        progress: win.progress,
        t,
        free: (0..depth).rev().collect(),
        slot_start: vec![t0; depth],
        slot_op: vec![Op::Read; depth],
        inflight: 0,
        cpu0: win.ramp.is_zero().then(thread_cpu_ns),
        issued_measured: 0,
        writes_since_sync: 0,
        need_sync: false,
        next_flush: t0 + FLUSH_EVERY,
        now: t0,
    };
    while w.step()? {}
    Ok(w.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

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
}
