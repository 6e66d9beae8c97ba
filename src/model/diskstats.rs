//! `/proc/diskstats`: per-device I/O counters, parsed by procfs-core from
//! bytes read through [`Host`], and the difference between two readings.
//!
//! The kernel keeps the I/O and sector counts in `unsigned long` (64-bit on
//! the hosts innotune runs on) but prints the four time counters (ms reading,
//! ms writing, ms doing I/O, weighted ms) through `jiffies_to_msecs()`, an
//! `unsigned int`: they wrap at 2³² ms, about 49.7 days of busy time. A
//! delta is therefore taken modulo 2³² for those, and modulo 2⁶⁴ for the
//! counts (block/genhd.c, `diskstats_show`).

use crate::host::Host;
use anyhow::{Context, Result};
use std::collections::BTreeMap;

/// Raw counters of one device (fields 1–11 of a diskstats line).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    pub rd_ios: u64,
    pub rd_merges: u64,
    pub rd_sectors: u64,
    /// ms spent on reads (32-bit in the kernel).
    pub rd_ticks: u64,
    pub wr_ios: u64,
    pub wr_merges: u64,
    pub wr_sectors: u64,
    /// ms spent on writes (32-bit in the kernel).
    pub wr_ticks: u64,
    /// I/Os in flight now: a gauge, not a counter.
    pub in_flight: u64,
    /// ms with at least one I/O in flight (32-bit in the kernel).
    pub io_ticks: u64,
    /// Weighted ms: each I/O's time in flight, summed (32-bit in the kernel).
    pub time_in_queue: u64,
    /// Flush requests completed (field 16, kernel 5.5+; 0 before).
    pub flushes: u64,
    /// ms spent on flushes (field 17, 32-bit in the kernel).
    pub flush_ticks: u64,
}

/// A 32-bit kernel time counter's increase from `a` to `b`, across one wrap.
pub fn time_delta(a: u64, b: u64) -> u64 {
    b.wrapping_sub(a) & 0xffff_ffff
}

/// A 64-bit count's increase from `a` to `b`.
pub fn count_delta(a: u64, b: u64) -> u64 {
    b.wrapping_sub(a)
}

impl Counters {
    /// What happened between `self` (earlier) and `later`: counters as
    /// increases (wraps handled per field), `in_flight` as `later`'s.
    pub fn delta(&self, later: &Counters) -> Counters {
        let c = count_delta;
        let t = time_delta;
        Counters {
            rd_ios: c(self.rd_ios, later.rd_ios),
            rd_merges: c(self.rd_merges, later.rd_merges),
            rd_sectors: c(self.rd_sectors, later.rd_sectors),
            rd_ticks: t(self.rd_ticks, later.rd_ticks),
            wr_ios: c(self.wr_ios, later.wr_ios),
            wr_merges: c(self.wr_merges, later.wr_merges),
            wr_sectors: c(self.wr_sectors, later.wr_sectors),
            wr_ticks: t(self.wr_ticks, later.wr_ticks),
            in_flight: later.in_flight,
            io_ticks: t(self.io_ticks, later.io_ticks),
            time_in_queue: t(self.time_in_queue, later.time_in_queue),
            flushes: c(self.flushes, later.flushes),
            flush_ticks: t(self.flush_ticks, later.flush_ticks),
        }
    }
}

/// Counters by kernel device name. Lines procfs-core cannot parse are
/// skipped (a partial line in a fixture is not a reason to lose the others).
pub fn parse(text: &str) -> BTreeMap<String, Counters> {
    let mut m = BTreeMap::new();
    for line in text.lines() {
        let Ok(d) = procfs_core::DiskStat::from_line(line) else {
            continue;
        };
        m.insert(
            d.name,
            Counters {
                rd_ios: d.reads,
                rd_merges: d.merged,
                rd_sectors: d.sectors_read,
                rd_ticks: d.time_reading,
                wr_ios: d.writes,
                wr_merges: d.writes_merged,
                wr_sectors: d.sectors_written,
                wr_ticks: d.time_writing,
                in_flight: d.in_progress,
                io_ticks: d.time_in_progress,
                time_in_queue: d.weighted_time_in_progress,
                flushes: d.flushes.unwrap_or(0),
                flush_ticks: d.time_flushing.unwrap_or(0),
            },
        );
    }
    m
}

/// Read `/proc/diskstats` now.
pub fn read(host: &Host) -> Result<BTreeMap<String, Counters>> {
    let text = host
        .read("/proc/diskstats")
        .with_context(|| format!("reading {}", host.path("/proc/diskstats").display()))?;
    Ok(parse(&text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kernel_lines_and_skips_bad_ones() {
        let m = parse(
            " 254       0 vda 1000 10 8000 500 2000 20 16000 3000 0 400 3500 0 0 0 0 0 0\n\
             garbage line\n\
               7       1 loop1 1 2 3 4 5 6 7 8 9 10 11\n",
        );
        assert_eq!(m.len(), 2);
        let v = m["vda"];
        assert_eq!((v.rd_ios, v.rd_sectors, v.rd_ticks), (1000, 8000, 500));
        assert_eq!((v.wr_ios, v.wr_ticks, v.io_ticks), (2000, 3000, 400));
        assert_eq!(v.time_in_queue, 3500);
        let f = parse(" 254 0 vda 1 0 8 1 2 0 16 3 0 4 5 0 0 0 0 7 9")["vda"];
        assert_eq!((f.flushes, f.flush_ticks), (7, 9));
        assert_eq!(
            m["loop1"].time_in_queue, 11,
            "kernels before 4.18: 11 fields"
        );
    }

    #[test]
    fn time_counters_wrap_at_32_bits_counts_at_64() {
        // io_ticks went 4294967000 → 704 (wrapped): 1000 ms, not 2^64 - …
        let a = Counters {
            rd_ios: u64::MAX - 4,
            rd_ticks: 4_294_967_000,
            io_ticks: 4_294_967_000,
            time_in_queue: 4_294_967_295,
            wr_ticks: 10,
            in_flight: 3,
            ..Default::default()
        };
        let b = Counters {
            rd_ios: 5,
            rd_ticks: 704,
            io_ticks: 704,
            time_in_queue: 99,
            wr_ticks: 20,
            in_flight: 1,
            ..Default::default()
        };
        let d = a.delta(&b);
        assert_eq!(d.io_ticks, 1000);
        assert_eq!(d.rd_ticks, 1000);
        assert_eq!(d.time_in_queue, 100);
        assert_eq!(d.wr_ticks, 10, "no wrap: plain difference");
        assert_eq!(d.rd_ios, 10, "64-bit count wraps at 2^64");
        assert_eq!(d.in_flight, 1, "a gauge: the later value");
        // The same through parsed lines, as sweep reads them.
        let before = parse("8 0 sda 1 0 8 4294967000 1 0 8 0 0 4294967000 4294967295");
        let after = parse("8 0 sda 2 0 16 704 1 0 8 0 0 704 99");
        assert_eq!(before["sda"].delta(&after["sda"]).io_ticks, 1000);
    }
}
