//! The slowlog report as a document: pt-query-digest's layout — overall
//! totals, a profile (one row per class), then one section per class with
//! its attribute table, query-time histogram and worst sample.

use super::report::{ClassReport, RowsMetric, SlowlogReport, TimeMetric};
use crate::export::doc::{
    Cell, ChartKind, Column, Document, KeyValues, Line, Point, Series, Table, Tone,
};
use crate::export::Report;
use std::collections::BTreeMap;

impl Report for SlowlogReport {
    const COMMAND: &'static str = "slowlog";

    fn document(&self) -> Document {
        self.document_with(Samples::Shown)
    }
}

/// Whether each class's worst statement is printed.
#[derive(Clone, Copy, PartialEq)]
enum Samples {
    Shown,
    /// Left out: statements carry literal values (names, ids, e-mail
    /// addresses) that a page passed around should not.
    Withheld,
}

impl SlowlogReport {
    /// The document `innotune report` shows: the same, but each class's
    /// worst statement is left out (it stays in the JSON).
    pub fn document_without_samples(&self) -> Document {
        self.document_with(Samples::Withheld)
    }

    fn document_with(&self, samples: Samples) -> Document {
        let mut d = Document::new(format!("Slow log digest: {}", self.source));
        let t = &self.totals;
        let mut kv = KeyValues::new();
        kv.add(
            "Read",
            format!(
                "{:.1} MiB{} in {:.2} s ({:.0} MiB/s, {} thread{})",
                self.read_bytes as f64 / 1048576.0,
                if self.gzip {
                    " (gzip, decompressed)"
                } else {
                    ""
                },
                self.elapsed_s,
                self.read_bytes_per_s / 1048576.0,
                self.threads,
                if self.threads == 1 { "" } else { "s" }
            ),
        );
        kv.add("Entries", t.entries.to_string());
        kv.add("Classes", self.classes_total.to_string());
        if t.malformed > 0 {
            kv.add("Malformed (skipped)", t.malformed.to_string());
        }
        if t.filtered_out > 0 {
            kv.add("Filtered out", t.filtered_out.to_string());
        }
        kv.add(
            "Query time total",
            format!("{:.3} s", secs(t.query_time_ns)),
        );
        kv.add("Lock time total", format!("{:.3} s", secs(t.lock_time_ns)));
        kv.add(
            "Rows sent / examined",
            format!("{} / {}", t.rows_sent, t.rows_examined),
        );
        if let (Some(a), Some(b)) = (&t.first_seen, &t.last_seen) {
            kv.add("Time range", format!("{a} to {b}"));
        }
        kv.add("Order", self.order_by.clone());
        d.key_values(kv);
        if let Some(why) = &self.stopped {
            d.note(Tone::Warn, format!("Incomplete: {why}"));
        }

        let mut p = Table::new(vec![
            Column::num("Rank", None),
            Column::text("Query ID"),
            Column::num("Response time", Some("s")),
            Column::num("Time", Some("%")),
            Column::num("Calls", None),
            Column::num("R/Call", Some("s")),
            Column::num("Rows exam/sent", None),
            Column::text("Item"),
        ])
        .titled("Profile");
        for c in &self.classes {
            let (sum, avg) = (secs(c.query_time.sum_ns), secs(c.query_time.avg_ns));
            p.row(vec![
                Cell::num(c.rank as f64, c.rank.to_string()),
                Cell::text(format!("0x{}", c.id.get(16..).unwrap_or(&c.id))),
                Cell::num(sum, format!("{sum:.4}")),
                Cell::num(c.time_pct, format!("{:.1}", c.time_pct)),
                Cell::num(c.count as f64, c.count.to_string()),
                Cell::num(avg, format!("{avg:.4}")),
                match c.rows_examined_per_sent {
                    Some(r) => Cell::num(r, format!("{r:.1}")),
                    None => Cell::text("-"),
                },
                Cell::text(item(&c.fingerprint)),
            ]);
        }
        d.table(p);
        if !self.classes.is_empty() {
            // Each class's share of the log's query time as bars (the
            // profile has the numbers).
            d.series(Series {
                title: "Share of the log's query time per class".into(),
                kind: ChartKind::Bar,
                x_label: "class".into(),
                y_label: "query time".into(),
                y_unit: Some("%".into()),
                lines: vec![Line {
                    name: "share of query time".into(),
                    points: self
                        .classes
                        .iter()
                        .map(|c| Point {
                            x: format!("0x{}", c.id.get(16..).unwrap_or(&c.id)),
                            y: c.time_pct,
                            ci: None,
                        })
                        .collect(),
                }],
                table_fallback: false,
            });
        }
        for c in &self.classes {
            class_section(&mut d, c, samples);
        }
        d
    }
}

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// pt's profile "Item": the fingerprint, cut to a table-friendly width.
fn item(fp: &str) -> String {
    const W: usize = 60;
    if fp.chars().count() <= W {
        fp.to_string()
    } else {
        let cut: String = fp.chars().take(W - 1).collect();
        format!("{cut}…")
    }
}

