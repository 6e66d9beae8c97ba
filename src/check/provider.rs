//! Managed servers: which provider runs the server (recognised from its
//! own variables, or forced with `--provider`), what that provider lets a
//! DBA change, and how each recommended server variable is written there
//! (a parameter-group value, a formula, `pending-reboot`), or why it is
//! not written at all.
//!
//! The catalogue ([`access`]) covers exactly the variables innotune's
//! rules recommend (`rules::SERVER_VARIABLES`); its sources, with the
//! dates they were read, are in docs/managed.md. A variable a provider's
//! documentation did not confirm as modifiable is `NotListed`: reported,
//! never emitted (a wrong guess would make `aws rds
//! modify-db-parameter-group` fail half-way, or worse, succeed on the
//! wrong thing).

use super::facts::ServerFacts;
use serde::Serialize;

/// Who runs the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Provider {
    /// Amazon RDS for MySQL.
    Rds,
    /// Amazon Aurora MySQL.
    Aurora,
    /// Azure Database for MySQL flexible server.
    Azure,
    /// Google Cloud SQL for MySQL.
    Cloudsql,
    /// A server someone runs on their own host or VM.
    #[value(name = "self")]
    #[serde(rename = "self")]
    SelfManaged,
}

impl Provider {
    pub fn label(self) -> &'static str {
        match self {
            Provider::Rds => "Amazon RDS for MySQL",
            Provider::Aurora => "Amazon Aurora MySQL",
            Provider::Azure => "Azure Database for MySQL flexible server",
            Provider::Cloudsql => "Cloud SQL for MySQL",
            Provider::SelfManaged => "self-managed",
        }
    }
    /// The `--provider` value.
    pub fn name(self) -> &'static str {
        match self {
            Provider::Rds => "rds",
            Provider::Aurora => "aurora",
            Provider::Azure => "azure",
            Provider::Cloudsql => "cloudsql",
            Provider::SelfManaged => "self",
        }
    }
    pub fn is_managed(self) -> bool {
        self != Provider::SelfManaged
    }
}

/// The provider the server's variables point to, and the telltale.
pub fn detect(s: &ServerFacts) -> (Provider, String) {
    let var = |n: &str| s.var(n).filter(|v| !v.is_empty());
    if let Some(v) = var("aurora_version") {
        return (Provider::Aurora, format!("@@aurora_version is {v}"));
    }
    if let Some(b) = var("basedir").filter(|b| b.starts_with("/rdsdbbin/")) {
        return (Provider::Rds, format!("@@basedir is {b}"));
    }
    if s.version.contains("-google") {
        return (Provider::Cloudsql, format!("VERSION() is {}", s.version));
    }
    if let Some(k) = s.variables.keys().find(|k| k.starts_with("cloudsql_")) {
        return (Provider::Cloudsql, format!("the server has @@{k}"));
    }
    if s.variables.contains_key("aad_auth_only") {
        return (Provider::Azure, "the server has @@aad_auth_only".into());
    }
    if let Some(t) = var("innodb_tmpdir").filter(|t| *t == "/mnt/temp") {
        return (Provider::Azure, format!("@@innodb_tmpdir is {t}"));
    }
    (
        Provider::SelfManaged,
        "no provider's telltale among the server's variables".into(),
    )
}

