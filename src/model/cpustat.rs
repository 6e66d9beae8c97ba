//! `/proc/stat`'s host-wide CPU time counters (the `cpu` line), parsed by
//! procfs-core `KernelStats`, for before/after snapshots around a measured
//! window: where the host's CPU time went while innotune measured, and above
//! all how much of it the hypervisor took (steal).
//!
//! Why a measurement tool needs this: on a shared VM, steal is the biggest
//! source of run-to-run noise that neither the tool's own counters nor fio's
//! or sysbench's reports show. Measured on the development VM (an AMD EPYC
//! host, 2026-11-26, random 16 KiB writes at depth 16 on a RAM-backed loop
//! device): steal was 15–30 % of CPU time during 8 s runs, and fio's IOPS
//! moved from 38k to 55k with it. A result that states its window's steal
//! can be compared with another honestly, or repeated.

use crate::host::Host;
use anyhow::{Context, Result};
use procfs_core::{ExplicitSystemInfo, FromReadSI, KernelStats};
use serde::{Deserialize, Serialize};

/// Cumulative ticks of all CPUs since boot, per state (`/proc/stat` `cpu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuTicks {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

/// Where the host's CPU time went over a window, as shares of all CPUs'
/// time (the four add up to 100, give or take rounding).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct HostCpu {
    /// user + nice + system + irq + softirq: CPU the host spent running
    /// anything (innotune, the kernel's I/O path, other processes).
    pub busy_pct: f64,
    /// Idle with a task waiting for I/O (a share of idle time, not of work).
    pub iowait_pct: f64,
    /// Taken by the hypervisor for other guests while this VM wanted to
    /// run: 0 on bare metal.
    pub steal_pct: f64,
    pub idle_pct: f64,
}

/// Steal at or above this share of the window makes a result a warning.
/// On the development VM, runs below it varied by up to ±8 % among
/// themselves; runs at 7–13 % steal ran 10–28 % below them
/// (bench/RESULTS.md, host CPU entry of 2026-11-26 22:52).
pub const STEAL_WARN_PCT: f64 = 5.0;

/// Parse `/proc/stat` text. procfs-core needs the `cpu`, `ctxt`, `btime`
/// and `processes` lines every kernel writes; a file missing them is an
/// error with its reason.
pub fn parse(text: &str) -> Result<CpuTicks, String> {
    // Only shares are computed, so the tick rate does not matter; procfs-core
    // asks for one to convert ticks to time, which we never do.
    let si = ExplicitSystemInfo {
        boot_time_secs: 0,
        ticks_per_second: 100,
        page_size: 4096,
        is_little_endian: cfg!(target_endian = "little"),
    };
    let k = KernelStats::from_read(text.as_bytes(), &si).map_err(super::proc_error)?;
    let t = k.total;
    Ok(CpuTicks {
        user: t.user,
        nice: t.nice,
        system: t.system,
        idle: t.idle,
        iowait: t.iowait.unwrap_or(0),
        irq: t.irq.unwrap_or(0),
        softirq: t.softirq.unwrap_or(0),
        steal: t.steal.unwrap_or(0),
    })
}

/// Read `/proc/stat` now.
pub fn read(host: &Host) -> Result<CpuTicks> {
    let path = host.path("/proc/stat");
    let text = host
        .read("/proc/stat")
        .with_context(|| format!("reading {}", path.display()))?;
    parse(&text)
        .map_err(|e| anyhow::anyhow!(e))
        .with_context(|| format!("parsing {}", path.display()))
}

