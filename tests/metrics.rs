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

#[test]
fn example_systemd_units_pass_systemd_analyze_verify() {
    let Ok(sa) = which("systemd-analyze") else {
        panic!("systemd-analyze is missing (package systemd)");
    };
    let tmp = tempfile::tempdir().unwrap();
    let mut units = Vec::new();
    for e in std::fs::read_dir(manifest().join("contrib/systemd"))
        .unwrap()
        .flatten()
    {
        // verify needs ExecStart's binary to exist: point it at the one built.
        let text = std::fs::read_to_string(e.path()).unwrap();
        assert!(
            !e.path().extension().is_some_and(|x| x == "service")
                || text.contains("/usr/local/bin/innotune")
        );
        let text = text.replace("/usr/local/bin/innotune", support::bin::INNOTUNE);
        let p = tmp.path().join(e.file_name());
        std::fs::write(&p, text).unwrap();
        units.push(p);
    }
    assert_eq!(units.len(), 4);
    let o = Command::new(sa)
        .arg("verify")
        .args(&units)
        .output()
        .unwrap();
    assert!(
        o.status.success() && o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
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
