//! `innotune report`: results innotune itself produced (probe and check on
//! fixture host trees; live, a short sweep on a loop device) rendered to
//! HTML and markdown; markdown tables well-formed; two runs side by side;
//! bad input refused with one line.

mod support;

use serde_json::Value;
use std::path::Path;
use support::innotune_in;
use support::report::{check_json, probe_json, LoopLab};

/// Split a markdown table row on its unescaped pipes.
fn cells(row: &str) -> Vec<String> {
    let row = row.trim();
    let inner = row
        .strip_prefix('|')
        .and_then(|r| r.strip_suffix('|'))
        .unwrap_or_else(|| panic!("row not enclosed in pipes: {row:?}"));
    let mut out = vec![String::new()];
    let mut esc = false;
    for c in inner.chars() {
        match c {
            '\\' if !esc => {
                esc = true;
                out.last_mut().unwrap().push(c);
                continue;
            }
            '|' if !esc => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
        esc = false;
    }
    out.into_iter().map(|c| c.trim().to_string()).collect()
}

/// Every pipe table of a markdown document (outside fences), checked:
/// a header, a separator of `---`/`---:` cells, and rows, all with the
/// same number of columns. Returns the tables as rows of cells.
fn tables(md: &str) -> Vec<Vec<Vec<String>>> {
    let mut out = Vec::new();
    let mut fenced = false;
    let mut cur: Vec<&str> = Vec::new();
    let mut flush = |cur: &mut Vec<&str>| {
        if cur.is_empty() {
            return;
        }
        assert!(cur.len() >= 2, "table without separator: {cur:?}");
        let head = cells(cur[0]);
        let sep = cells(cur[1]);
        assert_eq!(head.len(), sep.len(), "header/separator: {cur:?}");
        for s in &sep {
            assert!(
                s == "---" || s == "---:" || s == ":---" || s == ":---:",
                "separator cell {s:?} in {cur:?}"
            );
        }
        let mut t = vec![head.clone()];
        for r in &cur[2..] {
            let c = cells(r);
            assert_eq!(c.len(), head.len(), "row {r:?} under {:?}", cur[0]);
            t.push(c);
        }
        out.push(t);
        cur.clear();
    };
    for line in md.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
            flush(&mut cur);
            continue;
        }
        if !fenced && line.starts_with('|') {
            cur.push(line);
        } else {
            flush(&mut cur);
        }
    }
    flush(&mut cur);
    out
}

fn report(state: &Path, args: &[&std::ffi::OsStr]) -> std::process::Output {
    innotune_in(state)
        .arg("report")
        .args(args)
        .output()
        .unwrap()
}

