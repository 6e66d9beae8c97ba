//! A [`ProbeReport`] as a document: key–values for the path, mount and
//! host, a table of the device stack (as a tree) and one of the queues with
//! units in the headers, the server, scheduler persistence, and findings.
//!
//! Every string that comes from the host (paths, mount points, device
//! models, backing files, command lines) goes through [`escape`]: a
//! directory named with an ESC or a newline must not drive the terminal or
//! forge lines of the report. JSON needs no such care (serde escapes).

use super::ProbeReport;
use crate::export::doc::{Cell, Column, Document, KeyValues, Table, Tone};
use crate::host::Known;
use crate::model::mount::Mount;
use crate::model::stack::StackDevice;
use crate::units::fmt_size;

pub use crate::output::escape;

/// A known value for a table cell: the value (escaped), or a dim `?` (the
/// reason is in JSON and in the key–value sections).
fn k<T: std::fmt::Display>(v: &Known<T>) -> Cell {
    match v {
        Known::Value(v) => Cell::text(escape(&v.to_string())),
        Known::Unknown { .. } => Cell::text("?").tone(Tone::Dim),
    }
}

/// A known value in full: the value, or `unknown (reason)`, escaped.
fn full<T: std::fmt::Display>(v: &Known<T>) -> Cell {
    match v {
        Known::Value(v) => Cell::text(escape(&v.to_string())),
        Known::Unknown { unknown } => {
            Cell::text(format!("unknown ({})", escape(unknown))).tone(Tone::Dim)
        }
    }
}

/// A number in `unit`s of `div` (KiB = 1024, µs = 1000), right-aligned.
fn scaled(v: &Known<u64>, div: u64) -> Cell {
    match v {
        Known::Value(x) => Cell::num((*x / div) as f64, (x / div).to_string()),
        Known::Unknown { .. } => Cell::text("?").tone(Tone::Dim),
    }
}

/// `unknown (reason)` for a value that has no text form of its own.
fn unknown_cell<T>(v: &Known<T>) -> Cell {
    match v {
        Known::Unknown { unknown } => {
            Cell::text(format!("unknown ({})", escape(unknown))).tone(Tone::Dim)
        }
        Known::Value(_) => Cell::empty(),
    }
}

fn size(v: &Known<u64>) -> Cell {
    match v {
        Known::Value(b) => Cell::num(*b as f64, fmt_size(*b)),
        _ => Cell::text("?").tone(Tone::Dim),
    }
}

fn path_line(r: &ProbeReport) -> String {
    let src = match r.path_source.as_str() {
        "mysqld_datadir" => " (datadir of the running server)",
        "current_directory" => " (current directory)",
        _ => "",
    };
    format!("{}{src}", escape(&r.path))
}

fn mount_kv(m: &Mount) -> KeyValues {
    let mut kv = KeyValues::new();
    kv.add("mount point", escape(&m.mount_point))
        .add("filesystem", escape(&m.fs_type))
        .add(
            "source",
            format!("{} ({})", escape(&m.source), escape(&m.maj_min)),
        );
    if m.fs_root != "/" {
        kv.add("subtree", escape(&m.fs_root));
    }
    kv.add("options", escape(&m.mount_options.join(",")))
        .add("super options", escape(&m.super_options.join(",")))
        .add("atime", m.decoded.atime.as_str());
    let barrier = Cell::text(m.decoded.barrier.clone());
    kv.add(
        "barrier",
        if m.decoded.barrier == "off" {
            barrier.tone(Tone::Warn)
        } else {
            barrier
        },
    )
    .add("discard", m.decoded.discard.as_str())
    .add("read-only", if m.decoded.read_only { "yes" } else { "no" });
    if let Some(u) = &m.upperdir {
        kv.add("upperdir", escape(u));
    }
    kv
}

/// `└─ name`, indented by depth, so the table reads as a tree.
fn tree_name(d: &StackDevice) -> String {
    match d.depth {
        0 => escape(&d.name),
        n => format!("{}└─ {}", "   ".repeat(n - 1), escape(&d.name)),
    }
}

