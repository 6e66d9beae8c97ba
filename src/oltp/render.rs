//! The `oltp` report as a document. sysbench 1.0.20's layout (format
//! strings of its `sb_logger.c` and `sysbench.c`) is kept byte for byte in
//! verbatim blocks, so `diff` against a sysbench log and existing sysbench
//! parsers work; innotune's own server figures follow as key–values, and a
//! thread list as a table with units.

use super::report::OltpReport;
use super::result::OltpResult;
use crate::export::doc::{Cell, ChartKind, Column, KeyValues, Line, Point, Series, Table, Tone};
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
                // sysbench's layout per thread count, as consecutive
                // sysbench runs print it (its "Number of threads" line
                // heads each), each with its server figures; then the
                // thread counts side by side.
                for r in &self.runs {
                    doc.heading(format!("{} at {} threads", r.workload, r.threads));
                    let fin = text(|out| {
                        writeln!(out, "Number of threads: {}", r.threads)?;
                        writeln!(out)?;
                        write_final(out, r)
                    });
                    doc.preformatted(fin.trim_end_matches('\n').to_string() + "\n");
                    server(&mut doc, r);
                }
                doc.table(self.thread_table());
                for s in thread_series(&self.runs) {
                    doc.series(s);
                }
            }
        }
        for r in self.runs.iter().filter(|r| r.error.is_some()) {
            doc.note(
                Tone::Bad,
                format!(
                    "the run at {} thread(s) ended after {:.1} s, its figures are up to then: {}",
                    r.threads,
                    r.total_time_s,
                    r.error.as_deref().unwrap_or_default()
                ),
            );
        }
        doc
    }
}

impl OltpReport {
    /// The thread counts side by side: sysbench's figures and the server's
    /// (log waits, temporary tables on disk and fsyncs/s included: a
    /// thread count where they jump is where the server, not the client,
    /// became the limit).
    fn thread_table(&self) -> Table {
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
            Column::num("log waits", None),
            Column::num("tmp on disk", Some("%")),
            Column::num("fsyncs", Some("1/s")),
        ])
        .titled(format!(
            "{} by thread count ({} tables × {} rows)",
            self.workload, self.options.tables, self.options.table_size
        ));
        for r in &self.runs {
            let d = r.server.as_ref();
            let f2 = |v: f64| format!("{v:.2}");
            let int = |v: f64| format!("{v:.0}");
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
                opt_cell(d.and_then(|d| d.log_waits.value().map(|v| *v as f64)), int),
                opt_cell(
                    d.and_then(|d| d.tmp_tables_on_disk_pct.value().copied()),
                    f2,
                ),
                opt_cell(d.and_then(|d| d.data_fsyncs_per_s.value().copied()), f2),
            ]);
        }
        t
    }
}

/// TPS and QPS against threads, one chart each per workload that ran at
/// two or more thread counts (the table has the numbers).
pub fn thread_series(runs: &[OltpResult]) -> Vec<Series> {
    let mut workloads: Vec<&str> = Vec::new();
    for r in runs {
        if !workloads.contains(&r.workload.as_str()) {
            workloads.push(&r.workload);
        }
    }
    type Get = fn(&OltpResult) -> f64;
    let metrics: [(&str, &str, Get); 2] = [("TPS", "tps", |r| r.tps), ("QPS", "qps", |r| r.qps)];
    let mut out = Vec::new();
    for w in workloads {
        let of: Vec<&OltpResult> = runs.iter().filter(|r| r.workload == w).collect();
        if of.len() < 2 {
            continue;
        }
        for (metric, unit, get) in metrics {
            out.push(Series {
                title: format!("{w}: {metric} against threads"),
                kind: ChartKind::Line,
                x_label: "threads".into(),
                y_label: metric.into(),
                y_unit: Some(unit.into()),
                lines: vec![Line {
                    name: metric.into(),
                    points: of
                        .iter()
                        .map(|r| Point {
                            x: r.threads.to_string(),
                            y: get(r),
                            ci: None,
                        })
                        .collect(),
                }],
                table_fallback: false,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::text::Text;
    use crate::export::Exporter;
    use crate::export::Report;

    /// Issue 46: `--threads 1,2` printed one combined table and dropped
    /// log waits, temporary tables on disk and fsyncs/s. Each thread count
    /// now has sysbench's layout and its server figures, then the table
    /// has them all. (The saved result of a real two-count run.)
    #[test]
    fn a_thread_list_has_sysbench_layout_per_count() {
        let v: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/fixtures/results/oltp.json")).unwrap();
        let r: OltpReport = serde_json::from_value(v["result"].clone()).unwrap();
        assert_eq!(r.runs.len(), 2);
        let mut out = Vec::new();
        Text::new(crate::output::Style::plain())
            .export(&r.document(), &mut out)
            .unwrap();
        let page = String::from_utf8(out).unwrap();
        for run in &r.runs {
            let at = page
                .find(&format!("Number of threads: {}\n", run.threads))
                .unwrap_or_else(|| panic!("no block for {} threads: {page}", run.threads));
            let block = &page[at..];
            let fin = text(|out| write_final(out, run));
            assert!(
                block.contains(fin.trim_end()),
                "sysbench's final report for {} threads is not verbatim: {page}",
                run.threads
            );
        }
        assert_eq!(page.matches("SQL statistics:").count(), 2, "{page}");
        assert_eq!(page.matches("Server status (SHOW GLOBAL STATUS").count(), 2);
        for key in [
            "log waits:",
            "temporary tables on disk (%):",
            "data fsyncs (per s):",
        ] {
            assert_eq!(page.matches(key).count(), 2, "{key}: {page}");
        }
        for col in ["log waits", "tmp on disk (%)", "fsyncs (1/s)"] {
            assert!(page.contains(col), "{col}: {page}");
        }
        let fsyncs = r.runs[0]
            .server
            .as_ref()
            .unwrap()
            .data_fsyncs_per_s
            .value()
            .copied();
        assert!(page.contains(&format!("{:.2}", fsyncs.unwrap())), "{page}");
    }
}
