//! One result file → blocks of a [`Document`], per command.
//!
//! Rendered from the JSON (`serde_json::Value`), not by deserialising each
//! command's typed report: those types are made for writing (borrowed
//! `&'static str` fields, `serialize_with` unit conversions, skipped fields
//! such as tune's full sweep), and giving ~120 of them a faithful
//! `Deserialize` would touch every command for no gain in what a reader
//! sees. The JSON is the documented, versioned contract (docs/json-*.md),
//! so reading it is also what keeps old result files renderable. Typed
//! pieces are reused where they already round-trip: [`Finding`] (so
//! findings render exactly as the commands' own output, with their fix)
//! and tune's before/after pairs (so the charts are tune's own).

use super::load::Input;
use crate::export::doc::{
    Cell, ChartKind, Column, Document, KeyValues, Line, Point, Series, Table, Tone, TreeNode,
};
use crate::export::text::fmt_num;
use crate::finding::Finding;
use crate::units::fmt_size;
use serde_json::Value;

/// A number, or None for absent and `{"unknown": …}`.
pub fn num(v: &Value) -> Option<f64> {
    v.as_f64()
}

/// A string value as text; numbers and booleans too; `{"unknown": r}` as
/// `unknown (r)`.
pub fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => if *b { "yes" } else { "no" }.into(),
        Value::Null => "—".into(),
        Value::Object(o) if o.contains_key("unknown") => {
            format!("unknown ({})", text(&o["unknown"]))
        }
        other => other.to_string(),
    }
}

fn arr(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or(&[])
}

fn bytes(v: &Value) -> String {
    match v.as_u64() {
        Some(b) => fmt_size(b),
        None => text(v),
    }
}

/// Latency in ns shown in the unit that suits the largest of them.
#[derive(Clone, Copy)]
pub struct LatUnit {
    pub name: &'static str,
    pub ns: f64,
}

pub fn lat_unit(max_ns: f64) -> LatUnit {
    if max_ns >= 10e6 {
        LatUnit {
            name: "ms",
            ns: 1e6,
        }
    } else {
        LatUnit {
            name: "µs",
            ns: 1e3,
        }
    }
}

fn numcell(v: Option<f64>) -> Cell {
    match v {
        Some(x) => Cell::num(x, fmt_num(x)),
        None => Cell::text("—").tone(Tone::Dim),
    }
}

/// Findings as the commands' own type (typetag brings their fixes back);
/// a finding this innotune cannot read is left out with a note.
fn findings(d: &mut Document, list: &Value) {
    let mut ok: Vec<Finding> = Vec::new();
    let mut bad = 0;
    for f in arr(list) {
        match serde_json::from_value::<Finding>(f.clone()) {
            Ok(f) => ok.push(f),
            Err(_) => bad += 1,
        }
    }
    d.subheading("Findings");
    d.findings(&ok);
    if bad > 0 {
        d.note(
            Tone::Warn,
            format!("{bad} finding(s) in an unknown form were left out (written by another innotune version)."),
        );
    }
}

/// Device-stack tree from probe's `stack[]` (or check's `facts.devices[]`).
fn device_tree(devs: &Value) -> Vec<TreeNode> {
    arr(devs)
        .iter()
        .map(|d| {
            let mut parts: Vec<String> = Vec::new();
            for k in ["kind", "relation"] {
                if let Some(s) = d[k].as_str() {
                    parts.push(s.to_string());
                }
            }
            if let Some(m) = d["model"].as_str() {
                parts.push(m.to_string());
            }
            if d["size_bytes"].is_u64() {
                parts.push(bytes(&d["size_bytes"]));
            }
            let sched = d["queue"]["scheduler"]
                .as_str()
                .or_else(|| d["scheduler"].as_str());
            if let Some(s) = sched {
                parts.push(format!("scheduler {s}"));
            }
            if let Some(l) = d["md"]["level"].as_str().or_else(|| d["md_level"].as_str()) {
                parts.push(l.to_string());
            }
            if let Some(t) = d["dm"]["target"]
                .as_str()
                .or_else(|| d["dm_target"].as_str())
            {
                let name = d["dm"]["name"]
                    .as_str()
                    .or_else(|| d["dm_name"].as_str())
                    .unwrap_or("");
                parts.push(format!("{t} {name}").trim().to_string());
            }
            if let Some(b) = d["loop"]["backing_file"]
                .as_str()
                .or_else(|| d["loop_backing"].as_str())
            {
                parts.push(format!("backing file {b}"));
            }
            TreeNode {
                depth: d["depth"].as_u64().unwrap_or(0) as usize,
                label: text(&d["name"]),
                detail: parts.join(", "),
            }
        })
        .collect()
}

