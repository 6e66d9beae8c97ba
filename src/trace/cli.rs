use clap::Args;
use std::path::PathBuf;

/// Where block I/O time goes: btt's Q2G, G2I, I2D, D2C and Q2C per device
/// and direction, from the kernel's block tracepoints (no blktrace, no
/// debugfs), with iostat -x's figures for the same window.
///
/// Live: a private tracefs instance (instances/innotune-PID, journaled:
/// removed on exit, on Ctrl-C, and by `innotune restore` after a crash)
/// traces the whole disks under PATH or those named by --device, for
/// --duration or until Ctrl-C. Offline: --input reads a saved trace
/// (tracefs `trace`/`trace_pipe` text of any kernel, or blkparse's
/// default output).
#[derive(Debug, Args)]
#[command(
    after_help = "Exit codes: 0 ok (also when Ctrl-C, SIGTERM or SIGHUP ends the capture: the report covers the window up to the first signal; more signals do not cut it short); 2 error.\nExamples:\n  innotune trace /var/lib/mysql --duration 10s\n  innotune trace --device vda --device loop0 --duration 30s --format json\n  innotune trace --input saved.trace\nJSON fields: docs/json-trace.md."
)]
pub struct TraceArgs {
    /// Trace the disks under the filesystem holding PATH.
    pub path: Option<PathBuf>,

    /// Trace this whole disk (as /sys/block names it); repeatable. With
    /// PATH, only these of the disks under it.
    #[arg(long = "device", value_delimiter = ',', value_name = "NAME")]
    pub devices: Vec<String>,

    /// How long to capture, more than 0 (default: until Ctrl-C).
    #[arg(long, value_parser = crate::units::parse_duration)]
    pub duration: Option<std::time::Duration>,

    /// Per-CPU ring buffer of the trace instance, in KiB. Events that
    /// overflow it between two reads are lost: counted, reported and
    /// warned about; raise it for a busier device.
    #[arg(long, value_name = "KIB", default_value_t = crate::trace::capture::BUFFER_KB,
          value_parser = clap::value_parser!(u32).range(4..=1_048_576),
          conflicts_with = "input")]
    pub buffer_kb: u32,

    /// Analyse a saved trace instead of capturing: a regular file, or `-`
    /// for stdin. A `trace` snapshot whose per-CPU buffers overwrote older
    /// events is analysed over the window every CPU covers.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["path", "devices", "duration"])]
    pub input: Option<PathBuf>,
}
