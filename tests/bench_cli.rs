//! `innotune bench` through the real binary, on real files in a temp dir
//! under /var/tmp (ext4, O_DIRECT works), with short runs. The tests that
//! mount (tmpfs, ramfs, ext4) or attach loop devices are live
//! (`INNOTUNE_LIVE_TESTS=1`, root).

mod support;
use support::Start as _;
use support::{Loop, Mount, VAR_TMP};

use serde_json::Value;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command as Sys;
use std::time::Duration;

fn tmpdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("innotune-bench-test")
        .tempdir_in("/var/tmp")
        .unwrap()
}

/// Run `innotune --format json bench ARGS`, expect success, return `result`.
fn bench_json(args: &[&str]) -> Value {
    let out = support::innotune()
        .args(["--format", "json", "bench"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "bench {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["tool"], "innotune");
    assert_eq!(v["schema"], "bench/2");
    v["result"].clone()
}

/// Run bench expecting exit 2 and one error line; return that line.
fn bench_err(args: &[&str]) -> String {
    let out = support::innotune()
        .arg("bench")
        .args(args)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?} should fail");
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err}");
    assert!(err.starts_with("innotune: error: "), "{err}");
    err
}

fn d(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a u64: {v}"))
}

#[test]
fn every_rw_mode_and_engine_transfers_io_size() {
    let t = tmpdir();
    for engine in ["sync", "io_uring"] {
        for rw in ["read", "write", "randread", "randwrite", "randrw", "rw"] {
            let r = bench_json(&[
                "--rw",
                rw,
                "--bs",
                "16k",
                "--size",
                "4m",
                "--io_size",
                "1m",
                "--direct=1",
                "--iodepth",
                "4",
                "--ioengine",
                engine,
                "--directory",
                d(t.path()),
            ]);
            let job = &r["result"]["jobs"][0];
            assert_eq!(job["ioengine"], engine);
            let mut ios = 0;
            for dir in ["read", "write"] {
                let s = &job[dir];
                if s.is_null() {
                    continue;
                }
                assert_eq!(
                    u(&s["io_bytes"]),
                    u(&s["total_ios"]) * 16384,
                    "{rw} {engine}"
                );
                assert_eq!(u(&s["clat"]["count"]), u(&s["total_ios"]));
                if u(&s["total_ios"]) > 0 {
                    assert!(s["iops_per_s"].as_f64().unwrap() > 0.0);
                    assert!(u(&s["clat"]["p99_ns"]) >= u(&s["clat"]["p50_ns"]));
                    assert!(u(&s["clat"]["max_ns"]) >= u(&s["clat"]["p99_ns"]));
                }
                ios += u(&s["total_ios"]);
            }
            // io_size is per thread: 1 MiB / 16 KiB = 64 I/Os, then it stops.
            assert_eq!(ios, 64, "{rw} {engine}");
            let reads_expected = matches!(rw, "read" | "randread" | "randrw" | "rw");
            let writes_expected = matches!(rw, "write" | "randwrite" | "randrw" | "rw");
            assert_eq!(!job["read"].is_null(), reads_expected, "{rw}");
            assert_eq!(!job["write"].is_null(), writes_expected, "{rw}");
        }
    }
}

/// fio's mem through the CLI: every buffer placement transfers exactly
/// io_size both ways (placement itself: engine::tests), a choice other than
/// auto shows in the fio options, and an unknown one is one error line.
#[test]
fn mem_option_transfers_io_size_and_shows_in_options() {
    let t = tmpdir();
    for (mem, shown) in [
        ("auto", None),
        ("malloc", Some("mem=malloc")),
        ("mmaphuge", Some("mem=mmaphuge")),
    ] {
        for rw in ["write", "read"] {
            let r = bench_json(&[
                "--rw",
                rw,
                "--bs",
                "1m",
                "--size",
                "8m",
                "--direct=1",
                "--iodepth",
                "4",
                "--mem",
                mem,
                "--directory",
                d(t.path()),
            ]);
            let job = &r["result"]["jobs"][0];
            assert_eq!(u(&job[rw]["total_ios"]), 8, "{rw} mem {mem}");
            let opts = job["options"].as_str().unwrap();
            match shown {
                Some(s) => assert!(opts.contains(s), "{opts}"),
                None => assert!(!opts.contains("mem="), "{opts}"),
            }
        }
    }
    let e = bench_err(&["--rw", "read", "--mem", "shm", "--directory", d(t.path())]);
    assert!(e.contains("mem") && e.contains("mmaphuge"), "{e}");
}

/// fio's iodepth_batch_submit through the CLI: every batch size, even one
/// that leaves I/Os queued when the depth is reached (3 of 8), transfers
/// exactly io_size, and a batch other than 1 shows in the fio options.
#[test]
fn submit_batch_option_transfers_io_size() {
    let t = tmpdir();
    for (batch, shown) in [
        ("1", None),
        ("3", Some("iodepth_batch_submit=3")),
        ("0", Some("iodepth_batch_submit=0")),
    ] {
        for rw in ["randread", "randwrite"] {
            let r = bench_json(&[
                "--rw",
                rw,
                "--bs",
                "4k",
                "--size",
                "2m",
                "--direct=1",
                "--iodepth",
                "8",
                "--iodepth_batch_submit",
                batch,
                "--directory",
                d(t.path()),
            ]);
            let job = &r["result"]["jobs"][0];
            assert_eq!(job["ioengine"], "io_uring");
            let dir = if rw == "randread" { "read" } else { "write" };
            assert_eq!(u(&job[dir]["total_ios"]), 512, "{rw} batch {batch}");
            let opts = job["options"].as_str().unwrap();
            match shown {
                Some(s) => assert!(opts.contains(s), "{opts}"),
                None => assert!(!opts.contains("iodepth_batch"), "{opts}"),
            }
        }
    }
    let e = bench_err(&[
        "--rw",
        "randread",
        "--iodepth",
        "8",
        "--iodepth_batch_submit",
        "many",
        "--directory",
        d(t.path()),
    ]);
    assert!(
        e.contains("iodepth_batch_submit") && e.contains("fix:"),
        "{e}"
    );
}

