//! Live capture: a private tracefs instance (a journaled
//! [`TraceInstance`]) with the block events btt needs, filtered to the
//! devices, read as the kernel's binary per-CPU pages
//! (`per_cpu/cpuN/trace_pipe_raw`, decoded by [`raw`]) for a duration or
//! until stopped, with /proc/diskstats read at both ends of the same
//! window. Why not `trace_pipe`: its text is formatted by the kernel on the
//! traced workload's CPUs, which cost 12% of the mixed preset's IOPS.

use super::event::Dev;
use super::feed::Feeder;
use super::iostat::Iostat;
use super::raw;
use crate::change::trace_instance::{self, TraceInstance};
use crate::error::Fix;
use crate::host::Host;
use crate::journal::Guard;
use anyhow::{Context, Result};
use std::io::Read;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The events btt's method needs (blkparse's Q, G, I, D, C, M, F).
pub const EVENTS: [&str; 7] = [
    "block/block_bio_queue",
    "block/block_getrq",
    "block/block_rq_insert",
    "block/block_rq_issue",
    "block/block_rq_complete",
    "block/block_bio_backmerge",
    "block/block_bio_frontmerge",
];

/// Per-CPU ring buffer: at 100k IOPS about 5 events of ~60 bytes per I/O
/// arrive per second per CPU in the worst case; 8 MiB holds over a second
/// of that between two reads (read every 100 ms).
pub const BUFFER_KB: u32 = 8192;

/// The instance's trace clock. `local` (the kernel's default, sched_clock:
/// per-CPU, nanoseconds, the cheapest to read) as before with trace_pipe,
/// now named because the raw pages' timestamps are read as nanoseconds
/// and a default changed by a kernel or a boot option must not change
/// their unit.
pub const CLOCK: &str = "local";

/// A device to trace: kernel name and numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub name: String,
    pub dev: Dev,
}

/// `/sys/block/NAME/dev` → the device's numbers.
pub fn target(host: &Host, name: &str) -> Result<Target> {
    let p = format!("/sys/block/{name}/dev");
    let s = host.read_trim(&p).map_err(|e| {
        Fix::new(
            format!("{name} is not a block device here ({p}: {e})"),
            "name a whole disk as /sys/block lists it, e.g. --device vda or --device loop0",
        )
    })?;
    let dev = s
        .split_once(':')
        .and_then(|(a, b)| {
            Some(Dev {
                major: a.parse().ok()?,
                minor: b.parse().ok()?,
            })
        })
        .with_context(|| format!("{p}: not MAJOR:MINOR: {s:?}"))?;
    Ok(Target {
        name: name.to_string(),
        dev,
    })
}

/// The event filter selecting `targets` (`dev` is the kernel's dev_t).
pub fn filter(targets: &[Target]) -> String {
    targets
        .iter()
        .map(|t| format!("dev == {}", t.dev.kernel_dev_t()))
        .collect::<Vec<_>>()
        .join(" || ")
}

/// What a capture measured.
pub struct Captured {
    pub feeder: Feeder,
    pub window_s: f64,
    pub iostat: Vec<Iostat>,
    /// Stopped before the duration (a signal, or restore taking the
    /// instance away).
    pub interrupted: bool,
    /// The most bytes of raw pages that waited for the analysis at once.
    pub spool_peak: usize,
    /// Times the waiting pages passed [`SPOOL_MAX`] during the window
    /// (the analysis then ran at normal priority, taking the load's CPU).
    pub behind: u32,
}

/// Progress, for a status line.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    pub elapsed: Duration,
    pub events: u64,
}

