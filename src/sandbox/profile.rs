//! Server variables a sandbox starts with: named profiles (`default`,
//! `before`, `after`) or a file of `name = value` lines, and the client
//! capacity every profile gets.
//!
//! `before` is a fixed table (a stock server as commonly found); `after` is
//! not a table at all: it is what `innotune check` recommends for a server
//! started with `before` on this host, under the sandbox's own directory
//! (its RAM, the device and filesystem under DIR). The sandbox layer cannot
//! run check (it sits below it), so [`Profile::After`] stands for it until
//! `check::sandbox::start` has started the sandbox with `before`, run
//! check's rules against it, and restarted it with `before` plus every
//! server variable check recommends.

use crate::error::Fix;
use anyhow::Result;
use std::fs;

/// Client threads every sandbox makes room for: the practice loads servers
/// at 64–512 threads, and `oltp --threads 1024` must not stop on a limit.
pub const CAPACITY_THREADS: u64 = 1024;

/// What every profile sets before its own variables (a profile that sets
/// one of these wins: later lines of my.cnf override earlier ones).
/// - `max_connections`: one per client thread, plus oltp's status
///   connection and a few for people and tools (the default 151 stops a
///   run at 150 threads).
/// - `max_prepared_stmt_count`: oltp_read_write prepares 2 + 9 statements
///   per table on every connection, so 1024 threads on 10 tables need
///   94,208; the default 16,382 stops at 512 threads on 4 tables. 1,048,576
///   is the largest value both MySQL 5.7+ and MariaDB accept; a statement
///   costs server memory only while it is prepared.
pub const CAPACITY: &[(&str, &str)] = &[
    ("max_connections", "1100"),
    ("max_prepared_stmt_count", "1048576"),
];

/// Server variables a sandbox starts with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Profile {
    /// The server's compiled-in defaults (plus [`CAPACITY`], as every profile).
    Default,
    /// A named set (`before`, or `after` once derived) or the contents of
    /// a file.
    Vars {
        name: String,
        vars: Vec<(String, String)>,
    },
    /// `after`, not yet derived: [`BEFORE`] plus what check recommends for
    /// it on this host (`check::sandbox::start` derives it; a sandbox is
    /// never started with it as is). `extra` are variables that win over
    /// check's advice (sweep's `--oltp-buffer-pool`, sized to its data).
    After { extra: Vec<(String, String)> },
}

/// The practice's "before" table: a stock-sized server as commonly found.
const BEFORE: &[(&str, &str)] = &[
    ("innodb_buffer_pool_size", "128M"),
    ("innodb_log_file_size", "48M"),
    ("innodb_log_buffer_size", "16M"),
    ("innodb_flush_log_at_trx_commit", "1"),
    ("innodb_flush_method", "fsync"),
    ("innodb_io_capacity", "200"),
    ("innodb_io_capacity_max", "2000"),
    ("innodb_flush_neighbors", "1"),
];

impl Profile {
    /// `default`, `before`, `after`, or a path to a file of `name = value` lines.
    pub fn parse(s: &str) -> Result<Profile> {
        match s {
            "default" | "defaults" => Ok(Profile::Default),
            "before" => Ok(Profile::before()),
            "after" => Ok(Profile::After { extra: Vec::new() }),
            path => {
                let text = fs::read_to_string(path).map_err(|e| {
                    Fix::new(
                        format!("profile {path:?} is not a known name and cannot be read as a file: {e}"),
                        "use --profile default, before, after, or a file of `name = value` lines",
                    )
                })?;
                let mut vars = Vec::new();
                for (n, line) in text.lines().enumerate() {
                    let l = line.trim();
                    if l.is_empty()
                        || l.starts_with('#')
                        || l.starts_with(';')
                        || l.starts_with('[')
                    {
                        continue;
                    }
                    let (k, v) = l.split_once('=').ok_or_else(|| {
                        Fix::new(
                            format!("{path}:{}: {l:?} is not `name = value`", n + 1),
                            "write one server variable per line, e.g. innodb_buffer_pool_size = 1G",
                        )
                    })?;
                    vars.push((k.trim().replace('-', "_"), v.trim().to_string()));
                }
                Ok(Profile::Vars {
                    name: path.to_string(),
                    vars,
                })
            }
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Profile::Default => "default",
            Profile::Vars { name, .. } => name,
            Profile::After { .. } => "after",
        }
    }

