//! `innotune sandbox` on a real mariadbd/mysqld: start, status, stop,
//! --keep, free port, profiles, cleanup on failure.

mod support;
use innotune::sandbox::{Profile, Sandbox, SandboxOpts};
use mysql::prelude::Queryable;
use serde_json::Value;
use std::path::Path;
use support::innotune;

/// Stops a CLI-started sandbox if the test fails before `stop`.
struct CliGuard<'a>(&'a Path);
impl Drop for CliGuard<'_> {
    fn drop(&mut self) {
        if self.0.join("innotune-sandbox.json").exists() {
            let _ = innotune()
                .args(["sandbox", "stop", "--dir"])
                .arg(self.0)
                .output();
        }
    }
}

fn pid_alive(pid: u64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.rsplit_once(')').unwrap().1.trim_start().starts_with('Z'))
        .unwrap_or(false)
}

fn json(out: &[u8]) -> Value {
    serde_json::from_slice::<Value>(out).unwrap()["result"].clone()
}

#[test]
fn cli_start_status_stop_removes_dir() {
    let parent = tempfile::tempdir_in("/tmp").unwrap();
    let dir = parent.path().join("sb");
    let _g = CliGuard(&dir);
    let out = innotune()
        .args(["--format", "json", "sandbox", "start", "--dir"])
        .arg(&dir)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let r = json(&out);
    let pid = r["pid"].as_u64().unwrap();
    let port = r["port"].as_u64().unwrap();
    assert!(pid_alive(pid));
    assert_ne!(port, 3306, "must never take the system server's port");
    assert_eq!(r["socket"], dir.join("mysql.sock").display().to_string());
    // The port really is the server's, on 127.0.0.1 only.
    let mut c = mysql::Conn::new(
        mysql::OptsBuilder::new()
            .ip_or_hostname(Some("127.0.0.1"))
            .tcp_port(port as u16)
            .user(Some("nobody"))
            .prefer_socket(false),
    );
    // Connecting over TCP reaches the server (auth fails, the server answered).
    match &mut c {
        Err(mysql::Error::MySqlError(e)) => assert!(e.code == 1045 || e.code == 1130, "{e}"),
        Ok(_) => {}
        Err(e) => panic!("port {port} is not the sandbox: {e}"),
    }
    // Over the socket as root.
    let spec = innotune::db::ConnSpec::socket(dir.join("mysql.sock"), "root");
    let v: String = spec
        .connect()
        .unwrap()
        .query_first("SELECT @@port")
        .unwrap()
        .unwrap();
    assert_eq!(v, port.to_string());

    let out = innotune()
        .args(["--format", "json", "sandbox", "status", "--dir"])
        .arg(&dir)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let s = json(&out);
    assert_eq!(s["running"], true);
    assert_eq!(s["pid"].as_u64(), Some(pid));
    assert!(s["version"]
        .as_str()
        .unwrap()
        .chars()
        .next()
        .unwrap()
        .is_ascii_digit());

    let text = innotune()
        .args(["sandbox", "stop", "--dir"])
        .arg(&dir)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert!(String::from_utf8_lossy(&text).contains("stopped and removed"));
    assert!(!dir.exists(), "stop removes DIR");
    assert!(!pid_alive(pid), "server process is gone");
    // Status of a removed sandbox is an error naming the fix.
    let e = innotune()
        .args(["sandbox", "status", "--dir"])
        .arg(&dir)
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let e = String::from_utf8_lossy(&e);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(e.contains("fix:"), "{e}");
}

#[test]
fn keep_preserves_data_and_restart_reuses_it() {
    let parent = tempfile::tempdir_in("/tmp").unwrap();
    let dir = parent.path().join("sb");
    let mut o = SandboxOpts::new(&dir);
    o.keep = true;
    let sb = Sandbox::start(o.clone()).unwrap();
    let pid = sb.pid();
    sb.conn_spec()
        .connect()
        .unwrap()
        .query_drop("CREATE DATABASE kept_db")
        .unwrap();
    sb.stop().unwrap();
    assert!(!pid_alive(pid.into()));
    assert!(dir.join("data").is_dir(), "--keep leaves the data");
    // Status of a kept, stopped sandbox: not running, exit 1.
    let out = innotune()
        .args(["--format", "json", "sandbox", "status", "--dir"])
        .arg(&dir)
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let st = json(&out);
    assert_eq!(st["running"], false);
    assert!(st["pid"].is_null());
    // Starting again in the kept DIR reuses the data directory.
    o.keep = false;
    let sb = Sandbox::start(o).unwrap();
    let dbs: Vec<String> = sb
        .conn_spec()
        .connect()
        .unwrap()
        .query("SHOW DATABASES")
        .unwrap();
    assert!(dbs.contains(&"kept_db".to_string()), "{dbs:?}");
    drop(sb); // Drop stops and, without keep, removes DIR.
    assert!(!dir.exists());
}

