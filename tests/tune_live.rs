//! `innotune tune` on this machine: a loop device on a file in /dev/shm
//! (so the root disk is never switched), ext4, mounted, with kyber set on
//! the loop device; the tests check by reading sysfs themselves that kyber
//! is back, that no server is left and that the journal is gone. Needs
//! root, losetup, mkfs.ext4, mount, and mariadbd/mysqld for the OLTP part.

mod support;
use support::Start as _;
use support::{active_scheduler as active, servers_under, LabOpts, RAM};

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static SERIAL: Mutex<()> = Mutex::new(());

/// `--quick`'s budget, and what a run may take beyond it: the two
/// sandboxes' initialisation and shutdown and the report are outside the
/// phases' shares (measured: a quick run takes about 50 s on this 2-core VM).
const QUICK_BUDGET: Duration = Duration::from_secs(60);
const MARGIN: Duration = Duration::from_secs(30);

/// A mounted loop device on a file in /dev/shm with kyber set; unmounted,
/// detached and deleted on every exit path (support::Lab), with its own
/// state directory, one at a time.
struct Lab {
    lab: support::Lab,
    out: PathBuf,
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
    fn new(tag: &str) -> Lab {
        Lab::on(tag, RAM)
    }

    /// A lab whose loop device's backing file is under `base` (RAM, or
    /// VAR_TMP: this machine's disk, where a buffer pool miss is a read).
    fn on(tag: &str, base: &'static str) -> Lab {
        let serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        // Explicitly: a loop queue keeps the scheduler the last user left.
        let lab = support::Lab::new(LabOpts {
            tag: &format!("tune-test-{tag}"),
            base,
            size: 2 << 30,
            scheduler: "kyber",
            ..LabOpts::default()
        });
        Lab {
            out: lab.dir.join("report"),
            lab,
            state: tempfile::tempdir().unwrap(),
            _serial: serial,
        }
    }

    fn tune(&self) -> Command {
        let mut c = support::innotune_sys();
        c.env("INNOTUNE_STATE_DIR", self.state.path()).args([
            "tune",
            "--quick",
            self.mnt.to_str().unwrap(),
            "--out",
            self.out.to_str().unwrap(),
        ]);
        c
    }

    /// Everything tune switched or started is back or gone.
    fn assert_restored(&self) {
        assert_eq!(
            active(&self.loopdev),
            "kyber",
            "loop scheduler not restored"
        );
        assert!(
            !self.state.path().join("journal.json").exists(),
            "journal left behind"
        );
        assert!(
            servers_under(&self.mnt).is_empty(),
            "a server was left running"
        );
        let left: Vec<_> = std::fs::read_dir(&self.mnt)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".innotune"))
            .collect();
        assert!(left.is_empty(), "work directories left: {left:?}");
    }

    fn json(&self, name: &str) -> Value {
        let p = self.out.join(name);
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["tool"], "innotune", "{name}");
        v
    }
}

fn has_server_binary() -> bool {
    ["/usr/sbin/mariadbd", "/usr/sbin/mysqld"]
        .iter()
        .any(|p| Path::new(p).exists())
}