#[test]
fn randrw_mix_follows_rwmixread() {
    let t = tmpdir();
    let r = bench_json(&[
        "--rw",
        "randrw",
        "--rwmixread",
        "70",
        "--bs",
        "4k",
        "--size",
        "8m",
        "--io_size",
        "8m",
        "--directory",
        d(t.path()),
    ]);
    let job = &r["result"]["jobs"][0];
    let (rd, wr) = (u(&job["read"]["total_ios"]), u(&job["write"]["total_ios"]));
    assert_eq!(rd + wr, 2048);
    let pct = rd as f64 * 100.0 / 2048.0;
    assert!((65.0..75.0).contains(&pct), "read share {pct}%");
}

#[test]
fn fsync_every_n_writes_is_counted() {
    let t = tmpdir();
    for (flag, kind) in [("--fsync", "fsync"), ("--fdatasync", "fdatasync")] {
        let r = bench_json(&[
            "--rw",
            "randwrite",
            "--bs",
            "4k",
            "--size",
            "4m",
            "--io_size",
            "400k",
            flag,
            "5",
            "--directory",
            d(t.path()),
        ]);
        let job = &r["result"]["jobs"][0];
        let writes = u(&job["write"]["total_ios"]);
        assert_eq!(writes, 100);
        assert_eq!(job["sync"]["kind"], kind);
        assert_eq!(u(&job["sync"]["total_ios"]), writes / 5);
        assert!(u(&job["sync"]["lat"]["p50_ns"]) > 0);
    }
}

#[test]
fn ramp_is_excluded_and_series_is_per_second() {
    let t = tmpdir();
    let r = bench_json(&[
        "--rw",
        "randread",
        "--bs",
        "16k",
        "--size",
        "16m",
        "--direct=1",
        "--runtime",
        "2",
        "--ramp_time",
        "1",
        "--directory",
        d(t.path()),
    ]);
    let res = &r["result"];
    assert_eq!(res["ramp_s"], 1.0);
    assert_eq!(res["time_based"], true);
    // The host's CPU shares over the window, read from the real /proc/stat:
    // four shares of the window's ticks that add up to 100, and a 2 s run
    // of I/O kept the host busy some of it.
    let c = &res["host_cpu"];
    let share = |k: &str| {
        let v = c[k].as_f64().unwrap_or_else(|| panic!("host_cpu.{k}: {c}"));
        assert!((0.0..=100.0).contains(&v), "{k} {v}");
        v
    };
    let sum: f64 = ["busy_pct", "iowait_pct", "steal_pct", "idle_pct"]
        .iter()
        .map(|k| share(k))
        .sum();
    assert!((sum - 100.0).abs() < 1e-6, "{c}");
    assert!(share("busy_pct") > 0.0, "{c}");
    let job = &res["jobs"][0];
    // The window is the runtime only, not ramp + runtime.
    assert_eq!(job["runtime_s"], 2.0);
    let series = job["series"].as_array().unwrap();
    assert_eq!(series.len(), 2);
    let sum: u64 = series.iter().map(|s| u(&s["read_iops_per_s"])).sum();
    let total = u(&job["read"]["total_ios"]);
    assert!(total > 0);
    // Series counts the same I/Os as the totals (the last partial ms aside).
    assert!(
        sum <= total && total - sum <= total / 50 + 5,
        "{sum} vs {total}"
    );
    let iops = job["read"]["iops_per_s"].as_f64().unwrap();
    assert!((iops * 2.0 - total as f64).abs() < 2.0);
    assert!(job["cpu"]["cpu_per_io_ns"].as_f64().unwrap() > 0.0);
    assert!(
        job["cpu"]["sys_cpu_pct"].as_f64().unwrap() + job["cpu"]["usr_cpu_pct"].as_f64().unwrap()
            > 0.0
    );
}

#[test]
fn files_are_real_reused_and_cleaned_only_if_ours() {
    let t = tmpdir();
    let args = [
        "--rw",
        "read",
        "--bs",
        "64k",
        "--size",
        "6m",
        "--nrfiles",
        "3",
        "--io_size",
        "64k",
        "--name",
        "lay",
        "--directory",
        d(t.path()),
    ];
    bench_json(&args);
    let f0 = t.path().join("innotune-lay.0");
    let md = std::fs::metadata(&f0).unwrap();
    assert_eq!(md.len(), 2 << 20);
    assert!(md.blocks() * 512 >= md.len(), "laid-out file is sparse");
    for i in 0..3 {
        assert!(t.path().join(format!("innotune-lay.{i}")).exists());
    }
    bench_json(&args);
    let md2 = std::fs::metadata(&f0).unwrap();
    assert_eq!(
        (md.ino(), md.mtime_nsec()),
        (md2.ino(), md2.mtime_nsec()),
        "not reused"
    );

    std::fs::write(t.path().join("notes.txt"), "mine").unwrap();
    let r = bench_json(&["--cleanup", "--directory", d(t.path())]);
    assert_eq!(r["removed"].as_array().unwrap().len(), 3);
    assert!(!f0.exists());
    assert!(t.path().join("notes.txt").exists());
}

#[test]
fn refuses_files_it_did_not_create_and_datadirs() {
    let t = tmpdir();
    std::fs::write(t.path().join("innotune-randwrite.0"), "precious").unwrap();
    let e = bench_err(&[
        "--rw",
        "randwrite",
        "--size",
        "1m",
        "--directory",
        d(t.path()),
    ]);
    assert!(e.contains("did not create") && e.contains("fix:"), "{e}");
    assert_eq!(
        std::fs::read(t.path().join("innotune-randwrite.0")).unwrap(),
        b"precious"
    );

    let dd = tmpdir();
    std::fs::create_dir(dd.path().join("mysql")).unwrap();
    std::fs::write(dd.path().join("ibdata1"), "").unwrap();
    let e = bench_err(&[
        "--rw",
        "randwrite",
        "--size",
        "1m",
        "--directory",
        d(dd.path()),
    ]);
    assert!(
        e.contains("MySQL data directory") && e.contains("--allow-datadir"),
        "{e}"
    );
    assert!(!dd.path().join(".innotune-bench").exists());
    bench_json(&[
        "--rw",
        "randwrite",
        "--size",
        "1m",
        "--io_size",
        "4k",
        "--allow-datadir",
        "--directory",
        d(dd.path()),
    ]);
}

