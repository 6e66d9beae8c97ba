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

Statements are grouped into classes by pt-query-digest's fingerprint (literals, numbers and IN/VALUES lists abstracted) and class ids are pt's (upper-case MD5 of the fingerprint).
A plain file is read by every core (entry-aligned byte ranges); gzip (recognised by its magic bytes) and stdin are streamed by one.
Exit codes: 0 ok; 2 the file cannot be read or a flag is wrong. Malformed entries are counted and skipped.
JSON fields: docs/json-slowlog.md.")]
pub struct SlowlogArgs {
    /// The slow query log (plain or gzip), or - for stdin.
    #[arg(value_name = "FILE|-")]
    pub file: PathBuf,

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
}
