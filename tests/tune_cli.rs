//! `innotune tune` input errors: each is one line on stderr naming the
//! fix, exit 2, before anything is created or changed (no journal, no
//! report directory). Nothing here switches a device.

mod support;

use std::path::Path;

fn tune(state: &Path, args: &[&str]) -> (i32, String, String) {
    let out = support::innotune()
        .env("INNOTUNE_STATE_DIR", state)
        .arg("tune")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_refused(state: &Path, args: &[&str], needle: &str) {
    let (code, stdout, stderr) = tune(state, args);
    assert_eq!(code, 2, "{args:?}: {stderr}");
    assert!(stdout.is_empty(), "{args:?}: stdout {stdout}");
    assert!(stderr.contains(needle), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    assert!(
        !state.join("journal.json").exists(),
        "{args:?} left a journal"
    );
}

#[test]
fn bad_options_are_one_line_and_change_nothing() {
    let state = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().to_str().unwrap();
    assert_refused(state.path(), &[p, "--budget", "5s"], "shorter than 40 s");
    assert_refused(state.path(), &[p, "--budget", "abc"], "--budget");
    assert_refused(state.path(), &[p, "--budget", "0"], "shorter than 40 s");
    assert_refused(state.path(), &[p, "--budget", "3d"], "longer than a day");
    assert_refused(
        state.path(),
        &[p, "--quick", "--budget", "2m"],
        "cannot be used with",
    );
    assert_refused(state.path(), &[p, "--threads", "0"], "--threads");
    assert_refused(state.path(), &[p, "--threads", "4,x"], "--threads");
    assert_refused(
        state.path(),
        &["/nonexistent/innotune-tune-test", "--quick"],
        "/nonexistent/innotune-tune-test",
    );
}

#[test]
fn out_must_be_new_or_empty() {
    let state = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    std::fs::write(out.path().join("keep.txt"), "mine").unwrap();
    let o = out.path().to_str().unwrap();
    assert_refused(
        state.path(),
        &[dir.path().to_str().unwrap(), "--quick", "--out", o],
        "not an empty directory",
    );
    // Untouched: the one file, nothing added.
    let names: Vec<_> = std::fs::read_dir(out.path()).unwrap().collect();
    assert_eq!(names.len(), 1);
    // A file in place of the directory is refused as well.
    let f = out.path().join("keep.txt");
    assert_refused(
        state.path(),
        &[
            dir.path().to_str().unwrap(),
            "--quick",
            "--out",
            f.to_str().unwrap(),
        ],
        "not an empty directory",
    );
}

#[test]
fn replayed_hosts_are_refused() {
    let state = tempfile::tempdir().unwrap();
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/hosts");
    let host = std::fs::read_dir(root)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let out = support::innotune()
        .env("INNOTUNE_STATE_DIR", state.path())
        .args(["--root", host.to_str().unwrap(), "tune", "/var/lib/mysql"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("tune measures this machine"), "{e}");
    assert!(e.contains("fix: drop --root"), "{e}");
}

/// Issue 46: tune had no `--device`, so on a loop filesystem it switched
/// the disk under the backing file too. A name that is not a device under
/// PATH with a scheduler is refused up front (one line listing the ones
/// there are), before a journal or a report directory exists.
#[test]
fn device_must_be_under_the_path() {
    let state = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let (code, stdout, stderr) = tune(
        state.path(),
        &[
            dir.path().to_str().unwrap(),
            "--quick",
            "--device",
            "innotune-no-such-dev",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("innotune-no-such-dev is not a device"),
        "{stderr}"
    );
    assert!(!out.exists(), "report directory made before the refusal");
    assert!(!state.path().join("journal.json").exists());
    let (_, help, _) = tune(state.path(), &["--help"]);
    assert!(help.contains("--device <NAME,...>"), "{help}");
}

/// `tune --search` refusals: one error line each, exit 2, before any
/// sandbox, journal or switch. (No server binary is the same kind of line,
/// "needs a server binary for its sandbox"; it cannot be provoked on a
/// host that has one, since the sandbox looks in /usr/sbin too.)
#[test]
fn search_bad_input_is_one_line_and_changes_nothing() {
    let state = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().to_str().unwrap();
    let one_line = |args: &[&str], needle: &str| {
        assert_refused(state.path(), args, needle);
        let (_, _, stderr) = tune(state.path(), args);
        let errors = stderr
            .lines()
            .filter(|l| l.starts_with("innotune: error:") || l.starts_with("error:"))
            .count();
        assert_eq!(errors, 1, "{args:?}: {stderr}");
        assert!(
            std::fs::read_dir(dir.path()).unwrap().next().is_none(),
            "{args:?} left files in {p}"
        );
    };
    one_line(
        &[p, "--search", "--budget", "1m"],
        "too small for one confirmed comparison: tune --search needs at least 2m",
    );
    one_line(&[p, "--search", "--quick"], "--quick and --search");
    one_line(
        &[p, "--search", "--budget", "3m", "--threads", "1,8"],
        "one thread count",
    );
    one_line(
        &[p, "--search", "--budget", "3m", "--no-oltp"],
        "--no-oltp and --search",
    );
    one_line(
        &[
            p,
            "--search",
            "--budget",
            "3m",
            "--socket",
            "/nonexistent/innotune.sock",
        ],
        "/nonexistent/innotune.sock",
    );
    let out = support::innotune()
        .env("INNOTUNE_STATE_DIR", state.path())
        .args(["--root", p, "tune", p, "--search"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("measures this machine"), "{err}");
}