/// Capture from `targets` until `duration` passes (or forever) or `stop`
/// is set, with per-CPU buffers of `buffer_kb` KiB. The instance is
/// applied through `guard` and removed before returning (also on error).
pub fn capture(
    host: &Host,
    guard: &Guard,
    targets: &[Target],
    duration: Option<Duration>,
    buffer_kb: u32,
    stop: &AtomicBool,
    progress: &dyn Fn(Progress),
) -> Result<Captured> {
    trace_instance::reset_release();
    let inst = TraceInstance::new(&EVENTS, filter(targets), buffer_kb).with_clock(CLOCK);
    let id = guard.apply(host, Box::new(inst)).map_err(|e| {
        anyhow::Error::from(Fix::new(
            format!("cannot set up a trace instance: {}", crate::error::one_line(&e)),
            "run as root on a kernel with tracefs and block tracepoints (CONFIG_FTRACE, CONFIG_BLK_DEV_IO_TRACE)",
        ))
    });
    let id = match id {
        Ok(id) => id,
        Err(e) => {
            // Applying may have failed half way: take what was made away now.
            let ours = format!("{}{}", trace_instance::PREFIX, std::process::id());
            for entry in guard.entries() {
                if entry.kind() == "trace_instance" && entry.change().target().ends_with(&ours) {
                    let _ = guard.undo(entry.id());
                }
            }
            return Err(e);
        }
    };
    let dir = guard
        .entries()
        .iter()
        .find(|e| e.id() == id)
        .map(|e| e.change().target())
        .context("internal: the trace instance is not journaled")?;
    let result = read_raw(host, &dir, targets, duration, stop, progress);
    // Remove it now, not at the end of the run: it costs buffer memory.
    let undone = guard.undo(id)?;
    if undone.outcome.keeps_entry() {
        crate::output::warn(format!(
            "could not remove trace instance {dir}: {} (run `innotune restore`)",
            undone.outcome
        ));
    }
    result
}

fn read_raw(
    host: &Host,
    dir: &str,
    targets: &[Target],
    duration: Option<Duration>,
    stop: &AtomicBool,
    progress: &dyn Fn(Progress),
) -> Result<Captured> {
    let inst = host.path(dir);
    let decoder = raw::Decoder::from_instance(&inst, &EVENTS)?;
    let mut cpus = open_cpus(&inst)?;
    let before = crate::model::diskstats::read(host)?;
    let spool = Spool::new(SPOOL_MAX);
    let (tx, rx) = std::sync::mpsc::channel::<Round>();
    std::thread::scope(|s| {
        let analysis = std::thread::Builder::new()
            .name("trace-analysis".into())
            .spawn_scoped(s, || spool.analyse(&decoder, rx))
            .context("starting the trace analysis thread")?;
        let t0 = Instant::now();
        let mut reader = Reader::new(&decoder);
        let mut interrupted = false;
        progress(Progress {
            elapsed: Duration::ZERO,
            events: 0,
        });
        let read = (|| -> Result<()> {
            loop {
                if stop.load(Ordering::SeqCst) || trace_instance::release_requested() {
                    interrupted = true;
                    return Ok(());
                }
                if duration.is_some_and(|d| t0.elapsed() >= d) {
                    return Ok(());
                }
                let mut pfds: Vec<libc::pollfd> = cpus
                    .iter()
                    .map(|(_, f)| libc::pollfd {
                        fd: f.as_raw_fd(),
                        events: libc::POLLIN,
                        revents: 0,
                    })
                    .collect();
                // SAFETY: valid pollfds; the timeout bounds how late a stop is
                // seen. trace_pipe_raw reports readable only once the buffer is
                // `buffer_percent` full, so this is mostly a 100 ms tick that
                // wakes early under a burst.
                unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, 100) };
                spool.send(&tx, reader.drain(&mut cpus)?);
                progress(Progress {
                    elapsed: t0.elapsed(),
                    events: spool.events.load(Ordering::Relaxed),
                });
            }
        })();
        let window_s = t0.elapsed().as_secs_f64();
        let after = crate::model::diskstats::read(host);
        let mut lost = None;
        // What the kernel had recorded by the end of the window (an error
        // is reported after the analysis thread has ended).
        let read = read.and_then(|()| {
            if !trace_instance::release_requested() {
                spool.send(&tx, reader.drain(&mut cpus)?);
                lost = Some(lost_by_cpu(&inst, &cpus));
            }
            Ok(())
        });
        drop(cpus);
        // The window is over: what is left is analysed at full speed.
        spool.finish();
        drop(tx);
        let mut feeder = analysis
            .join()
            .map_err(|_| anyhow::anyhow!("internal: the trace analysis thread panicked"))?;
        read?;
        let after = after?;
        if let Some((overrun, dropped)) = lost {
            // What it could not keep: a page's header flags a loss but may not
            // say how many (then it counts 1); the per-CPU counters do.
            let l = &mut feeder.lines;
            l.overrun = overrun;
            l.dropped = dropped;
            l.lost_events = l.lost_events.max(overrun + dropped);
        }
        let iostat = targets
            .iter()
            .filter_map(|t| {
                let (a, b) = (before.get(&t.name)?, after.get(&t.name)?);
                Some(Iostat::compute(&t.name, a, b, window_s))
            })
            .collect();
        Ok(Captured {
            feeder,
            window_s,
            iostat,
            interrupted,
            spool_peak: spool.peak.load(Ordering::Relaxed),
            behind: spool.behind.load(Ordering::Relaxed),
        })
    })
}

