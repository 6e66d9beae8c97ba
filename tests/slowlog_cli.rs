//! `innotune slowlog` on real slow logs: hand-made logs in every server's
//! format (tests/fixtures/slowlog), truncated and gzip logs, stdin, a large
//! log cut across threads, and a log written by a real MariaDB sandbox.
//! Entries, classes and per-class counts are compared with what
//! pt-query-digest (percona-toolkit) reports for the same file.

mod support;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// innotune with a private, empty state directory (no other run's journal
/// warnings; slowlog writes no state, so the directory is never created).
fn inn() -> assert_cmd::Command {
    let state = std::env::temp_dir().join(format!("innotune-slowlog-tests-{}", std::process::id()));
    support::innotune_in(&state)
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/slowlog")
        .join(name)
}

/// innotune's JSON result for `slowlog FILE --top 0 ARGS`.
fn ours(file: &Path, args: &[&str]) -> Value {
    let out = inn()
        .args(["--format", "json", "slowlog"])
        .arg(file)
        .args(if args.contains(&"--top") {
            &[][..]
        } else {
            &["--top", "0"][..]
        })
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "slowlog {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema"], "slowlog/2");
    v["result"].clone()
}

/// What a digest says: entries, and count and id per fingerprint.
#[derive(Debug, PartialEq)]
struct Digest {
    entries: u64,
    classes: BTreeMap<String, (u64, String)>,
}

fn digest_of_ours(v: &Value) -> Digest {
    let classes = v["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["fingerprint"].as_str().unwrap().to_string(),
                (
                    c["count"].as_u64().unwrap(),
                    c["id"].as_str().unwrap().to_string(),
                ),
            )
        })
        .collect();
    Digest {
        entries: v["totals"]["entries"].as_u64().unwrap(),
        classes,
    }
}

/// pt-query-digest is the reference; without it these comparisons cannot run.
fn have_pt() -> bool {
    let ok = Command::new("pt-query-digest")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipped: pt-query-digest (percona-toolkit) is not installed");
    }
    ok
}