fn ok(o: &std::process::Output) {
    assert_eq!(
        o.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn read_json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// What every page must be: one file, nothing fetched.
fn assert_self_contained(html: &str) {
    for bad in ["<script", "<link", "@import", "src=\"http", "url(", "<img"] {
        assert!(!html.contains(bad), "page has {bad}");
    }
    assert!(html.contains("<style>") && html.contains("@media print"));
}

#[test]
fn probe_and_check_render_to_one_page_and_to_markdown() {
    let state = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let probe = probe_json(state.path(), dir.path());
    let check = check_json(state.path(), dir.path(), "check-planted", "check.json");
    let html_path = dir.path().join("report.html");
    let o = report(
        state.path(),
        &[
            probe.as_os_str(),
            check.as_os_str(),
            "-o".as_ref(),
            html_path.as_os_str(),
        ],
    );
    ok(&o);
    assert!(o.stdout.is_empty(), "-o writes the file only");
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_self_contained(&html);

    // probe's own sections, under the input's heading; the device stack
    // is probe's own table: every device, the members under md0.
    let p = read_json(&probe);
    for h in [
        "Mount",
        "Device stack",
        "Queues",
        "Host",
        "MySQL server",
        "Scheduler persistence",
    ] {
        assert!(html.contains(&format!("<h3>{h}</h3>")), "no {h}");
    }
    let stack = p["result"]["stack"].as_array().unwrap();
    assert!(stack.len() >= 3, "md-raid0 has md0 and its members");
    for d in stack {
        let name = d["name"].as_str().unwrap();
        let cell = if d["depth"] == 0 {
            format!("<td class=\"strong\">{name}</td>")
        } else {
            format!("<td class=\"strong\">└─ {name}</td>")
        };
        assert!(html.contains(&cell), "{name} not in the device stack");
    }

    // Findings as check shows them: by layer, worst first within each, each
    // with its evidence; the planted host has some.
    let c = read_json(&check);
    let findings = c["result"]["findings"].as_array().unwrap();
    assert!(!findings.is_empty());
    assert_eq!(
        html.matches("<article class=\"finding").count(),
        findings.len() + p["result"]["findings"].as_array().unwrap().len()
    );
    let rank = |s: &str| {
        ["critical", "warning", "notice", "info"]
            .iter()
            .position(|x| *x == s)
    };
    let check_section = &html[html.find("<h2>check.json: check on").unwrap()..];
    let open = "<article class=\"finding ";
    for layer in check_section.split("<h3>").skip(1) {
        let sevs: Vec<&str> = layer
            .match_indices(open)
            .map(|(i, _)| layer[i + open.len()..].split('"').next().unwrap())
            .collect();
        assert!(
            sevs.windows(2).all(|w| rank(w[0]) <= rank(w[1])),
            "{sevs:?}"
        );
    }
    for f in findings {
        assert!(html.contains(f["id"].as_str().unwrap()));
    }
    assert!(html.contains("<dt>evidence</dt>"));

    // Markdown: the same tables, well-formed.
    let md_path = dir.path().join("summary.md");
    let o = report(
        state.path(),
        &[
            probe.as_os_str(),
            check.as_os_str(),
            "-o".as_ref(),
            md_path.as_os_str(),
        ],
    );
    ok(&o);
    let md = std::fs::read_to_string(&md_path).unwrap();
    let ts = tables(&md);
    assert!(ts.len() >= 3, "{md}");
    // check's findings tables (one per layer): a row for every finding.
    let check_md = &md[md.find("## check.json: check on").unwrap()..];
    let rows: usize = tables(check_md)
        .iter()
        .filter(|t| t[0].first().map(String::as_str) == Some("severity"))
        .map(|t| t.len() - 1)
        .sum();
    assert_eq!(rows, findings.len(), "every check finding has a row");
}

#[test]
fn before_and_after_are_shown_side_by_side() {
    let state = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let before = check_json(state.path(), dir.path(), "check-planted", "before.json");
    let after = check_json(state.path(), dir.path(), "check-clean", "after.json");
    let count = |p: &Path, sev: &str| {
        read_json(p)["result"]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["severity"] == sev)
            .count()
    };
    let md_path = dir.path().join("compare.md");
    let o = report(
        state.path(),
        &[
            before.as_os_str(),
            after.as_os_str(),
            "-o".as_ref(),
            md_path.as_os_str(),
        ],
    );
    ok(&o);
    let md = std::fs::read_to_string(&md_path).unwrap();
    let ts = tables(&md);
    let side = ts
        .iter()
        .find(|t| t[0].iter().any(|h| h == "before.json") && t[0].iter().any(|h| h == "after.json"))
        .unwrap_or_else(|| panic!("no side-by-side table:\n{md}"));
    let col = |name: &str| side[0].iter().position(|h| h == name).unwrap();
    let (b, a) = (col("before.json"), col("after.json"));
    let row = side
        .iter()
        .find(|r| r[0] == "check findings @ severity warning")
        .expect("warning count row");
    assert_eq!(row[b], count(&before, "warning").to_string());
    assert_eq!(row[a], count(&after, "warning").to_string());
    // One figure per result has no interval: the change is not called a
    // difference (nor coloured good/bad), and says why.
    assert_eq!(
        row[col("verdict")].trim_matches('*'),
        "single run: no interval, not a measured difference"
    );
    let host_row = side.iter().find(|r| r[0] == "host").unwrap();
    assert!(!host_row[b].is_empty() && !host_row[a].is_empty());
    // Each run's own section follows.
    assert!(md.contains("## before.json: check on"));
    assert!(md.contains("## after.json: check on"));

    // The same as HTML, format from the extension.
    let html_path = dir.path().join("compare.html");
    ok(&report(
        state.path(),
        &[
            before.as_os_str(),
            after.as_os_str(),
            "-o".as_ref(),
            html_path.as_os_str(),
        ],
    ));
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(html.contains("<th class=\"num\">before.json</th><th class=\"num\">after.json</th>"));
}

#[test]
fn every_command_can_render_html() {
    let state = tempfile::tempdir().unwrap();
    let root = support::fixture_host("md-raid0");
    let o = innotune_in(state.path())
        .args([
            "--root",
            root.to_str().unwrap(),
            "probe",
            "--format",
            "html",
        ])
        .output()
        .unwrap();
    ok(&o);
    let html = String::from_utf8(o.stdout).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_self_contained(&html);
    assert!(html.contains("md0"));
}

#[test]
fn bad_input_is_one_line_naming_the_fix() {
    let state = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &str, &str); 5] = [
        ("missing.json", "", "cannot read"),
        ("notjson.json", "hello", "is not JSON"),
        ("foreign.json", "{\"a\": 1}", "is not an innotune result"),
        (
            "v1.json",
            "{\"schema_version\": 1, \"command\": \"probe\", \"result\": {}}",
            "envelope v1",
        ),
        (
            "v3.json",
            "{\"schema\": \"probe/3\", \"tool\": \"innotune\", \"version\": \"9.0.0\", \"result\": {}}",
            "version 3",
        ),
    ];
    for (name, content, what) in cases {
        let p = dir.path().join(name);
        if !content.is_empty() {
            std::fs::write(&p, content).unwrap();
        }
        let o = report(state.path(), &[p.as_os_str()]);
        assert_eq!(o.status.code(), Some(2), "{name}");
        assert!(o.stdout.is_empty(), "{name}");
        let err = String::from_utf8(o.stderr).unwrap();
        assert_eq!(err.trim_end().lines().count(), 1, "{name}: {err}");
        assert!(err.contains(what) && err.contains("fix:"), "{name}: {err}");
    }
}

