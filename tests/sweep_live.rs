//! `innotune sweep` and `innotune restore` on this machine: a loop device on
//! a file under /var/tmp that the test makes (losetup --direct-io=on, ext4,
//! mounted) and removes. The sweep switches the loop device and the disk
//! under its backing file (the root disk): every test checks, by reading
//! sysfs itself, that both are back. Needs root, losetup, mkfs.ext4, mount.
//!
//! The tests switch the root disk's scheduler, so they run one at a time
//! (a process-wide lock), and each has its own INNOTUNE_STATE_DIR.

mod support;
use support::host::{active_scheduler as active, servers_under, start_ticks, wait_gone};
use support::sh;
use support::Start as _;
use support::{LabOpts, RAM, VAR_TMP};

use serde_json::Value;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, Instant};

static SERIAL: Mutex<()> = Mutex::new(());

/// Kernel name of the whole disk under `p` (st_dev → sysfs; a partition's
/// parent directory is its disk).
fn disk_of(p: &Path) -> String {
    let dev = std::fs::metadata(p).unwrap().dev();
    let dir = std::fs::canonicalize(format!(
        "/sys/dev/block/{}:{}",
        libc::major(dev),
        libc::minor(dev)
    ))
    .unwrap();
    let disk = if dir.join("partition").exists() {
        dir.parent().unwrap().to_path_buf()
    } else {
        dir
    };
    disk.file_name().unwrap().to_string_lossy().into_owned()
}

/// A lab (a mounted loop device on a sparse file; unmounted, detached and
/// deleted on every exit path) that also puts back, as a last resort, the
/// scheduler of the disk under it (after the test's own assertions have
/// run), with its own state directory, one at a time.
struct Lab {
    lab: support::Lab,
    disk: String,
    orig: Vec<(String, String)>,
    state: tempfile::TempDir,
    _serial: std::sync::MutexGuard<'static, ()>,
}

impl std::ops::Deref for Lab {
    type Target = support::Lab;
    fn deref(&self) -> &support::Lab {
        &self.lab
    }
}

impl Lab {
    /// Backing file on /var/tmp: the sweep switches the loop device and the
    /// root disk under it.
    fn new(tag: &str) -> Lab {
        Lab::make(tag, VAR_TMP, true, 8 << 30)
    }

    /// Backing file on /dev/shm (tmpfs has no block device): the sweep
    /// switches only the loop device, so the test leaves the root disk,
    /// and whatever else runs on it, alone.
    fn in_ram(tag: &str) -> Lab {
        Lab::make(tag, RAM, false, 8 << 30)
    }

    /// A RAM-backed filesystem of `size` bytes, to fill.
    fn small(tag: &str, size: u64) -> Lab {
        Lab::make(tag, RAM, false, size)
    }

    fn make(tag: &str, base: &str, on_disk: bool, size: u64) -> Lab {
        let serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        // Every lab starts its loop device from `none` (support::Loop), so
        // "switched" really means the sweep switched.
        let lab = support::Lab::new(LabOpts {
            tag: &format!("sweep-test-{tag}"),
            base,
            size,
            ..LabOpts::default()
        });
        let disk = if on_disk {
            disk_of(&lab.img)
        } else {
            String::new()
        };
        let orig = [lab.loopdev.clone(), disk.clone()]
            .into_iter()
            .filter(|d| !d.is_empty())
            .map(|d| {
                let a = active(&d);
                (d, a)
            })
            .collect();
        Lab {
            lab,
            disk,
            orig,
            state: tempfile::tempdir().unwrap(),
            _serial: serial,
        }
    }

    fn cmd(&self) -> assert_cmd::Command {
        support::innotune_in(self.state.path())
    }

    fn journal(&self) -> PathBuf {
        self.state.path().join("journal.json")
    }

