//! How `innotune oltp` finds credentials (option files, MYSQL_PWD, the
//! command line) and that the password never shows in its output.

mod sandbox_support;
use mysql::prelude::Queryable;
use sandbox_support::{bin, server, TestServer};

const PW: &str = "s3cr3t-Pw_9";

fn with_app_user() -> TestServer {
    let s = server();
    let mut c = s.conn();
    c.query_drop(format!(
        "CREATE USER 'app'@'localhost' IDENTIFIED BY '{PW}'"
    ))
    .unwrap();
    c.query_drop("GRANT ALL ON *.* TO 'app'@'localhost'")
        .unwrap();
    c.query_drop("CREATE DATABASE sbtest").unwrap();
    s
}

fn assert_clean(out: &std::process::Output) {
    for s in [&out.stdout, &out.stderr] {
        let t = String::from_utf8_lossy(s);
        assert!(!t.contains(PW), "password leaked: {t}");
    }
}

/// A tiny run (cleanup of no tables) that proves we connected as `app`.
fn cleanup_cmd(s: &TestServer) -> assert_cmd::Command {
    let mut c = bin();
    c.args([
        "--format",
        "json",
        "oltp",
        "oltp_read_only",
        "cleanup",
        "--socket",
    ])
    .arg(s.socket())
    .env_remove("MYSQL_PWD");
    c
}

fn source(out: &std::process::Output) -> String {
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["result"]["endpoint"]["user"], "app");
    v["result"]["endpoint"]["password_source"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn option_file_env_and_command_line() {
    let s = with_app_user();
    let dir = tempfile::tempdir().unwrap();
    let cnf = dir.path().join("my.cnf");
    std::fs::write(
        &cnf,
        format!("[mysql]\npassword=wrong\n[client]\nuser=app\npassword=\"{PW}\"\n"),
    )
    .unwrap();

    // --defaults-file [client]; [mysql] is not read.
    let out = cleanup_cmd(&s)
        .arg(format!("--defaults-file={}", cnf.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_clean(&out);
    assert_eq!(source(&out), "option_file");
    assert!(out.stderr.is_empty(), "no warning for option files");

    // ~/.my.cnf through HOME.
    std::fs::write(
        dir.path().join(".my.cnf"),
        format!("[client]\nuser=app\npassword={PW}\n"),
    )
    .unwrap();
    let out = cleanup_cmd(&s).env("HOME", dir.path()).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(source(&out), "option_file");

    // MYSQL_PWD (lower precedence than option files, so none here).
    let out = cleanup_cmd(&s)
        .args(["--no-defaults", "--user", "app"])
        .env("MYSQL_PWD", PW)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_clean(&out);
    assert_eq!(source(&out), "env");

    // --password=X works and warns like the mysql client.
    let out = cleanup_cmd(&s)
        .args(["--no-defaults", "--user", "app"])
        .arg(format!("--password={PW}"))
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_clean(&out);
    assert_eq!(source(&out), "command_line");
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("Using a password on the command line interface can be insecure."),
        "{e}"
    );

    // Text output is clean too.
    let out = bin()
        .args(["oltp", "oltp_read_only", "cleanup", "--socket"])
        .arg(s.socket())
        .arg(format!("--defaults-file={}", cnf.display()))
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_clean(&out);
}

#[test]
fn wrong_password_and_no_server_are_one_line_errors() {
    let s = with_app_user();
    let out = cleanup_cmd(&s)
        .args(["--no-defaults", "--user", "app"])
        .env("MYSQL_PWD", "not-the-password")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(e.contains("fix: check --user and the password"), "{e}");
    assert!(!e.contains("not-the-password"));

    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .args([
            "oltp",
            "oltp_read_write",
            "run",
            "--no-defaults",
            "--socket",
        ])
        .arg(dir.path().join("nothing.sock"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(
        e.starts_with("innotune: error: cannot connect to MySQL at socket"),
        "{e}"
    );
    assert!(e.contains("fix: start the server"), "{e}");
}