/// Live: a real sweep's result drawn as bar charts with 95% CI whiskers and
/// latency percentiles per scheduler.
#[test]
fn sweep_result_draws_ci_bars_and_percentiles() {
    if !support::live() {
        return;
    }
    let state = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let lab = LoopLab::new("cli");
    let sweep = lab.sweep_json(state.path(), &dir.path().join("sweep.json"));
    drop(lab);
    let s = read_json(&sweep);
    let cands: Vec<String> = s["result"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["candidate"].as_str().unwrap().to_string())
        .collect();
    let html_path = dir.path().join("sweep.html");
    ok(&report(
        state.path(),
        &[sweep.as_os_str(), "-o".as_ref(), html_path.as_os_str()],
    ));
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert_self_contained(&html);
    // Throughput, p99 and percentile charts for the one workload.
    assert!(html.matches("<svg xmlns").count() >= 3, "charts");
    // One whisker per candidate on the throughput and p99 charts.
    assert!(html.matches("class=\"ci\"").count() >= 2 * cands.len());
    assert!(html.contains("throughput by candidate (median, 95% CI)"));
    assert!(html.contains("latency percentiles per candidate"));
    for c in &cands {
        assert!(
            html.contains(&format!("\">{c}</tspan>")),
            "{c} under its bar"
        );
    }
    // The verdicts in sweep's own table.
    assert!(html.contains("<td class=\"dim\">baseline</td>"));

    let md_path = dir.path().join("sweep.md");
    ok(&report(
        state.path(),
        &[sweep.as_os_str(), "-o".as_ref(), md_path.as_os_str()],
    ));
    let ts = tables(&std::fs::read_to_string(&md_path).unwrap());
    let results = ts
        .iter()
        .find(|t| t[0][0] == "candidate")
        .expect("results table");
    assert_eq!(results.len() - 1, cands.len());
}

/// Issue 39: a result whose hostname holds a newline ("db1\n# x") added a
/// heading of its own to the markdown page (the input's heading ended at
/// the newline). Now the headings are the report's own, the hostname is
/// shown escaped, and every table stays well-formed.
#[test]
fn a_hostname_with_a_newline_adds_no_markdown_heading() {
    let state = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results/probe.json");
    let mut v = read_json(&fx);
    v["host"]["hostname"] = Value::from("db1\n# x\n- y");
    let f = dir.path().join("evil.json");
    std::fs::write(&f, serde_json::to_vec(&v).unwrap()).unwrap();
    let o = innotune_in(state.path())
        .args(["--format", "markdown", "report"])
        .arg(&f)
        .output()
        .unwrap();
    ok(&o);
    let md = String::from_utf8(o.stdout).unwrap();
    assert!(
        md.lines()
            .all(|l| !l.trim_start_matches("> ").starts_with("# x") && !l.starts_with("- y")),
        "{md}"
    );
    assert!(md.contains(r"on db1\\n\# x\\n- y"), "{md}");
    tables(&md);
}

/// Issue 46: `--format html --output y.md` silently wrote markdown, and
/// report had both `-o/--out` and `--output`. A --format that disagrees
/// with the file's extension is refused in one line (nothing written);
/// `-o` is `--output`'s short form; `--out` is a hidden alias.
#[test]
fn format_and_extension_must_agree_and_output_is_one_flag() {
    let state = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results/probe.json");
    let md = dir.path().join("y.md");
    let run = |args: &[&std::ffi::OsStr]| {
        let mut all: Vec<&std::ffi::OsStr> = vec![fixture.as_os_str()];
        all.extend_from_slice(args);
        report(state.path(), &all)
    };
    let o = run(&[
        "--format".as_ref(),
        "html".as_ref(),
        "--output".as_ref(),
        md.as_os_str(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("--format html") && err.contains("disagree"),
        "{err}"
    );
    assert!(!md.exists(), "a refused run wrote {}", md.display());
    // Agreeing, or no --format: the file, in the extension's format.
    ok(&run(&[
        "--format".as_ref(),
        "markdown".as_ref(),
        "-o".as_ref(),
        md.as_os_str(),
    ]));
    assert!(std::fs::read_to_string(&md).unwrap().starts_with('#'));
    let html = dir.path().join("y.html");
    ok(&run(&["--out".as_ref(), html.as_os_str()]));
    assert!(std::fs::read_to_string(&html)
        .unwrap()
        .starts_with("<!DOCTYPE html>"));
    // An extension that names no format takes --format.
    let other = dir.path().join("y.page");
    ok(&run(&[
        "--format".as_ref(),
        "html".as_ref(),
        "-o".as_ref(),
        other.as_os_str(),
    ]));
    assert!(std::fs::read_to_string(&other)
        .unwrap()
        .starts_with("<!DOCTYPE html>"));
    // One flag in the help: -o, --output; --out hidden.
    let help = support::innotune()
        .args(["report", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("-o, --output <FILE>"), "{help}");
    assert!(!help.contains("--out <"), "{help}");
}
