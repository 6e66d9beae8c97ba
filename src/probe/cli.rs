use clap::Args;
use std::path::PathBuf;

/// Report the storage stack under PATH: the mount and its options, every
/// block device down to the disks (partitions, md, dm, loop backing files,
/// overlay upperdirs) with their queue settings and schedulers, host-wide
/// VM/THP/limits, the running MySQL/MariaDB server, and rules that set
/// schedulers at boot. Read-only.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  innotune probe                          # the datadir of the running server (else the current directory)
  innotune probe /var/lib/mysql           # a datadir, or any file or directory under it
  innotune probe /srv/db --format json    # every value, and the reason for each unknown (docs/json-probe.md)
  innotune probe --format markdown /data  # tables to paste into a ticket
  innotune probe --format json --output probe.json /data   # written atomically

Read-only. Exit codes: 0 report produced (findings only inform); 2 PATH cannot be probed.
Unreadable values show as unknown (`?` in tables), with the reason in JSON.")]
pub struct ProbeArgs {
    /// Path to inspect. Default: the datadir of a running mysqld/mariadbd, else the current directory.
    pub path: Option<PathBuf>,
}
