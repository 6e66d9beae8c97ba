//! `innotune report X.json` shows what the command's own `--format html`
//! shows: the same sections (headings), tables (captions, headers), figures
//! (numbers in tables), charts and findings, because the result is read back
//! into the command's typed report and rendered by its own `document()`.
//!
//! Two ways, by what can run here:
//! - commands that run on fixtures (probe and check on fixture host trees,
//!   apply's plan, slowlog and trace on saved inputs, checksum on real
//!   tablespaces, bench's presets, survey plan and a short run on a
//!   temporary file, restore with nothing pending): each is run twice, with
//!   `--format json` and with `--format html`, and the report of the JSON is
//!   compared with the command's own page;
//! - every result in tests/fixtures/results (written by innotune on live
//!   servers, loop devices and a tune run, see the README there): the report
//!   page is compared with the command's document rendered directly from the
//!   deserialised typed report, block for block.

mod support;

use innotune::export::{html, Document, Report};
use serde_json::Value;
use std::path::{Path, PathBuf};
use support::innotune_in as bin;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `innotune ARGS --format FORMAT --output OUT`; the exit code may be 0 or 1
/// (check and apply exit 1 when they find something), never 2.
fn run(state: &Path, args: &[&str], format: &str, out: &Path) {
    let o = bin(state)
        .args(args)
        .args(["--format", format, "--output"])
        .arg(out)
        .output()
        .unwrap();
    assert!(
        matches!(o.status.code(), Some(0 | 1)) && out.exists(),
        "innotune {args:?} --format {format}: exit {:?}, stderr {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `innotune report FILE --format html` (to stdout).
fn report_html(state: &Path, file: &Path) -> String {
    let o = bin(state)
        .arg("report")
        .arg(file)
        .args(["--format", "html"])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "report {}: {}",
        file.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// What a page shows, in order: its blocks (heading, paragraph, key–values,
/// table, chart, finding, verbatim text, tree), headings (level, text),
/// key–value names, table captions and header rows, the numbers in tables,
/// chart titles, finding ids.
#[derive(Debug, PartialEq)]
struct Shown {
    blocks: Vec<&'static str>,
    headings: Vec<(u8, String)>,
    keys: Vec<String>,
    tables: Vec<String>,
    figures: Vec<String>,
    charts: Vec<String>,
    findings: Vec<String>,
}

/// Every `open…close` span's inside, in order.
fn spans<'a>(s: &'a str, open: &str, close: &str) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(i) = rest.find(open) {
        let after = &rest[i + open.len()..];
        let Some(j) = after.find(close) else { break };
        out.push(&after[..j]);
        rest = &after[j + close.len()..];
    }
    out
}

fn shown(body: &str, level_shift: u8) -> Shown {
    let mut headings = Vec::new();
    for l in 2..=6u8 {
        for (at, _) in body.match_indices(&format!("<h{l}>")) {
            let text = &body[at + 4..];
            let text = &text[..text.find("</h").unwrap()];
            headings.push((at, l - level_shift, text.to_string()));
        }
    }
    headings.sort();
    let mut tables = Vec::new();
    for t in spans(body, "<table>", "</thead>") {
        tables.push(t.to_string());
    }
    let kinds = [
        ("<h", "heading"),
        ("<p", "paragraph"),
        ("<dl", "key-values"),
        ("<table", "table"),
        ("<figure", "chart"),
        ("<article", "finding"),
        ("<pre", "verbatim"),
        ("<ul class=\"tree\"", "tree"),
    ];
    let blocks = body
        .lines()
        .filter_map(|l| {
            kinds
                .iter()
                .find(|(t, _)| l.starts_with(t))
                .map(|(_, k)| *k)
        })
        .collect();
    Shown {
        blocks,
        headings: headings.into_iter().map(|(_, l, t)| (l, t)).collect(),
        keys: spans(body, "<dt>", "</dt>")
            .into_iter()
            .map(String::from)
            .collect(),
        tables,
        figures: spans(body, "<td class=\"num", "</td>")
            .into_iter()
            .map(|c| c[c.find('>').unwrap() + 1..].to_string())
            .collect(),
        charts: spans(body, "<figcaption>", "</figcaption>")
            .into_iter()
            .map(String::from)
            .collect(),
        findings: spans(body, "<article class=\"finding", "</strong>")
            .into_iter()
            .map(|f| f[f.rfind('>').unwrap() + 1..].to_string())
            .collect(),
    }
}

/// A command's own page without its title and generation line.
fn own_body(page: &str) -> &str {
    let meta = page.find("<p class=\"meta\">").expect("meta line");
    let start = meta + page[meta..].find("</p>").unwrap() + 5;
    &page[start..page.find("<footer>").unwrap()]
}

/// The section of a report page for the input labelled `label`, after its
/// key–values (file, title, schema, host) and the run's `warnings` notes:
/// the command's own blocks, one heading level down.
fn report_body<'a>(page: &'a str, label: &str, warnings: usize) -> &'a str {
    let open = format!("<h2>{label}: ");
    let start = page
        .find(&open)
        .unwrap_or_else(|| panic!("no section {open} in the page"));
    let end = page[start + 4..]
        .find("<h2>")
        .map(|e| start + 4 + e)
        .unwrap_or_else(|| page.find("<footer>").unwrap());
    let sec = &page[start..end];
    let mut b = &sec[sec.find("</dl>\n").unwrap() + 6..];
    for _ in 0..warnings {
        assert!(b.starts_with("<p class=\"note warn\">"), "{b}");
        b = &b[b.find("</p>\n").unwrap() + 5..];
    }
    b
}

