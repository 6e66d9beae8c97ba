//! Text rendering in sysbench 1.0.20's layout (format strings from
//! `sb_logger.c`/`sysbench.c`, see the reference §1b), so `diff` against a
//! sysbench log and existing sysbench parsers work; innotune's server
//! section comes after sysbench's last section.

use super::{Interval, OltpOptions, OltpReport, OltpResult};
use crate::output::{table, Report, Style};
use std::io::{self, Write};

/// The banner and option lines sysbench prints before starting threads.
pub fn print_header(o: &OltpOptions) {
    let mut out = io::stdout().lock();
    let _ = write_header(&mut out, o);
    let _ = out.flush();
}

pub fn write_header(out: &mut dyn Write, o: &OltpOptions) -> io::Result<()> {
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

pub fn print_interval(iv: &Interval, pct: u8) {
    let mut out = io::stdout().lock();
    let _ = writeln!(out, "{}", interval_line(iv, pct));
    let _ = out.flush();
}

/// sysbench's final report for one run.
pub fn write_final(out: &mut dyn Write, r: &OltpResult) -> io::Result<()> {
    let q = &r.queries;
    writeln!(out, "SQL statistics:")?;
    writeln!(out, "    queries performed:")?;
    writeln!(out, "        read:                            {}", q.read)?;
    writeln!(out, "        write:                           {}", q.write)?;
    writeln!(out, "        other:                           {}", q.other)?;
    writeln!(out, "        total:                           {}", q.total)?;
    writeln!(
        out,
        "    transactions:                        {:<6} ({:.2} per sec.)",
        r.transactions, r.tps
    )?;
    writeln!(
        out,
        "    queries:                             {:<6} ({:.2} per sec.)",
        q.total, r.qps
    )?;
    writeln!(
        out,
        "    ignored errors:                      {:<6} ({:.2} per sec.)",
        r.ignored_errors, r.errors_per_sec
    )?;
    writeln!(
        out,
        "    reconnects:                          {:<6} ({:.2} per sec.)",
        r.reconnects, r.reconnects_per_sec
    )?;
    writeln!(out)?;
    writeln!(out, "General statistics:")?;
    writeln!(
        out,
        "    total time:                          {:.4}s",
        r.total_time_s
    )?;
    writeln!(out, "    total number of events:              {}", r.events)?;
    writeln!(out)?;
    let l = &r.latency_ms;
    writeln!(out, "Latency (ms):")?;
    writeln!(out, "         min: {:>39.2}", l.min)?;
    writeln!(out, "         avg: {:>39.2}", l.avg)?;
    writeln!(out, "         max: {:>39.2}", l.max)?;
    match l.percentile_value {
        Some(v) => writeln!(out, "        {:>3}th percentile: {:>27.2}", l.percentile, v)?,
        None => writeln!(out, "         percentile stats:               disabled")?,
    }
    writeln!(out, "         sum: {:>39.2}", l.sum)?;
    writeln!(out)?;
    let f = &r.fairness;
    writeln!(out, "Threads fairness:")?;
    writeln!(
        out,
        "    events (avg/stddev):           {:.4}/{:3.2}",
        f.events_avg, f.events_stddev
    )?;
    writeln!(
        out,
        "    execution time (avg/stddev):   {:.4}/{:3.2}",
        f.exec_time_avg, f.exec_time_stddev
    )?;
    writeln!(out)
}

fn pct(v: Option<f64>) -> String {
    v.map(|x| format!("{:.2}%", x * 100.0))
        .unwrap_or_else(|| "n/a".into())
}

fn mib(v: Option<f64>) -> String {
    v.map(|x| format!("{:.2} MiB", x / 1048576.0))
        .unwrap_or_else(|| "n/a".into())
}

/// innotune's server section (after sysbench's, so parsers still work).
pub fn write_server(out: &mut dyn Write, r: &OltpResult) -> io::Result<()> {
    let Some(d) = &r.server else {
        return writeln!(
            out,
            "Server status: not available (SHOW GLOBAL STATUS failed)\n"
        );
    };
    let opt = |v: Option<u64>| v.map(|x| x.to_string()).unwrap_or_else(|| "n/a".into());
    writeln!(
        out,
        "Server status (SHOW GLOBAL STATUS, {} samples over {:.1}s):",
        r.status_samples.len(),
        d.seconds
    )?;
    writeln!(
        out,
        "    redo written:                        {}/min ({}/h)",
        mib(d.redo_bytes_per_min),
        mib(d.redo_bytes_per_hour)
    )?;
    writeln!(
        out,
        "    buffer pool hit ratio:               {}",
        pct(d.buffer_pool_hit_ratio)
    )?;
    writeln!(
        out,
        "    dirty pages:                         {} (max {})",
        d.dirty_pages_pct
            .map(|x| format!("{x:.2}%"))
            .unwrap_or_else(|| "n/a".into()),
        d.dirty_pages_pct_max
            .map(|x| format!("{x:.2}%"))
            .unwrap_or_else(|| "n/a".into())
    )?;
    writeln!(
        out,
        "    log waits:                           {}",
        opt(d.log_waits)
    )?;
    writeln!(
        out,
        "    temporary tables on disk:            {}",
        pct(d.tmp_tables_on_disk_share)
    )?;
    writeln!(
        out,
        "    data fsyncs:                         {}",
        d.data_fsyncs_per_sec
            .map(|x| format!("{x:.2} per sec."))
            .unwrap_or_else(|| "n/a".into())
    )?;
    writeln!(
        out,
        "    pending reads/writes/fsyncs (max):   {}/{}/{}",
        opt(d.pending_reads_max),
        opt(d.pending_writes_max),
        opt(d.pending_fsyncs_max)
    )?;
    writeln!(out)
}

impl Report for OltpReport {
    const COMMAND: &'static str = "oltp";

    fn render_text(&self, out: &mut dyn Write, style: Style) -> io::Result<()> {
        if let Some(p) = &self.prepare {
            for t in &p.tables {
                writeln!(out, "Creating table '{}'...", t.table)?;
                if t.rows > 0 {
                    writeln!(out, "Inserting {} records into '{}'", t.rows, t.table)?;
                }
                if t.secondary_index {
                    writeln!(out, "Creating a secondary index on '{}'...", t.table)?;
                }
            }
            let rows: u64 = p.tables.iter().map(|t| t.rows).sum();
            writeln!(
                out,
                "{}",
                style.dim(&format!(
                    "Loaded {rows} rows into {} tables in {:.2}s ({:.0} rows/s)",
                    p.tables.len(),
                    p.seconds,
                    p.rows_per_sec
                ))
            )?;
        }
        if let Some(c) = &self.cleanup {
            for t in c {
                writeln!(out, "Dropping table '{t}'...")?;
            }
        }
        match self.runs.len() {
            0 => {}
            1 => {
                write_final(out, &self.runs[0])?;
                write_server(out, &self.runs[0])?;
            }
            _ => {
                let p = self.options.percentile;
                let lat = format!("p{p} ms");
                let mut t = table::new(&[
                    "threads",
                    "tps",
                    "qps",
                    &lat,
                    "avg ms",
                    "err/s",
                    "redo MiB/min",
                    "bp hit",
                    "dirty %",
                ]);
                for r in &self.runs {
                    let d = r.server.as_ref();
                    t.add_row(vec![
                        r.threads.to_string(),
                        format!("{:.2}", r.tps),
                        format!("{:.2}", r.qps),
                        r.latency_ms
                            .percentile_value
                            .map(|v| format!("{v:.2}"))
                            .unwrap_or_else(|| "-".into()),
                        format!("{:.2}", r.latency_ms.avg),
                        format!("{:.2}", r.errors_per_sec),
                        d.and_then(|d| d.redo_bytes_per_min)
                            .map(|v| format!("{:.2}", v / 1048576.0))
                            .unwrap_or_else(|| "-".into()),
                        d.and_then(|d| d.buffer_pool_hit_ratio)
                            .map(|v| format!("{:.2}%", v * 100.0))
                            .unwrap_or_else(|| "-".into()),
                        d.and_then(|d| d.dirty_pages_pct)
                            .map(|v| format!("{v:.2}"))
                            .unwrap_or_else(|| "-".into()),
                    ]);
                }
                table::align_numbers(&mut t, 0);
                writeln!(
                    out,
                    "{} thread sweep ({} tables × {} rows):",
                    self.workload, self.options.tables, self.options.table_size
                )?;
                writeln!(out, "{t}")?;
            }
        }
        Ok(())
    }
}