impl CpuTicks {
    /// Shares of the time between `self` and `later`; `None` when no tick
    /// elapsed (a window shorter than a tick says nothing). Each counter is
    /// subtracted saturating: the kernel documents that iowait can go back.
    pub fn delta(&self, later: &CpuTicks) -> Option<HostCpu> {
        let d = |a: u64, b: u64| b.saturating_sub(a) as f64;
        let busy = d(self.user, later.user)
            + d(self.nice, later.nice)
            + d(self.system, later.system)
            + d(self.irq, later.irq)
            + d(self.softirq, later.softirq);
        let iowait = d(self.iowait, later.iowait);
        let steal = d(self.steal, later.steal);
        let idle = d(self.idle, later.idle);
        let total = busy + iowait + steal + idle;
        if total <= 0.0 {
            return None;
        }
        let pct = |x: f64| 100.0 * x / total;
        Some(HostCpu {
            busy_pct: pct(busy),
            iowait_pct: pct(iowait),
            steal_pct: pct(steal),
            idle_pct: pct(idle),
        })
    }
}

impl HostCpu {
    /// One line for reports: `busy 45 %, iowait 24 %, steal 17 %, idle 14 %`.
    pub fn summary(&self) -> String {
        format!(
            "busy {:.0} %, iowait {:.0} %, steal {:.0} %, idle {:.0} % (all CPUs)",
            self.busy_pct, self.iowait_pct, self.steal_pct, self.idle_pct
        )
    }

    /// The warning a result carries when the hypervisor took enough CPU
    /// time to move it, naming what to do; `None` below [`STEAL_WARN_PCT`].
    pub fn steal_warning(&self) -> Option<String> {
        (self.steal_pct >= STEAL_WARN_PCT).then(|| {
            format!(
                "the hypervisor took {:.0} % of this VM's CPU time during the window (steal): \
                 figures move with it, so compare only runs with similar steal, or repeat at a quieter time",
                self.steal_pct
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "cpu  100 5 200 1000 50 0 10 40 0 0\n\
                     cpu0 50 2 100 500 25 0 5 20 0 0\n\
                     intr 1 2 3\nctxt 900\nbtime 1700000000\nprocesses 77\n\
                     procs_running 2\nprocs_blocked 0\n";

    #[test]
    fn parses_the_cpu_line_and_takes_shares_of_a_window() {
        let a = parse(A).unwrap();
        assert_eq!((a.user, a.system, a.idle, a.iowait), (100, 200, 1000, 50));
        assert_eq!((a.softirq, a.steal), (10, 40));
        // 200 ticks later: 60 busy, 30 iowait, 40 steal, 70 idle.
        let b = CpuTicks {
            user: 140,
            nice: 5,
            system: 215,
            idle: 1070,
            iowait: 80,
            irq: 0,
            softirq: 15,
            steal: 80,
        };
        let s = a.delta(&b).unwrap();
        assert!((s.busy_pct - 30.0).abs() < 1e-9, "{s:?}");
        assert!((s.iowait_pct - 15.0).abs() < 1e-9);
        assert!((s.steal_pct - 20.0).abs() < 1e-9);
        assert!((s.idle_pct - 35.0).abs() < 1e-9);
        assert!(s.steal_warning().unwrap().contains("20 %"));
        assert!(s.summary().contains("steal 20 %"));
    }

    #[test]
    fn no_elapsed_tick_is_no_share_and_iowait_going_back_is_not_negative() {
        let a = parse(A).unwrap();
        assert_eq!(a.delta(&a), None);
        let mut b = a;
        b.iowait -= 10; // documented: iowait may decrease
        b.idle += 100;
        let s = a.delta(&b).unwrap();
        assert_eq!((s.iowait_pct, s.idle_pct), (0.0, 100.0));
        assert_eq!(s.steal_warning(), None);
    }

    #[test]
    fn old_kernels_without_steal_and_bad_files() {
        // 2.6.0-era line: no steal column; steal counts as 0.
        let old = "cpu 1 2 3 4 5 6 7\nctxt 1\nbtime 1\nprocesses 1\n";
        assert_eq!(parse(old).unwrap().steal, 0);
        assert!(parse("intr 1\nctxt 1\n").is_err(), "no cpu line");
        assert!(parse("cpu x y z w\nctxt 1\nbtime 1\nprocesses 1\n").is_err());
    }
}