fn pt(file: &Path) -> Digest {
    let out = Command::new("pt-query-digest")
        .args(["--output", "json", "--limit", "1000000"])
        .arg(file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    // pt writes nothing at all when it found no entry.
    let Some(start) = text.find('{') else {
        return Digest {
            entries: 0,
            classes: BTreeMap::new(),
        };
    };
    let v: Value = serde_json::from_str(&text[start..]).unwrap();
    let classes = v["classes"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| {
                    (
                        c["fingerprint"].as_str().unwrap().to_string(),
                        (
                            c["query_count"].as_u64().unwrap(),
                            c["checksum"].as_str().unwrap().to_string(),
                        ),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    Digest {
        entries: v["global"]["query_count"].as_u64().unwrap_or(0),
        classes,
    }
}

#[test]
fn every_format_agrees_with_pt_query_digest() {
    for name in [
        "mysql56.log",
        "mysql57.log",
        "mysql80.log",
        "mariadb.log",
        "percona.log",
        "edge.log",
    ] {
        let f = fixture(name);
        let v = ours(&f, &[]);
        assert_eq!(v["totals"]["malformed"], 0, "{name}");
        let d = digest_of_ours(&v);
        assert!(d.entries >= 3, "{name}: {d:?}");
        if have_pt() {
            assert_eq!(d, pt(&f), "{name}");
        }
    }
}

#[test]
fn attributes_of_every_format_are_read() {
    let v = ours(&fixture("mariadb.log"), &[]);
    let c = v["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| {
            c["fingerprint"] == "select distinct c from sbtest? where id between ? and ? order by c"
        })
        .unwrap();
    assert_eq!(c["tmp_table_on_disk"], 1);
    assert_eq!(c["filesort"], 1);
    assert_eq!(c["query_time"]["max_ns"], 4_200_000);
    assert_eq!(c["rows_examined"]["sum"], 200);
    assert_eq!(c["databases"]["sbtest"], 1);
    assert_eq!(c["first_seen"], "2024-11-25T16:00:01Z");

    let v = ours(&fixture("percona.log"), &[]);
    let c = &v["classes"][0];
    assert_eq!(c["full_scan"], 1);
    assert_eq!(c["tmp_table_on_disk"], 1);
    assert_eq!(c["hosts"]["web1"], 1);
    assert_eq!(c["rows_examined_per_sent"], 5000.0);

    let v = ours(&fixture("mysql80.log"), &[]);
    let c = &v["classes"][0];
    assert_eq!(c["tmp_table_on_disk"], 1, "Created_tmp_disk_tables");
    assert_eq!(c["databases"]["shop"], 1);

    // User@Host without Id and with an empty host: the IP stands in (as pt).
    let v = ours(&fixture("mysql56.log"), &[]);
    let upd = v["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["fingerprint"].as_str().unwrap().starts_with("update"))
        .unwrap();
    assert_eq!(upd["hosts"]["10.0.0.7"], 1);
    assert_eq!(upd["users"]["app"], 1);
    assert_eq!(upd["first_seen"], "2024-11-25T06:00:02Z");
}

/// Every statement of queries.sql as one slow-log entry.
fn log_of_queries() -> String {
    let sql = std::fs::read_to_string(fixture("queries.sql")).unwrap();
    let mut log = String::new();
    for (i, q) in sql
        .split(";\n")
        .filter(|q| !q.trim().is_empty())
        .enumerate()
    {
        log.push_str(&format!(
            "# Time: 2024-11-25T16:00:{:02}.000000Z\n# User@Host: u[u] @ localhost []  Id: 1\n# Query_time: 0.{:06}  Lock_time: 0.000000 Rows_sent: 0  Rows_examined: 0\nSET timestamp={};\n{q};\n",
            i % 60,
            i + 1,
            1_732_550_400 + i
        ));
    }
    log
}

#[test]
fn fingerprints_and_ids_match_pt_query_digest() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("queries.log");
    std::fs::write(&f, log_of_queries()).unwrap();
    let d = digest_of_ours(&ours(&f, &[]));
    assert!(d.classes.len() > 35, "{d:?}");
    if have_pt() {
        let p = pt(&f);
        for (fp, c) in &p.classes {
            assert_eq!(
                d.classes.get(fp),
                Some(c),
                "pt's class {fp:?} missing or different"
            );
        }
        assert_eq!(d, p);
    }
}

#[test]
fn truncated_logs_agree_with_pt_query_digest() {
    let full = std::fs::read(fixture("mariadb.log")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    // Cut inside a statement, inside an attribute line, and right after a `;`.
    let at_stmt = full.windows(9).position(|w| w == b"id BETWEE").unwrap() + 4;
    let at_attr = full.windows(11).position(|w| w == b"# Rows_affe").unwrap() + 5;
    let at_semi = full.windows(4).position(|w| w == b"=99;").unwrap() + 4;
    for cut in [at_stmt, at_attr, at_semi] {
        let f = dir.path().join(format!("cut{cut}.log"));
        std::fs::write(&f, &full[..cut]).unwrap();
        let v = ours(&f, &[]);
        let d = digest_of_ours(&v);
        assert!(d.entries < 5, "cut at {cut}: {d:?}");
        if have_pt() {
            assert_eq!(d, pt(&f), "cut at {cut}");
        }
    }
}

#[test]
fn gzip_and_stdin_give_the_same_digest() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("q.log");
    std::fs::write(&plain, log_of_queries()).unwrap();
    let want = digest_of_ours(&ours(&plain, &[]));
    // A real gzip file, named without .gz: detected by its magic bytes.
    let gz = dir.path().join("q.log.1");
    let out = Command::new("gzip").arg("-c").arg(&plain).output().unwrap();
    assert!(out.status.success());
    std::fs::write(&gz, &out.stdout).unwrap();
    let v = ours(&gz, &[]);
    assert_eq!(v["gzip"], true);
    assert_eq!(digest_of_ours(&v), want);

    for input in [&plain, &gz] {
        let out = inn()
            .args(["--format", "json", "slowlog", "-", "--top", "0"])
            .pipe_stdin(input)
            .unwrap()
            .output()
            .unwrap();
        assert!(out.status.success());
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            digest_of_ours(&v["result"]),
            want,
            "stdin {}",
            input.display()
        );
    }

    // A gzip file cut short: the digest of what came before the cut, and
    // a warning (stderr, the JSON's warnings and `stopped`) saying where.
    let gz_bytes = std::fs::read(&gz).unwrap();
    let cut = dir.path().join("cut.gz");
    let at = gz_bytes.len() / 2;
    std::fs::write(&cut, &gz_bytes[..at]).unwrap();
    let o = inn()
        .args(["--format", "json", "slowlog", "--top", "0"])
        .arg(&cut)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let stops = format!("the gzip data stops after {at} compressed bytes of {at}");
    assert!(err.contains("warning:") && err.contains(&stops), "{err}");
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["warnings"][0].as_str().unwrap().contains(&stops), "{v}");
    let part = &v["result"];
    assert!(part["stopped"].as_str().unwrap().contains(&stops));
    let got = digest_of_ours(part);
    assert!(got.entries > 0 && got.entries < want.entries, "{got:?}");
    // Every class found is one of the whole log's, never more often, but
    // for the statement the cut went through (counted, as pt counts the
    // last statement of a plain log cut short).
    let foreign = got
        .classes
        .iter()
        .filter(|(fp, (n, _))| want.classes.get(*fp).is_none_or(|(all, _)| n > all))
        .count();
    assert!(foreign <= 1, "{got:?}");
    // The part read is that many bytes of the log: the same digest as the
    // plain log cut there.
    let read = part["read_bytes"].as_u64().unwrap() as usize;
    let plain_cut = dir.path().join("cut.log");
    std::fs::write(&plain_cut, &std::fs::read(&plain).unwrap()[..read]).unwrap();
    assert_eq!(digest_of_ours(&ours(&plain_cut, &[])), got);
}

/// A restart mid-file (the server writes its header again): the entries on
/// both sides of it are counted. pt-query-digest agrees after a `mysqld`
/// header; a `mariadbd, Version:` line it does not recognise, and glues the
/// entry after it to the one before: one entry fewer (documented in
/// docs/json-slowlog.md).
#[test]
fn restart_header_mid_file_starts_a_new_entry() {
    let dir = tempfile::tempdir().unwrap();
    let edge = digest_of_ours(&ours(&fixture("edge.log"), &[]));
    for (second, pt_fewer) in [("mysql57.log", 0), ("mariadb.log", 1)] {
        let both = dir.path().join(format!("edge+{second}"));
        let mut bytes = std::fs::read(fixture("edge.log")).unwrap();
        bytes.extend(std::fs::read(fixture(second)).unwrap());
        std::fs::write(&both, &bytes).unwrap();
        let b = digest_of_ours(&ours(&fixture(second), &[]));
        let d = digest_of_ours(&ours(&both, &[]));
        assert_eq!(d.entries, edge.entries + b.entries, "{second}");
        if have_pt() {
            assert_eq!(pt(&both).entries + pt_fewer, d.entries, "{second}");
        }
    }
}

#[test]
fn malformed_entries_are_counted_and_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bad.log");
    let good = std::fs::read_to_string(fixture("mysql57.log")).unwrap();
    // A statement with no header (a log starting mid-entry), an entry
    // without Query_time (pt counts it, time 0), and a header with no
    // statement (pt's "/* No query */").
    let bad = format!(
        "ect c FROM sbtest1 WHERE id=5;\n{good}# Time: 2024-11-25T16:00:09.000001Z\n# User@Host: x[x] @ h []  Id: 3\n# Lock_time: 0.1 Rows_sent: 0  Rows_examined: 0\nSELECT broken;\n# Time: 2024-11-25T16:00:10.000001Z\n# User@Host: x[x] @ h []  Id: 3\n# Query_time: 1.0  Lock_time: 0.1 Rows_sent: 0  Rows_examined: 0\n;\n{}",
        &good[good.find("# Time").unwrap()..]
    );
    std::fs::write(&f, &bad).unwrap();
    let v = ours(&f, &[]);
    assert_eq!(v["totals"]["malformed"], 1);
    assert_eq!(v["totals"]["entries"], 10);
    // Times and counts that are not numbers (or do not fit) make their
    // entry malformed: never a valid entry with 0.
    let entry = |attrs: &str| {
        format!("# Time: 2024-11-25T16:00:11.000001Z\n# User@Host: x[x] @ h []  Id: 3\n# {attrs}\nSELECT not_a_number;\n")
    };
    let mut worse = bad.clone();
    for attrs in [
        "Query_time: abc  Lock_time: 0 Rows_sent: 0  Rows_examined: 0",
        "Query_time: 1e400  Lock_time: 0 Rows_sent: 0  Rows_examined: 0",
        "Query_time: 1.0  Lock_time: 0 Rows_sent: 18446744073709551616  Rows_examined: 0",
    ] {
        worse.push_str(&entry(attrs));
    }
    std::fs::write(&f, &worse).unwrap();
    let w = ours(&f, &[]);
    assert_eq!(w["totals"]["malformed"], 4, "{:#}", w["totals"]);
    assert_eq!(w["totals"]["entries"], 10);
    assert_eq!(w["totals"]["query_time_ns"], v["totals"]["query_time_ns"]);
    assert!(!digest_of_ours(&w)
        .classes
        .contains_key("select not_a_number"));
    let d = digest_of_ours(&v);
    assert_eq!(d.classes[""].0, 1, "the header without a statement");
    assert_eq!(d.classes["select broken"].0, 1);
}

