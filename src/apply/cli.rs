use crate::check::cli::CheckOpts;
use clap::Args;

/// Make check's advice true, now and after a reboot, through the journal.
///
/// Without --yes: the plan, as a diff (exit 1 when something would
/// change). With --yes: runtime changes (schedulers, read_ahead_kb,
/// nr_requests, sysctls, transparent hugepages, RPS, SET GLOBAL — SET
/// PERSIST on MySQL 8) and the files that keep them (a udev rule or a
/// systemd unit, sysctl.d, tmpfiles.d, a systemd drop-in with LimitNOFILE,
/// a [mysqld] drop-in in a directory the server's option files include).
/// Every change is journaled; `innotune restore` reverts all of it,
/// including removing the installed files. Durability settings and
/// /etc/fstab are never changed (the plan says what to do).
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  innotune apply                  # the plan, as a diff (exit 1 when something is pending)\n  innotune apply --yes            # make it so, journaled; innotune restore reverts it\n  innotune apply /srv/db --check  # exit 0 when nothing is pending, 1 when something is (Ansible changed_when)\nTo review the files apply would install, without installing them: innotune check --emit DIR.\nExit codes: 0 nothing pending (or everything applied); 1 something is pending (the plan without --yes, or --check) or could not be applied; 2 error.\nJSON fields: docs/json-apply.md."
)]
pub struct ApplyArgs {
    #[command(flatten)]
    pub opts: CheckOpts,

    /// Apply the plan.
    #[arg(long, short = 'y', conflicts_with = "check")]
    pub yes: bool,

    /// A setting to make true as well, NAME=VALUE (repeatable), in place
    /// of check's advice for it (what `tune --search` proved): a server
    /// variable (SET GLOBAL now, a line in innotune's [mysqld] drop-in),
    /// `queue/scheduler`, `queue/nr_requests` or `queue/read_ahead_kb` of
    /// every disk under PATH, or `DEV/queue/ATTR` of one of them (sysfs
    /// now, the udev rule), or a sysctl such as `vm.dirty_ratio`
    /// (/proc/sys now, sysctl.d).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,

    /// Only say whether anything is pending: exit 0 nothing, 1 something (for Ansible changed_when, cron).
    #[arg(long)]
    pub check: bool,
}