fn mount_line(m: &Value) -> Option<String> {
    let mp = m["mount_point"].as_str()?;
    let atime = m["decoded"]["atime"]
        .as_str()
        .or_else(|| m["atime"].as_str())
        .unwrap_or("?");
    Some(format!(
        "{mp} ({}, {atime}, from {})",
        text(&m["fs_type"]),
        text(&m["source"])
    ))
}

/// The blocks for one input, by its command.
pub fn blocks(i: &Input) -> Document {
    let mut d = Document::new("");
    let r = i.result();
    match i.command.as_str() {
        "probe" => probe(&mut d, r),
        "check" => check(&mut d, r),
        "sweep" => sweep(&mut d, r),
        "bench" => bench(&mut d, r),
        "oltp" => oltp_runs(&mut d, &r["runs"], r["workload"].as_str()),
        "tune-oltp" => tune_oltp(&mut d, r),
        "tune" => tune(&mut d, r),
        "slowlog" => slowlog(&mut d, r),
        _ => generic(&mut d, r),
    }
    d
}

fn probe(d: &mut Document, r: &Value) {
    let mut kv = KeyValues::new();
    kv.add(
        "path",
        format!("{} ({})", text(&r["path"]), text(&r["path_source"])),
    );
    if let Some(m) = mount_line(&r["mount"]) {
        kv.add("mount", m);
    }
    let h = &r["host"];
    kv.add("kernel", text(&h["kernel_release"]))
        .add("CPUs", text(&h["cpus"]))
        .add("memory", bytes(&h["memory_bytes"]))
        .add("transparent huge pages", text(&h["thp_enabled"]))
        .add("vm.swappiness", text(&h["vm_swappiness"]));
    d.key_values(kv);
    d.subheading("Device stack");
    let tree = device_tree(&r["stack"]);
    if tree.is_empty() {
        d.paragraph("No block device under this filesystem.");
    }
    d.tree(tree);
    let servers = arr(&r["mysqld"]);
    if !servers.is_empty() {
        let mut t = Table::new(vec![
            Column::num("pid", None),
            Column::text("server"),
            Column::text("version"),
            Column::text("datadir"),
        ])
        .titled("Running servers");
        for s in servers {
            t.row(vec![
                Cell::text(text(&s["pid"])),
                Cell::text(text(&s["comm"])),
                Cell::text(text(&s["version"])),
                Cell::text(text(&s["datadir"])),
            ]);
        }
        d.table(t);
    }
    findings(d, &r["findings"]);
}

fn settings_table(findings: &Value) -> Option<Table> {
    let mut t = Table::new(vec![
        Column::text("setting"),
        Column::text("observed"),
        Column::text("recommended"),
        Column::text("finding"),
    ])
    .titled("Changed settings (what `innotune apply` would set)");
    for f in arr(findings) {
        for s in arr(&f["settings"]) {
            let name = match s["kind"].as_str().unwrap_or("") {
                "queue" => format!("{} {}", text(&s["device"]), text(&s["attr"])),
                "thp" => "transparent_hugepage/enabled".into(),
                "net_queue" => format!(
                    "{} {} {}",
                    text(&s["nic"]),
                    text(&s["queue"]),
                    text(&s["attr"])
                ),
                "nofile" => format!("{} LimitNOFILE", text(&s["service"])),
                "fstab" => format!("{} (fstab)", text(&s["mount_point"])),
                _ => text(&s["name"]),
            };
            let value = if s["kind"] == "fstab" {
                text(&s["line"])
            } else {
                text(&s["value"])
            };
            t.row(vec![
                Cell::text(name),
                Cell::text(text(&f["observed"])),
                Cell::text(value).tone(Tone::Strong),
                Cell::text(text(&f["id"])),
            ]);
        }
    }
    (!t.rows.is_empty()).then_some(t)
}

fn check(d: &mut Document, r: &Value) {
    let mut kv = KeyValues::new();
    kv.add(
        "path",
        format!("{} ({})", text(&r["path"]), text(&r["path_source"])),
    );
    if let Some(m) = mount_line(&r["facts"]["mount"]) {
        kv.add("mount", m);
    }
    let s = &r["server"];
    let server = if s["reached"].as_bool() == Some(true) {
        text(&s["version"])
    } else {
        format!(
            "not reached{}",
            s["note"]
                .as_str()
                .map(|n| format!(": {n}"))
                .unwrap_or_default()
        )
    };
    kv.add("server", server);
    d.key_values(kv);
    let tree = device_tree(&r["facts"]["devices"]);
    if !tree.is_empty() {
        d.subheading("Device stack");
        d.tree(tree);
    }
    findings(d, &r["findings"]);
    if let Some(t) = settings_table(&r["findings"]) {
        d.table(t);
    }
    for n in arr(&r["notes"]) {
        d.note(Tone::Plain, text(n));
    }
}

