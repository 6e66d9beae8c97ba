//! `innotune bench --survey` through the real binary.
//!
//! Offline (any user): the plan on fixture host trees (`--root … --dry-run`)
//! and the refusals. Live (`INNOTUNE_LIVE_TESTS=1`, root): two loop devices
//! on files under /var/tmp filled with known bytes, surveyed for real; the
//! files' bytes are compared before and after (the read-only proof), and a
//! mounted loop device is surveyed and its filesystem checked afterwards.

mod support;
use support::{Loop, VAR_TMP};

use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `innotune [--root ROOT] --format json bench --survey ARGS`, expecting
/// success; the `result.survey` object.
fn survey_json(root: Option<&Path>, args: &[&str]) -> Value {
    survey_envelope(root, args)["result"]["survey"].clone()
}

/// The same, the whole envelope (what `report` and `check --results` read).
fn survey_envelope(root: Option<&Path>, args: &[&str]) -> Value {
    let mut c = support::innotune();
    if let Some(r) = root {
        c.arg("--root").arg(r);
    }
    let out = c
        .args(["--format", "json", "bench", "--survey"])
        .args(args)
        .env("INNOTUNE_STATE_DIR", state_dir())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "survey {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema"], "bench/2");
    v
}

fn state_dir() -> PathBuf {
    std::env::temp_dir().join("innotune-survey-test-state")
}

/// `innotune bench ARGS` expecting exit 2 and one error line.
fn bench_err(root: Option<&Path>, args: &[&str]) -> String {
    let mut c = support::innotune();
    if let Some(r) = root {
        c.arg("--root").arg(r);
    }
    let out = c
        .arg("bench")
        .args(args)
        .env("INNOTUNE_STATE_DIR", state_dir())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{args:?} should fail: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err}");
    assert!(err.starts_with("innotune: error: "), "{err}");
    err
}

/// (class, [disk names]) of a survey object.
fn classes(s: &Value) -> Vec<(String, Vec<String>)> {
    s["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["class"].as_str().unwrap().to_string(),
                c["disks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|d| d["name"].as_str().unwrap().to_string())
                    .collect(),
            )
        })
        .collect()
}