fn label(file: &Path) -> String {
    file.file_name().unwrap().to_string_lossy().into_owned()
}

fn warnings_of(file: &Path) -> usize {
    let v: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    v["warnings"].as_array().map_or(0, Vec::len)
}

/// The report of `json` shows what the command's own page `own` shows.
fn assert_same_as_own(state: &Path, json: &Path, own: &Path, figures: Figures) {
    let page = report_html(state, json);
    let own_page = std::fs::read_to_string(own).unwrap();
    let want = shown(own_body(&own_page), 0);
    let got = shown(report_body(&page, &label(json), warnings_of(json)), 1);
    let what = json.display();
    assert!(
        !want.blocks.is_empty(),
        "{what}: the own page shows nothing"
    );
    assert_eq!(got.blocks, want.blocks, "{what}: blocks");
    assert_eq!(got.headings, want.headings, "{what}: sections");
    assert_eq!(got.keys, want.keys, "{what}: key-values");
    assert_eq!(got.tables, want.tables, "{what}: tables");
    assert_eq!(got.charts, want.charts, "{what}: charts");
    assert_eq!(got.findings, want.findings, "{what}: findings");
    match figures {
        Figures::Same => assert_eq!(got.figures, want.figures, "{what}: figures"),
        // Two runs of a measurement: as many figures, not the same ones.
        Figures::Count => assert_eq!(got.figures.len(), want.figures.len(), "{what}: figures"),
    }
}

#[derive(Clone, Copy)]
enum Figures {
    Same,
    Count,
}

/// Run `args` for JSON and for HTML and compare the report of the one with
/// the other.
fn check_command(name: &str, args: &[&str], figures: Figures) {
    let state = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join(format!("{name}.json"));
    let own = dir.path().join(format!("{name}.html"));
    run(state.path(), args, "json", &json);
    run(state.path(), args, "html", &own);
    assert_same_as_own(state.path(), &json, &own, figures);
}

fn fixture_host(name: &str) -> String {
    support::fixture_host(name).display().to_string()
}

fn input(rel: &str) -> String {
    root()
        .join("tests/fixtures")
        .join(rel)
        .display()
        .to_string()
}

#[test]
fn probe_as_its_own_page() {
    for host in ["md-raid0", "nvme-ssd", "check-planted"] {
        let h = fixture_host(host);
        check_command(
            &format!("probe-{host}"),
            &["--root", &h, "probe", "/var/lib/mysql"],
            Figures::Same,
        );
    }
}

#[test]
fn check_and_apply_as_their_own_pages() {
    let h = fixture_host("check-planted");
    check_command(
        "check",
        &["--root", &h, "check", "/var/lib/mysql"],
        Figures::Same,
    );
    check_command(
        "apply",
        &["--root", &h, "apply", "/var/lib/mysql"],
        Figures::Same,
    );
}

