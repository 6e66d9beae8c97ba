//! Processes, from `/proc/PID/*` read through [`Host`]: which servers run,
//! their command line, limits and start time. `limits` and `stat` are parsed
//! by procfs-core.

use crate::host::{Host, Known};
use procfs_core::FromRead;
use serde::{Serialize, Serializer};
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

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

/// Is a process with this kernel command name running (`irqbalance`)?
pub fn running_comm(host: &Host, name: &str) -> bool {
    host.list("/proc")
        .unwrap_or_default()
        .iter()
        .filter_map(|n| n.parse::<u32>().ok())
        .any(|pid| comm(host, pid).is_ok_and(|c| c == name))
}

/// `/proc/PID/comm`, trimmed.
pub fn comm(host: &Host, pid: u32) -> std::io::Result<String> {
    host.read_trim(format!("/proc/{pid}/comm"))
}

/// The argv of a process (`/proc/PID/cmdline`, NUL-separated), byte for
/// byte: what proves a process is the one innotune started.
pub fn argv(host: &Host, pid: u32) -> std::io::Result<Vec<OsString>> {
    Ok(parse_cmdline(
        &host.read_bytes(format!("/proc/{pid}/cmdline"))?,
    ))
}

/// Split cmdline bytes into arguments (empty ones dropped).
pub fn parse_cmdline(raw: &[u8]) -> Vec<OsString> {
    raw.split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| OsString::from_vec(a.to_vec()))
        .collect()
}

/// The argv of a process as text (invalid UTF-8 replaced), for reports
/// and option lookups.
pub fn cmdline(host: &Host, pid: u32) -> std::io::Result<Vec<String>> {
    Ok(argv(host, pid)?
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect())
}

/// The systemd service a process runs in (`mariadb.service`): the last
/// `*.service` component of its cgroup paths (`/proc/PID/cgroup`, parsed
/// by procfs-core `ProcessCGroups`).
pub fn systemd_service(host: &Host, pid: u32) -> Option<String> {
    parse_service(&host.read(format!("/proc/{pid}/cgroup")).ok()?)
}

/// [`systemd_service`] from the text of a cgroup file.
pub fn parse_service(text: &str) -> Option<String> {
    use procfs_core::FromBufRead;
    let groups = procfs_core::ProcessCGroups::from_buf_read(text.as_bytes()).ok()?;
    groups
        .0
        .iter()
        .flat_map(|g| g.pathname.split('/'))
        .rfind(|c| c.ends_with(".service"))
        .map(str::to_string)
}

/// A soft/hard rlimit pair.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
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

impl<'de> serde::Deserialize<'de> for LimitValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Value(u64),
            Word(String),
        }
        match <Raw as serde::Deserialize>::deserialize(d)? {
            Raw::Value(v) => Ok(LimitValue::Value(v)),
            Raw::Word(w) if w == "unlimited" => Ok(LimitValue::Unlimited),
            Raw::Word(w) => Err(serde::de::Error::custom(format!(
                "limit {w:?} is neither a number nor \"unlimited\""
            ))),
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

/// What innotune needs from `/proc/PID/stat`, parsed by procfs-core: the
/// one reader of that file (the journal's process identity, sandbox and
/// server liveness, the argv span that `db::argv` wipes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    pub pid: i32,
    /// The command name between the parentheses (may hold spaces and `)`).
    pub comm: String,
    /// Field 3: `R`, `S`, `D`, `Z` (zombie), `X` (dead), …
    pub state: char,
    /// Field 22: start time in clock ticks since boot. With the pid, it
    /// names one process even after the pid is reused.
    pub start_ticks: u64,
    /// Fields 48 and 49 (Linux ≥ 3.5): where the kernel serves
    /// /proc/PID/cmdline from, in the process's own memory.
    pub arg_start: Option<u64>,
    pub arg_end: Option<u64>,
}

impl Stat {
    /// The process has exited: a zombie (`Z`) or dead (`X`) entry.
    pub fn has_exited(&self) -> bool {
        matches!(self.state, 'Z' | 'X')
    }
}

/// Parse a stat line with procfs-core; `None` when it is not in the
/// kernel's format.
pub fn parse_stat(text: &str) -> Option<Stat> {
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
    let s = procfs_core::process::Stat::from_read(t.as_bytes()).ok()?;
    Some(Stat {
        pid: s.pid,
        comm: s.comm,
        state: s.state,
        start_ticks: s.starttime,
        arg_start: s.arg_start,
        arg_end: s.arg_end,
    })
}

/// `/proc/PID/stat` of `pid`, parsed; `None` when there is no such
/// process (or the file is not in the kernel's format).
pub fn stat(host: &Host, pid: u32) -> Option<Stat> {
    parse_stat(&host.read(format!("/proc/{pid}/stat")).ok()?)
}

/// `/proc/self/stat`: this process, as the /proc mounted in its own
/// namespace sees it (pass `Host::live()`).
pub fn own_stat(host: &Host) -> Option<Stat> {
    parse_stat(&host.read("/proc/self/stat").ok()?)
}

