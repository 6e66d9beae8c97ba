//! innotune: the storage practice under InnoDB, as one tool.
//!
//! Layout (one folder per concern, measurement / analysis / presentation apart):
//! - [`host`]: the single rooted reader of /sys, /proc, /etc.
//! - [`probe`]: what the stack under a path is (mount, devices, host, server).
//! - [`bench`]: the I/O load generator (engines, jobs, results).
//! - [`checksum`]: tablespace verification.
//! - [`db`], [`sandbox`], [`oltp`]: talking to, starting, and loading MySQL.
//! - [`stats`]: the statistics behind every verdict.
//! - [`journal`]: host changes recorded before they are made, and undone.
//! - [`sweep`]: scheduler comparison on top of probe + bench + stats + journal.
//! - [`output`]: renderers; commands return typed reports.

pub mod aligned;
pub mod bench;
pub mod checksum;
pub mod cli;
pub mod db;
pub mod error;
pub mod host;
pub mod journal;
pub mod oltp;
pub mod output;
pub mod probe;
pub mod sandbox;
pub mod stats;
pub mod sweep;
pub mod units;

use output::{ColorChoice, Format};

/// What every command gets from the global flags.
#[derive(Debug, Clone)]
pub struct Ctx {
    pub host: host::Host,
    pub format: Format,
    pub color: ColorChoice,
}

impl Ctx {
    /// Render a report the way the user asked and return its exit code.
    pub fn emit<R: output::Report>(&self, report: &R) -> anyhow::Result<i32> {
        output::emit(report, self.format, self.color)
    }
}

/// Run a parsed command line; returns the process exit code.
pub fn run(cli: cli::Cli) -> anyhow::Result<i32> {
    use cli::Command;
    let ctx = Ctx {
        host: host::Host::with_root(&cli.root),
        format: cli.format,
        color: cli.color,
    };
    if !matches!(cli.command, Command::Restore(_)) {
        journal::warn_if_pending();
    }
    match cli.command {
        Command::Probe(a) => probe::run(a, &ctx),
        Command::Bench(a) => bench::run(a, &ctx),
        Command::Sweep(a) => sweep::run(a, &ctx),
        Command::Oltp(a) => oltp::run(*a, &ctx),
        Command::Sandbox(a) => sandbox::run(a, &ctx),
        Command::Checksum(a) => checksum::run(a, &ctx),
        Command::Restore(a) => journal::run_restore(a, &ctx),
    }
}
