pub use super::options::Objective;
use super::options::{Progress, SweepOptions};
use crate::trial::server::OltpSettings;
use clap::Args;
use std::path::PathBuf;

/// Compare I/O schedulers on every device under PATH, with confidence
/// intervals, and always put the devices back.
///
/// Each round visits the candidates in a fresh random order; each trial sets
/// the candidate on every device in the stack (journaled first), runs a
/// warm-up, then a measured window. Verdicts need an exact rank test at
/// p <= 0.05, the ratio to the current setting (the median of all trial
/// ratios) with its exact 95% interval, the same test inverted, excluding 1,
/// and an effect of at least --min-effect.
///
/// OLTP workloads count transactions per second (tps) where bench
/// workloads count IOPS; p99 is the transaction's.
///
/// The recommendation keeps the current setting unless a candidate was
/// measurably better. When the devices' current setting was not among the
/// candidates (e.g. `--schedulers none,none` while a disk is on
/// mq-deadline), it is kept ("not measured") unless --choose is given and
/// one candidate was significantly better than every other.
///
/// Before switching anything, the files of every workload are checked
/// against the free space of PATH's filesystem: scaled down to fit (with a
/// warning) or refused at once; --size sets them.
///
/// Exit codes: 0 the recommendation is what the devices already use; 1 the
/// recommendation differs from the current setting (a pending change);
/// 2 error (settings restored).
#[derive(Debug, Args)]
#[command(
    after_help = "Exit codes: 0 the recommendation is what the devices hold now (including \"keep the current setting: it was not measured\"); 1 it differs (a pending change); 2 error (devices restored, nothing left behind).\nExamples:\n  innotune sweep /data\n  innotune sweep /data --schedulers none,mq-deadline --workload mixed --objective latency --choose\n  innotune sweep /data --schedulers none,none --budget 7m      # A/A: how noisy is this host? (the four default workloads need 6m35s)\n  innotune sweep /data --schedulers none,mq-deadline --workload mixed --sequential --trial 3s   # stops once the answer is clear\n  innotune sweep /data --size 512m --workload page-read --workload oltp_read_write\nJSON fields: docs/json-sweep.md."
)]
pub struct SweepArgs {
    /// A directory on the filesystem to test; work files go in a temporary
    /// subdirectory that is removed afterwards.
    pub path: PathBuf,

    /// Schedulers to compare (default: every one all devices offer). Naming
    /// one twice (`none,none`) is an A/A run: a check of the noise.
    #[arg(long, value_delimiter = ',', value_name = "NAME,...")]
    pub schedulers: Vec<String>,

    /// Switch only these devices of the stack (default: every device under
    /// PATH that has a scheduler), e.g. `--device vda` to leave a loop or
    /// dm device on top alone and measure the disk's scheduler by itself.
    #[arg(long = "device", value_delimiter = ',', value_name = "NAME,...")]
    pub devices: Vec<String>,

    /// Extra dimension: queue/nr_requests values to try with each scheduler.
    #[arg(long, value_delimiter = ',', value_name = "N,...")]
    pub nr_requests: Vec<u32>,

    /// Extra dimension: queue/read_ahead_kb values to try with each scheduler.
    #[arg(long, value_delimiter = ',', value_name = "KB,...")]
    pub read_ahead_kb: Vec<u32>,

    /// Workload: a bench preset, a job file, or an OLTP workload
    /// (oltp_read_only, oltp_write_only, oltp_read_write, oltp_point_select,
    /// oltp_insert: run on a throwaway server whose datadir is on PATH's
    /// filesystem); repeatable, mixable.
    /// Default: page-read, page-write, fsync-4k, mixed.
    #[arg(long = "workload", value_name = "NAME|FILE")]
    pub workloads: Vec<String>,

    /// Rounds: trials per candidate and workload. A fixed design runs
    /// exactly this many (default 5); with --sequential it is the most
    /// rounds (default 10). Each verdict needs p ≤ 0.05 / workloads, which
    /// the exact rank test reaches from 4 rounds with one workload and 5
    /// with two to six (4 rounds: p ≥ 0.029); fewer are refused.
    #[arg(long)]
    pub rounds: Option<u32>,