#[test]
fn quick_tune_on_a_loop_filesystem() {
    if !support::live() {
        return;
    }
    let lab = Lab::new("quick");
    let t0 = Instant::now();
    let out = lab.tune().output().unwrap();
    let took = t0.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        took < QUICK_BUDGET + MARGIN,
        "took {took:?}, budget {QUICK_BUDGET:?} + {MARGIN:?}"
    );
    lab.assert_restored();
    // Every phase said where it was, with the time left.
    for phase in ["probe", "check", "sweep", "report"] {
        assert!(
            stderr.contains(&format!("innotune: tune [{phase}]")),
            "no {phase} progress: {stderr}"
        );
    }
    assert!(stderr.contains(" s left"), "{stderr}");
    // The exact apply command, last in the text report.
    let apply = format!(
        "innotune apply {} --results {}/sweep.json --yes",
        lab.mnt.display(),
        lab.out.display()
    );
    assert!(stdout.trim_end().ends_with(&apply), "{stdout}");
    // The text page shows it: not said again on stderr.
    assert!(!stderr.contains("innotune: to apply:"), "{stderr}");

    let tune = lab.json("tune.json");
    assert_eq!(tune["schema"], "tune/2");
    let r = &tune["result"];
    assert!(r["interrupted"].is_null());
    assert_eq!(r["apply_command"], apply);
    assert_eq!(r["sweep"]["devices"], serde_json::json!([lab.loopdev]));
    assert_eq!(r["sweep"]["baseline"], "kyber");
    assert_eq!(lab.json("probe.json")["schema"], "probe/2");
    assert_eq!(lab.json("check.json")["schema"], "check/2");
    let sweep = lab.json("sweep.json");
    assert_eq!(sweep["schema"], "sweep/2");
    assert!(sweep["result"]["trials_run"].as_u64().unwrap() >= 8);

    // The record `check --format prometheus` exports: this run's path and
    // each OLTP cell of tune.json with its interval and verdict.
    let prom = lab.state.path().join("innotune.prom");
    let o = support::innotune_sys()
        .env("INNOTUNE_STATE_DIR", lab.state.path())
        .args(["--format", "prometheus", "--output"])
        .arg(&prom)
        .args(["check", "--no-server"])
        .arg(&lab.mnt)
        .output()
        .unwrap();
    assert!(o.status.code().unwrap() <= 1, "{o:?}");
    let text = std::fs::read_to_string(&prom).unwrap();
    assert!(
        text.contains(&format!(
            "innotune_tune_last_run_timestamp_seconds{{path=\"{}\"}} ",
            lab.mnt.display()
        )),
        "{text}"
    );
    let cells = r["oltp"]["cells"].as_array().cloned().unwrap_or_default();
    let counted: usize = text
        .lines()
        .filter(|l| l.starts_with("innotune_tune_cells{"))
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<usize>().unwrap())
        .sum();
    assert_eq!(counted, cells.len(), "{text}");
    for x in &cells {
        let rounds = format!(
            "innotune_tune_cell_rounds{{threads=\"{}\",verdict=\"{}\",workload=\"{}\"}} {}\n",
            x["threads"],
            x["verdict"].as_str().unwrap(),
            x["workload"].as_str().unwrap(),
            x["rounds"]
        );
        assert!(text.contains(&rounds), "{rounds} not in {text}");
    }

    let md = std::fs::read_to_string(lab.out.join("summary.md")).unwrap();
    let html = std::fs::read_to_string(lab.out.join("report.html")).unwrap();
    assert!(md.contains("## Scheduler sweep"), "{md}");
    assert!(html.contains("<h2>Scheduler sweep</h2>"));
    assert!(html.contains(&apply));

    // Emitted files: at least the udev rule for the loop device's
    // scheduler, under files/ as under /.
    let emitted = r["emitted"].as_array().unwrap();
    assert!(!emitted.is_empty());
    for e in emitted {
        let w = Path::new(e["written"].as_str().unwrap());
        assert!(w.starts_with(lab.out.join("files")), "{w:?}");
        assert!(w.exists() || w.is_symlink(), "{w:?}");
    }

    if has_server_binary() {
        let oltp = r["phases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "oltp")
            .unwrap()
            .clone();
        if oltp["status"] == "skipped" {
            // The live server's advice changes nothing a sandbox can show
            // (on this machine: slow_query_log only): no comparison is
            // presented as the advice's effect, and the page says why.
            let note = oltp["note"].as_str().unwrap();
            assert!(note.starts_with("nothing to compare: "), "{oltp}");
            assert!(r["oltp"].is_null(), "{r:#}");
            assert!(
                md.contains("No before/after measurement: nothing to compare"),
                "{md}"
            );
            assert!(!lab.out.join("oltp-before.json").exists());
        } else {
            let c = &r["oltp"];
            let cells = c["cells"].as_array().unwrap();
            assert!(!cells.is_empty(), "no cell: {c}");
            for x in cells {
                assert!(
                    x["rounds"].as_u64().unwrap() >= 4 || x["verdict"] == "too_few_rounds",
                    "{x}"
                );
                assert!(
                    ["faster", "slower", "no_difference", "too_few_rounds"]
                        .contains(&x["verdict"].as_str().unwrap()),
                    "{x}"
                );
                assert!(x["before_tps_per_s"].as_f64().unwrap() > 0.0, "{x}");
            }
            let before = lab.json("oltp-before.json");
            assert_eq!(before["schema"], "tune-oltp/2");
            let rounds: u64 = cells.iter().map(|x| x["rounds"].as_u64().unwrap()).sum();
            assert_eq!(
                before["result"]["runs"].as_array().unwrap().len() as u64,
                rounds
            );
            assert!(md.contains("| after / before (interval) |"), "{md}");
            assert!(html.contains(
                "<caption>Before / after (measured: medians of interleaved rounds)</caption>"
            ));
        }
    }
}

