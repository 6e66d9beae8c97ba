//! `/proc/meminfo`, parsed by procfs-core from bytes read through [`Host`]
//! (so `--root` replays a fixture's).

use crate::host::{Host, Known};
use procfs_core::FromRead;
use serde::Serialize;

/// The memory figures innotune uses, in bytes.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Memory {
    /// MemTotal: RAM the kernel manages.
    pub total_bytes: u64,
    /// MemAvailable (kernel ≥ 3.14): what new allocations can get without swapping.
    pub available_bytes: Known<u64>,
    pub swap_total_bytes: u64,
    /// Dirty page cache waiting for writeback.
    pub dirty_bytes: u64,
    pub hugepages_total: Known<u64>,
    /// Size of one huge page.
    pub hugepage_size_bytes: Known<u64>,
}

/// The lines procfs-core requires (every kernel since 2.6 writes them),
/// checked first so a missing one is named.
const REQUIRED: &[&str] = &[
    "MemTotal:",
    "MemFree:",
    "Buffers:",
    "Cached:",
    "SwapCached:",
    "Active:",
    "Inactive:",
    "SwapTotal:",
    "SwapFree:",
    "Dirty:",
    "Writeback:",
    "Mapped:",
    "Slab:",
    "Committed_AS:",
    "VmallocTotal:",
    "VmallocUsed:",
    "VmallocChunk:",
];

/// Parse meminfo text. procfs-core needs the fields every kernel since 2.6
/// writes; a file missing them (a trimmed fixture, an odd container view)
/// is an error with procfs-core's reason.
pub fn parse(text: &str) -> Result<Memory, String> {
    // procfs-core slices each key at its last byte, which is only safe on
    // ASCII; the kernel writes nothing else, a corrupt tree might.
    if !text.is_ascii() {
        return Err("not ASCII text".into());
    }
    if let Some(k) = super::first_missing(text, REQUIRED) {
        return Err(format!("no {} line", k.trim_end_matches(':')));
    }
    let m = procfs_core::Meminfo::from_read(text.as_bytes()).map_err(super::proc_error)?;
    let missing = |what: &str| Known::unknown(format!("/proc/meminfo has no {what} line"));
    Ok(Memory {
        total_bytes: m.mem_total,
        available_bytes: m
            .mem_available
            .map(Known::Value)
            .unwrap_or_else(|| missing("MemAvailable")),
        swap_total_bytes: m.swap_total,
        dirty_bytes: m.dirty,
        hugepages_total: m
            .hugepages_total
            .map(Known::Value)
            .unwrap_or_else(|| missing("HugePages_Total")),
        hugepage_size_bytes: m
            .hugepagesize
            .map(Known::Value)
            .unwrap_or_else(|| missing("Hugepagesize")),
    })
}

pub fn read(host: &Host) -> Known<Memory> {
    match host.read("/proc/meminfo") {
        Ok(t) => match parse(&t) {
            Ok(m) => Known::Value(m),
            Err(e) => Known::unknown(format!("/proc/meminfo: {e}")),
        },
        Err(e) => Known::unknown(format!("/proc/meminfo: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real meminfo (Debian 12, 6.1 kernel), abridged to what procfs-core requires plus a few.
    pub const SAMPLE: &str = "MemTotal:       24684084 kB\nMemFree:        8228028 kB\nMemAvailable:   20123456 kB\n\
Buffers:          312340 kB\nCached:         11234560 kB\nSwapCached:            0 kB\nActive:          6123456 kB\n\
Inactive:        9123456 kB\nSwapTotal:             0 kB\nSwapFree:              0 kB\nDirty:               132 kB\n\
Writeback:             0 kB\nMapped:           512340 kB\nSlab:             812340 kB\nCommitted_AS:    4123456 kB\n\
VmallocTotal:   34359738367 kB\nVmallocUsed:       61234 kB\nVmallocChunk:          0 kB\nHugePages_Total:       0\n\
Hugepagesize:       2048 kB\n";

    #[test]
    fn bytes_from_kib_and_missing_fields_are_errors() {
        let m = parse(SAMPLE).unwrap();
        assert_eq!(m.total_bytes, 24684084 * 1024);
        assert_eq!(m.available_bytes, Known::Value(20123456 * 1024));
        assert_eq!(m.dirty_bytes, 132 * 1024);
        assert_eq!(m.hugepages_total, Known::Value(0));
        assert_eq!(m.hugepage_size_bytes, Known::Value(2 << 20));
        assert_eq!(parse("MemTotal: 1 kB\n").unwrap_err(), "no MemFree line");
        let bad = SAMPLE.replace("Dirty:               132 kB", "Dirty:               x kB");
        assert!(
            parse(&bad)
                .unwrap_err()
                .starts_with("not in the kernel's format"),
            "{bad}"
        );
        assert!(parse("MemTotal:  é kB\n").is_err());
        assert!(parse("").is_err());
    }
}
