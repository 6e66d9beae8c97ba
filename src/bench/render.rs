//! Text rendering of bench results: a fio-like block per job, then one
//! table across jobs and directions (latencies in µs).

use super::presets;
use super::result::{DirStats, JobResult, WorkloadResult};
use crate::output::{table, Report, Style};
use crate::units::fmt_size;
use serde::Serialize;
use std::io::{self, Write};

/// What `innotune bench` returns (`result` of the JSON envelope).
#[derive(Debug, Serialize)]
pub struct BenchReport {
    pub directory: String,
    /// The run, absent for `--cleanup` alone.
    pub result: Option<WorkloadResult>,
    /// Files `--cleanup` removed.
    pub removed: Vec<String>,
}

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

fn dir_line(out: &mut dyn Write, label: &str, d: &DirStats, style: Style) -> io::Result<()> {
    writeln!(
        out,
        "  {}: IOPS={}, BW={:.1}MiB/s ({:.1}MB/s)({}/{}msec)",
        style.bold(label),
        si(d.iops),
        d.bw_bytes / 1048576.0,
        d.bw_bytes / 1e6,
        fmt_size(d.io_bytes),
        d.runtime
    )?;
    let l = &d.clat_ns;
    writeln!(
        out,
        "    clat (usec): min={}, max={}, avg={}, stdev={}",
        us(l.min),
        us(l.max),
        us(l.mean as u64),
        us(l.stddev as u64)
    )?;
    writeln!(
        out,
        "    percentiles (usec): 50th={}, 90th={}, 95th={}, 99th={}, 99.9th={}",
        us(l.p50),
        us(l.p90),
        us(l.p95),
        us(l.p99),
        us(l.p99_9)
    )
}

fn job_block(out: &mut dyn Write, j: &JobResult, style: Style) -> io::Result<()> {
    writeln!(
        out,
        "{}: ({}) ioengine={} runtime={}ms",
        style.bold(&j.name),
        j.options,
        j.ioengine,
        j.runtime_ms
    )?;
    if let Some(d) = &j.read {
        dir_line(out, "read", d, style)?;
    }
    if let Some(d) = &j.write {
        dir_line(out, "write", d, style)?;
    }
    if let Some(s) = &j.sync {
        writeln!(
            out,
            "  {}: {} calls, lat (usec) avg={}, 50th={}, 99th={}, max={}",
            s.kind,
            s.total_ios,
            us(s.lat_ns.mean as u64),
            us(s.lat_ns.p50),
            us(s.lat_ns.p99),
            us(s.lat_ns.max)
        )?;
    }
    writeln!(
        out,
        "  cpu: usr={:.2}%, sys={:.2}%, {:.0} ns/IO",
        j.cpu.usr_cpu, j.cpu.sys_cpu, j.cpu.ns_per_io
    )?;
    if j.series.len() > 1 {
        let iops: Vec<u64> = j
            .series
            .iter()
            .map(|s| s.read_iops + s.write_iops)
            .collect();
        let (mn, mx) = (
            iops.iter().min().copied().unwrap_or(0),
            iops.iter().max().copied().unwrap_or(0),
        );
        writeln!(
            out,
            "  per second: IOPS min={} max={} over {} s",
            si(mn as f64),
            si(mx as f64),
            iops.len()
        )?;
    }
    Ok(())
}

impl Report for BenchReport {
    const COMMAND: &'static str = "bench";

    fn render_text(&self, out: &mut dyn Write, style: Style) -> io::Result<()> {
        if let Some(r) = &self.result {
            let ramp = if r.ramp_ms > 0 {
                format!(", ramp {} ms excluded", r.ramp_ms)
            } else {
                String::new()
            };
            writeln!(
                out,
                "{} in {}{}{}",
                style.bold(&format!("bench {}", r.name)),
                self.directory,
                ramp,
                if r.interrupted {
                    style.warn(" (interrupted: partial results)")
                } else {
                    String::new()
                }
            )?;
            for j in &r.jobs {
                job_block(out, j, style)?;
            }
            writeln!(out)?;
            let mut t = table::new(&[
                "job", "dir", "IOPS", "MiB/s", "mean µs", "p50", "p90", "p95", "p99", "p99.9",
                "max",
            ]);
            for j in &r.jobs {
                for (label, d) in [("read", &j.read), ("write", &j.write)] {
                    if let Some(d) = d {
                        let l = &d.clat_ns;
                        t.add_row(vec![
                            j.name.clone(),
                            label.to_string(),
                            format!("{:.0}", d.iops),
                            format!("{:.1}", d.bw_bytes / 1048576.0),
                            us(l.mean as u64),
                            us(l.p50),
                            us(l.p90),
                            us(l.p95),
                            us(l.p99),
                            us(l.p99_9),
                            us(l.max),
                        ]);
                    }
                }
            }
            table::align_numbers(&mut t, 2);
            writeln!(out, "{t}")?;
        }
        if !self.removed.is_empty() || self.result.is_none() {
            writeln!(
                out,
                "removed {} file(s) innotune created in {}",
                self.removed.len(),
                self.directory
            )?;
        }
        Ok(())
    }
}

/// `--list-presets`.
#[derive(Debug, Serialize)]
pub struct PresetList {
    pub presets: Vec<PresetInfo>,
}

#[derive(Debug, Serialize)]
pub struct PresetInfo {
    pub name: String,
    pub models: String,
    /// One line of fio-style settings per job.
    pub jobs: Vec<String>,
}

impl PresetList {
    pub fn build() -> anyhow::Result<PresetList> {
        let presets = presets::PRESETS
            .iter()
            .map(|p| {
                Ok(PresetInfo {
                    name: p.name.into(),
                    models: p.models.into(),
                    jobs: p
                        .jobs()?
                        .iter()
                        .map(|j| format!("{}: {}", j.name, j.describe()))
                        .collect(),
                })
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(PresetList { presets })
    }
}

impl Report for PresetList {
    const COMMAND: &'static str = "bench";

    fn render_text(&self, out: &mut dyn Write, style: Style) -> io::Result<()> {
        for p in &self.presets {
            writeln!(out, "{}  {}", style.bold(&p.name), p.models)?;
            for j in &p.jobs {
                writeln!(out, "    {j}")?;
            }
        }
        writeln!(
            out,
            "\nDefaults: runtime {}s; job flags given with --preset override its settings.",
            presets::DEFAULT_RUNTIME.as_secs()
        )
    }
}
