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
  innotune sandbox start --dir /data/sb --profile ./my-vars.cnf --keep")]
    Start(StartArgs),
    /// Shut the server down cleanly and remove DIR (unless --keep).
    #[command(after_help = "Examples:
  innotune sandbox stop --dir /var/tmp/sb
  innotune sandbox stop --dir /var/tmp/sb --keep

A plain stop of a sandbox kept earlier (and not running) removes its directory.")]
    Stop(StopArgs),
    /// Report pid, port, socket and version of the server in DIR (exit 1 when it is not running).
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
    /// Server variables: `default` (server defaults), `before`, `after`, or a file of `name = value` lines.
    #[arg(long, value_name = "NAME|FILE", default_value = "default")]
    pub profile: String,
    /// TCP port on 127.0.0.1 (default: a free one).
    #[arg(long, value_name = "N")]
    pub port: Option<u16>,
    /// Keep DIR when the sandbox is stopped.
    #[arg(long)]
    pub keep: bool,
    /// Seconds to wait for the server to accept connections.
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    pub timeout: u64,
}

#[derive(Debug, Args)]
pub struct StopArgs {
    #[command(flatten)]
    pub dir: DirArgs,
    /// Keep DIR (data, my.cnf, error log) after stopping.
    #[arg(long)]
    pub keep: bool,
}
