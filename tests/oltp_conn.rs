//! How `innotune oltp` finds credentials (option files, MYSQL_PWD, the
//! command line) and that the password never shows in its output.

mod support;
use mysql::prelude::Queryable;
use support::Start as _;
use support::{innotune, server, TestServer};

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
    let mut c = innotune();
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
    let out = innotune()
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
    let out = innotune()
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

/// A TCP port that accepts and never answers: one error line naming the
/// endpoint within --connect-timeout, and while the process waits its
/// /proc/PID/cmdline no longer holds the password (either spelling).
#[test]
fn silent_port_times_out_and_password_leaves_cmdline() {
    use std::time::{Duration, Instant};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    for (arg, wiped) in [
        ("-pSekr3t", "-pxxxxxx"),
        ("--password=Sekr3t", "--password=xxxxxx"),
        ("--mysql-password=Sekr3t", "--mysql-password=xxxxxx"),
    ] {
        let t0 = Instant::now();
        let child = support::innotune_sys()
            .args(["oltp", "oltp_read_only", "run", "--no-defaults", "--host"])
            .args(["127.0.0.1", "--port", &port.to_string(), "--user", "u", arg])
            .args(["--connect-timeout", "2"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .start();
        // Readiness: the process is connecting, so start-up is over.
        let (conn, _) = l.accept().unwrap();
        let cmdline = std::fs::read(format!("/proc/{}/cmdline", child.id())).unwrap();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        assert!(!cmdline.contains("Sekr3t"), "{cmdline}");
        assert!(cmdline.contains(wiped), "{cmdline}");
        let out = child.output_within(support::WAIT);
        let took = t0.elapsed();
        drop(conn);
        assert_eq!(out.status.code(), Some(2));
        assert!(took >= Duration::from_secs(2), "{took:?}");
        assert!(took < Duration::from_secs(15), "{took:?}");
        let e = String::from_utf8_lossy(&out.stderr);
        let errors: Vec<&str> = e
            .lines()
            .filter(|l| l.starts_with("innotune: error:"))
            .collect();
        assert_eq!(errors.len(), 1, "{e}");
        assert!(
            errors[0].contains(&format!("127.0.0.1:{port}"))
                && errors[0].contains("no answer within 2 s"),
            "{e}"
        );
        assert!(e.contains("Using a password on the command line"), "{e}");
        assert!(!e.contains("Sekr3t") && !String::from_utf8_lossy(&out.stdout).contains("Sekr3t"));
    }
}

/// Item 4 beyond oltp: `check`'s server connection uses the same
/// timeouts. On a port that accepts and never answers it gives up within
/// --connect-timeout with a warning naming the endpoint, and still reports
/// the host rules (it used to hang).
#[test]
fn check_gives_up_on_a_silent_port_naming_it() {
    use std::time::{Duration, Instant};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let state = tempfile::tempdir().unwrap();
    let t0 = Instant::now();
    let out = innotune()
        .env("INNOTUNE_STATE_DIR", state.path())
        .args(["--format", "json", "check", "/var/tmp", "--no-defaults"])
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["--connect-timeout", "2"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let took = t0.elapsed();
    drop(l);
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(took < Duration::from_secs(30), "{took:?}: {e}");
    assert!(
        e.contains(&format!("127.0.0.1:{port}")) && e.contains("no answer within 2 s"),
        "{e}"
    );
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{e}"));
    assert!(v["result"].is_object(), "{v:#}");
}

/// `--password X` (a space) does not make X the password, and whatever
/// the parser rejects, no error shows X.
#[test]
fn password_after_a_space_is_never_echoed() {
    for args in [
        &["oltp", "oltp_read_only", "run", "--password", "Sekr3t"][..],
        &[
            "oltp",
            "oltp_read_only",
            "run",
            "--mysql-password",
            "Sekr3t",
        ],
        &["oltp", "oltp_read_only", "run", "-p", "Sekr3t"],
    ] {
        let out = innotune().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(!e.contains("Sekr3t"), "{args:?}: {e}");
        assert_eq!(e.trim().lines().count(), 1, "{args:?}: {e}");
        assert!(e.contains("fix: write --password=VALUE"), "{e}");
    }
    // Other usage errors keep the parser's own message, without the value.
    for args in [
        &[
            "oltp",
            "oltp_read_only",
            "run",
            "-pSekr3t",
            "--no-such-flag",
        ][..],
        &[
            "sandbox",
            "start",
            "--password=Sekr3t",
            "--dir",
            "/nonexistent/x",
        ],
    ] {
        let out = innotune().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(!e.contains("Sekr3t"), "{args:?}: {e}");
        assert!(e.contains("unexpected argument"), "{e}");
    }
    // A bad --connect-timeout is one line naming the option.
    let out = innotune()
        .args([
            "oltp",
            "oltp_read_only",
            "run",
            "--no-defaults",
            "--connect-timeout",
            "0",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("--connect-timeout must be"), "{e}");
}

/// A bare `-p` prompts on the terminal, as mysql does (a real pty from
/// util-linux `script`, whose input is the typed password).
#[test]
fn bare_p_prompts_on_the_terminal() {
    if which::which("script").is_err() {
        eprintln!("util-linux script not installed; skipping");
        return;
    }
    let s = with_app_user();
    let exe = support::bin::INNOTUNE;
    let cmd = format!(
        "{} --format json oltp oltp_read_only cleanup --no-defaults --socket {} --user app -p",
        exe,
        s.socket().display()
    );
    let mut child = std::process::Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env_remove("MYSQL_PWD")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .start();
    // Type only once the prompt is there and the terminal's echo is off
    // (as a person would: the prompt precedes switching echo off by a
    // moment).
    let mut stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
    let reader = std::thread::spawn(move || {
        use std::io::Read;
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut seen = Vec::new();
    while !String::from_utf8_lossy(&seen).contains("Enter password:") {
        let chunk = rx
            .recv_timeout(std::time::Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("no prompt: {}", String::from_utf8_lossy(&seen)));
        seen.extend(chunk);
    }
    let spid = child.id();
    let kid = std::fs::read_to_string(format!("/proc/{spid}/task/{spid}/children")).unwrap();
    let kid = kid
        .split_whitespace()
        .next()
        .expect("script has no child")
        .to_string();
    let tty = std::fs::read_link(format!("/proc/{kid}/fd/0")).unwrap();
    let t0 = std::time::Instant::now();
    loop {
        let st = std::process::Command::new("stty")
            .arg("-F")
            .arg(&tty)
            .arg("-a")
            .output()
            .unwrap();
        if String::from_utf8_lossy(&st.stdout)
            .split_whitespace()
            .any(|f| f == "-echo")
        {
            break;
        }
        assert!(t0.elapsed().as_secs() < 30, "echo never went off");
        std::thread::yield_now();
    }
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(format!("{PW}\n").as_bytes()).unwrap();
    }
    let status = child.wait_within(support::WAIT);
    reader.join().unwrap();
    seen.extend(rx.try_iter().flatten());
    let text = String::from_utf8_lossy(&seen);
    assert!(status.success(), "{text}");
    assert!(text.contains("\"password_source\": \"prompt\""), "{text}");
    assert!(
        !text.contains(PW),
        "the typed password is not echoed: {text}"
    );
}

/// A MySQL 10 greeting (MariaDB-style), as a packet with its header.
fn greeting() -> Vec<u8> {
    let mut p = vec![10u8];
    p.extend_from_slice(b"5.5.5-10.11.0-MariaDB\0");
    p.extend_from_slice(&7u32.to_le_bytes());
    p.extend_from_slice(b"abcdefgh\0");
    p.extend_from_slice(&0xf7feu16.to_le_bytes());
    p.push(0x21);
    p.extend_from_slice(&2u16.to_le_bytes());
    p.extend_from_slice(&0x81bfu16.to_le_bytes());
    p.push(21);
    p.extend_from_slice(&[0; 10]);
    p.extend_from_slice(b"ijklmnopqrst\0");
    p.extend_from_slice(b"mysql_native_password\0");
    let mut out = (p.len() as u32).to_le_bytes()[..3].to_vec();
    out.push(0);
    out.extend(p);
    out
}

/// Issue 39, item 9: a server that sends its greeting one byte every
/// 250 ms passed every per-read timeout, so `--connect-timeout 2` took
/// the whole greeting's time (≈ 25 s) and more. The timeout now bounds
/// the connect, handshake and login together: the run ends within a few
/// seconds (a deadline on the child: past it, the test fails as hung).
#[test]
fn connect_timeout_bounds_a_greeting_trickled_byte_by_byte() {
    use std::io::Write;
    use std::time::{Duration, Instant};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let trickler = std::thread::spawn(move || {
        let (mut conn, _) = l.accept().unwrap();
        // The trickle is what is under test, not a synchronisation: each
        // byte arrives well within any per-read timeout.
        for b in greeting() {
            if conn.write_all(&[b]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    });
    let t0 = Instant::now();
    let child = support::innotune_sys()
        .args(["oltp", "oltp_read_only", "run", "--no-defaults", "--host"])
        .args(["127.0.0.1", "--port", &port.to_string(), "--user", "u"])
        .args(["--connect-timeout", "2"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .start();
    let out = child.output_within(Duration::from_secs(12));
    let took = t0.elapsed();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(took >= Duration::from_secs(2), "{took:?}");
    assert!(took < Duration::from_secs(8), "{took:?}: {e}");
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(
        e.contains(&format!("127.0.0.1:{port}")) && e.contains("no answer within 2 s"),
        "{e}"
    );
    trickler.join().unwrap();
}

/// Issue 39: a port that speaks another protocol (an HTTP server's
/// answer) gave `CodecError { … max_allowed_packet }` and "start the
/// server". Now: that address did not answer as a MySQL/MariaDB server,
/// and the fix points at --host/--port.
#[test]
fn a_port_that_speaks_another_protocol_is_named_as_such() {
    use std::io::Write;
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let (mut conn, _) = l.accept().unwrap();
        let _ = conn.write_all(
            b"HTTP/1.1 400 Bad Request\r\nContent-Length: 11\r\nConnection: close\r\n\r\nBad Request",
        );
        // Keep the connection open until innotune hangs up.
        let mut buf = [0u8; 64];
        use std::io::Read;
        while matches!(conn.read(&mut buf), Ok(n) if n > 0) {}
    });
    let out = innotune()
        .args(["oltp", "oltp_read_only", "run", "--no-defaults", "--host"])
        .args(["127.0.0.1", "--port", &port.to_string(), "--user", "u"])
        .args(["--connect-timeout", "5"])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(
        e.contains(&format!(
            "127.0.0.1:{port} did not answer as a MySQL/MariaDB server"
        )),
        "{e}"
    );
    assert!(e.contains("fix: point --host and --port"), "{e}");
    assert!(
        !e.contains("max_allowed_packet") && !e.contains("start the server"),
        "{e}"
    );
    server.join().unwrap();
}
