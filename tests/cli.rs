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

/// Issue 39, item 1: `--output /dev/null` replaced the device with a
/// regular file (exit 0). Never tried on the real /dev/null: a device node
/// of our own (the same 1:3, made with mknod as root), a FIFO and symbolic
/// links to them in a temporary directory. Each is refused in one line
/// naming the fix, exit 2, and left exactly as it was; a regular file and
/// a new name are still written.
#[test]
fn output_writes_only_regular_files() {
    use rustix::fs::{mknodat, FileType, Mode, CWD};
    use std::os::unix::fs::FileTypeExt;
    let root =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts/nvme-ssd");
    let state = tempfile::tempdir().unwrap();
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("fifo");
    mknodat(CWD, &fifo, FileType::Fifo, Mode::from_raw_mode(0o600), 0).unwrap();
    let mut refused = vec![
        (fifo.clone(), "a FIFO"),
        (d.path().to_path_buf(), "a directory"),
    ];
    let null = d.path().join("null");
    // Only root may make a device node; as another user the FIFO and the
    // links still show the rule.
    if mknodat(
        CWD,
        &null,
        FileType::CharacterDevice,
        Mode::from_raw_mode(0o666),
        rustix::fs::makedev(1, 3),
    )
    .is_ok()
    {
        refused.push((null.clone(), "a character device"));
        let link = d.path().join("to-null");
        std::os::unix::fs::symlink(&null, &link).unwrap();
        refused.push((link, "a symbolic link"));
    }
    let stdout_link = d.path().join("stdout");
    std::os::unix::fs::symlink("/proc/self/fd/1", &stdout_link).unwrap();
    refused.push((stdout_link.clone(), "a symbolic link"));
    let run = |out: &std::path::Path| {
        innotune()
            .env("INNOTUNE_STATE_DIR", state.path())
            .arg("--root")
            .arg(&root)
            .args(["probe", "--format", "json", "--output"])
            .arg(out)
            .output()
            .unwrap()
    };
    for (p, what) in &refused {
        let o = run(p);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{p:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
        assert!(err.contains(what), "{p:?}: {err}");
        if *what != "a directory" {
            assert!(err.contains("omit --output to write to stdout"), "{err}");
        }
        assert!(o.stdout.is_empty());
    }
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    if null.exists() {
        let t = std::fs::symlink_metadata(&null).unwrap().file_type();
        assert!(t.is_char_device(), "the device node was replaced");
        assert!(std::fs::symlink_metadata(d.path().join("to-null"))
            .unwrap()
            .file_type()
            .is_symlink());
    }
    assert_eq!(
        std::fs::read_link(&stdout_link).unwrap(),
        std::path::Path::new("/proc/self/fd/1")
    );
    let file = d.path().join("probe.json");
    for _ in 0..2 {
        // Created, then replaced.
        assert_eq!(run(&file).status.code(), Some(0));
        assert!(std::fs::read_to_string(&file).unwrap().contains("probe/2"));
    }
    let mut names: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(
        names.iter().all(|n| !n.contains("innotune-tmp")),
        "temporary files left: {names:?}"
    );
}

/// Issue 46: argument errors were clap's multi-line `error:` text. Every
/// usage error is now one line, `innotune: error: … (fix: …)`, exit 2,
/// naming the help of the command it came from; help and version stay
/// clap's own output.
#[test]
fn usage_errors_are_one_line_naming_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["tune", "--budget", "10s", d],
            &[
                "'10s'",
                "--budget",
                "shorter than 40 s",
                "`innotune tune --help`",
            ],
        ),
        (
            &[
                "bench",
                "--rw",
                "randread",
                "--runtime",
                "-1",
                "--directory",
                d,
            ],
            &["--runtime", "\"-1\"", "zero or more"],
        ),
        (
            &["probe", "--no-such-flag"],
            &["'--no-such-flag'", "`innotune probe --help`"],
        ),
        (
            &["--format", "yaml", "probe"],
            &["'yaml'", "use one of text, json", "`innotune probe --help`"],
        ),
        (
            &["sweep", "--rounds", "x", d],
            &["'x'", "--rounds", "`innotune sweep --help`"],
        ),
        (&["frob"], &["'frob'", "'probe'", "`innotune --help`"]),
        (
            &["oltp", "oltp_read_write"],
            &["<COMMAND>", "`innotune oltp --help`"],
        ),
        (
            &["sandbox", "status", "--bogus"],
            &["'--bogus'", "`innotune sandbox status --help`"],
        ),
    ];
    for (args, wants) in cases {
        let out = innotune()
            .env("INNOTUNE_STATE_DIR", dir.path())
            .args(*args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: stdout {:?}", out.stdout);
        assert_eq!(err.lines().count(), 1, "{args:?}: not one line: {err}");
        assert!(
            err.starts_with("innotune: error: ") && err.contains(" (fix: "),
            "{args:?}: {err}"
        );
        for w in *wants {
            assert!(err.contains(w), "{args:?}: {err} lacks {w}");
        }
        assert!(!err.contains("Usage:") && !err.contains("For more information"));
    }
    // Help stays clap's: several lines on stdout, exit 0; a bare command
    // shows its help on stderr with exit 2.
    let help = innotune().args(["sweep", "--help"]).output().unwrap();
    assert_eq!(help.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&help.stdout).contains("Usage: innotune sweep"));
    let bare = innotune().output().unwrap();
    assert_eq!(bare.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bare.stderr).contains("Usage: innotune"));
}
