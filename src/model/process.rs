//! Processes, from `/proc/PID/*` read through [`Host`]: which servers run,
//! their command line, limits and start time. `limits` and `stat` are parsed
//! by procfs-core.

use crate::host::{Host, Known};
use procfs_core::FromRead;
use serde::{Serialize, Serializer};

/// Kernel command names of the servers innotune looks after.
pub const SERVER_COMMS: [&str; 2] = ["mysqld", "mariadbd"];

/// Pids of every running mysqld/mariadbd, lowest first (by `/proc/PID/comm`).
/// Shared by probe, checksum's "is a server using this file" check and the
/// datadir refusals.
pub fn server_pids(host: &Host) -> Vec<u32> {
    let mut pids: Vec<u32> = host
        .list("/proc")
        .unwrap_or_default()
        .iter()
        .filter_map(|n| n.parse().ok())
        .filter(|pid| comm(host, *pid).is_ok_and(|c| SERVER_COMMS.contains(&c.as_str())))
        .collect();
    pids.sort_unstable();
    pids
}

/// `/proc/PID/comm`, trimmed.
pub fn comm(host: &Host, pid: u32) -> std::io::Result<String> {
    host.read_trim(format!("/proc/{pid}/comm"))
}

/// The argv of a process (`/proc/PID/cmdline`, NUL-separated).
pub fn cmdline(host: &Host, pid: u32) -> std::io::Result<Vec<String>> {
    let raw = std::fs::read(host.path(format!("/proc/{pid}/cmdline")))?;
    Ok(raw
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect())
}

/// A soft/hard rlimit pair.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Limit {
    pub soft: LimitValue,
    pub hard: LimitValue,
}

/// A number, or `"unlimited"` in JSON.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LimitValue {
    Value(u64),
    Unlimited,
}

impl Serialize for LimitValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            LimitValue::Value(v) => s.serialize_u64(*v),
            LimitValue::Unlimited => s.serialize_str("unlimited"),
        }
    }
}

impl std::fmt::Display for LimitValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LimitValue::Value(v) => write!(f, "{v}"),
            LimitValue::Unlimited => write!(f, "unlimited"),
        }
    }
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (hard {})", self.soft, self.hard)
    }
}

impl From<procfs_core::process::Limit> for Limit {
    fn from(l: procfs_core::process::Limit) -> Limit {
        let v = |x: procfs_core::process::LimitValue| match x {
            procfs_core::process::LimitValue::Unlimited => LimitValue::Unlimited,
            procfs_core::process::LimitValue::Value(n) => LimitValue::Value(n),
        };
        Limit {
            soft: v(l.soft_limit),
            hard: v(l.hard_limit),
        }
    }
}

/// The limits of a process that matter to a database server.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    pub open_files: Limit,
    pub processes: Limit,
    pub locked_memory_bytes: Limit,
}

/// The rows procfs-core requires, checked first so a missing one is named.
const LIMIT_ROWS: &[&str] = &[
    "Max cpu time",
    "Max file size",
    "Max data size",
    "Max stack size",
    "Max core file size",
    "Max resident set",
    "Max processes",
    "Max open files",
    "Max locked memory",
    "Max address space",
    "Max file locks",
    "Max pending signals",
    "Max msgqueue size",
    "Max nice priority",
    "Max realtime priority",
    "Max realtime timeout",
];

/// Parse `/proc/PID/limits` text with procfs-core. It wants every one of
/// the 16 rows the kernel has written since 2.6.25.
pub fn parse_limits(text: &str) -> Result<Limits, String> {
    // procfs-core indexes each row from its end (`len - 3`): a row with
    // fewer than 4 words would underflow, and the kernel writes none.
    let rows: String = text
        .lines()
        .filter(|l| l.split_whitespace().count() >= 4)
        .map(|l| format!("{l}\n"))
        .collect();
    if let Some(k) = super::first_missing(&rows, LIMIT_ROWS) {
        return Err(format!("no {k:?} line"));
    }
    let l = procfs_core::process::Limits::from_read(rows.as_bytes()).map_err(super::proc_error)?;
    Ok(Limits {
        open_files: l.max_open_files.into(),
        processes: l.max_processes.into(),
        locked_memory_bytes: l.max_locked_memory.into(),
    })
}

