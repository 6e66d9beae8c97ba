//! The test-support children behave the same however the test runner was
//! started. A runner started from a background shell (`.ci/run &`)
//! inherits SIGINT as ignored, and so did every child a test started:
//! bench_lib_live sent SIGINT to a `bash` child and waited for it forever.
//! Here the runner itself is started with SIGINT ignored (`env
//! --ignore-signal=INT`) to run the child-waiting check, which must end
//! and pass; and a wait on a child that never ends fails, naming it.
//! Needs bash and GNU env (coreutils 8.31+), no root.

mod support;

use std::process::Stdio;
use std::time::{Duration, Instant};
use support::{spawn, sys, WAIT};

/// Set by the outer check for its inner run of this binary.
const UNDER_IGNORED: &str = "INNOTUNE_TEST_UNDER_IGNORED_SIGINT";

/// The shape of bench_lib_live's `dies_clean`: a bash script that says
/// READY and then blocks on its stdin, which the test holds open, is sent
/// SIGINT and waited for. It must die of SIGINT.
#[test]
fn a_blocked_child_dies_of_sigint() {
    if std::env::var_os(UNDER_IGNORED).is_some() {
        // Proof that this run really is under an ignoring runner.
        assert!(
            support::proc::ignored(libc::SIGINT),
            "the runner was meant to ignore SIGINT"
        );
    }
    let mut child = spawn(
        sys("bash")
            .args(["-c", "echo READY; read -r _"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped()),
    );
    let stdin = child.stdin.take();
    let lines = child.stdout_lines();
    assert_eq!(lines.next_within(WAIT).as_deref(), Some("READY"));
    child.signal(libc::SIGINT);
    let st = child.wait_within(Duration::from_secs(30));
    drop(stdin);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(st.signal(), Some(libc::SIGINT), "{st}");
}

/// The check above, in this same test binary run with SIGINT ignored:
/// without the reset in the child it is killed at its 30 s deadline and
/// fails; with it, it passes at once.
#[test]
fn the_child_check_passes_under_a_runner_that_ignores_sigint() {
    if std::env::var_os(UNDER_IGNORED).is_some() {
        return;
    }
    let me = std::env::current_exe().unwrap();
    let t0 = Instant::now();
    let out = spawn(
        sys("env")
            .args(["--ignore-signal=INT"])
            .arg(&me)
            .args([
                "--exact",
                "a_blocked_child_dies_of_sigint",
                "--test-threads=1",
            ])
            .env(UNDER_IGNORED, "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    )
    .output_within(WAIT);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("1 passed"), "{text}");
    assert!(t0.elapsed() < Duration::from_secs(30), "{text}");
}

/// A wait on a child that does not end is bounded: the child is killed
/// and the test fails with a message naming the command.
#[test]
fn a_wait_past_its_deadline_kills_the_child_and_names_it() {
    let mut child = spawn(
        sys("bash")
            .args(["-c", "read -r _"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped()),
    );
    let pid = child.id();
    let _stdin = child.stdin.take();
    let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        child.wait_within(Duration::from_millis(200))
    }))
    .expect_err("the wait was meant to time out");
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        msg.contains("`bash -c read -r _` was still running after 0.2 s: killed it"),
        "{msg}"
    );
    // Killed and reaped: no such process any more.
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
}
