//! Documents of bench's reports: a fio-like block per job (kept verbatim:
//! people put it next to fio's output), then one summary table across jobs
//! and directions with units in the headers, and per-second series.

use super::report::{BenchReport, PresetList};
use super::result::{DirStats, JobResult, WorkloadResult};
use crate::export::doc::{
    Cell, ChartKind, Column, Document, KeyValues, Line, Point, Series, Table, Tone,
};
use crate::export::text::fmt_num;
use crate::units::fmt_size;
use std::fmt::Write;

fn us(ns: u64) -> String {
    let v = ns as f64 / 1000.0;
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn si(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

fn dir_lines(out: &mut String, label: &str, d: &DirStats, runtime_ms: u64) {
    let _ = writeln!(
        out,
        "  {label}: IOPS={}, BW={:.1}MiB/s ({:.1}MB/s)({}/{runtime_ms}msec)",
        si(d.iops),
        d.bw_bytes / 1048576.0,
        d.bw_bytes / 1e6,
        fmt_size(d.io_bytes),
    );
    let l = &d.clat_ns;
    let _ = writeln!(
        out,
        "    clat (usec): min={}, max={}, avg={}, stdev={}",
        us(l.min),
        us(l.max),
        us(l.mean as u64),
        us(l.stddev as u64)
    );
    let _ = writeln!(
        out,
        "    percentiles (usec): 50th={}, 90th={}, 95th={}, 99th={}, 99.9th={}",
        us(l.p50),
        us(l.p90),
        us(l.p95),
        us(l.p99),
        us(l.p99_9)
    );
}

/// fio's per-job layout, so the two outputs can be read side by side.
fn job_block(j: &JobResult) -> String {
    let mut out = String::new();
    let ms = (j.runtime_s * 1000.0).round() as u64;
    let _ = writeln!(
        out,
        "{}: ({}) ioengine={} runtime={ms}ms",
        j.name, j.options, j.ioengine
    );
    if let Some(d) = &j.read {
        dir_lines(&mut out, "read", d, ms);
    }
    if let Some(d) = &j.write {
        dir_lines(&mut out, "write", d, ms);
    }
    if let Some(s) = &j.sync {
        let _ = writeln!(
            out,
            "  {}: {} calls, lat (usec) avg={}, 50th={}, 99th={}, max={}",
            s.kind,
            s.total_ios,
            us(s.lat_ns.mean as u64),
            us(s.lat_ns.p50),
            us(s.lat_ns.p99),
            us(s.lat_ns.max)
        );
    }
    let _ = writeln!(
        out,
        "  cpu (% of one CPU, the job's threads together; over 100 with several): usr={:.2}%, sys={:.2}%, {:.0} ns/IO",
        j.cpu.usr_cpu, j.cpu.sys_cpu, j.cpu.ns_per_io
    );
    if j.series.len() > 1 {
        let iops: Vec<u64> = j
            .series
            .iter()
            .map(|s| s.read_iops_per_s + s.write_iops_per_s)
            .collect();
        let (mn, mx) = (
            iops.iter().min().copied().unwrap_or(0),
            iops.iter().max().copied().unwrap_or(0),
        );
        let _ = writeln!(
            out,
            "  per second: IOPS min={} max={} over {} s",
            si(mn as f64),
            si(mx as f64),
            iops.len()
        );
    }
    out
}

fn summary(r: &WorkloadResult) -> Table {
    let mut cols = vec![
        Column::text("job"),
        Column::text("dir"),
        Column::num("IOPS", None),
        Column::num("bandwidth", Some("MiB/s")),
    ];
    for c in ["mean", "p50", "p90", "p95", "p99", "p99.9", "max"] {
        cols.push(Column::num(c, Some("µs")));
    }
    let mut t = Table::new(cols);
    for j in &r.jobs {
        for (label, d) in [("read", &j.read), ("write", &j.write)] {
            let Some(d) = d else { continue };
            let l = &d.clat_ns;
            let lat = |ns: u64| Cell::num(ns as f64 / 1000.0, us(ns));
            t.row(vec![
                Cell::text(j.name.clone()),
                Cell::text(label),
                Cell::num(d.iops, format!("{:.0}", d.iops)),
                Cell::num(
                    d.bw_bytes / 1048576.0,
                    format!("{:.1}", d.bw_bytes / 1048576.0),
                ),
                lat(l.mean as u64),
                lat(l.p50),
                lat(l.p90),
                lat(l.p95),
                lat(l.p99),
                lat(l.p99_9),
                lat(l.max),
            ]);
        }
    }
    t
}

/// What each device under the files saw over the window (iostat -x), the
/// number in flight next to what the jobs asked for: a device holding far
/// fewer than `depth` means the time went in the layers above it.
fn devices(r: &WorkloadResult) -> Option<Table> {
    if r.devices.is_empty() {
        return None;
    }
    // iostat's aqu-sz: the device's average queue, every process's I/O and
    // (on a loop device) the requests it splits or writes back, so it can
    // exceed what the jobs keep in flight.
    let in_flight = if r.depth > 0 {
        format!("device queue, avg (jobs keep {})", r.depth)
    } else {
        "device queue, avg".to_string()
    };
    let mut t = Table::new(vec![
        Column::text("device"),
        Column::num("r/s", None),
        Column::num("w/s", None),
        Column::num("MiB/s", None),
        Column::num("r_await", Some("µs")),
        Column::num("w_await", Some("µs")),
        Column::num(&in_flight, None),
        Column::num("util", Some("%")),
    ]);
    let wait = |ns: Option<u64>| match ns {
        Some(ns) => Cell::num(ns as f64 / 1000.0, us(ns)),
        None => Cell::text("-"),
    };
    for s in &r.devices {
        let mib = (s.read_bytes_per_s + s.write_bytes_per_s) / 1048576.0;
        t.row(vec![
            Cell::text(s.device.clone()),
            Cell::num(s.r_per_s, format!("{:.0}", s.r_per_s)),
            Cell::num(s.w_per_s, format!("{:.0}", s.w_per_s)),
            Cell::num(mib, format!("{mib:.1}")),
            wait(s.r_await_ns),
            wait(s.w_await_ns),
            Cell::num(s.aqu_sz, format!("{:.1}", s.aqu_sz)),
            Cell::num(s.util_pct, format!("{:.0}", s.util_pct)),
        ]);
    }
    Some(t)
}

/// p50, p99 and p99.9 completion latency per job and direction, as bars
/// (the summary table has the numbers): in µs, or ms when the slowest is
/// 10 ms or more.
fn percentiles(r: &WorkloadResult) -> Option<Series> {
    let max = r
        .jobs
        .iter()
        .flat_map(|j| [&j.read, &j.write])
        .flatten()
        .map(|d| d.clat_ns.p99_9)
        .max()?;
    let (unit, div) = if max >= 10_000_000 {
        ("ms", 1e6)
    } else {
        ("µs", 1e3)
    };
    type Get = fn(&DirStats) -> u64;
    let keys: [(&str, Get); 3] = [
        ("p50", |d| d.clat_ns.p50),
        ("p99", |d| d.clat_ns.p99),
        ("p99.9", |d| d.clat_ns.p99_9),
    ];
    let lines = keys
        .iter()
        .map(|(name, get)| Line {
            name: name.to_string(),
            points: r
                .jobs
                .iter()
                .flat_map(|j| {
                    [("read", &j.read), ("write", &j.write)]
                        .into_iter()
                        .filter_map(move |(dir, d)| {
                            d.as_ref().map(|d| Point {
                                x: format!("{} {dir}", j.name),
                                y: get(d) as f64 / div,
                                ci: None,
                            })
                        })
                })
                .collect(),
        })
        .collect();
    Some(Series {
        title: "Completion latency percentiles per job".into(),
        kind: ChartKind::Bar,
        x_label: "job".into(),
        y_label: "latency".into(),
        y_unit: Some(unit.into()),
        lines,
        // The summary table has these numbers.
        table_fallback: false,
    })
}

fn per_second(r: &WorkloadResult) -> Option<Series> {
    let lines: Vec<Line> = r
        .jobs
        .iter()
        .filter(|j| j.series.len() > 1)
        .map(|j| Line {
            name: j.name.clone(),
            points: j
                .series
                .iter()
                .map(|s| Point {
                    x: s.t_s.to_string(),
                    y: (s.read_iops_per_s + s.write_iops_per_s) as f64,
                    ci: None,
                })
                .collect(),
        })
        .collect();
    (!lines.is_empty()).then(|| Series {
        title: "I/Os per second".into(),
        kind: ChartKind::Line,
        x_label: "second".into(),
        y_label: "IOPS".into(),
        y_unit: Some("IOPS".into()),
        lines,
        // The summary table has the totals; a table of every second is noise.
        table_fallback: false,
    })
}

impl crate::export::Report for BenchReport {
    const COMMAND: &'static str = "bench";

    /// 128 + the signal that ended the run early (130 for Ctrl-C, 143 for
    /// SIGTERM), as other commands exit on a signal; 0 otherwise.
    fn exit_code(&self) -> i32 {
        self.signal.map_or(0, |s| 128 + s)
    }

    fn document(&self) -> Document {
        let Some(r) = &self.result else {
            let mut d = Document::new(format!("bench cleanup in {}", self.directory));
            d.paragraph(format!(
                "removed {} file(s) innotune created in {}",
                self.removed.len(),
                self.directory
            ));
            return d;
        };
        let mut d = Document::new(format!("bench {} in {}", r.name, self.directory));
        if r.interrupted {
            d.note(
                Tone::Warn,
                "interrupted: partial results, the figures cover the part that ran",
            );
        }
        for x in &self.not_on_device {
            d.note(Tone::Warn, x.describe());
        }
        let mut kv = KeyValues::new();
        let window = r.jobs.iter().map(|j| j.runtime_s).fold(0.0f64, f64::max);
        kv.add(
            "window",
            format!(
                "{} s, {}",
                fmt_num(window),
                if r.time_based {
                    "time-based (--runtime)"
                } else {
                    "size-based (io_size per thread)"
                }
            ),
        );
        if r.ramp_s > 0.0 {
            kv.add("ramp excluded", format!("{} s", fmt_num(r.ramp_s)));
        }
        if let Some(c) = &r.host_cpu {
            kv.add("host CPU in window", c.summary());
        }
        d.key_values(kv);
        if let Some(w) = r.host_cpu.as_ref().and_then(|c| c.steal_warning()) {
            d.note(Tone::Warn, w);
        }
        d.preformatted(r.jobs.iter().map(job_block).collect::<String>());
        d.table(summary(r));
        if let Some(s) = percentiles(r) {
            d.series(s);
        }
        if let Some(t) = devices(r) {
            d.table(t);
        }
        if let Some(s) = per_second(r) {
            d.series(s);
        }
        if !self.removed.is_empty() {
            d.paragraph(format!(
                "removed {} file(s) innotune created in {}",
                self.removed.len(),
                self.directory
            ));
        }
        d
    }
}

impl crate::export::Report for PresetList {
    const COMMAND: &'static str = "bench";

    fn document(&self) -> Document {
        let mut d = Document::new("bench presets");
        for p in &self.presets {
            d.subheading(p.name.clone());
            d.paragraph(p.models.clone());
            d.preformatted(
                p.jobs
                    .iter()
                    .map(|j| format!("    {}: {}\n", j.name, j.options))
                    .collect::<String>(),
            );
        }
        d.note(
            Tone::Plain,
            format!(
                "defaults: runtime {}s; job flags given with --preset override its settings.",
                fmt_num(self.default_runtime_s)
            ),
        );
        d
    }
}

/// The survey's figure for `job` in `figs`, as a table cell: MiB/s for the
/// sequential job, IOPS for the random ones.
fn survey_cell(figs: &[super::survey::Figure], job: &str) -> Cell {
    let Some(f) = figs.iter().find(|f| f.job == job) else {
        return Cell::empty();
    };
    if job.starts_with("seq") {
        let mib = f.bw_bytes_per_s / 1048576.0;
        Cell::num(mib, format!("{mib:.1}"))
    } else {
        Cell::num(f.iops_per_s, format!("{:.0}", f.iops_per_s))
    }
}

fn survey_columns(first: &str) -> Vec<Column> {
    vec![
        Column::text(first),
        Column::text("run"),
        Column::num("seq read 1M qd16", Some("MiB/s")),
        Column::num("16k rand qd32", Some("IOPS")),
        Column::num("16k rand qd1", Some("IOPS")),
        Column::num("4k rand qd32", Some("IOPS")),
    ]
}

impl crate::export::Report for super::survey::SurveyReport {
    const COMMAND: &'static str = "bench";

    /// As [`BenchReport`]'s: 128 + the signal that ended it early.
    fn exit_code(&self) -> i32 {
        self.signal.map_or(0, |s| 128 + s)
    }

    fn document(&self) -> Document {
        use super::survey::JOBS;
        let s = &self.survey;
        let mut d = Document::new(if s.dry_run {
            "disk survey plan (read-only, nothing read)"
        } else {
            "disk survey (read-only)"
        });
        if s.interrupted {
            d.note(
                Tone::Warn,
                "interrupted: partial results, the figures cover the part that ran",
            );
        }
        let mut kv = KeyValues::new();
        kv.add(
            "jobs",
            s.jobs
                .iter()
                .map(|j| format!("{} ({})", j.job, j.options))
                .collect::<Vec<_>>()
                .join("; "),
        );
        kv.add("window per job", format!("{} s", fmt_num(s.runtime_s)));
        if s.ramp_s > 0.0 {
            kv.add("ramp excluded", format!("{} s", fmt_num(s.ramp_s)));
        }
        kv.add("planned", format!("{} s", fmt_num(s.planned_s)));
        if !s.dry_run {
            kv.add("took", format!("{} s", fmt_num(s.wall_s)));
        }
        d.key_values(kv);

        let mut disks = Table::new(vec![
            Column::text("class"),
            Column::text("disk"),
            Column::text("model"),
            Column::text("rotational"),
            Column::num("size", None),
            Column::text("notes"),
        ])
        .titled("disks");
        for c in &s.classes {
            for x in &c.disks {
                let mut notes = x.notes.clone();
                if !x.mounted_on.is_empty() {
                    notes.insert(0, format!("mounted on {}", x.mounted_on.join(", ")));
                }
                disks.row(vec![
                    Cell::text(c.class.label()),
                    Cell::text(x.name.clone()),
                    Cell::text(x.model.clone().unwrap_or_else(|| "-".into())),
                    Cell::text(match x.rotational {
                        Some(true) => "yes",
                        Some(false) => "no",
                        None => "unknown",
                    }),
                    Cell::num(x.size_bytes as f64, fmt_size(x.size_bytes)),
                    Cell::text(notes.join("; ")),
                ]);
            }
        }
        d.table(disks);

        if !s.dry_run {
            for c in &s.classes {
                let mut t = Table::new(survey_columns("disk")).titled(c.class.label());
                for x in &c.disks {
                    let mut row = vec![Cell::text(x.name.clone()), Cell::text("alone")];
                    row.extend(JOBS.iter().map(|j| survey_cell(&x.alone, j.key)));
                    t.row(row);
                }
                if let Some(p) = &c.parallel {
                    for x in &c.disks {
                        let mut row = vec![Cell::text(x.name.clone()), Cell::text("in parallel")];
                        row.extend(JOBS.iter().map(|j| survey_cell(&x.in_parallel, j.key)));
                        t.row(row);
                    }
                    let agg: Vec<super::survey::Figure> = p
                        .aggregate
                        .iter()
                        .map(|a| super::survey::Figure {
                            job: a.job.clone(),
                            iops_per_s: a.iops_per_s,
                            bw_bytes_per_s: a.bw_bytes_per_s,
                            ..Default::default()
                        })
                        .collect();
                    let mut row = vec![
                        Cell::text(format!("class ({} disks)", c.disks.len())),
                        Cell::text("aggregate"),
                    ];
                    row.extend(JOBS.iter().map(|j| survey_cell(&agg, j.key)));
                    t.row(row);
                    let mut row = vec![Cell::text("scaling"), Cell::text("aggregate / Σ alone")];
                    row.extend(JOBS.iter().map(
                        |j| match p.aggregate.iter().find(|a| a.job == j.key) {
                            Some(a) => Cell::num(a.scaling, format!("{:.2}×", a.scaling)),
                            None => Cell::empty(),
                        },
                    ));
                    t.row(row);
                }
                d.table(t);
                if let Some(p) = &c.parallel {
                    d.paragraph(format!(
                        "{}: all {} disks at once took {} s; one after the other {} s.",
                        c.class.label(),
                        c.disks.len(),
                        fmt_num(p.wall_s),
                        fmt_num(c.alone_wall_s)
                    ));
                }
            }
            // Each disk's sequential bandwidth alone, as bars (the tables
            // have the numbers).
            let seq: Vec<Point> = s
                .classes
                .iter()
                .flat_map(|c| &c.disks)
                .filter_map(|x| {
                    let f = x.alone.iter().find(|f| f.job == "seq-read-1m-qd16")?;
                    Some(Point {
                        x: x.name.clone(),
                        y: f.bw_bytes_per_s / 1048576.0,
                        ci: None,
                    })
                })
                .collect();
            if seq.len() > 1 {
                d.series(Series {
                    title: "Sequential 1 MiB reads at depth 16, each disk alone".into(),
                    kind: ChartKind::Bar,
                    x_label: "disk".into(),
                    y_label: "bandwidth".into(),
                    y_unit: Some("MiB/s".into()),
                    lines: vec![Line {
                        name: "sequential read".into(),
                        points: seq,
                    }],
                    table_fallback: false,
                });
            }
        }
        // One note per reason: a host has many unattached loop devices.
        let mut reasons: Vec<&str> = s.skipped.iter().map(|x| x.reason.as_str()).collect();
        reasons.dedup();
        reasons.sort_unstable();
        reasons.dedup();
        for r in reasons {
            let names: Vec<&str> = s
                .skipped
                .iter()
                .filter(|x| x.reason == r)
                .map(|x| x.name.as_str())
                .collect();
            d.note(Tone::Plain, format!("skipped {}: {r}", names.join(", ")));
        }
        d.note(
            Tone::Plain,
            "reads only (O_RDONLY, O_DIRECT): safe on mounted disks. Writes are not surveyed on raw devices; measure them on a scratch file: innotune bench --directory DIR --rw randwrite",
        );
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::Report;
    use crate::model::cpustat::HostCpu;

    fn report(steal: Option<f64>) -> BenchReport {
        BenchReport {
            directory: "/x".into(),
            result: Some(WorkloadResult {
                name: "j".into(),
                time_based: true,
                host_cpu: steal.map(|s| HostCpu {
                    busy_pct: 60.0,
                    iowait_pct: 10.0,
                    steal_pct: s,
                    idle_pct: 30.0 - s,
                }),
                ..Default::default()
            }),
            removed: vec![],
            not_on_device: vec![],
            signal: None,
        }
    }

    /// The flag is in the document (text, markdown, HTML) and the JSON,
    /// and reads back.
    #[test]
    fn io_that_did_not_reach_a_device_is_a_warning_in_every_format() {
        use super::super::reach::NotOnDevice;
        let mut r = report(None);
        assert!(!format!("{:?}", r.document()).contains("page cache"));
        assert!(serde_json::to_value(&r)
            .unwrap()
            .get("not_on_device")
            .is_none());
        r.not_on_device = vec![NotOnDevice::LoopBuffered {
            device: "loop7".into(),
            backing_file: Some("/dev/shm/x.img".into()),
        }];
        let d = r.document();
        let render = |e: &dyn crate::export::Exporter| {
            let mut out = Vec::new();
            e.export(&d, &mut out).unwrap();
            String::from_utf8(out).unwrap()
        };
        for page in [
            render(&crate::export::text::Text::new(
                crate::output::Style::plain(),
            )),
            render(&crate::export::markdown::Markdown),
            render(&crate::export::html::Html),
        ] {
            assert!(
                page.contains(
                    "loop7 reads and writes its backing file /dev/shm/x.img through the page cache"
                ),
                "{page}"
            );
        }
        let j = serde_json::to_value(&r).unwrap();
        assert_eq!(j["not_on_device"][0]["why"], "loop_buffered", "{j}");
        let back: BenchReport = serde_json::from_value(j).unwrap();
        assert_eq!(back.not_on_device, r.not_on_device);
    }

    #[test]
    fn devices_table_shows_in_flight_against_the_depth_asked() {
        let mut r = report(None);
        let none = format!("{:?}", r.document());
        assert!(
            !none.contains("device queue"),
            "no devices, no table: {none}"
        );
        let w = r.result.as_mut().unwrap();
        w.depth = 32;
        let a = crate::model::diskstats::parse("7 0 loop0 0 0 0 0 0 0 0 0 0 0 0");
        let b = crate::model::diskstats::parse("7 0 loop0 2000 0 64000 1200 0 0 0 0 0 1000 58000");
        w.devices = vec![crate::trace::iostat::Iostat::compute(
            "loop0",
            &a["loop0"],
            &b["loop0"],
            2.0,
        )];
        let doc = format!("{:?}", r.document());
        assert!(doc.contains("device queue, avg (jobs keep 32)"), "{doc}");
        // 2000 reads in 2 s, 1200 ms over 2000 reads, 58 s of request time in 2 s.
        for want in ["loop0", "\"1000\"", "\"600\"", "\"29.0\"", "\"15.6\""] {
            assert!(doc.contains(want), "{want} in {doc}");
        }
    }

    #[test]
    fn host_cpu_is_shown_and_steal_from_five_percent_is_a_warning() {
        let none = format!("{:?}", report(None).document());
        assert!(!none.contains("host CPU"), "{none}");
        let low = format!("{:?}", report(Some(2.0)).document());
        assert!(
            low.contains("busy 60 %, iowait 10 %, steal 2 %, idle 28 %"),
            "{low}"
        );
        assert!(!low.contains("Warn"), "{low}");
        let high = format!("{:?}", report(Some(17.0)).document());
        assert!(high.contains("tone: Warn"), "{high}");
        assert!(high.contains("took 17 % of this VM's CPU time"), "{high}");
    }

    #[test]
    fn reads_back_from_its_json() {
        let r = report(Some(17.0));
        let j = serde_json::to_value(&r).unwrap();
        let back = super::super::report::BenchResult::from_value(j.clone()).unwrap();
        assert!(matches!(back, super::super::report::BenchResult::Run(_)));
        assert_eq!(serde_json::to_value(&back).unwrap(), j);
        assert_eq!(
            format!("{:?}", back.document()),
            format!("{:?}", r.document())
        );
    }
}