pub fn limits(host: &Host, pid: u32) -> Known<Limits> {
    let p = format!("/proc/{pid}/limits");
    match host.read(&p) {
        Ok(t) => match parse_limits(&t) {
            Ok(l) => Known::Value(l),
            Err(e) => Known::unknown(format!("{p}: {e}")),
        },
        Err(e) => Known::unknown(format!("{p}: {e}")),
    }
}

/// Start time of a process in clock ticks since boot (`/proc/PID/stat`
/// field 22): with the pid, it names one process even after the pid is
/// reused.
pub fn start_ticks(host: &Host, pid: u32) -> Option<u64> {
    let text = host.read(format!("/proc/{pid}/stat")).ok()?;
    parse_start_ticks(&text)
}

/// Start time of a process that is still running: [`start_ticks`], or
/// `None` when it has exited (a zombie, state `Z` or `X`, has exited: it
/// keeps its pid only until its parent reaps it).
pub fn live_start_ticks(host: &Host, pid: u32) -> Option<u64> {
    let text = host.read(format!("/proc/{pid}/stat")).ok()?;
    let stat = parse_stat(&text)?;
    (!matches!(stat.state, 'Z' | 'X')).then_some(stat.starttime)
}

/// Field 22 of a stat line, parsed by procfs-core.
pub fn parse_start_ticks(text: &str) -> Option<u64> {
    parse_stat(text).map(|s| s.starttime)
}

/// A stat line, parsed by procfs-core.
fn parse_stat(text: &str) -> Option<procfs_core::process::Stat> {
    // procfs-core slices around the `(comm)` parentheses without checking
    // they are where the kernel puts them; check first.
    let t = text.trim();
    let open = t.find('(')?;
    let close = t.rfind(')')?;
    if open < 2
        || close < open
        || close + 2 > t.len()
        || !t.is_char_boundary(open - 1)
        || !t.is_char_boundary(close + 2)
    {
        return None;
    }
    procfs_core::process::Stat::from_read(t.as_bytes()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: &str =
        "Limit                     Soft Limit           Hard Limit           Units     \n\
Max cpu time              unlimited            unlimited            seconds   \n\
Max file size             unlimited            unlimited            bytes     \n\
Max data size             unlimited            unlimited            bytes     \n\
Max stack size            8388608              unlimited            bytes     \n\
Max core file size        0                    unlimited            bytes     \n\
Max resident set          unlimited            unlimited            bytes     \n\
Max processes             96365                96365                processes \n\
Max open files            20000                unlimited            files     \n\
Max locked memory         8388608              8388608              bytes     \n\
Max address space         unlimited            unlimited            bytes     \n\
Max file locks            unlimited            unlimited            locks     \n\
Max pending signals       96365                96365                signals   \n\
Max msgqueue size         819200               819200               bytes     \n\
Max nice priority         0                    0                    \n\
Max realtime priority     0                    0                    \n\
Max realtime timeout      unlimited            unlimited            us        \n";

    #[test]
    fn limits_parse_and_bad_text_is_an_error_not_a_panic() {
        let l = parse_limits(LIMITS).unwrap();
        assert_eq!(l.open_files.soft, LimitValue::Value(20000));
        assert_eq!(l.open_files.hard, LimitValue::Unlimited);
        assert_eq!(l.processes.soft, LimitValue::Value(96365));
        for bad in ["", "\n\n", "Max open files x", "Max open files 1 2 files\n"] {
            assert!(parse_limits(bad).is_err(), "{bad:?}");
        }
        let e = parse_limits(&LIMITS.replace("Max open files ", "Max open filez ")).unwrap_err();
        assert_eq!(e, "no \"Max open files\" line");
        let e = parse_limits(&LIMITS.replace("20000 ", "2x000 ")).unwrap_err();
        assert!(e.starts_with("not in the kernel's format"), "{e}");
    }

    #[test]
    fn start_ticks_from_stat_even_with_spaces_and_parens_in_comm() {
        let stat = "4242 (my (odd) d) S 1 4242 4242 0 -1 4194560 1234 0 0 0 12 5 0 0 20 0 37 0 987654 2147483648 12345 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
        assert_eq!(parse_start_ticks(stat), Some(987654));
        for bad in [
            "",
            "(",
            ")",
            "1 (x)",
            "(x) S",
            "12 x) S (y",
            "é(x) S",
            "1 (x)é",
        ] {
            assert_eq!(parse_start_ticks(bad), None, "{bad:?}");
        }
    }
}
