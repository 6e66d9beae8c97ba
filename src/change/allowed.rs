//! What innotune may write, as data: the paths its emitters target, the
//! marker its files carry, the sysctls and server variables its rules may
//! set. The emitters and rules (`check`) write only these, and each change
//! kind's `validate` accepts only these in a journal, so a forged journal
//! cannot make `innotune restore` write anything else. They live here, in
//! the change layer, because `validate` sits below the rules that use them.

pub const UDEV_RULES: &str = "/etc/udev/rules.d/99-innotune.rules";
pub const UNIT: &str = "/etc/systemd/system/innotune-queues.service";
pub const UNIT_WANTS_DIR: &str = "/etc/systemd/system/multi-user.target.wants";
pub const SYSCTL: &str = "/etc/sysctl.d/99-innotune.conf";
pub const TMPFILES: &str = "/etc/tmpfiles.d/innotune-thp.conf";
/// The CPU frequency governor at boot (a tmpfiles.d `w` line with a glob).
pub const TMPFILES_CPUFREQ: &str = "/etc/tmpfiles.d/innotune-cpufreq.conf";

/// The one cpufreq attribute innotune writes: a CPU's governor.
pub fn governor_path(cpu: u32) -> String {
    format!("/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor")
}
/// Marker every file innotune installs starts with; innotune overwrites
/// only files that carry it (an existing file without it is never taken
/// over: `EditedFile::require_prefix`).
pub const MARKER: &str = "# Managed by innotune";

pub const MYCNF_NAME: &str = "99-innotune.cnf";
pub const LIMITS_NAME: &str = "innotune-limits.conf";
pub const FSTAB: &str = "fstab.innotune";

/// Block-queue attributes innotune may write (`/sys/block/DEV/queue/ATTR`):
/// what sweep and apply change (`scheduler`, the `nr_requests` a scheduler
/// switch resets, `read_ahead_kb`), and the queue settings `innotune prove`
/// may trial. A forged journal naming any other is refused by `restore`.
pub const QUEUE_ATTRS: &[&str] = &[
    "scheduler",
    "nr_requests",
    "read_ahead_kb",
    "rq_affinity",
    "nomerges",
    "add_random",
    "max_sectors_kb",
    "wbt_lat_usec",
    "iostats",
];

/// Every sysctl a rule may set (`check::rules::Setting::sysctl`) or `prove` may trial: what `apply` may
/// write to /proc/sys, and so all `innotune restore` accepts in a journal
/// (`change::Sysctl::validate`). A rule that sets another must add it here.
pub const SYSCTLS: &[&str] = &[
    "vm.swappiness",
    "vm.dirty_ratio",
    "vm.dirty_background_ratio",
    // `innotune prove` may trial these (writeback timing, cache reclaim).
    "vm.dirty_expire_centisecs",
    "vm.dirty_writeback_centisecs",
    "vm.vfs_cache_pressure",
    "fs.aio-max-nr",
    "net.core.rps_sock_flow_entries",
];

/// Every server variable a rule may change (`check::rules::Setting::var`),
/// or `slowlog --capture` sets for its window (`long_query_time`,
/// `slow_query_log`, `log_output`, `min_examined_row_limit`,
/// `log_slow_rate_limit`): what `apply` may `SET GLOBAL`/`SET PERSIST`, and so
/// all `innotune restore` accepts in a journal
/// (`change::ServerVariable::validate`). A rule that changes another must
/// add it here. `tune --search` also switches (on its sandbox only) the
/// storage-path variables it searches: flush neighbours, LRU scan depth,
/// the adaptive hash index, change buffering, and with
/// `--allow-durability-tradeoffs` innodb_flush_log_at_trx_commit; and
/// before it restarts its sandbox for a restart knob, the buffer pool's
/// dump at shutdown (`innodb_buffer_pool_dump_at_shutdown`, `_pct`).
pub const SERVER_VARIABLES: &[&str] = &[
    "innodb_adaptive_hash_index",
    "innodb_buffer_pool_dump_at_shutdown",
    "innodb_buffer_pool_dump_pct",
    "innodb_buffer_pool_size",
    "innodb_change_buffering",
    "innodb_file_per_table",
    "innodb_flush_log_at_trx_commit",
    "innodb_flush_method",
    "innodb_flush_neighbors",
    "innodb_io_capacity",
    "innodb_io_capacity_max",
    "innodb_log_buffer_size",
    "innodb_log_file_size",
    "innodb_lru_scan_depth",
    "innodb_numa_interleave",
    "innodb_read_ahead_threshold",
    "innodb_read_io_threads",
    "innodb_redo_log_capacity",
    "innodb_write_io_threads",
    "log_output",
    "log_slow_rate_limit",
    "long_query_time",
    "max_connections",
    "max_heap_table_size",
    "min_examined_row_limit",
    "query_cache_size",
    "query_cache_type",
    "slow_query_log",
    "tmp_table_size",
];
