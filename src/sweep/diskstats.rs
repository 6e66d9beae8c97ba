//! The device's own view of a trial: /proc/diskstats deltas turned into
//! iostat -x columns (sysstat's formulas; see reference §4).
//!
//! Δt comes from a monotonic clock rather than /proc/uptime (iostat's
//! choice): innotune takes both snapshots itself, milliseconds apart from the
//! measured window, so the finer clock is the better denominator.

use crate::host::Host;
use anyhow::{Context, Result};
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Instant;

/// Raw counters of one device (fields 1–11 of a diskstats line).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counters {
    pub rd_ios: u64,
    pub rd_merges: u64,
    pub rd_sectors: u64,
    pub rd_ticks: u64,
    pub wr_ios: u64,
    pub wr_merges: u64,
    pub wr_sectors: u64,
    pub wr_ticks: u64,
    pub in_flight: u64,
    pub io_ticks: u64,
    pub time_in_queue: u64,
}

pub struct Snapshot {
    at: Instant,
    devs: BTreeMap<String, Counters>,
}

/// iostat -x columns for one device over one trial.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DeviceStats {
    pub device: String,
    #[serde(rename = "r/s")]
    pub r_s: f64,
    #[serde(rename = "w/s")]
    pub w_s: f64,
    #[serde(rename = "rkB/s")]
    pub rkb_s: f64,
    #[serde(rename = "wkB/s")]
    pub wkb_s: f64,
    /// ms per completed read (null without reads).
    pub r_await: Option<f64>,
    /// ms per completed write (null without writes).
    pub w_await: Option<f64>,
    #[serde(rename = "aqu-sz")]
    pub aqu_sz: f64,
    /// % of time with at least one I/O in flight (not saturation on SSDs).
    pub util: f64,
}

pub fn parse(text: &str) -> BTreeMap<String, Counters> {
    let mut m = BTreeMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 14 {
            continue;
        }
        let n = |i: usize| f[i + 2].parse::<u64>().unwrap_or(0);
        m.insert(
            f[2].to_string(),
            Counters {
                rd_ios: n(1),
                rd_merges: n(2),
                rd_sectors: n(3),
                rd_ticks: n(4),
                wr_ios: n(5),
                wr_merges: n(6),
                wr_sectors: n(7),
                wr_ticks: n(8),
                in_flight: n(9),
                io_ticks: n(10),
                time_in_queue: n(11),
            },
        );
    }
    m
}

pub fn snapshot(host: &Host) -> Result<Snapshot> {
    let text = host
        .read("/proc/diskstats")
        .context("reading /proc/diskstats")?;
    Ok(Snapshot {
        at: Instant::now(),
        devs: parse(&text),
    })
}

/// iostat's per-device figures between two counter sets over `ms` milliseconds.
pub fn compute(device: &str, a: &Counters, b: &Counters, ms: f64) -> DeviceStats {
    let d = |x: u64, y: u64| y.wrapping_sub(x) as f64;
    let secs = ms / 1000.0;
    let rd = d(a.rd_ios, b.rd_ios);
    let wr = d(a.wr_ios, b.wr_ios);
    DeviceStats {
        device: device.to_string(),
        r_s: rd / secs,
        w_s: wr / secs,
        rkb_s: d(a.rd_sectors, b.rd_sectors) / 2.0 / secs,
        wkb_s: d(a.wr_sectors, b.wr_sectors) / 2.0 / secs,
        r_await: (rd > 0.0).then(|| d(a.rd_ticks, b.rd_ticks) / rd),
        w_await: (wr > 0.0).then(|| d(a.wr_ticks, b.wr_ticks) / wr),
        aqu_sz: d(a.time_in_queue, b.time_in_queue) / ms,
        util: (d(a.io_ticks, b.io_ticks) / ms * 100.0).min(100.0),
    }
}

/// Per-device figures between two snapshots, for `names` (in that order).
pub fn delta(before: &Snapshot, after: &Snapshot, names: &[String]) -> Vec<DeviceStats> {
    let ms = after.at.duration_since(before.at).as_secs_f64() * 1000.0;
    names
        .iter()
        .filter_map(|n| {
            let (a, b) = (before.devs.get(n)?, after.devs.get(n)?);
            Some(compute(n, a, b, ms.max(1e-3)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iostat_formulas() {
        let a =
            parse(" 254       0 vda 1000 10 8000 500 2000 20 16000 3000 0 400 3500 0 0 0 0 0 0");
        let b =
            parse(" 254       0 vda 1100 10 9600 700 2400 20 19200 3800 1 900 4500 0 0 0 0 0 0");
        let s = compute("vda", &a["vda"], &b["vda"], 1000.0);
        assert_eq!(s.r_s, 100.0);
        assert_eq!(s.w_s, 400.0);
        assert_eq!(s.rkb_s, 800.0); // 1600 sectors / 2
        assert_eq!(s.r_await, Some(2.0)); // 200 ms / 100 reads
        assert_eq!(s.w_await, Some(2.0)); // 800 ms / 400 writes
        assert_eq!(s.aqu_sz, 1.0); // 1000 ms in queue / 1000 ms
        assert_eq!(s.util, 50.0); // 500 ms busy / 1000 ms
        let idle = compute("vda", &a["vda"], &a["vda"], 1000.0);
        assert_eq!(idle.r_await, None);
    }
}