/// Most bytes of raw pages the capture holds for its analysis before the
/// analysis gets a normal share of the CPU (see [`Spool`]): at a RAM
/// loop's ~1 M events a second (~60 MB/s of pages) about 4 s of falling
/// behind. The pages are copies; the kernel's buffers are drained as
/// before, so holding them loses nothing.
pub const SPOOL_MAX: usize = 256 << 20;

/// A round of raw pages, as read from every CPU in one pass.
#[derive(Default)]
struct Round {
    data: Vec<u8>,
    pages: Vec<std::ops::Range<usize>>,
}

/// The reader's pages on their way to the analysis thread.
///
/// Why a second thread at idle priority: decoding and matching the events
/// (btt's method) cost about 8 times what reading the pages costs
/// (perf, 2026-11-29: 0.72 s of CPU for 6.4 M events, ~85 % of it
/// decoding and analysis, ~10 % reading), and a capture exists to watch a load, so that work must not
/// take the load's CPU. The reader (normal priority: the kernel's buffers
/// must be drained in time) only copies pages and hands them over; the
/// analysis runs `SCHED_IDLE`, in the time the load leaves, as blktrace
/// leaves blkparse and btt until after the capture. When the pages
/// waiting pass [`SPOOL_MAX`] bytes, or the window ends, the analysis
/// gets normal priority until it has caught up to half of that.
struct Spool {
    max: usize,
    /// Bytes handed over and not yet analysed.
    bytes: std::sync::atomic::AtomicUsize,
    /// The most that waited at once.
    peak: std::sync::atomic::AtomicUsize,
    /// Events analysed so far (for the progress line).
    events: std::sync::atomic::AtomicU64,
    /// The analysis thread's id, once it runs at idle priority (0 before).
    tid: std::sync::atomic::AtomicI32,
    /// The window is over: analyse at normal priority.
    done: AtomicBool,
    /// The analysis runs at normal priority now.
    urgent: AtomicBool,
    /// Times the pages waiting passed `max` in the window.
    behind: std::sync::atomic::AtomicU32,
}

impl Spool {
    fn new(max: usize) -> Spool {
        Spool {
            max,
            bytes: 0.into(),
            peak: 0.into(),
            events: 0.into(),
            tid: 0.into(),
            done: AtomicBool::new(false),
            urgent: AtomicBool::new(false),
            behind: 0.into(),
        }
    }

    /// Hands `round` to the analysis (nothing when it is empty), raising
    /// the analysis's priority when too much waits and lowering it again
    /// once it has caught up.
    fn send(&self, tx: &std::sync::mpsc::Sender<Round>, round: Round) {
        if !round.pages.is_empty() {
            let n = round.data.len();
            let waiting = self.bytes.fetch_add(n, Ordering::SeqCst) + n;
            self.peak.fetch_max(waiting, Ordering::Relaxed);
            // A send fails only when the analysis thread has gone (it
            // panicked): join reports that.
            let _ = tx.send(round);
        }
        let waiting = self.bytes.load(Ordering::SeqCst);
        if !self.urgent.load(Ordering::SeqCst) && waiting > self.max {
            self.behind.fetch_add(1, Ordering::Relaxed);
            self.set_urgent(true);
        } else if self.urgent.load(Ordering::SeqCst)
            && waiting <= self.max / 2
            && !self.done.load(Ordering::SeqCst)
        {
            self.set_urgent(false);
        }
    }

    /// The window is over: the rest is analysed at normal priority.
    fn finish(&self) {
        self.done.store(true, Ordering::SeqCst);
        self.set_urgent(true);
    }

    fn set_urgent(&self, urgent: bool) {
        self.urgent.store(urgent, Ordering::SeqCst);
        let tid = self.tid.load(Ordering::SeqCst);
        if tid != 0 {
            set_idle(tid, !urgent);
        }
    }