fn names(m: &BTreeMap<String, u64>) -> String {
    let mut v: Vec<_> = m.iter().collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
    v.iter()
        .take(5)
        .map(|(k, n)| format!("{k} ({n})"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn class_section(d: &mut Document, c: &ClassReport, samples: Samples) {
    d.subheading(format!(
        "Query {}: {} calls, {:.1} % of time, ID 0x{}",
        c.rank, c.count, c.time_pct, c.id
    ));
    let mut t = Table::new(vec![
        Column::text("Attribute"),
        Column::num("total", None),
        Column::num("min", None),
        Column::num("max", None),
        Column::num("avg", None),
        Column::num("95%", None),
    ]);
    let time = |t: &mut Table, name: &str, m: &TimeMetric| {
        let f = |v: u64| Cell::num(secs(v), format!("{:.6}", secs(v)));
        t.row(vec![
            Cell::text(name),
            f(m.sum_ns),
            f(m.min_ns),
            f(m.max_ns),
            f(m.avg_ns),
            m.p95_ns.map_or(Cell::text("-"), f),
        ]);
    };
    let rows = |t: &mut Table, name: &str, m: &RowsMetric| {
        let f = |v: u64| Cell::num(v as f64, v.to_string());
        t.row(vec![
            Cell::text(name),
            f(m.sum),
            f(m.min),
            f(m.max),
            Cell::num(m.avg, format!("{:.1}", m.avg)),
            Cell::text("-"),
        ]);
    };
    time(&mut t, "Query time (s)", &c.query_time);
    time(&mut t, "Lock time (s)", &c.lock_time);
    rows(&mut t, "Rows sent", &c.rows_sent);
    rows(&mut t, "Rows examined", &c.rows_examined);
    d.table(t);
    let mut kv = KeyValues::new();
    if let (Some(a), Some(b)) = (&c.first_seen, &c.last_seen) {
        kv.add("Seen", format!("{a} to {b}"));
    }
    if let Some(r) = c.rows_examined_per_sent {
        kv.add("Rows examined per row sent", format!("{r:.1}"));
    }
    if !c.databases.is_empty() {
        kv.add("Databases", names(&c.databases));
    }
    if !c.users.is_empty() {
        kv.add("Users", names(&c.users));
    }
    if !c.hosts.is_empty() {
        kv.add("Hosts", names(&c.hosts));
    }
    for (name, n) in [
        ("Tmp table on disk", c.tmp_table_on_disk),
        ("Full scan", c.full_scan),
        ("Filesort", c.filesort),
    ] {
        if n > 0 {
            kv.add(name, format!("{n} of {}", c.count));
        }
    }
    kv.add("Fingerprint", c.fingerprint.clone());
    d.key_values(kv);
    d.preformatted(histogram(c));
    let mut sample = String::new();
    if samples == Samples::Withheld {
        sample.push_str(&format!(
            "-- worst: {:.6} s{}\n-- (the statement is left out of reports: it is in the JSON, classes[].sample)\n",
            secs(c.sample.query_time_ns),
            c.sample
                .ts
                .as_deref()
                .map(|t| format!(" at {t}"))
                .unwrap_or_default(),
        ));
        d.preformatted(sample);
        return;
    }
    if let Some(db) = &c.sample.db {
        sample.push_str(&format!("use {db};\n"));
    }
    sample.push_str(&format!(
        "-- worst: {:.6} s{}\n{}",
        secs(c.sample.query_time_ns),
        c.sample
            .ts
            .as_deref()
            .map(|t| format!(" at {t}"))
            .unwrap_or_default(),
        c.sample.query
    ));
    d.preformatted(sample);
}

/// pt's "Query_time distribution" bars.
fn histogram(c: &ClassReport) -> String {
    let max = c.histogram.iter().copied().max().unwrap_or(0).max(1);
    let mut s = String::from("Query_time distribution\n");
    for (name, n) in c.histogram_buckets.iter().zip(c.histogram) {
        let bar = if n == 0 {
            0
        } else {
            ((n as f64 / max as f64) * 60.0).ceil() as usize
        };
        s.push_str(&format!("  {name:>6}  {:<60}  {n}\n", "#".repeat(bar)));
    }
    s
}