/// What a provider lets a DBA do with one variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Set in the parameter group / server parameters / flags. `dynamic`:
    /// takes effect without a reboot. `formula`: the provider's default is
    /// a formula of the instance's memory (RDS, Aurora).
    Modifiable {
        dynamic: bool,
        formula: Option<&'static str>,
        note: Option<&'static str>,
    },
    /// The provider fixes it (why).
    Fixed(&'static str),
    /// Aurora: set in the DB *cluster* parameter group, which
    /// `modify-db-parameter-group` does not reach (why).
    Cluster(&'static str),
    /// Not among the parameters the provider's documentation lists as
    /// modifiable (as read; docs/managed.md).
    NotListed,
}

const fn m(dynamic: bool) -> Access {
    Access::Modifiable {
        dynamic,
        formula: None,
        note: None,
    }
}

const AURORA_STORAGE: &str = "Aurora's distributed storage writes the redo log and the pages itself: not modifiable in Aurora MySQL parameter groups";

/// The catalogue: one row per variable innotune's rules recommend.
pub fn access(p: Provider, name: &str) -> Access {
    use Access::*;
    use Provider::*;
    match (p, name) {
        (SelfManaged, _) => m(true),
        (Rds, "innodb_buffer_pool_size") => Modifiable {
            dynamic: true,
            formula: Some("{DBInstanceClassMemory*3/4}"),
            note: None,
        },
        (Aurora, "innodb_buffer_pool_size") => Modifiable {
            dynamic: false,
            formula: Some("{DBInstanceClassMemory*3/4}"),
            note: None,
        },
        (Rds | Aurora, "max_connections") => Modifiable {
            dynamic: true,
            formula: Some(if p == Rds {
                "{DBInstanceClassMemory/12582880}"
            } else {
                "GREATEST({log(DBInstanceClassMemory/805306368)*45},{log(DBInstanceClassMemory/8187281408)*1000})"
            }),
            note: None,
        },
        (Rds, "innodb_io_capacity" | "innodb_io_capacity_max") => m(true),
        (Rds, "innodb_redo_log_capacity") => m(true),
        (Rds, "innodb_log_file_size" | "innodb_log_buffer_size" | "innodb_read_io_threads") => {
            m(false)
        }
        (Aurora, "innodb_file_per_table") => Cluster("a cluster-level parameter: set it in the DB cluster parameter group (aws rds modify-db-cluster-parameter-group); the emitted files are the instance's DB parameter group"),
        (
            Aurora,
            "innodb_flush_method"
            | "innodb_io_capacity"
            | "innodb_io_capacity_max"
            | "innodb_log_buffer_size"
            | "innodb_log_file_size"
            | "innodb_redo_log_capacity"
            | "innodb_read_io_threads"
            | "innodb_numa_interleave",
        ) => Fixed(AURORA_STORAGE),
        (
            Rds | Aurora,
            "innodb_file_per_table" | "innodb_read_ahead_threshold" | "tmp_table_size"
            | "max_heap_table_size" | "slow_query_log",
        ) => m(true),
        (Azure, "innodb_buffer_pool_size") => Modifiable {
            dynamic: true,
            formula: None,
            note: Some("bounded by the compute tier's maximum (server parameters page): a larger value is refused"),
        },
        (Azure, "max_connections") => Modifiable {
            dynamic: true,
            formula: None,
            note: Some("bounded by the compute tier's maximum (server parameters page)"),
        },
        (
            Azure,
            "innodb_io_capacity" | "innodb_io_capacity_max" | "innodb_file_per_table"
            | "tmp_table_size" | "max_heap_table_size" | "slow_query_log",
        ) => m(true),
        (
            Cloudsql,
            "innodb_buffer_pool_size" | "innodb_io_capacity" | "innodb_io_capacity_max"
            | "innodb_file_per_table" | "innodb_read_ahead_threshold" | "max_connections"
            | "tmp_table_size" | "max_heap_table_size" | "slow_query_log",
        ) => m(true),
        (Cloudsql, "innodb_log_file_size" | "innodb_log_buffer_size" | "innodb_read_io_threads") => {
            m(false)
        }
        (_, "query_cache_size" | "query_cache_type") => {
            Fixed("MySQL 8.0 has no query cache (removed in 8.0.3)")
        }
        _ => NotListed,
    }
}

/// How one recommended variable is written for the provider.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Managed {
    pub provider: Provider,
    pub parameter: String,
    /// The value innotune's rule wants (bytes, a count, ON).
    pub recommended: String,
    /// What goes in the provider's file: `recommended`, or a formula of
    /// the instance's memory; absent when not emitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// `emit` (written by `--emit`), `not_modifiable`, `not_listed` or
    /// `cluster_parameter` (Aurora's cluster group; not emitted).
    pub status: String,
    /// `immediate` or `pending-reboot` (AWS's ApplyMethod; the same
    /// meaning for the others' restart).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub apply: Option<String>,
    pub note: String,
}

impl Managed {
    pub fn emitted(&self) -> bool {
        self.status == "emit"
    }
}

/// `{DBInstanceClassMemory*N/D}` for `bytes` out of `mem`, in whole
/// percent (RDS formulas take integers only), at least 1 %, at most 90 %.
pub fn memory_formula(bytes: u64, mem: u64) -> String {
    let pct = ((bytes as f64 / mem as f64) * 100.0)
        .round()
        .clamp(1.0, 90.0) as u64;
    let g = gcd(pct, 100);
    format!("{{DBInstanceClassMemory*{}/{}}}", pct / g, 100 / g)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(_: &str, major: u32, minor: u32, patch: u32) -> ServerFacts {
        ServerFacts {
            flavor: "mysql".into(),
            version: format!("{major}.{minor}.{patch}"),
            major,
            minor,
            patch,
            ..Default::default()
        }
    }

    fn with_vars(mut s: ServerFacts, vars: &[(&str, &str)]) -> ServerFacts {
        for (k, v) in vars {
            s.variables.insert(k.to_string(), v.to_string());
        }
        s
    }

    #[test]
    fn telltales() {
        let s = with_vars(
            server("mysql", 8, 0, 35),
            &[("basedir", "/rdsdbbin/mysql-8.0.35.R2/")],
        );
        assert_eq!(detect(&s).0, Provider::Rds);
        let a = with_vars(s.clone(), &[("aurora_version", "3.05.2")]);
        assert_eq!(detect(&a).0, Provider::Aurora);
        let mut g = server("mysql", 8, 0, 31);
        g.version = "8.0.31-google".into();
        assert_eq!(detect(&g).0, Provider::Cloudsql);
        let z = with_vars(server("mysql", 8, 0, 37), &[("innodb_tmpdir", "/mnt/temp")]);
        assert_eq!(detect(&z).0, Provider::Azure);
        let own = with_vars(
            server("mysql", 8, 0, 35),
            &[("basedir", "/usr/"), ("innodb_tmpdir", "")],
        );
        assert_eq!(detect(&own).0, Provider::SelfManaged);
    }

    #[test]
    fn formulas_in_whole_percent() {
        assert_eq!(
            memory_formula(12 << 30, 16 << 30),
            "{DBInstanceClassMemory*3/4}"
        );
        assert_eq!(
            memory_formula(13 << 30, 16 << 30),
            "{DBInstanceClassMemory*81/100}"
        );
        assert_eq!(
            memory_formula(15 << 30, 16 << 30),
            "{DBInstanceClassMemory*9/10}"
        );
    }
}
