//! The typed result of `innotune trace` (JSON: docs/json-trace.md) and the
//! document it turns into: per device, a table per direction with btt's
//! intervals, the merge ratio and where Q2C went, ASCII histograms of Q2C
//! and D2C, and iostat -x's figures for the same window.

use super::analysis::{DirectionFigures, Unmatched};
use super::feed::Lines;
use super::iostat::Iostat;
use super::latency::{Bucket, Summary};
use crate::export::doc::{Cell, Column, Document, KeyValues, Table, Tone};
use crate::export::text::fmt_num;
use serde::Serialize;
use std::path::PathBuf;

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct TraceReport {
    pub source: Source,
    /// A saved `trace` file whose per-CPU buffers had overwritten older
    /// events: the window every CPU covers, which alone was analysed.
    /// Absent when nothing was cut (and in results from before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<Window>,
    pub lines: Lines,
    /// Events used (Q, G, I, M, D, C).
    pub events: u64,
    /// From the first event to the last.
    pub span_s: f64,
    pub devices: Vec<DeviceTrace>,
    /// iostat -x over the capture window (empty for a saved trace).
    pub iostat: Vec<Iostat>,
    /// Things to know when reading the figures.
    pub notes: Vec<String>,
}

/// Where the events came from.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Source {
    /// A live capture in a private tracefs instance.
    Capture {
        devices: Vec<String>,
        window_s: f64,
        /// Ended by a signal before the duration (or with no duration).
        interrupted: bool,
    },
    /// A saved trace (`--input`).
    File {
        path: PathBuf,
        /// `tracefs` or `blkparse` (the format of most event lines).
        format: String,
    },
}

/// The window of a saved trace that every CPU covers.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Window {
    /// Where it starts, seconds on the trace clock: the latest of the
    /// CPUs' first events.
    pub start_s: f64,
    /// The CPU whose events begin last.
    pub last_cpu: u32,
    /// From the earliest event to the start.
    pub dropped_s: f64,
    /// Events before the start, not analysed.
    pub events_dropped: u64,
    /// What the header says the buffers overwrote (entries written − in
    /// the buffer).
    pub overwritten: u64,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct DeviceTrace {
    /// `MAJOR,MINOR`, as the events print it.
    pub device: String,
    /// Kernel name, when known (a live capture).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The I/O scheduler during a live capture.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<String>,
    /// Every direction together.
    pub all: DirectionFigures,
    pub directions: Vec<DirectionFigures>,
    pub unmatched: Unmatched,
    /// Bios queued but not completed within the trace.
    pub incomplete_bios: u64,
}

impl DeviceTrace {
    pub fn label(&self) -> String {
        match &self.name {
            Some(n) => format!("{n} ({})", self.device),
            None => self.device.clone(),
        }
    }
}

fn us(ns: u64) -> String {
    fmt_num(ns as f64 / 1000.0)
}

/// The intervals in reading order: (btt name, summary, share).
fn rows(f: &DirectionFigures) -> Vec<(&'static str, Option<Summary>, Option<f64>)> {
    let s = f.share;
    vec![
        ("Q2G", f.q2g, s.map(|s| s.q2g_pct)),
        ("G2I", f.g2i, s.map(|s| s.g2i_pct)),
        ("Q2M", f.q2m, s.map(|s| s.q2m_pct)),
        ("I2D", f.i2d, s.map(|s| s.i2d_pct)),
        ("M2D", f.m2d, s.map(|s| s.m2d_pct)),
        ("D2C", f.d2c, s.map(|s| s.d2c_pct)),
        ("Q2C", f.q2c, None),
    ]
}

fn interval_table(title: String, f: &DirectionFigures) -> Table {
    let mut t = Table::new(vec![
        Column::text("interval"),
        Column::num("count", None),
        Column::num("min", Some("µs")),
        Column::num("avg", Some("µs")),
        Column::num("p50", Some("µs")),
        Column::num("p95", Some("µs")),
        Column::num("p99", Some("µs")),
        Column::num("max", Some("µs")),
        Column::num("of Q2C", Some("%")),
    ])
    .titled(title);
    for (name, s, share) in rows(f) {
        let Some(s) = s else {
            continue;
        };
        let num = |ns: u64| Cell::num(ns as f64 / 1000.0, us(ns));
        t.row(vec![
            Cell::text(name),
            Cell::num(s.count as f64, s.count.to_string()),
            num(s.min_ns),
            num(s.avg_ns),
            num(s.p50_ns),
            num(s.p95_ns),
            num(s.p99_ns),
            num(s.max_ns),
            match share {
                Some(p) => Cell::num(p, format!("{p:.1}")),
                None => Cell::empty(),
            },
        ]);
    }
    t
}

/// A bcc-biolatency-style histogram of log2 buckets in µs.
pub fn ascii_histogram(title: &str, buckets: &[Bucket]) -> String {
    let max = buckets.iter().map(|b| b.count).max().unwrap_or(0).max(1);
    let mut s = format!("{title}\n{:>21} : {:<8} distribution\n", "µs", "count");
    for b in buckets {
        let bar = "*".repeat(((b.count * 40).div_ceil(max)) as usize);
        s.push_str(&format!(
            "{:>9} -> {:<9} : {:<8} |{:<40}|\n",
            b.low_ns / 1000,
            b.high_ns / 1000 - 1,
            b.count,
            bar
        ));
    }
    s
}

