//! The lines a run prints as it goes, in sysbench 1.0.20's layout (format
//! strings of its `sb_logger.c` and `sysbench.c`, byte for byte): the
//! banner with the options, then one line per report interval.

use super::result::Interval;
use super::OltpOptions;
use std::io::{self, Write};

/// The banner and option lines sysbench prints before starting threads.
pub fn header(o: &OltpOptions) -> String {
    let mut b = Vec::new();
    let _ = write_header(&mut b, o);
    String::from_utf8_lossy(&b).into_owned()
}

fn write_header(out: &mut dyn Write, o: &OltpOptions) -> io::Result<()> {
    writeln!(
        out,
        "innotune {} (sysbench 1.0.20-compatible {})\n",
        env!("CARGO_PKG_VERSION"),
        o.workload.name()
    )?;
    writeln!(out, "Running the test with following options:")?;
    writeln!(out, "Number of threads: {}", o.threads)?;
    if o.report_interval > 0 {
        writeln!(
            out,
            "Report intermediate results every {} second(s)",
            o.report_interval
        )?;
    }
    if o.rand_seed == 0 {
        writeln!(
            out,
            "Initializing random number generator from current time"
        )?;
    } else {
        writeln!(
            out,
            "Initializing random number generator from seed ({}).",
            o.rand_seed
        )?;
    }
    writeln!(out, "\n\nInitializing worker threads...\n")?;
    writeln!(out, "Threads started!\n")
}

pub fn interval_line(iv: &Interval, pct: u8) -> String {
    format!(
        "[ {:.0}s ] thds: {} tps: {:.2} qps: {:.2} (r/w/o: {:.2}/{:.2}/{:.2}) lat (ms,{}%): {:.2} err/s: {:.2} reconn/s: {:.2}",
        iv.t,
        iv.threads,
        iv.tps,
        iv.qps,
        iv.read_qps,
        iv.write_qps,
        iv.other_qps,
        pct,
        iv.latency_pct_ms.unwrap_or(0.0),
        iv.errors_per_sec,
        iv.reconnects_per_sec
    )
}
