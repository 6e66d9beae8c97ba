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
    // Status of a removed sandbox: gone, not running (exit 1).
    let out = innotune()
        .args(["sandbox", "status", "--dir"])
        .arg(&dir)
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    assert!(String::from_utf8_lossy(&out).contains("gone:"));
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

/// Issue 46: a kept sandbox started again without `--profile` went back
/// to `default` on a new port, and its my.cnf carried a placeholder
/// comment. It now keeps the profile (its variables, as the server shows)
/// and the port it had; `--profile` still chooses.
#[test]
fn kept_sandbox_restarts_with_its_profile_and_port() {
    let parent = tempfile::tempdir_in("/tmp").unwrap();
    let dir = parent.path().join("sb");
    let _g = CliGuard(&dir);
    let start = |extra: &[&str]| {
        let out = innotune()
            .args(["--format", "json", "sandbox", "start", "--dir"])
            .arg(&dir)
            .args(extra)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        json(&out)
    };
    let stop_keep = || {
        innotune()
            .args(["sandbox", "stop", "--keep", "--dir"])
            .arg(&dir)
            .assert()
            .success();
    };
    // `before` sets a 48M redo log; the servers' defaults are larger.
    let redo = || -> u64 {
        let mut c = innotune::db::ConnSpec::socket(dir.join("mysql.sock"), "root")
            .connect()
            .unwrap();
        c.query_first("SELECT @@innodb_log_file_size")
            .unwrap()
            .unwrap()
    };
    let first = start(&["--profile", "before"]);
    let port = first["port"].as_u64().unwrap();
    assert_eq!(first["profile"], "before");
    assert_eq!(redo(), 48 << 20);
    let cnf = std::fs::read_to_string(dir.join("my.cnf")).unwrap();
    assert!(cnf.contains("# Room for 1024 client threads"), "{cnf}");
    assert!(!cnf.contains("CAPACITY_THREADS"), "{cnf}");
    assert!(cnf.contains("# Profile before:"), "{cnf}");
    stop_keep();
    let again = start(&[]);
    assert_eq!(again["profile"], "before", "{again}");
    assert_eq!(again["port"].as_u64(), Some(port), "{again}");
    assert_eq!(redo(), 48 << 20);
    stop_keep();
    // --profile given: that one.
    let other = start(&["--profile", "default"]);
    assert_eq!(other["profile"], "default");
    assert_ne!(redo(), 48 << 20);
    innotune()
        .args(["sandbox", "stop", "--dir"])
        .arg(&dir)
        .assert()
        .success();
    assert!(!dir.exists());
}