#[test]
fn sigint_during_the_sweep_restores_and_writes_a_partial_report() {
    if !support::live() {
        return;
    }
    let lab = Lab::new("sigint");
    let mut child = lab
        .tune()
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .start();
    // Wait for the sweep's first trial: the loop device is switched then.
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = Vec::new();
    loop {
        let l = lines
            .next()
            .unwrap_or_else(|| panic!("tune ended before its sweep: {seen:?}"))
            .unwrap();
        let trial = l.contains("tune [sweep] round ");
        seen.push(l);
        if trial {
            break;
        }
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait_within(support::WAIT);
    assert_eq!(status.code(), Some(130), "{seen:?} {rest:?}");
    lab.assert_restored();
    let rest = rest.join("\n");
    assert!(rest.contains("interrupted by SIGINT"), "{rest}");
    assert!(rest.contains("partial report in"), "{rest}");

    let tune = lab.json("tune.json");
    let r = &tune["result"];
    assert_eq!(r["interrupted"], "SIGINT during sweep");
    let phases: Vec<(&str, &str)> = r["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap(), p["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        phases,
        vec![
            ("probe", "done"),
            ("check", "done"),
            ("sweep", "interrupted")
        ]
    );
    // What was measured before the signal is kept; what was not is absent.
    assert_eq!(lab.json("probe.json")["schema"], "probe/2");
    assert_eq!(lab.json("check.json")["schema"], "check/2");
    assert!(!lab.out.join("sweep.json").exists());
    assert!(!lab.out.join("oltp-before.json").exists());
    let html = std::fs::read_to_string(lab.out.join("report.html")).unwrap();
    assert!(html.contains("Interrupted (SIGINT during sweep)"), "{html}");
    let md = std::fs::read_to_string(lab.out.join("summary.md")).unwrap();
    assert!(md.contains("The sweep did not complete"), "{md}");
}

/// The README's main command: `tune` with no PATH on this machine takes the
/// running server's datadir (the MariaDB at 3306), and measures its disk
/// from a scratch directory outside the datadir on the same filesystem,
/// writing nothing into the datadir and leaving the disk's scheduler as it
/// was. (OLTP is left out to keep it short; tune_live's loop tests run it.)
#[test]
fn default_path_is_the_datadir_and_the_sweep_runs_outside_it() {
    if !support::live() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let datadir = PathBuf::from("/var/lib/mysql");
    if !datadir.is_dir() {
        eprintln!("skipped: no /var/lib/mysql on this machine");
        return;
    }
    let listing = || -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&datadir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("innotune"))
            .collect();
        v.sort();
        v
    };
    let before_files = listing();
    let before_sched = active("vda");
    let state = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = support::innotune_sys()
        .env("INNOTUNE_STATE_DIR", state.path())
        .args(["--format", "json", "tune", "--quick", "--no-oltp", "--out"])
        .arg(out.path().join("r"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("scratch files go to"), "{err}");
    // A JSON page does not show the apply command: stderr says it, last.
    let stdout: Value = serde_json::from_slice(&o.stdout).unwrap();
    let apply = stdout["result"]["apply_command"].as_str().unwrap();
    assert!(
        err.trim_end()
            .ends_with(&format!("innotune: to apply: {apply}")),
        "{err}"
    );
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("r/tune.json")).unwrap())
            .unwrap();
    let r = &v["result"];
    let sweep = r["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "sweep")
        .unwrap();
    assert_eq!(sweep["status"], "done", "{sweep:#}");
    assert_eq!(listing(), before_files, "tune wrote into the datadir");
    assert_eq!(
        active("vda"),
        before_sched,
        "the disk's scheduler was not put back"
    );
    assert!(!state.path().join("journal.json").exists(), "journal left");
}

