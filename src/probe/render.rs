//! Text rendering of a [`ProbeReport`]: the stack as an indented tree with
//! each device's key settings, then tables. Unknown values print as `?` in
//! tables (the JSON carries the reason) and in full elsewhere.

use super::stack::StackDevice;
use super::ProbeReport;
use crate::host::Known;
use crate::output::{table, Style};
use crate::units::fmt_size;
use std::io::{self, Write};

fn k<T: std::fmt::Display>(v: &Known<T>) -> String {
    match v {
        Known::Value(v) => v.to_string(),
        Known::Unknown { .. } => "?".into(),
    }
}

fn size(v: &Known<u64>) -> String {
    match v {
        Known::Value(b) => fmt_size(*b),
        _ => "?".into(),
    }
}

/// `none [mq-deadline] kyber bfq`, the active one bold.
fn schedulers(d: &StackDevice, style: Style) -> String {
    let Some(q) = &d.queue else {
        return String::new();
    };
    match (&q.scheduler, &q.schedulers_available) {
        (Known::Value(a), Known::Value(all)) => all
            .iter()
            .map(|s| {
                if s == a {
                    style.bold(&format!("[{s}]"))
                } else {
                    s.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(" "),
        _ => "scheduler ?".into(),
    }
}

fn tree_line(d: &StackDevice, style: Style) -> String {
    let indent = "   ".repeat(d.depth);
    let arrow = if d.depth == 0 {
        String::new()
    } else {
        "└─ ".into()
    };
    let mut parts = vec![style.bold(&d.name), d.kind.as_str().to_string()];
    if let Some(p) = &d.partition {
        parts.push(format!("partition {} of {}", k(&p.number), p.disk));
    }
    if let Known::Value(m) = &d.model {
        parts.push(m.clone());
    }
    parts.push(size(&d.size_bytes));
    if let Some(md) = &d.md {
        let chunk = match &md.chunk_bytes {
            Known::Value(c) => fmt_size(*c),
            _ => "?".into(),
        };
        parts.push(format!(
            "{} chunk {} over {} disks",
            k(&md.level),
            chunk,
            k(&md.raid_disks)
        ));
    }
    if let Some(dm) = &d.dm {
        parts.push(format!("{} {}", dm.target, k(&dm.name)));
    }
    if let Some(l) = &d.loop_dev {
        let mut s = format!("backing file {}", k(&l.backing_file));
        if l.backing_deleted {
            s.push_str(&style.warn(" (deleted)"));
        }
        if let Known::Value(true) = l.direct_io {
            s.push_str(" (direct I/O)");
        }
        parts.push(s);
    }
    if d.queue.is_some() {
        parts.push(schedulers(d, style));
        if let Some(q) = &d.queue {
            if let Known::Value(r) = q.rotational {
                parts.push(if r { "rotational" } else { "non-rotational" }.into());
            }
        }
    }
    let rel = if d.depth == 0 {
        String::new()
    } else {
        style.dim(&format!("  ({})", d.relation.as_str()))
    };
    format!("  {indent}{arrow}{}{rel}", parts.join("  "))
}

pub fn render(r: &ProbeReport, out: &mut dyn Write, style: Style) -> io::Result<()> {
    let src = match r.path_source.as_str() {
        "mysqld_datadir" => " (datadir of the running server)",
        "current_directory" => " (current directory)",
        _ => "",
    };
    writeln!(out, "{} {}{src}", style.bold("Path"), r.path)?;
    if r.root != "/" {
        writeln!(
            out,
            "{}",
            style.dim(&format!("host replayed from {}", r.root))
        )?;
    }
    writeln!(out)?;

    writeln!(out, "{}", style.bold("Mount"))?;
    match &r.mount {
        Known::Value(m) => {
            writeln!(
                out,
                "  {}  {}  from {} ({})",
                m.mount_point, m.fs_type, m.source, m.maj_min
            )?;
            writeln!(
                out,
                "  options {}  super {}",
                m.mount_options.join(","),
                m.super_options.join(",")
            )?;
            let barrier = if m.decoded.barrier == "off" {
                style.warn("off")
            } else {
                m.decoded.barrier.clone()
            };
            writeln!(
                out,
                "  atime {}  barrier {}  discard {}{}",
                m.decoded.atime,
                barrier,
                m.decoded.discard,
                if m.decoded.read_only {
                    "  read-only"
                } else {
                    ""
                }
            )?;
        }
        Known::Unknown { unknown } => writeln!(out, "  unknown ({unknown})")?,
    }
    writeln!(out)?;

    writeln!(out, "{}", style.bold("Device stack"))?;
    if r.stack.is_empty() {
        writeln!(out, "  (no block device)")?;
    }
    for d in &r.stack {
        writeln!(out, "{}", tree_line(d, style))?;
    }
    writeln!(out)?;

    let queued: Vec<&StackDevice> = r.stack.iter().filter(|d| d.queue.is_some()).collect();
    if !queued.is_empty() {
        let mut t = table::new(&[
            "DEVICE", "KIND", "SCHED", "ROT", "NR_REQ", "RA_KB", "MAX_KB", "LBS", "PBS", "CACHE",
            "NOMERGES", "RQ_AFF", "WBT_US", "HWQ",
        ]);
        for d in &queued {
            let q = d.queue.as_ref().expect("filtered");
            let rot = match q.rotational {
                Known::Value(true) => "1".into(),
                Known::Value(false) => "0".into(),
                _ => "?".into(),
            };
            t.add_row(vec![
                d.name.clone(),
                d.kind.as_str().into(),
                k(&q.scheduler),
                rot,
                k(&q.nr_requests),
                k(&q.read_ahead_kb),
                k(&q.max_sectors_kb),
                k(&q.logical_block_size),
                k(&q.physical_block_size),
                k(&q.write_cache),
                k(&q.nomerges),
                k(&q.rq_affinity),
                k(&q.wbt_lat_usec),
                k(&q.hw_queues),
            ]);
        }
        table::align_numbers(&mut t, 3);
        writeln!(out, "{}", style.bold("Queues"))?;
        writeln!(out, "{t}")?;
        for d in &queued {
            let q = d.queue.as_ref().expect("filtered");
            if let (Known::Value(s), Known::Value(tun)) = (&q.scheduler, &q.scheduler_tunables) {
                if !tun.is_empty() {
                    let kv: Vec<String> = tun.iter().map(|(a, b)| format!("{a}={b}")).collect();
                    writeln!(out, "  {} {}: {}", d.name, s, kv.join(" "))?;
                }
            }
        }
        writeln!(out)?;
    }

    let h = &r.host;
    writeln!(out, "{}", style.bold("Host"))?;
    let mut t = table::new(&["SETTING", "VALUE"]);
    let mem = match &h.memory_bytes {
        Known::Value(b) => fmt_size(*b),
        u => u.to_string(),
    };
    let rows: Vec<(&str, String)> = vec![
        ("kernel", h.kernel_release.to_string()),
        ("cpus", h.cpus.to_string()),
        ("memory", mem),
        ("numa nodes", h.numa_nodes.to_string()),
        ("vm.swappiness", h.vm_swappiness.to_string()),
        ("vm.dirty_ratio", h.vm_dirty_ratio.to_string()),
        (
            "vm.dirty_background_ratio",
            h.vm_dirty_background_ratio.to_string(),
        ),
        ("vm.dirty_bytes", h.vm_dirty_bytes.to_string()),
        (
            "vm.dirty_background_bytes",
            h.vm_dirty_background_bytes.to_string(),
        ),
        ("transparent hugepages", h.thp_enabled.to_string()),
        ("thp defrag", h.thp_defrag.to_string()),
        ("fs.aio-max-nr", h.fs_aio_max_nr.to_string()),
        ("fs.file-max", h.fs_file_max.to_string()),
        ("fs.nr_open", h.fs_nr_open.to_string()),
    ];
    for (a, b) in rows {
        t.add_row(vec![a.to_string(), b]);
    }
    writeln!(out, "{t}")?;
    writeln!(out, "  cmdline {}", h.kernel_cmdline)?;
    writeln!(out)?;

    writeln!(out, "{}", style.bold("MySQL server"))?;
    if r.mysqld.is_empty() {
        writeln!(out, "  none running")?;
    }
    for m in &r.mysqld {
        writeln!(out, "  {} pid {}  {}", m.comm, m.pid, m.binary)?;
        writeln!(out, "    version {}", m.version)?;
        let src = if m.datadir_source == "default" {
            "compiled-in default"
        } else {
            &m.datadir_source
        };
        writeln!(out, "    datadir {} (from {src})", m.datadir)?;
        writeln!(
            out,
            "    open files {}  processes {}",
            m.open_files_limit, m.processes_limit
        )?;
    }
    writeln!(out)?;

    writeln!(out, "{}", style.bold("Scheduler persistence"))?;
    if r.persistence.is_empty() {
        writeln!(
            out,
            "  no udev rule, systemd unit or tmpfiles entry sets a scheduler for these devices"
        )?;
    }
    for p in &r.persistence {
        writeln!(
            out,
            "  {} {}:{} sets {} on {}",
            p.mechanism,
            p.file,
            p.line,
            p.scheduler.as_deref().unwrap_or("?"),
            p.devices.join(", ")
        )?;
        if !p.unevaluated.is_empty() {
            writeln!(out, "    (not evaluated: {})", p.unevaluated.join(", "))?;
        }
    }

    if !r.notes.is_empty() {
        writeln!(out)?;
        writeln!(out, "{}", style.bold("Notes"))?;
        for n in &r.notes {
            writeln!(out, "  - {n}")?;
        }
    }
    writeln!(out)?;
    writeln!(
        out,
        "{}",
        style.dim("? = unknown; --format json gives the reason for each")
    )?;
    Ok(())
}
