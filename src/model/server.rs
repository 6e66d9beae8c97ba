//! Running mysqld/mariadbd processes and what the server's storage depends
//! on: its datadir and its open-files and process limits (a server capped
//! at 1024 open files cannot keep its tablespaces open).

use super::optfile::{Groups, Options};
use super::process::{self, Limit};
use crate::host::{Host, Known};
use serde::Serialize;
use std::path::Path;

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

/// Every mysqld/mariadbd process, lowest pid first.
pub fn find(host: &Host) -> Vec<Mysqld> {
    process::server_pids(host)
        .into_iter()
        .filter_map(|pid| {
            let comm = process::comm(host, pid).ok()?;
            Some(describe(host, pid, comm))
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
    let args = process::cmdline(host, pid).unwrap_or_default();
    let (datadir, datadir_source) = datadir(host, &args);
    let limits = process::limits(host, pid);
    let (open_files_limit, processes_limit) = match limits {
        Known::Value(l) => (Known::Value(l.open_files), Known::Value(l.processes)),
        Known::Unknown { unknown } => (Known::unknown(&unknown), Known::unknown(unknown)),
    };
    Mysqld {
        pid,
        comm,
        binary,
        version,
        datadir,
        datadir_source,
        open_files_limit,
        processes_limit,
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
/// default /var/lib/mysql. Parsing is [`super::optfile`]'s, in server scope.
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
    let mut opts = Options::new(Groups::Server);
    for f in files {
        // An unreadable or looping file only means the datadir comes from
        // elsewhere; probe reports what it could find.
        let _ = opts.read_host_file(host, Path::new(&f));
    }
    match (opts.get("datadir"), opts.origin("datadir")) {
        (Some(d), Some(src)) => (d.to_string(), src.to_string()),
        _ => ("/var/lib/mysql".into(), "default".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datadir_args() {
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
        assert!(Groups::Server.matches("mariadb-10.11"));
        assert!(Groups::Server.matches("mysqld-8.0"));
        assert!(!Groups::Server.matches("mariadb-client"));
        assert!(!Groups::Server.matches("client"));
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
