//! Two clients drive one throwaway server together (`--start-at` the same
//! time), each keeping its latency histogram (`--json-histogram`);
//! `innotune merge` adds their counts and takes percentiles from the merged
//! histogram, which the test recomputes from the clients' own histograms.

mod support;
use innotune::oltp::hist::percentile;
use innotune::oltp::result::{ms_to_ns, HistogramJson};
use serde_json::Value;
use std::process::Stdio;
use support::Start as _;
use support::{innotune, server};

fn hist(run: &Value) -> Vec<u64> {
    serde_json::from_value::<HistogramJson>(run["histogram"].clone())
        .unwrap()
        .dense()
        .unwrap()
}

#[test]
fn two_clients_merge_into_sums_and_a_merged_histogram_p95() {
    let s = server();
    let common: Vec<String> = ["--tables", "2", "--table-size", "2000"]
        .iter()
        .map(|x| x.to_string())
        .collect();
    let o = innotune()
        .args(["oltp", "oltp_read_write", "prepare"])
        .args(s.sock_args())
        .args(&common)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let dir = tempfile::tempdir().unwrap();
    // Both start at the same wall-clock second, a little ahead.
    let at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 3;
    let mut kids = Vec::new();
    // The same --threads list on both (merge refuses different lists).
    for (i, threads) in [(1, "2"), (2, "2")] {
        let out = dir.path().join(format!("client{i}.json"));
        let child = support::innotune_sys()
            .args(["--format", "json", "--output"])
            .arg(&out)
            .args(["oltp", "oltp_read_write", "run", "--json-histogram"])
            .args(["--start-at", &at.to_string(), "--time", "3"])
            .args(["--threads", threads])
            .args(s.sock_args())
            .args(&common)
            .stderr(Stdio::piped())
            .start();
        kids.push((out, child));
    }
    let mut results = Vec::new();
    for (out, child) in kids {
        let o = child.output_within(support::WAIT);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
        results.push((out, v));
    }

    let m = innotune()
        .args(["--format", "json", "merge"])
        .arg(&results[0].0)
        .arg(&results[1].0)
        .output()
        .unwrap();
    assert!(m.status.success(), "{}", String::from_utf8_lossy(&m.stderr));
    let mv: Value = serde_json::from_slice(&m.stdout).unwrap();
    assert_eq!(mv["schema"], "merge/2");
    let merged = &mv["result"]["runs"][0];

    let runs: Vec<&Value> = results
        .iter()
        .map(|(_, v)| &v["result"]["runs"][0])
        .collect();
    let sum = |k: &str| runs.iter().map(|r| r[k].as_u64().unwrap()).sum::<u64>();
    assert!(sum("transactions") > 0);
    assert_eq!(
        merged["transactions"].as_u64().unwrap(),
        sum("transactions")
    );
    assert_eq!(merged["events"].as_u64().unwrap(), sum("events"));
    assert_eq!(merged["threads"].as_u64().unwrap(), 4);
    assert_eq!(
        merged["queries"].as_u64().unwrap(),
        runs.iter()
            .map(|r| r["queries"]["total"].as_u64().unwrap())
            .sum::<u64>()
    );

    // p95 of the merged histogram, recomputed here from the clients'.
    let (a, b) = (hist(runs[0]), hist(runs[1]));
    let total: Vec<u64> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    assert_eq!(total.iter().sum::<u64>(), sum("events"));
    let p95 = ms_to_ns(percentile(&total, 95.0));
    assert_eq!(merged["latency"]["p95_ns"].as_u64().unwrap(), p95);
    // Each client's own p95 is its reported one (the histogram is its own).
    for r in &runs {
        assert_eq!(
            r["latency"]["p95_ns"].as_u64().unwrap(),
            ms_to_ns(percentile(&hist(r), 95.0))
        );
    }
    // Shares add up to 100 %.
    let shares: f64 = merged["per_client"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["share_pct"].as_f64().unwrap())
        .sum();
    assert!((shares - 100.0).abs() < 1e-6, "{shares}");

    // Text: one merged table and the shares.
    let t = innotune()
        .arg("merge")
        .arg(&results[0].0)
        .arg(&results[1].0)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&t.stdout);
    assert!(text.contains("Each client's share"), "{text}");

    // A start time already past is refused after the checks, before load.
    let o = innotune()
        .args([
            "oltp",
            "oltp_read_write",
            "run",
            "--start-at",
            "2001-01-01T00:00:00Z",
        ])
        .args(s.sock_args())
        .args(&common)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("has passed"), "{err}");
}

#[test]
fn merge_refuses_results_without_histograms_or_of_other_commands() {
    let dir = tempfile::tempdir().unwrap();
    let no_hist = dir.path().join("a.json");
    std::fs::write(
        &no_hist,
        r#"{"schema":"oltp/2","result":{"command":"run","workload":"oltp_read_write","runs":[{"threads":1,"transactions":5}]}}"#,
    )
    .unwrap();
    let probe = dir.path().join("p.json");
    let o = innotune()
        .args(["--format", "json", "--output"])
        .arg(&probe)
        .args(["probe", "/"])
        .output()
        .unwrap();
    assert!(o.status.success());
    for (a, b, want) in [
        (&no_hist, &no_hist, "--json-histogram"),
        (&probe, &no_hist, "not an oltp run result"),
    ] {
        let o = innotune().arg("merge").arg(a).arg(b).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(want), "{err}");
    }
}

/// Issue 39: the same result given twice (the file again, a link to it, a
/// copy) doubled the TPS, and clients with different --threads lists
/// (2,1 against 1,2) were added up to runs of 3 and 3 threads. Each is one
/// line, exit 2; two distinct clients with the same list still merge.
#[test]
fn merge_refuses_a_result_given_twice_and_different_thread_lists() {
    let fx =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results/oltp.json");
    let v: Value = serde_json::from_slice(&std::fs::read(&fx).unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, v: &Value| {
        let p = dir.path().join(name);
        std::fs::write(&p, serde_json::to_vec(v).unwrap()).unwrap();
        p
    };
    let a = write("a.json", &v);
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&a, &link).unwrap();
    let copy = write("copy.json", &v);
    // Another client's run: generated elsewhere, a moment later.
    let mut other = v.clone();
    other["generated_at"] = Value::from("2026-11-28T05:45:59Z");
    other["host"]["hostname"] = Value::from("client2");
    let b = write("b.json", &other);
    let mut swapped = other.clone();
    let runs = swapped["result"]["runs"].as_array_mut().unwrap();
    runs.reverse();
    let c = write("c.json", &swapped);
    let merge = |x: &std::path::Path, y: &std::path::Path| {
        innotune()
            .args(["--format", "json", "merge"])
            .arg(x)
            .arg(y)
            .output()
            .unwrap()
    };
    for (x, y, want) in [
        (&a, &a, "is the same file as"),
        (&a, &link, "is the same file as"),
        (&a, &copy, "is a copy of"),
        (&a, &c, "ran --threads 2,1 but"),
    ] {
        let o = merge(x, y);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{y:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(want) && err.contains("fix:"), "{err}");
        assert!(o.stdout.is_empty());
    }
    let o = merge(&a, &b);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let m: Value = serde_json::from_slice(&o.stdout).unwrap();
    let threads: Vec<u64> = m["result"]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["threads"].as_u64().unwrap())
        .collect();
    assert_eq!(threads, vec![2, 4]);
}