/// Start time of a process that is still running, in clock ticks since
/// boot; `None` when it is gone or has exited (a zombie, state `Z` or `X`,
/// keeps its pid only until its parent reaps it).
pub fn live_start_ticks(host: &Host, pid: u32) -> Option<u64> {
    stat(host, pid)
        .filter(|s| !s.has_exited())
        .map(|s| s.start_ticks)
}

/// Is `pid` a running process (not gone, not a zombie)?
pub fn is_running(host: &Host, pid: u32) -> bool {
    live_start_ticks(host, pid).is_some()
}

/// `/proc/PID/exe`: the binary a process runs, as a host path.
pub fn exe(host: &Host, pid: u32) -> std::io::Result<std::path::PathBuf> {
    host.resolve(format!("/proc/{pid}/exe"))
}

/// One mapping of a process's address space, from `/proc/PID/smaps`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    /// Its address range, `start..end`.
    pub start: u64,
    pub end: u64,
    /// Anonymous memory in transparent huge pages (`AnonHugePages`), bytes.
    pub anon_huge_bytes: u64,
}

/// Parse smaps text with procfs-core (`MemoryMaps`).
pub fn parse_smaps(text: &str) -> Result<Vec<Mapping>, String> {
    use procfs_core::FromBufRead;
    let maps = procfs_core::process::MemoryMaps::from_buf_read(text.as_bytes())
        .map_err(super::proc_error)?;
    Ok(maps
        .into_iter()
        .map(|m| Mapping {
            start: m.address.0,
            end: m.address.1,
            anon_huge_bytes: m.extension.map.get("AnonHugePages").copied().unwrap_or(0),
        })
        .collect())
}

/// This process's mappings (`/proc/self/smaps`; pass `Host::live()`).
pub fn own_smaps(host: &Host) -> Result<Vec<Mapping>, String> {
    let t = host
        .read("/proc/self/smaps")
        .map_err(|e| format!("/proc/self/smaps: {e}"))?;
    parse_smaps(&t).map_err(|e| format!("/proc/self/smaps: {e}"))
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
    fn service_from_cgroup_v1_and_v2() {
        assert_eq!(
            parse_service("0::/system.slice/mariadb.service\n").as_deref(),
            Some("mariadb.service")
        );
        let v1 =
            "12:pids:/system.slice/mysql.service\n1:name=systemd:/system.slice/mysql.service/x\n";
        assert_eq!(parse_service(v1).as_deref(), Some("mysql.service"));
        assert_eq!(
            parse_service("0::/user.slice/user-1000.slice/session-2.scope\n"),
            None
        );
        assert_eq!(
            parse_service("x::/a.service\n"),
            None,
            "not the kernel's format"
        );
    }

    #[test]
    fn smaps_ranges_and_huge_pages() {
        let t = "7f0000000000-7f0001000000 rw-p 00000000 00:00 0 \n\
Size:              16384 kB\n\
AnonHugePages:     14336 kB\n\
VmFlags: rd wr mr mw me ac hg\n\
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]\n\
Size:                132 kB\n";
        let m = parse_smaps(t).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!((m[0].start, m[0].end), (0x7f00_0000_0000, 0x7f00_0100_0000));
        assert_eq!(m[0].anon_huge_bytes, 14336 * 1024);
        assert_eq!(m[1].anon_huge_bytes, 0);
        assert!(
            parse_smaps("Size: 4 kB\n").is_err(),
            "a field before any mapping"
        );
    }

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
    fn stat_even_with_spaces_and_parens_in_comm() {
        let stat = "4242 (my (odd) d) S 1 4242 4242 0 -1 4194560 1234 0 0 0 12 5 0 0 20 0 37 0 987654 2147483648 12345 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 17 1 0 0 0 0 0 0 0 0 0 140730000 140730042 0 0 0\n";
        let s = parse_stat(stat).unwrap();
        assert_eq!((s.pid, s.comm.as_str(), s.state), (4242, "my (odd) d", 'S'));
        assert_eq!(s.start_ticks, 987654);
        assert_eq!((s.arg_start, s.arg_end), (Some(140730000), Some(140730042)));
        assert!(!s.has_exited());
        let z = parse_stat(&stat.replace(") S ", ") Z ")).unwrap();
        assert!(z.has_exited());
        // Before Linux 3.5 the line ends after field 47: no argv span.
        let old: Vec<&str> = stat.split(' ').take(47).collect();
        let s = parse_stat(&old.join(" ")).unwrap();
        assert_eq!((s.start_ticks, s.arg_start), (987654, None));
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
            assert_eq!(parse_stat(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn limits_read_back_with_unlimited() {
        let l = Limit {
            soft: LimitValue::Value(1024),
            hard: LimitValue::Unlimited,
        };
        let j = serde_json::to_string(&l).unwrap();
        assert_eq!(j, r#"{"soft":1024,"hard":"unlimited"}"#);
        assert_eq!(serde_json::from_str::<Limit>(&j).unwrap(), l);
        assert!(serde_json::from_str::<LimitValue>(r#""lots""#).is_err());
    }
}
