//! `innotune tune`'s flags (documented here, where they are defined).

use super::options::TuneOptions;
use crate::db::ConnArgs;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

/// The whole practice as one command: probe, check, a scheduler sweep and
/// a before/after OLTP run, within a time budget; a report and the files
/// that persist the advice. Changes nothing permanently.
///
/// PATH (default: the running server's datadir, else the current
/// directory) names the filesystem to measure: the sweep's scratch
/// directory and the throwaway servers' datadirs go on it, and are removed
/// afterwards. Every switched setting and every started server is
/// journaled and put back on every exit path; Ctrl-C keeps what was
/// measured, writes the partial report, and exits 130.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit codes: 0 done (the report is in --out); 2 error; 130 interrupted (the partial report is in --out).\nExamples:\n  innotune tune                      # the running server's datadir, about 2½ minutes\n  innotune tune --quick /srv/db      # about 1 minute\n  innotune tune /srv/db --budget 15m --out /tmp/tune-db1\n  innotune tune /mnt/loopfs --device loop0   # switch only the loop device, not the disk under its file\n  innotune tune /srv/db --search --budget 15m --socket /run/mysqld/mysqld.sock\nThen: the `innotune apply …` command printed at the end.\nJSON fields: docs/json-tune.md."
)]
pub struct TuneArgs {
    /// A directory on the filesystem to tune (default: the running server's datadir, else the current directory).
    pub path: Option<PathBuf>,

    /// About one minute in all: shorter sweep, smaller tables, threads 1,4,8.
    #[arg(long, conflicts_with = "budget")]
    pub quick: bool,

    /// Total time to spend (default 140s, with --search 15m; at least 40s, with --search 2m): phases are planned to fit and stopped when it runs out.
    #[arg(long, value_name = "DURATION", value_parser = parse_budget)]
    pub budget: Option<Duration>,

    /// Where the report and the files go (default: ./innotune-<host>-<YYYYmmdd-HHMMSS>/). Created if missing; must be empty if it exists.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// OLTP client threads, e.g. 1,8,32 (default: 1,4,8 with --quick, else 1,4,8,16,32).
    #[arg(long, value_delimiter = ',', value_name = "N,...", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: Vec<u32>,

    /// Switch only these devices of the stack in the sweep (default: every
    /// device under PATH that has a scheduler), e.g. `--device loop0` to
    /// leave the disk under a loop device's backing file alone. As sweep's
    /// --device; the run says which devices it switches before it does.
    #[arg(long = "device", value_delimiter = ',', value_name = "NAME,...")]
    pub devices: Vec<String>,

    /// Skip the OLTP before/after phase even when a server binary is installed.
    #[arg(long)]
    pub no_oltp: bool,

    /// A slow query log for the check phase to read (statements that need an index, full scans, temporary tables on disk; as check --slowlog).
    #[arg(long, value_name = "FILE")]
    pub slowlog: Option<PathBuf>,

    /// Seed of the OLTP comparison's round order (default: random; the report names it, so a run can be repeated).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Measure durability trade-offs check recommends (innodb_flush_log_at_trx_commit other than 1, sync_binlog other than 1, innodb_doublewrite off) in "after"; the report says what a crash would lose. Without it they stay out of "after".
    #[arg(long)]
    pub allow_durability_tradeoffs: bool,

    /// Search the storage-path settings by experiment instead of the
    /// phases above: server variables on a sandbox built like the live
    /// server, and the OS settings of the disks under PATH (scheduler,
    /// nr_requests, read_ahead_kb) and the dirty ratios, switched between
    /// rounds through the journal; successive halving over short OLTP
    /// trials, the best candidate proved against the current settings
    /// (default budget 15m, at least 2m).
    /// Report: --format text|json|markdown|html (docs/json-tune.md).
    #[arg(long)]
    pub search: bool,

    /// How the live server is reached for its settings (default: its option files' socket).
    #[command(flatten)]
    pub conn: ConnArgs,
}

/// Shortest budget `tune` plans for: probe, a 4-round sweep of one
/// workload at 1 s trials, and one OLTP pair.
pub const MIN_BUDGET: Duration = Duration::from_secs(40);

fn parse_budget(s: &str) -> Result<Duration, String> {
    let d = crate::units::parse_duration(s).map_err(|e| e.to_string())?;
    if d < MIN_BUDGET {
        return Err(format!(
            "{s:?} is shorter than {} s, too short to measure anything (examples: 1m, 5m, 15m)",
            MIN_BUDGET.as_secs()
        ));
    }
    if d > Duration::from_secs(24 * 3600) {
        return Err(format!(
            "{s:?} is longer than a day (examples: 1m, 5m, 15m)"
        ));
    }
    Ok(d)
}

impl TuneArgs {
    pub fn options(self) -> TuneOptions {
        let mut o = TuneOptions::new(self.path, self.quick);
        if let Some(b) = self.budget {
            o.budget = b;
        }
        if !self.threads.is_empty() {
            o.threads = self.threads;
        }
        o.out = self.out;
        o.oltp = !self.no_oltp;
        o.conn = self.conn;
        o.slowlog = self.slowlog;
        o.devices = self.devices;
        o.seed = self.seed;
        o.allow_durability_tradeoffs = self.allow_durability_tradeoffs;
        o
    }
}