fn detail(d: &StackDevice) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(p) = &d.partition {
        let n = p.number.value().map(u64::to_string).unwrap_or("?".into());
        parts.push(format!("partition {n} of {}", escape(&p.disk)));
    }
    if let Known::Value(m) = &d.model {
        parts.push(escape(m));
    }
    if let Some(md) = &d.md {
        let chunk = md
            .chunk_bytes
            .value()
            .map(|c| fmt_size(*c))
            .unwrap_or("?".into());
        let level = md.level.value().map(|l| escape(l)).unwrap_or("?".into());
        let disks = md
            .raid_disks
            .value()
            .map(u64::to_string)
            .unwrap_or("?".into());
        parts.push(format!("{level} chunk {chunk} over {disks} disks"));
    }
    if let Some(dm) = &d.dm {
        let name = dm.name.value().map(|n| escape(n)).unwrap_or("?".into());
        parts.push(format!("{} {name}", dm.target));
    }
    if let Some(l) = &d.loop_dev {
        let f = l
            .backing_file
            .value()
            .map(|f| escape(f))
            .unwrap_or("?".into());
        let mut s = format!("backing file {f}");
        if l.backing_deleted {
            s.push_str(" (deleted)");
        }
        if let Known::Value(true) = l.direct_io {
            s.push_str(" (direct I/O)");
        }
        parts.push(s);
    }
    parts.join(", ")
}

fn stack_table(r: &ProbeReport) -> Table {
    let mut t = Table::new(vec![
        Column::text("device"),
        Column::text("kind"),
        Column::num("size", None),
        Column::text("what"),
        Column::text("reached as"),
    ]);
    for d in &r.stack {
        let rel = if d.depth == 0 {
            Cell::text(d.relation.as_str())
        } else {
            Cell::text(d.relation.as_str()).tone(Tone::Dim)
        };
        t.row(vec![
            Cell::text(tree_name(d)).tone(Tone::Strong),
            Cell::text(d.kind.as_str()),
            size(&d.size_bytes),
            Cell::text(detail(d)),
            rel,
        ]);
    }
    t
}

/// `none [mq-deadline] kyber bfq`: every scheduler offered, the active one bracketed.
fn schedulers(d: &StackDevice) -> Cell {
    let Some(q) = &d.queue else {
        return Cell::empty();
    };
    match (&q.scheduler, &q.schedulers_available) {
        (Known::Value(a), Known::Value(all)) => Cell::text(
            all.iter()
                .map(|s| {
                    if s == a {
                        format!("[{}]", escape(s))
                    } else {
                        escape(s)
                    }
                })
                .collect::<Vec<_>>()
                .join(" "),
        ),
        _ => Cell::text("?").tone(Tone::Dim),
    }
}

fn queue_table(queued: &[&StackDevice]) -> Table {
    let mut t = Table::new(vec![
        Column::text("device"),
        Column::text("scheduler"),
        Column::text("rotational"),
        Column::num("nr_requests", None),
        Column::num("read-ahead", Some("KiB")),
        Column::num("max request", Some("KiB")),
        Column::num("logical block", Some("B")),
        Column::num("physical block", Some("B")),
        Column::text("write cache"),
        Column::num("nomerges", None),
        Column::num("rq_affinity", None),
        Column::num("wbt target", Some("µs")),
        Column::num("hw queues", None),
    ]);
    for d in queued {
        let Some(q) = &d.queue else { continue };
        let rot = match q.rotational {
            Known::Value(true) => Cell::text("yes"),
            Known::Value(false) => Cell::text("no"),
            _ => Cell::text("?").tone(Tone::Dim),
        };
        t.row(vec![
            Cell::text(escape(&d.name)),
            schedulers(d),
            rot,
            k(&q.nr_requests),
            scaled(&q.read_ahead_bytes, 1024),
            scaled(&q.max_sectors_bytes, 1024),
            k(&q.logical_block_size_bytes),
            k(&q.physical_block_size_bytes),
            k(&q.write_cache),
            k(&q.nomerges),
            k(&q.rq_affinity),
            scaled(&q.wbt_lat_ns, 1000),
            k(&q.hw_queues),
        ]);
    }
    t
}

