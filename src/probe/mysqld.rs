//! Running mysqld/mariadbd processes, found through /proc, and what the
//! server's storage depends on: its datadir and its open-files and process
//! limits (a server capped at 1024 open files cannot keep its tablespaces open).

use crate::host::{Host, Known};
use serde::{Serialize, Serializer};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mysqld {
    pub pid: u32,
    /// `mysqld` or `mariadbd` (/proc/PID/comm).
    pub comm: String,
    /// /proc/PID/exe target (host path).
    pub binary: Known<String>,
    /// `BINARY --version`, only on the live host (never run from a fixture).
    pub version: Known<String>,
    pub datadir: String,
    /// `cmdline`, `FILE:LINE` of the option file that set it, or `default`.
    pub datadir_source: String,
    /// Max open files from /proc/PID/limits.
    pub open_files_limit: Known<Limit>,
    /// Max processes from /proc/PID/limits (threads count against it).
    pub processes_limit: Known<Limit>,
}

/// A soft/hard rlimit pair.
#[derive(Debug, Clone, PartialEq, Serialize)]
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

fn parse_limit_value(s: &str) -> Option<LimitValue> {
    if s == "unlimited" {
        Some(LimitValue::Unlimited)
    } else {
        s.parse().ok().map(LimitValue::Value)
    }
}

/// Find `name` (e.g. `Max open files`) in /proc/PID/limits text.
pub fn parse_limit(limits: &str, name: &str) -> Option<Limit> {
    for l in limits.lines() {
        if let Some(rest) = l.strip_prefix(name) {
            let mut w = rest.split_whitespace();
            let soft = parse_limit_value(w.next()?)?;
            let hard = parse_limit_value(w.next()?)?;
            return Some(Limit { soft, hard });
        }
    }
    None
}

/// Every mysqld/mariadbd process, lowest pid first.
pub fn find(host: &Host) -> Vec<Mysqld> {
    let mut pids: Vec<u32> = host
        .list("/proc")
        .unwrap_or_default()
        .iter()
        .filter_map(|n| n.parse().ok())
        .collect();
    pids.sort_unstable();
    pids.into_iter()
        .filter_map(|pid| {
            let comm = host.read_trim(format!("/proc/{pid}/comm")).ok()?;
            (comm == "mysqld" || comm == "mariadbd").then(|| describe(host, pid, comm))
        })
        .collect()
}

fn describe(host: &Host, pid: u32, comm: String) -> Mysqld {
    let binary = match host.resolve(format!("/proc/{pid}/exe")) {
        Ok(p) => Known::Value(p.display().to_string()),
        Err(e) => Known::unknown(format!("/proc/{pid}/exe: {e}")),
    };
    let version = match binary.value() {
        _ if !host.is_live() => Known::unknown("not run on a replayed host (--root)"),
        None => Known::unknown("binary unknown"),
        Some(b) => run_version(b.trim_end_matches(" (deleted)")),
    };
    let args: Vec<String> = host
        .read(format!("/proc/{pid}/cmdline"))
        .map(|s| {
            s.split('\0')
                .filter(|a| !a.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let (datadir, datadir_source) = datadir(host, &args);
    let limits = host.read(format!("/proc/{pid}/limits"));
    let limit = |name: &str| match &limits {
        Ok(t) => match parse_limit(t, name) {
            Some(l) => Known::Value(l),
            None => Known::unknown(format!("/proc/{pid}/limits: no {name:?} line")),
        },
        Err(e) => Known::unknown(format!("/proc/{pid}/limits: {e}")),
    };
    Mysqld {
        pid,
        comm,
        binary,
        version,
        datadir,
        datadir_source,
        open_files_limit: limit("Max open files"),
        processes_limit: limit("Max processes"),
    }
}

fn run_version(binary: &str) -> Known<String> {
    match std::process::Command::new(binary)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output()
    {
        Ok(o) if o.status.success() => {
            Known::Value(String::from_utf8_lossy(&o.stdout).trim().to_string())
        }
        Ok(o) => Known::unknown(format!("{binary} --version exited with {}", o.status)),
        Err(e) => Known::unknown(format!("{binary} --version: {e}")),
    }
}

/// Value of `--NAME=V` or `--NAME V` in an argv (dashes and underscores alike).
fn arg_value(args: &[String], name: &str) -> Option<String> {
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        let Some(opt) = a.strip_prefix("--") else {
            continue;
        };
        let (key, val) = match opt.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (opt, None),
        };
        if key.replace('_', "-") == name {
            return match val {
                Some(v) => Some(v.to_string()),
                None => it.next().cloned(),
            };
        }
    }
    None
}

/// The datadir: `--datadir` on the command line, else the option files the
/// server reads (`--defaults-file` alone if given, else /etc/my.cnf and
/// /etc/mysql/my.cnf, then `--defaults-extra-file`), else the compiled-in
/// default /var/lib/mysql.
pub fn datadir(host: &Host, args: &[String]) -> (String, String) {
    if let Some(d) = arg_value(args, "datadir") {
        return (d, "cmdline".into());
    }
    let mut files: Vec<String> = match arg_value(args, "defaults-file") {
        Some(f) => vec![f],
        None => vec!["/etc/my.cnf".into(), "/etc/mysql/my.cnf".into()],
    };
    if let Some(f) = arg_value(args, "defaults-extra-file") {
        files.push(f);
    }
    let mut found = None;
    for f in files {
        read_option_file(host, Path::new(&f), 0, &mut found);
    }
    match found {
        Some((d, src)) => (d, src),
        None => ("/var/lib/mysql".into(), "default".into()),
    }
}

/// Groups the server reads: [mysqld], [mariadbd], [server], [mariadb], and
/// their versioned forms ([mysqld-8.0], [mariadb-10.11]).
fn server_group(g: &str) -> bool {
    ["mysqld", "mariadbd", "server", "mariadb"].iter().any(|n| {
        g == *n
            || g.strip_prefix(n)
                .and_then(|r| r.strip_prefix('-'))
                .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()))
    })
}

