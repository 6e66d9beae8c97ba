//! `innotune replay` and `sandbox start --from-live` against real servers:
//! a throwaway "live" sandbox loaded by `innotune oltp` with its slow log
//! at long_query_time = 0, copied by --from-live (logical, and
//! mariadb-backup where installed), the log replayed on the copy; then a
//! planted regression (a secondary index dropped on the copy) judged by
//! `replay --compare`. Never the server at 3306.

mod support;

use mysql::prelude::Queryable;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use support::{innotune_in, TestServer};

/// A sandbox made by `innotune sandbox start`, stopped on every path.
struct Copy {
    dir: PathBuf,
    state: PathBuf,
}

impl Drop for Copy {
    fn drop(&mut self) {
        let _ = innotune_in(&self.state)
            .args(["sandbox", "stop", "--dir"])
            .arg(&self.dir)
            .output();
    }
}

fn json(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// The live server, loaded by `innotune oltp oltp_read_write` while its
/// slow log (long_query_time = 0) was on, plus `extra` statements of a
/// class that reads through the secondary index k_1; and the log.
fn live_with_log(state: &Path, extra: u32, rows: u32) -> (TestServer, PathBuf) {
    live_logged(state, extra, rows, 2, Log::Slow)
}

/// Which log the live server writes while it is loaded.
#[derive(Clone, Copy, PartialEq)]
enum Log {
    /// The slow log at long_query_time = 0.
    Slow,
    /// The general query log.
    General,
}

/// [`live_with_log`], the load logged in `log`.
fn live_logged(
    state: &Path,
    extra: u32,
    rows: u32,
    threads: u32,
    kind: Log,
) -> (TestServer, PathBuf) {
    let live = support::server();
    let threads = threads.to_string();
    let sock = live.sock_args();
    let rows = rows.to_string();
    let prep = innotune_in(state)
        .args([
            "oltp",
            "oltp_read_write",
            "prepare",
            "--tables",
            "2",
            "--table-size",
            &rows,
        ])
        .args(&sock)
        .output()
        .unwrap();
    assert!(
        prep.status.success(),
        "{}",
        String::from_utf8_lossy(&prep.stderr)
    );
    let mut c = live.conn();
    let log = match kind {
        Log::Slow => {
            let log = live.parent.path().join("slow.log");
            c.query_drop(format!(
                "SET GLOBAL long_query_time = 0, GLOBAL slow_query_log_file = '{}', GLOBAL slow_query_log = 1",
                log.display()
            ))
            .unwrap();
            log
        }
        Log::General => {
            // The file first, then the log on: a statement turning it on
            // is not in it (a replay would turn the copy's on).
            let log = live.parent.path().join("general.log");
            c.query_drop(format!("SET GLOBAL general_log_file = '{}'", log.display()))
                .unwrap();
            c.query_drop("SET GLOBAL general_log = 1").unwrap();
            log
        }
    };
    let run = innotune_in(state)
        .args([
            "oltp",
            "oltp_read_write",
            "run",
            "--tables",
            "2",
            "--table-size",
            &rows,
        ])
        .args(["--threads", &threads, "--events", "150", "--time", "0"])
        .args(&sock)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    {
        // A session of its own, as an application's report query would be.
        let mut q = live.conn();
        // COM_INIT_DB: `Init DB` in a general log, `use` in a slow one.
        q.select_db("sbtest").unwrap();
        for i in 0..extra {
            let _: Vec<u64> = q
                .query(format!(
                    "SELECT id FROM sbtest1 WHERE k = {}",
                    2400 + i % 200
                ))
                .unwrap();
        }
    }
    c.query_drop(match kind {
        Log::Slow => "SET GLOBAL slow_query_log = 0",
        Log::General => "SET GLOBAL general_log = 0",
    })
    .unwrap();
    (live, log)
}

/// Start a --from-live copy of `live` in a new directory.
fn copy_of(live: &TestServer, state: &Path, name: &str, method: &str) -> Copy {
    let dir = live.parent.path().join(name);
    let out = innotune_in(state)
        .args(["--format", "json", "sandbox", "start", "--dir"])
        .arg(&dir)
        .args([
            "--from-live",
            "--copy-method",
            method,
            "--max-size",
            "64MiB",
        ])
        .args(live.sock_args())
        .output()
        .unwrap();
    let copy = Copy {
        dir: dir.clone(),
        state: state.to_path_buf(),
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out);
    assert_eq!(v["result"]["copied"]["method"], method, "{v}");
    assert_eq!(v["result"]["copied"]["schemas"][0], "sbtest", "{v}");
    copy
}

/// `innotune --format json replay LOG ARGS… CONN…`, which must succeed;
/// its document.
fn replayed(state: &Path, log: &Path, args: &[&str], conn: &[String]) -> Value {
    let out = innotune_in(state)
        .args(["--format", "json", "replay"])
        .arg(log)
        .args(args)
        .args(conn)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    json(&out)
}

fn copy_args(c: &Copy) -> Vec<String> {
    vec![
        "--socket".into(),
        c.dir.join("mysql.sock").display().to_string(),
        "--user".into(),
        "root".into(),
        "--no-defaults".into(),
    ]
}

/// The log's statements per class, from `innotune slowlog` (administrator
/// commands are no statements and are not replayed).
fn log_classes(state: &Path, log: &Path) -> BTreeMap<String, u64> {
    let out = innotune_in(state)
        .args(["--format", "json", "slowlog", "--top", "0"])
        .arg(log)
        .output()
        .unwrap();
    assert!(out.status.success());
    json(&out)["result"]["classes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            !c["fingerprint"]
                .as_str()
                .unwrap()
                .starts_with("administrator command")
        })
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                c["count"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn replayed_classes(v: &Value) -> BTreeMap<String, u64> {
    v["result"]["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                c["count"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn rows(spec_sock: &Path) -> u64 {
    let mut c = innotune::db::ConnSpec::socket(spec_sock, "root")
        .connect()
        .unwrap();
    c.query_first("SELECT COUNT(*) FROM sbtest.sbtest1")
        .unwrap()
        .unwrap()
}

/// The log replayed on a logical copy runs every class exactly as often as
/// the log holds it, without an error (one connection: the log's order);
/// gzip and one connection per session read the same statements; the
/// mariadb-backup copy holds the same rows; a copy over --max-size and one
/// inside the live datadir are refused in one line, nothing made.
#[test]
fn a_copy_replays_every_class_of_the_log() {
    if !support::live() {
        return;
    }
    let state = tempfile::tempdir().unwrap();
    let (live, log) = live_with_log(state.path(), 50, 5000);
    let want = log_classes(state.path(), &log);
    assert!(want.len() >= 10, "{want:?}");
    let copy = copy_of(&live, state.path(), "logical", "logical");
    assert_eq!(rows(&copy.dir.join("mysql.sock")), rows(&live.socket()));
    let v = replayed(
        state.path(),
        &log,
        &["--speed", "max", "--concurrency", "1"],
        &copy_args(&copy),
    );
    assert_eq!(v["schema"], "replay/2");
    assert_eq!(replayed_classes(&v), want);
    assert_eq!(
        v["result"]["totals"]["errors"], 0,
        "{}",
        v["result"]["errors"]
    );
    assert_eq!(
        v["result"]["totals"]["statements"].as_u64().unwrap(),
        want.values().sum::<u64>()
    );
    assert!(v["result"]["log"]["coverage_warning"].is_null(), "{v}");
    for c in v["result"]["classes"].as_array().unwrap() {
        assert!(c["p50_ns"].as_u64().unwrap() <= c["p99_ns"].as_u64().unwrap());
        assert!(c["total_ns"].as_u64().unwrap() > 0, "{c}");
    }

    // Read into memory first (the default): the rounds are timed without
    // the reading, which load_s gives. Streamed (--preload 0), and
    // outgrowing a small --preload midway (what was kept runs first, the
    // rest from the stream): the same statements, no reading time given.
    assert!(
        v["result"]["totals"]["load_s"].as_f64().unwrap() > 0.0,
        "{v}"
    );
    // One connection is busy the whole round: the all-busy part is all of it.
    let t = &v["result"]["totals"];
    assert_eq!(t["all_busy_statements"], t["statements"], "{t}");
    assert_eq!(t["all_busy_s"], t["elapsed_s"], "{t}");
    // Two (one a session): the part until the first ran out holds some of
    // the statements and some of the time, at its own rate.
    let v2 = replayed(
        state.path(),
        &log,
        &["--speed", "max", "--concurrency", "2"],
        &copy_args(&copy),
    );
    assert_eq!(replayed_classes(&v2), want);
    let t = &v2["result"]["totals"];
    assert_eq!(v2["result"]["connections"], 2, "{t}");
    let (n, all) = (
        t["all_busy_statements"].as_u64().unwrap(),
        t["statements"].as_u64().unwrap(),
    );
    let (s, elapsed) = (
        t["all_busy_s"].as_f64().unwrap(),
        t["elapsed_s"].as_f64().unwrap(),
    );
    assert!(n > 0 && n <= all && s > 0.0 && s <= elapsed, "{t}");
    let q = t["all_busy_queries_per_s"].as_f64().unwrap();
    assert!((q - n as f64 / s).abs() < 1e-6 * q, "{t}");
    for preload in ["0", "16KiB"] {
        let v = replayed(
            state.path(),
            &log,
            &["--speed", "max", "--concurrency", "1", "--preload", preload],
            &copy_args(&copy),
        );
        assert_eq!(replayed_classes(&v), want, "--preload {preload}");
        assert_eq!(
            v["result"]["totals"]["errors"], 0,
            "--preload {preload}: {}",
            v["result"]["errors"]
        );
        assert!(
            v["result"]["totals"]["load_s"].is_null(),
            "--preload {preload}"
        );
        assert!(
            v["result"]["totals"]["all_busy_s"].is_null(),
            "--preload {preload}"
        );
    }
    // stdin cannot be read twice: two rounds run from memory, or are
    // refused in one line when the log outgrows --preload.
    let stdin_replay = |preload: &str| {
        innotune_in(state.path())
            .args([
                "--format",
                "json",
                "replay",
                "-",
                "--rounds",
                "2",
                "--concurrency",
                "1",
                "--preload",
                preload,
            ])
            .args(copy_args(&copy))
            .pipe_stdin(&log)
            .unwrap()
            .output()
            .unwrap()
    };
    let out = stdin_replay("1GiB");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let twice: BTreeMap<String, u64> = want.iter().map(|(k, n)| (k.clone(), 2 * n)).collect();
    assert_eq!(replayed_classes(&json(&out)), twice);
    let out = stdin_replay("16KiB");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("stdin cannot be read twice"), "{err}");

    // gzip, one connection per session: the same statements per class
    // (errors from sessions racing differently than they did are counted,
    // never stop the replay).
    let gz = live.parent.path().join("slow.log.gz");
    let st = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("gzip -c {} > {}", log.display(), gz.display()))
        .status()
        .unwrap();
    assert!(st.success());
    let v = replayed(state.path(), &gz, &[], &copy_args(&copy));
    assert_eq!(v["result"]["gzip"], true);
    assert_eq!(replayed_classes(&v), want);
    let by_code: u64 = v["result"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["count"].as_u64().unwrap())
        .sum();
    assert_eq!(v["result"]["totals"]["errors"].as_u64().unwrap(), by_code);
    assert!(
        v["result"]["connections"].as_u64().unwrap() >= 3,
        "{}",
        v["result"]["connections"]
    );
    drop(copy);

    if which_backup() {
        let b = copy_of(&live, state.path(), "physical", "backup");
        assert_eq!(rows(&b.dir.join("mysql.sock")), rows(&live.socket()));
    } else {
        eprintln!("mariadb-backup not installed: the backup path was not tried");
    }

    // Over --max-size: one line, DIR never made.
    let big = live.parent.path().join("big");
    let out = innotune_in(state.path())
        .args(["sandbox", "start", "--dir"])
        .arg(&big)
        .args(["--from-live", "--max-size", "4KiB"])
        .args(live.sock_args())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("more than --max-size 4KiB"), "{err}");
    assert!(!big.exists());

    // Inside the live datadir: refused, nothing written there.
    let datadir = live.sb.dir().join("data");
    let names = |d: &Path| {
        let mut v: Vec<_> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        v.sort();
        v
    };
    let before = names(&datadir);
    let inside = datadir.join("copy");
    let out = innotune_in(state.path())
        .args(["sandbox", "start", "--dir"])
        .arg(&inside)
        .args(["--from-live"])
        .args(live.sock_args())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!inside.exists());
    assert_eq!(names(&datadir), before);
}

