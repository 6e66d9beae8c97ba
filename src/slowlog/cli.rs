//! `innotune slowlog`: its flags.

use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// mysqldumpslow's `-s` orders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Sort {
    /// Total query time.
    T,
    /// Average query time.
    At,
    /// Total lock time.
    L,
    /// Average lock time.
    Al,
    /// Total rows sent.
    R,
    /// Average rows sent.
    Ar,
    /// Count.
    C,
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  innotune slowlog /var/log/mysql/mysql-slow.log
  innotune slowlog slow.log.gz --top 10 -s at
  innotune slowlog slow.log --order-by Rows_examined:max --since '2024-11-25 00:00:00'
  zcat slow.log.gz | innotune slowlog - --filter db=shop --format json
  innotune slowlog --capture 60s --socket /run/mysqld/mysqld.sock --user root

Statements are grouped into classes by pt-query-digest's fingerprint (literals, numbers and IN/VALUES lists abstracted) and class ids are pt's (upper-case MD5 of the fingerprint).
A plain file is read by every core (entry-aligned byte ranges); gzip (recognised by its magic bytes) and stdin are streamed by one, in memory bounded by --max-entry-size. Only a regular file or - is read: a FIFO or device is refused (pipe it to - instead).
Exit codes: 0 ok (a gzip file cut short: the digest of what came before, with a warning saying where it stopped); 2 the file cannot be read, an entry is longer than --max-entry-size, or a flag is wrong. Malformed entries (no statement, or a time or count that is not a number) are counted and skipped.
--capture DURATION (no FILE) makes a log `innotune replay` can run: it sets, through the journal, long_query_time = 0, slow_query_log = ON, log_output = FILE when the log does not go to a file, min_examined_row_limit = 0 and (MariaDB) log_slow_rate_limit = 1 when they would leave statements out; waits the window (Ctrl-C or SIGTERM ends it early); puts every variable back; and reports the log file, the byte range the window wrote (a `tail -c | head -c` line cuts it out) and, when the file is readable here, its entries and sessions. Sessions connected before the window keep their own long_query_time: only their slow statements are logged. Killed midway, `innotune restore` puts the variables back. JSON: `slowlog-capture/2`, in docs/json-slowlog.md.
JSON fields: docs/json-slowlog.md.")]
pub struct SlowlogArgs {
    /// The slow query log (plain or gzip), or - for stdin.
    #[arg(
        value_name = "FILE|-",
        required_unless_present = "capture",
        conflicts_with = "capture"
    )]
    pub file: Option<PathBuf>,

    /// Instead of reading a log: turn the server's slow log on at long_query_time = 0 for this long (`60s`, `5m`; Ctrl-C ends it early), then put every variable back and say where the window's entries are. Journaled: `innotune restore` puts them back after a crash.
    #[arg(long, value_name = "DURATION", value_parser = capture_window)]
    pub capture: Option<std::time::Duration>,

    /// With --capture: the server (its connection options).
    #[command(flatten)]
    pub conn: crate::db::ConnArgs,

    /// Classes shown, worst first (0 = all).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub top: usize,

    /// pt-query-digest's order: ATTRIBUTE:FUNCTION with Query_time|Lock_time|Rows_sent|Rows_examined and sum|avg|max|min|cnt.
    #[arg(
        long,
        value_name = "ATTR:FUNC",
        default_value = "Query_time:sum",
        conflicts_with = "sort"
    )]
    pub order_by: String,

    /// mysqldumpslow's order: t, at, l, al, r, ar or c.
    #[arg(short = 's', long, value_enum, value_name = "ORDER")]
    pub sort: Option<Sort>,

    /// Only entries at or after this time: `2024-11-25 10:00:00`, `2024-11-25`, epoch seconds, or a duration back from now (`3h`, `2d`).
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,

    /// Only entries before this time (same forms as --since).
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,

    /// Only entries with db=NAME, user=NAME or host=NAME (repeatable, all must match).
    #[arg(long, value_name = "KEY=VALUE")]
    pub filter: Vec<String>,

    /// Reading threads for a plain file (default: number of CPUs).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,

    /// Longest entry (header and statement) read: a longer one stops the digest with an error. gzip and stdin are read in memory bounded by it.
    #[arg(long, value_name = "SIZE", default_value = "64MiB", value_parser = max_entry_size)]
    pub max_entry_size: u64,
}

/// `--capture`: a window of 1 s to 24 h.
fn capture_window(s: &str) -> Result<std::time::Duration, String> {
    let d = humantime::parse_duration(s).map_err(|e| format!("{s:?} is not a duration ({e})"))?;
    if d < std::time::Duration::from_secs(1) || d > std::time::Duration::from_secs(86_400) {
        return Err(format!("{s:?} is outside 1s..24h"));
    }
    Ok(d)
}

/// `--max-entry-size` (and check's `--slowlog-max-entry-size`): a size of
/// 1 KiB to 64 GiB.
pub fn max_entry_size(s: &str) -> Result<u64, String> {
    let n = crate::units::parse_size(s).map_err(|e| format!("{e}"))?;
    if !(1 << 10..=64 << 30).contains(&n) {
        return Err(format!("{s:?} is outside 1KiB..64GiB"));
    }
    Ok(n)
}
