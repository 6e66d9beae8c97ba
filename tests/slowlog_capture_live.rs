//! `innotune slowlog --capture` against a throwaway sandbox (never the
//! server at 3306): the window logs every statement, the variables are
//! back afterwards, Ctrl-C ends the window early and still restores, and
//! a SIGKILLed capture is put back by `innotune restore`.

mod support;

use mysql::prelude::Queryable;
use serde_json::Value;
use std::process::Stdio;
use std::time::Duration;
use support::{innotune_in, innotune_sys, wait_for, Start, TestServer};

/// The variables a capture changes, as the sandbox holds them.
fn logging(s: &TestServer) -> [String; 2] {
    [s.var("long_query_time"), s.var("slow_query_log")]
}

fn capture(s: &TestServer, state: &std::path::Path, window: &str) -> support::Spawned {
    let mut c = innotune_sys();
    c.env("INNOTUNE_STATE_DIR", state)
        .args(["--format", "json", "slowlog", "--capture", window])
        .args(s.sock_args())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c.start()
}

/// Marked statements run in a session opened during the window are in
/// the window's bytes of the log; one run after it is not; every
/// variable holds its value from before.
#[test]
fn a_capture_logs_the_window_and_puts_every_variable_back() {
    if !support::live() {
        return;
    }
    let state = tempfile::tempdir().unwrap();
    let s = support::server();
    let before = logging(&s);
    assert_eq!(before[1], "OFF", "the sandbox starts with its slow log off");
    let child = capture(&s, state.path(), "10m");
    wait_for("long_query_time = 0", support::WAIT, || {
        s.var("long_query_time").parse::<f64>() == Ok(0.0)
    });
    {
        let mut c = s.conn();
        for i in 0..25 {
            let _: Vec<u64> = c.query(format!("SELECT {i} AS capture_probe")).unwrap();
        }
    }
    // Ctrl-C ends the window now (not after 10 minutes) and restores.
    child.signal(libc::SIGINT);
    let out = child.output_within(Duration::from_secs(60));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(logging(&s), before);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema"], "slowlog-capture/2");
    let r = &v["result"];
    assert_eq!(r["interrupted"], true, "{r}");
    assert_eq!(r["restored"], true, "{r}");
    assert!(r["window_s"].as_f64().unwrap() < 600.0, "{r}");
    let names: Vec<&str> = r["variables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"long_query_time") && names.contains(&"slow_query_log"));
    for v in r["variables"].as_array().unwrap() {
        assert_eq!(v["before"], v["after"], "{v}");
    }
    assert!(r["entries"].as_u64().unwrap() >= 25, "{r}");
    // The window's bytes hold the probes, once each.
    let log = std::fs::read(r["log_file"].as_str().unwrap()).unwrap();
    let (a, b) = (
        r["start_offset_bytes"].as_u64().unwrap() as usize,
        r["end_offset_bytes"].as_u64().unwrap() as usize,
    );
    let window = String::from_utf8_lossy(&log[a..b]);
    for i in 0..25 {
        assert_eq!(
            window
                .matches(&format!("SELECT {i} AS capture_probe;"))
                .count(),
            1,
            "{i}"
        );
    }
    // After the window: not logged.
    let _: Vec<u64> = s.conn().query("SELECT 99 AS after_window").unwrap();
    let log = std::fs::read(r["log_file"].as_str().unwrap()).unwrap();
    assert!(!String::from_utf8_lossy(&log).contains("after_window"));
    // `innotune slowlog` digests the cut-out window: the probes are one class of 25.
    let cut = state.path().join("window.log");
    std::fs::write(&cut, &log[a..b]).unwrap();
    let d = innotune_in(state.path())
        .args(["--format", "json", "slowlog", "--top", "0"])
        .arg(&cut)
        .output()
        .unwrap();
    assert!(d.status.success());
    let d: Value = serde_json::from_slice(&d.stdout).unwrap();
    let probes = d["result"]["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["fingerprint"] == "select ? as capture_probe")
        .unwrap_or_else(|| panic!("{d}"));
    assert_eq!(probes["count"], 25);
}

/// Killed with SIGKILL mid-window, the capture leaves its journal:
/// `innotune restore` puts the variables back.
#[test]
fn a_killed_capture_is_put_back_by_restore() {
    if !support::live() {
        return;
    }
    let state = tempfile::tempdir().unwrap();
    let s = support::server();
    let before = logging(&s);
    let child = capture(&s, state.path(), "10m");
    wait_for("long_query_time = 0", support::WAIT, || {
        s.var("long_query_time").parse::<f64>() == Ok(0.0)
    });
    child.kill_now();
    assert_ne!(
        logging(&s),
        before,
        "nothing restores a SIGKILLed run by itself"
    );
    support::restore(state.path());
    assert_eq!(logging(&s), before);
}

/// Bad use is one line before any server is reached.
#[test]
fn capture_flags_are_checked_first() {
    let state = tempfile::tempdir().unwrap();
    let nowhere = ["--socket", "/nonexistent/mysql.sock", "--no-defaults"];
    for (args, want) in [
        (vec!["--capture", "0s"], "outside 1s..24h"),
        (vec!["--capture", "soon"], "not a duration"),
        (vec!["x.log", "--capture", "60s"], "cannot be used with"),
        (
            vec!["x.log", "--socket", "/tmp/s.sock"],
            "connection options are for --capture",
        ),
    ] {
        let out = innotune_in(state.path())
            .arg("slowlog")
            .args(&args)
            .args(if args.contains(&"--socket") {
                &[][..]
            } else {
                &nowhere[..]
            })
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
    }
}
