//! Host-wide settings that shape InnoDB's I/O: CPUs, memory, NUMA, the VM
//! writeback and swap knobs, transparent hugepages, file/AIO limits, and the
//! kernel command line.

use super::{choice, meminfo};
use crate::host::{Host, Known};
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct System {
    pub kernel_release: Known<String>,
    /// Online CPUs (/sys/devices/system/cpu/online).
    pub cpus: Known<u64>,
    /// MemTotal from /proc/meminfo, in bytes.
    pub memory_bytes: Known<u64>,
    /// Online NUMA nodes (/sys/devices/system/node/online).
    pub numa_nodes: Known<u64>,
    pub vm_swappiness: Known<u64>,
    /// vm.dirty_ratio, percent of reclaimable memory.
    pub vm_dirty_ratio_pct: Known<u64>,
    /// vm.dirty_background_ratio, percent of reclaimable memory.
    pub vm_dirty_background_ratio_pct: Known<u64>,
    /// When non-zero, overrides vm.dirty_ratio.
    pub vm_dirty_bytes: Known<u64>,
    /// When non-zero, overrides vm.dirty_background_ratio.
    pub vm_dirty_background_bytes: Known<u64>,
    pub thp_enabled: Known<String>,
    pub thp_defrag: Known<String>,
    pub fs_aio_max_nr: Known<u64>,
    pub fs_file_max: Known<u64>,
    pub fs_nr_open: Known<u64>,
    pub kernel_cmdline: Known<String>,
    /// Value of an `elevator=` on the kernel command line, if any. blk-mq
    /// kernels ignore it (the kernel only warns); schedulers are per queue.
    pub cmdline_elevator: Option<String>,
}

/// Count the CPUs or nodes in a kernel range list such as `0-3,8-11`.
/// Hand-written: these lists live in sysfs, which procfs-core does not parse.
pub fn count_ranges(s: &str) -> Option<u64> {
    let mut n: u64 = 0;
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u64, u64) = (a.parse().ok()?, b.parse().ok()?);
                n = n.checked_add(b.checked_sub(a)?.checked_add(1)?)?;
            }
            None => {
                part.parse::<u64>().ok()?;
                n = n.checked_add(1)?;
            }
        }
    }
    Some(n)
}

/// The ids in a kernel range list (`0-2,8` → 0, 1, 2, 8), ascending.
pub fn parse_ranges(s: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.parse::<u32>().ok()?, b.parse::<u32>().ok()?),
            None => {
                let a = part.parse::<u32>().ok()?;
                (a, a)
            }
        };
        if b < a || b - a > 65_536 {
            return None;
        }
        out.extend(a..=b);
    }
    out.sort_unstable();
    out.dedup();
    Some(out)
}

fn range_count(host: &Host, p: &str) -> Known<u64> {
    match host.read_trim(p) {
        Ok(s) => match count_ranges(&s) {
            Some(n) => Known::Value(n),
            None => Known::unknown(format!("{p}: not a range list: {s:?}")),
        },
        Err(e) => Known::unknown(format!("{p}: {e}")),
    }
}

fn num(host: &Host, p: &str) -> Known<u64> {
    Known::from_io(host.read_u64(p), p)
}

fn active_choice(host: &Host, p: &str) -> Known<String> {
    match host.read(p) {
        Ok(s) => match choice::parse(&s) {
            Some(c) if c.bracketed => Known::Value(c.active),
            _ => Known::unknown(format!("{p}: no [active] value in {:?}", s.trim())),
        },
        Err(e) => Known::unknown(format!("{p}: {e}")),
    }
}

pub fn read(host: &Host) -> System {
    let cmdline = Known::from_io(host.read_trim("/proc/cmdline"), "/proc/cmdline");
    let cmdline_elevator = cmdline.value().and_then(|c| {
        c.split_whitespace()
            .find_map(|w| w.strip_prefix("elevator="))
            .map(str::to_string)
    });
    let memory_bytes = match meminfo::read(host) {
        Known::Value(m) => Known::Value(m.total_bytes),
        Known::Unknown { unknown } => Known::Unknown { unknown },
    };
    System {
        kernel_release: Known::from_io(
            host.read_trim("/proc/sys/kernel/osrelease"),
            "/proc/sys/kernel/osrelease",
        ),
        cpus: range_count(host, "/sys/devices/system/cpu/online"),
        memory_bytes,
        numa_nodes: range_count(host, "/sys/devices/system/node/online"),
        vm_swappiness: num(host, "/proc/sys/vm/swappiness"),
        vm_dirty_ratio_pct: num(host, "/proc/sys/vm/dirty_ratio"),
        vm_dirty_background_ratio_pct: num(host, "/proc/sys/vm/dirty_background_ratio"),
        vm_dirty_bytes: num(host, "/proc/sys/vm/dirty_bytes"),
        vm_dirty_background_bytes: num(host, "/proc/sys/vm/dirty_background_bytes"),
        thp_enabled: active_choice(host, "/sys/kernel/mm/transparent_hugepage/enabled"),
        thp_defrag: active_choice(host, "/sys/kernel/mm/transparent_hugepage/defrag"),
        fs_aio_max_nr: num(host, "/proc/sys/fs/aio-max-nr"),
        fs_file_max: num(host, "/proc/sys/fs/file-max"),
        fs_nr_open: num(host, "/proc/sys/fs/nr_open"),
        kernel_cmdline: cmdline,
        cmdline_elevator,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(count_ranges("0-1"), Some(2));
        assert_eq!(count_ranges("0-3,8-11,16"), Some(9));
        assert_eq!(count_ranges("0"), Some(1));
        assert_eq!(count_ranges("x"), None);
        assert_eq!(count_ranges("3-1"), None);
        assert_eq!(count_ranges("0-18446744073709551615"), None);
        assert_eq!(parse_ranges("0-2,8"), Some(vec![0, 1, 2, 8]));
        assert_eq!(parse_ranges(""), Some(vec![]));
        assert_eq!(parse_ranges("3-1"), None);
        assert_eq!(parse_ranges("0-4294967295"), None);
    }
}