    /// The analysis thread: decodes each round's pages, puts the round's
    /// events in time order and feeds them to the analysis.
    ///
    /// Why sort a round's events: each CPU's pages are in time order, but
    /// one round reads CPU 0 then CPU 1, so CPU 1's events of the round can be
    /// older than CPU 0's. Sorting the round puts them in order; between
    /// rounds, an event read in a later round is at most the round's reading
    /// time older than the newest of the earlier one, far inside the
    /// analysis's 200 ms reordering window.
    fn analyse(&self, decoder: &raw::Decoder, rx: std::sync::mpsc::Receiver<Round>) -> Feeder {
        let tid = rustix::thread::gettid().as_raw_nonzero().get();
        set_idle(tid, true);
        self.tid.store(tid, Ordering::SeqCst);
        // Published after lowering itself: the reader may have raised it
        // in between (or never seen the id), so look again.
        if self.urgent.load(Ordering::SeqCst) {
            set_idle(tid, false);
        }
        let mut feeder = Feeder::default();
        let mut events = Vec::new();
        for round in rx {
            for r in &round.pages {
                let st = decoder.decode_page(&round.data[r.clone()], &mut events);
                feeder.lines.total += st.records;
                feeder.lines.ignored += st.ignored;
                feeder.lines.lost_events += st.lost;
            }
            events.sort_by_key(|e| e.time_ns);
            let n = events.len() as u64;
            feeder.lines.events += n;
            for e in events.drain(..) {
                feeder.analyzer.push(e);
            }
            self.bytes.fetch_sub(round.data.len(), Ordering::SeqCst);
            self.events.fetch_add(n, Ordering::Relaxed);
        }
        feeder
    }
}

/// Puts thread `tid` on `SCHED_IDLE` (or back on `SCHED_OTHER`). Best
/// effort: where the kernel refuses, the analysis keeps the priority it
/// has, which costs the load CPU but loses nothing.
fn set_idle(tid: i32, idle: bool) {
    let param = libc::sched_param { sched_priority: 0 };
    let policy = if idle {
        libc::SCHED_IDLE
    } else {
        libc::SCHED_OTHER
    };
    // SAFETY: a valid sched_param; tid names a thread of this process.
    unsafe { libc::sched_setscheduler(tid, policy, &param) };
}

/// Events the kernel lost on `cpus` of the instance at `inst`: the sums of
/// `overrun` (overwritten before they were read) and `dropped events`
/// (refused while the buffer was full) of `per_cpu/cpuN/stats`. A CPU
/// whose counters cannot be read counts 0 (the pages' headers still flag
/// its losses).
fn lost_by_cpu(inst: &std::path::Path, cpus: &[(u32, std::fs::File)]) -> (u64, u64) {
    let (mut overrun, mut dropped) = (0, 0);
    for (n, _) in cpus {
        let p = inst.join(format!("per_cpu/cpu{n}/stats"));
        if let Ok(text) = raw::read_tracefs(&p) {
            let (o, d) = parse_stats(&text);
            overrun += o;
            dropped += d;
        }
    }
    (overrun, dropped)
}

/// `overrun` and `dropped events` of a `per_cpu/cpuN/stats` file (`name:
/// value` lines; a missing line counts 0: `dropped events` came with
/// Linux 4.x).
pub fn parse_stats(text: &str) -> (u64, u64) {
    let get = |key: &str| {
        text.lines()
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.trim() == key)
            .and_then(|(_, v)| v.trim().parse::<u64>().ok())
            .unwrap_or(0)
    };
    (get("overrun"), get("dropped events"))
}

/// Each CPU's `per_cpu/cpuN/trace_pipe_raw`, opened non-blocking.
fn open_cpus(inst: &std::path::Path) -> Result<Vec<(u32, std::fs::File)>> {
    use std::os::unix::fs::OpenOptionsExt;
    let per_cpu = inst.join("per_cpu");
    let mut cpus = Vec::new();
    for e in
        std::fs::read_dir(&per_cpu).with_context(|| format!("listing {}", per_cpu.display()))?
    {
        let e = e?;
        let name = e.file_name();
        let Some(n) = name
            .to_str()
            .and_then(|n| n.strip_prefix("cpu"))
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let p = e.path().join("trace_pipe_raw");
        let f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&p)
            .with_context(|| format!("opening {}", p.display()))?;
        cpus.push((n, f));
    }
    if cpus.is_empty() {
        anyhow::bail!("{}: no per-CPU buffers", per_cpu.display());
    }
    cpus.sort_by_key(|(n, _)| *n);
    Ok(cpus)
}