    fn assert_restored(&self) {
        for (d, s) in &self.orig {
            assert_eq!(&active(d), s, "{d} not restored");
        }
        assert!(!self.journal().exists(), "journal left behind");
        let left: Vec<_> = std::fs::read_dir(&self.mnt)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".innotune-sweep"))
            .collect();
        assert!(left.is_empty(), "work directory left: {left:?}");
    }

    /// A small job file (64 MiB files, so layout takes no time).
    fn small_job(&self) -> PathBuf {
        let p = self.dir.join("small-read.toml");
        std::fs::write(
            &p,
            "[global]\ndirect = 1\nsize = \"64m\"\n\n[[job]]\nname = \"small-read\"\nrw = \"randread\"\nbs = \"16k\"\niodepth = 1\n",
        )
        .unwrap();
        p
    }

    /// Start a long sweep that switches both devices, and wait until the
    /// loop device shows the switched scheduler: every file is laid out
    /// before the first switch, so the sweep is then in its first trial.
    fn start_long_sweep(&self) -> support::Spawned {
        let job = self.small_job();
        let child = support::innotune_sys()
            .env("INNOTUNE_STATE_DIR", self.state.path())
            .args([
                "sweep",
                self.mnt.to_str().unwrap(),
                "--schedulers",
                "kyber,bfq",
                "--workload",
                job.to_str().unwrap(),
                "--trial",
                "60s",
                "--warmup",
                "0",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .start();
        self.wait_switched(&["kyber", "bfq"]);
        child
    }

    /// Poll the schedulers of every device the sweep switches (the loop
    /// device, and the disk under it when on disk) until each is one of `to`.
    fn wait_switched(&self, to: &[&str]) {
        let t0 = Instant::now();
        while !self
            .orig
            .iter()
            .all(|(d, _)| to.contains(&active(d).as_str()))
        {
            assert!(
                t0.elapsed() < Duration::from_secs(120),
                "sweep never switched {:?} to {to:?}",
                self.orig
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        // The loop device goes back to `none` with the inner lab.
        for (d, s) in &self.orig {
            if d == &self.disk {
                let _ = std::fs::write(format!("/sys/block/{d}/queue/scheduler"), s);
            }
        }
    }
}

fn json(out: &[u8]) -> Value {
    let v: Value = serde_json::from_slice(out)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(out)));
    assert_eq!(v["tool"], "innotune");
    v["result"].clone()
}

/// One A/A sweep (`none,none` on the four default workloads); returns the
/// workloads it wrongly called different, after checking everything else.
fn aa_run(lab: &Lab) -> Vec<String> {
    let out = lab
        .cmd()
        .args([
            "--format",
            "json",
            "sweep",
            lab.mnt.to_str().unwrap(),
            "--schedulers",
            "none,none",
            "--rounds",
            "5",
            "--trial",
            "1500ms",
            "--warmup",
            "500ms",
        ])
        .output()
        .unwrap();
    // An A/A run never reports a pending change, whatever it measured.
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = json(&out.stdout);
    lab.assert_restored();

    // The devices it switched are the loop device and the disk under it.
    let devs: Vec<&str> = r["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(devs, [lab.loopdev.as_str(), lab.disk.as_str()]);
    let labels: Vec<&str> = r["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["none#1", "none#2"]);
    assert_eq!(r["trials"].as_array().unwrap().len(), 5 * 2 * 4);
    assert_eq!(r["trials_run"], 40);
    // Every trial carries device counters for both devices.
    for t in r["trials"].as_array().unwrap() {
        assert_eq!(t["devices"].as_array().unwrap().len(), 2, "{t}");
        assert_eq!(t["throughput"]["unit"], "iops", "{t}");
        assert!(t["throughput"]["value"].as_f64().unwrap() > 0.0, "{t}");
        assert!(t["p99_ns"].as_u64().unwrap() > 0, "{t}");
        // And the host's CPU shares over its window (steal above all).
        let c = &t["host_cpu"];
        let sum: f64 = ["busy_pct", "iowait_pct", "steal_pct", "idle_pct"]
            .iter()
            .map(|k| c[k].as_f64().unwrap_or_else(|| panic!("{k}: {t}")))
            .sum();
        assert!((sum - 100.0).abs() < 1e-6, "{t}");
    }
    // Summed up under noise: the median and max steal over the 40 trials.
    let n = &r["noise"];
    let (med, max) = (
        n["steal_median_pct"].as_f64().unwrap(),
        n["steal_max_pct"].as_f64().unwrap(),
    );
    assert!(0.0 <= med && med <= max && max <= 100.0, "{n}");
    assert!(n["steal_trials"].as_u64().unwrap() <= 40, "{n}");
    let verdicts = r["verdicts"].as_array().unwrap();
    assert_eq!(verdicts.len(), 4, "one verdict per default workload");
    let flagged: Vec<String> = verdicts
        .iter()
        .filter(|v| v["verdict"] != "no significant difference")
        .map(|v| format!("{}: {v:#}", v["workload"]))
        .collect();
    // The recommendation keeps what the devices hold and never names an
    // A/A label. With the disk on another scheduler than none (this VM's
    // vda is on mq-deadline) the current setting was not measured.
    let rec = &r["recommendation"];
    assert_eq!(rec["action"], "keep", "{rec:#}");
    assert_eq!(rec["pending_change"], false);
    assert!(!rec.to_string().contains("none#"), "{rec:#}");
    if lab.orig.iter().all(|(_, s)| s == "none") {
        assert_eq!(rec["setting"], "none", "{rec:#}");
    } else {
        assert_eq!(rec["current_measured"], false, "{rec:#}");
        assert!(rec.get("setting").is_none(), "{rec:#}");
        assert!(
            rec["reason"]
                .as_str()
                .unwrap()
                .contains("it was not measured"),
            "{rec:#}"
        );
    }
    flagged
}

/// The sweep bounds false positives at alpha = 5% for the whole run, so by
/// design up to 1 A/A run in 20 may flag a workload. A second, independent
/// run is allowed: a spurious failure then needs two false positives in a
/// row (≤ 0.25%), while a real bias (e.g. order effects, a candidate label
/// leaking into the measurement) flags both runs and fails.
#[test]
fn aa_run_finds_no_significant_difference_and_restores() {
    if !support::live() {
        return;
    }
    let lab = Lab::new("aa");
    let first = aa_run(&lab);
    if first.is_empty() {
        return;
    }
    eprintln!("A/A run 1 flagged (allowed once): {first:?}");
    let second = aa_run(&lab);
    assert!(
        second.is_empty(),
        "two A/A runs in a row found differences: {first:?} then {second:?}"
    );
}

/// Switch both of the lab's devices to `sched`, run `f`, put them back.
fn under<T>(lab: &Lab, sched: &str, f: impl FnOnce() -> T) -> T {
    for d in [&lab.loopdev, &lab.disk] {
        std::fs::write(format!("/sys/block/{d}/queue/scheduler"), sched).unwrap();
    }
    let r = f();
    for (d, s) in &lab.orig {
        std::fs::write(format!("/sys/block/{d}/queue/scheduler"), s).unwrap();
    }
    r
}

/// Read p99 of the `mixed` shape measured by fio (the peer tool) with
/// `sched` on both devices: an oracle independent of innotune's code.
fn fio_read_p99_us(lab: &Lab, sched: &str) -> f64 {
    let dir = lab.mnt.join("fio");
    std::fs::create_dir_all(&dir).unwrap();
    let out = under(lab, sched, || {
        sh(
            "fio",
            &[
                "--output-format=json",
                &format!("--directory={}", dir.display()),
                "--direct=1",
                "--time_based",
                "--runtime=8",
                "--ramp_time=1",
                "--size=1g",
                "--name=r",
                "--rw=randread",
                "--bs=16k",
                "--iodepth=1",
                "--name=w",
                "--rw=write",
                "--bs=1m",
                "--ioengine=io_uring",
                "--iodepth=32",
            ],
        )
    });
    let v: Value = serde_json::from_str(&out).unwrap();
    v["jobs"][0]["read"]["clat_ns"]["percentile"]["99.000000"]
        .as_f64()
        .unwrap()
        / 1000.0
}

/// Read p99 of the same shape measured by innotune's own `mixed` preset
/// (one 8 s window after 1 s of warm-up, as fio's run above), with `sched`
/// on both devices.
fn bench_read_p99_us(lab: &Lab, sched: &str) -> f64 {
    let dir = lab.mnt.join("bench");
    std::fs::create_dir_all(&dir).unwrap();
    let out = under(lab, sched, || {
        lab.cmd()
            .args(["--format", "json", "bench", "--preset", "mixed"])
            .args(["--size", "1g", "--runtime", "8s", "--ramp_time", "1s"])
            .arg("--directory")
            .arg(&dir)
            .output()
            .unwrap()
    });
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = json(&out.stdout);
    let job = r["result"]["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["name"] == "mixed-read")
        .unwrap_or_else(|| panic!("no mixed-read job: {r:#}"))
        .clone();
    job["read"]["clat"]["p99_ns"].as_f64().unwrap() / 1000.0
}

/// Trials of `label` in a sweep's JSON that stalled direction `dir`: listed
/// in `stalled`, with the longest I/O of that direction past the limit (a
/// read 500 ms, a write 5 s), so a veto's reason is backed by the figures.
fn stalled_windows(r: &serde_json::Value, label: &str, dir: &str) -> usize {
    let (key, limit) = if dir == "read" {
        ("read_max_ns", 500_000_000)
    } else {
        ("write_max_ns", 5_000_000_000)
    };
    r["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["candidate"] == label)
        .filter(|t| {
            t["stalled"]
                .as_array()
                .is_some_and(|a| a.contains(&dir.into()))
                && t[key].as_u64().is_some_and(|m| m > limit)
        })
        .count()
}

/// The issue expected mq-deadline to win here (about 2x lower read p99 with a
/// 1 MiB writer at depth 32). Measured while writing this test, with both the
/// loop device and the root disk switched (as sweep does), none gave the
/// lower read p50 and p99 on this VM. So the test does not hard-code a
/// winner: given a significant p99 verdict it requires a recommendation of
/// the candidate with the lower median p99, and fio (the peer tool)
/// measuring the same direction on the same devices. Trials are 8 s: under
/// `none` the reader's p99 here depends on whether a window catches a stall
/// behind the writer's queue (0.5 ms in one 3 s window, 100 ms in the next),
/// and longer windows average over stalls. When two sweeps in a row cannot
/// separate them, the test checks that the tie is reported consistently.
#[test]
fn mixed_latency_objective_recommends_the_lower_read_p99() {
    if !support::live() {
        return;
    }
    let lab = Lab::new("mixed");
    let run = || {
        let out = lab
            .cmd()
            .args([
                "--format",
                "json",
                "sweep",
                lab.mnt.to_str().unwrap(),
                "--schedulers",
                "none,mq-deadline",
                "--workload",
                "mixed",
                "--objective",
                "latency",
                "--rounds",
                "6",
                "--trial",
                "8s",
                "--warmup",
                "1s",
                // When the loop device and the disk hold different
                // schedulers, no candidate holds that combination: a
                // recommendation then needs a choice among the two.
                "--choose",
            ])
            .output()
            .unwrap();
        assert!(
            matches!(out.status.code(), Some(0) | Some(1)),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r = json(&out.stdout);
        lab.assert_restored();
        r
    };
    // A busy machine (another build, another test on the same disk) can
    // blur a tail difference below significance: one more run is allowed.
    // A sweep that cannot find the difference twice in a row fails.
    let mut r = run();
    if r["verdicts"][0]["verdict"] == "no significant difference" {
        eprintln!(
            "first run found no significant difference (loadavg {}), running again: {:#}",
            std::fs::read_to_string("/proc/loadavg")
                .unwrap_or_default()
                .trim(),
            r["verdicts"][0]
        );
        r = run();
    }

    let verdicts = r["verdicts"].as_array().unwrap();
    assert_eq!(verdicts.len(), 1);
    let v = &verdicts[0];
    if v["verdict"] == "no significant difference" {
        // Under `none` this disk's read tail can swing between windows (one
        // CI run here measured none's p99 median at 87 ms, CI 21–167 ms,
        // against 1 ms on other days), and twelve trials then cannot call
        // it. The sweep must then say so consistently: the evidence really
        // is short of the rule (CI of the ratio spans 1, or the rank test
        // missed alpha), and the recommendation is a tie, not a p99 win.
        let c = &v["p99"];
        let spans_one =
            c["ci_low"].as_f64().unwrap() <= 1.0 && c["ci_high"].as_f64().unwrap() >= 1.0;
        let p = c["p_value"].as_f64().unwrap();
        assert!(spans_one || p > 0.05, "not significant but decisive: {v:#}");
        let reason = r["recommendation"]["reason"].as_str().unwrap();
        assert!(reason.contains("no candidate"), "{reason}");
        eprintln!(
            "WARNING: two sweeps in a row could not separate none and mq-deadline on this disk \
             (loadavg {}); checked the tie instead: {:#}",
            std::fs::read_to_string("/proc/loadavg")
                .unwrap_or_default()
                .trim(),
            r["results"]
        );
        return;
    }
    // The recommendation is the candidate with the lower median read p99.
    let p99 = |label: &str| {
        r["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["candidate"] == label)
            .unwrap()["p99_ns"]["median"]
            .as_f64()
            .unwrap()
            / 1000.0
    };
    let (none, mqd) = (p99("none"), p99("mq-deadline"));
    let lower = if mqd < none { "mq-deadline" } else { "none" };
    let higher = if lower == "none" {
        "mq-deadline"
    } else {
        "none"
    };
    let reason = r["recommendation"]["reason"].as_str().unwrap();
    if reason.contains(&format!("{lower} stalled ")) {
        // The stall veto: on hosts where this disk stops reads under `none`
        // for 0.5–5 s in some windows (bench/RESULTS.md 2026-11-27 08:51),
        // the lower p99 is not recommended. The trials must show the
        // stalls (a direction listed as stalled, its longest I/O past the
        // limit) under that candidate only.
        let dir = if reason.contains(&format!("{lower} stalled reads")) {
            "read"
        } else {
            "write"
        };
        assert!(
            stalled_windows(&r, lower, dir) > 0 && stalled_windows(&r, higher, dir) == 0,
            "{r:#}"
        );
        assert_ne!(r["recommendation"]["scheduler"], lower, "{r:#}");
        eprintln!("the lower p99 ({lower}) was vetoed for its stalls: {reason}");
    } else {
        assert_eq!(r["recommendation"]["scheduler"], lower, "{r:#}");
        assert!(reason.contains("p99"), "{reason}");
    }

    // fio agrees on the direction: alternate 3 runs per setting, medians.
    let (mut f_none, mut f_mqd) = (vec![], vec![]);
    for _ in 0..3 {
        f_none.push(fio_read_p99_us(&lab, "none"));
        f_mqd.push(fio_read_p99_us(&lab, "mq-deadline"));
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[1]
    };
    let (fn_, fm) = (med(&mut f_none), med(&mut f_mqd));
    let fio_lower = if fm < fn_ { "mq-deadline" } else { "none" };
    eprintln!(
        "read p99 µs: innotune none {none:.0} mq-deadline {mqd:.0}; fio none {fn_:.0} mq-deadline {fm:.0}"
    );
    if lower != fio_lower {
        // This disk's read tail under `none` is bimodal (0.5 ms in one window,
        // 80 ms in the next; one CI run measured innotune's none at 81 ms and
        // fio's, minutes later, at 0.6 ms), and on some hosts the mode holds
        // for minutes (2026-11-27, AMD: innotune's none windows 50 ms–8 s,
        // fio's 2.2 ms right after). A later fio run can then land in the
        // other mode. That is only acceptable when both tools see the same
        // distribution at the same time: fio runs three more times per
        // setting, each right next to one run of innotune's own `mixed`
        // preset, and every fio median must lie inside the range of read
        // p99s innotune measured for that setting (its sweep's trials and
        // the runs next to fio's, with a factor of 2 of slack). A tool that
        // measured something else fails.
        for label in ["none", "mq-deadline"] {
            let mut v: Vec<f64> = r["trials"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|t| t["candidate"] == label)
                .filter_map(|t| t["read_p99_ns"].as_f64().or(t["p99_ns"].as_f64()))
                .map(|ns| ns / 1000.0)
                .collect();
            let mut fio = vec![];
            for _ in 0..3 {
                fio.push(fio_read_p99_us(&lab, label));
                v.push(bench_read_p99_us(&lab, label));
            }
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(0.0, f64::max);
            let fio = med(&mut fio);
            eprintln!("{label}: fio next to innotune {fio:.0} µs, innotune {lo:.0}–{hi:.0} µs");
            assert!(
                fio >= lo / 2.0 && fio <= hi * 2.0,
                "innotune and fio disagree on which is lower, and fio's {label} read p99 \
                 ({fio:.0} µs, run next to innotune's) is outside what innotune measured \
                 for it ({lo:.0}–{hi:.0} µs)"
            );
        }
        eprintln!(
            "WARNING: fio's later runs found the other scheduler lower; run next to innotune's, \
             fio measured inside innotune's range (bimodal tail): directions differ by timing"
        );
    }
    for (d, s) in &lab.orig {
        assert_eq!(&active(d), s);
    }
}

/// `--sequential` on the known large effect of this VM (the disk's
/// scheduler under the mixed workload: `none` has several times lower read
/// p99 than mq-deadline, bench/RESULTS.md): the sweep stops before its
/// last round, the verdict names the round it was reached at, and that
/// round is where the trials end. On days the disk stalls reads under
/// `none`, the stop may instead be a settled answer (the stall veto),
/// which must then be shown by the trials. A busy machine can blur the tail for a
/// run, so one more run is allowed; when neither stops early, the run to
/// the budget must be accounted as one.
#[test]
fn sequential_sweep_stops_early_on_a_clear_difference() {
    if !support::live() {
        return;
    }
    let lab = Lab::new("seq");
    let run = || {
        let out = lab
            .cmd()
            .args([
                "--format",
                "json",
                "sweep",
                lab.mnt.to_str().unwrap(),
                "--device",
                &lab.disk,
                "--schedulers",
                "none,mq-deadline",
                "--workload",
                "mixed",
                "--objective",
                "latency",
                "--sequential",
                "--rounds",
                "8",
                "--trial",
                "4s",
                "--warmup",
                "1s",
            ])
            .output()
            .unwrap();
        assert!(
            matches!(out.status.code(), Some(0) | Some(1)),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r = json(&out.stdout);
        lab.assert_restored();
        r
    };
    let mut r = run();
    if r["sequential"]["stopped_early"] != true {
        eprintln!(
            "first sequential run did not stop early (loadavg {}): {:#}",
            std::fs::read_to_string("/proc/loadavg")
                .unwrap_or_default()
                .trim(),
            r["verdicts"][0]
        );
        r = run();
    }
    let sq = &r["sequential"];
    assert_eq!(r["plan"]["sequential"], true);
    assert_eq!(sq["max_rounds"], 8, "{sq:#}");
    if sq["stopped_early"] != true {
        // Under load (CI runs other live tests beside this one) the effect
        // can vanish: bench/RESULTS.md has 3 early stops in 10 runs at load
        // 4.5-9. Whether the design stops on a clear effect is asserted on
        // simulated trials (sweep::verdicts::large_consistent_effect_stops_
        // at_the_earliest_round); here a run to the budget must then be
        // accounted as one: every round run, every trial kept, and each
        // verdict either crossed or marked as run to the
        // budget.
        assert_eq!(sq["rounds_run"], 8, "{sq:#}");
        assert_eq!(sq["saved_rounds"], 0, "{sq:#}");
        assert_eq!(r["trials_run"], 16, "{r:#}");
        for v in r["verdicts"].as_array().unwrap() {
            let s = &v["sequential"];
            assert!(s["ran_to_budget"] == true || s["crossed"] == true, "{v:#}");
        }
        eprintln!(
            "WARNING: two sequential runs did not stop early (loadavg {}); run-to-budget accounting checked instead",
            std::fs::read_to_string("/proc/loadavg")
                .unwrap_or_default()
                .trim()
        );
        return;
    }
    let ran = sq["rounds_run"].as_u64().unwrap();
    assert!(ran < 8, "{sq:#}");
    assert!(ran >= sq["first_look"].as_u64().unwrap(), "{sq:#}");
    assert_eq!(sq["saved_rounds"].as_u64().unwrap(), 8 - ran);
    assert!(sq["saved_s"].as_f64().unwrap() > 0.0, "{sq:#}");
    assert_eq!(r["trials_run"].as_u64().unwrap(), ran * 2);
    assert_eq!(r["trials"].as_array().unwrap().len() as u64, ran * 2);
    let v = &r["verdicts"][0];
    if let Some(why) = sq["settled"].as_str() {
        // On days this disk stalls reads under `none` (bench/RESULTS.md
        // 2026-11-27), the sweep stops on the veto: the verdict stays open,
        // the current setting is kept, and the trials show the stalls the
        // reason names: a read past 500 ms in some of none's windows,
        // never in mq-deadline's.
        // (Or writes: one past 5 s.)
        let dir = if why.starts_with("none is vetoed: none stalled reads in") {
            "read"
        } else {
            assert!(
                why.starts_with("none is vetoed: none stalled writes in"),
                "{sq:#}"
            );
            "write"
        };
        assert!(
            stalled_windows(&r, "none", dir) > 0 && stalled_windows(&r, "mq-deadline", dir) == 0,
            "{r:#}"
        );
        assert_eq!(v["verdict"], "no significant difference", "{v:#}");
        assert_eq!(v["sequential"]["crossed"], false, "{v:#}");
        assert_eq!(v["sequential"]["round"].as_u64().unwrap(), ran, "{v:#}");
        assert_eq!(r["recommendation"]["action"], "keep", "{r:#}");
        eprintln!("sequential sweep: settled at round {ran} of 8: {why}");
        return;
    }
    assert_ne!(v["verdict"], "no significant difference", "{v:#}");
    let reached = &v["sequential"];
    assert_eq!(reached["crossed"], true, "{v:#}");
    assert_eq!(reached["round"].as_u64().unwrap(), ran, "{v:#}");
    assert!(v["p99"]["p_value"].as_f64().unwrap() <= reached["level"].as_f64().unwrap());
    // The recommendation is the candidate with the lower median read p99.
    let p99 = |label: &str| {
        r["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["candidate"] == label)
            .unwrap()["p99_ns"]["median"]
            .as_f64()
            .unwrap()
    };
    let lower = if p99("mq-deadline") < p99("none") {
        "mq-deadline"
    } else {
        "none"
    };
    // Unless the lower one stalled a direction the baseline never did:
    // then sweep keeps the baseline and says so (the stall rule).
    let stalled = r["recommendation"]["action"] == "keep"
        && r["recommendation"]["reason"]
            .as_str()
            .is_some_and(|why| why.contains("stalled"));
    let expected = if stalled {
        r["baseline"].as_str().unwrap()
    } else {
        lower
    };
    assert_eq!(r["recommendation"]["scheduler"], expected, "{r:#}");
    eprintln!(
        "sequential sweep: {} at round {ran} of 8, saved {:.0} s",
        v["verdict"],
        sq["saved_s"].as_f64().unwrap()
    );
}

#[test]
fn sigint_mid_sweep_restores_at_once_and_exits_130() {
    if !support::live() {
        return;
    }
    let lab = Lab::new("int");
    let child = lab.start_long_sweep();
    let t0 = Instant::now();
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.output_within(support::WAIT);
    let took = t0.elapsed();
    // Read sysfs right after the process is gone.
    lab.assert_restored();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(took < Duration::from_secs(5), "took {took:?} to restore");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("interrupted by SIGINT"), "{err}");
}

#[test]
fn sigterm_mid_sweep_restores_and_exits_143() {
    if !support::live() {
        return;
    }
    let lab = Lab::new("term");
    let child = lab.start_long_sweep();
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = child.output_within(support::WAIT);
    lab.assert_restored();
    assert_eq!(out.status.code(), Some(143));
}

#[test]
fn sigkill_leaves_a_journal_that_restore_finishes() {
    if !support::live() {
        return;
    }
    let lab = Lab::new("kill");
    let mut child = lab.start_long_sweep();
    child.kill().unwrap(); // SIGKILL: no chance to restore
    child.wait_within(support::WAIT);
    let switched = active(&lab.loopdev);
    assert!(switched == "kyber" || switched == "bfq", "{switched}");
    assert!(lab.journal().exists());

    // Any other command warns, naming the fix.
    let out = lab
        .cmd()
        .args(["probe", lab.mnt.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("innotune restore") && err.contains("unrestored"),
        "{err}"
    );
    // A new sweep refuses to start on top of it.
    let out = lab
        .cmd()
        .args([
            "sweep",
            lab.mnt.to_str().unwrap(),
            "--schedulers",
            "none,none",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        active(&lab.loopdev),
        switched,
        "refused run changed nothing"
    );

    // --dry-run lists and changes nothing.
    let out = lab
        .cmd()
        .args(["--format", "json", "restore", "--dry-run"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let r = json(&out.stdout);
    assert!(r["entries"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["outcome"] == "would_restore"));
    assert_eq!(active(&lab.loopdev), switched);

    let out = lab
        .cmd()
        .args(["--format", "json", "restore"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = json(&out.stdout);
    assert_eq!(r["journal_removed"], true);
    let sched_entries: Vec<&Value> = r["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["path"].as_str().unwrap().ends_with("/queue/scheduler"))
        .collect();
    assert_eq!(sched_entries.len(), 2, "{r:#}");
    lab.assert_restored();

    // And now nothing is pending.
    let out = lab.cmd().args(["restore"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Nothing to restore"));
}

/// A sweep with an OLTP workload mixed with a bench job, on a RAM-backed
/// loop device: the OLTP trials report tps (never IOPS), the server ran
/// from the work directory on the swept filesystem, and afterwards the
/// server is gone, the work directory removed and the scheduler back.
#[test]
fn oltp_workload_sweep_reports_tps_and_leaves_no_server() {
    if !support::live() {
        return;
    }
    let lab = Lab::in_ram("oltp");
    let job = lab.small_job();
    let out = lab
        .cmd()
        .args([
            "--format",
            "json",
            "sweep",
            lab.mnt.to_str().unwrap(),
            "--schedulers",
            "none,mq-deadline",
            "--workload",
            "oltp_point_select",
            "--workload",
            job.to_str().unwrap(),
            // Two workloads share the 0.05: each verdict needs p ≤ 0.025,
            // which 4 rounds can never reach (sweep refuses them).
            "--rounds",
            "5",
            "--trial",
            "1s",
            "--warmup",
            "300ms",
            "--oltp-tables",
            "2",
            "--oltp-table-size",
            "5000",
            "--oltp-threads",
            "2",
        ])
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0) | Some(1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = json(&out.stdout);
    lab.assert_restored();

    let o = &r["oltp"];
    assert_eq!(o["workloads"], serde_json::json!(["oltp_point_select"]));
    assert_eq!(
        (o["threads"].as_u64(), o["tables"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(o["buffer_pool_bytes"], 32 << 20);
    assert!(o["server_version"].as_str().unwrap().contains('.'), "{o}");
    assert!(o["dataset_bytes"].as_u64().unwrap() > 0, "{o}");
    let sb = PathBuf::from(o["sandbox_dir"].as_str().unwrap());
    assert!(
        sb.starts_with(&lab.mnt)
            && sb
                .parent()
                .unwrap()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(".innotune-sweep."),
        "the datadir must be in the work directory on the swept filesystem: {}",
        sb.display()
    );
    assert!(!sb.exists(), "sandbox directory left behind");
    assert!(
        servers_under(&lab.mnt).is_empty(),
        "the sandbox server is still running"
    );

    let trials = r["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 5 * 2 * 2);
    let (mut n_oltp, mut n_bench) = (0, 0);
    for t in trials {
        assert_eq!(t["devices"].as_array().unwrap().len(), 1, "{t}");
        if t["workload"] == "oltp_point_select" {
            n_oltp += 1;
            assert_eq!(t["throughput"]["unit"], "tps", "{t}");
            assert!(t["throughput"]["value"].as_f64().unwrap() > 0.0, "{t}");
            assert!(t["p99_ns"].as_u64().unwrap() > 0, "{t}");
            assert!(t["queries_per_s"].as_f64().unwrap() > 0.0, "{t}");
            assert!(t.get("bandwidth_bytes_per_s").is_none(), "{t}");
        } else {
            n_bench += 1;
            assert_eq!(t["throughput"]["unit"], "iops", "{t}");
            assert!(t["throughput"]["value"].as_f64().unwrap() > 0.0, "{t}");
            assert!(t["bandwidth_bytes_per_s"].as_f64().unwrap() > 0.0, "{t}");
        }
    }
    assert_eq!((n_oltp, n_bench), (10, 10));
    for c in r["results"].as_array().unwrap() {
        let unit = if c["workload"] == "oltp_point_select" {
            "tps"
        } else {
            "iops"
        };
        assert_eq!(c["throughput"]["unit"], unit, "{c}");
        assert_eq!(c["throughput"]["n"], 5, "{c}");
    }
    let v: Vec<&Value> = r["verdicts"].as_array().unwrap().iter().collect();
    assert_eq!(v.len(), 2);
    assert!(v
        .iter()
        .any(|v| v["throughput"]["unit"] == "tps" && v["balanced"].is_object()));
    assert!(
        r["restored"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["kind"] != "server"),
        "the server was stopped cleanly, not by the journal: {:#}",
        r["restored"]
    );
}

impl Lab {
    /// Start a long OLTP sweep and wait until its server is journaled with
    /// a pid and accepts connections; returns the child, the server's pid
    /// and start time, and the sandbox directory.
    fn start_oltp_sweep(&self) -> (support::Spawned, u32, u64, PathBuf) {
        let child = support::innotune_sys()
            .env("INNOTUNE_STATE_DIR", self.state.path())
            .args([
                "sweep",
                self.mnt.to_str().unwrap(),
                // Neither is the loop device's current scheduler (none or
                // mq-deadline), so the first trial switches it: the
                // readiness signal below.
                "--schedulers",
                "kyber,bfq",
                "--workload",
                "oltp_read_write",
                "--trial",
                "60s",
                "--warmup",
                "0",
                "--oltp-tables",
                "1",
                "--oltp-table-size",
                "2000",
                "--oltp-threads",
                "2",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .start();
        let t0 = Instant::now();
        let (pid, ticks, dir) = loop {
            let entry = std::fs::read_to_string(self.journal())
                .ok()
                .and_then(|s| serde_json::from_str::<Value>(&s).ok())
                .and_then(|j| {
                    j["entries"]
                        .as_array()?
                        .iter()
                        .map(|e| &e["change"])
                        .find(|c| c["kind"] == "server" && c["pid"].is_u64())
                        .cloned()
                });
            if let Some(e) = entry {
                break (
                    e["pid"].as_u64().unwrap() as u32,
                    e["start_ticks"].as_u64().unwrap(),
                    PathBuf::from(e["dir"].as_str().unwrap()),
                );
            }
            assert!(
                t0.elapsed() < Duration::from_secs(120),
                "no server entry with a pid in the journal"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        assert_eq!(start_ticks(pid), Some(ticks), "journaled start time");
        // The server is started and loaded before the first switch: once
        // the loop device is switched, the first trial runs.
        self.wait_switched(&["kyber", "bfq"]);
        assert!(
            dir.join("mysql.sock").exists(),
            "switched before the server was up"
        );
        (child, pid, ticks, dir)
    }
}

/// SIGKILL leaves the server running (nothing could stop it); the journal
/// names it, `restore --dry-run` lists it, `restore` stops it (its start
/// time and command line match) before removing its directory.
#[test]
fn sigkill_mid_oltp_sweep_leaves_a_server_that_restore_stops() {
    if !support::live() {
        return;
    }
    let lab = Lab::in_ram("oltpkill");
    let (mut child, pid, ticks, dir) = lab.start_oltp_sweep();
    child.kill().unwrap();
    child.wait_within(support::WAIT);
    // Still running after innotune is gone (and still so after the dry
    // run below, and stopped by restore at the end).
    assert_eq!(
        start_ticks(pid),
        Some(ticks),
        "the server died with innotune"
    );
    assert!(dir.exists());

    let out = lab
        .cmd()
        .args(["--format", "json", "restore", "--dry-run"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let r = json(&out.stdout);
    let srv = r["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "server")
        .unwrap_or_else(|| panic!("dry run does not list the server: {r:#}"))
        .clone();
    assert_eq!(srv["outcome"], "would_restore");
    assert_eq!(srv["pid"], pid);
    assert_eq!(srv["path"], dir.to_str().unwrap());
    assert_eq!(start_ticks(pid), Some(ticks), "dry run stopped the server");

    let out = lab
        .cmd()
        .args(["--format", "json", "restore"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = json(&out.stdout);
    let srv = r["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "server")
        .unwrap()
        .clone();
    assert_eq!(srv["outcome"], "stopped", "{r:#}");
    assert_eq!(srv["signal"], "SIGTERM", "a sandbox shuts down on SIGTERM");
    assert!(wait_gone(pid, ticks), "server still running after restore");
    assert!(!dir.exists());
    assert!(servers_under(&lab.mnt).is_empty());
    lab.assert_restored();
}

#[test]
fn sigint_mid_oltp_sweep_stops_the_server_and_exits_130() {
    if !support::live() {
        return;
    }
    let lab = Lab::in_ram("oltpint");
    let (child, pid, ticks, dir) = lab.start_oltp_sweep();
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.output_within(support::WAIT);
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        wait_gone(pid, ticks),
        "server outlived the interrupted sweep"
    );
    assert!(!dir.exists());
    assert!(servers_under(&lab.mnt).is_empty());
    lab.assert_restored();
}

/// `--device` switches only the named device: the disk under the loop
/// device's backing file is never written (no journal entry, nothing to
/// restore), and the report lists the loop device alone.
#[test]
fn device_filter_switches_only_the_named_device() {
    if !support::live() {
        return;
    }
    let lab = Lab::new("device");
    let job = lab.small_job();
    let out = lab
        .cmd()
        .args([
            "--format",
            "json",
            "sweep",
            lab.mnt.to_str().unwrap(),
            "--device",
            &lab.loopdev,
            "--schedulers",
            "none,mq-deadline",
            "--workload",
            job.to_str().unwrap(),
            "--rounds",
            "4",
            "--trial",
            "1s",
            "--warmup",
            "0",
        ])
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0) | Some(1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = json(&out.stdout);
    lab.assert_restored();
    let devs: Vec<&str> = r["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(devs, [lab.loopdev.as_str()]);
    let restored: Vec<&str> = r["restored"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert!(
        restored
            .iter()
            .any(|p| p.contains(&format!("/{}/", lab.loopdev))),
        "{restored:?}"
    );
    assert!(
        !restored
            .iter()
            .any(|p| p.contains(&format!("/block/{}/", lab.disk))),
        "the disk was touched: {restored:?}"
    );

    // A name outside the stack: one line naming the choices, host untouched.
    let out = lab
        .cmd()
        .args(["sweep", lab.mnt.to_str().unwrap(), "--device", "sdzz"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("sdzz is not a device"), "{err}");
    assert!(err.contains(&lab.loopdev), "{err}");
    assert!(!lab.journal().exists());
}

/// The whole plan's files are checked against the free space before
/// anything is switched: the default workloads (5 GiB) on a 300 MiB
/// filesystem are refused at once, with one line whose fix names only
/// flags sweep has, and a `--size` that does not fit names one that does.
/// Neither candidate is the loop device's current scheduler (kernels give
/// loop devices none or mq-deadline), so a check that came too late would
/// show as a switch.
#[test]
fn a_plan_too_big_for_the_filesystem_is_refused_before_any_switch() {
    if !support::live() {
        return;
    }
    let lab = Lab::small("space", 300 << 20);
    let mnt = lab.mnt.to_str().unwrap();
    let refused = |extra: &[&str], needle: &str| {
        let t0 = Instant::now();
        let mut args = vec!["sweep", mnt, "--schedulers", "kyber,bfq"];
        args.extend_from_slice(extra);
        let out = lab.cmd().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{err}");
        assert!(
            !err.contains("--directory"),
            "sweep has no --directory: {err}"
        );
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "not refused at once"
        );
        lab.assert_restored();
        assert_eq!(
            active(&lab.loopdev),
            lab.orig[0].1,
            "switched before refusing"
        );
    };
    refused(&[], "less than 64MiB");
    refused(&["--workload", "page-read", "--size", "1g"], "or less");
}

/// Files that do not fit are scaled down, with a warning (on stderr and in
/// the JSON envelope), and the sweep runs; `--size` chooses them instead.
#[test]
fn files_are_scaled_to_fit_with_a_warning_or_sized_by_size() {
    if !support::live() {
        return;
    }
    let lab = Lab::small("scale", 1 << 30);
    let run = |extra: &[&str]| {
        let mut args = vec![
            "--format",
            "json",
            "sweep",
            lab.mnt.to_str().unwrap(),
            "--schedulers",
            "none,none",
            "--workload",
            "page-read",
            "--rounds",
            "4",
            "--trial",
            "1s",
            "--warmup",
            "0",
        ];
        args.extend_from_slice(extra);
        let out = lab.cmd().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{err}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        lab.assert_restored();
        (v, err)
    };
    let (v, err) = run(&[]);
    let files = &v["result"]["files"];
    assert_eq!(files["sizing"], "scaled", "{files:#}");
    let bytes = files["workloads"][0]["bytes"].as_u64().unwrap();
    assert!((64 << 20..1 << 30).contains(&bytes), "{files:#}");
    assert!(files["need_bytes"].as_u64().unwrap() < files["free_bytes"].as_u64().unwrap());
    assert!(
        err.contains("warning:") && err.contains("scaled to"),
        "{err}"
    );
    let warnings = v["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("give --size")),
        "{warnings:?}"
    );

    let (v, err) = run(&["--size", "96m"]);
    let files = &v["result"]["files"];
    assert_eq!(files["sizing"], "option", "{files:#}");
    assert_eq!(files["workloads"][0]["bytes"], 96 << 20);
    assert!(!err.contains("scaled"), "{err}");
}

/// `sweep::execute` as a library (what `tune` will call): options built in
/// code, the caller's journal guard, progress through a callback. It puts
/// every device back itself before returning, and refuses a guard that
/// already holds changes.
#[test]
fn execute_runs_as_a_library_with_progress_callbacks() {
    if !support::live() {
        return;
    }
    use innotune::export::{markdown::Markdown, Exporter, Report};
    use innotune::sweep::{self, Event, Progress, SweepOptions};
    use std::sync::Arc;

    let lab = Lab::in_ram("lib");
    let guard =
        innotune::journal::Journal::begin_in(lab.state.path(), "sweep_live library test", false)
            .unwrap();
    let events: Arc<Mutex<Vec<Event>>> = Arc::default();
    let mut o = SweepOptions::new(&lab.mnt);
    // Neither is the loop device's current scheduler.
    o.schedulers = vec!["kyber".into(), "bfq".into()];
    o.workloads = vec![lab.small_job().to_string_lossy().into_owned()];
    o.rounds = 4;
    o.trial = Duration::from_millis(300);
    o.warmup = Duration::ZERO;
    o.choose = true;
    let sink = events.clone();
    o.progress = Progress::Callback(Arc::new(move |e| sink.lock().unwrap().push(e.clone())));
    let host = innotune::host::Host::live();
    let r = sweep::execute(&host, &guard, o).unwrap();
    assert!(guard.entries().is_empty(), "{:?}", guard.entries());
    assert_eq!(
        active(&lab.loopdev),
        lab.orig[0].1,
        "restored before returning"
    );
    let ev = events.lock().unwrap();
    let trials: Vec<usize> = ev
        .iter()
        .filter_map(|e| match e {
            Event::Trial { index, total, .. } => {
                assert_eq!(*total, r.plan.trials);
                Some(*index)
            }
            _ => None,
        })
        .collect();
    assert_eq!(trials, (1..=r.plan.trials).collect::<Vec<_>>());
    assert_eq!(r.trials.len(), 4 * 2, "rounds × candidates × workloads");
    assert!(matches!(ev.first(), Some(Event::Layout { .. })), "{ev:?}");
    assert_eq!(ev.last(), Some(&Event::Restoring));
    assert!(!r.recommendation.current_measured);
    let mut md = Vec::new();
    Markdown.export(&r.document(), &mut md).unwrap();
    let md = String::from_utf8(md).unwrap();
    assert!(md.contains("| candidate | throughput (IOPS) |"), "{md}");
    assert!(md.contains("| Recommendation |"), "{md}");

    // A guard that already holds a change: refused, nothing run.
    let mine = lab.dir.join("held");
    std::fs::create_dir(&mine).unwrap();
    guard
        .apply(
            &innotune::host::Host::live(),
            Box::new(innotune::change::CreatedDir::adopt(&mine)),
        )
        .unwrap();
    let e = sweep::execute(&host, &guard, SweepOptions::new(&lab.mnt)).unwrap_err();
    assert!(e.to_string().contains("journal with no changes"), "{e}");
    drop(guard);
    assert!(!mine.exists(), "the guard undid its own entry");
    lab.assert_restored();
}
