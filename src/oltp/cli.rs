//! `innotune oltp WORKLOAD prepare|run|cleanup`, with sysbench's option
//! names. Every multi-word option also accepts sysbench's `_` spelling
//! (`--table_size`), and boolean options take `on/off/true/false` like
//! sysbench (`--skip-trx`, `--skip-trx=on`, `--range-selects=off`).

use super::rand::RandType;
use super::workload::Workload;
use crate::db::ConnArgs;
use clap::{Args, ValueEnum};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Command {
    /// Create the database if needed, the tables, load rows, build the secondary index.
    Prepare,
    /// Run the workload and report sysbench's statistics plus server status.
    Run,
    /// Drop the tables.
    Cleanup,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PsMode {
    Auto,
    Disable,
}

fn parse_start_at(s: &str) -> Result<std::time::SystemTime, String> {
    if let Ok(secs) = s.parse::<f64>() {
        if secs.is_finite() && secs > 0.0 {
            return Ok(std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(secs));
        }
    }
    humantime::parse_rfc3339_weak(s).map_err(|_| {
        format!("{s:?} is not a time: give RFC 3339 (2026-11-25T18:00:00Z) or Unix seconds")
    })
}

fn parse_bool(s: &str) -> Result<bool, String> {
    match s.to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(format!("{s:?} is not on/off/true/false")),
    }
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  innotune oltp oltp_read_write prepare --socket DIR/mysql.sock --tables 4 --table-size 100000\n  innotune oltp oltp_read_write run --socket DIR/mysql.sock --tables 4 --table-size 100000 --threads 8,16,32,64 --time 60\n  innotune oltp oltp_read_write run --host db1 --port 3306 -u bench -p --threads 64 --time 300\n  innotune oltp oltp_read_write cleanup --socket DIR/mysql.sock --tables 4\n\nBefore a run, the server's max_connections and max_prepared_stmt_count are checked against the largest --threads.\nExit codes: 0 done; 2 usage, connection or server error (one line naming the fix)."
)]
pub struct OltpArgs {
    /// oltp_read_only, oltp_write_only, oltp_read_write, oltp_point_select or oltp_insert.
    #[arg(value_enum)]
    pub workload: Workload,
    /// prepare, run or cleanup.
    #[arg(value_enum)]
    pub command: Command,

    #[command(flatten)]
    pub conn: ConnArgs,