/// `{"value": x, "unit": u}` or a summary with `unit`.
fn unit_of(v: &Value) -> String {
    v["unit"].as_str().unwrap_or("").to_string()
}

fn summary_point(x: String, s: &Value, div: f64) -> Option<Point> {
    let m = num(&s["median"])? / div;
    let ci = match (num(&s["ci_low"]), num(&s["ci_high"])) {
        (Some(lo), Some(hi)) => Some((lo / div, hi / div)),
        _ => None,
    };
    Some(Point { x, y: m, ci })
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

fn sweep(d: &mut Document, r: &Value) {
    let rec = &r["recommendation"];
    d.note(
        Tone::Strong,
        format!(
            "Recommendation: {} {} — {}",
            text(&rec["action"]),
            rec["setting"]
                .as_str()
                .or_else(|| rec["scheduler"].as_str())
                .unwrap_or("the current setting"),
            text(&rec["reason"])
        ),
    );
    let mut kv = KeyValues::new();
    kv.add("path", text(&r["path"]));
    let stack: Vec<String> = arr(&r["stack"]).iter().map(text).collect();
    if !stack.is_empty() {
        kv.add("stack", stack.join(" → "));
    }
    kv.add("baseline", text(&r["baseline"]))
        .add("objective", text(&r["objective"]))
        .add(
            "trials",
            format!(
                "{} of {} ({} rounds), {:.0} s",
                text(&r["trials_run"]),
                text(&r["plan"]["trials"]),
                text(&r["plan"]["rounds"]),
                num(&r["elapsed_s"]).unwrap_or(0.0)
            ),
        );
    d.key_values(kv);
    let results = arr(&r["results"]);
    let verdicts = arr(&r["verdicts"]);
    let trials = arr(&r["trials"]);
    for w in arr(&r["workloads"]).iter().filter_map(Value::as_str) {
        let cells: Vec<&Value> = results.iter().filter(|c| c["workload"] == w).collect();
        if cells.is_empty() {
            continue;
        }
        d.subheading(format!("Workload {w}"));
        let unit = unit_of(&cells[0]["throughput"]);
        let max_p99 = cells
            .iter()
            .filter_map(|c| num(&c["p99_ns"]["ci_high"]))
            .fold(0.0, f64::max);
        let lat = lat_unit(max_p99);
        let verdict = |cand: &str| -> String {
            if cand == r["baseline"] {
                return "baseline".into();
            }
            verdicts
                .iter()
                .find(|v| v["workload"] == w && v["candidate"] == cand)
                .map(|v| text(&v["verdict"]))
                .unwrap_or_else(|| "—".into())
        };
        let mut t = Table::new(vec![
            Column::text("candidate"),
            Column::num("throughput", Some(unit.as_str())),
            Column::text("95% CI"),
            Column::num("p99", Some(lat.name)),
            Column::text("p99 95% CI"),
            Column::num("trials", None),
            Column::text("verdict"),
        ]);
        let mut thr = Vec::new();
        let mut p99 = Vec::new();
        for c in &cells {
            let cand = text(&c["candidate"]);
            let v = verdict(&cand);
            let tone = match v.as_str() {
                "better" => Tone::Good,
                "worse" => Tone::Bad,
                "baseline" => Tone::Dim,
                _ => Tone::Plain,
            };
            let tp = &c["throughput"];
            let p = &c["p99_ns"];
            let ci = |s: &Value, div: f64| match (num(&s["ci_low"]), num(&s["ci_high"])) {
                (Some(lo), Some(hi)) => format!("{}–{}", fmt_num(lo / div), fmt_num(hi / div)),
                _ => "—".into(),
            };
            t.row(vec![
                Cell::text(cand.clone()),
                numcell(num(&tp["median"])),
                Cell::text(ci(tp, 1.0)),
                numcell(num(&p["median"]).map(|x| x / lat.ns)),
                Cell::text(ci(p, lat.ns)),
                Cell::text(text(&tp["n"])),
                Cell::text(v.clone()).tone(tone),
            ]);
            // The verdict under the candidate's name: the chart reads alone.
            let x = format!("{cand}\n{v}");
            thr.extend(summary_point(x.clone(), tp, 1.0));
            p99.extend(summary_point(x, p, lat.ns));
        }
        d.table(t);
        let bar = |title: String, y: &str, unit: &str, name: &str, points: Vec<Point>| Series {
            title,
            kind: ChartKind::Bar,
            x_label: "scheduler (verdict against the baseline)".into(),
            y_label: y.into(),
            y_unit: Some(unit.into()),
            lines: vec![Line {
                name: name.into(),
                points,
            }],
            table_fallback: false,
        };
        d.series(bar(
            format!("{w}: throughput by scheduler (median, 95% CI)"),
            "throughput",
            &unit,
            "median",
            thr,
        ));
        if !p99.is_empty() {
            d.series(bar(
                format!("{w}: p99 latency by scheduler (median, 95% CI)"),
                "p99 latency",
                lat.name,
                "median",
                p99,
            ));
        }
        // Latency percentiles per scheduler: medians over the trials.
        let mut lines: Vec<Line> = Vec::new();
        for (key, name) in [
            ("read_p50_ns", "read p50"),
            ("read_p99_ns", "read p99"),
            ("write_p99_ns", "write p99"),
            ("p99_ns", "p99"),
        ] {
            let points: Vec<Point> = cells
                .iter()
                .filter_map(|c| {
                    let cand = &c["candidate"];
                    let v: Vec<f64> = trials
                        .iter()
                        .filter(|t| t["workload"] == w && &t["candidate"] == cand)
                        .filter_map(|t| num(&t[key]))
                        .collect();
                    Some(Point {
                        x: text(cand),
                        y: median(v)? / lat.ns,
                        ci: None,
                    })
                })
                .collect();
            if !points.is_empty() {
                lines.push(Line {
                    name: name.into(),
                    points,
                });
            }
        }
        // `p99` repeats read or write p99 for bench workloads.
        if lines.len() > 1 {
            lines.retain(|l| l.name != "p99");
        }
        if !lines.is_empty() {
            d.series(Series {
                title: format!("{w}: latency percentiles per scheduler (median of trials)"),
                kind: ChartKind::Bar,
                x_label: "scheduler".into(),
                y_label: "latency".into(),
                y_unit: Some(lat.name.into()),
                lines,
                table_fallback: true,
            });
        }
    }
    let restored = arr(&r["restored"]);
    if !restored.is_empty() {
        let mut t = Table::new(vec![
            Column::text("kind"),
            Column::text("path"),
            Column::text("put back"),
        ])
        .titled("Restored at the end");
        for x in restored {
            t.row(vec![
                Cell::text(text(&x["kind"])),
                Cell::text(text(&x["path"])),
                Cell::text(x["original"].as_str().unwrap_or("-")),
            ]);
        }
        d.table(t);
    }
}

fn bench(d: &mut Document, r: &Value) {
    if r["survey"].is_object() {
        return survey(d, &r["survey"]);
    }
    let w = &r["result"];
    let mut kv = KeyValues::new();
    kv.add("directory", text(&r["directory"]))
        .add("workload", text(&w["name"]));
    d.key_values(kv);
    let jobs = arr(&w["jobs"]);
    let max = jobs
        .iter()
        .flat_map(|j| {
            [
                &j["read"]["clat"]["p99_9_ns"],
                &j["write"]["clat"]["p99_9_ns"],
            ]
        })
        .filter_map(num)
        .fold(0.0, f64::max);
    let lat = lat_unit(max);
    let mut t = Table::new(vec![
        Column::text("job"),
        Column::text("direction"),
        Column::num("IOPS", None),
        Column::num("bandwidth", Some("MiB/s")),
        Column::num("p50", Some(lat.name)),
        Column::num("p99", Some(lat.name)),
        Column::num("p99.9", Some(lat.name)),
    ]);
    let mut lines: Vec<Line> = ["p50", "p99", "p99.9"]
        .iter()
        .map(|n| Line {
            name: n.to_string(),
            points: Vec::new(),
        })
        .collect();
    for j in jobs {
        for dir in ["read", "write"] {
            let x = &j[dir];
            if !x.is_object() {
                continue;
            }
            let c = &x["clat"];
            let l = |k: &str| num(&c[k]).map(|v| v / lat.ns);
            t.row(vec![
                Cell::text(text(&j["name"])),
                Cell::text(dir),
                numcell(num(&x["iops_per_s"])),
                numcell(num(&x["bw_bytes_per_s"]).map(|b| b / 1048576.0)),
                numcell(l("p50_ns")),
                numcell(l("p99_ns")),
                numcell(l("p99_9_ns")),
            ]);
            let label = format!("{} {dir}", text(&j["name"]));
            for (line, k) in lines.iter_mut().zip(["p50_ns", "p99_ns", "p99_9_ns"]) {
                if let Some(y) = l(k) {
                    line.points.push(Point {
                        x: label.clone(),
                        y,
                        ci: None,
                    });
                }
            }
        }
    }
    d.table(t);
    lines.retain(|l| !l.points.is_empty());
    if !lines.is_empty() {
        d.series(Series {
            title: "Completion latency percentiles per job".into(),
            kind: ChartKind::Bar,
            x_label: "job".into(),
            y_label: "latency".into(),
            y_unit: Some(lat.name.into()),
            lines,
            table_fallback: false,
        });
    }
}

/// oltp's `runs[]`: a table and TPS/QPS against threads when there are
/// several thread counts.
fn oltp_runs(d: &mut Document, runs: &Value, workload: Option<&str>) {
    if let Some(w) = workload {
        d.key_values({
            let mut kv = KeyValues::new();
            kv.add("workload", w);
            kv
        });
    }
    let runs = arr(runs);
    if runs.is_empty() {
        d.paragraph("No runs (prepare or cleanup only).");
        return;
    }
    let mut t = Table::new(vec![
        Column::text("workload"),
        Column::num("threads", None),
        Column::num("TPS", Some("tps")),
        Column::num("QPS", Some("qps")),
        Column::num("p95", Some("ms")),
        Column::num("p99", Some("ms")),
    ]);
    let mut workloads: Vec<String> = Vec::new();
    for r in runs {
        let w = text(&r["workload"]);
        if !workloads.contains(&w) {
            workloads.push(w.clone());
        }
        t.row(vec![
            Cell::text(w),
            Cell::text(text(&r["threads"])),
            numcell(num(&r["transactions_per_s"])),
            numcell(num(&r["queries_per_s"])),
            numcell(num(&r["latency"]["p95_ns"]).map(|n| n / 1e6)),
            numcell(num(&r["latency"]["p99_ns"]).map(|n| n / 1e6)),
        ]);
    }
    d.table(t);
    for w in workloads {
        let of: Vec<&Value> = runs
            .iter()
            .filter(|r| r["workload"] == w.as_str())
            .collect();
        if of.len() < 2 {
            continue;
        }
        let line = |name: &str, key: &str| Line {
            name: name.into(),
            points: of
                .iter()
                .filter_map(|r| {
                    Some(Point {
                        x: text(&r["threads"]),
                        y: num(&r[key])?,
                        ci: None,
                    })
                })
                .collect(),
        };
        for (metric, unit, key) in [
            ("TPS", "tps", "transactions_per_s"),
            ("QPS", "qps", "queries_per_s"),
        ] {
            d.series(Series {
                title: format!("{w}: {metric} against threads"),
                kind: ChartKind::Line,
                x_label: "threads".into(),
                y_label: metric.into(),
                y_unit: Some(unit.into()),
                lines: vec![line(metric, key)],
                table_fallback: false,
            });
        }
    }
}

fn tune_oltp(d: &mut Document, r: &Value) {
    let mut t = Table::new(vec![Column::text("variable"), Column::text("value")])
        .titled(format!("Sandbox variables ({})", text(&r["side"])));
    for v in arr(&r["variables"]) {
        t.row(vec![Cell::text(text(&v[0])), Cell::text(text(&v[1]))]);
    }
    d.table(t);
    oltp_runs(d, &r["runs"], None);
}

fn tune(d: &mut Document, r: &Value) {
    if let Some(i) = r["interrupted"].as_str() {
        d.note(
            Tone::Warn,
            format!("Interrupted ({i}): this report has what was measured until then."),
        );
    }
    let mut kv = KeyValues::new();
    kv.add(
        "path",
        format!("{} ({})", text(&r["path"]), text(&r["path_source"])),
    );
    if let Some(m) = r["mount"].as_str() {
        kv.add("mount", m);
    }
    kv.add("server", text(&r["server"])).add(
        "time",
        format!(
            "{:.0} s of a {:.0} s budget",
            num(&r["elapsed_s"]).unwrap_or(0.0),
            num(&r["budget_s"]).unwrap_or(0.0)
        ),
    );
    d.key_values(kv);
    let stack: Vec<String> = arr(&r["stack"]).iter().map(text).collect();
    if !stack.is_empty() {
        d.subheading("Device stack");
        d.tree(crate::tune::report::stack_tree(&stack));
    }
    let mut ph = Table::new(vec![
        Column::text("phase"),
        Column::text("status"),
        Column::num("time", Some("s")),
        Column::text("note"),
    ]);
    for p in arr(&r["phases"]) {
        let tone = match p["status"].as_str() {
            Some("done") => Tone::Good,
            Some("skipped") => Tone::Dim,
            _ => Tone::Warn,
        };
        ph.row(vec![
            Cell::text(text(&p["name"])),
            Cell::text(text(&p["status"])).tone(tone),
            numcell(num(&p["elapsed_s"])),
            Cell::text(p["note"].as_str().unwrap_or("")),
        ]);
    }
    d.table(ph);
    findings(d, &r["findings"]);
    if let Some(s) = r.get("sweep").filter(|s| s.is_object()) {
        let rec = &s["recommendation"];
        d.note(
            Tone::Strong,
            format!(
                "Scheduler sweep: {} {} — {} (the full sweep is in sweep.json)",
                text(&rec["action"]),
                rec["setting"].as_str().unwrap_or("the current setting"),
                text(&rec["reason"])
            ),
        );
    }
    d.subheading("OLTP before and after");
    match r.get("oltp").filter(|o| o.is_object()) {
        Some(o) => {
            d.paragraph(text(&o["profiles"]["note"]));
            match serde_json::from_value::<Vec<crate::tune::oltp::Pair>>(o["pairs"].clone()) {
                Ok(pairs) => {
                    d.table(crate::tune::report::before_after_table(&pairs));
                    for s in crate::tune::report::before_after_series(&pairs) {
                        d.series(s);
                    }
                }
                Err(e) => {
                    d.note(Tone::Warn, format!("oltp.pairs could not be read: {e}"));
                }
            }
        }
        None => {
            d.paragraph("No before/after measurement in this run.");
        }
    }
    let changed = arr(&r["changed"]);
    if !changed.is_empty() {
        let mut t = Table::new(vec![
            Column::text("setting"),
            Column::text("before"),
            Column::text("after"),
            Column::text("finding"),
        ])
        .titled("Changed settings");
        for c in changed {
            t.row(vec![
                Cell::text(text(&c["setting"])),
                Cell::text(text(&c["before"])),
                Cell::text(text(&c["after"])).tone(Tone::Strong),
                Cell::text(text(&c["finding"])),
            ]);
        }
        d.table(t);
    }
    if let Some(a) = r["apply_command"].as_str().filter(|a| !a.is_empty()) {
        d.paragraph(
            "Apply (journaled; `innotune restore` undoes it; without --yes it shows the plan):",
        );
        d.preformatted(format!("{a}\n"));
    }
}

/// slowlog: totals, the profile (pt-query-digest's, with p95, rows
/// examined per sent and the plan flags) and each class's share of the
/// query time as bars. Sample statements stay in the JSON: they carry
/// literal values a report passed around should not.
fn slowlog(d: &mut Document, r: &Value) {
    let t = &r["totals"];
    let mut kv = KeyValues::new();
    kv.add("slow log", text(&r["source"]))
        .add("entries", text(&t["entries"]))
        .add(
            "classes",
            format!(
                "{} (the first {} shown, by {})",
                text(&r["classes_total"]),
                arr(&r["classes"]).len(),
                text(&r["order_by"])
            ),
        )
        .add(
            "query time",
            num(&t["query_time_ns"]).map_or("—".into(), |n| format!("{:.3} s", n / 1e9)),
        )
        .add(
            "rows sent / examined",
            format!("{} / {}", text(&t["rows_sent"]), text(&t["rows_examined"])),
        );
    if let (Some(a), Some(b)) = (t["first_seen"].as_str(), t["last_seen"].as_str()) {
        kv.add("time range", format!("{a} to {b}"));
    }
    let plan = num(&t["with_plan_attributes"]).unwrap_or(0.0) > 0.0;
    kv.add(
        "plan attributes",
        if plan {
            "logged (full scans and temporary tables on disk are counted)"
        } else {
            "not logged (log_slow_verbosity=query_plan or log_slow_extra=ON adds them)"
        },
    );
    if num(&t["malformed"]).unwrap_or(0.0) > 0.0 {
        kv.add("malformed entries (skipped)", text(&t["malformed"]));
    }
    d.key_values(kv);
    let classes = arr(&r["classes"]);
    if classes.is_empty() {
        d.note(Tone::Plain, "No statement in this log.");
        return;
    }
    let max_p95 = classes
        .iter()
        .filter_map(|c| num(&c["query_time"]["p95_ns"]))
        .fold(0.0, f64::max);
    let lat = lat_unit(max_p95);
    let mut cols = vec![
        Column::num("rank", None),
        Column::text("query id"),
        Column::num("time", Some("s")),
        Column::num("time", Some("%")),
        Column::num("calls", None),
        Column::num("p95", Some(lat.name)),
        Column::num("rows exam/sent", None),
    ];
    if plan {
        cols.push(Column::num("full scan", None));
        cols.push(Column::num("tmp on disk", None));
    }
    cols.push(Column::text("fingerprint"));
    let mut tbl = Table::new(cols).titled("Profile");
    let mut bars = Line {
        name: "share of query time".into(),
        points: Vec::new(),
    };
    for c in classes {
        let id = c["id"].as_str().unwrap_or("");
        let short = format!("0x{}", &id[id.len().saturating_sub(16)..]);
        let mut row = vec![
            numcell(num(&c["rank"])),
            Cell::text(short.clone()),
            numcell(num(&c["query_time"]["sum_ns"]).map(|n| n / 1e9)),
            numcell(num(&c["time_pct"])),
            numcell(num(&c["count"])),
            numcell(num(&c["query_time"]["p95_ns"]).map(|n| n / lat.ns)),
            numcell(num(&c["rows_examined_per_sent"])),
        ];
        if plan {
            row.push(numcell(num(&c["full_scan"])));
            row.push(numcell(num(&c["tmp_table_on_disk"])));
        }
        let fp = text(&c["fingerprint"]);
        let fp = if fp.chars().count() > 90 {
            format!("{}…", fp.chars().take(89).collect::<String>())
        } else {
            fp
        };
        row.push(Cell::text(fp));
        tbl.row(row);
        if let Some(p) = num(&c["time_pct"]) {
            bars.points.push(Point {
                x: short,
                y: p,
                ci: None,
            });
        }
    }
    d.table(tbl);
    if !bars.points.is_empty() {
        d.series(Series {
            title: "Share of the log's query time per class".into(),
            kind: ChartKind::Bar,
            x_label: "class".into(),
            y_label: "query time".into(),
            y_unit: Some("%".into()),
            lines: vec![bars],
            table_fallback: false,
        });
    }
    d.paragraph("Each class's worst statement is in the JSON (`classes[].sample`); `innotune check --slowlog FILE` names the classes that need an index, scan whole tables or spill temporary tables to disk.");
}

/// The figure of `job` in a list of survey figures.
fn figure<'a>(figs: &'a Value, job: &str) -> Option<&'a Value> {
    arr(figs).iter().find(|f| f["job"] == job)
}