fn host_kv(r: &ProbeReport) -> KeyValues {
    let h = &r.host;
    let mut kv = KeyValues::new();
    let mem = match &h.memory_bytes {
        Known::Value(b) => Cell::text(fmt_size(*b)),
        u => full(u),
    };
    let pct = |v: &Known<u64>| match v {
        Known::Value(x) => Cell::text(format!("{x}%")),
        u => full(u),
    };
    kv.add("kernel", full(&h.kernel_release))
        .add("cpus", full(&h.cpus))
        .add("memory", mem)
        .add("numa nodes", full(&h.numa_nodes))
        .add("vm.swappiness", full(&h.vm_swappiness))
        .add("vm.dirty_ratio", pct(&h.vm_dirty_ratio_pct))
        .add(
            "vm.dirty_background_ratio",
            pct(&h.vm_dirty_background_ratio_pct),
        )
        .add("vm.dirty_bytes", full(&h.vm_dirty_bytes))
        .add(
            "vm.dirty_background_bytes",
            full(&h.vm_dirty_background_bytes),
        )
        .add("transparent hugepages", full(&h.thp_enabled))
        .add("thp defrag", full(&h.thp_defrag))
        .add("fs.aio-max-nr", full(&h.fs_aio_max_nr))
        .add("fs.file-max", full(&h.fs_file_max))
        .add("fs.nr_open", full(&h.fs_nr_open))
        .add("cmdline", full(&h.kernel_cmdline));
    kv
}

