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
//! - [`command`]: the one shape of a command (`Command`, `Env`) and the dispatcher.
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
pub mod command;
pub mod db;
pub mod durable;
pub mod error;
pub mod export;
pub mod finding;
pub mod host;
pub mod input;
pub mod journal;
pub mod merge;
pub mod model;
pub mod oltp;
pub mod output;
pub mod probe;
pub mod prove;
pub mod replay;
pub mod report;
pub mod safety;
pub mod sandbox;
pub mod search;
pub mod slowlog;
pub mod stats;
pub mod sweep;
pub mod trace;
pub mod trial;
pub mod tune;
pub mod units;

/// Run a parsed command line; returns the process exit code. Every
/// command goes through [`command::dispatch`].
pub fn run(cli: cli::Cli) -> anyhow::Result<i32> {
    use cli::Command as C;
    use command::dispatch;
    let host = host::Host::with_root(&cli.root);
    let sink = export::Sink {
        format: cli.format.unwrap_or(export::Format::Text),
        format_given: cli.format.is_some(),
        color: cli.color,
        output: cli.output,
    };
    match cli.command {
        C::Probe(a) => dispatch(host, sink, a),
        C::Bench(a) => dispatch(host, sink, a),
        C::Sweep(a) => dispatch(host, sink, a),
        C::Prove(a) => dispatch(host, sink, a),
        C::Oltp(a) => dispatch(host, sink, *a),
        C::Sandbox(a) => dispatch(host, sink, a),
        C::Checksum(a) => dispatch(host, sink, a),
        C::Check(a) => dispatch(host, sink, a),
        C::Apply(a) => dispatch(host, sink, a),
        C::Tune(a) if a.search => dispatch(host, sink, search::SearchArgs(a)),
        C::Tune(a) => dispatch(host, sink, a),
        C::Merge(a) => dispatch(host, sink, a),
        C::Trace(a) => dispatch(host, sink, a),
        C::Report(a) => dispatch(host, sink, a),
        C::Slowlog(a) if a.capture.is_some() => {
            dispatch(host, sink, crate::slowlog::capture::Capture(a))
        }
        C::Slowlog(a) => dispatch(host, sink, a),
        C::Replay(a) => dispatch(host, sink, a),
        C::Restore(a) => dispatch(host, sink, a),
        // Not a report: the script is the output, in no --format (like --help).
        C::Completions(a) => {
            cli::completions(a.shell, &mut std::io::stdout().lock());
            Ok(0)
        }
    }
}