/// A general query log of the same load replays every `Query` and
/// `Execute` record (sysbench's prepared statements, with their
/// parameters in place) exactly once, in the session's database, without
/// an error; the classes are slowlog's.
#[test]
fn a_general_log_replays_every_statement() {
    if !support::live() {
        return;
    }
    let state = tempfile::tempdir().unwrap();
    // One sysbench thread: the replay below folds every session onto one
    // connection, and two sessions' transactions that touched the same row
    // (sysbench's DELETE then INSERT of one id) would interleave there and
    // fail with a duplicate key where the original waited on a lock.
    let (live, log) = live_logged(state.path(), 50, 2000, 1, Log::General);
    let text = std::fs::read_to_string(&log).unwrap();
    // `[time]\t  ID Command\targument`: the records that are statements.
    let statements = text
        .lines()
        .filter(|l| {
            let Some((_time, rest)) = l.split_once('\t') else {
                return false;
            };
            let rest = rest
                .trim_start_matches(['\t', ' '])
                .trim_start_matches(|c: char| c.is_ascii_digit());
            rest.starts_with(" Query\t") || rest.starts_with(" Execute\t")
        })
        .count() as u64;
    assert!(statements > 500, "{statements}");
    let copy = copy_of(&live, state.path(), "general", "logical");
    let v = replayed(
        state.path(),
        &log,
        &["--speed", "max", "--concurrency", "1"],
        &copy_args(&copy),
    );
    let r = &v["result"];
    assert_eq!(r["format"], "general");
    assert_eq!(r["totals"]["errors"], 0, "{}", r["errors"]);
    assert_eq!(r["totals"]["statements"].as_u64().unwrap(), statements);
    assert!(r["log"]["admin_skipped"].as_u64().unwrap() > 0);
    let k = r["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["fingerprint"] == "select id from sbtest? where k = ?")
        .unwrap_or_else(|| panic!("no k class in {r}"));
    assert_eq!(k["count"], 50);
    assert!(r["log"]["coverage_warning"].is_null());

    // The general log after a slow log in one file: refused in one line,
    // nothing replayed.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut both = std::fs::read(root.join("tests/fixtures/slowlog/mysql80.log")).unwrap();
    both.extend(text.as_bytes());
    let mixed = live.parent.path().join("mixed.log");
    std::fs::write(&mixed, both).unwrap();
    let out = innotune_in(state.path())
        .arg("replay")
        .arg(&mixed)
        .args(copy_args(&copy))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("mixes a slow log"), "{err}");
}

