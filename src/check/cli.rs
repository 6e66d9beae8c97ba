use crate::db::ConnArgs;
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

/// A layer of the stack (`--only`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LayerArg {
    Storage,
    Filesystem,
    Os,
    Server,
}

impl LayerArg {
    pub fn layer(self) -> crate::finding::Layer {
        use crate::finding::Layer;
        match self {
            LayerArg::Storage => Layer::Storage,
            LayerArg::Filesystem => Layer::Filesystem,
            LayerArg::Os => Layer::Os,
            LayerArg::Server => Layer::Server,
        }
    }
}

/// The one duration parser (`crate::units::parse_duration`): bare
/// seconds or `60s`, `2m`; at most 366 days, as every duration option.
fn duration(s: &str) -> Result<Duration, String> {
    crate::units::parse_duration(s).map_err(|e| format!("{e} (e.g. 60s, 2m, 0)"))
}

/// What `check` and `apply` look at (shared flags).
#[derive(Debug, Clone, Args)]
pub struct CheckOpts {
    /// Path to check. Default: the @@datadir of the server the connection flags name, else as probe (a running server's datadir, else the current directory).
    pub path: Option<PathBuf>,

    #[command(flatten)]
    pub conn: ConnArgs,

    /// Window over which server status counters are sampled (rates, never since-uptime averages); 0 = no window, rate rules skipped.
    #[arg(long, default_value = "60s", value_parser = duration, value_name = "DURATION")]
    pub sample: Duration,

    /// Skip the server rules (do not connect).
    #[arg(long)]
    pub no_server: bool,

    /// Sweep or bench results (JSON) measured on this host: a sweep's significant winner overrides the scheduler class rule; a page-write bench gives the write IOPS for io_capacity.
    #[arg(long, num_args = 1.., value_name = "FILE")]
    pub results: Vec<PathBuf>,

    /// Measure write IOPS for the io_capacity rule: 10 s of 16 KiB random O_DIRECT writes in a scratch directory on the datadir's filesystem, removed afterwards.
    #[arg(long)]
    pub measure: bool,

    /// Where --measure writes (default: next to the datadir, on its filesystem; never inside a datadir).
    #[arg(long, value_name = "DIR", requires = "measure")]
    pub scratch: Option<PathBuf>,

    /// A slow query log (a path, a .gz, or - for stdin) to read for statements that examine far more rows than they return, scan whole tables or put temporary tables on disk (pt-query-digest's classes).
    #[arg(long, value_name = "FILE")]
    pub slowlog: Option<PathBuf>,

    /// Longest slow-log entry read (as slowlog --max-entry-size): a longer one stops check with an error.
    #[arg(long, value_name = "SIZE", default_value = "64MiB", value_parser = crate::slowlog::cli::max_entry_size)]
    pub slowlog_max_entry_size: u64,

    /// Read the server's host facts not at all: the server rules only (over the connection); rules that need the host (disks, kernel, limits, NUMA) are listed as skipped, "not visible from a client". Implied by a managed --provider, by --server-capture, and by a server reached over TCP at an address that is not this machine's loopback (unless PATH is given).
    #[arg(long)]
    pub no_host_facts: bool,

    /// Who runs the server: rds, aurora, azure, cloudsql or self. Default: recognised from the server's variables (@@basedir under /rdsdbbin/, @@aurora_version, …); a given one that contradicts them is warned about and used. A managed provider implies --no-host-facts, and its findings say what the provider allows.
    #[arg(long, value_enum, value_name = "PROVIDER")]
    pub provider: Option<super::provider::Provider>,

    /// Replay a server from a capture directory instead of connecting: variables.tsv (mysql -NBe 'SHOW GLOBAL VARIABLES'), status.tsv, and optionally status-start.tsv with window-seconds for the rate rules. Implies --no-host-facts.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["socket", "host", "port", "no_server"])]
    pub server_capture: Option<PathBuf>,

    /// Check this machine as the client that runs the load against a remote server: the client rules only (RPS masks, rps_flow_cnt and rps_sock_flow_entries on the default route's NICs, the CPU affinity of their receive interrupts, the CPU frequency governor); no server, no datadir. apply --client makes them true (sysfs, sysctl, /proc/irq/N/smp_affinity; restore reverts).
    #[arg(long, conflicts_with_all = ["server_capture", "provider", "no_host_facts", "measure", "slowlog"])]
    pub client: bool,

    /// Only these layers (comma-separated).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "LAYER,…")]
    pub only: Vec<LayerArg>,
}

/// Advice for the OS, the storage and InnoDB, with exact values and evidence.
///
/// Reads the storage stack under PATH (as probe), the host's kernel and
/// process settings, and, when a server is reachable, its variables and a
/// status window; every finding has the observed and recommended value, the
/// reason and the evidence. Read-only (except --measure's scratch files).
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  innotune check                                  # the running server's datadir, and the server (60 s of status counters)\n  innotune check /srv/db --no-server --only storage,os   # the storage and OS rules only\n  innotune check --socket /var/tmp/sb/mysql.sock --user root --sample 10s\n  innotune check /srv/db --emit /tmp/innotune-files   # the persistent form of every fix, to review\n  innotune check --format prometheus --output /var/lib/prometheus/node-exporter/innotune.prom\nExit codes: 0 no finding of severity warning or worse; 1 at least one warning or critical finding; 2 error.\nJSON fields: docs/json-check.md. Apply the advice with: innotune apply [PATH] (shows the plan), innotune apply --yes."
)]
pub struct CheckArgs {
    #[command(flatten)]
    pub opts: CheckOpts,

    /// Write the persistent form of every recommended change under DIR (laid out as under /: DIR/etc/udev/rules.d/…, plus DIR/fstab.innotune), each checked by the real tool where one is installed. For a managed --provider: the provider's files instead (rds/aurora: DIR/rds-parameters.json and DIR/rds-parameter-group.tf; azure: DIR/azure-parameters.sh; cloudsql: DIR/cloudsql-flags.sh); a DIR holding files innotune did not write is refused.
    #[arg(long, value_name = "DIR")]
    pub emit: Option<PathBuf>,
}