#[test]
fn dry_run_classes_fixture_hosts() {
    let s = survey_json(Some(&support::fixture_host("nvme-ssd")), &["--dry-run"]);
    assert_eq!(s["dry_run"], true);
    assert_eq!(classes(&s), vec![("nvme".into(), vec!["nvme0n1".into()])]);
    assert_eq!(s["classes"][0]["disks"][0]["rotational"], false);
    assert!(s["classes"][0]["disks"][0]["alone"]
        .as_array()
        .unwrap()
        .is_empty());
    assert_eq!(s["jobs"].as_array().unwrap().len(), 4);
    // 5 s default window, four jobs, one disk alone, no parallel run.
    assert_eq!(s["planned_s"], 20.0);

    let s = survey_json(
        Some(&support::fixture_host("hdd-partitions")),
        &["--dry-run"],
    );
    assert_eq!(classes(&s), vec![("hdd".into(), vec!["sda".into()])]);
    assert_eq!(s["classes"][0]["disks"][0]["rotational"], true);

    // md members are disks (noted), the array itself is skipped with why.
    let s = survey_json(
        Some(&support::fixture_host("md-raid0")),
        &["--dry-run", "--runtime", "2s"],
    );
    let all: Vec<String> = classes(&s).into_iter().flat_map(|(_, d)| d).collect();
    for m in ["sda", "sdb", "sdc", "sdd"] {
        assert!(all.contains(&m.to_string()), "{m} not surveyed: {all:?}");
    }
    assert!(!all.contains(&"md0".to_string()));
    let disk = s["classes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["disks"].as_array().unwrap())
        .find(|d| d["name"] == "sda")
        .unwrap();
    assert!(
        disk["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("member of md0")),
        "{disk}"
    );
    let md = s["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "md0")
        .expect("md0 skipped");
    assert!(md["reason"].as_str().unwrap().contains("members"), "{md}");

    // Named devices: only those.
    let s = survey_json(
        Some(&support::fixture_host("md-raid0")),
        &["--dry-run", "/dev/sdb"],
    );
    let all: Vec<String> = classes(&s).into_iter().flat_map(|(_, d)| d).collect();
    assert_eq!(all, vec!["sdb".to_string()]);
}

#[test]
fn refusals_are_one_line() {
    for rw in ["write", "randwrite", "randrw", "rw"] {
        let e = bench_err(None, &["--survey", "--rw", rw]);
        assert!(
            e.contains("only reads") && e.contains("innotune bench --directory DIR --rw randwrite"),
            "{rw}: {e}"
        );
    }
    let e = bench_err(None, &["--survey", "--bs", "4k"]);
    assert!(e.contains("--bs") && e.contains("does not apply"), "{e}");
    let e = bench_err(None, &["--survey", "--directory", "/var/tmp"]);
    assert!(e.contains("--directory"), "{e}");
    let e = bench_err(None, &["/dev/sda"]);
    assert!(e.contains("--survey"), "{e}");
    let e = bench_err(Some(&support::fixture_host("nvme-ssd")), &["--survey"]);
    assert!(e.contains("--dry-run"), "{e}");
    let e = bench_err(
        Some(&support::fixture_host("hdd-partitions")),
        &["--survey", "--dry-run", "/dev/sda1"],
    );
    assert!(e.contains("partition") && e.contains("whole disk"), "{e}");
}

/// The live host in a dry run: every disk has a class or a reason.
#[test]
fn dry_run_on_this_host() {
    let s = survey_json(None, &["--dry-run"]);
    for c in s["classes"].as_array().unwrap() {
        for d in c["disks"].as_array().unwrap() {
            assert!(d["size_bytes"].as_u64().unwrap() > 0, "{d}");
        }
    }
}

/// A loop device on a file in /var/tmp, filled with known bytes; put back
/// to `none`, detached and removed on drop (every path, panics included).
fn filled_loop(size: usize, seed: u8) -> Loop {
    Loop::new_from(VAR_TMP, &[], |file| {
        let mut f = std::fs::File::create(file).unwrap();
        let mut block = vec![0u8; 1 << 20];
        for (i, b) in block.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(31).wrapping_add(seed);
        }
        for mib in 0..size >> 20 {
            block[..8].copy_from_slice(&(mib as u64).to_le_bytes());
            f.write_all(&block).unwrap();
        }
        f.sync_all().unwrap();
    })
}

/// A digest of a file's bytes (FNV-1a 64 over every byte): enough to see
/// that not one byte changed.
fn digest(p: &Path) -> u64 {
    let data = std::fs::read(p).unwrap();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in data {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn figures_nonzero(figs: &Value, what: &str) {
    let figs = figs.as_array().unwrap();
    assert_eq!(figs.len(), 4, "{what}: {figs:?}");
    for f in figs {
        assert!(f["iops_per_s"].as_f64().unwrap() > 0.0, "{what}: {f}");
        assert!(f["bw_bytes_per_s"].as_f64().unwrap() > 0.0, "{what}: {f}");
        assert!(f["total_ios"].as_u64().unwrap() > 0, "{what}: {f}");
    }
}

#[test]
fn survey_two_loop_devices_reads_only() {
    if !support::live() {
        return;
    }
    let a = filled_loop(256 << 20, 1);
    let b = filled_loop(256 << 20, 2);
    let before = (digest(&a.file), digest(&b.file));
    let env = survey_envelope(None, &[&a.dev, &b.dev, "--runtime", "1s"]);
    let s = env["result"]["survey"].clone();
    assert_eq!(s["dry_run"], false);
    assert_eq!(s["interrupted"], false);
    let cs = classes(&s);
    assert_eq!(
        cs,
        vec![("loop".into(), vec![a.name.clone(), b.name.clone()])]
    );
    let c = &s["classes"][0];
    for d in c["disks"].as_array().unwrap() {
        let n = d["name"].as_str().unwrap();
        assert_eq!(d["size_bytes"], 256u64 << 20);
        figures_nonzero(&d["alone"], &format!("{n} alone"));
        figures_nonzero(&d["in_parallel"], &format!("{n} in parallel"));
        assert!(
            d["notes"][0].as_str().unwrap().contains("backing file"),
            "{d}"
        );
    }
    let agg = c["parallel"]["aggregate"].as_array().unwrap();
    assert_eq!(agg.len(), 4);
    for x in agg {
        assert!(x["iops_per_s"].as_f64().unwrap() > 0.0, "{x}");
        assert!(x["scaling"].as_f64().unwrap() > 0.0, "{x}");
    }
    // Four 1 s jobs at once for the class, not eight one after the other.
    let par = c["parallel"]["wall_s"].as_f64().unwrap();
    let alone = c["alone_wall_s"].as_f64().unwrap();
    assert!(par < alone, "parallel {par} s vs alone {alone} s");
    assert_eq!(
        (digest(&a.file), digest(&b.file)),
        before,
        "a backing file changed: the survey wrote"
    );
    report_and_check_read_the_survey(&env, &[a.name.clone(), b.name.clone()]);
}

/// `innotune report` renders a survey (each disk's figures as measured, the
/// class at once), and `check --results` says why a survey cannot size
/// io_capacity instead of misreading it.
fn report_and_check_read_the_survey(env: &Value, disks: &[String]) {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("survey.json");
    std::fs::write(&f, serde_json::to_vec(env).unwrap()).unwrap();
    let out = support::innotune()
        .args(["report", "--format", "markdown"])
        .arg(&f)
        .env("INNOTUNE_STATE_DIR", state_dir())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(md.contains("loop: each disk alone"), "{md}");
    assert!(md.contains("loop: all 2 disks at once"), "{md}");
    let disk_json = |n: &str| {
        env["result"]["survey"]["classes"][0]["disks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["name"] == n)
            .unwrap()
            .clone()
    };
    for n in disks {
        let row = md
            .lines()
            .find(|l| l.starts_with(&format!("| {n} |")))
            .unwrap_or_else(|| panic!("no row for {n} in {md}"));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        // | disk | model | size | rotational | seq MiB/s | 16k qd32 | 16k qd1 | p99 | 4k qd32 |
        let d = disk_json(n);
        let fig = |job: &str, k: &str| {
            d["alone"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["job"] == job)
                .unwrap()[k]
                .as_f64()
                .unwrap()
        };
        let seq: f64 = cells[5].parse().unwrap_or_else(|_| panic!("{row}"));
        let want = fig("seq-read-1m-qd16", "bw_bytes_per_s") / 1048576.0;
        assert!(
            (seq - want).abs() <= want * 0.01 + 0.01,
            "{row}: want {want}"
        );
        let iops: f64 = cells[6].parse().unwrap_or_else(|_| panic!("{row}"));
        let want = fig("rand-read-16k-qd32", "iops_per_s");
        assert!(
            (iops - want).abs() <= want * 0.01 + 0.01,
            "{row}: want {want}"
        );
    }
    let out = support::innotune()
        .args(["--format", "json", "check", "/var/tmp", "--results"])
        .arg(&f)
        .env("INNOTUNE_STATE_DIR", state_dir())
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    let notes = v.to_string();
    assert!(
        notes.contains("a survey measures reads only"),
        "check --results said nothing about the survey: {notes}"
    );
}

/// A mounted disk is surveyed (no O_EXCL claim needed: reads only) and its
/// filesystem is intact afterwards.
#[test]
fn survey_mounted_loop_device() {
    if !support::live() {
        return;
    }
    let lo = filled_loop(64 << 20, 3);
    let m = lo.mount_ext4();
    let mnt = m.path.clone();
    let payload: Vec<u8> = (0..1u32 << 20).map(|i| (i % 251) as u8).collect();
    std::fs::write(mnt.join("data"), &payload).unwrap();
    support::sh("sync", &[]);

    let s = survey_json(None, &[&lo.dev, "--runtime", "1s"]);
    let d = &s["classes"][0]["disks"][0];
    assert_eq!(
        d["mounted_on"][0].as_str().unwrap(),
        mnt.to_str().unwrap(),
        "{d}"
    );
    figures_nonzero(&d["alone"], "mounted loop");
    assert!(s["classes"][0].get("parallel").is_none());

    assert_eq!(std::fs::read(mnt.join("data")).unwrap(), payload);
    drop(m);
    // -f: check even though clean; -n: change nothing. Exit 0 = no errors.
    support::sh("e2fsck", &["-fn", &lo.dev]);
}