    /// The `before` profile, which `after` is derived from.
    pub fn before() -> Profile {
        Profile::Vars {
            name: "before".into(),
            vars: BEFORE
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    /// `after`, derived: [`BEFORE`], then `advised` (check's recommended
    /// values), then the variables that win over them.
    pub fn derived(&self, advised: &[(String, String)]) -> Profile {
        let mut vars = Profile::before().vars().to_vec();
        for (k, v) in advised.iter().chain(self.vars()) {
            match vars.iter_mut().find(|(n, _)| n == k) {
                Some(e) => e.1 = v.clone(),
                None => vars.push((k.clone(), v.clone())),
            }
        }
        Profile::Vars {
            name: "after".into(),
            vars,
        }
    }

    /// `after` still to be derived by check ([`Profile::After`]).
    pub fn needs_advice(&self) -> bool {
        matches!(self, Profile::After { .. })
    }

    /// The value the profile sets for server variable `name`, if any
    /// (`-` and `_` are the same, as for the server).
    pub fn var(&self, name: &str) -> Option<&str> {
        let norm = |s: &str| s.replace('-', "_");
        self.vars()
            .iter()
            .rev()
            .find(|(k, _)| norm(k) == norm(name))
            .map(|(_, v)| v.as_str())
    }

    /// The profile with `name = value` added (it wins over the profile's
    /// own setting: later lines of my.cnf override earlier ones). The name
    /// stays the profile's.
    pub fn with_var(self, name: &str, value: &str) -> Profile {
        let (pname, mut vars) = match self {
            Profile::Default => ("default".to_string(), Vec::new()),
            Profile::Vars { name, vars } => (name, vars),
            Profile::After { mut extra } => {
                extra.push((name.to_string(), value.to_string()));
                return Profile::After { extra };
            }
        };
        vars.push((name.to_string(), value.to_string()));
        Profile::Vars { name: pname, vars }
    }

    /// The variables written to my.cnf (for [`Profile::After`], only those
    /// that win over check's advice: it is derived before it is written).
    pub fn vars(&self) -> &[(String, String)] {
        match self {
            Profile::Default => &[],
            Profile::Vars { vars, .. } => vars,
            Profile::After { extra } => extra,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `after` is `before`, then check's values, then the variables that
    /// win over them (sweep's buffer pool); never written underived.
    #[test]
    fn after_is_before_then_advice_then_extra() {
        let p = |k: &str, v: &str| (k.to_string(), v.to_string());
        let after = Profile::parse("after").unwrap();
        assert!(after.needs_advice() && after.vars().is_empty());
        assert_eq!(after.name(), "after");
        let sized = after.with_var("innodb_buffer_pool_size", "33554432");
        assert!(sized.needs_advice());
        let d = sized.derived(&[
            p("innodb_flush_method", "O_DIRECT"),
            p("innodb_buffer_pool_size", "1G"),
            p("slow_query_log", "ON"),
        ]);
        assert!(!d.needs_advice());
        assert_eq!(d.name(), "after");
        assert_eq!(d.var("innodb_flush_method"), Some("O_DIRECT"));
        assert_eq!(d.var("innodb_buffer_pool_size"), Some("33554432"));
        assert_eq!(d.var("slow_query_log"), Some("ON"));
        assert_eq!(d.var("innodb_log_file_size"), Some("48M"), "before's");
        // Nothing advised: `after` holds exactly `before`'s values.
        let same = Profile::parse("after").unwrap().derived(&[]);
        assert_eq!(same.vars(), Profile::before().vars());
    }
}
