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
        let serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        // Explicitly: a loop queue keeps the scheduler the last user left.
        let lab = support::Lab::new(LabOpts {
            tag: &format!("tune-test-{tag}"),
            base: RAM,
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
        let c = &r["oltp"];
        let pairs = c["pairs"].as_array().unwrap();
        assert!(!pairs.is_empty(), "no before/after pair: {c}");
        for p in pairs {
            for side in ["before", "after"] {
                assert!(p[side]["tps_per_s"].as_f64().unwrap() > 0.0, "{p}");
            }
        }
        let before = lab.json("oltp-before.json");
        let after = lab.json("oltp-after.json");
        assert_eq!(before["schema"], "tune-oltp/2");
        assert_eq!(
            before["result"]["runs"].as_array().unwrap().len(),
            pairs.len()
        );
        assert_eq!(
            after["result"]["runs"].as_array().unwrap().len(),
            pairs.len()
        );
        // The measured table, in both renderings.
        assert!(
            md.contains("| workload | threads | TPS before (tps) | TPS after (tps)"),
            "{md}"
        );
        assert!(html.contains("<caption>Before / after (measured)</caption>"));
        let first = &pairs[0];
        assert!(html.contains(&format!("<td>{}</td>", first["workload"].as_str().unwrap())));
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