/// slowlog's page in a report is its own page but for the worst sample
/// statements, which carry literal values: they stay in the JSON.
#[test]
fn slowlog_samples_stay_in_the_json() {
    let state = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("slow.json");
    let own = dir.path().join("slow.html");
    let f = input("slowlog/mysql80.log");
    run(state.path(), &["slowlog", &f], "json", &json);
    run(state.path(), &["slowlog", &f], "html", &own);
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let page = report_html(state.path(), &json);
    let own = std::fs::read_to_string(&own).unwrap();
    let classes = v["result"]["classes"].as_array().unwrap();
    assert!(!classes.is_empty());
    for c in classes {
        let q = html::esc(c["sample"]["query"].as_str().unwrap());
        assert!(own.contains(&q), "slowlog's own page has {q}");
        assert!(!page.contains(&q), "the report has {q}");
    }
    assert_eq!(
        page.matches("the statement is left out of reports").count(),
        classes.len()
    );
}

#[test]
fn slowlog_and_trace_as_their_own_pages() {
    for log in ["mysql80.log", "mariadb.log", "percona.log"] {
        let f = input(&format!("slowlog/{log}"));
        check_command("slowlog", &["slowlog", &f], Figures::Same);
    }
    for t in ["loop-mq-deadline-randrw.trace", "loop-none-randrw.trace"] {
        let f = input(&format!("trace/{t}"));
        check_command("trace", &["trace", "--input", &f], Figures::Same);
    }
}

#[test]
fn checksum_as_its_own_page() {
    check_command(
        "checksum",
        &[
            "checksum",
            "/work/shared/fixtures/mysql-tablespaces/sakila/8.0",
            "--page-type-summary",
        ],
        Figures::Same,
    );
}

#[test]
fn bench_presets_survey_plan_and_a_run_as_their_own_pages() {
    check_command("presets", &["bench", "--list-presets"], Figures::Same);
    check_command("survey", &["bench", "--survey", "--dry-run"], Figures::Same);
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let d = dir.path().display().to_string();
    check_command(
        "bench",
        &[
            "bench",
            "--rw",
            "randrw",
            "--bs",
            "16k",
            "--iodepth",
            "4",
            "--size",
            "8m",
            "--runtime",
            "1",
            "--directory",
            &d,
        ],
        Figures::Count,
    );
}

#[test]
fn restore_with_nothing_pending_as_its_own_page() {
    check_command("restore", &["restore", "--dry-run"], Figures::Same);
}

/// `result` of a fixture file as its command's typed report, deserialised
/// here (not through `innotune report`), and its document.
fn document_of(file: &Path) -> Document {
    let v: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    let schema = v["schema"].as_str().unwrap();
    let r = v["result"].clone();
    fn de<T: serde::de::DeserializeOwned>(v: Value) -> T {
        serde_json::from_value(v).unwrap()
    }
    match schema {
        "probe/2" => de::<innotune::probe::ProbeReport>(r).document(),
        "check/2" => de::<innotune::check::report::CheckReport>(r).document(),
        "apply/2" => de::<innotune::apply::ApplyReport>(r).document(),
        "sweep/2" => de::<innotune::sweep::SweepReport>(r).document(),
        "prove/2" => de::<innotune::prove::ProveReport>(r).document(),
        "search/2" => de::<innotune::search::SearchReport>(r).document(),
        "bench/2" => innotune::bench::report::BenchResult::from_value(r)
            .unwrap()
            .document(),
        "oltp/2" => de::<innotune::oltp::OltpReport>(r).document(),
        "merge/2" => de::<innotune::merge::MergeReport>(r).document(),
        "sandbox/2" => de::<innotune::sandbox::SandboxReport>(r).document(),
        // report leaves the worst sample statements out (see below).
        "slowlog/2" => de::<innotune::slowlog::report::SlowlogReport>(r).document_without_samples(),
        "slowlog-capture/2" => de::<innotune::slowlog::capture::CaptureReport>(r).document(),
        "replay/2" => de::<innotune::replay::ReplayReport>(r).document(),
        "trace/2" => de::<innotune::trace::TraceReport>(r).document(),
        "checksum/2" => de::<innotune::checksum::report::ChecksumReport>(r).document(),
        "restore/2" => de::<innotune::journal::RestoreReport>(r).document(),
        "tune-oltp/2" => de::<innotune::tune::report::OltpSide>(r).document(),
        "tune/2" => {
            let mut t: innotune::tune::report::TuneReport = de(r);
            // tune's document has the sweep tune wrote next to it.
            let sweep = file.parent().unwrap().join("sweep.json");
            let s: Value = serde_json::from_slice(&std::fs::read(sweep).unwrap()).unwrap();
            t.sweep_report = Some(de(s["result"].clone()));
            t.document()
        }
        other => panic!("{}: no type for {other}", file.display()),
    }
}

