use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct SandboxArgs {
    #[command(subcommand)]
    pub action: SandboxAction,
}

#[derive(Debug, Subcommand)]
pub enum SandboxAction {
    /// Initialise DIR/data and start a private server on DIR/mysql.sock and a free 127.0.0.1 port.
    Start(StartArgs),
    /// Shut the server down cleanly and remove DIR (unless --keep).
    Stop(StopArgs),
    /// Report pid, port, socket and version of the server in DIR.
    Status(DirArgs),
}

#[derive(Debug, Args)]
pub struct DirArgs {
    /// The sandbox directory (created by start; must be empty or absent).
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,
}

#[derive(Debug, Args)]
pub struct StartArgs {
    #[command(flatten)]
    pub dir: DirArgs,
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
