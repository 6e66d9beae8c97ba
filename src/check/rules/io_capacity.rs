//! innodb_io_capacity / innodb_io_capacity_max against what the device
//! can write: measured (16 KiB random O_DIRECT writes, from `--results` or
//! `--measure`), else the class rule of thumb, and the dirty-page share
//! sampled in the window (flushing that cannot keep up).
//!
//! The MySQL manual's guidance: io_capacity near the device's IOPS for
//! background flushing, kept as low as practical; io_capacity_max the
//! burst ceiling. innotune sets io_capacity_max to the measured write
//! IOPS and io_capacity to half of it (background flushing at half the
//! device leaves the other half to foreground reads and the redo log).

use super::scheduler::{class_of, Class};
use super::{round2, server_advice, Advice, Rule, Scope, Versions};
use crate::check::facts::Facts;
use crate::finding::{Severity, Source};

pub const RULE: Rule = Rule {
    id: "server.io_capacity",
    layer: crate::finding::Layer::Server,
    scope: Scope::Server(Versions::ALL),
    about: "innodb_io_capacity(_max) vs the device's measured write IOPS and the dirty page %",
    run,
};

const DOC: &str = "https://dev.mysql.com/doc/refman/8.0/en/innodb-configuring-io-capacity.html";

fn run(f: &Facts) -> Vec<Advice> {
    let Some(s) = &f.server else {
        return Vec::new();
    };
    let (Some(cap), Some(max)) = (
        s.var_u64("innodb_io_capacity"),
        s.var_u64("innodb_io_capacity_max"),
    ) else {
        return Vec::new();
    };
    let w = s.window.as_ref();
    let dirty_max = s.var_u64("innodb_max_dirty_pages_pct").unwrap_or(90) as f64;
    let dirty = w.and_then(|w| w.dirty_pct_max);
    let wait_free = w
        .and_then(|w| w.delta("innodb_buffer_pool_wait_free"))
        .unwrap_or(0);
    let pressure = wait_free > 0 || dirty.is_some_and(|d| d >= 0.75 * dirty_max);
    let mut pressure_note = Vec::new();
    if let Some(d) = dirty {
        pressure_note.push(format!(
            "dirty pages peaked at {d:.0}% (innodb_max_dirty_pages_pct {dirty_max:.0})"
        ));
    }
    if wait_free > 0 {
        pressure_note.push(format!("{wait_free} waits for a free page"));
    }
    let pressure_note = pressure_note.join(", ");
    let mut out = Vec::new();
    match &f.write_iops {
        Some(m) => {
            let iops = m.value;
            let want_max = round2(iops).max(100);
            let want_cap = round2(iops / 2.0).max(100);
            let ev = format!(
                "{:.0} write IOPS (16 KiB random O_DIRECT) from {}; innodb_io_capacity {cap}, innodb_io_capacity_max {max}{}",
                iops,
                m.source,
                if pressure_note.is_empty() { String::new() } else { format!("; {pressure_note}") }
            );
            if cap as f64 > iops {
                out.push(server_advice(s, "server.io_capacity", Severity::Warning, "innodb_io_capacity", want_cap,
                    format!("innodb_io_capacity {cap} asks background flushing for more writes per second than the device did ({iops:.0}): flushing competes with every read and the redo log. Half the device, {want_cap}, keeps headroom."),
                    Source::Measured, ev.clone()));
            } else if (cap as f64) < iops / 10.0 && pressure {
                out.push(server_advice(s, "server.io_capacity", Severity::Warning, "innodb_io_capacity", want_cap,
                    format!("flushing fell behind during the sample ({pressure_note}) while innodb_io_capacity {cap} uses under a tenth of the {iops:.0} IOPS the device wrote: raise it to half the device, {want_cap}."),
                    Source::Measured, ev.clone()));
            }
            let new_cap = out.first().map(|_| want_cap).unwrap_or(cap);
            let max_wrong = max as f64 > 2.0 * iops || max < new_cap;
            if max_wrong && max != want_max.max(new_cap) {
                let v = want_max.max(new_cap);
                out.push(server_advice(s, "server.io_capacity_max", Severity::Notice, "innodb_io_capacity_max", v,
                    format!("innodb_io_capacity_max {max} is the flushing ceiling under pressure; the device wrote {iops:.0} IOPS, so {v} lets InnoDB use all of it and no more."),
                    Source::Measured, ev));
            }
        }
        None => {
            // Rule of thumb by the class of the data disks.
            let classes: Vec<Class> = f
                .devices
                .iter()
                .filter(|d| d.is_scheduled_disk())
                .map(class_of)
                .collect();
            if classes.is_empty() {
                return out;
            }
            let all = |c: &[Class]| classes.iter().all(|x| c.contains(x));
            let ev = format!("innodb_io_capacity {cap}, innodb_io_capacity_max {max}; data disks: {classes:?}. Measure instead: innotune check --measure, or --results bench.json");
            if all(&[Class::Nvme, Class::SataSsd]) && cap < 1000 {
                out.push(server_advice(s, "server.io_capacity", if pressure { Severity::Warning } else { Severity::Notice }, "innodb_io_capacity", 2000,
                    format!("the datadir is on SSDs, which write thousands of pages per second, but innodb_io_capacity {cap} is sized for a single rotating disk: dirty pages pile up and are flushed in bursts.{}", if pressure { format!(" During the sample: {pressure_note}.") } else { String::new() }),
                    Source::RuleOfThumb, ev.clone()));
                if max < 4000 {
                    out.push(server_advice(s, "server.io_capacity_max", Severity::Notice, "innodb_io_capacity_max", 4000,
                        "with innodb_io_capacity 2000, the ceiling under pressure should be twice it.".to_string(),
                        Source::RuleOfThumb, ev));
                }
            } else if all(&[Class::Hdd]) && cap > 400 {
                out.push(server_advice(s, "server.io_capacity", Severity::Notice, "innodb_io_capacity", 200,
                    format!("the datadir is on rotating disks (about 100–200 random writes per second each), and innodb_io_capacity {cap} asks background flushing for more than they can do, at the expense of reads."),
                    Source::RuleOfThumb, ev));
            }
        }
    }
    for a in &mut out {
        a.finding.evidence.reference = Some(DOC.into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::facts::Measured;
    use crate::check::rules::testing::*;

    #[test]
    fn measured_device_is_slower_than_io_capacity() {
        let s = with_vars(
            server("mysql", 8, 4, 0),
            &[
                ("innodb_io_capacity", "10000"),
                ("innodb_io_capacity_max", "20000"),
            ],
        );
        let f = Facts {
            server: Some(s),
            write_iops: Some(Measured {
                value: 3130.0,
                source: "bench.json".into(),
            }),
            ..Default::default()
        };
        let a = run(&f);
        assert_eq!(a[0].finding.recommended.as_deref(), Some("1600"));
        assert_eq!(a[1].finding.subject.name, "innodb_io_capacity_max");
        assert_eq!(a[1].finding.recommended.as_deref(), Some("3100"));
    }
}