#[test]
fn bad_input_gives_one_line_with_a_fix() {
    let t = tmpdir();
    let e = bench_err(&["--rw", "sideways", "--directory", d(t.path())]);
    assert!(e.contains("unknown rw mode"), "{e}");
    let e = bench_err(&["--rw", "read", "--bs", "1000", "--directory", d(t.path())]);
    assert!(e.contains("multiple of 512"), "{e}");
    let e = bench_err(&["--rw", "read", "--directory", "/nonexistent/innotune"]);
    assert!(e.contains("does not exist"), "{e}");
    let e = bench_err(&["--rw", "read"]);
    assert!(e.contains("--directory"), "{e}");
    let e = bench_err(&["--preset", "nope", "--directory", d(t.path())]);
    assert!(e.contains("page-read"), "{e}");
    let e = bench_err(&["--directory", d(t.path())]);
    assert!(e.contains("nothing to run"), "{e}");
}

#[test]
fn presets_are_listed_and_run() {
    let out = support::innotune()
        .args(["bench", "--list-presets"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let names = [
        "page-read",
        "page-write",
        "fsync-4k",
        "redo",
        "seq-read",
        "seq-write",
        "mixed",
    ];
    for n in names {
        assert!(text.contains(n), "{n} missing from --list-presets");
    }
    assert!(text.contains("numjobs=24") && text.contains("fsync=1") && text.contains("iodepth=32"));
    assert!(
        text.contains("bs=16k") && !text.contains("bs=16KiB"),
        "{text}"
    );

    let t = tmpdir();
    for n in names {
        // Small files and a size-based stop keep this quick; the preset's
        // shape (threads, depth, bs, sync) is what is exercised.
        let r = bench_json(&[
            "--preset",
            n,
            "--size",
            "8m",
            "--io_size",
            "1m",
            "--directory",
            d(t.path()),
        ]);
        let jobs = r["result"]["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), if n == "mixed" { 2 } else { 1 }, "{n}");
        for j in jobs {
            let ios: u64 = ["read", "write"]
                .iter()
                .filter(|k| !j[**k].is_null())
                .map(|k| u(&j[*k]["total_ios"]))
                .sum();
            assert!(ios > 0, "{n} did no I/O");
        }
        if n == "page-read" {
            // 24 threads × 1 MiB / 16 KiB.
            assert_eq!(u(&jobs[0]["read"]["total_ios"]), 24 * 64);
        }
        if n == "fsync-4k" {
            let j = &jobs[0];
            assert_eq!(u(&j["sync"]["total_ios"]), u(&j["write"]["total_ios"]));
        }
        if n == "mixed" {
            assert_eq!(jobs[1]["ioengine"], "io_uring");
            assert_eq!(jobs[0]["ioengine"], "sync");
        }
    }
    bench_json(&["--cleanup", "--directory", d(t.path())]);
}

/// bench/jobs/mixed-4k-writer.toml (bench/RESULTS.md reproduces a sweep
/// of 2026-11-26 13:18 with it) is the `mixed` preset, whose writer is on
/// 4 KiB pages (`mem=malloc`) since the preset went back to them: the same
/// jobs, names and settings, so a change to the preset that the file does
/// not follow fails here, and so does a preset whose writer leaves 4 KiB
/// pages.
#[test]
fn mixed_4k_writer_job_file_is_the_preset() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/jobs/mixed-4k-writer.toml");
    let t = tmpdir();
    let common = [
        "--size",
        "8m",
        "--io_size",
        "1m",
        "--directory",
        d(t.path()),
    ];
    let opts = |r: &Value| -> Vec<(String, String)> {
        r["result"]["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| {
                (
                    j["name"].as_str().unwrap().to_string(),
                    j["options"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let mut args = vec!["--preset", "mixed"];
    args.extend(common);
    let preset = opts(&bench_json(&args));
    let mut args = vec!["--job-file", d(&file)];
    args.extend(common);
    let from_file = opts(&bench_json(&args));
    assert_eq!(preset.len(), 2);
    assert_eq!(from_file[0], preset[0], "the reader differs");
    assert_eq!(from_file[1].0, preset[1].0);
    let set = |o: &str| {
        o.split_whitespace()
            .map(str::to_string)
            .collect::<std::collections::BTreeSet<_>>()
    };
    assert!(set(&preset[1].1).contains("mem=malloc"), "{:?}", preset[1]);
    assert_eq!(
        set(&from_file[1].1),
        set(&preset[1].1),
        "the writer differs"
    );
    bench_json(&["--cleanup", "--directory", d(t.path())]);
}

#[test]
fn toml_job_file_runs_jobs_together() {
    let t = tmpdir();
    let f = t.path().join("jobs.toml");
    std::fs::write(
        &f,
        format!(
            "[global]\ndirectory = \"{}\"\nruntime = \"1s\"\ndirect = 1\nsize = \"8m\"\n\
             [[job]]\nname = \"reader\"\nrw = \"randread\"\nbs = \"16k\"\n\
             [[job]]\nname = \"writer\"\nrw = \"write\"\nbs = \"1m\"\niodepth = 4\n",
            t.path().display()
        ),
    )
    .unwrap();
    let r = bench_json(&["--job-file", d(&f)]);
    let jobs = r["result"]["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    assert_eq!(jobs[0]["name"], "reader");
    assert_eq!(jobs[1]["ioengine"], "io_uring");
    assert_eq!(jobs[0]["runtime_s"], 1.0);
    assert!(u(&jobs[0]["read"]["total_ios"]) > 0 && u(&jobs[1]["write"]["total_ios"]) > 0);
    assert!(t.path().join("innotune-writer.0").exists());
}

/// Keys follow docs/json.md's units rule (fio's names plus their unit);
/// the settings string is fio's own syntax (`bs=4k`, never `4KiB`).
#[test]
fn json_keys_carry_units_and_options_are_fio_syntax() {
    let t = tmpdir();
    let r = bench_json(&[
        "--rw",
        "randread",
        "--bs",
        "4KiB",
        "--size",
        "4m",
        "--io_size",
        "256k",
        "--directory",
        d(t.path()),
    ]);
    let job = &r["result"]["jobs"][0];
    let s = &job["read"];
    for k in [
        "iops_per_s",
        "bw_bytes_per_s",
        "io_bytes",
        "total_ios",
        "runtime_s",
    ] {
        assert!(!s[k].is_null(), "{k} missing");
    }
    for k in ["iops", "bw", "bw_bytes", "runtime", "clat_ns"] {
        assert!(s.get(k).is_none(), "old key {k} still there");
    }
    assert!(
        job.get("write").is_none(),
        "no null for an absent direction"
    );
    for k in ["min_ns", "mean_ns", "p50_ns", "p99_9_ns", "max_ns", "count"] {
        assert!(!s["clat"][k].is_null(), "clat.{k} missing");
    }
    let p = &s["clat"]["percentiles_ns"];
    for k in ["50.000000", "99.000000", "99.900000"] {
        assert!(p[k].is_u64(), "{k} missing");
    }
    let opts = job["options"].as_str().unwrap();
    assert!(
        opts.contains("bs=4k ") && opts.contains("size=4m"),
        "{opts}"
    );
    assert!(!opts.contains("iB"), "{opts}");
    // Text output: the fio-like block, then a table with units in headers.
    let out = support::innotune()
        .args([
            "bench",
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--size",
            "4m",
            "--io_size",
            "64k",
        ])
        .args(["--directory", d(t.path())])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    // Not a terminal: no progress line, nothing on stderr.
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("IOPS")
            && text.contains("p99 (µs)")
            && text.contains("bandwidth (MiB/s)")
            && text.contains("randread: (rw=randread bs=4k"),
        "{text}"
    );
    // Markdown: a real table.
    let out = support::innotune()
        .args(["--format", "markdown", "bench", "--rw", "randread"])
        .args(["--bs", "4k", "--size", "4m", "--io_size", "64k"])
        .args(["--directory", d(t.path())])
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(md.contains("| job |") && md.contains("p99 (µs)"), "{md}");
}

#[test]
fn o_direct_unsupported_and_no_space_are_one_line() {
    if !support::live() {
        return;
    }
    // Since Linux 6.6 tmpfs accepts O_DIRECT; ramfs still refuses it with
    // EINVAL at open, which is the case to handle (also old tmpfs, some FUSE).
    let m = Mount::fs("ramfs", "mode=755");
    let e = bench_err(&[
        "--rw",
        "randread",
        "--size",
        "1m",
        "--direct=1",
        "--directory",
        d(&m.path),
    ]);
    assert!(e.contains("O_DIRECT") && e.contains("--direct=0"), "{e}");

    let small = Mount::fs("tmpfs", "size=2m");
    let e = bench_err(&[
        "--rw",
        "write",
        "--size",
        "8m",
        "--directory",
        d(&small.path),
    ]);
    assert!(
        e.contains("not enough space") && e.contains("--size"),
        "{e}"
    );

    let ro = Mount::fs("tmpfs", "size=2m,ro");
    let e = bench_err(&["--rw", "write", "--size", "1m", "--directory", d(&ro.path)]);
    assert!(e.contains("read-only") && e.contains("fix:"), "{e}");
}

/// `--preset mixed` lays out two files: space is checked for both before
/// either is written (issue 46: it wrote the first 1 GiB file, then said
/// "the files need 1GiB" and left it behind).
#[test]
fn space_is_checked_for_every_job_before_any_file_is_written() {
    if !support::live() {
        return;
    }
    // 12 MiB: room for one 8 MiB file, not for the preset's two.
    let small = Mount::fs("tmpfs", "size=12m");
    let e = bench_err(&[
        "--preset",
        "mixed",
        "--size",
        "8m",
        "--runtime",
        "1",
        "--directory",
        d(&small.path),
    ]);
    assert!(
        e.contains("not enough space") && e.contains("need 16MiB") && e.contains("--cleanup"),
        "names what both files need and how to free earlier runs' files: {e}"
    );
    let left: Vec<_> = std::fs::read_dir(&small.path)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("innotune-"))
        .collect();
    assert!(
        left.is_empty(),
        "no file written before the refusal: {left:?}"
    );
}

#[test]
fn raw_device_needs_flag_and_must_not_be_mounted() {
    if !support::live() {
        return;
    }
    let lo = Loop::new_in(VAR_TMP, 32 << 20);
    let dev = lo.dev.clone();

    let e = bench_err(&["--rw", "randwrite", "--filename", &dev, "--size", "8m"]);
    assert!(
        e.contains("raw block device") && e.contains("--allow-raw-device"),
        "{e}"
    );

    let r = bench_json(&[
        "--rw",
        "randrw",
        "--bs",
        "4k",
        "--filename",
        &dev,
        "--size",
        "8m",
        "--io_size",
        "256k",
        "--direct=1",
        "--allow-raw-device",
    ]);
    let job = &r["result"]["jobs"][0];
    assert_eq!(job["files"][0], dev.as_str());
    assert_eq!(
        u(&job["read"]["total_ios"]) + u(&job["write"]["total_ios"]),
        64
    );
    // The raw device's own counters over the run, under its kernel name.
    let devs = r["result"]["devices"].as_array().expect("devices");
    assert_eq!(devs.len(), 1, "{devs:?}");
    assert_eq!(devs[0]["device"], dev.trim_start_matches("/dev/"));
    assert!(devs[0]["r_per_s"].as_f64().unwrap() > 0.0, "{devs:?}");
    assert!(devs[0]["w_per_s"].as_f64().unwrap() > 0.0, "{devs:?}");

    // A read-only job needs no consent and says nothing of destroying
    // (issue 39), and the device is left byte for byte as it was.
    let before = std::fs::read(&dev).unwrap();
    for rw in ["read", "randread"] {
        let o = support::innotune()
            .args(["--format", "json", "bench", "--rw", rw, "--bs", "4k"])
            .args(["--filename", &dev, "--size", "8m", "--io_size", "256k"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{rw}: {err}");
        assert!(!err.contains("destroys"), "{rw}: {err}");
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(
            u(&r["result"]["result"]["jobs"][0]["read"]["total_ios"]),
            64,
            "{rw}"
        );
    }
    assert!(std::fs::read(&dev).unwrap() == before, "a read job wrote");

    let _m = lo.mount_ext4();
    let e = bench_err(&[
        "--rw",
        "randwrite",
        "--filename",
        &dev,
        "--size",
        "8m",
        "--allow-raw-device",
    ]);
    assert!(e.contains("mounted"), "{e}");
    // Reading a mounted device changes nothing on it: allowed.
    let r = bench_json(&[
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--filename",
        &dev,
        "--size",
        "8m",
        "--io_size",
        "64k",
    ]);
    assert_eq!(u(&r["result"]["jobs"][0]["read"]["total_ios"]), 16);

    // A regular file is never a --filename target.
    let e = bench_err(&[
        "--rw",
        "randwrite",
        "--filename",
        "/etc/hostname",
        "--size",
        "1m",
    ]);
    assert!(e.contains("not a block device"), "{e}");
}

/// The devices under the directory over the measured window: the loop
/// device first (the filesystem's own), with the rate the tool measured and
/// no more requests in flight than the job keeps; tmpfs has none.
#[test]
fn device_counters_cover_the_window() {
    if !support::live() {
        return;
    }
    let lo = Loop::new_in(VAR_TMP, 96 << 20);
    let dev = lo.dev.clone();
    let m = lo.mount_ext4();
    let m = &m.path;
    let r = bench_json(&[
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--iodepth",
        "8",
        "--ioengine",
        "io_uring",
        "--direct=1",
        "--size",
        "32m",
        "--runtime",
        "1",
        "--ramp_time",
        "200ms",
        "--directory",
        d(m),
    ]);
    let res = &r["result"];
    assert_eq!(u(&res["depth"]), 8);
    let devs = res["devices"].as_array().expect("devices");
    assert_eq!(
        devs[0]["device"],
        dev.trim_start_matches("/dev/"),
        "{devs:?}"
    );
    let iops = res["jobs"][0]["read"]["iops_per_s"].as_f64().unwrap();
    let rate = devs[0]["r_per_s"].as_f64().unwrap();
    assert!(
        (rate / iops - 1.0).abs() < 0.1,
        "the loop device completed {rate:.0}/s over the window, the job {iops:.0}/s"
    );
    let q = devs[0]["aqu_sz"].as_f64().unwrap();
    assert!(q > 0.0 && q <= 8.5, "in flight {q}");
    assert!(devs[0]["r_await_ns"].as_u64().unwrap() > 0);
    // No assertion on w/s: ext4's background inode-table init and journal
    // commits write to the device during any run, as they would on a host.

    // No block device under tmpfs: no table, no key.
    let tmp = Mount::fs("tmpfs", "size=8m");
    let r = bench_json(&["--rw", "read", "--size", "1m", "--directory", d(&tmp.path)]);
    assert!(r["result"].get("devices").is_none(), "{r}");
    assert_eq!(u(&r["result"]["depth"]), 1);
}

/// `--mem auto` (the default) puts a 1 MiB I/O's buffer on a huge page even
/// at depth 1, so each read reaches the loop device whole: from 4 KiB pages
/// the device (128 segments at most) got every one as two 512 KiB requests.
#[test]
fn large_ios_reach_the_device_whole_at_depth_one() {
    if !support::live() {
        return;
    }
    let thp =
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
    if thp.is_empty() || thp.contains("[never]") {
        eprintln!("skipped: transparent huge pages are off on this host");
        return;
    }
    let lo = Loop::new_in(VAR_TMP, 96 << 20);
    let dev = lo.dev.clone();
    let m = lo.mount_ext4();
    let m = &m.path;
    let r = bench_json(&[
        "--rw",
        "read",
        "--bs",
        "1m",
        "--iodepth",
        "1",
        "--ioengine",
        "io_uring",
        "--direct=1",
        "--size",
        "32m",
        "--io_size",
        "64m",
        "--directory",
        d(m),
    ]);
    let res = &r["result"];
    assert!(
        !res["jobs"][0]["options"].as_str().unwrap().contains("mem="),
        "the default, auto"
    );
    let devs = res["devices"].as_array().expect("devices");
    assert_eq!(devs[0]["device"], dev.trim_start_matches("/dev/"));
    // Split, every read is two 512 KiB requests; whole, one of 1024. The
    // line between leaves room for a few small reads of ext4's own.
    let per_request =
        devs[0]["read_bytes_per_s"].as_f64().unwrap() / devs[0]["r_per_s"].as_f64().unwrap();
    assert!(
        per_request > 768.0 * 1024.0,
        "{:.0} KiB per request at the loop device: the 1 MiB reads were split",
        per_request / 1024.0
    );
}

/// Read system calls of `pid`'s first job thread (named `bench-0-0`), once
/// it exists: proof that the measured loop is issuing I/O.
fn job_thread_reads(pid: u32) -> u64 {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task"));
    for t in tasks.into_iter().flatten().flatten() {
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        if comm.trim() == "bench-0-0" {
            let io = std::fs::read_to_string(t.path().join("io")).unwrap_or_default();
            return io
                .lines()
                .find_map(|l| l.strip_prefix("syscr: "))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
        }
    }
    0
}

fn spawn_bench(args: &[&str]) -> support::Spawned {
    support::innotune_sys()
        .args(["--format", "json", "bench"])
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .start()
}

/// SIGINT and SIGTERM both end a run early with its partial results
/// (SIGTERM used to kill it with nothing on stdout), written to stdout or
/// `--output`, and exit 130 / 143 as other commands do on a signal (issue
/// 39: it exited 0, as if the run had completed).
#[test]
fn ctrl_c_and_sigterm_end_the_run_with_partial_results() {
    let t = tmpdir();
    // Lay the file out first, so the signal lands in the measured run.
    bench_json(&[
        "--rw",
        "randread",
        "--bs",
        "16k",
        "--size",
        "8m",
        "--io_size",
        "16k",
        "--directory",
        d(t.path()),
    ]);
    let report = t.path().join("report.json");
    for (sig, output) in [(libc::SIGINT, None), (libc::SIGTERM, Some(&report))] {
        let mut args = vec![
            "--rw",
            "randread",
            "--bs",
            "16k",
            "--size",
            "8m",
            "--runtime",
            "60",
            "--directory",
            d(t.path()),
        ];
        if let Some(o) = output {
            args.extend(["--output", d(o)]);
        }
        let child = spawn_bench(&args);
        let pid = child.id();
        support::wait_for(
            "the job thread to issue reads",
            Duration::from_secs(60),
            || job_thread_reads(pid) > 200,
        );
        // SAFETY: signalling our own child.
        unsafe { libc::kill(pid as i32, sig) };
        let out = child.output_within(support::WAIT);
        assert_eq!(
            out.status.code(),
            Some(128 + sig),
            "signal {sig}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let written = match output {
            Some(o) => std::fs::read(o).unwrap(),
            None => out.stdout.clone(),
        };
        let v: Value = serde_json::from_slice(&written).unwrap();
        let r = &v["result"]["result"];
        assert_eq!(r["interrupted"], true, "signal {sig}");
        let secs = r["jobs"][0]["runtime_s"].as_f64().unwrap();
        assert!(secs > 0.0 && secs < 30.0, "runtime {secs} s");
        assert!(u(&r["jobs"][0]["read"]["total_ios"]) > 0);
    }
}

/// SIGINT or SIGTERM while the files are being laid out: the partial file
/// and its manifest entry are both gone (the entry used to stay behind).
#[test]
fn a_signal_during_layout_leaves_nothing_stale() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        let t = tmpdir();
        let f = t.path().join("innotune-big.0");
        let child = spawn_bench(&[
            "--rw",
            "read",
            "--name",
            "big",
            "--size",
            "2g",
            "--io_size",
            "4k",
            "--directory",
            d(t.path()),
        ]);
        let pid = child.id();
        support::wait_for(
            "the layout to start writing",
            Duration::from_secs(60),
            || std::fs::metadata(&f).is_ok_and(|m| m.len() > 0),
        );
        // SAFETY: signalling our own child.
        unsafe { libc::kill(pid as i32, sig) };
        let out = child.output_within(support::WAIT);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "signal {sig}: {err}");
        assert!(err.contains("interrupted while laying out"), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(!f.exists(), "partial file left behind");
        assert!(
            !t.path().join(".innotune-bench").exists(),
            "manifest entry left behind"
        );
    }
}

#[test]
fn o_direct_io_smaller_than_the_sector_is_one_line() {
    if !support::live() {
        return;
    }
    let lo = Loop::new_with(VAR_TMP, 8 << 20, &["--sector-size", "4096"]);
    for (engine, depth) in [("sync", "1"), ("io_uring", "4")] {
        let args = [
            "--rw",
            "randread",
            "--bs",
            "512",
            "--direct=1",
            "--filename",
            &lo.dev,
            "--allow-raw-device",
            "--size",
            "4m",
            "--io_size",
            "64k",
            "--iodepth",
            depth,
            "--ioengine",
            engine,
        ];
        let e = bench_err(&args);
        assert!(
            e.contains("O_DIRECT") && e.contains("logical block size"),
            "{engine}: {e}"
        );
    }
}

#[test]
fn writes_change_the_file_and_reads_do_not() {
    let t = tmpdir();
    let base = [
        "--bs",
        "16k",
        "--size",
        "4m",
        "--io_size",
        "1m",
        "--direct=1",
        "--name",
        "h",
        "--directory",
        d(t.path()),
    ];
    let f = t.path().join("innotune-h.0");
    for engine in ["sync", "io_uring"] {
        let run = |rw: &str| {
            let mut a = vec!["--rw", rw, "--ioengine", engine, "--iodepth", "1"];
            if engine == "io_uring" {
                a[5] = "8";
            }
            a.extend_from_slice(&base);
            bench_json(&a);
        };
        run("randread");
        let before = std::fs::read(&f).unwrap();
        run("randread");
        assert!(
            std::fs::read(&f).unwrap() == before,
            "a read job changed the file"
        );
        run("randwrite");
        let after = std::fs::read(&f).unwrap();
        let changed = before
            .chunks(16384)
            .zip(after.chunks(16384))
            .filter(|(a, b)| a != b)
            .count();
        // 64 random 16 KiB writes over 256 blocks touch many distinct blocks.
        assert!(changed >= 32, "{engine}: only {changed} blocks changed");
        assert_eq!(after.len(), before.len());
    }
}

#[test]
fn permission_denied_is_one_line() {
    use std::os::unix::fs::PermissionsExt;
    let t = tmpdir();
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    // Run as nobody against a root-only directory.
    let out = Sys::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(support::bin::INNOTUNE)
        .args([
            "bench",
            "--rw",
            "write",
            "--size",
            "1m",
            "--directory",
            d(t.path()),
        ])
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    if e.starts_with("setpriv:") {
        // nobody cannot execute the test binary here (e.g. a 0700 home).
        eprintln!("skipped: {e}");
        return;
    }
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    assert!(e.contains("permission denied") && e.contains("fix:"), "{e}");
}

/// After `innotune bench` exits, its filesystem can be unmounted at once.
/// io_uring releases registered files in a deferred kernel worker unless
/// they are unregistered first; without that, this `umount` fails with
/// EBUSY (4 of 4 times on this machine before the fix).
#[test]
fn io_uring_files_are_released_before_exit() {
    if !support::live() {
        return;
    }
    for _ in 0..2 {
        let m = Mount::fs("tmpfs", "size=64m");
        bench_json(&[
            "--rw",
            "randread",
            "--bs",
            "16k",
            "--iodepth",
            "32",
            "--ioengine",
            "io_uring",
            "--direct=1",
            "--size",
            "16m",
            "--runtime",
            "1",
            "--directory",
            d(&m.path),
        ]);
        let out = Sys::new("umount").arg(&m.path).output().unwrap();
        assert!(
            out.status.success(),
            "umount right after bench: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Unmounted: the guard's own umount is a no-op; it removes the dir.
    }
}

/// Run bench expecting exit 2; the last stderr line is the error (warnings
/// may come first). Returns all of stderr.
fn bench_fail(args: &[&str]) -> String {
    let out = support::innotune()
        .arg("bench")
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{args:?} should fail: {err}");
    let last = err.trim_end().lines().last().unwrap_or("");
    assert!(last.starts_with("innotune: error: "), "{err}");
    err
}

/// A root-owned file outside the bench directory, and its bytes.
fn victim() -> (tempfile::TempDir, PathBuf, Vec<u8>) {
    let dir = tmpdir();
    let p = dir.path().join("shadow");
    let bytes = b"root:secret:19000:0:99999:7:::\n".repeat(4096);
    std::fs::write(&p, &bytes).unwrap();
    (dir, p, bytes)
}

/// Issue 11, item 1: in a shared directory (0777, and 1777 with the sticky
/// bit), `nobody` forges the manifest and plants `innotune-read.0 -> a
/// root-owned file`. A root bench that writes, and a root --cleanup, must
/// leave the target byte-identical and not delete a forged entry.
#[test]
fn forged_manifest_and_planted_symlink_are_refused() {
    use std::os::unix::fs::PermissionsExt;
    for mode in [0o777, 0o1777] {
        let t = tmpdir();
        std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(mode)).unwrap();
        let (_vd, target, bytes) = victim();
        std::fs::write(t.path().join("notes.txt"), "mine").unwrap();
        let manifest =
            r#"{{"tool":"innotune bench","files":{{"innotune-read.0":1048576,"notes.txt":4}}}}"#;
        support::sh_as_nobody(&format!(
            "cd '{}' && printf '%s' '{manifest}' > .innotune-bench && ln -s '{}' innotune-read.0",
            t.path().display(),
            target.display()
        ));
        let e = bench_fail(&[
            "--rw",
            "write",
            "--name",
            "read",
            "--size",
            "1m",
            "--io_size",
            "64k",
            "--directory",
            d(t.path()),
        ]);
        assert!(
            e.contains("ignoring") && e.contains("did not create"),
            "{e}"
        );
        assert_eq!(std::fs::read(&target).unwrap(), bytes, "mode {mode:o}");
        let out = support::innotune()
            .args(["bench", "--cleanup", "--directory", d(t.path())])
            .output()
            .unwrap();
        assert!(out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("ignoring"), "{err}");
        assert!(t.path().join("notes.txt").exists(), "forged entry deleted");
        assert_eq!(std::fs::read(&target).unwrap(), bytes);
        // Removing the planted link is nobody's business: it is still there.
        assert!(std::fs::symlink_metadata(t.path().join("innotune-read.0")).is_ok());
    }
}

/// A manifest root itself owns (say, edited by hand) still cannot make
/// --cleanup delete a name innotune never creates, nor follow a symlink.
#[test]
fn cleanup_removes_only_verified_bench_files() {
    let t = tmpdir();
    let (_vd, target, bytes) = victim();
    std::fs::write(t.path().join("notes.txt"), "mine").unwrap();
    std::os::unix::fs::symlink(&target, t.path().join("innotune-read.0")).unwrap();
    std::fs::write(
        t.path().join(".innotune-bench"),
        r#"{"tool":"innotune bench","files":{"innotune-read.0":1048576,"notes.txt":4}}"#,
    )
    .unwrap();
    let out = support::innotune()
        .args([
            "--format",
            "json",
            "bench",
            "--cleanup",
            "--directory",
            d(t.path()),
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["result"]["removed"].as_array().unwrap().len(), 0);
    let warnings = v["warnings"].to_string();
    assert!(
        warnings.contains("notes.txt") && warnings.contains("symbolic link"),
        "{warnings}"
    );
    assert!(t.path().join("notes.txt").exists());
    assert_eq!(std::fs::read(&target).unwrap(), bytes);
}

/// A listed file replaced by another one (another inode) is not reused,
/// written or removed.
#[test]
fn a_replaced_file_is_not_innotunes() {
    let t = tmpdir();
    let args = [
        "--rw",
        "write",
        "--name",
        "swap",
        "--size",
        "1m",
        "--io_size",
        "64k",
        "--directory",
        d(t.path()),
    ];
    bench_json(&args);
    let f = t.path().join("innotune-swap.0");
    let other = t.path().join("other");
    std::fs::write(&other, vec![7u8; 1 << 20]).unwrap();
    std::fs::rename(&other, &f).unwrap();
    let e = bench_fail(&args);
    assert!(e.contains("not the file innotune created"), "{e}");
    assert_eq!(std::fs::read(&f).unwrap(), vec![7u8; 1 << 20]);
    bench_json(&["--cleanup", "--directory", d(t.path())]);
    assert!(f.exists(), "cleanup removed a file innotune did not create");
}

/// A process named `mariadbd` with `--datadir=D` stands in for a running
/// server (the same /proc facts probe reads). Killed with its group on drop.
struct FakeServer(support::Spawned, #[allow(dead_code)] tempfile::TempDir);
impl FakeServer {
    fn start(datadir: &Path) -> FakeServer {
        use std::os::unix::process::CommandExt;
        let bin = tmpdir();
        let link = bin.path().join("mariadbd");
        std::os::unix::fs::symlink("/bin/sh", &link).unwrap();
        let child = Sys::new(&link)
            .args(["-c", "sleep 120; :", "mariadbd"])
            .arg(format!("--datadir={}", datadir.display()))
            .process_group(0)
            .start();
        let pid = child.id();
        support::wait_for("the fake server to exec", Duration::from_secs(60), || {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c.trim() == "mariadbd")
        });
        FakeServer(child, bin)
    }
}
impl Drop for FakeServer {
    fn drop(&mut self) {
        // SAFETY: our own child's process group.
        unsafe { libc::kill(-(self.0.id() as i32), libc::SIGKILL) };
        let _ = self.0.wait();
    }
}

/// Issue 11, item 2: `--directory` equal to, inside, or containing the
/// datadir of a running server is refused with one line naming it, even
/// with --allow-datadir (which only overrides the look-alike heuristics),
/// and nothing is written. `datadir/a/b` used to be accepted.
#[test]
fn directories_near_a_running_servers_datadir_are_refused() {
    let t = tmpdir();
    let data = t.path().join("data");
    let deep = data.join("a").join("b");
    std::fs::create_dir_all(&deep).unwrap();
    let _srv = FakeServer::start(&data);
    for (dir, relation) in [
        (&data, "is the"),
        (&deep, "is inside"),
        (&t.path().to_path_buf(), "contains"),
    ] {
        for extra in [None, Some("--allow-datadir")] {
            let mut args = vec!["--rw", "write", "--size", "1m", "--directory", d(dir)];
            args.extend(extra);
            let e = bench_err(&args);
            assert!(
                e.contains(relation) && e.contains(d(&data)) && e.contains("running server pid"),
                "{e}"
            );
        }
    }
    assert!(
        std::fs::read_dir(&deep).unwrap().next().is_none(),
        "wrote into the datadir"
    );
    assert!(!data.join(".innotune-bench").exists());
}

/// Issue 11, item 9 and the smaller ones: values that panicked, were
/// silently changed, or gave errors without the option's name.
#[test]
fn bad_values_are_one_line_naming_the_option() {
    let t = tmpdir();
    let base = ["--rw", "read", "--size", "1m", "--directory", d(t.path())];
    let cases: &[(&[&str], &[&str])] = &[
        (&["--runtime", "1e300"], &["--runtime", "out of range"]),
        (
            &["--ramp_time", "99999999999999999999"],
            &["--ramp_time", "out of range"],
        ),
        (&["--runtime=-1"], &["--runtime", "zero or more"]),
        (
            &["--runtime", "nan"],
            &["--runtime", "\"nan\" is not a number"],
        ),
        (
            &["--runtime", "0"],
            &["--runtime 0 measures nothing", "io_size"],
        ),
        (&["--nrfiles", "100000"], &["nrfiles=100000", "1..65536"]),
    ];
    for (extra, want) in cases {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        let e = bench_err(&args);
        for w in *want {
            assert!(e.contains(w) && e.contains("fix:"), "{extra:?}: {e}");
        }
    }
    let f = t.path().join("j.toml");
    std::fs::write(
        &f,
        "[global]\nruntime = \"1e300\"\n[[job]]\nrw = \"read\"\n",
    )
    .unwrap();
    let e = bench_err(&["--job-file", d(&f), "--directory", d(t.path())]);
    assert!(e.contains("runtime") && e.contains("out of range"), "{e}");
    // A TOML syntax error names its line and column.
    std::fs::write(&f, "[global]\nsize = \"1m\"\n[[job]]\nrw = read\n").unwrap();
    let e = bench_err(&["--job-file", d(&f), "--directory", d(t.path())]);
    assert!(e.contains("line 4, column 6"), "{e}");
}

/// tmpfs is RAM: O_DIRECT there still measures memory. Said in the
/// result (`not_on_device`, and a warning note on the text page).
#[test]
fn tmpfs_results_are_flagged_as_ram_speed() {
    if !support::live() {
        return;
    }
    let m = Mount::fs("tmpfs", "size=16m");
    let args = [
        "bench",
        "--rw",
        "randread",
        "--size",
        "4m",
        "--io_size",
        "64k",
        "--direct=1",
        "--directory",
        d(&m.path),
    ];
    let r = bench_json(&args[1..]);
    let flags = &r["not_on_device"];
    assert_eq!(flags[0]["why"], "memory_filesystem", "{r:#}");
    assert_eq!(flags[0]["filesystem"], "tmpfs");
    assert_eq!(flags[0]["direct"], true);
    let out = support::innotune().args(args).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("tmpfs") && text.contains("RAM speed even with --direct"),
        "{text}"
    );
}

/// One 1-second page-read (O_DIRECT, 32 MiB) on ext4 on a loop device
/// backed by /dev/shm: with `losetup --direct-io=on` its I/O reaches the
/// loop device and on to the backing file directly, nothing is flagged;
/// without (loop/dio 0) the loop device reads its backing file through the
/// page cache: flagged in JSON (`not_on_device[].why` = `loop_buffered`,
/// naming the device and its backing file) and on the text page.
#[test]
fn a_loop_device_without_direct_io_is_flagged_and_one_with_it_is_not() {
    if !support::live() {
        return;
    }
    for direct_io in [false, true] {
        let lab = support::Lab::new(support::LabOpts {
            tag: "bench-dio",
            base: support::RAM,
            size: 128 << 20,
            direct_io,
            ..Default::default()
        });
        let dio = std::fs::read_to_string(format!("/sys/block/{}/loop/dio", lab.name())).unwrap();
        assert_eq!(dio.trim(), if direct_io { "1" } else { "0" });
        let args = [
            "bench",
            "--preset",
            "page-read",
            "--size",
            "32m",
            "--runtime",
            "1s",
            "--cleanup",
            "--directory",
            d(&lab.mnt),
        ];
        let r = bench_json(&args[1..]);
        // The loop device's counters were read over the window either way.
        assert_eq!(r["result"]["devices"][0]["device"], lab.name(), "{r:#}");
        let flags = r["not_on_device"].as_array().cloned().unwrap_or_default();
        if direct_io {
            assert!(flags.is_empty(), "direct I/O reached the device: {flags:?}");
            continue;
        }
        assert_eq!(flags.len(), 1, "{flags:?}");
        assert_eq!(flags[0]["why"], "loop_buffered");
        assert_eq!(flags[0]["device"], lab.name());
        assert_eq!(flags[0]["backing_file"], d(&lab.img));
        let out = support::innotune().args(args).output().unwrap();
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains(&format!(
                "{} reads and writes its backing file {} through the page cache",
                lab.name(),
                lab.img.display()
            )),
            "{text}"
        );
    }
}

/// Buffered reads (direct=0) of a 32 MiB file on a loop device with
/// direct I/O: after the first pass the file is in the page cache, and
/// the device counts a sliver of what the job read. Flagged by the
/// device's own counters (`few_device_bytes`, under a tenth).
#[test]
fn buffered_reads_served_by_the_page_cache_are_flagged_by_the_device_counters() {
    if !support::live() {
        return;
    }
    let lab = support::Lab::new(support::LabOpts {
        tag: "bench-cached",
        base: support::RAM,
        size: 128 << 20,
        ..Default::default()
    });
    let r = bench_json(&[
        "--rw",
        "randread",
        "--bs",
        "16k",
        "--direct=0",
        "--size",
        "32m",
        "--runtime",
        "2s",
        "--cleanup",
        "--directory",
        d(&lab.mnt),
    ]);
    let flags = r["not_on_device"].as_array().cloned().unwrap_or_default();
    let few: Vec<&Value> = flags
        .iter()
        .filter(|f| f["why"] == "few_device_bytes")
        .collect();
    assert_eq!(few.len(), 1, "{r:#}");
    assert_eq!(few[0]["device"], lab.name());
    assert_eq!(few[0]["direction"], "read");
    let (issued, seen) = (
        few[0]["issued_bytes_per_s"].as_f64().unwrap(),
        few[0]["device_bytes_per_s"].as_f64().unwrap(),
    );
    assert!(seen < issued / 10.0, "{issued} vs {seen}");
}