#[test]
fn threads_give_the_same_digest_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("big.log");
    let mut one = Vec::new();
    for n in [
        "mysql57.log",
        "mariadb.log",
        "percona.log",
        "edge.log",
        "mysql80.log",
    ] {
        let s = std::fs::read_to_string(fixture(n)).unwrap();
        // Without the start-up header, so the copies join seamlessly.
        let s = &s[s.find("# Time").unwrap()..];
        one.extend_from_slice(s.as_bytes());
    }
    let mut big = Vec::new();
    while big.len() < 4 << 20 {
        big.extend_from_slice(&one);
    }
    std::fs::write(&f, &big).unwrap();
    let strip = |v: Value| {
        let mut v = v;
        for k in ["elapsed_s", "read_bytes_per_s", "threads"] {
            v.as_object_mut().unwrap().remove(k);
        }
        v
    };
    let single = strip(ours(&f, &["--threads", "1"]));
    let many = strip(ours(&f, &["--threads", "7"]));
    assert_eq!(single, many);
    assert!(single["totals"]["entries"].as_u64().unwrap() > 10_000);
    if have_pt() {
        assert_eq!(digest_of_ours(&single), pt(&f));
    }
}

#[test]
fn orders_top_and_filters() {
    let f = fixture("edge.log");
    let top1 = ours(&f, &["-s", "c", "--top", "1"]);
    assert_eq!(top1["classes"].as_array().unwrap().len(), 1);
    assert_eq!(top1["classes"][0]["count"], 2);
    assert_eq!(top1["order_by"], "Query_time:cnt");
    let by_max = ours(&f, &["--order-by", "Query_time:max"]);
    assert_eq!(by_max["classes"][0]["query_time"]["max_ns"], 400_000_000);
    let late = ours(&f, &["--since", "2024-11-25 16:00:03"]);
    assert_eq!(late["totals"]["entries"], 3);
    assert_eq!(late["totals"]["filtered_out"], 2);
    let early = ours(&f, &["--until", "1732550403"]);
    assert_eq!(early["totals"]["entries"], 2);
    // The third entry names no database: it inherits `use shop;` (as pt).
    let db = ours(&fixture("mysql80.log"), &["--filter", "db=shop"]);
    assert_eq!(db["totals"]["entries"], 2);
    let db = ours(&fixture("mysql80.log"), &["--filter", "db=sbtest"]);
    assert_eq!(db["totals"]["entries"], 1);
    let user = ours(&fixture("mysql56.log"), &["--filter", "user=app"]);
    assert_eq!(user["totals"]["entries"], 1);
}

