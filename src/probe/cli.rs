use clap::Args;
use std::path::PathBuf;

/// Report the storage stack under PATH: the mount and its options, every
/// block device down to the disks (partitions, md, dm, loop backing files)
/// with their queue settings and schedulers, host-wide VM/THP/limits, the
/// running MySQL/MariaDB server, and rules that set schedulers at boot.
/// Read-only. Exit 0 with a report; 2 when PATH cannot be probed.
#[derive(Debug, Args)]
#[command(
    after_help = "Read-only. Exit codes: 0 report produced (probe has no findings); 2 PATH cannot be probed.\nJSON fields: docs/json-probe.md. Unreadable values show as unknown, with the reason in JSON."
)]
pub struct ProbeArgs {
    /// Path to inspect. Default: the datadir of a running mysqld/mariadbd, else the current directory.
    pub path: Option<PathBuf>,
}
