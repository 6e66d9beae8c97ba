//! `innotune check` and `apply` against a throwaway MariaDB with planted
//! mistakes: the query cache on, a buffer pool that is not a multiple of
//! chunk × instances, a redo log far smaller than an hour of the writes
//! `innotune oltp oltp_write_only` makes during the sample, and
//! innodb_flush_log_at_trx_commit=0. Then apply --yes (server layer only:
//! SET GLOBAL and a [mysqld] drop-in in a directory the sandbox's my.cnf
//! includes) → apply --check exits 0 → restore puts every value back and
//! removes the drop-in. Never touches the server at 3306.

mod support;
use support::Start as _;

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use support::TestServer;

const PLANTED: &str = "innodb_buffer_pool_chunk_size = 64M
innodb_buffer_pool_size = 200M
query_cache_type = 1
query_cache_size = 64M
innodb_flush_log_at_trx_commit = 0
innodb_log_file_size = 8M
";

fn planted_server() -> TestServer {
    TestServer::with_profile(PLANTED)
}

fn innotune(state: &std::path::Path) -> Command {
    let mut c = support::innotune_sys();
    c.env("INNOTUNE_STATE_DIR", state);
    c
}

fn finding<'a>(r: &'a Value, id: &str, subject: &str) -> &'a Value {
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == id && f["subject"]["name"] == subject)
        .unwrap_or_else(|| panic!("no {id} on {subject} in {:#}", r["findings"]))
}

#[test]
fn planted_server_mistakes_are_found_and_applied_and_restored() {
    let srv = planted_server();
    let state = tempfile::tempdir().unwrap();
    let sock = srv.sock_args();
    let oltp = |cmd: &str, extra: &[&str]| {
        let mut c = innotune(state.path());
        c.args(["oltp", "oltp_write_only", cmd])
            .args(&sock)
            .args(["--tables", "4", "--table-size", "5000"])
            .args(extra);
        c
    };
    let st = oltp("prepare", &["--threads", "4"]).output().unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    // Write load for the whole sample window.
    let mut load = oltp(
        "run",
        &["--threads", "4", "--time", "60", "--report-interval", "1"],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::null())
    .start();
    let mut out = BufReader::new(load.stdout.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "oltp run ended early"
        );
        if line.contains("tps:") {
            break; // the first interval: the load is on
        }
    }
    // Keep draining the load's output so it never blocks on a full pipe.
    let drain = std::thread::spawn(move || {
        let mut l = String::new();
        while out.read_line(&mut l).map(|n| n > 0).unwrap_or(false) {
            l.clear();
        }
    });
    let c = innotune(state.path())
        .args([
            "check", "--format", "json", "--sample", "10s", "--only", "server",
        ])
        .args(&sock)
        .output()
        .unwrap();
    let _ = load.kill();
    load.wait_within(support::WAIT);
    let _ = drain.join();
    assert_eq!(
        c.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&c.stderr)
    );
    let v: Value = serde_json::from_slice(&c.stdout).unwrap();
    let r = &v["result"];
    assert_eq!(r["path_source"], "server_datadir");
    assert!(r["path"]
        .as_str()
        .unwrap()
        .starts_with(srv.sb.dir().to_str().unwrap()));

    let q = finding(r, "server.query_cache", "query_cache_type");
    assert_eq!(
        (q["observed"].as_str(), q["recommended"].as_str()),
        (Some("ON"), Some("OFF"))
    );
    let q = finding(r, "server.query_cache", "query_cache_size");
    assert_eq!(
        (q["observed"].as_str(), q["recommended"].as_str()),
        (Some("67108864"), Some("0"))
    );

    let b = finding(r, "server.buffer_pool.chunk", "innodb_buffer_pool_size");
    assert_eq!(b["observed"], "209715200");
    assert_eq!(
        b["recommended"],
        (192u64 << 20).to_string(),
        "the nearest multiple of 64 MiB"
    );

    let d = finding(
        r,
        "server.durability.flush_log_at_trx_commit",
        "innodb_flush_log_at_trx_commit",
    );
    assert_eq!(
        (d["observed"].as_str(), d["recommended"].as_str()),
        (Some("0"), Some("1"))
    );
    assert!(
        d.get("settings").is_none(),
        "durability is never changed by innotune"
    );

    // The redo rule's value: an hour at the rate written in the window.
    let w = &r["facts"]["server"]["window"];
    let written = w["delta"]["innodb_os_log_written"].as_f64().unwrap();
    let secs = w["duration_s"].as_f64().unwrap();
    assert!(secs >= 10.0 && written > 0.0, "{w:#}");
    let step = 128.0 * 1048576.0;
    let mut want = ((written / secs * 3600.0) / step).ceil() * step;
    // Capped at a quarter of the datadir filesystem's free space.
    let free = r["facts"]["mount"]["free_bytes"].as_f64().unwrap();
    let room = (free / 4.0 / step).floor() * step;
    if want > room {
        want = room;
    }
    let rd = finding(r, "server.redo", "innodb_log_file_size");
    assert_eq!(rd["observed"], "8388608");
    let rec: f64 = rd["recommended"].as_str().unwrap().parse().unwrap();
    assert!(rec > 8.0 * 1048576.0 * 10.0, "far more than 8 MiB: {rec}");
    assert_eq!(rec, want, "{rd:#}");

    // Apply the server layer; the sandbox's my.cnf gets an includedir, as
    // distribution my.cnf files have.
    let confd = srv.sb.dir().join("conf.d");
    std::fs::create_dir(&confd).unwrap();
    let cnf = srv.sb.dir().join("my.cnf");
    let text = std::fs::read_to_string(&cnf).unwrap();
    std::fs::write(&cnf, format!("{text}\n!includedir {}\n", confd.display())).unwrap();
    let apply = |extra: &[&str]| {
        innotune(state.path())
            .args([
                "apply", "--format", "json", "--sample", "0", "--only", "server",
            ])
            .args(&sock)
            .args(extra)
            .output()
            .unwrap()
    };
    let a = apply(&["--yes"]);
    assert_eq!(
        a.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&a.stderr)
    );
    assert_eq!(srv.var("query_cache_type"), "OFF");
    assert_eq!(srv.var("query_cache_size"), "0");
    assert_eq!(
        srv.var("innodb_buffer_pool_size"),
        (192u64 << 20).to_string()
    );
    assert_eq!(srv.var("innodb_flush_log_at_trx_commit"), "0", "left alone");
    let dropin = std::fs::read_to_string(confd.join("99-innotune.cnf")).unwrap();
    assert!(dropin.contains("\n[mysqld]\n"), "{dropin}");
    assert!(
        dropin.contains("\ninnodb_buffer_pool_size = 192M\n"),
        "{dropin}"
    );
    assert!(dropin.contains("\nquery_cache_type = OFF\n"), "{dropin}");
    assert!(
        dropin.contains("\n# innodb_flush_log_at_trx_commit = 1\n"),
        "{dropin}"
    );
    let chk = apply(&["--check"]);
    assert_eq!(
        chk.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&chk.stdout)
    );

    let rs = innotune(state.path()).args(["restore"]).output().unwrap();
    assert!(
        rs.status.success(),
        "{}",
        String::from_utf8_lossy(&rs.stdout)
    );
    assert_eq!(srv.var("query_cache_type"), "ON");
    assert_eq!(srv.var("query_cache_size"), "67108864");
    assert_eq!(srv.var("innodb_buffer_pool_size"), "209715200");
    assert!(!confd.join("99-innotune.cnf").exists());
}