/// Parse one option file for `datadir` in server groups, following
/// `!include` and `!includedir` (files ending in `.cnf`, in name order, as
/// the server does). The last setting wins.
fn read_option_file(host: &Host, file: &Path, depth: usize, found: &mut Option<(String, String)>) {
    if depth > 10 {
        return;
    }
    let Ok(text) = host.read(file) else { return };
    let mut in_server = false;
    for (i, raw) in text.lines().enumerate() {
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') || l.starts_with(';') {
            continue;
        }
        if let Some(inc) = l.strip_prefix("!includedir") {
            let dir = PathBuf::from(inc.trim());
            for n in host.list(&dir).unwrap_or_default() {
                if n.ends_with(".cnf") {
                    read_option_file(host, &dir.join(n), depth + 1, found);
                }
            }
            continue;
        }
        if let Some(inc) = l.strip_prefix("!include") {
            read_option_file(host, Path::new(inc.trim()), depth + 1, found);
            continue;
        }
        if let Some(g) = l.strip_prefix('[').and_then(|g| g.split(']').next()) {
            in_server = server_group(&g.trim().to_ascii_lowercase());
            continue;
        }
        if !in_server {
            continue;
        }
        if let Some((k, v)) = l.split_once('=') {
            if k.trim().replace('-', "_") == "datadir" {
                let v = v.split(" #").next().unwrap_or("").trim();
                let v = v.trim_matches(|c| c == '"' || c == '\'');
                *found = Some((v.to_string(), format!("{}:{}", file.display(), i + 1)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_and_args() {
        let t = "Limit                     Soft Limit           Hard Limit           Units     \n\
                 Max processes             96365                96365                processes \n\
                 Max open files            20000                unlimited            files     \n";
        let l = parse_limit(t, "Max open files").unwrap();
        assert_eq!(l.soft, LimitValue::Value(20000));
        assert_eq!(l.hard, LimitValue::Unlimited);
        assert_eq!(
            parse_limit(t, "Max processes").unwrap().soft,
            LimitValue::Value(96365)
        );
        let a: Vec<String> = ["mysqld", "--user=mysql", "--datadir", "/d/my_data"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(arg_value(&a, "datadir").as_deref(), Some("/d/my_data"));
        let a: Vec<String> = ["mysqld", "--data_dir=x", "--datadir=/srv/my_sql"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(arg_value(&a, "datadir").as_deref(), Some("/srv/my_sql"));
        assert!(server_group("mariadb-10.11"));
        assert!(server_group("mysqld-8.0"));
        assert!(!server_group("mariadb-client"));
        assert!(!server_group("client"));
    }

    #[test]
    fn option_files_follow_include_and_last_setting_wins() {
        let t = tempfile::tempdir().unwrap();
        let w = |p: &str, c: &str| {
            let f = t.path().join(p.trim_start_matches('/'));
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, c).unwrap();
        };
        w(
            "/etc/my.cnf",
            "[mysqld]\ndatadir=/first\n!include /etc/extra.cnf\n",
        );
        w("/etc/extra.cnf", "[client]\ndatadir=/client\n[mariadb-10.11]\ndata-dir = x\ndatadir = \"/second\" # quoted\n");
        let host = Host::with_root(t.path());
        let args = vec!["mariadbd".to_string()];
        assert_eq!(
            datadir(&host, &args),
            ("/second".to_string(), "/etc/extra.cnf:5".to_string())
        );
        w("/etc/mysql/my.cnf", "[server]\ndatadir=/third\n");
        assert_eq!(datadir(&host, &args).0, "/third");
        let args = vec![
            "mysqld".to_string(),
            "--defaults-file=/etc/extra.cnf".to_string(),
        ];
        assert_eq!(datadir(&host, &args).0, "/second");
        let t2 = tempfile::tempdir().unwrap();
        assert_eq!(
            datadir(&Host::with_root(t2.path()), &args),
            ("/var/lib/mysql".to_string(), "default".to_string())
        );
    }
}
