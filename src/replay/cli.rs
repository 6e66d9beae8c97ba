//! `innotune replay`: its flags.

use crate::db::ConnArgs;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  innotune replay slow.log --socket /var/tmp/copy/mysql.sock --user root --speed max
  innotune replay slow.log.gz --socket /var/tmp/copy/mysql.sock --user root --concurrency 8 --read-only
  innotune replay slow.log --socket /var/tmp/copy/mysql.sock --user root --rounds 5 --format json -o before.json
  innotune replay slow.log --socket /var/tmp/copy/mysql.sock --user root --rounds 5 --compare before.json

LOG is a slow query log captured with long_query_time = 0 (MySQL, MariaDB or Percona format; `innotune slowlog --capture 60s` makes one) or a general query log (general_log = ON: its Query and Execute records are the statements, Connect … on DB and Init DB set the session's database; it has no timings, so classes show none from the log and --speed 1 follows the records' times, to the second on MariaDB). Plain or gzip, or - for stdin. A log whose statements fit in --preload (1 GiB) is read into memory before the first round: the rounds are timed from when every connection is open to the last statement's end, without the reading. A larger one is read as a stream, each round again: memory is then bounded by --max-entry-size and the queues to the connections, never by the log's size (stdin cannot be read twice: --rounds 2 or more from stdin needs it to fit). The kind is told from the records (a file is scanned whole before anything runs, stdin by its first MiB); a log holding both slow-log entries and general-log records is refused.
Statements are grouped by the session (Thread_id / Id) that ran them and replayed in the log's order, each session on one connection (--concurrency N folds them onto N: sessions whose transactions overlapped then interleave on one connection, and rows both touched can fail with a duplicate key where the original waited on a lock), with `USE db` issued whenever a statement ran in another database than the connection's. Administrator commands (Prepare, Close stmt, Quit…) are not statements and are skipped.
Statements that change data are replayed as logged: replay on a copy (`innotune sandbox start --from-live`), never on the server the log came from. --read-only skips them (INSERT, UPDATE, DELETE, REPLACE, DDL, LOAD, CALL…).
A log whose fastest statement took 1 ms or more was not captured with long_query_time = 0: a warning says which share of the sessions' time it covers.
Statements that fail are counted per class and by error code (one sample each); the replay goes on.
--compare FILE: a replay saved with --format json; each class's mean latency per round is compared with FILE's (ratio with its interval at 95 % over the classes compared — Bonferroni, so 20 classes need 6 rounds on each side — and a verdict: slower, faster, no measurable difference, too few rounds). The rounds of FILE ran before these, not interleaved with them: drift between the two runs is not randomised away.
Exit codes: 0 ok (errors in statements are reported, not failures); 1 with --compare: a class is slower; 2 the log cannot be read, the server cannot be reached, or a flag is wrong.
JSON fields: docs/json-replay.md.")]
pub struct ReplayArgs {
    /// The slow query log or general query log (plain or gzip), or - for stdin.
    #[arg(value_name = "LOG|-")]
    pub log: PathBuf,

    #[command(flatten)]
    pub conn: ConnArgs,

    /// Pacing: `max` (as fast as the server answers), `1` (the log's own gaps between statements, timed from when the first connection is open), `2` (twice as fast), any factor > 0.
    #[arg(long, value_name = "max|FACTOR", default_value = "max", value_parser = parse_speed)]
    pub speed: Speed,

    /// Fold the sessions onto N connections (a session stays on one connection). Default: one connection per session, up to 1024.
    #[arg(long, value_name = "N")]
    pub concurrency: Option<usize>,

    /// Skip statements that change data or schema.
    #[arg(long)]
    pub read_only: bool,

    /// Replay the log this many times (each a round; --compare needs several).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub rounds: u32,

    /// A replay of the same log saved with --format json: compare each class with it.
    #[arg(long, value_name = "FILE")]
    pub compare: Option<PathBuf>,

    /// Read the log's statements into memory before the first round when they fit in SIZE (each statement's text plus 128 bytes), so the rounds time the statements alone and later rounds do not read the log again; a log that holds more is streamed (reading it is then in the rounds' time). 0: always stream.
    #[arg(long, value_name = "SIZE", default_value = "1GiB", value_parser = crate::units::parse_size)]
    pub preload: u64,

    /// Longest entry (header and statement) read: a longer one stops the replay with an error.
    #[arg(long, value_name = "SIZE", default_value = "64MiB", value_parser = crate::slowlog::cli::max_entry_size)]
    pub max_entry_size: u64,
}

/// `--speed`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Speed {
    Max,
    Factor(f64),
}

fn parse_speed(s: &str) -> Result<Speed, String> {
    if s.eq_ignore_ascii_case("max") {
        return Ok(Speed::Max);
    }
    match s.parse::<f64>() {
        Ok(f) if f.is_finite() && f > 0.0 => Ok(Speed::Factor(f)),
        _ => Err(format!(
            "{s:?} is not `max` or a factor > 0 (1 = the log's pace)"
        )),
    }
}