#[test]
fn text_and_markdown_show_the_profile() {
    let out = inn()
        .args(["slowlog", "--top", "2"])
        .arg(fixture("mariadb.log"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Profile"), "{text}");
    assert!(text.contains("select c from sbtest? where id=?"), "{text}");
    assert!(text.contains("Query_time distribution"), "{text}");
    let out = inn()
        .args(["--format", "markdown", "slowlog"])
        .arg(fixture("mariadb.log"))
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("| "));
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    for args in [
        vec!["slowlog", "/nonexistent/slow.log"],
        vec!["slowlog", "x", "--order-by", "Foo:sum"],
        vec!["slowlog", "x", "--filter", "color=red"],
        vec!["slowlog", "x", "--since", "yesterday-ish"],
    ] {
        let o = inn().args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains("fix:"), "{args:?}: {err}");
        assert!(o.stdout.is_empty());
    }
}

/// A log written by a real MariaDB under `innotune oltp` at two
/// long_query_time settings (the first with log_slow_verbosity=
/// query_plan,explain): entries, classes and the counts of the 20 largest
/// classes agree with pt-query-digest's.
#[test]
fn live_mariadb_slow_log_agrees_with_pt_query_digest() {
    if !support::live() || !have_pt() {
        return;
    }
    use mysql::prelude::Queryable;
    let s = support::server();
    let datadir = s.sb.dir().join("data");
    let oltp = |cmd: &str, extra: &[&str]| {
        let o = inn()
            .args(["oltp", "oltp_read_write", cmd])
            .args(s.sock_args())
            .args(["--tables", "2", "--table-size", "1000"])
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    oltp("prepare", &[]);
    for (i, (lqt, verbosity)) in [("0", "query_plan,explain"), ("0.0002", "")]
        .into_iter()
        .enumerate()
    {
        let name = format!("slow-{i}.log");
        let mut c = s.conn();
        c.query_drop(format!(
            "SET GLOBAL slow_query_log_file='{name}', GLOBAL long_query_time={lqt}, GLOBAL log_slow_verbosity='{verbosity}', GLOBAL slow_query_log=ON"
        ))
        .unwrap();
        oltp(
            "run",
            &["--threads", "2", "--time", "3", "--db-ps-mode", "disable"],
        );
        c.query_drop("SET GLOBAL slow_query_log=OFF").unwrap();
        let log = datadir.join(&name);
        let v = ours(&log, &[]);
        let d = digest_of_ours(&v);
        let p = pt(&log);
        assert!(d.entries > 100, "{name}: {} entries", d.entries);
        assert_eq!(v["totals"]["malformed"], 0, "{name}");
        assert_eq!(d.entries, p.entries, "{name}: entries");
        assert_eq!(d.classes.len(), p.classes.len(), "{name}: classes");
        let top = |d: &Digest| {
            let mut v: Vec<_> = d
                .classes
                .iter()
                .map(|(f, (n, id))| (*n, f.clone(), id.clone()))
                .collect();
            v.sort_by(|a, b| b.cmp(a));
            v.truncate(20);
            v
        };
        assert_eq!(top(&d), top(&p), "{name}: top 20 classes");
    }
}

/// A MariaDB-format entry with plan attributes.
fn entry(
    ts: u64,
    qt: &str,
    sent: u64,
    examined: u64,
    full_scan: bool,
    tmp_disk: bool,
    q: &str,
) -> String {
    let yn = |b: bool| if b { "Yes" } else { "No" };
    format!(
        "# Time: 241125 16:00:01\n# User@Host: app[app] @ localhost []\n# Thread_id: 7  Schema: shop  QC_hit: No\n# Query_time: {qt}  Lock_time: 0.000010  Rows_sent: {sent}  Rows_examined: {examined}\n# Rows_affected: 0  Bytes_sent: 100\n# Full_scan: {}  Full_join: No  Tmp_table: {}  Tmp_table_on_disk: {}\n# Filesort: No  Filesort_on_disk: No  Merge_passes: 0  Priority_queue: No\nSET timestamp={ts};\n{q};\n",
        yn(full_scan),
        yn(tmp_disk),
        yn(tmp_disk)
    )
}

/// `check --slowlog` on a hand-made log (no server, a replayed host):
/// the scanning class is named as a missing index with pt's short id, the
/// whole-table read as a full scan, the spilling GROUP BY as a temporary
/// table on disk; a cheap indexed lookup and a class under 1 % of the time
/// are not named. Without plan attributes only the rows rule runs and an
/// info finding says how to log them. Without --slowlog the rule is skipped.
#[test]
fn check_slowlog_names_missing_indexes_scans_and_spills() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = String::new();
    for i in 0..20 {
        // 50 000 examined for 2 sent: missing index (≈ 60 % of the time).
        log += &entry(
            1732550401 + i,
            "0.300000",
            2,
            50_000,
            true,
            false,
            &format!("SELECT id FROM orders WHERE customer = {i}"),
        );
        // Indexed lookups: cheap.
        log += &entry(
            1732550401 + i,
            "0.000100",
            1,
            1,
            false,
            false,
            &format!("SELECT * FROM orders WHERE id = {i}"),
        );
    }
    for i in 0..5 {
        // Reads every row and sends them: a full scan, not a missing index.
        log += &entry(
            1732550450 + i,
            "0.400000",
            40_000,
            40_000,
            true,
            false,
            "SELECT * FROM orders",
        );
        // Spills to disk (≈ 6 % of the time: a notice).
        log += &entry(
            1732550450 + i,
            "0.100000",
            500,
            2_000,
            false,
            true,
            &format!("SELECT customer, COUNT(*) FROM orders WHERE day > {i} GROUP BY customer"),
        );
    }
    // Would be a missing index, but 0.05 % of the time.
    log += &entry(
        1732550500,
        "0.005000",
        1,
        90_000,
        true,
        false,
        "SELECT id FROM orders WHERE note = 'x'",
    );
    let file = dir.path().join("slow.log");
    std::fs::write(&file, &log).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts/check-clean");
    let run = |file: &Path| {
        let out = inn()
            .arg("--root")
            .arg(&root)
            .args(["--format", "json", "check", "/var/lib/mysql", "--slowlog"])
            .arg(file)
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        (out.status.code().unwrap(), v["result"].clone())
    };
    let (code, r) = run(&file);
    let ours = ours(&file, &[]);
    let id_of = |fp: &str| {
        let c = ours["classes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["fingerprint"] == fp)
            .unwrap_or_else(|| panic!("no class {fp}"));
        let id = c["id"].as_str().unwrap();
        format!("0x{}", &id[16..])
    };
    let got: Vec<(String, String, String)> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"].as_str().unwrap().starts_with("server.queries"))
        .map(|f| {
            (
                f["id"].as_str().unwrap().to_string(),
                f["subject"]["name"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want = vec![
        (
            "server.queries.missing_index".to_string(),
            id_of("select id from orders where customer = ?"),
            "warning".to_string(),
        ),
        (
            "server.queries.full_scan".to_string(),
            id_of("select * from orders"),
            "warning".to_string(),
        ),
        (
            "server.queries.tmp_table_on_disk".to_string(),
            id_of("select customer, count(*) from orders where day > ? group by customer"),
            "notice".to_string(),
        ),
    ];
    let mut sorted = got.clone();
    sorted.sort();
    let mut want_sorted = want.clone();
    want_sorted.sort();
    assert_eq!(sorted, want_sorted, "{got:?}");
    assert_eq!(code, 1, "a warning finding exits 1");
    let f = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "server.queries.missing_index")
        .unwrap();
    assert_eq!(f["subject"]["kind"], "query");
    assert!(
        f["observed"]
            .as_str()
            .unwrap()
            .contains("25000 examined per row returned"),
        "{f}"
    );
    assert!(f["evidence"]["detail"]
        .as_str()
        .unwrap()
        .contains("select id from orders where customer = ?"));
    // No sample statement (literal values) anywhere in check's result.
    let whole = r.to_string();
    assert!(
        !whole.contains("customer = 7"),
        "a literal leaked into check's result"
    );
    assert_eq!(r["facts"]["slowlog"]["entries"], 51);
    let rule = r["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["id"] == "server.queries")
        .unwrap();
    assert_eq!(rule["status"], "ran");

    // The same log without plan attributes: the rows rule still runs; an
    // info finding says how to log the plan.
    let bare: String = log
        .lines()
        .filter(|l| !l.starts_with("# Full_scan") && !l.starts_with("# Filesort"))
        .map(|l| format!("{l}\n"))
        .collect();
    let bare_file = dir.path().join("bare.log");
    std::fs::write(&bare_file, bare).unwrap();
    let (_, r) = run(&bare_file);
    let ids: Vec<&str> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["id"].as_str())
        .filter(|i| i.starts_with("server.queries"))
        .collect();
    assert_eq!(
        ids,
        [
            "server.queries.missing_index",
            "server.queries.plan_not_logged"
        ],
        "{r}"
    );

    // Without --slowlog: skipped, with the reason.
    let out = inn()
        .arg("--root")
        .arg(&root)
        .args(["--format", "json", "check", "/var/lib/mysql"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rule = v["result"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["id"] == "server.queries")
        .unwrap()
        .clone();
    assert_eq!(rule["status"], "skipped");
    assert!(rule["reason"].as_str().unwrap().contains("--slowlog"));

    // A missing log: one line, exit 2.
    let out = inn()
        .arg("--root")
        .arg(&root)
        .args(["check", "/var/lib/mysql", "--slowlog"])
        .arg(dir.path().join("nope.log"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("nope.log"), "{err}");
    // A directory: one line saying so.
    let out = inn()
        .arg("--root")
        .arg(&root)
        .args(["check", "/var/lib/mysql", "--slowlog"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("is a directory"), "{err}");
}

/// The slowlog result rendered by `innotune report`: HTML with the profile,
/// each class's short id, a chart of the time shares, and no sample
/// statement; markdown with the same profile.
#[test]
fn report_has_a_slowlog_section() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("slow.json");
    let out = inn()
        .args(["--format", "json", "--output"])
        .arg(&json)
        .arg("slowlog")
        .arg(fixture("mariadb.log"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let classes = v["result"]["classes"].as_array().unwrap();
    assert!(!classes.is_empty());
    let html_file = dir.path().join("r.html");
    let out = inn()
        .arg("report")
        .arg(&json)
        .arg("-o")
        .arg(&html_file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&html_file).unwrap();
    assert!(html.contains("Profile"), "no profile");
    assert!(
        !html.contains("No view for this command"),
        "generic view used"
    );
    for c in classes {
        let id = c["id"].as_str().unwrap();
        assert!(html.contains(&format!("0x{}", &id[16..])), "{id} missing");
    }
    assert!(html.contains("<svg"), "no chart");
    assert!(html.contains("Share of the log"), "no time-share chart");
    let sample = classes[0]["sample"]["query"].as_str().unwrap();
    assert!(
        !html.contains(sample),
        "a sample statement is in the report"
    );
    let out = inn()
        .args(["--format", "markdown", "report"])
        .arg(&json)
        .output()
        .unwrap();
    assert!(out.status.success());
    let md = String::from_utf8_lossy(&out.stdout);
    // slowlog's own document: its profile and totals.
    assert!(md.contains("| Rank"), "{md}");
    assert!(md.contains("Query time total"), "{md}");
}

/// `check --slowlog` on a log written by a real MariaDB with
/// log_slow_verbosity=query_plan: a lookup on an unindexed column is named
/// as a missing index, a whole-table read as a full scan, a GROUP BY that
/// outgrows a small tmp_table_size as a temporary table on disk; primary-key
/// lookups are not named. Adding the index makes the missing-index finding
/// go away on the next log.
#[test]
fn check_slowlog_on_a_real_mariadb_log() {
    if !support::live() {
        return;
    }
    use mysql::prelude::Queryable;
    let s = support::server();
    let datadir = s.sb.dir().join("data");
    let mut c = s.conn();
    c.query_drop("CREATE DATABASE shop").unwrap();
    c.query_drop("USE shop").unwrap();
    c.query_drop("CREATE TABLE orders (id INT PRIMARY KEY, customer INT NOT NULL, pad VARCHAR(120) NOT NULL) ENGINE=InnoDB").unwrap();
    c.query_drop("INSERT INTO orders SELECT seq, seq % 2000, REPEAT(CHAR(65 + seq % 26), 100) FROM seq_1_to_20000").unwrap();
    let digest = |name: &str, c: &mut mysql::Conn| {
        c.query_drop(format!(
            "SET GLOBAL slow_query_log_file='{name}', GLOBAL long_query_time=0, GLOBAL log_slow_verbosity='query_plan', GLOBAL slow_query_log=ON"
        ))
        .unwrap();
        // A new session: long_query_time is read at connect.
        let mut q = s.conn();
        q.query_drop("USE shop").unwrap();
        for i in 0..30 {
            let _: Vec<i32> = q
                .query(format!("SELECT id FROM orders WHERE customer = {i}"))
                .unwrap();
        }
        for i in 1..=300 {
            let _: Vec<String> = q
                .query(format!("SELECT pad FROM orders WHERE id = {i}"))
                .unwrap();
        }
        for _ in 0..3 {
            let _: Vec<(i32, i32)> = q.query("SELECT id, customer FROM orders").unwrap();
        }
        q.query_drop("SET SESSION tmp_table_size=16384, max_heap_table_size=16384")
            .unwrap();
        for _ in 0..3 {
            let _: Vec<(String, i64)> = q
                .query("SELECT pad, COUNT(*) FROM orders WHERE id > 0 GROUP BY pad, customer ORDER BY NULL")
                .unwrap();
        }
        drop(q);
        c.query_drop("SET GLOBAL slow_query_log=OFF").unwrap();
        let log = datadir.join(name);
        let out = inn()
            .args(["--format", "json", "check", "--no-server"])
            .arg(s.parent.path())
            .arg("--slowlog")
            .arg(&log)
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        let classes = ours(&log, &[]);
        let found: Vec<(String, String)> = v["result"]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["id"].as_str().unwrap().starts_with("server.queries"))
            .map(|f| {
                let short = f["subject"]["name"].as_str().unwrap();
                let fp = classes["classes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|c| c["id"].as_str().unwrap().ends_with(&short[2..]))
                    .map(|c| c["fingerprint"].as_str().unwrap().to_string())
                    .unwrap_or_else(|| panic!("{short} is not a class of the log"));
                (f["id"].as_str().unwrap().to_string(), fp)
            })
            .collect();
        found
    };
    let found = digest("check-1.log", &mut c);
    let has = |id: &str, fp: &str| found.iter().any(|(i, f)| i == id && f == fp);
    assert!(
        has(
            "server.queries.missing_index",
            "select id from orders where customer = ?"
        ),
        "{found:?}"
    );
    assert!(
        has(
            "server.queries.full_scan",
            "select id, customer from orders"
        ),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|(i, f)| i == "server.queries.tmp_table_on_disk"
                && f.contains("group by pad, customer")),
        "{found:?}"
    );
    assert!(
        !found.iter().any(|(_, f)| f.contains("where id = ?")),
        "a primary-key lookup was named: {found:?}"
    );
    c.query_drop("CREATE INDEX by_customer ON orders (customer)")
        .unwrap();
    let found = digest("check-2.log", &mut c);
    assert!(
        !found
            .iter()
            .any(|(i, f)| i == "server.queries.missing_index"
                && f == "select id from orders where customer = ?"),
        "the index did not help: {found:?}"
    );
}
