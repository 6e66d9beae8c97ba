//! iostat -x's figures for the capture window, from two /proc/diskstats
//! readings (sysstat's formulas, reference §4), so the trace's per-bio view
//! can be checked against the kernel's own per-request counters.
//!
//! Δt is a monotonic clock's, not /proc/uptime's: innotune takes both
//! readings itself, right at the window's ends.

use crate::model::diskstats::Counters;
use serde::{Deserialize, Serialize};

/// One device over the window. JSON keys follow docs/json.md (`r_per_s`
/// for iostat's `r/s`, `r_await_ns` for `r_await`, `aqu_sz` for `aqu-sz`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Iostat {
    pub device: String,
    pub window_s: f64,
    pub r_per_s: f64,
    pub w_per_s: f64,
    pub read_bytes_per_s: f64,
    pub write_bytes_per_s: f64,
    /// Average time per completed read (absent without reads).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub r_await_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub w_await_ns: Option<u64>,
    /// Average number of requests in flight.
    pub aqu_sz: f64,
    /// Share of the window with at least one request in flight.
    pub util_pct: f64,
    pub f_per_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub f_await_ns: Option<u64>,
}

impl Iostat {
    /// `before` → `after` over `window_s` seconds.
    pub fn compute(device: &str, before: &Counters, after: &Counters, window_s: f64) -> Iostat {
        let d = before.delta(after);
        let s = window_s.max(1e-6);
        let ms = s * 1000.0;
        let await_ns = |ticks: u64, ios: u64| (ios > 0).then(|| ticks * 1_000_000 / ios);
        Iostat {
            device: device.to_string(),
            window_s,
            r_per_s: d.rd_ios as f64 / s,
            w_per_s: d.wr_ios as f64 / s,
            read_bytes_per_s: d.rd_sectors as f64 * 512.0 / s,
            write_bytes_per_s: d.wr_sectors as f64 * 512.0 / s,
            r_await_ns: await_ns(d.rd_ticks, d.rd_ios),
            w_await_ns: await_ns(d.wr_ticks, d.wr_ios),
            aqu_sz: d.time_in_queue as f64 / ms,
            util_pct: (d.io_ticks as f64 / ms * 100.0).min(100.0),
            f_per_s: d.flushes as f64 / s,
            f_await_ns: await_ns(d.flush_ticks, d.flushes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iostat_formulas_over_a_window() {
        let a = crate::model::diskstats::parse(
            "7 0 loop0 100 0 800 50 10 0 80 40 0 100 90 0 0 0 0 4 2",
        );
        let b = crate::model::diskstats::parse(
            "7 0 loop0 300 0 2400 250 60 0 880 540 1 1100 1590 0 0 0 0 14 32",
        );
        let s = Iostat::compute("loop0", &a["loop0"], &b["loop0"], 2.0);
        assert_eq!((s.r_per_s, s.w_per_s), (100.0, 25.0));
        // 1600 sectors over 2 s = 800 sectors/s = 400 kB/s.
        assert_eq!(s.read_bytes_per_s, 409_600.0);
        assert_eq!(s.r_await_ns, Some(1_000_000), "200 ms over 200 reads");
        assert_eq!(s.w_await_ns, Some(10_000_000));
        assert_eq!(s.aqu_sz, 0.75, "1500 weighted ms over 2000 ms");
        assert_eq!(s.util_pct, 50.0);
        assert_eq!((s.f_per_s, s.f_await_ns), (5.0, Some(3_000_000)));
        let idle = Iostat::compute("loop0", &a["loop0"], &a["loop0"], 1.0);
        assert_eq!((idle.r_await_ns, idle.f_await_ns), (None, None));
    }
}
