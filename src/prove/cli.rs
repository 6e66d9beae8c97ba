use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

/// Prove a host-wide change: compare the current state with each change
/// alone and with all of them together, in randomised interleaved rounds,
/// and say for each workload whether it made things faster, slower, or no
/// measurable difference. Every switch is journaled and put back.
///
/// A change is KEY=VALUE: a block-queue attribute of the disk(s) under
/// PATH (scheduler, read_ahead_kb, nr_requests, rq_affinity, nomerges,
/// add_random, max_sectors_kb, wbt_lat_usec, iostats), checked against each
/// device's sysfs before anything changes, or a sysctl innotune may write
/// (vm.swappiness, vm.dirty_ratio, vm.dirty_background_ratio,
/// vm.dirty_expire_centisecs, vm.dirty_writeback_centisecs,
/// vm.vfs_cache_pressure, …), or a server variable innotune may set
/// (innodb_io_capacity, innodb_buffer_pool_size, …): a key with a '.' is a
/// sysctl, one of the queue attributes above is a block-queue attribute,
/// any other is a server variable. A server variable needs an OLTP
/// workload; it is set with SET GLOBAL between rounds, on the throwaway
/// server the OLTP workloads run on (never the live server; given
/// connection options, that server starts with the named server's InnoDB
/// settings sized to its data, as tune's "before"), or with --live-server
/// on the server the connection options name (its sbtest tables, prepared
/// with `innotune oltp WORKLOAD prepare`). Only dynamic
/// variables: one that needs a restart is refused, on a sandbox too. Each
/// variable's value is tried (SET, read back, put back) before any round;
/// one the server rejects, adjusts or lacks is refused in one line.
///
/// `mount=OPTION` (or `mount:OPTION`) switches an access-time mount option
/// of PATH's filesystem (noatime, relatime, strictatime, nodiratime,
/// diratime, lazytime, nolazytime) with `mount -o remount` between rounds,
/// journaled like every switch. Never on the root filesystem; on a
/// filesystem that holds a MySQL datadir (a running server's, or the one
/// the server option files name) only when it is a scratch filesystem (on a
/// loop device, or tmpfs/ramfs). One mount option per run.
///
/// Arms: `current` (the state found at start), each change alone, and
/// `all` (every change) when there are two or more. Each round puts every
/// arm in place once, in a fresh random order, and runs every workload
/// under it (warm-up discarded, then a measured window). Each arm is
/// compared with `current` per workload: the median ratio of throughput
/// (and of p99) with its exact interval and a verdict word, at a
/// level corrected for the number of comparisons (Bonferroni:
/// 0.05 / (arms × workloads)); rounds too few to ever reach that level are
/// refused before anything is switched.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit codes: 0 done (whatever the verdicts); 2 error (settings restored, nothing left behind).\nEXAMPLES:\n  innotune prove /data --change read_ahead_kb=1024 --workload page-read\n  innotune prove /data --change scheduler=mq-deadline --change nr_requests=64 --workload mixed --rounds 6\n  innotune prove /var/lib/mysql --change vm.swappiness=1 --workload oltp_read_write --threads 8,64 --budget 20m\n  innotune prove /data --change mount=noatime --workload page-read\n  innotune prove /data --change vm.dirty_ratio=10 --workload page-write --sequential --trial 4s\n  innotune prove /data --change innodb_io_capacity=2000 --workload oltp_read_write --threads 8\n  innotune prove /data --change innodb_io_capacity=2000 --workload oltp_read_write --live-server --socket /run/mysqld/mysqld.sock\nJSON fields: docs/json-prove.md."
)]
pub struct ProveArgs {
    /// A directory on the filesystem to test; work files go in a temporary
    /// subdirectory that is removed afterwards.
    pub path: PathBuf,

    /// A change to prove, KEY=VALUE (repeatable): a block-queue attribute
    /// of the devices under PATH, a sysctl (a key with a '.'), `mount=OPTION`
    /// (a mount option of PATH's filesystem), or any other key a dynamic
    /// server variable.
    #[arg(long = "change", value_name = "KEY=VALUE", required = true)]
    pub changes: Vec<String>,

    /// Workload: a bench preset, a job file, or an OLTP workload (run on a
    /// throwaway server whose datadir is on PATH's filesystem); repeatable.
    /// Default: page-read, page-write, fsync-4k, mixed.
    #[arg(long = "workload", value_name = "NAME|FILE", value_delimiter = ',')]
    pub workloads: Vec<String>,

    /// Client threads of the OLTP workloads: each thread count is a
    /// workload of its own (`oltp_read_write@64`).
    #[arg(long, value_delimiter = ',', value_name = "N,...", default_value = "8")]
    pub threads: Vec<u32>,

    /// Rounds (at least 4; default 5, with --sequential the most, default 10).
    #[arg(long)]
    pub rounds: Option<u32>,

    /// Measured window of each trial.
    #[arg(long, default_value = "10s", value_parser = crate::units::parse_duration)]
    pub trial: Duration,

    /// Warm-up before each measured window (excluded from results).
    #[arg(long, default_value = "2s", value_parser = crate::units::parse_duration)]
    pub warmup: Duration,

    /// Total time to spend on the rounds: as many rounds as fit (at most
    /// 20, or --rounds); refused when not even 4 fit.
    #[arg(long, value_parser = crate::units::parse_duration)]
    pub budget: Option<Duration>,

    /// Stop as soon as every comparison has crossed its group-sequential
    /// boundary (Pocock-type alpha spending).
    #[arg(long)]
    pub sequential: bool,

    /// Seed of the trial order (default: random, reported).
    #[arg(long)]
    pub seed: Option<u64>,

    /// Change only these devices of the stack (default: every device under
    /// PATH that has a scheduler).
    #[arg(long = "device", value_delimiter = ',', value_name = "NAME,...")]
    pub devices: Vec<String>,

    /// Size of each file workload's file set (512m, 2g). Default: the
    /// workloads' own, scaled down to fit PATH's free space.
    #[arg(long, value_name = "SIZE", value_parser = crate::units::parse_size)]
    pub size: Option<u64>,

    /// Smallest relative effect that counts as a difference: 3%, 0.03 or 3.
    #[arg(long, default_value = "3%", value_parser = crate::sweep::cli::parse_min_effect)]
    pub min_effect: f64,

    /// Tables the OLTP server loads (sysbench --tables).
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub oltp_tables: u32,

    /// Rows per table (sysbench --table-size).
    #[arg(long, value_name = "ROWS", default_value_t = 100_000)]
    pub oltp_table_size: u32,

    /// innodb_buffer_pool_size of the OLTP server (default 32M, or given
    /// connection options without --live-server, that server's, scaled).
    #[arg(long, value_name = "SIZE")]
    pub oltp_buffer_pool: Option<String>,

    /// Run the OLTP workloads on the server the connection options name
    /// (its sbtest tables must exist) and SET GLOBAL server-variable
    /// changes there, journaled and put back; dynamic variables only.
    #[arg(long)]
    pub live_server: bool,

    #[command(flatten)]
    pub conn: crate::db::ConnArgs,
}