/// Reads whole pages from every CPU, without decoding them.
struct Reader {
    page: Vec<u8>,
}

impl Reader {
    fn new(decoder: &raw::Decoder) -> Reader {
        // One read() returns at most one sub-buffer; kernels with
        // `buffer_subbuf_size_kb` may use ones larger than a page.
        Reader {
            page: vec![0u8; decoder.page.page_size().max(1 << 16)],
        }
    }

    /// Read what every CPU has now, without blocking.
    fn drain(&mut self, cpus: &mut [(u32, std::fs::File)]) -> Result<Round> {
        let mut round = Round::default();
        for (n, f) in cpus.iter_mut() {
            loop {
                match f.read(&mut self.page) {
                    // 0: nothing to hand over now (the writer is on the
                    // only page), EAGAIN: empty.
                    Ok(0) => break,
                    Ok(len) => {
                        let at = round.data.len();
                        round.data.extend_from_slice(&self.page[..len]);
                        round.pages.push(at..at + len);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        return Err(e).with_context(|| format!("reading cpu{n}/trace_pipe_raw"))
                    }
                }
            }
        }
        Ok(round)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw_fixture() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trace/raw")
    }

    fn fixture_decoder() -> raw::Decoder {
        let dir = raw_fixture().join("formats");
        let read = |n: &str| std::fs::read_to_string(dir.join(n)).unwrap();
        let texts: Vec<(&str, String)> = EVENTS
            .iter()
            .map(|e| e.rsplit('/').next().unwrap())
            .map(|n| (n, read(n)))
            .collect();
        let refs: Vec<(&str, &str)> = texts.iter().map(|(n, t)| (*n, t.as_str())).collect();
        raw::Decoder::new(&read("header_page"), &read("header_event"), &refs).unwrap()
    }

    /// A live capture's pages (the raw fixture, two CPUs), handed over in
    /// rounds as the reader makes them (a few pages of each CPU a round),
    /// through the analysis thread, give what the kernel's own text of
    /// the same buffer gives: every event, request and completion.
    #[test]
    fn pages_handed_over_in_rounds_are_analysed_whole() {
        let d = fixture_decoder();
        let mut per_cpu = Vec::new();
        let mut text = Vec::new();
        for cpu in 0..2 {
            let raw = std::fs::read(raw_fixture().join(format!("cpu{cpu}.raw"))).unwrap();
            per_cpu.push(
                raw.chunks(d.page.page_size())
                    .map(|c| c.to_vec())
                    .collect::<Vec<_>>(),
            );
            let t = std::fs::read_to_string(raw_fixture().join(format!("cpu{cpu}.txt"))).unwrap();
            text.extend(
                t.lines()
                    .filter_map(|l| match super::super::event::parse_line(l) {
                        super::super::event::Line::Event(e) => Some(e),
                        _ => None,
                    }),
            );
        }
        text.sort_by_key(|e| e.time_ns);
        let mut want = super::super::analysis::Analyzer::default();
        for e in text {
            want.push(e);
        }
        let want = want.finish();

        let spool = Spool::new(SPOOL_MAX);
        let (tx, rx) = std::sync::mpsc::channel();
        let feeder = std::thread::scope(|s| {
            let h = s.spawn(|| spool.analyse(&d, rx));
            let most = per_cpu.iter().map(Vec::len).max().unwrap();
            for k in (0..most).step_by(2) {
                let mut round = Round::default();
                for pages in &per_cpu {
                    for p in pages.iter().skip(k).take(2) {
                        let at = round.data.len();
                        round.data.extend_from_slice(p);
                        round.pages.push(at..at + p.len());
                    }
                }
                spool.send(&tx, round);
            }
            spool.send(&tx, Round::default());
            spool.finish();
            drop(tx);
            h.join().unwrap()
        });
        assert_eq!(spool.bytes.load(Ordering::SeqCst), 0);
        assert_eq!(spool.behind.load(Ordering::SeqCst), 0);
        assert!(spool.peak.load(Ordering::SeqCst) >= d.page.page_size());
        let got = feeder.analyzer.finish();
        assert!(want.events > 100);
        assert_eq!(got.events, want.events);
        assert_eq!(feeder.lines.events, spool.events.load(Ordering::SeqCst));
        assert!(!want.devices.is_empty());
        assert_eq!(got.counts(), want.counts());
    }

