//! Server variables a sandbox starts with: named profiles (`default`,
//! `before`, `after`) or a file of `name = value` lines, and the client
//! capacity every profile gets.

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
    /// A named set (`before`, `after`) or the contents of a file.
    Vars {
        name: String,
        vars: Vec<(String, String)>,
    },
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

/// The practice's "after" table: sized buffer pool and redo, O_DIRECT,
/// io_capacity for SSDs, no neighbour flushing. Durability unchanged
/// (flush_log_at_trx_commit=1): a tuning must not trade safety for speed.
const AFTER: &[(&str, &str)] = &[
    ("innodb_buffer_pool_size", "1G"),
    ("innodb_log_file_size", "512M"),
    ("innodb_log_buffer_size", "64M"),
    ("innodb_flush_log_at_trx_commit", "1"),
    ("innodb_flush_method", "O_DIRECT"),
    ("innodb_io_capacity", "2000"),
    ("innodb_io_capacity_max", "4000"),
    ("innodb_flush_neighbors", "0"),
];

impl Profile {
    /// `default`, `before`, `after`, or a path to a file of `name = value` lines.
    pub fn parse(s: &str) -> Result<Profile> {
        let named = |name: &str, t: &[(&str, &str)]| Profile::Vars {
            name: name.to_string(),
            vars: t
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        match s {
            "default" | "defaults" => Ok(Profile::Default),
            "before" => Ok(named("before", BEFORE)),
            "after" => Ok(named("after", AFTER)),
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
        }
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
        };
        vars.push((name.to_string(), value.to_string()));
        Profile::Vars { name: pname, vars }
    }

    pub(super) fn vars(&self) -> &[(String, String)] {
        match self {
            Profile::Default => &[],
            Profile::Vars { vars, .. } => vars,
        }
    }
}
