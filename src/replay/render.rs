//! The replay report as a document: the slowlog view's profile (one row
//! per class) with the replay's columns beside the log's, the comparison
//! with `--compare FILE` when there is one, and the errors by code.

use super::report::ReplayReport;
use crate::export::doc::{Cell, Column, Document, KeyValues, Table, Tone};
use crate::export::Report;
use crate::stats::Effect;

impl Report for ReplayReport {
    const COMMAND: &'static str = "replay";

    fn document(&self) -> Document {
        let mut d = Document::new(format!("Replay: {}", self.source));
        let t = &self.totals;
        let mut kv = KeyValues::new();
        kv.add("Server", self.server.clone());
        kv.add(
            "Log",
            format!(
                "{} statements in {} sessions, {}{}{}",
                self.log.entries,
                self.log.sessions,
                if self.format == "general" {
                    "a general query log (no logged timings)"
                } else {
                    "a slow log"
                },
                if self.gzip { " (gzip)" } else { "" },
                match self.log.covered_pct {
                    Some(p) => format!(", covering {p:.1} % of the sessions' time"),
                    None => String::new(),
                }
            ),
        );
        if self.log.admin_skipped > 0 {
            kv.add(
                "Administrator commands (skipped)",
                self.log.admin_skipped.to_string(),
            );
        }
        if self.read_only {
            kv.add(
                "Writes skipped (--read-only)",
                self.log.writes_skipped.to_string(),
            );
        }
        if self.log.malformed > 0 {
            kv.add(
                "Malformed entries (skipped)",
                self.log.malformed.to_string(),
            );
        }
        kv.add(
            "Replayed",
            format!(
                "{} statements, {} round{}, speed {}, {} connection{}",
                t.statements,
                self.rounds,
                if self.rounds == 1 { "" } else { "s" },
                self.speed,
                self.connections,
                if self.connections == 1 { "" } else { "s" }
            ),
        );
        kv.add(
            "Errors",
            Cell::text(t.errors.to_string()).tone(if t.errors > 0 {
                Tone::Warn
            } else {
                Tone::Plain
            }),
        );
        kv.add(
            "Throughput",
            format!(
                "{:.0} queries/s over {:.2} s{}",
                t.queries_per_s,
                t.elapsed_s,
                match t.load_s {
                    Some(l) => format!(" (the log read into memory first, in {l:.2} s)"),
                    None => " (the log streamed: reading it is in the time)".into(),
                }
            ),
        );
        if let (Some(q), Some(s)) = (t.all_busy_queries_per_s, t.all_busy_s) {
            kv.add(
                format!("While all {} busy", self.connections),
                format!(
                    "{q:.0} queries/s over the first {s:.2} s (until a connection ran out of statements; the rest is a tail on fewer)"
                ),
            );
        }
        d.key_values(kv);
        if let Some(w) = &self.log.coverage_warning {
            d.note(Tone::Warn, w.clone());
        }
        if let Some(why) = &self.stopped {
            d.note(Tone::Warn, format!("Incomplete: {why}"));
        }
        let mut p = Table::new(vec![
            Column::num("Rank", None),
            Column::text("Query ID"),
            Column::num("Calls (log)", None),
            Column::num("Calls", None),
            Column::num("Errors", None),
            Column::num("p50", Some("ms")),
            Column::num("p95", Some("ms")),
            Column::num("p99", Some("ms")),
            Column::num("Time", Some("s")),
            Column::num("Time (log)", Some("s")),
            Column::text("Item"),
        ])
        .titled("Profile");
        for (i, c) in self.classes.iter().enumerate() {
            let ms = |ns: u64| {
                let v = ns as f64 / 1e6;
                Cell::num(v, format!("{v:.3}"))
            };
            let s = |ns: u64| {
                let v = ns as f64 / 1e9;
                Cell::num(v, format!("{v:.4}"))
            };
            p.row(vec![
                Cell::num((i + 1) as f64, (i + 1).to_string()),
                Cell::text(short_id(&c.id)),
                Cell::num(c.log_count as f64, c.log_count.to_string()),
                Cell::num(c.count as f64, c.count.to_string()),
                Cell::num(c.errors as f64, c.errors.to_string()).tone(if c.errors > 0 {
                    Tone::Warn
                } else {
                    Tone::Plain
                }),
                ms(c.p50_ns),
                ms(c.p95_ns),
                ms(c.p99_ns),
                s(c.total_ns),
                s(c.log_total_ns),
                Cell::text(item(&c.fingerprint)),
            ]);
        }
        d.table(p);
        if let Some(info) = &self.compare {
            let mut t = Table::new(vec![
                Column::text("Query ID"),
                Column::num("Ratio", Some("x")),
                Column::text("95 % interval"),
                Column::num("p", None),
                Column::text("Verdict"),
                Column::text("Item"),
            ])
            .titled(format!(
                "Against {} (mean latency per round, this / before; {} vs {} rounds)",
                info.against, info.rounds_before, self.rounds
            ));
            for c in &self.classes {
                let Some(cc) = &c.compare else { continue };
                let k = &cc.comparison;
                let f = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.3}"));
                t.row(vec![
                    Cell::text(short_id(&c.id)),
                    match k.ratio {
                        Some(r) => Cell::num(r, format!("{r:.3}")),
                        None => Cell::text("-"),
                    },
                    Cell::text(format!("{} – {}", f(k.ci_low), f(k.ci_high))),
                    Cell::num(k.p_value, format!("{:.3}", k.p_value)),
                    Cell::text(cc.effect.words()).tone(match cc.effect {
                        Effect::Slower => Tone::Bad,
                        Effect::Faster => Tone::Good,
                        _ => Tone::Plain,
                    }),
                    Cell::text(item(&c.fingerprint)),
                ]);
            }
            d.table(t);
        }
        if !self.errors.is_empty() {
            let mut t = Table::new(vec![
                Column::num("Code", None),
                Column::num("Count", None),
                Column::text("Query ID"),
                Column::text("Message"),
                Column::text("Sample"),
            ])
            .titled("Errors");
            for e in &self.errors {
                t.row(vec![
                    Cell::num(f64::from(e.code), e.code.to_string()),
                    Cell::num(e.count as f64, e.count.to_string()),
                    Cell::text(short_id(&e.class_id)),
                    Cell::text(e.message.clone()),
                    Cell::text(item(&e.sample)),
                ]);
            }
            d.table(t);
        }
        d
    }

    /// With `--compare`: 1 when a class is slower.
    fn exit_code(&self) -> i32 {
        let slower = self.classes.iter().any(|c| {
            c.compare
                .as_ref()
                .is_some_and(|k| k.effect == Effect::Slower)
        });
        if slower {
            crate::error::exit::FOUND
        } else {
            crate::error::exit::OK
        }
    }
}

/// pt's short id: the last 16 hex digits.
fn short_id(id: &str) -> String {
    format!("0x{}", id.get(16..).unwrap_or(id))
}

/// A fingerprint cut to a table-friendly width.
fn item(fp: &str) -> String {
    const W: usize = 60;
    if fp.chars().count() <= W {
        fp.to_string()
    } else {
        let cut: String = fp.chars().take(W - 1).collect();
        format!("{cut}…")
    }
}
