//! Live capture: a private tracefs instance (a journaled
//! [`TraceInstance`]) with the block events btt needs, filtered to the
//! devices, read through its `trace_pipe` for a duration or until stopped,
//! with /proc/diskstats read at both ends of the same window.

use super::event::Dev;
use super::feed::Feeder;
use super::iostat::Iostat;
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
/// is set. The instance is applied through `guard` and removed before
/// returning (also on error).
pub fn capture(
    host: &Host,
    guard: &Guard,
    targets: &[Target],
    duration: Option<Duration>,
    stop: &AtomicBool,
    progress: &dyn Fn(Progress),
) -> Result<Captured> {
    trace_instance::reset_release();
    let inst = TraceInstance::new(&EVENTS, filter(targets), BUFFER_KB);
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
    let result = read_pipe(host, &dir, targets, duration, stop, progress);
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

fn read_pipe(
    host: &Host,
    dir: &str,
    targets: &[Target],
    duration: Option<Duration>,
    stop: &AtomicBool,
    progress: &dyn Fn(Progress),
) -> Result<Captured> {
    use std::os::unix::fs::OpenOptionsExt;
    let pipe = host.path(format!("{dir}/trace_pipe"));
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&pipe)
        .with_context(|| format!("opening {}", pipe.display()))?;
    let before = crate::model::diskstats::read(host)?;
    let t0 = Instant::now();
    let mut feeder = Feeder::default();
    let mut buf = vec![0u8; 1 << 20];
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
        let mut pfd = libc::pollfd {
            fd: f.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd; a 100 ms timeout bounds how late a stop is seen.
        unsafe { libc::poll(&mut pfd, 1, 100) };
        drain(&mut f, &mut buf, &mut feeder)?;
        progress(Progress {
            elapsed: t0.elapsed(),
            events: feeder.lines.events,
        });
    }
    let window_s = t0.elapsed().as_secs_f64();
    let after = crate::model::diskstats::read(host)?;
    if !trace_instance::release_requested() {
        // What the kernel had formatted by the end of the window.
        drain(&mut f, &mut buf, &mut feeder)?;
    }
    drop(f);
    feeder.flush();
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

/// Read what trace_pipe has now, without blocking.
fn drain(f: &mut std::fs::File, buf: &mut [u8], feeder: &mut Feeder) -> Result<()> {
    loop {
        match f.read(buf) {
            Ok(0) => return Ok(()),
            Ok(n) => feeder.feed(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e).context("reading trace_pipe"),
        }
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
