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
/// Marker every file innotune installs starts with; innotune overwrites
/// only files that carry it (an existing file without it is never taken
/// over: `EditedFile::require_prefix`).
pub const MARKER: &str = "# Managed by innotune";

pub const MYCNF_NAME: &str = "99-innotune.cnf";
pub const LIMITS_NAME: &str = "innotune-limits.conf";
pub const FSTAB: &str = "fstab.innotune";

/// Every sysctl a rule may set (`check::rules::Setting::sysctl`): what `apply` may
/// write to /proc/sys, and so all `innotune restore` accepts in a journal
/// (`change::Sysctl::validate`). A rule that sets another must add it here.
pub const SYSCTLS: &[&str] = &[
    "vm.swappiness",
    "vm.dirty_ratio",
    "vm.dirty_background_ratio",
    "fs.aio-max-nr",
    "net.core.rps_sock_flow_entries",
];

/// Every server variable a rule may change (`check::rules::Setting::var`): what `apply` may `SET GLOBAL`/`SET PERSIST`, and so
/// all `innotune restore` accepts in a journal
/// (`change::ServerVariable::validate`). A rule that changes another must
/// add it here.
pub const SERVER_VARIABLES: &[&str] = &[
    "innodb_buffer_pool_size",
    "innodb_file_per_table",
    "innodb_flush_method",
    "innodb_io_capacity",
    "innodb_io_capacity_max",
    "innodb_log_buffer_size",
    "innodb_log_file_size",
    "innodb_numa_interleave",
    "innodb_read_ahead_threshold",
    "innodb_read_io_threads",
    "innodb_redo_log_capacity",
    "max_connections",
    "max_heap_table_size",
    "query_cache_size",
    "query_cache_type",
    "slow_query_log",
    "tmp_table_size",
];
