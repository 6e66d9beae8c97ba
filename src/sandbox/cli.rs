//! `innotune sandbox start|stop|status`.

use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  innotune sandbox start --dir /var/tmp/sb --profile after
  innotune oltp oltp_read_write prepare --socket /var/tmp/sb/mysql.sock --user root --tables 4
  innotune sandbox status --dir /var/tmp/sb
  innotune sandbox stop --dir /var/tmp/sb            # shut down and remove /var/tmp/sb
  innotune sandbox stop --dir /var/tmp/sb --keep     # shut down, keep data for the next start

Profiles: default (server defaults), before (a stock server), after (before plus what
`innotune check` recommends for it on this host), listed in `innotune sandbox start --help`.
A sandbox kept by `stop --keep` starts again with the profile and port it had.
Every sandbox makes room for 1024 client threads (max_connections, max_prepared_stmt_count).
A DIR inside, equal to or containing a MySQL datadir is refused, and so is one that is not
yours alone (another user's, writable by others, or holding files innotune did not make).
stop signals only the server innotune started in DIR (pid, start time, executable, command line).
Exit codes: 0 ok; 1 status: the server is not running; 2 usage or environment error.")]
pub struct SandboxArgs {
    #[command(subcommand)]
    pub action: SandboxAction,
}

#[derive(Debug, Subcommand)]
pub enum SandboxAction {
    /// Initialise DIR/data and start a private server on DIR/mysql.sock and a free 127.0.0.1 port.
    #[command(after_help = "Examples:
  innotune sandbox start --dir /var/tmp/sb
  innotune sandbox start --dir /data/sb --profile before --port 3307
  innotune sandbox start --dir /data/sb --profile ./my-vars.cnf --keep
  innotune sandbox start --dir /data/copy --from-live --socket /run/mysqld/mysqld.sock

--from-live copies the running server's data into the new sandbox: with mariadb-backup --backup and --prepare when it is installed (every schema, grants too), else with mysqldump of every schema but mysql, sys, information_schema and performance_schema. Refused in one line, before DIR is made, when those schemas hold more than --max-size, or when DIR is at or in the live server's datadir. The live server is only read; its credentials come from option files (and --user), handed to the tools in a 0600 option file inside DIR, never on their command line.")]
    Start(StartArgs),
    /// Shut the server down cleanly and remove DIR (unless --keep).
    #[command(after_help = "Examples:
  innotune sandbox stop --dir /var/tmp/sb
  innotune sandbox stop --dir /var/tmp/sb --keep

A plain stop of a sandbox kept earlier (and not running) removes its directory.")]
    Stop(StopArgs),
    /// Report pid, port, socket and version of the server in DIR (exit 1 when it is not running, or DIR is gone).
    #[command(after_help = "Example:\n  innotune --format json sandbox status --dir /var/tmp/sb")]
    Status(DirArgs),
}

/// The directory of an existing sandbox.
#[derive(Debug, Args)]
pub struct DirArgs {
    /// The sandbox directory, as given to `innotune sandbox start`.
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,
}

/// The directory of a new sandbox.
#[derive(Debug, Args)]
pub struct NewDirArgs {
    /// The sandbox directory: created by start, must be empty or absent (or hold a sandbox kept by `stop --keep`), and outside every MySQL datadir.
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,
}

#[derive(Debug, Args)]
pub struct StartArgs {
    #[command(flatten)]
    pub dir: NewDirArgs,
    /// Server variables: `default` (the server's compiled-in defaults), `before` (a stock server as commonly found: 128M buffer pool, 48M redo, 16M log buffer, flush_method fsync, io_capacity 200/2000, neighbour flushing on, flush_log_at_trx_commit 1), `after` (`before` plus every server variable `innotune check DIR` recommends for it on this host: its RAM, the device and filesystem under DIR; the server starts with `before`, is checked, and starts again with `after` on the same port; the values are listed, and `after` is `before` where check recommends nothing), or a file of `name = value` lines. Default: `default`, or for a sandbox kept by `stop --keep` the profile it was started with (its recorded values; `after` is not derived again).
    #[arg(long, value_name = "NAME|FILE")]
    pub profile: Option<String>,
    /// TCP port on 127.0.0.1 (default: a free one; for a kept sandbox the port it had, when still free).
    #[arg(long, value_name = "N")]
    pub port: Option<u16>,
    /// Keep DIR when the sandbox is stopped.
    #[arg(long)]
    pub keep: bool,
    /// Seconds to wait for the server to accept connections.
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    pub timeout: u64,
    /// Fill the sandbox with a copy of the running server's data (see below).
    #[arg(long)]
    pub from_live: bool,
    /// The live server's socket (default: from option files).
    #[arg(long, value_name = "PATH", requires = "from_live")]
    pub socket: Option<PathBuf>,
    /// The live server's user (default: from option files, else the login name).
    #[arg(long, value_name = "NAME", requires = "from_live")]
    pub user: Option<String>,
    /// Read the live server's connection options only from this file.
    #[arg(long, value_name = "FILE", requires = "from_live")]
    pub defaults_file: Option<PathBuf>,
    /// Read no option files for the live server's connection.
    #[arg(long, requires = "from_live")]
    pub no_defaults: bool,
    /// How to copy: auto (mariadb-backup when installed, else logical), backup, or logical.
    #[arg(long, value_enum, default_value = "auto", requires = "from_live")]
    pub copy_method: super::live::CopyMethod,
    /// Refuse a copy of schemas holding more than SIZE (data and indexes).
    #[arg(long, value_name = "SIZE", default_value = "4GiB", value_parser = max_size, requires = "from_live")]
    pub max_size: u64,
}

fn max_size(s: &str) -> Result<u64, String> {
    crate::units::parse_size(s).map_err(|e| format!("{e}"))
}

#[derive(Debug, Args)]
pub struct StopArgs {
    #[command(flatten)]
    pub dir: DirArgs,
    /// Keep DIR (data, my.cnf, error log) after stopping.
    #[arg(long)]
    pub keep: bool,
}