pub fn document(r: &ProbeReport) -> Document {
    let mut doc = Document::new("");
    let mut top = KeyValues::new();
    top.add("Path", Cell::text(path_line(r)).tone(Tone::Strong));
    if r.root != "/" {
        top.add(
            "Host replayed from",
            Cell::text(escape(&r.root)).tone(Tone::Dim),
        );
    }
    doc.key_values(top);

    doc.heading("Mount");
    match &r.mount {
        Known::Value(m) => {
            doc.key_values(mount_kv(m));
        }
        u => {
            let mut kv = KeyValues::new();
            kv.add("mount", unknown_cell(u));
            doc.key_values(kv);
        }
    }
    for o in &r.overlays {
        let mut kv = KeyValues::new();
        kv.add("overlay", escape(&o.mount_point))
            .add("writes go to", escape(&o.upperdir));
        match &o.upper_mount {
            Known::Value(m) => kv.add(
                "on",
                format!(
                    "{} ({} from {})",
                    escape(&m.mount_point),
                    escape(&m.fs_type),
                    escape(&m.source)
                ),
            ),
            u => kv.add("on", unknown_cell(u)),
        };
        doc.key_values(kv);
    }

    doc.heading("Device stack");
    if r.stack.is_empty() {
        doc.paragraph("(no block device)");
    } else {
        doc.table(stack_table(r));
    }

    let queued: Vec<&StackDevice> = r.stack.iter().filter(|d| d.queue.is_some()).collect();
    if !queued.is_empty() {
        doc.heading("Queues");
        doc.table(queue_table(&queued));
        let mut tun = KeyValues::new();
        for d in &queued {
            let Some(q) = &d.queue else { continue };
            if let (Known::Value(s), Known::Value(t)) = (&q.scheduler, &q.scheduler_tunables) {
                if !t.is_empty() {
                    let kv: Vec<String> = t
                        .iter()
                        .map(|(a, b)| format!("{}={}", escape(a), escape(b)))
                        .collect();
                    tun.add(format!("{} {}", escape(&d.name), escape(s)), kv.join(" "));
                }
            }
        }
        doc.key_values(tun);
    }

    doc.heading("Host");
    doc.key_values(host_kv(r));

    doc.heading("MySQL server");
    if r.mysqld.is_empty() {
        doc.paragraph("none running");
    }
    for m in &r.mysqld {
        let mut kv = KeyValues::new();
        let src = if m.datadir_source == "default" {
            "compiled-in default".to_string()
        } else {
            escape(&m.datadir_source)
        };
        kv.add("server", format!("{} pid {}", escape(&m.comm), m.pid))
            .add("binary", full(&m.binary))
            .add("version", full(&m.version))
            .add("datadir", format!("{} (from {src})", escape(&m.datadir)))
            .add("open files", full(&m.open_files_limit))
            .add("processes", full(&m.processes_limit));
        doc.key_values(kv);
    }

    doc.heading("Scheduler persistence");
    if r.persistence.is_empty() {
        doc.paragraph(
            "no udev rule, systemd unit or tmpfiles entry sets a scheduler for these devices",
        );
    } else {
        let mut t = Table::new(vec![
            Column::text("mechanism"),
            Column::text("file:line"),
            Column::text("sets"),
            Column::text("on"),
            Column::text("not evaluated"),
        ]);
        for p in &r.persistence {
            t.row(vec![
                Cell::text(p.mechanism.clone()),
                Cell::text(format!("{}:{}", escape(&p.file), p.line)),
                Cell::text(escape(p.scheduler.as_deref().unwrap_or("?"))),
                Cell::text(escape(&p.devices.join(", "))),
                Cell::text(escape(&p.unevaluated.join(", "))),
            ]);
        }
        doc.table(t);
    }

    doc.heading("Findings");
    let shown: Vec<crate::finding::Finding> = r
        .findings
        .iter()
        .cloned()
        .map(|mut f| {
            f.subject.name = escape(&f.subject.name);
            f.observed = escape(&f.observed);
            f.evidence.detail = escape(&f.evidence.detail);
            f.reason = escape(&f.reason);
            f
        })
        .collect();
    doc.findings(&shown);
    if shows_unknown(&doc) {
        doc.note(
            Tone::Dim,
            "? = unknown; --format json gives the reason for each",
        );
    }
    doc
}

/// Does the page show a `?` (a value probe could not read) anywhere? The
/// legend is for such a page only.
fn shows_unknown(doc: &Document) -> bool {
    use crate::export::Exporter;
    let mut out = Vec::new();
    let _ = crate::export::text::Text::new(crate::output::Style::plain()).export(doc, &mut out);
    String::from_utf8_lossy(&out)
        .split(|c: char| c.is_whitespace() || ",;()[]/:".contains(c))
        .any(|t| t == "?")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 46: the legend "? = unknown" was printed when nothing was.
    #[test]
    fn unknown_legend_only_when_something_is_unknown() {
        let mut d = Document::new("t");
        let mut kv = KeyValues::new();
        kv.add("scheduler", Cell::text("mq-deadline"))
            .add("path", "/data/what?");
        d.key_values(kv);
        assert!(!shows_unknown(&d));
        let mut kv = KeyValues::new();
        kv.add("rotational", Cell::text("?").tone(Tone::Dim));
        d.key_values(kv);
        assert!(shows_unknown(&d));
    }

    #[test]
    fn control_characters_are_escaped_visibly() {
        assert_eq!(escape("/data/my\x1b[31mdb\nx"), "/data/my\\e[31mdb\\nx");
        assert_eq!(
            escape("a\\n"),
            "a\\\\n",
            "a literal backslash is not a newline"
        );
        assert_eq!(escape("tab\there\x07\x7f"), "tab\\there\\x07\\x7f");
        assert_eq!(escape("é/数据\u{202e}gpj"), "é/数据\\u{202e}gpj");
        assert_eq!(escape("\u{9b}"), "\\u{9b}", "C1 CSI");
    }
}
