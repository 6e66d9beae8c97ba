//! Behaviour every command shares: exit codes, one-line errors, help.

mod support;
use support::innotune;

use predicates::prelude::*;

#[test]
fn help_lists_every_command_and_exit_codes() {
    let out = innotune().arg("--help").assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    for cmd in [
        "probe", "bench", "sweep", "oltp", "sandbox", "checksum", "restore",
    ] {
        assert!(text.contains(cmd), "help lacks {cmd}: {text}");
    }
    assert!(text.contains("Exit codes"));
    // --root is for fixture replay, not for users' eyes.
    assert!(!text.contains("--root"));
}

#[test]
fn unknown_flag_is_a_usage_error_with_exit_2() {
    innotune()
        .args(["probe", "--no-such-flag"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--no-such-flag"));
}

#[test]
fn bad_format_value_is_exit_2() {
    innotune()
        .args(["--format", "yaml", "probe"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("yaml"));
}

#[test]
fn version_prints_and_exits_0() {
    innotune()
        .arg("--version")
        .assert()
        .success()
        .stdout(predicate::str::contains(env!("CARGO_PKG_VERSION")));
}
