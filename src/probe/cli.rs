use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// Path to inspect. Default: the datadir of a running mysqld/mariadbd, else the current directory.
    pub path: Option<PathBuf>,
}
