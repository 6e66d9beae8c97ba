//! The device's own view of a trial: /proc/diskstats deltas turned into
//! iostat -x columns (sysstat's formulas; see reference §4).
//!
//! Δt comes from a monotonic clock rather than /proc/uptime (iostat's
//! choice): innotune takes both snapshots itself, milliseconds apart from the
//! measured window, so the finer clock is the better denominator.

use crate::host::Host;
use anyhow::Result;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Instant;

/// Raw counters of one device: the host model's reader.
pub use crate::model::diskstats::Counters;

pub struct Snapshot {
    at: Instant,
    devs: BTreeMap<String, Counters>,
    /// The host's CPU ticks at the same moment: the trial's steal. A failed
    /// read leaves it out, it only qualifies the trial.
    cpu: Option<crate::model::cpustat::CpuTicks>,
}

/// iostat -x columns for one device over one trial.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
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

pub fn snapshot(host: &Host) -> Result<Snapshot> {
    Ok(Snapshot {
        at: Instant::now(),
        devs: crate::model::diskstats::read(host)?,
        cpu: crate::model::cpustat::read(host).ok(),
    })
}

/// Where the host's CPU time went between two snapshots (steal above all).
pub fn host_cpu(a: &Snapshot, b: &Snapshot) -> Option<crate::model::cpustat::HostCpu> {
    a.cpu.as_ref()?.delta(b.cpu.as_ref()?)
}

/// iostat's per-device figures between two counter sets over `ms` milliseconds.
pub fn compute(device: &str, a: &Counters, b: &Counters, ms: f64) -> DeviceStats {
    // The model's delta: time counters wrap at 2^32 ms in the kernel.
    let d = a.delta(b);
    let secs = ms / 1000.0;
    let rd = d.rd_ios as f64;
    let wr = d.wr_ios as f64;
    DeviceStats {
        device: device.to_string(),
        r_s: rd / secs,
        w_s: wr / secs,
        rkb_s: d.rd_sectors as f64 / 2.0 / secs,
        wkb_s: d.wr_sectors as f64 / 2.0 / secs,
        r_await: (rd > 0.0).then(|| d.rd_ticks as f64 / rd),
        w_await: (wr > 0.0).then(|| d.wr_ticks as f64 / wr),
        aqu_sz: d.time_in_queue as f64 / ms,
        util: (d.io_ticks as f64 / ms * 100.0).min(100.0),
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
        use crate::model::diskstats::parse;
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