/// Issue 46: on a loop filesystem whose backing file is on the disk, tune
/// switched the disk's scheduler too. `--device loopN` switches only the
/// loop device: the run says so before the sweep, the sweep's result lists
/// only the loop device, and the disk keeps its scheduler.
#[test]
fn device_switches_only_the_named_device() {
    if !support::live() {
        return;
    }
    let serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let lab = support::Lab::new(LabOpts {
        tag: "tune-test-device",
        base: support::VAR_TMP,
        size: 1 << 30,
        scheduler: "kyber",
        ..LabOpts::default()
    });
    let disk_before = active("vda");
    let state = tempfile::tempdir().unwrap();
    let out = lab.dir.join("report");
    let o = support::innotune_sys()
        .env("INNOTUNE_STATE_DIR", state.path())
        .args([
            "tune",
            "--budget",
            "40s",
            "--no-oltp",
            "--device",
            &lab.loopdev,
        ])
        .arg(&lab.mnt)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "will switch the scheduler of {} only (--device",
            lab.loopdev
        )),
        "{err}"
    );
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("sweep.json")).unwrap()).unwrap();
    let switched: Vec<&str> = v["result"]["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(switched, vec![lab.loopdev.as_str()], "{v:#}");
    assert_eq!(active("vda"), disk_before);
    assert_eq!(active(&lab.loopdev), "kyber");
    assert!(!state.path().join("journal.json").exists(), "journal left");
    drop(lab);
    drop(serial);
}

/// `tune --quick` on the planted server measures OLTP too: its small data
/// set (2 × 20,000 rows) keeps the live pool-to-data ratio, so "before"
/// (the 8 MiB pool scaled down to the 6 MiB floor) and "after" differ and
/// the phase runs, starting both sandboxes (a floor the server refuses
/// fails the phase). Its time is the bench's business (bench/tune-time.sh).
#[test]
fn quick_tune_of_a_planted_pool_measures_oltp() {
    if !support::live() || !has_server_binary() {
        return;
    }
    let lab = Lab::new("quick-planted");
    let planted = support::Planted::start(&lab.dir, lab.state.path());
    let out = lab
        .tune()
        .args(["--device", &lab.loopdev])
        .args(planted.sock_args())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let r = &lab.json("tune.json")["result"];
    let oltp = r["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "oltp")
        .unwrap();
    assert_eq!(oltp["status"], "done", "{oltp:#}\n{stderr}");
    let before = &r["oltp"]["profiles"]["before"]["variables"];
    eprintln!("quick: before {before}, cells {:#}", r["oltp"]["cells"]);
    assert!(
        !r["oltp"]["cells"].as_array().unwrap().is_empty(),
        "{:#}",
        r["oltp"]
    );
    lab.assert_restored();
}

/// The issue's planted case: a "live" server (a sandbox innotune starts,
/// never the one at 3306) with an undersized buffer pool (8 MiB) and the
/// OLTP data several times it; `tune --socket …` recommends a larger pool,
/// measures it faster with its interval above 1 (the read-write cell; the
/// read-only one as the disk allows, see the criterion below), in cells of
/// at least 4 interleaved rounds, and the finding carries what was
/// measured.
///
/// The sandboxes' loop device is backed by a file on this machine's disk
/// (VAR_TMP, direct I/O; `--device` keeps the sweep off the disk itself):
/// on a RAM-backed loop a pool miss costs a memcpy, and read-only at 8
/// threads measured anything from 1.00× (0.81–1.23, no difference; an idle
/// run on 2026-11-28) to 1.80× there. On the disk, with "before" keeping
/// the live pool-to-data ratio (the pool's floor is 6 MiB, not 16), every
/// read-only cell measured faster: 1.25× at 1 thread up to 1.97× at 4, 1.63×
/// (1.39–4.00) at 8 (`BACKING=disk MODES=default bench/tune-time.sh 1`,
/// 2026-11-29).
/// One thread count and a budget that lets plan_cells give each of the 2
/// cells more than 4 rounds, so the sequential design is on and its
/// stopping round can be checked.
#[test]
fn planted_small_buffer_pool_is_measured_in_cells() {
    if !support::live() || !has_server_binary() {
        return;
    }
    let lab = Lab::on("planted", support::VAR_TMP);
    let disk_before = active("vda");
    let planted = support::Planted::start(&lab.dir, lab.state.path());
    let out = support::innotune_sys()
        .env("INNOTUNE_STATE_DIR", lab.state.path())
        .args(["tune", "--budget", "330s", "--threads", "8", "--seed", "3"])
        .args(["--device", &lab.loopdev])
        .arg(&lab.mnt)
        .args(planted.sock_args())
        .arg("--out")
        .arg(&lab.out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let r = &lab.json("tune.json")["result"];
    let c = &r["oltp"];
    assert_eq!(c["seed"], 3);
    let cells = c["cells"].as_array().unwrap_or_else(|| panic!("{r:#}"));
    assert!(!cells.is_empty(), "{c:#}");
    for x in cells {
        assert!(x["rounds"].as_u64().unwrap() >= 4, "{x}");
        assert!(
            ["faster", "slower", "no_difference", "too_few_rounds"]
                .contains(&x["verdict"].as_str().unwrap()),
            "{x}"
        );
    }
    // Every cell of the ladder (2 workloads × 1 thread count) is measured
    // or named as dropped.
    assert_eq!(cells.len() + c["dropped"].as_array().unwrap().len(), 2);
    // Sequential stopping: the round a cell stopped at is reported, and a
    // large effect (×1.5 or more: the read-write cell, ×2 and up here) is
    // declared in at most half the rounds of the fixed design. A smaller
    // one may take longer: on the disk-backed loop the read-only cell
    // measured ×1.08–1.2 and stopped at rounds 5, 6 and 9 of 10
    // (2026-11-29), which is the design working, not failing.
    let planned = c["rounds_planned"].as_u64().unwrap();
    for x in cells {
        if let Some(at) = x["stopped_at_round"].as_u64() {
            assert_eq!(x["rounds"].as_u64(), Some(at), "{x}");
            // "Half" rounded up: with 9 planned, the exact rank-sum test's
            // smallest p at 4 rounds a side is 2/70 = 0.029, at or near the
            // boundary's spend there (0.032 at round 5), so round 5 is in
            // practice the earliest stop (measured: 5 of 9).
            if planned >= 8 && x["ratio"].as_f64().unwrap_or(0.0) >= 1.5 {
                assert!(
                    at <= planned.div_ceil(2),
                    "stopped at {at} of {planned}: {x}"
                );
            }
        }
    }
    eprintln!("planted: rounds_planned {planned}, cells {:#}", c["cells"]);
    let pool = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"].as_str().unwrap().starts_with("server.buffer_pool"))
        .unwrap_or_else(|| panic!("no buffer pool finding: {r:#}"));
    assert_eq!(pool["measured"].as_array().unwrap().len(), cells.len());
    // The planted pool is measured: the read-write cell is faster, its
    // interval above 1; and no cell is slower. The read-only cell is not
    // asserted faster: how much a pool miss costs is the machine's disk.
    // On the machine of 2026-11-27/28 it measured 1.63x (1.39-4.00); on
    // that of 2026-11-29, whose virtio disk answers a 16 KiB random read
    // in 54 us (fio, depth 1: the host's cache), 1.05x (0.93-1.19) and
    // 1.09x (0.91-...), no difference, with this code and the one before
    // it alike, while read-write measured 1.50x (1.32-) and 1.40x (1.15-),
    // each stopped at round 5 (bench/log/2026-11-29.md).
    let cell = |w: &str| {
        cells
            .iter()
            .find(|x| x["workload"] == w)
            .unwrap_or_else(|| panic!("no {w} cell: {c:#}"))
    };
    let rw = cell("oltp_read_write");
    assert_eq!(rw["verdict"], "faster", "{c:#}");
    assert!(rw["ci_low"].as_f64().unwrap() > 1.0, "{rw:#}");
    let ro = cell("oltp_read_only");
    assert!(ro["ratio"].as_f64().is_some(), "{ro:#}");
    assert!(cells.iter().all(|x| x["verdict"] != "slower"), "{c:#}");
    assert_eq!(
        active("vda"),
        disk_before,
        "the disk under the loop was switched"
    );
    lab.assert_restored();
}
