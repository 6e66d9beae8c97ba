//! Live capture: a private tracefs instance (a journaled
//! [`TraceInstance`]) with the block events btt needs, filtered to the
//! devices, read as the kernel's binary per-CPU pages
//! (`per_cpu/cpuN/trace_pipe_raw`, decoded by [`raw`]) for a duration or
//! until stopped, with /proc/diskstats read at both ends of the same
//! window. Why not `trace_pipe`: its text is formatted by the kernel on the
//! traced workload's CPUs, which cost 12% of the mixed preset's IOPS.

use super::event::{Dev, Event};
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
    let t0 = Instant::now();
    let mut feeder = Feeder::default();
    let mut reader = Reader::new(&decoder);
    let mut interrupted = false;
    progress(Progress {
        elapsed: Duration::ZERO,
        events: 0,
    });
    loop {
        if stop.load(Ordering::SeqCst) || trace_instance::release_requested() {
            interrupted = true;
            break;
        }
        if duration.is_some_and(|d| t0.elapsed() >= d) {
            break;
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
        reader.drain(&mut cpus, &mut feeder)?;
        progress(Progress {
            elapsed: t0.elapsed(),
            events: feeder.lines.events,
        });
    }
    let window_s = t0.elapsed().as_secs_f64();
    let after = crate::model::diskstats::read(host)?;
    if !trace_instance::release_requested() {
        // What the kernel had recorded by the end of the window.
        reader.drain(&mut cpus, &mut feeder)?;
        // What it could not keep: a page's header flags a loss but may not
        // say how many (then it counts 1); the per-CPU counters do.
        let (overrun, dropped) = lost_by_cpu(&inst, &cpus);
        let l = &mut feeder.lines;
        l.overrun = overrun;
        l.dropped = dropped;
        l.lost_events = l.lost_events.max(overrun + dropped);
    }
    drop(cpus);
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
    })
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

/// Reads whole pages from every CPU and hands their events to the
/// analysis in time order.
///
/// Why sort a round's events: each CPU's pages are in time order, but
/// one round reads CPU 0 then CPU 1, so CPU 1's events of the round can be
/// older than CPU 0's. Sorting the round puts them in order; between
/// rounds, an event read in a later round is at most the round's reading
/// time older than the newest of the earlier one, far inside the
/// analysis's 200 ms reordering window.
struct Reader<'a> {
    decoder: &'a raw::Decoder,
    page: Vec<u8>,
    round: Vec<Event>,
}

impl<'a> Reader<'a> {
    fn new(decoder: &'a raw::Decoder) -> Reader<'a> {
        // One read() returns at most one sub-buffer; kernels with
        // `buffer_subbuf_size_kb` may use ones larger than a page.
        let page = vec![0u8; decoder.page.page_size().max(1 << 16)];
        Reader {
            decoder,
            page,
            round: Vec::new(),
        }
    }

    /// Read what every CPU has now, without blocking.
    fn drain(&mut self, cpus: &mut [(u32, std::fs::File)], feeder: &mut Feeder) -> Result<()> {
        self.round.clear();
        for (n, f) in cpus.iter_mut() {
            loop {
                match f.read(&mut self.page) {
                    // 0: nothing to hand over now (the writer is on the
                    // only page), EAGAIN: empty.
                    Ok(0) => break,
                    Ok(len) => {
                        let st = self.decoder.decode_page(&self.page[..len], &mut self.round);
                        feeder.lines.total += st.records;
                        feeder.lines.ignored += st.ignored;
                        feeder.lines.lost_events += st.lost;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        return Err(e).with_context(|| format!("reading cpu{n}/trace_pipe_raw"))
                    }
                }
            }
        }
        self.round.sort_by_key(|e| e.time_ns);
        feeder.lines.events += self.round.len() as u64;
        for e in self.round.drain(..) {
            feeder.analyzer.push(e);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