fn which_backup() -> bool {
    std::process::Command::new("sh")
        .args(["-c", "command -v mariadb-backup"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The planted regression: k_1 dropped on the copy makes the class that
/// reads through it slower, with the interval above 1 (6 rounds against 6: the level is 0.05 over
/// the classes compared, some twenty here, which 5 against 5 cannot reach).
#[test]
fn a_dropped_index_makes_its_class_slower() {
    if !support::live() {
        return;
    }
    let state = tempfile::tempdir().unwrap();
    // 20,000 rows: a scan without k_1 costs some 30 index lookups, far
    // past the round-to-round noise of a shared 2-CPU VM (2-3x at 5,000).
    let (live, log) = live_with_log(state.path(), 200, 20_000);
    let copy = copy_of(&live, state.path(), "copy", "logical");
    let before = live.parent.path().join("before.json");
    let replay = |extra: &[&str]| {
        innotune_in(state.path())
            .args(["--format", "json", "replay"])
            .arg(&log)
            .args([
                "--speed",
                "max",
                "--concurrency",
                "1",
                "--read-only",
                "--rounds",
                "6",
            ])
            .args(extra)
            .args(copy_args(&copy))
            .output()
            .unwrap()
    };
    let out = replay(&["-o", before.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut c = innotune::db::ConnSpec::socket(copy.dir.join("mysql.sock"), "root")
        .connect()
        .unwrap();
    c.query_drop("ALTER TABLE sbtest.sbtest1 DROP INDEX k_1")
        .unwrap();
    let out = replay(&["--compare", before.to_str().unwrap()]);
    // 1: a class is slower.
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out);
    let classes = v["result"]["classes"].as_array().unwrap();
    let planted = classes
        .iter()
        .find(|c| c["fingerprint"] == "select id from sbtest? where k = ?")
        .unwrap_or_else(|| panic!("no k class in {v}"));
    let k = &planted["compare"];
    let b: Value = serde_json::from_slice(&std::fs::read(&before).unwrap()).unwrap();
    let b_k = b["result"]["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == planted["id"])
        .unwrap()["round_mean_ns"]
        .clone();
    eprintln!(
        "k class mean ns per round: before {b_k}, after {}",
        planted["round_mean_ns"]
    );
    assert_eq!(k["effect"], "slower", "{k}");
    assert!(k["comparison"]["ci_low"].as_f64().unwrap() > 1.0, "{k}");
    for c in classes {
        eprintln!(
            "{:<60} {:>8} {:>8}-{:<8} {}",
            c["fingerprint"]
                .as_str()
                .unwrap()
                .chars()
                .take(60)
                .collect::<String>(),
            format!(
                "{:.3}",
                c["compare"]["comparison"]["ratio"]
                    .as_f64()
                    .unwrap_or(f64::NAN)
            ),
            format!(
                "{:.3}",
                c["compare"]["comparison"]["ci_low"]
                    .as_f64()
                    .unwrap_or(f64::NAN)
            ),
            format!(
                "{:.3}",
                c["compare"]["comparison"]["ci_high"]
                    .as_f64()
                    .unwrap_or(f64::NAN)
            ),
            c["compare"]["effect"]
        );
    }
}

/// Bad input is one line, before any server is reached: a log that is not
/// there, a --compare file that is not a replay, --concurrency 0.
#[test]
fn bad_input_is_one_line_before_connecting() {
    let state = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let log = root.join("tests/fixtures/slowlog/mysql80.log");
    let nowhere = ["--socket", "/nonexistent/mysql.sock", "--no-defaults"];
    let cases: [(Vec<String>, &str); 4] = [
        (vec!["no-such.log".into()], "no-such.log"),
        (
            vec![
                log.display().to_string(),
                "--compare".into(),
                root.join("tests/fixtures/results/slowlog.json")
                    .display()
                    .to_string(),
            ],
            "not \"replay/2\"",
        ),
        (
            vec![
                log.display().to_string(),
                "--concurrency".into(),
                "0".into(),
            ],
            "--concurrency 0",
        ),
        (
            vec![
                "-".into(),
                "--rounds".into(),
                "2".into(),
                "--preload".into(),
                "0".into(),
            ],
            "--preload 0",
        ),
    ];
    for (args, want) in cases {
        let out = innotune_in(state.path())
            .arg("replay")
            .args(&args)
            .args(nowhere)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("/nonexistent"), "{err}");
    }
}

/// `prove`/`sweep --workload replay:LOG` is not built: one line giving the
/// replay --compare recipe, before anything on the host changes.
#[test]
fn a_replay_workload_is_refused_by_prove_and_sweep() {
    let state = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    for cmd in [vec!["prove", "--change", "vm.swappiness=1"], vec!["sweep"]] {
        let out = innotune_in(state.path())
            .arg(cmd[0])
            .arg(dir.path())
            .args(&cmd[1..])
            .args(["--workload", "replay:slow.log"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{cmd:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(
            err.contains("not a trial workload") && err.contains("--compare before.json"),
            "{err}"
        );
        assert!(!state.path().join("journal.json").exists());
    }
}

/// `--speed 1` keeps the log's gaps between statements, across sessions,
/// and `--speed 2` halves them: each statement stamps the server's clock
/// (SYSDATE(6), when it runs) into a table, and the stamps' offsets from
/// the first are held against the log's own offsets.
#[test]
fn speed_1_keeps_the_logs_gaps_and_speed_2_halves_them() {
    if !support::live() {
        return;
    }
    let state = tempfile::tempdir().unwrap();
    let s = support::server();
    s.conn()
        .query_drop(
            "CREATE DATABASE pacing; CREATE TABLE pacing.t (seq INT PRIMARY KEY, at DATETIME(6) NOT NULL)",
        )
        .unwrap();
    // (session, offset ms): two sessions taking turns, gaps of 150 to 450 ms.
    let plan: [(u32, u64); 7] = [
        (8, 0),
        (9, 150),
        (8, 400),
        (9, 850),
        (8, 1000),
        (8, 1300),
        (9, 1600),
    ];
    let base_s = 1_732_550_400u64;
    let mut log = String::from("/usr/sbin/mysqld, Version: 8.0.36 (MySQL Community Server - GPL). started with:\nTcp port: 3306  Unix socket: /var/run/mysqld/mysqld.sock\nTime                 Id Command    Argument\n");
    for (seq, (id, ms)) in plan.iter().enumerate() {
        let (sec, us) = (base_s + ms / 1000, (ms % 1000) * 1000);
        log.push_str(&format!(
            "# Time: 2024-11-25T16:00:{:02}.{us:06}Z\n# User@Host: root[root] @ localhost []  Id: {id:>5}\n# Query_time: 0.000000  Lock_time: 0.000000 Rows_sent: 0  Rows_examined: 0\nuse pacing;\nSET timestamp={sec};\nINSERT INTO t VALUES ({seq}, SYSDATE(6));\n",
            sec - base_s
        ));
    }
    let path = s.parent.path().join("paced.log");
    std::fs::write(&path, log).unwrap();
    for speed in [1u64, 2] {
        s.conn().query_drop("TRUNCATE pacing.t").unwrap();
        let v = replayed(
            state.path(),
            &path,
            &["--speed", &speed.to_string()],
            &s.sock_args(),
        );
        assert_eq!(v["result"]["totals"]["errors"], 0, "{v}");
        let stamps: Vec<(u32, i64)> = s.query(
            "SELECT seq, CAST(UNIX_TIMESTAMP(at) * 1000000 AS SIGNED) FROM pacing.t ORDER BY seq",
        );
        assert_eq!(stamps.len(), plan.len());
        let first = stamps[0].1;
        eprintln!("speed {speed}: {stamps:?}");
        for ((seq, at), (_, ms)) in stamps.iter().zip(plan) {
            let got_ms = (at - first) as f64 / 1000.0;
            let want_ms = ms as f64 / speed as f64;
            eprintln!("speed {speed}: statement {seq} at {got_ms:.1} ms, log {want_ms:.1} ms");
            // The clock starts when the first connection is open, so the
            // first statement is not late by a connect and the others are
            // not early against it; late by no more than a loaded 2-CPU
            // VM's scheduling.
            assert!(
                got_ms >= want_ms - 5.0 && got_ms <= want_ms + 50.0,
                "speed {speed}: statement {seq} ran {got_ms:.1} ms after the first; the log has {want_ms:.1} ms"
            );
        }
    }
}
