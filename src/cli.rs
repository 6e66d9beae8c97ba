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
    /// Output format: text for people, json for scripts (one versioned document), markdown for tickets, html for one self-contained page [default: text; for `report -o FILE`, FILE's extension].
    #[arg(long, global = true, value_enum)]
    pub format: Option<Format>,

    /// Write the result to FILE (atomically: a temporary file renamed over it) instead of stdout. FILE must be a regular file or a new name: a device, FIFO or symbolic link is refused.
    #[arg(short = 'o', long, global = true, value_name = "FILE")]
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
    /// Prove a host-wide change (queue attribute, sysctl): current state vs each change, interleaved rounds, verdicts; always restores.
    Prove(crate::prove::cli::ProveArgs),
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
    /// Replay a slow log (long_query_time = 0) on a server, per session and in order; latency per class, compare with an earlier replay.
    Replay(crate::replay::cli::ReplayArgs),
    /// Put back every host setting recorded in an unfinished journal, and what apply made.
    Restore(crate::journal::cli::RestoreArgs),
    /// Print the shell completion script for SHELL (the packages install these already).
    #[command(
        after_help = "Examples:\n  innotune completions bash > /etc/bash_completion.d/innotune\n  innotune completions zsh > \"${fpath[1]}/_innotune\"\n  innotune completions fish > ~/.config/fish/completions/innotune.fish"
    )]
    Completions(CompletionsArgs),
}

/// `innotune completions SHELL`.
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// The clap definition, for completions and man pages (`cargo xtask dist`).
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}

/// Write SHELL's completion script for every subcommand and flag, generated
/// from the same clap definition as `--help`, so it cannot drift from it.
pub fn completions(shell: clap_complete::Shell, out: &mut dyn std::io::Write) {
    clap_complete::generate(shell, &mut command(), "innotune", out);
}

impl Cli {
    /// Parse `args` with every option value allowed to start with `-` when
    /// it is a negative number, so `--runtime -1` reaches the option's own
    /// check ("must be positive") instead of clap's "unexpected argument
    /// '-1'" with a tip to write `-- -1`. No innotune flag is a digit.
    pub fn parse_args<I, T>(args: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        use clap::{CommandFactory, FromArgMatches};
        let cmd = negative_numbers(Cli::command());
        let mut matches = cmd.try_get_matches_from(args)?;
        // Errors from here on are rendered against the command too.
        Cli::from_arg_matches_mut(&mut matches)
            .map_err(|e| e.format(&mut negative_numbers(Cli::command())))
    }
}

fn negative_numbers(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|a| {
        if a.get_action().takes_values() && !a.is_positional() {
            a.allow_negative_numbers(true)
        } else {
            a
        }
    })
    .mut_subcommands(negative_numbers)
}

/// A clap usage error as innotune's one line: `what (fix: how)`.
///
/// Built from clap's rendered text (its wording already names the option
/// and the value), folded to one line: clap's tip, or its list of possible
/// values, becomes the fix; otherwise the fix points at the help of the
/// (sub)command `args` name. `--help`, `--version` and a bare command that
/// shows its help are not errors and are not passed here.
pub fn usage_error_line(e: &clap::Error, args: &[std::ffi::OsString]) -> String {
    use clap::CommandFactory;
    let text = e.render().to_string();
    let mut what: Vec<String> = Vec::new();
    let mut fixes: Vec<String> = Vec::new();
    // The subcommands the words of the command line name, in order.
    let mut cmd = Cli::command();
    let mut command = vec![cmd.get_name().to_string()];
    for a in args.iter().skip(1).filter_map(|a| a.to_str()) {
        if a.starts_with('-') {
            continue;
        }
        let Some(sub) = cmd.find_subcommand(a).cloned() else {
            continue;
        };
        command.push(sub.get_name().to_string());
        cmd = sub;
    }
    let command = command.join(" ");
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with("For more information") || line.starts_with("Usage:")
        {
            continue;
        }
        if let Some(tip) = line.strip_prefix("tip:") {
            // "to pass '--nosuch' as a value, use '-- --nosuch'" misleads
            // more often than it helps: the help is the better fix.
            if !tip.trim().starts_with("to pass '") {
                fixes.push(tip.trim().to_string());
            }
        } else if let Some(values) = line
            .strip_prefix("[possible values:")
            .and_then(|v| v.strip_suffix(']'))
        {
            fixes.push(format!("use one of {}", values.trim()));
        } else {
            what.push(
                line.strip_prefix("error:")
                    .unwrap_or(line)
                    .trim()
                    .to_string(),
            );
        }
    }
    fixes.push(format!("see `{command} --help`"));
    crate::error::Fix::new(what.join(" "), fixes.join("; ")).to_string()
}
