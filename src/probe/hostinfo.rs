//! Host-wide settings that shape InnoDB's I/O: CPUs, memory, NUMA, the VM
//! writeback and swap knobs, transparent hugepages, file/AIO limits, and the
//! kernel command line.

use crate::host::{Host, Known};
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostInfo {
    pub kernel_release: Known<String>,
    /// Online CPUs (/sys/devices/system/cpu/online).
    pub cpus: Known<u64>,
    /// MemTotal from /proc/meminfo, in bytes.
    pub memory_bytes: Known<u64>,
    /// Online NUMA nodes (/sys/devices/system/node/online).
    pub numa_nodes: Known<u64>,
    pub vm_swappiness: Known<u64>,
    pub vm_dirty_ratio: Known<u64>,
    pub vm_dirty_background_ratio: Known<u64>,
    /// When non-zero, overrides vm_dirty_ratio.
    pub vm_dirty_bytes: Known<u64>,
    /// When non-zero, overrides vm_dirty_background_ratio.
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
pub fn count_ranges(s: &str) -> Option<u64> {
    let mut n = 0;
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u64, u64) = (a.parse().ok()?, b.parse().ok()?);
                if b < a {
                    return None;
                }
                n += b - a + 1;
            }
            None => {
                part.parse::<u64>().ok()?;
                n += 1
            }
        }
    }
    Some(n)
}

/// The bracketed (active) choice of a sysfs multiple-choice file,
/// e.g. `always [madvise] never` → `madvise`.
pub fn bracketed(s: &str) -> Option<String> {
    let a = s.find('[')?;
    let b = s[a..].find(']')? + a;
    Some(s[a + 1..b].to_string())
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

fn choice(host: &Host, p: &str) -> Known<String> {
    match host.read_trim(p) {
        Ok(s) => match bracketed(&s) {
            Some(v) => Known::Value(v),
            None => Known::unknown(format!("{p}: no [active] value in {s:?}")),
        },
        Err(e) => Known::unknown(format!("{p}: {e}")),
    }
}

fn mem_total(host: &Host) -> Known<u64> {
    let p = "/proc/meminfo";
    match host.read(p) {
        Ok(s) => {
            for l in s.lines() {
                if let Some(rest) = l.strip_prefix("MemTotal:") {
                    let kb = rest.trim().trim_end_matches("kB").trim();
                    if let Ok(v) = kb.parse::<u64>() {
                        return Known::Value(v * 1024);
                    }
                }
            }
            Known::unknown(format!("{p}: no MemTotal line"))
        }
        Err(e) => Known::unknown(format!("{p}: {e}")),
    }
}

pub fn read(host: &Host) -> HostInfo {
    let cmdline = Known::from_io(host.read_trim("/proc/cmdline"), "/proc/cmdline");
    let cmdline_elevator = cmdline.value().and_then(|c| {
        c.split_whitespace()
            .find_map(|w| w.strip_prefix("elevator="))
            .map(str::to_string)
    });
    HostInfo {
        kernel_release: Known::from_io(
            host.read_trim("/proc/sys/kernel/osrelease"),
            "/proc/sys/kernel/osrelease",
        ),
        cpus: range_count(host, "/sys/devices/system/cpu/online"),
        memory_bytes: mem_total(host),
        numa_nodes: range_count(host, "/sys/devices/system/node/online"),
        vm_swappiness: num(host, "/proc/sys/vm/swappiness"),
        vm_dirty_ratio: num(host, "/proc/sys/vm/dirty_ratio"),
        vm_dirty_background_ratio: num(host, "/proc/sys/vm/dirty_background_ratio"),
        vm_dirty_bytes: num(host, "/proc/sys/vm/dirty_bytes"),
        vm_dirty_background_bytes: num(host, "/proc/sys/vm/dirty_background_bytes"),
        thp_enabled: choice(host, "/sys/kernel/mm/transparent_hugepage/enabled"),
        thp_defrag: choice(host, "/sys/kernel/mm/transparent_hugepage/defrag"),
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
    fn ranges_and_brackets() {
        assert_eq!(count_ranges("0-1"), Some(2));
        assert_eq!(count_ranges("0-3,8-11,16"), Some(9));
        assert_eq!(count_ranges("0"), Some(1));
        assert_eq!(count_ranges("x"), None);
        assert_eq!(
            bracketed("always [madvise] never").as_deref(),
            Some("madvise")
        );
        assert_eq!(
            bracketed("always defer defer+madvise [madvise] never").as_deref(),
            Some("madvise")
        );
        assert_eq!(bracketed("never"), None);
    }
}
