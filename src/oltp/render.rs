//! The `oltp` report as a document. sysbench 1.0.20's layout (format
//! strings of its `sb_logger.c` and `sysbench.c`) is kept byte for byte in
//! verbatim blocks, so `diff` against a sysbench log and existing sysbench
//! parsers work; innotune's own server figures follow as key–values, and a
//! thread list as a table with units.

use super::report::OltpReport;
use super::result::OltpResult;
use crate::export::doc::{Cell, Column, KeyValues, Table, Tone};
use crate::export::Document;
use crate::host::Known;
use std::io::{self, Write};

/// sysbench's final report for one run.
fn write_final(out: &mut dyn Write, r: &OltpResult) -> io::Result<()> {
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

fn text(mut f: impl FnMut(&mut dyn Write) -> io::Result<()>) -> String {
    let mut b = Vec::new();
    let _ = f(&mut b);
    String::from_utf8_lossy(&b).into_owned()
}

fn known_f(k: &Known<f64>, f: impl Fn(f64) -> String) -> Cell {
    match k {
        Known::Value(v) => Cell::num(*v, f(*v)),
        Known::Unknown { unknown } => Cell::text(format!("n/a ({unknown})")).tone(Tone::Dim),
    }
}

fn known_u(k: &Known<u64>) -> Cell {
    match k {
        Known::Value(v) => Cell::num(*v as f64, v.to_string()),
        Known::Unknown { unknown } => Cell::text(format!("n/a ({unknown})")).tone(Tone::Dim),
    }
}

fn mib(v: f64) -> String {
    format!("{:.2}", v / 1048576.0)
}

/// innotune's server section (after sysbench's, so parsers still work).
fn server(doc: &mut Document, r: &OltpResult) {
    let Some(d) = &r.server else {
        doc.note(
            Tone::Warn,
            "Server status: not available (SHOW GLOBAL STATUS could not be read during the run)",
        );
        return;
    };
    doc.heading(format!(
        "Server status (SHOW GLOBAL STATUS, {} samples over {:.1} s)",
        r.status_samples.len(),
        d.elapsed_s
    ));
    let mut kv = KeyValues::new();
    kv.add(
        "redo written (MiB/min)",
        known_f(&d.redo_bytes_per_s, |v| mib(v * 60.0)),
    )
    .add(
        "redo written (MiB/h)",
        known_f(&d.redo_bytes_per_s, |v| mib(v * 3600.0)),
    )
    .add(
        "buffer pool hit (%)",
        known_f(&d.buffer_pool_hit_pct, |v| format!("{v:.2}")),
    )
    .add(
        "dirty pages at end (%)",
        known_f(&d.dirty_pages_pct, |v| format!("{v:.2}")),
    )
    .add(
        "dirty pages max (%)",
        known_f(&d.dirty_pages_max_pct, |v| format!("{v:.2}")),
    )
    .add("log waits", known_u(&d.log_waits))
    .add(
        "temporary tables on disk (%)",
        known_f(&d.tmp_tables_on_disk_pct, |v| format!("{v:.2}")),
    )
    .add(
        "data fsyncs (per s)",
        known_f(&d.data_fsyncs_per_s, |v| format!("{v:.2}")),
    )
    .add("pending reads max", known_u(&d.pending_reads_max))
    .add("pending writes max", known_u(&d.pending_writes_max))
    .add("pending fsyncs max", known_u(&d.pending_fsyncs_max));
    doc.key_values(kv);
}

fn opt_cell(v: Option<f64>, f: impl Fn(f64) -> String) -> Cell {
    match v {
        Some(x) => Cell::num(x, f(x)),
        None => Cell::text("-").tone(Tone::Dim),
    }
}

impl crate::export::Report for OltpReport {
    const COMMAND: &'static str = "oltp";

    fn document(&self) -> Document {
        let mut doc = Document::new("");
        if let Some(p) = &self.prepare {
            doc.preformatted(text(|out| {
                for t in &p.tables {
                    writeln!(out, "Creating table '{}'...", t.table)?;
                    if t.rows > 0 {
                        writeln!(out, "Inserting {} records into '{}'", t.rows, t.table)?;
                    }
                    if t.secondary_index {
                        writeln!(out, "Creating a secondary index on '{}'...", t.table)?;
                    }
                }
                Ok(())
            }));
            let rows: u64 = p.tables.iter().map(|t| t.rows).sum();
            doc.note(
                Tone::Dim,
                format!(
                    "loaded {rows} rows into {} tables in {:.2} s ({:.0} rows/s)",
                    p.tables.len(),
                    p.seconds,
                    p.rows_per_sec
                ),
            );
        }
        if let Some(c) = &self.cleanup {
            doc.preformatted(text(|out| {
                for t in c {
                    writeln!(out, "Dropping table '{t}'...")?;
                }
                Ok(())
            }));
        }
        match self.runs.len() {
            0 => {}
            1 => {
                let r = &self.runs[0];
                // sysbench ends its report with a blank line; the document
                // separates blocks itself.
                let fin = text(|out| write_final(out, r));
                doc.preformatted(fin.trim_end_matches('\n').to_string() + "\n");
                server(&mut doc, r);
            }
            _ => {
                let p = self.options.percentile;
                let mut t = Table::new(vec![
                    Column::num("threads", None),
                    Column::num("tps", Some("1/s")),
                    Column::num("qps", Some("1/s")),
                    Column::num(format!("p{p}"), Some("ms")),
                    Column::num("avg", Some("ms")),
                    Column::num("err", Some("1/s")),
                    Column::num("redo", Some("MiB/min")),
                    Column::num("bp hit", Some("%")),
                    Column::num("dirty", Some("%")),
                ])
                .titled(format!(
                    "{} thread sweep ({} tables × {} rows)",
                    self.workload, self.options.tables, self.options.table_size
                ));
                for r in &self.runs {
                    let d = r.server.as_ref();
                    let f2 = |v: f64| format!("{v:.2}");
                    t.row(vec![
                        Cell::num(r.threads as f64, r.threads.to_string()),
                        Cell::num(r.tps, f2(r.tps)),
                        Cell::num(r.qps, f2(r.qps)),
                        opt_cell(r.latency_ms.percentile_value, f2),
                        Cell::num(r.latency_ms.avg, f2(r.latency_ms.avg)),
                        Cell::num(r.errors_per_sec, f2(r.errors_per_sec)),
                        opt_cell(d.and_then(|d| d.redo_bytes_per_s.value().copied()), |v| {
                            mib(v * 60.0)
                        }),
                        opt_cell(d.and_then(|d| d.buffer_pool_hit_pct.value().copied()), f2),
                        opt_cell(d.and_then(|d| d.dirty_pages_pct.value().copied()), f2),
                    ]);
                }
                doc.table(t);
            }
        }
        doc
    }
}