    /// Database holding the sbtest tables.
    #[arg(
        long,
        visible_alias = "mysql-db",
        alias = "mysql_db",
        default_value = "sbtest"
    )]
    pub db: String,
    /// Number of tables.
    #[arg(long, default_value_t = 1)]
    pub tables: u32,
    /// Rows per table.
    #[arg(long, alias = "table_size", default_value_t = 10_000)]
    pub table_size: u32,
    /// Worker threads, or a list (8,16,32,64) for a thread sweep.
    #[arg(long, default_value = "1", value_name = "N[,N…]")]
    pub threads: String,
    /// Run time limit in seconds (0 = none).
    #[arg(long, default_value_t = 10)]
    pub time: u64,
    /// Event (transaction) limit (0 = none).
    #[arg(long, default_value_t = 0)]
    pub events: u64,
    /// Print intermediate results every N seconds (0 = off).
    #[arg(long, alias = "report_interval", default_value_t = 0)]
    pub report_interval: u64,
    /// Latency percentile to report (0 = off).
    #[arg(long, default_value_t = 95)]
    pub percentile: u8,
    /// Keep each run's full latency histogram in the JSON result, so runs of
    /// several clients can be merged exactly with `innotune merge`.
    #[arg(long)]
    pub json_histogram: bool,
    /// Start the measured run at this wall-clock time (RFC 3339 such as
    /// 2026-11-25T18:00:00Z, or Unix seconds): clients on several hosts
    /// started with the same time run together. Connections and checks are
    /// made first; a time already past is refused.
    #[arg(long, value_name = "TIME", value_parser = parse_start_at)]
    pub start_at: Option<std::time::SystemTime>,

    /// Range size of range SELECT queries.
    #[arg(long, alias = "range_size", default_value_t = 100)]
    pub range_size: u32,
    /// Point SELECTs per transaction.
    #[arg(long, alias = "point_selects", default_value_t = 10)]
    pub point_selects: u32,
    /// Simple range SELECTs per transaction.
    #[arg(long, alias = "simple_ranges", default_value_t = 1)]
    pub simple_ranges: u32,
    /// SELECT SUM() ranges per transaction.
    #[arg(long, alias = "sum_ranges", default_value_t = 1)]
    pub sum_ranges: u32,
    /// SELECT … ORDER BY ranges per transaction.
    #[arg(long, alias = "order_ranges", default_value_t = 1)]
    pub order_ranges: u32,
    /// SELECT DISTINCT ranges per transaction.
    #[arg(long, alias = "distinct_ranges", default_value_t = 1)]
    pub distinct_ranges: u32,
    /// UPDATEs of the indexed column k per transaction.
    #[arg(long, alias = "index_updates", default_value_t = 1)]
    pub index_updates: u32,
    /// UPDATEs of the non-indexed column c per transaction.
    #[arg(long, alias = "non_index_updates", default_value_t = 1)]
    pub non_index_updates: u32,
    /// DELETE/INSERT pairs per transaction.
    #[arg(long, alias = "delete_inserts", default_value_t = 1)]
    pub delete_inserts: u32,
    /// Enable/disable all range SELECT queries.
    #[arg(long, alias = "range_selects", default_value = "on", value_parser = parse_bool, num_args = 0..=1, require_equals = true, default_missing_value = "on")]
    pub range_selects: bool,
    /// Autocommit every query instead of BEGIN/COMMIT.
    #[arg(long, alias = "skip_trx", default_value = "off", value_parser = parse_bool, num_args = 0..=1, require_equals = true, default_missing_value = "on")]
    pub skip_trx: bool,
    /// AUTO_INCREMENT primary key (off: client-generated ids).
    #[arg(long, alias = "auto_inc", default_value = "on", value_parser = parse_bool, num_args = 0..=1, require_equals = true, default_missing_value = "on")]
    pub auto_inc: bool,
    /// A secondary index (KEY xid) in place of the PRIMARY KEY.
    #[arg(long, default_value = "off", value_parser = parse_bool, num_args = 0..=1, require_equals = true, default_missing_value = "on")]
    pub secondary: bool,
    /// Create the secondary index k_N after loading.
    #[arg(long, alias = "create_secondary", default_value = "on", value_parser = parse_bool, num_args = 0..=1, require_equals = true, default_missing_value = "on")]
    pub create_secondary: bool,
    /// Storage engine of the tables.
    #[arg(long, alias = "mysql_storage_engine", default_value = "innodb")]
    pub mysql_storage_engine: String,

    /// Random distribution of ids.
    #[arg(long, alias = "rand_type", value_enum, default_value_t = RandType::Special)]
    pub rand_type: RandType,
    /// Seed (0 = from the current time).
    #[arg(long, alias = "rand_seed", default_value_t = 0)]
    pub rand_seed: u64,
    /// Iterations of the special/gaussian distributions.
    #[arg(long, alias = "rand_spec_iter", default_value_t = 12)]
    pub rand_spec_iter: u32,
    /// Percentage of the range that is 'special' (hot).
    #[arg(long, alias = "rand_spec_pct", default_value_t = 1)]
    pub rand_spec_pct: u32,
    /// Percentage of draws that hit the special values.
    #[arg(long, alias = "rand_spec_res", default_value_t = 75)]
    pub rand_spec_res: u32,
    /// Pareto distribution parameter h.
    #[arg(long, alias = "rand_pareto_h", default_value_t = 0.2)]
    pub rand_pareto_h: f64,
    /// Errors that re-run the event (list, `all` or `none`); lost-connection codes 2013/2006/2011/2055 reconnect.
    #[arg(
        long,
        alias = "mysql_ignore_errors",
        default_value = "1213,1020,1205,2013,2006,2011,2055"
    )]
    pub mysql_ignore_errors: String,
    /// Seconds a statement may stay unanswered after the --time limit (with --events only: at all) before the run fails naming the server.
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    pub stall_timeout: u64,
    /// Server-side prepared statements (auto) or plain text (disable).
    #[arg(long, alias = "db_ps_mode", value_enum, default_value_t = PsMode::Auto)]
    pub db_ps_mode: PsMode,
}
