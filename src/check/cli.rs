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

fn duration(s: &str) -> Result<Duration, String> {
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    humantime::parse_duration(s).map_err(|e| format!("{s:?}: {e} (e.g. 60s, 2m, 0)"))
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
    after_help = "Exit codes: 0 no finding of severity warning or worse; 1 at least one warning or critical finding; 2 error.\nJSON fields: docs/json-check.md. Apply the advice with: innotune apply [PATH] (shows the plan), innotune apply --yes."
)]
pub struct CheckArgs {
    #[command(flatten)]
    pub opts: CheckOpts,

    /// Write the persistent form of every recommended change under DIR (laid out as under /: DIR/etc/udev/rules.d/…, plus DIR/fstab.innotune), each checked by the real tool where one is installed.
    #[arg(long, value_name = "DIR")]
    pub emit: Option<PathBuf>,
}