    /// The analysis gets normal priority when more than the most waits,
    /// counted once per time it falls behind, and goes back to idle
    /// priority when half of that is left, not before; after the window
    /// it stays normal.
    #[test]
    fn the_analysis_is_raised_when_behind_and_lowered_once_caught_up() {
        let spool = Spool::new(10_000);
        let (tx, _rx) = std::sync::mpsc::channel();
        let round = |n: usize| Round {
            data: vec![0; n],
            pages: std::iter::once(0..n).collect(),
        };
        spool.send(&tx, round(6_000));
        assert!(!spool.urgent.load(Ordering::SeqCst));
        spool.send(&tx, round(6_000));
        assert!(spool.urgent.load(Ordering::SeqCst));
        assert_eq!(spool.behind.load(Ordering::SeqCst), 1);
        spool.send(&tx, round(1_000));
        assert_eq!(spool.behind.load(Ordering::SeqCst), 1, "still behind: once");
        spool.bytes.fetch_sub(7_000, Ordering::SeqCst); // 6,000 left
        spool.send(&tx, Round::default());
        assert!(
            spool.urgent.load(Ordering::SeqCst),
            "above half: still urgent"
        );
        spool.bytes.fetch_sub(1_000, Ordering::SeqCst); // 5,000 = half
        spool.send(&tx, Round::default());
        assert!(!spool.urgent.load(Ordering::SeqCst));
        assert_eq!(spool.peak.load(Ordering::SeqCst), 13_000);
        spool.finish();
        spool.bytes.store(0, Ordering::SeqCst);
        spool.send(&tx, Round::default());
        assert!(spool.urgent.load(Ordering::SeqCst), "after the window");
    }

    /// The analysis thread runs at idle priority (the kernel says
    /// SCHED_IDLE for it) and at normal priority after the window.
    #[test]
    fn the_analysis_thread_runs_at_idle_priority_until_the_window_ends() {
        let d = fixture_decoder();
        let spool = Spool::new(SPOOL_MAX);
        let (tx, rx) = std::sync::mpsc::channel::<Round>();
        std::thread::scope(|s| {
            let h = s.spawn(|| spool.analyse(&d, rx));
            // The thread publishes its id once it has lowered itself.
            let tid = loop {
                let t = spool.tid.load(Ordering::SeqCst);
                if t != 0 {
                    break t;
                }
                std::thread::yield_now();
            };
            // SAFETY: tid is a live thread of this process (it waits on rx).
            assert_eq!(unsafe { libc::sched_getscheduler(tid) }, libc::SCHED_IDLE);
            spool.finish();
            assert_eq!(unsafe { libc::sched_getscheduler(tid) }, libc::SCHED_OTHER);
            drop(tx);
            h.join().unwrap();
        });
    }

    #[test]
    fn filter_uses_the_kernel_dev_t() {
        let t = |major, minor| Target {
            name: String::new(),
            dev: Dev { major, minor },
        };
        assert_eq!(filter(&[t(7, 0)]), "dev == 7340032");
        assert_eq!(
            filter(&[t(254, 0), t(7, 3)]),
            "dev == 266338304 || dev == 7340035"
        );
    }

    #[test]
    fn per_cpu_stats_give_overrun_and_dropped() {
        // As Linux 6.1 writes per_cpu/cpu0/stats.
        let text = "entries: 0\noverrun: 1742\ncommit overrun: 0\nbytes: 0\noldest event ts:  5306.771683\nnow ts:  5307.318512\ndropped events: 3\nread events: 20581\n";
        assert_eq!(parse_stats(text), (1742, 3));
        assert_eq!(parse_stats("entries: 5\noverrun: 0\n"), (0, 0));
        assert_eq!(parse_stats(""), (0, 0));
    }

    #[test]
    fn targets_are_read_from_sysfs() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("sys/block/loop3")).unwrap();
        std::fs::write(d.path().join("sys/block/loop3/dev"), "7:3\n").unwrap();
        let h = Host::with_root(d.path());
        assert_eq!(target(&h, "loop3").unwrap().dev, Dev { major: 7, minor: 3 });
        let e = target(&h, "nope").unwrap_err().to_string();
        assert!(e.contains("fix:"), "{e}");
    }
}
