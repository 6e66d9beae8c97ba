//! `check --format prometheus` end to end: the textfile passes Prometheus's
//! own checker (`promtool check metrics`), says what the host tree says
//! (scheduler per disk, persisted or drifted, the same findings as the JSON
//! result), carries `checksum --record` results and an unfinished journal;
//! the example alert rules pass `promtool check rules` and their unit tests;
//! the example systemd units pass `systemd-analyze verify`.
//!
//! Every test uses a private INNOTUNE_STATE_DIR and committed or generated
//! host trees replayed with `--root`; nothing here touches the live host.

mod support;
use support::Start as _;

use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const TABLESPACES: &str = "/work/shared/fixtures/mysql-tablespaces";

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn hosts(name: &str) -> PathBuf {
    manifest().join("tests/fixtures/hosts").join(name)
}

fn innotune(state: &Path) -> Command {
    let mut c = support::innotune_sys();
    c.env("INNOTUNE_STATE_DIR", state).env("NO_COLOR", "1");
    c
}

fn promtool() -> Command {
    assert!(
        Path::new("/usr/bin/promtool").exists(),
        "promtool is missing: apt-get install prometheus (bash .ci/run does)"
    );
    Command::new("/usr/bin/promtool")
}

/// `check --format prometheus --output FILE` on a tree; (exit code, text).
fn metrics_of(state: &Path, root: &Path, extra: &[&str]) -> (i32, String) {
    let out = state.join("innotune.prom");
    let o = innotune(state)
        .arg("--root")
        .arg(root)
        .args(["--format", "prometheus", "--output"])
        .arg(&out)
        .arg("check")
        .args(extra)
        .output()
        .unwrap();
    assert!(
        o.stdout.is_empty(),
        "--output: nothing on stdout, got {:?}",
        String::from_utf8_lossy(&o.stdout)
    );
    let text = std::fs::read_to_string(&out).unwrap_or_else(|e| {
        panic!(
            "no textfile ({e}); stderr: {}",
            String::from_utf8_lossy(&o.stderr)
        )
    });
    // No temporary file is left next to it (node_exporter reads *.prom only,
    // but a leftover would pile up).
    let left: Vec<_> = std::fs::read_dir(state)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("tmp"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
    (o.status.code().unwrap(), text)
}

/// Samples as `name{labels}` → value (labels in the order written, which
/// the exporter sorts by name).
fn samples(text: &str) -> BTreeMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (k, v) = l.rsplit_once(' ').unwrap();
            (k.to_string(), v.parse().unwrap())
        })
        .collect()
}

