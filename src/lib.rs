//! innotune: the storage practice under InnoDB, as one tool.
//!
//! Layout (one folder per concern, measurement / analysis / presentation apart):
//! - [`host`]: the single rooted reader of /sys, /proc, /etc.
//! - [`model`]: the host model, read once per command (devices, queues, mounts, processes, memory, diskstats).
//! - [`probe`]: what the stack under a path is (mount, devices, host, server).
//! - [`bench`]: the I/O load generator (engines, jobs, results).
//! - [`checksum`]: tablespace verification.
//! - [`db`], [`sandbox`], [`oltp`]: talking to, starting, and loading MySQL.
//! - [`stats`]: the statistics behind every verdict.
//! - [`journal`]: host changes recorded before they are made, and undone.
//! - [`sweep`]: scheduler comparison on top of probe + bench + stats + journal.
//! - [`tune`]: the whole practice as one command (probe, check, sweep, OLTP before/after, report).
//! - [`report`]: results (JSON) in, one HTML page or markdown out, side by side.
//! - [`export`]: typed reports in, text / JSON / markdown / HTML out (one file per format).
//! - [`output`]: the terminal: colour, progress and warnings on stderr.
//! - [`finding`], [`change`]: the shared vocabulary of advice and of host changes.
//! - [`safety`]: refusals shared by every command that writes (datadirs).
//! - [`durable`]: the one durable write (journals, records, reports, host files).
//!
//! The layer order of these modules is docs/architecture.md's, held by tests/layers.rs.

pub mod aligned;
pub mod apply;
pub mod bench;
pub mod change;
pub mod check;
pub mod checksum;
pub mod cli;
pub mod db;
pub mod durable;
pub mod error;
pub mod export;
pub mod finding;
pub mod host;
pub mod journal;
pub mod merge;
pub mod model;
pub mod oltp;
pub mod output;
pub mod probe;
pub mod report;
pub mod safety;
pub mod sandbox;
pub mod slowlog;
pub mod stats;
pub mod sweep;
pub mod trace;
pub mod tune;
pub mod units;

/// What every command gets from the global flags.
#[derive(Debug, Clone)]
pub struct Ctx {
    pub host: host::Host,
    /// `--format`, `--color`, `--output`.
    pub sink: export::Sink,
}

impl Ctx {
    /// Render a report the way the user asked and return its exit code.
    pub fn emit<R: export::Report>(&self, report: &R) -> anyhow::Result<i32> {
        self.sink.emit(&self.host, report)
    }

    pub fn format(&self) -> export::Format {
        self.sink.format
    }
}

/// Run a parsed command line; returns the process exit code.
pub fn run(cli: cli::Cli) -> anyhow::Result<i32> {
    use cli::Command;
    let ctx = Ctx {
        host: host::Host::with_root(&cli.root),
        sink: export::Sink {
            format: cli.format,
            color: cli.color,
            output: cli.output,
        },
    };
    if cli.format == export::Format::Prometheus && !matches!(cli.command, Command::Check(_)) {
        return Err(error::Fix::new(
            "--format prometheus is only for `innotune check`",
            "use --format json (or text, markdown) with this command",
        )
        .into());
    }
    if let Some(o) = &ctx.sink.output {
        // Before the command runs, not only when its report is written.
        export::check_output(o)?;
    }
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
        Command::Check(a) => check::run(a, &ctx),
        Command::Apply(a) => apply::run(a, &ctx),
        Command::Tune(a) => tune::run(a, &ctx),
        Command::Merge(a) => merge::run(a, &ctx),
        Command::Trace(a) => trace::run(a, &ctx),
        Command::Report(a) => report::run(a, &ctx),
        Command::Slowlog(a) => slowlog::run(a, &ctx),
        Command::Restore(a) => apply::applied::run_restore(a, &ctx),
    }
}