fn results() -> Vec<PathBuf> {
    let dir = root().join("tests/fixtures/results");
    let mut out = Vec::new();
    for d in [dir.clone(), dir.join("tune")] {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "json") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_saved_result_as_its_commands_document() {
    let state = tempfile::tempdir().unwrap();
    let files = results();
    assert!(files.len() >= 20);
    for file in files {
        let doc = document_of(&file);
        let own_page = html::render_page(&doc.title, std::slice::from_ref(&doc));
        let page = report_html(state.path(), &file);
        let got = report_body(&page, &label(&file), warnings_of(&file));
        let want = own_body(&own_page);
        let what = file.display();
        assert_eq!(shown(got, 1), shown(want, 0), "{what}");
        // Block for block: the same page once the headings are one level up.
        let mut up = got.to_string();
        for l in 3..=6 {
            up = up
                .replace(&format!("<h{l}>"), &format!("<h{}>", l - 1))
                .replace(&format!("</h{l}>"), &format!("</h{}>", l - 1));
        }
        assert_eq!(up, want, "{what}");
        // The document's title is kept too.
        if !doc.title.is_empty() {
            assert!(
                page.contains(&format!("<dt>title</dt><dd>{}</dd>", html::esc(&doc.title))),
                "{what}: title"
            );
        }
    }
}

/// tune.json without the sweep.json tune wrote next to it: the page says
/// where the sweep's tables are instead of claiming the sweep did not run.
#[test]
fn tune_without_its_sweep_json_says_where_the_sweep_is() {
    let state = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let tune = dir.path().join("tune.json");
    std::fs::copy(root().join("tests/fixtures/results/tune/tune.json"), &tune).unwrap();
    let page = report_html(state.path(), &tune);
    assert!(page.contains("in sweep.json, which is not next to this tune.json"));
    assert!(!page.contains("The sweep did not complete"));
    let with = report_html(
        state.path(),
        &root().join("tests/fixtures/results/tune/tune.json"),
    );
    assert!(with.contains("throughput by candidate (median, 95% CI)"));
}

/// A result of a known command that does not read back (another innotune's
/// field missing) is one line naming the field and the fix; a command this
/// innotune does not know shows its top-level values.
#[test]
fn unreadable_and_unknown_results() {
    let state = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut v: Value = serde_json::from_slice(
        &std::fs::read(root().join("tests/fixtures/results/probe.json")).unwrap(),
    )
    .unwrap();
    v["result"]["stack"][0]
        .as_object_mut()
        .unwrap()
        .remove("depth");
    let bad = dir.path().join("old.json");
    std::fs::write(&bad, serde_json::to_vec(&v).unwrap()).unwrap();
    let o = bin(state.path()).arg("report").arg(&bad).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("cannot read the probe/2 result: at result.stack[0]: missing field `depth`")
            && err.contains("fix: render it with the innotune that wrote it"),
        "{err}"
    );

    v["schema"] = "frobnicate/2".into();
    v["result"] = serde_json::json!({"widgets": [1, 2, 3], "mode": "fast"});
    let other = dir.path().join("other.json");
    std::fs::write(&other, serde_json::to_vec(&v).unwrap()).unwrap();
    let page = report_html(state.path(), &other);
    assert!(page.contains("<h2>other.json: frobnicate on"));
    assert!(page.contains("<dt>widgets</dt><dd>3 item(s)</dd>"));
    assert!(page.contains("<dt>mode</dt><dd>fast</dd>"));
}