fn promtool_accepts(text: &str) {
    let mut c = promtool()
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .start();
    use std::io::Write;
    c.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let o = c.output_within(support::WAIT);
    assert!(
        o.status.success() && o.stdout.is_empty() && o.stderr.is_empty(),
        "promtool check metrics: {}{}\n{text}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn planted_host_metrics_pass_promtool_and_match_the_json_findings() {
    let state = tempfile::tempdir().unwrap();
    let root = hosts("check-planted");
    let (code, text) = metrics_of(state.path(), &root, &[]);
    assert_eq!(
        code, 1,
        "warnings still exit 1 (a timer unit maps it to success)"
    );
    promtool_accepts(&text);
    let s = samples(&text);
    // nvme1n1 (a RAID member) runs bfq; nvme0n1 runs none.
    assert_eq!(
        s[r#"innotune_block_scheduler{device="nvme1n1",scheduler="bfq"}"#],
        1.0
    );
    assert_eq!(
        s[r#"innotune_block_scheduler{device="nvme1n1",scheduler="none"}"#],
        0.0
    );
    assert_eq!(
        s[r#"innotune_block_scheduler{device="nvme0n1",scheduler="none"}"#],
        1.0
    );
    // Exactly one active scheduler per disk.
    let mut active: BTreeMap<String, f64> = BTreeMap::new();
    for (k, v) in s
        .iter()
        .filter(|(k, _)| k.starts_with("innotune_block_scheduler{"))
    {
        let dev = k
            .split("device=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        *active.entry(dev.to_string()).or_default() += v;
    }
    assert!(active.values().all(|n| *n == 1.0), "{active:?}");

    // The same findings as the JSON result, by id/severity/subject, and the
    // per-severity counts add up to them.
    let o = innotune(state.path())
        .arg("--root")
        .arg(&root)
        .args(["--format", "json", "check"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let findings = v["result"]["findings"].as_array().unwrap();
    assert!(!findings.is_empty());
    for f in findings {
        let key = format!(
            r#"innotune_finding{{id="{}",layer="{}",severity="{}",subject="{}"}}"#,
            f["id"].as_str().unwrap(),
            f["layer"].as_str().unwrap(),
            f["severity"].as_str().unwrap(),
            f["subject"]["name"].as_str().unwrap()
        );
        assert_eq!(s.get(&key), Some(&1.0), "{key} missing from\n{text}");
    }
    let listed = s
        .keys()
        .filter(|k| k.starts_with("innotune_finding{"))
        .count();
    assert_eq!(listed, findings.len());
    let counted: f64 = s
        .iter()
        .filter(|(k, _)| k.starts_with("innotune_findings{"))
        .map(|(_, v)| v)
        .sum();
    assert_eq!(counted as usize, findings.len());
    assert_eq!(s["innotune_journal_pending"], 0.0);
}

#[test]
fn persisted_and_drifted_schedulers_are_told_apart() {
    let state = tempfile::tempdir().unwrap();
    // A tmpfiles.d entry sets mq-deadline, which sda runs: persisted.
    let (_, text) = metrics_of(state.path(), &hosts("lvm-on-partition"), &[]);
    promtool_accepts(&text);
    let s = samples(&text);
    assert_eq!(
        s[r#"innotune_block_scheduler_persisted{device="sda"}"#],
        1.0
    );
    assert_eq!(s[r#"innotune_block_scheduler_drift{device="sda"}"#], 0.0);
    // A udev rule sets none on this SSD, but it runs mq-deadline: drifted.
    let (_, text) = metrics_of(state.path(), &hosts("sata-ssd"), &[]);
    promtool_accepts(&text);
    let s = samples(&text);
    assert_eq!(
        s[r#"innotune_block_scheduler{device="sda",scheduler="mq-deadline"}"#],
        1.0
    );
    assert_eq!(
        s[r#"innotune_block_scheduler_persisted{device="sda"}"#],
        0.0
    );
    assert_eq!(s[r#"innotune_block_scheduler_drift{device="sda"}"#], 1.0);
}

/// Copy `src` (a directory of tablespaces) to a fresh directory.
fn copy_tree(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap().flatten() {
        let p = e.path();
        if p.extension().and_then(|x| x.to_str()) == Some("ibd") {
            std::fs::copy(&p, dst.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn recorded_checksum_results_and_their_corruption_are_exported() {
    let state = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let good = data.path().join("good");
    let bad = data.path().join("bad");
    copy_tree(Path::new(TABLESPACES), &good);
    copy_tree(Path::new(TABLESPACES), &bad);
    // Flip bytes in the middle of page 3 of one copy.
    let victim = bad.join("t_10k_rows.ibd");
    let mut bytes = std::fs::read(&victim).unwrap();
    let off = 3 * 16384 + 8000;
    for b in &mut bytes[off..off + 16] {
        *b ^= 0xA5;
    }
    std::fs::write(&victim, bytes).unwrap();

    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let run = |p: &Path| {
        innotune(state.path())
            .args(["checksum", "--record"])
            .arg(p)
            .output()
            .unwrap()
            .status
            .code()
            .unwrap()
    };
    assert_eq!(run(&good), 0);
    assert_eq!(run(&bad), 1);
    // The records are private to root (or the running user).
    use std::os::unix::fs::PermissionsExt;
    let dir = state.path().join("checksum");
    assert_eq!(
        std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
        0o700
    );

    let (_, text) = metrics_of(state.path(), &hosts("check-clean"), &[]);
    promtool_accepts(&text);
    let s = samples(&text);
    let key = |m: &str, p: &Path| {
        format!(
            r#"{m}{{path="{}"}}"#,
            std::fs::canonicalize(p).unwrap().display()
        )
    };
    assert_eq!(s[&key("innotune_checksum_bad_pages", &good)], 0.0);
    assert!(
        s[&key("innotune_checksum_bad_pages", &bad)] >= 1.0,
        "{text}"
    );
    // The same page count as the run's own JSON result.
    let o = innotune(state.path())
        .args(["--format", "json", "checksum"])
        .arg(&good)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let pages = v["result"]["totals"]["pages_checked"].as_f64().unwrap();
    assert!(pages > 0.0);
    assert_eq!(s[&key("innotune_checksum_pages_checked", &good)], pages);
    let when = s[&key("innotune_checksum_last_run_timestamp_seconds", &good)];
    assert!(when >= before as f64 && when <= before as f64 + 600.0);

    // One run naming both paths keeps each path's own figures.
    let o = innotune(state.path())
        .args(["checksum", "--record"])
        .arg(&good)
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let (_, text) = metrics_of(state.path(), &hosts("check-clean"), &[]);
    let s = samples(&text);
    assert_eq!(s[&key("innotune_checksum_bad_pages", &good)], 0.0, "{text}");
    assert!(
        s[&key("innotune_checksum_bad_pages", &bad)] >= 1.0,
        "{text}"
    );
    assert_eq!(s[&key("innotune_checksum_pages_checked", &good)], pages);

    // A file planted in the record directory by someone else is not read:
    // here a symlink, which a regular-file check refuses.
    std::os::unix::fs::symlink("/etc/hostname", dir.join("planted.json")).unwrap();
    let (_, text) = metrics_of(state.path(), &hosts("check-clean"), &[]);
    assert_eq!(
        samples(&text)
            .keys()
            .filter(|k| k.starts_with("innotune_checksum_bad_pages{"))
            .count(),
        2
    );
}

#[test]
fn an_interrupted_run_shows_as_a_pending_journal_until_restore() {
    let state = tempfile::tempdir().unwrap();
    // A generated tree (the generator is the source of truth for symlinks).
    let t = tempfile::tempdir().unwrap();
    let st = Command::new("python3")
        .arg(manifest().join("tests/fixtures/hosts/make-check-fixtures.py"))
        .arg(t.path())
        .status()
        .unwrap();
    assert!(st.success());
    let root = t.path().join("check-planted");

    let mut child = innotune(state.path())
        .env("INNOTUNE_APPLY_PAUSE_AFTER", "1")
        .arg("--root")
        .arg(&root)
        .args(["apply", "/var/lib/mysql", "--yes"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .start();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            err.read_line(&mut line).unwrap() > 0,
            "apply ended before pausing"
        );
        if line.contains("paused after") {
            break;
        }
    }
    // While it runs, the journal has an entry but is not pending.
    let (_, text) = metrics_of(state.path(), &root, &[]);
    let s = samples(&text);
    assert_eq!(s["innotune_journal_pending"], 0.0);
    assert!(s["innotune_journal_entries"] >= 1.0);
    child.kill().unwrap();
    child.wait_within(support::WAIT);

    let (_, text) = metrics_of(state.path(), &root, &[]);
    promtool_accepts(&text);
    assert_eq!(samples(&text)["innotune_journal_pending"], 1.0);

    let o = innotune(state.path())
        .arg("--root")
        .arg(&root)
        .arg("restore")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (_, text) = metrics_of(state.path(), &root, &[]);
    let s = samples(&text);
    assert_eq!(s["innotune_journal_pending"], 0.0);
    assert_eq!(s["innotune_journal_entries"], 0.0);
}

#[test]
fn prometheus_format_is_refused_at_once_by_other_commands() {
    let state = tempfile::tempdir().unwrap();
    let o = innotune(state.path())
        .args(["--format", "prometheus", "probe", "/"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("only for `innotune check`"), "{err}");
}

#[test]
fn example_alert_rules_pass_promtool_and_their_unit_tests() {
    let dir = manifest().join("contrib/prometheus");
    let o = promtool()
        .args(["check", "rules", "innotune-alerts.yml"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    let o = promtool()
        .args(["test", "rules", "innotune-alerts.test.yml"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    // Every metric an alert uses is one the exporter writes (docs/metrics.md
    // lists the same names).
    let rules = std::fs::read_to_string(dir.join("innotune-alerts.yml")).unwrap();
    let docs = std::fs::read_to_string(manifest().join("docs/metrics.md")).unwrap();
    let src = std::fs::read_to_string(manifest().join("src/check/metrics.rs")).unwrap();
    for name in rules
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with("innotune_"))
    {
        assert!(src.contains(&format!("\"{name}\"")), "{name} not exported");
        assert!(docs.contains(name), "{name} not in docs/metrics.md");
    }
}

/// The units as shipped pass `systemd-analyze verify` once the binary is
/// where contrib/README.md says to install it. Live (root), that install
/// step is done for real in a private mount namespace (a tmpfs over
/// /usr/local/bin that only `unshare`'s child sees), so the files verified
/// are the shipped ones; otherwise ExecStart is pointed at the built binary.
#[test]
fn example_systemd_units_pass_systemd_analyze_verify() {
    let Ok(sa) = which("systemd-analyze") else {
        panic!("systemd-analyze is missing (package systemd)");
    };
    let install = "install -m 0755 target/release/innotune /usr/local/bin/innotune";
    let readme = std::fs::read_to_string(manifest().join("contrib/README.md")).unwrap();
    assert!(readme.contains(install), "contrib/README.md: {install}");
    let dir = manifest().join("contrib/systemd");
    let mut shipped: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    shipped.sort();
    assert_eq!(shipped.len(), 4);
    for p in &shipped {
        let text = std::fs::read_to_string(p).unwrap();
        assert!(
            !p.extension().is_some_and(|x| x == "service")
                || text.contains("ExecStart=/usr/local/bin/innotune "),
            "{}: runs the binary from where contrib/README.md installs it",
            p.display()
        );
    }
    let o = if support::live() {
        let units: Vec<String> = shipped.iter().map(|p| p.display().to_string()).collect();
        let script = format!(
            "mount -t tmpfs tmpfs /usr/local/bin && install -m 0755 '{}' /usr/local/bin/innotune && '{}' verify {}",
            support::bin::INNOTUNE,
            sa.display(),
            units.join(" ")
        );
        Command::new("unshare")
            .args(["--mount", "--propagation", "private", "sh", "-c", &script])
            .output()
            .unwrap()
    } else {
        let tmp = tempfile::tempdir().unwrap();
        let mut units = Vec::new();
        for p in &shipped {
            let text = std::fs::read_to_string(p)
                .unwrap()
                .replace("/usr/local/bin/innotune", support::bin::INNOTUNE);
            let t = tmp.path().join(p.file_name().unwrap());
            std::fs::write(&t, text).unwrap();
            units.push(t);
        }
        Command::new(&sa)
            .arg("verify")
            .args(&units)
            .output()
            .unwrap()
    };
    assert!(
        o.status.success() && o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The example inventory never applies advice unless asked: a playbook
/// run without --check would otherwise change every host (issue 46).
#[test]
fn example_inventory_does_not_apply_by_default() {
    let inv =
        std::fs::read_to_string(manifest().join("contrib/ansible/inventory.example.ini")).unwrap();
    let set: Vec<&str> = inv
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("innotune_apply"))
        .collect();
    assert_eq!(set, ["innotune_apply=false"], "{inv}");
    let readme = std::fs::read_to_string(manifest().join("contrib/README.md")).unwrap();
    assert!(
        readme.contains("-e innotune_apply=true"),
        "says how to turn it on"
    );
}

fn which(name: &str) -> Result<PathBuf, ()> {
    std::env::var_os("PATH")
        .and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join(name))
                .find(|p| p.exists())
        })
        .ok_or(())
}

/// Issue 39, item 1, for `checksum --record`: a FIFO where the record goes
/// is refused in one line (exit 2) and left a FIFO; nothing else is left
/// in the record directory.
#[test]
fn a_record_never_replaces_anything_but_a_regular_file() {
    use std::os::unix::fs::FileTypeExt;
    let state = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    copy_tree(Path::new(TABLESPACES), data.path());
    let run = || {
        innotune(state.path())
            .args(["checksum", "--record"])
            .arg(data.path())
            .output()
            .unwrap()
    };
    assert_eq!(run().status.code(), Some(0));
    let dir = state.path().join("checksum");
    let records: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(records.len(), 1, "{records:?}");
    let rec = &records[0];
    std::fs::remove_file(rec).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        rec,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let o = run();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("a FIFO, not a regular file"), "{err}");
    assert!(std::fs::symlink_metadata(rec)
        .unwrap()
        .file_type()
        .is_fifo());
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
}

/// Every PromQL expression of the Grafana dashboard (contrib/grafana),
/// as promtool parses it and against the names innotune really writes:
/// a panel naming a metric that `check --format prometheus` never exports
/// (with findings, a checksum record and a journal present, so every family
/// appears) fails here.
#[test]
fn grafana_dashboard_queries_pass_promtool_and_name_exported_metrics() {
    let dash: Value = serde_json::from_str(
        &std::fs::read_to_string(manifest().join("contrib/grafana/innotune.json")).unwrap(),
    )
    .unwrap();
    let mut exprs = Vec::new();
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    match (k.as_str(), x) {
                        ("expr", Value::String(s)) => out.push(s.clone()),
                        ("definition", Value::String(s)) => out.push(s.clone()),
                        _ => walk(x, out),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    walk(&dash, &mut exprs);
    assert!(exprs.len() >= 10, "the dashboard has its panels: {exprs:?}");

    // Grafana's template variables and label_values() are not PromQL:
    // $instance matches everything, label_values(m, l) is checked as m.
    let promql: Vec<String> = exprs
        .iter()
        .map(|e| {
            let e = e.replace("$instance", ".*");
            match e.strip_prefix("label_values(") {
                Some(rest) => rest.split(',').next().unwrap().trim().to_string(),
                None => e,
            }
        })
        .collect();
    let state = tempfile::tempdir().unwrap();
    let mut rules = String::from("groups:\n  - name: innotune-dashboard\n    rules:\n");
    for (i, e) in promql.iter().enumerate() {
        rules += &format!(
            "      - record: innotune:dashboard_{i}\n        expr: {}\n",
            serde_json::to_string(e).unwrap()
        );
    }
    let file = state.path().join("dashboard-rules.yml");
    std::fs::write(&file, &rules).unwrap();
    let o = promtool()
        .args(["check", "rules"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "promtool rejects a dashboard query:\n{}{}\n{rules}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );

    // What innotune exports with every family present: a planted host
    // (findings), a checksum record, an unfinished journal.
    let data = tempfile::tempdir().unwrap();
    copy_tree(Path::new(TABLESPACES), data.path());
    let o = innotune(state.path())
        .args(["checksum", "--record"])
        .arg(data.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    plant_tune_record(state.path(), "/var/lib/mysql");
    let (_, text) = metrics_of(state.path(), &hosts("check-planted"), &[]);
    let exported: std::collections::BTreeSet<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    for family in [
        "innotune_finding",
        "innotune_checksum_bad_pages",
        "innotune_tune_cell_ratio",
    ] {
        assert!(exported.contains(family), "{family} missing from\n{text}");
    }
    for e in &promql {
        for name in e
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| w.starts_with("innotune_"))
        {
            assert!(
                exported.contains(name),
                "the dashboard queries {name}, which innotune does not export ({exported:?})"
            );
        }
    }
}

/// Issue 39, item 5: two tablespace copies whose names are not UTF-8
/// (`bad\xff.ibd`, `bad\xfe.ibd`), each with a corrupted page. Before,
/// both were recorded under one lossy path (`bad\u{fffd}.ibd`), with
/// `pages_checked 0` and `bad_pages 0` (the file did not match its own
/// argument), so the corruption alert never fired. Now each keeps its own
/// record and label, with the bytes written as `\xNN`.
#[test]
fn paths_that_are_not_utf8_keep_their_own_record_and_label() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let state = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let src = Path::new(TABLESPACES).join("sakila/8.0/sakila/film.ibd");
    let mut bytes = std::fs::read(&src).unwrap();
    let off = 5 * 16384 + 8000;
    for b in &mut bytes[off..off + 16] {
        *b ^= 0xA5;
    }
    let names: [&[u8]; 2] = [b"bad\xff.ibd", b"bad\xfe.ibd"];
    let files: Vec<PathBuf> = names
        .iter()
        .map(|n| {
            let p = data.path().join(OsStr::from_bytes(n));
            std::fs::write(&p, &bytes).unwrap();
            p
        })
        .collect();
    for f in &files {
        let o = innotune(state.path())
            .args(["--format", "json", "checksum", "--record"])
            .arg(f)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{o:?}");
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let shown = v["result"]["files"][0]["path"]
            .as_str()
            .unwrap()
            .to_string();
        let tail = if f.as_os_str().as_bytes().contains(&0xff) {
            "bad\\xff.ibd"
        } else {
            "bad\\xfe.ibd"
        };
        assert!(shown.ends_with(tail), "{shown}");
        assert_eq!(v["result"]["bad_pages"][0]["file"], shown.as_str());
        assert_eq!(v["result"]["bad_pages"][0]["page"], 5);
    }
    let (_, text) = metrics_of(state.path(), &hosts("check-clean"), &[]);
    promtool_accepts(&text);
    let s = samples(&text);
    let dir = std::fs::canonicalize(data.path()).unwrap();
    for tail in ["bad\\\\xff.ibd", "bad\\\\xfe.ibd"] {
        // The label value escapes the backslash once more (Prometheus's rule).
        let key = |m: &str| format!(r#"{m}{{path="{}/{tail}"}}"#, dir.display());
        assert_eq!(
            s.get(&key("innotune_checksum_bad_pages")),
            Some(&1.0),
            "{text}"
        );
        assert_eq!(
            s.get(&key("innotune_checksum_pages_checked")),
            Some(&22.0),
            "{text}"
        );
        assert_eq!(
            s.get(&key("innotune_checksum_file_errors")),
            Some(&0.0),
            "{text}"
        );
    }
    let records = std::fs::read_dir(state.path().join("checksum"))
        .unwrap()
        .count();
    assert_eq!(records, 2, "one record per path");
}

/// A last-tune record in `state` as `tune` keeps it (src/check/tune_record.rs;
/// tests/tune_live.rs checks that a real tune writes one): one cell with a
/// verdict and its interval, one whose ratio could not be computed.
fn plant_tune_record(state: &Path, path: &str) {
    use std::os::unix::fs::DirBuilderExt;
    let dir = state.join("tune");
    std::fs::DirBuilder::new()
        .mode(0o700)
        .recursive(true)
        .create(&dir)
        .unwrap();
    let rec = serde_json::json!({
        "path": path,
        "finished_unix": 1_700_000_000u64,
        "cells": [
            {"workload": "oltp_read_only", "threads": 8, "rounds": 9,
             "ratio": 1.42, "ci_low": 1.21, "ci_high": 1.63,
             "ci_level_pct": 95.0, "verdict": "faster"},
            {"workload": "oltp_read_write", "threads": 8, "rounds": 4,
             "ratio": null, "ci_low": null, "ci_high": null,
             "ci_level_pct": 95.0, "verdict": "too_few_rounds"}
        ]
    });
    std::fs::write(dir.join("last.json"), rec.to_string()).unwrap();
}

/// The last tune's verdicts: a ratio is exported only with both interval
/// bounds and the verdict (same labels, so PromQL joins them); a cell
/// without a ratio exports its rounds and verdict; the path label is
/// escaped as the checksum metrics' are; a link in the record's place is
/// not read.
#[test]
fn last_tune_verdicts_come_with_their_interval() {
    let state = tempfile::tempdir().unwrap();
    let (_, text) = metrics_of(state.path(), &hosts("check-clean"), &[]);
    assert!(
        !text.contains("innotune_tune_"),
        "no tune, no family: {text}"
    );

    plant_tune_record(state.path(), "/srv/my \"sql\"\\x");
    let (_, text) = metrics_of(state.path(), &hosts("check-clean"), &[]);
    promtool_accepts(&text);
    let s = samples(&text);
    let cell = r#"{ci_level="95",threads="8",verdict="faster",workload="oltp_read_only"}"#;
    assert_eq!(s[&format!("innotune_tune_cell_ratio{cell}")], 1.42);
    assert_eq!(s[&format!("innotune_tune_cell_ci_low{cell}")], 1.21);
    assert_eq!(s[&format!("innotune_tune_cell_ci_high{cell}")], 1.63);
    assert_eq!(
        s[r#"innotune_tune_cell_rounds{threads="8",verdict="too_few_rounds",workload="oltp_read_write"}"#],
        4.0
    );
    // Every ratio sample has both bounds with the same labels.
    for k in s
        .keys()
        .filter(|k| k.starts_with("innotune_tune_cell_ratio{"))
    {
        let labels = k.trim_start_matches("innotune_tune_cell_ratio");
        assert!(labels.contains("verdict="), "{k}");
        for b in ["innotune_tune_cell_ci_low", "innotune_tune_cell_ci_high"] {
            assert!(s.contains_key(&format!("{b}{labels}")), "{b}{labels}");
        }
    }
    assert_eq!(
        s.keys()
            .filter(|k| k.starts_with("innotune_tune_cell_ratio{"))
            .count(),
        1,
        "{text}"
    );
    for (v, n) in [
        ("faster", 1.0),
        ("slower", 0.0),
        ("no_difference", 0.0),
        ("too_few_rounds", 1.0),
    ] {
        assert_eq!(s[&format!(r#"innotune_tune_cells{{verdict="{v}"}}"#)], n);
    }
    // The label escapes the quote and the backslash (Prometheus's rule).
    assert_eq!(
        s[r#"innotune_tune_last_run_timestamp_seconds{path="/srv/my \"sql\"\\x"}"#],
        1_700_000_000.0,
        "{text}"
    );

    // A link in the record's place is not followed.
    let rec = state.path().join("tune/last.json");
    let elsewhere = state.path().join("elsewhere.json");
    std::fs::rename(&rec, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &rec).unwrap();
    let (_, text) = metrics_of(state.path(), &hosts("check-clean"), &[]);
    assert!(!text.contains("innotune_tune_"), "{text}");
}