/// `bench --survey`: per class, each disk alone (the four read figures and
/// what the host model knows of the disk), then the class at once (the
/// aggregate and how it scales), the disks left out, and each disk's
/// sequential bandwidth as bars. Without this view a survey rendered as an
/// empty bench table.
fn survey(d: &mut Document, s: &Value) {
    let mut kv = KeyValues::new();
    for j in arr(&s["jobs"]) {
        kv.add(text(&j["job"]), text(&j["options"]));
    }
    kv.add(
        "window per job",
        num(&s["runtime_s"]).map_or("—".into(), |x| format!("{x} s")),
    );
    if s["dry_run"] == true {
        kv.add(
            "planned",
            num(&s["planned_s"]).map_or("—".into(), |x| format!("{x:.0} s")),
        );
    } else {
        kv.add(
            "wall time",
            num(&s["wall_s"]).map_or("—".into(), |x| format!("{x:.1} s")),
        );
    }
    d.key_values(kv);
    if s["dry_run"] == true {
        d.note(Tone::Plain, "Dry run: the plan only, nothing was read.");
    }
    if s["interrupted"] == true {
        d.note(
            Tone::Warn,
            "Interrupted: the figures are what ran before Ctrl-C or SIGTERM.",
        );
    }
    let max_p99 = arr(&s["classes"])
        .iter()
        .flat_map(|c| arr(&c["disks"]))
        .flat_map(|k| arr(&k["alone"]))
        .filter_map(|f| num(&f["clat_p99_ns"]))
        .fold(0.0, f64::max);
    let lat = lat_unit(max_p99);
    let mut bars = Line {
        name: "sequential read".into(),
        points: Vec::new(),
    };
    for c in arr(&s["classes"]) {
        let class = text(&c["class"]);
        let mut t = Table::new(vec![
            Column::text("disk"),
            Column::text("model"),
            Column::text("size"),
            Column::text("rotational"),
            Column::num("seq 1 MiB qd16", Some("MiB/s")),
            Column::num("16 KiB qd32", Some("IOPS")),
            Column::num("16 KiB qd1", Some("IOPS")),
            Column::num("16 KiB qd1 p99", Some(lat.name)),
            Column::num("4 KiB qd32", Some("IOPS")),
        ])
        .titled(format!("{class}: each disk alone"));
        for k in arr(&c["disks"]) {
            let f = |job: &str, key: &str| figure(&k["alone"], job).and_then(|f| num(&f[key]));
            let seq = f("seq-read-1m-qd16", "bw_bytes_per_s").map(|b| b / 1048576.0);
            t.row(vec![
                Cell::text(text(&k["name"])),
                Cell::text(text(&k["model"])),
                Cell::text(bytes(&k["size_bytes"])),
                Cell::text(text(&k["rotational"])),
                numcell(seq),
                numcell(f("rand-read-16k-qd32", "iops_per_s")),
                numcell(f("rand-read-16k-qd1", "iops_per_s")),
                numcell(f("rand-read-16k-qd1", "clat_p99_ns").map(|n| n / lat.ns)),
                numcell(f("rand-read-4k-qd32", "iops_per_s")),
            ]);
            if let Some(y) = seq {
                bars.points.push(Point {
                    x: text(&k["name"]),
                    y,
                    ci: None,
                });
            }
        }
        d.table(t);
        let p = &c["parallel"];
        if p.is_object() {
            let mut t = Table::new(vec![
                Column::text("job"),
                Column::num("IOPS", None),
                Column::num("bandwidth", Some("MiB/s")),
                Column::num("sum alone", Some("IOPS")),
                Column::num("scaling", Some("×")),
                Column::num("worst p99", Some(lat.name)),
            ])
            .titled(format!(
                "{class}: all {} disks at once",
                arr(&c["disks"]).len()
            ));
            for a in arr(&p["aggregate"]) {
                t.row(vec![
                    Cell::text(text(&a["job"])),
                    numcell(num(&a["iops_per_s"])),
                    numcell(num(&a["bw_bytes_per_s"]).map(|b| b / 1048576.0)),
                    numcell(num(&a["sum_alone_iops_per_s"])),
                    numcell(num(&a["scaling"])),
                    numcell(num(&a["worst_clat_p99_ns"]).map(|n| n / lat.ns)),
                ]);
            }
            d.table(t);
            if let (Some(par), Some(alone)) = (num(&p["wall_s"]), num(&c["alone_wall_s"])) {
                d.paragraph(format!(
                    "At once in {par:.1} s; one disk after the other took {alone:.1} s. Scaling 1.0 means the disks share no bottleneck (controller, bus, backing store); 1/N means they share one."
                ));
            }
        }
        for k in arr(&c["disks"]) {
            for n in arr(&k["notes"]) {
                d.note(Tone::Plain, format!("{}: {}", text(&k["name"]), text(n)));
            }
        }
    }
    let skipped = arr(&s["skipped"]);
    if !skipped.is_empty() {
        let mut t =
            Table::new(vec![Column::text("disk"), Column::text("reason")]).titled("Left out");
        for k in skipped {
            t.row(vec![
                Cell::text(text(&k["name"])),
                Cell::text(text(&k["reason"])),
            ]);
        }
        d.table(t);
    }
    if bars.points.len() > 1 {
        d.series(Series {
            title: "Sequential 1 MiB reads at depth 16, each disk alone".into(),
            kind: ChartKind::Bar,
            x_label: "disk".into(),
            y_label: "bandwidth".into(),
            y_unit: Some("MiB/s".into()),
            lines: vec![bars],
            table_fallback: false,
        });
    }
    d.paragraph("Reads only (O_RDONLY, O_DIRECT): safe on mounted disks. Write limits are measured on a scratch file: `innotune bench --preset page-write --directory DIR`.");
}

/// A result this innotune has no view for: its top-level values.
fn generic(d: &mut Document, r: &Value) {
    d.note(
        Tone::Plain,
        "No dedicated view for this command: its top-level values follow (every field is in the JSON).",
    );
    let mut kv = KeyValues::new();
    if let Some(o) = r.as_object() {
        for (k, v) in o {
            let s = match v {
                Value::Array(a) => format!("{} item(s)", a.len()),
                Value::Object(o) if !o.contains_key("unknown") => format!("{} field(s)", o.len()),
                other => text(other),
            };
            kv.add(k.as_str(), s);
        }
    }
    d.key_values(kv);
}
