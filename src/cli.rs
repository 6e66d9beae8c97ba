//! The command line: global flags and one subcommand per capability.
//!
//! Each subcommand's flags live next to its code (`<module>/cli.rs`), so a
//! flag is documented where it is defined and `--help` never drifts.

use crate::export::Format;
use crate::output::ColorChoice;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "innotune",
    version,
    about = "Find what in the storage stack under InnoDB costs performance, prove it, and verify tablespaces",
    long_about = None,
    after_help = "Exit codes: 0 ok; 1 the command found what it looks for (see each command's help); 2 usage or environment error."
)]
pub struct Cli {
    /// Output format: text for people, json for scripts (one versioned document), markdown for tickets, html for one self-contained page.
    #[arg(long, global = true, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// Write the result to FILE (atomically: a temporary file renamed over it) instead of stdout. FILE must be a regular file or a new name: a device, FIFO or symbolic link is refused.
    #[arg(long, global = true, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// When to colour text output.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,

    /// Read /sys, /proc and /etc under DIR instead of / (replay a host from a fixture tree).
    #[arg(
        long,
        global = true,
        hide = true,
        value_name = "DIR",
        default_value = "/"
    )]
    pub root: PathBuf,

    #[command(subcommand)]
    pub command: Command,
}

// Parsed once per process: variant size does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// The whole practice in one run: probe, check, sweep, OLTP before/after; a report and the files, nothing changed.
    Tune(crate::tune::cli::TuneArgs),
    /// Render results (JSON from --format json) into one HTML page or markdown, several side by side.
    Report(crate::report::cli::ReportArgs),
    /// Report the storage stack under a path: mount, devices, schedulers, host and server limits.
    Probe(crate::probe::cli::ProbeArgs),
    /// Generate I/O load with fio-style jobs and measure IOPS, bandwidth and latency.
    Bench(crate::bench::cli::BenchArgs),
    /// Compare I/O schedulers on the disk under a path, with confidence intervals; always restores.
    Sweep(crate::sweep::cli::SweepArgs),
    /// sysbench-compatible OLTP load: WORKLOAD prepare|run|cleanup.
    Oltp(Box<crate::oltp::cli::OltpArgs>),
    /// Start, stop or inspect a throwaway MySQL/MariaDB server in a private directory.
    Sandbox(crate::sandbox::cli::SandboxArgs),
    /// Verify InnoDB tablespace checksums (innochecksum-compatible exit codes).
    Checksum(crate::checksum::cli::ChecksumArgs),
    /// Advice for the OS, the storage and InnoDB, with exact values and evidence.
    Check(crate::check::cli::CheckArgs),
    /// Where block I/O time goes: btt's Q2G/G2I/I2D/D2C/Q2C per device from tracepoints, and iostat -x.
    Trace(crate::trace::cli::TraceArgs),
    /// Apply check's advice now and persistently, journaled (shows the plan without --yes).
    Apply(crate::apply::cli::ApplyArgs),
    /// Merge oltp results of several clients that ran together (latency from merged histograms).
    Merge(crate::merge::cli::MergeArgs),
    /// Digest a slow query log into classes like pt-query-digest, using every core.
    Slowlog(crate::slowlog::cli::SlowlogArgs),
    /// Put back every host setting recorded in an unfinished journal, and what apply made.
    Restore(crate::journal::cli::RestoreArgs),
}
