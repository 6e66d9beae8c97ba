//! The small per-window summary `sweep --trace` keeps for each trial:
//! where a device's reads (and all its I/O) spent their time, so a verdict
//! can say whether the scheduler (I2D) or the device (D2C) made the
//! difference. Also: tracing a closure's run ([`while_running`]).

use super::analysis::{Direction, DirectionFigures};
use super::capture::{Progress, Target};
use super::report::TraceReport;
use super::{execute, TraceOptions};
use crate::host::Host;
use crate::journal::Guard;
use anyhow::Result;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};

/// One device and direction over one window.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct TraceSplit {
    /// Kernel name (or `MAJOR,MINOR`).
    pub device: String,
    /// `read`, or `all` (every direction together).
    pub direction: Direction,
    pub bios: u64,
    pub q2c_avg_ns: u64,
    pub q2c_p99_ns: u64,
    /// Absent when requests were issued directly (scheduler `none`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub i2d_avg_ns: Option<u64>,
    pub d2c_avg_ns: u64,
    pub d2c_p99_ns: u64,
    /// Share of the summed Q2C spent in the scheduler (I2D + M2D).
    pub scheduler_pct: f64,
    /// Share of the summed Q2C spent in the driver and device (D2C).
    pub device_pct: f64,
}

fn one(device: &str, f: &DirectionFigures) -> Option<TraceSplit> {
    let (q2c, d2c, share) = (f.q2c?, f.d2c?, f.share?);
    Some(TraceSplit {
        device: device.to_string(),
        direction: f.direction,
        bios: q2c.count,
        q2c_avg_ns: q2c.avg_ns,
        q2c_p99_ns: q2c.p99_ns,
        i2d_avg_ns: f.i2d.map(|s| s.avg_ns),
        d2c_avg_ns: d2c.avg_ns,
        d2c_p99_ns: d2c.p99_ns,
        scheduler_pct: share.i2d_pct + share.m2d_pct,
        device_pct: share.d2c_pct,
    })
}

/// Per device: its reads (when it had any) and everything.
pub fn splits(r: &TraceReport) -> Vec<TraceSplit> {
    let mut out = Vec::new();
    for d in &r.devices {
        let name = d.name.clone().unwrap_or_else(|| d.device.clone());
        if let Some(read) = d.directions.iter().find(|f| f.direction == Direction::Read) {
            out.extend(one(&name, read));
        }
        out.extend(one(&name, &d.all));
    }
    out
}

/// Run `f` while tracing `targets` (through `guard`); the capture starts
/// before `f` and stops when it returns.
pub fn while_running<T>(
    host: &Host,
    guard: &Guard,
    targets: &[Target],
    f: impl FnOnce() -> T,
) -> Result<(T, TraceReport)> {
    let stop = AtomicBool::new(false);
    let opts = TraceOptions::Capture {
        targets: targets.to_vec(),
        duration: None,
        buffer_kb: super::capture::BUFFER_KB,
    };
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|s| {
        let h = s.spawn(|| {
            let tx = tx;
            let started = |_: Progress| {
                let _ = tx.send(());
            };
            execute(host, Some(guard), &opts, &stop, &started)
        });
        // Reading has begun (or the capture failed and said nothing).
        let _ = rx.recv();
        let out = f();
        stop.store(true, Ordering::SeqCst);
        let report = h
            .join()
            .map_err(|_| anyhow::anyhow!("internal: the trace thread panicked"))??;
        Ok((out, report))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_of_a_saved_capture() {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/trace/loop-mq-deadline-randrw.trace");
        let r = super::super::from_file(&p).unwrap();
        let s = splits(&r);
        assert_eq!(s.len(), 2, "{s:?}");
        assert_eq!(s[0].direction, Direction::Read);
        assert_eq!(s[1].direction, Direction::All);
        for x in &s {
            assert_eq!(x.device, "7,0");
            assert!(x.bios > 0 && x.d2c_avg_ns <= x.q2c_avg_ns, "{x:?}");
            assert!(x.i2d_avg_ns.is_some(), "mq-deadline inserts");
            assert!(x.scheduler_pct + x.device_pct <= 100.0 + 1e-9);
            assert!(x.device_pct > 50.0, "a loop device's time is in D2C: {x:?}");
        }
        let p = p.with_file_name("loop-none-randrw.trace");
        let s = splits(&super::super::from_file(&p).unwrap());
        assert!(s.iter().all(|x| x.i2d_avg_ns.is_none()), "none: no I2D");
    }
}