#[test]
fn two_sandboxes_get_distinct_free_ports_and_profiles_apply() {
    let parent = tempfile::tempdir_in("/tmp").unwrap();
    let prof = parent.path().join("vars.cnf");
    std::fs::write(
        &prof,
        "[mysqld]\n# test profile\ninnodb_io_capacity = 777\nmax-connections=77\n",
    )
    .unwrap();
    let mut a = SandboxOpts::new(parent.path().join("a"));
    a.profile = Profile::parse(prof.to_str().unwrap()).unwrap();
    let mut b = SandboxOpts::new(parent.path().join("b"));
    b.profile = Profile::parse("before").unwrap();
    let (sa, sbx) = (Sandbox::start(a).unwrap(), Sandbox::start(b).unwrap());
    assert_ne!(sa.port(), sbx.port());
    let (io, mc): (u64, u64) = sa
        .conn_spec()
        .connect()
        .unwrap()
        .query_first("SELECT @@innodb_io_capacity, @@max_connections")
        .unwrap()
        .unwrap();
    assert_eq!((io, mc), (777, 77));
    let (fm, lfs): (String, u64) = sbx
        .conn_spec()
        .connect()
        .unwrap()
        .query_first("SELECT @@innodb_flush_method, @@innodb_log_file_size")
        .unwrap()
        .unwrap();
    assert_eq!(fm.to_lowercase(), "fsync");
    assert_eq!(lfs, 48 << 20);
}

#[test]
fn bad_profile_fails_with_log_tail_and_cleans_up() {
    let parent = tempfile::tempdir_in("/tmp").unwrap();
    let prof = parent.path().join("bad.cnf");
    std::fs::write(&prof, "innodb_no_such_variable = 1\n").unwrap();
    let dir = parent.path().join("sb");
    let _g = CliGuard(&dir);
    let out = innotune()
        .args(["sandbox", "start", "--timeout", "60", "--profile"])
        .arg(&prof)
        .arg("--dir")
        .arg(&dir)
        .assert()
        .code(2)
        .get_output()
        .clone();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(
        e.contains("innodb_no_such_variable") || e.contains("unknown variable"),
        "{e}"
    );
    assert!(!dir.exists(), "a failed start leaves nothing behind");
}

#[test]
fn refuses_non_empty_dir_and_unknown_profile() {
    let parent = tempfile::tempdir_in("/tmp").unwrap();
    std::fs::write(parent.path().join("precious"), "x").unwrap();
    let e = innotune()
        .args(["sandbox", "start", "--dir"])
        .arg(parent.path())
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    assert!(String::from_utf8_lossy(&e).contains("not empty"));
    assert!(parent.path().join("precious").exists());
    let e = innotune()
        .args(["sandbox", "start", "--profile", "no-such-profile", "--dir"])
        .arg(parent.path().join("x"))
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    assert!(String::from_utf8_lossy(&e).contains("fix: use --profile default, before, after"));
}

/// Every sandbox has room for 1024 client threads.
#[test]
fn default_profile_sizes_for_1024_threads() {
    let parent = tempfile::tempdir_in("/tmp").unwrap();
    let sb = Sandbox::start(SandboxOpts::new(parent.path().join("sb"))).unwrap();
    let (mc, ps): (u64, u64) = sb
        .conn_spec()
        .connect()
        .unwrap()
        .query_first("SELECT @@max_connections, @@max_prepared_stmt_count")
        .unwrap()
        .unwrap();
    assert!(mc > innotune::sandbox::CAPACITY_THREADS, "{mc}");
    assert!(ps >= 1024 * (2 + 9 * 10), "{ps}");
}

// A --dir in or around a datadir: tests/datadir_refusal.rs (a throwaway
// server run by `nobody`, and option files under --root), never this
// host's own server's datadir.

/// `stop --keep` keeps DIR once; a later plain `stop` (after a restart,
/// or of the kept, stopped sandbox) removes it.
#[test]
fn keep_does_not_stick() {
    let parent = tempfile::tempdir_in("/tmp").unwrap();
    let dir = parent.path().join("sb");
    let _g = CliGuard(&dir);
    let cli = |args: &[&str]| {
        innotune()
            .args(args)
            .arg("--dir")
            .arg(&dir)
            .assert()
            .success()
    };
    cli(&["sandbox", "start"]);
    cli(&["sandbox", "stop", "--keep"]);
    assert!(dir.join("data").is_dir());
    cli(&["sandbox", "start"]);
    cli(&["sandbox", "stop"]);
    assert!(
        !dir.exists(),
        "stop after a stop --keep / start cycle removes DIR"
    );
    cli(&["sandbox", "start"]);
    cli(&["sandbox", "stop", "--keep"]);
    let out = cli(&["sandbox", "stop"]).get_output().stdout.clone();
    assert!(String::from_utf8_lossy(&out).contains("stopped and removed"));
    assert!(!dir.exists(), "a plain stop of a kept sandbox removes it");
    // start --keep is kept by a plain stop of that server.
    cli(&["sandbox", "start", "--keep"]);
    cli(&["sandbox", "stop"]);
    assert!(dir.join("data").is_dir());
    cli(&["sandbox", "stop"]);
    assert!(!dir.exists());
}

#[test]
fn help_has_examples_and_true_dir_text() {
    let help = |args: &[&str]| {
        String::from_utf8(
            innotune()
                .args(args)
                .assert()
                .success()
                .get_output()
                .stdout
                .clone(),
        )
        .unwrap()
    };
    assert!(help(&["sandbox", "--help"]).contains("Examples:"));
    let start = help(&["sandbox", "start", "--help"]);
    assert!(start.contains("Examples:") && start.contains("must be empty or absent"));
    for cmd in ["stop", "status"] {
        let h = help(&["sandbox", cmd, "--help"]);
        assert!(!h.contains("must be empty or absent"), "{cmd}: {h}");
        assert!(h.contains("Example"), "{cmd}: {h}");
    }
}