/// Issue 46: `sandbox status` on a directory a plain `stop` removed
/// exited 2 as a usage error. It says the sandbox is gone and exits 1
/// (not running), as documented.
#[test]
fn status_of_a_removed_sandbox_says_gone() {
    let parent = tempfile::tempdir_in("/tmp").unwrap();
    let dir = parent.path().join("sb-never");
    let out = innotune()
        .args(["sandbox", "status", "--dir"])
        .arg(&dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{text} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("gone:") && text.contains("does not exist"),
        "{text}"
    );
    let out = innotune()
        .args(["--format", "json", "sandbox", "status", "--dir"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let r = json(&out.stdout);
    assert_eq!(r["gone"], true);
    assert_eq!(r["running"], false);
}

/// Issue 46: `after` was a fixed table (a 1G pool with no buffer-pool
/// finding), not check's advice. It is now `before` plus exactly the server
/// variables `innotune check` recommends for a `before` server in a
/// directory on the same filesystem; the server holds them, my.cnf says
/// where they came from (no placeholder), and a kept `after` sandbox
/// started again without `--profile` keeps its values and port without
/// asking check again.
#[test]
fn after_profile_is_checks_advice_for_this_host() {
    use innotune::change::ServerVariable;
    let parent = tempfile::tempdir_in("/tmp").unwrap();
    let (before_dir, dir) = (parent.path().join("b"), parent.path().join("a"));
    let (_gb, _ga) = (CliGuard(&before_dir), CliGuard(&dir));
    let start = |d: &Path, extra: &[&str]| {
        let out = innotune()
            .args(["--format", "json", "sandbox", "start", "--dir"])
            .arg(d)
            .args(extra)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        json(&out)
    };
    // What check says for a `before` server here, asked independently.
    start(&before_dir, &["--profile", "before"]);
    let out = innotune()
        .args(["--format", "json", "check"])
        .arg(&before_dir)
        .arg("--socket")
        .arg(before_dir.join("mysql.sock"))
        .args(["--user", "root", "--no-defaults", "--sample", "0"])
        .output()
        .unwrap();
    let check = json(&out.stdout);
    assert_eq!(check["server"]["reached"], true, "{check}");
    let mut want: Vec<(String, String)> = Vec::new();
    for f in check["findings"].as_array().unwrap() {
        for s in f["settings"].as_array().into_iter().flatten() {
            if s["kind"] == "server_variable" {
                let (n, v) = (s["name"].as_str().unwrap(), s["value"].as_str().unwrap());
                want.retain(|(k, _)| k != n);
                want.push((n.into(), v.into()));
            }
        }
    }
    innotune()
        .args(["sandbox", "stop", "--dir"])
        .arg(&before_dir)
        .assert()
        .success();

    let first = start(&dir, &["--profile", "after", "--keep"]);
    assert_eq!(first["profile"], "after", "{first}");
    let mut got: Vec<(String, String)> = first["advised"]
        .as_array()
        .unwrap_or_else(|| panic!("no advised list: {first}"))
        .iter()
        .map(|a| {
            assert!(
                a["finding"]
                    .as_str()
                    .is_some_and(|f| f.starts_with("server.")),
                "{a}"
            );
            (
                a["name"].as_str().unwrap().into(),
                a["value"].as_str().unwrap().into(),
            )
        })
        .collect();
    got.sort();
    want.sort();
    assert_eq!(got, want, "after's variables are not check's advice");
    // The server holds `before` overridden by each advised value.
    let holds = || {
        let mut c = innotune::db::ConnSpec::socket(dir.join("mysql.sock"), "root")
            .connect()
            .unwrap();
        let before = Profile::parse("before").unwrap();
        for (k, v) in before.vars() {
            let v = want.iter().find(|(n, _)| n == k).map_or(v, |(_, v)| v);
            let now: (String, String) = c
                .query_first(format!("SHOW GLOBAL VARIABLES LIKE '{k}'"))
                .unwrap()
                .unwrap();
            assert!(
                ServerVariable::same(&now.1, v),
                "{k}: server {} want {v}",
                now.1
            );
        }
        for (k, v) in &want {
            let now: (String, String) = c
                .query_first(format!("SHOW GLOBAL VARIABLES LIKE '{k}'"))
                .unwrap()
                .unwrap();
            assert!(
                ServerVariable::same(&now.1, v),
                "{k}: server {} want {v}",
                now.1
            );
        }
    };
    holds();
    let cnf = std::fs::read_to_string(dir.join("my.cnf")).unwrap();
    assert!(cnf.contains("# Profile after:"), "{cnf}");
    assert!(!cnf.contains("CAPACITY") && !cnf.contains(".rs"), "{cnf}");
    // Stopped and kept, started again without --profile: same values and
    // port, and check is not asked again (nothing advised in this start).
    innotune()
        .args(["sandbox", "stop", "--keep", "--dir"])
        .arg(&dir)
        .assert()
        .success();
    let again = start(&dir, &[]);
    assert_eq!(again["profile"], "after", "{again}");
    assert_eq!(again["port"], first["port"], "{again}");
    assert!(again.get("advised").is_none(), "{again}");
    holds();
    innotune()
        .args(["sandbox", "stop", "--dir"])
        .arg(&dir)
        .assert()
        .success();
    assert!(!dir.exists());
    // The library refuses an underived `after` in one line, creating nothing.
    let lib = parent.path().join("lib");
    let mut o = SandboxOpts::new(&lib);
    o.profile = Profile::parse("after").unwrap();
    let e = Sandbox::start(o).unwrap_err();
    assert!(format!("{e:#}").contains("check's advice"), "{e:#}");
    assert!(!lib.exists());
}