    /// Stop as soon as the answer is clear: after each round, test every
    /// comparison the recommendation needs against a group-sequential
    /// boundary (Pocock-type alpha spending, so the false-positive bound
    /// holds over all looks) and stop once all have crossed, or once no
    /// candidate can become the recommendation any more (a kept verdict
    /// against it, or it stalled where the current setting never did);
    /// ties run to --rounds or the budget. The report names the round of
    /// each verdict.
    /// Pair it with short trials (--trial 3s): with at most 10 rounds the
    /// first look that can cross is round 5 with one workload, 6 with four
    /// (the report names it: "verdicts possible from round N").
    #[arg(long)]
    pub sequential: bool,

    /// Measured window of each trial (at least 1s).
    #[arg(long, default_value = "10s", value_parser = parse_trial)]
    pub trial: std::time::Duration,

    /// Warm-up before each measured window (excluded from results).
    #[arg(long, default_value = "2s", value_parser = crate::units::parse_duration)]
    pub warmup: std::time::Duration,

    /// Total time to spend: plans rounds and trial length to fit, and says
    /// what it chose (overrides --rounds/--trial as needed; never shortens
    /// a trial below what its workload needs to reach a steady state, and
    /// tests fewer candidates, the current setting, the kernel default and
    /// the class rule's choice first, when all do not fit). With
    /// --sequential: the most rounds.
    #[arg(long, value_parser = crate::units::parse_duration)]
    pub budget: Option<std::time::Duration>,

    /// What the recommendation optimises.
    #[arg(long, value_enum, default_value_t = Objective::Balanced)]
    pub objective: Objective,

    /// Smallest relative effect that counts as a difference: 3%, 0.03 or 3.
    #[arg(long, default_value = "3%", value_parser = parse_min_effect)]
    pub min_effect: f64,

    /// Seed of the trial order and of the bootstrap (default: random, reported).
    #[arg(long)]
    pub seed: Option<u64>,

    /// When the devices' current setting is not among the candidates,
    /// recommend a candidate that was significantly better than every
    /// other one (default: keep the unmeasured current setting).
    #[arg(long)]
    pub choose: bool,

    /// Trace every measured window (`innotune trace`'s capture): each
    /// trial records where its reads spent their time, in the scheduler
    /// (I2D) or the device (D2C).
    #[arg(long)]
    pub trace: bool,

    /// Size of each file workload's file set (fio-style: 512m, 2g), split
    /// over its jobs. Default: the workloads' own (1 GiB per job), scaled
    /// down to fit PATH's free space.
    #[arg(long, value_name = "SIZE", value_parser = parse_file_size)]
    pub size: Option<u64>,

    #[command(flatten)]
    pub oltp: OltpArgs,
}

/// How OLTP workloads run. One sandbox server (mariadbd/mysqld on its own
/// socket and port, never 3306) is started per sweep with its datadir,
/// redo log and tmpdir in the work directory on PATH's filesystem, loaded
/// once, and every trial runs the workload against it. The defaults make
/// the storage matter: about 92 MiB of tables against a 32 MiB buffer
/// pool (measured: oltp_read_write reads ~7.5 pages from the device per
/// transaction).
#[derive(Debug, Args)]
#[command(next_help_heading = "OLTP workloads")]
pub struct OltpArgs {
    /// Client threads (sysbench --threads).
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub oltp_threads: u32,

    /// Tables to load (sysbench --tables).
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub oltp_tables: u32,

    /// Rows per table (sysbench --table-size; about 240 bytes a row with
    /// its index).
    #[arg(long, value_name = "ROWS", default_value_t = 100_000)]
    pub oltp_table_size: u32,

    /// Server variables of the sandbox: `default` (the server's own),
    /// `before`, `after` (check's advice for a `before` server on this
    /// host, derived as the sandbox starts; its buffer pool is the one
    /// below; see `innotune sandbox start --help`) or a file of
    /// `name = value` lines.
    #[arg(long, value_name = "NAME|FILE", default_value = "default")]
    pub sandbox_profile: String,