fn summary_line(f: &DirectionFigures) -> String {
    let mut s = format!(
        "{}: {} bios ({} MiB) in {} requests",
        f.direction.label(),
        f.bios_queued,
        fmt_num(f.bytes_queued as f64 / 1048576.0),
        f.requests_issued
    );
    if let Some(r) = f.merge_ratio {
        s.push_str(&format!(", merge ratio {r:.2} bios/request"));
    }
    if let Some(sh) = f.share {
        s.push_str(&format!(
            "; of Q2C: {:.1}% in the scheduler (I2D+M2D), {:.1}% in the device (D2C)",
            sh.i2d_pct + sh.m2d_pct,
            sh.d2c_pct
        ));
    }
    s
}

fn opt_ns(v: Option<u64>) -> Cell {
    match v {
        Some(ns) => Cell::num(ns as f64 / 1e6, fmt_num(ns as f64 / 1e6)),
        None => Cell::text("-").tone(Tone::Dim),
    }
}

impl crate::export::Report for TraceReport {
    const COMMAND: &'static str = "trace";

    fn document(&self) -> Document {
        let mut d = Document::new("innotune trace: where block I/O time goes");
        let mut kv = KeyValues::new();
        match &self.source {
            Source::Capture {
                devices,
                window_s,
                interrupted,
            } => {
                kv.add("Captured", devices.join(", "));
                kv.add(
                    "Window",
                    format!(
                        "{window_s:.1} s{}",
                        if *interrupted {
                            " (stopped by a signal)"
                        } else {
                            ""
                        }
                    ),
                );
            }
            Source::File { path, format } => {
                kv.add("Input", format!("{} ({format})", path.display()));
            }
        }
        if let Some(w) = &self.window {
            kv.add(
                "Analysed",
                Cell::text(format!(
                    "from {:.6} s, where every CPU's buffer has events (CPU {}'s begin last); {:.3} s and {} events before it dropped",
                    w.start_s, w.last_cpu, w.dropped_s, w.events_dropped
                ))
                .tone(Tone::Warn),
            );
        }
        // A live capture reads the kernel's binary records, not lines.
        let of = match self.source {
            Source::Capture { .. } => "events recorded",
            Source::File { .. } => "lines",
        };
        kv.add(
            "Events",
            format!(
                "{} used of {} {of} ({:.3} s of trace)",
                self.events, self.lines.total, self.span_s
            ),
        );
        if self.lines.events > self.lines.blkparse {
            kv.add("Resolution", "1 µs (tracefs prints microseconds)");
        }
        if self.lines.lost_events > 0 {
            kv.add(
                "Lost",
                Cell::text(format!(
                    "{} events dropped by the kernel (buffer full)",
                    self.lines.lost_events
                ))
                .tone(Tone::Warn),
            );
        }
        d.key_values(kv);
        for dev in &self.devices {
            let sched = dev
                .scheduler
                .as_ref()
                .map(|s| format!(", scheduler {s}"))
                .unwrap_or_default();
            d.heading(format!("{}{sched}", dev.label()));
            for f in &dev.directions {
                d.paragraph(summary_line(f));
            }
            for f in &dev.directions {
                d.table(interval_table(
                    format!("{} — {}", dev.label(), f.direction.label()),
                    f,
                ));
            }
            if dev.directions.len() > 1 {
                d.table(interval_table(format!("{} — all", dev.label()), &dev.all));
            }
            for f in &dev.directions {
                let mut h = String::new();
                if !f.q2c_histogram.is_empty() {
                    h.push_str(&ascii_histogram(
                        &format!("{} Q2C ({})", dev.label(), f.direction.label()),
                        &f.q2c_histogram,
                    ));
                }
                if !f.d2c_histogram.is_empty() {
                    h.push('\n');
                    h.push_str(&ascii_histogram(
                        &format!("{} D2C ({})", dev.label(), f.direction.label()),
                        &f.d2c_histogram,
                    ));
                }
                if !h.is_empty() {
                    d.preformatted(h);
                }
            }
        }
        if !self.iostat.is_empty() {
            d.heading("iostat -x over the window");
            let mut t = Table::new(vec![
                Column::text("device"),
                Column::num("r/s", None),
                Column::num("w/s", None),
                Column::num("rkB/s", None),
                Column::num("wkB/s", None),
                Column::num("r_await", Some("ms")),
                Column::num("w_await", Some("ms")),
                Column::num("aqu-sz", None),
                Column::num("%util", None),
                Column::num("f/s", None),
                Column::num("f_await", Some("ms")),
            ]);
            for s in &self.iostat {
                let n = |v: f64| Cell::num(v, fmt_num(v));
                t.row(vec![
                    Cell::text(&s.device),
                    n(s.r_per_s),
                    n(s.w_per_s),
                    n(s.read_bytes_per_s / 1024.0),
                    n(s.write_bytes_per_s / 1024.0),
                    opt_ns(s.r_await_ns),
                    opt_ns(s.w_await_ns),
                    n(s.aqu_sz),
                    n(s.util_pct),
                    n(s.f_per_s),
                    opt_ns(s.f_await_ns),
                ]);
            }
            d.table(t);
        }
        for n in &self.notes {
            d.note(Tone::Warn, n.clone());
        }
        d
    }
}