    /// innodb_buffer_pool_size of the sandbox (default: the profile's if it
    /// sets one, else 32M: small, so reads reach the device).
    #[arg(long, value_name = "SIZE")]
    pub oltp_buffer_pool: Option<String>,
}

impl SweepArgs {
    /// The options these flags ask for (progress on the status line).
    pub fn options(self) -> SweepOptions {
        SweepOptions {
            path: self.path,
            schedulers: self.schedulers,
            devices: self.devices,
            nr_requests: self.nr_requests,
            read_ahead_kb: self.read_ahead_kb,
            workloads: self.workloads,
            rounds: self.rounds.unwrap_or(if self.sequential {
                super::options::DEFAULT_SEQUENTIAL_ROUNDS
            } else {
                5
            }),
            sequential: self.sequential,
            trial: self.trial,
            warmup: self.warmup,
            budget: self.budget,
            objective: self.objective,
            min_effect: self.min_effect,
            seed: self.seed,
            choose: self.choose,
            trace: self.trace,
            size: self.size,
            oltp: OltpSettings {
                threads: self.oltp.oltp_threads,
                tables: self.oltp.oltp_tables,
                table_size: self.oltp.oltp_table_size,
                sandbox_profile: self.oltp.sandbox_profile,
                buffer_pool: self.oltp.oltp_buffer_pool,
            },
            progress: Progress::StatusLine,
        }
    }
}

/// The shortest `--trial`: a shorter window holds too few I/Os to rank
/// anything (and `0` or `1ms` used to run 1 s trials without a word).
pub const MIN_TRIAL: std::time::Duration = std::time::Duration::from_secs(1);

/// `--trial`: a duration of at least [`MIN_TRIAL`].
fn parse_trial(s: &str) -> Result<std::time::Duration, String> {
    let d = crate::units::parse_duration(s).map_err(|e| e.to_string())?;
    if d < MIN_TRIAL {
        return Err(format!(
            "--trial {s} is shorter than the shortest trial, {} s: so short a window measures too few I/Os to rank the settings (fix: give --trial 1s or more, e.g. --trial 3s --sequential for short trials)",
            MIN_TRIAL.as_secs()
        ));
    }
    Ok(d)
}

/// A positive fio-style size.
fn parse_file_size(s: &str) -> Result<u64, String> {
    match crate::units::parse_size(s) {
        Ok(0) => Err(format!("{s:?} is zero (examples: 512m, 2g)")),
        Ok(v) => Ok(v),
        Err(e) => Err(e.to_string()),
    }
}

/// `3%` → 0.03, `0.03` → 0.03, `3` → 0.03 (a bare number ≥ 1 is percent).
pub fn parse_min_effect(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, pct) = match t.strip_suffix('%') {
        Some(n) => (n, true),
        None => (t, false),
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a percentage (examples: 3%, 0.03)"))?;
    let v = if pct || v >= 1.0 { v / 100.0 } else { v };
    if !(0.0..1.0).contains(&v) {
        return Err(format!("{s:?} must be between 0% and 100%"));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::{parse_min_effect, parse_trial};

    /// Issue 39: `--trial 0` and `--trial 1ms` silently ran 1 s trials.
    #[test]
    fn a_trial_below_the_minimum_is_refused_with_a_fix() {
        for s in ["0", "1ms", "999ms", "0.5"] {
            let e = parse_trial(s).unwrap_err();
            assert!(
                e.contains("shorter than the shortest trial, 1 s") && e.contains("fix:"),
                "{s}: {e}"
            );
        }
        assert_eq!(parse_trial("1").unwrap().as_secs(), 1);
        assert_eq!(parse_trial("3s").unwrap().as_secs(), 3);
        assert!(parse_trial("400d").unwrap_err().contains("out of range"));
        assert!(parse_trial("nan").unwrap_err().contains("not a number"));
    }

    #[test]
    fn min_effect_forms() {
        assert_eq!(parse_min_effect("3%").unwrap(), 0.03);
        assert_eq!(parse_min_effect("0.05").unwrap(), 0.05);
        assert_eq!(parse_min_effect("5").unwrap(), 0.05);
        assert!(parse_min_effect("abc").is_err());
        assert!(parse_min_effect("150%").is_err());
    }
}
