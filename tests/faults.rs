//! Faults injected on purpose (issue 39), through the real binary, each on
//! real things the test builds and takes down on every path:
//!
//! - SIGKILL at every durable step of `apply --yes` (the journal's test
//!   hook `INNOTUNE_FAULT_AFTER_STEP=N`, src/journal/fault.rs), for every
//!   N until a run completes, then `innotune restore`: the host is
//!   byte-for-byte what it was — on a replayed host tree (sysfs, sysctls,
//!   THP, emitted files and directories) and, live, on a loop device's
//!   queue, emitted files under `--root` and a sandbox server's variables.
//! - A filesystem that fills during `checksum --record`, `bench`, `sweep`
//!   and `tune` (a small ext4 on a loop device, filled by the workload or
//!   by the test).
//! - The sandbox server SIGKILLed mid-OLTP (`innotune oltp … run`),
//!   mid-tune (its OLTP phase) and mid-sweep (an OLTP workload).
//! - A tracefs buffer overrun during `innotune trace`.
//!
//! Live tests (loop devices, sandboxes, tracefs) run with
//! INNOTUNE_LIVE_TESTS=1 as root; the replayed-tree test runs always.

mod support;

use serde_json::Value;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::Start as _;
use support::{Lab, LabOpts, TestServer, RAM};

/// The journal's test hook (src/journal/fault.rs).
const FAULT: &str = "INNOTUNE_FAULT_AFTER_STEP";

/// No run of `apply --yes` here has nearly this many durable steps: a hook
/// that never fires (or a run that never completes) fails the test here.
const MAX_STEPS: u64 = 200;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The step a run killed by the hook at step `n` names (its last stderr
/// line says so); None when the run completed (exit 0). Anything else
/// (another exit, another signal, a kill without the hook's line) fails.
fn killed_at(out: &Output, n: u64) -> Option<String> {
    let err = text(&out.stderr);
    if out.status.code() == Some(0) {
        assert!(
            !err.contains(FAULT),
            "N={n}: exit 0 after the hook fired: {err}"
        );
        return None;
    }
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGKILL),
        "N={n}: neither killed by the hook nor exit 0 ({:?}): {err}",
        out.status
    );
    let prefix = format!("innotune: {FAULT}={n}: killed after step {n}: ");
    let line = err
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("N={n}: SIGKILL without the hook's line: {err}"));
    Some(line.to_string())
}

/// What a crash leaves in the state directory is whole: every journal
/// there (the run's, the applied one) parses as JSON, and no temporary
/// file of a write cut short is left.
fn state_is_whole(state: &Path, n: u64) {
    for e in std::fs::read_dir(state).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            !name.ends_with(".innotune-tmp"),
            "N={n}: a temporary file was left: {name}"
        );
        if name.ends_with(".json") {
            let s = std::fs::read_to_string(&p).unwrap();
            let v: Value = serde_json::from_str(&s)
                .unwrap_or_else(|e| panic!("N={n}: {name} is not whole JSON ({e}): {s}"));
            assert!(v["entries"].is_array(), "N={n}: {name}: {v:#}");
        }
    }
}

/// `innotune restore` after the crash: exit 0, nothing left in conflict
/// or failed, and both journals gone.
fn restore(state: &Path, n: u64) -> Value {
    let out = support::innotune_in(state)
        .args(["restore", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "N={n}: restore: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    for e in v["result"]["entries"].as_array().unwrap() {
        let o = e["outcome"].as_str().unwrap();
        assert!(
            !matches!(o, "conflict" | "failed"),
            "N={n}: restore left {e:#}"
        );
    }
    for f in ["journal.json", "applied.json"] {
        assert!(!state.join(f).exists(), "N={n}: {f} left after restore");
    }
    v
}

/// The check-planted host tree, generated (the generator is the source of
/// truth; a checkout may have lost the committed tree's symlinks).
fn planted_tree() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let gen = support::fixture_host("make-check-fixtures.py");
    let out = support::spawn(
        Command::new("python3")
            .arg(gen)
            .arg(t.path())
            .stdout(std::process::Stdio::null()),
    )
    .output_within(support::WAIT);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let root = t.path().join("check-planted");
    (t, root)
}

fn copy_tree(from: &Path, to: &Path) {
    support::sh("cp", &["-a", from.to_str().unwrap(), to.to_str().unwrap()]);
}

/// Which kinds of durable step the runs were killed after: every kind the
/// hook counts must have been hit at least once.
fn assert_every_kind_of_step(steps: &[String]) {
    for kind in [
        "journal written",
        "change made",
        "applied journal written",
        "journal removed",
    ] {
        assert!(
            steps.iter().any(|s| s == kind),
            "no run was killed after a step `{kind}`: {steps:?}"
        );
    }
}

/// SIGKILL after every durable step of `apply --yes` on a replayed host
/// (check-planted: a scheduler, a sysctl, THP, a udev rule, sysctl.d,
/// tmpfiles.d, a systemd drop-in directory and its file), then `restore`:
/// every file of the tree is as it was, for every N.
#[test]
fn apply_killed_after_every_durable_step_is_restored_byte_for_byte_on_a_tree() {
    let (_gen, pristine) = planted_tree();
    let want = support::tree(&pristine);
    let mut steps = Vec::new();
    let mut applied = 0;
    for n in 1..=MAX_STEPS {
        let work = tempfile::tempdir().unwrap();
        let root = work.path().join("host");
        copy_tree(&pristine, &root);
        let state = work.path().join("state");
        std::fs::create_dir(&state).unwrap();
        let out = support::innotune_in(&state)
            .env(FAULT, n.to_string())
            .arg("--root")
            .arg(&root)
            .args(["apply", "/var/lib/mysql", "--yes", "--format", "json"])
            .output()
            .unwrap();
        let step = killed_at(&out, n);
        state_is_whole(&state, n);
        if step.is_none() {
            let r: Value = serde_json::from_slice(&out.stdout).unwrap();
            applied = r["result"]["applied"].as_array().unwrap().len();
        }
        restore(&state, n);
        let got = support::tree(&root);
        assert_eq!(
            got, want,
            "N={n} (killed after {step:?}): the tree differs after restore"
        );
        match step {
            Some(s) => steps.push(s),
            None => break,
        }
    }
    assert_eq!(applied, 8, "the completed run made every change");
    assert_eq!(
        steps.iter().filter(|s| *s == "change made").count(),
        applied,
        "one step after each change: {steps:?}"
    );
    assert_every_kind_of_step(&steps);
}

/// A sandbox's planted mistakes that `apply` fixes with SET GLOBAL and a
/// [mysqld] drop-in (as tests/check_server.rs plants them).
const PLANTED_SERVER: &str = "innodb_buffer_pool_chunk_size = 64M
innodb_buffer_pool_size = 200M
query_cache_type = 1
query_cache_size = 64M
";

/// Every readable attribute file of a block device's queue, byte for byte.
fn queue_attrs(dev: &str) -> Vec<(String, Vec<u8>)> {
    let q = PathBuf::from(format!("/sys/block/{dev}/queue"));
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(&q)
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            if !e.file_type().ok()?.is_file() {
                return None;
            }
            let bytes = std::fs::read(e.path()).ok()?;
            Some((e.file_name().to_string_lossy().into_owned(), bytes))
        })
        .collect();
    v.sort();
    v
}

/// Every global variable of the server, as SHOW GLOBAL VARIABLES gives it.
fn server_vars(srv: &TestServer) -> Vec<(String, String)> {
    srv.query("SHOW GLOBAL VARIABLES")
}

/// SIGKILL after every durable step of a live `apply --yes`, then
/// `restore`: a loop device's scheduler (bfq → none), a udev rule under
/// `--root`, SET GLOBAL on a sandbox server and a [mysqld] drop-in in the
/// directory its my.cnf includes. After each restore, the loop device's
/// queue attributes, the server's global variables and both directories
/// are byte-for-byte what they were.
#[test]
fn apply_killed_after_every_durable_step_is_restored_on_a_loop_device_and_a_sandbox() {
    if !support::live() {
        return;
    }
    let lab = Lab::new(LabOpts {
        tag: "faults-apply",
        base: RAM,
        scheduler: "bfq",
        mount_opts: "relatime",
        ..LabOpts::default()
    });
    let srv = TestServer::with_profile(PLANTED_SERVER);
    // The sandbox's my.cnf includes a directory, as distributions' do.
    let confd = srv.sb.dir().join("conf.d");
    std::fs::create_dir(&confd).unwrap();
    let cnf = srv.sb.dir().join("my.cnf");
    let t = std::fs::read_to_string(&cnf).unwrap();
    std::fs::write(&cnf, format!("{t}\n!includedir {}\n", confd.display())).unwrap();
    // A root whose sys, proc, dev and tmp are this machine's (the loop
    // device and the sandbox are real) and whose etc is the test's own.
    let root = lab.dir.join("root");
    std::fs::create_dir(&root).unwrap();
    for d in ["sys", "proc", "dev", "tmp"] {
        std::os::unix::fs::symlink(format!("/{d}"), root.join(d)).unwrap();
    }
    for d in ["etc/udev/rules.d", "etc/sysctl.d", "etc/systemd/system"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    let queue = queue_attrs(lab.name());
    let vars = server_vars(&srv);
    let etc = support::tree(&root.join("etc"));
    let dropins = support::tree(&confd);
    let sock = srv.sock_args();
    let mut steps = Vec::new();
    let mut applied = Vec::new();
    for n in 1..=MAX_STEPS {
        let state = tempfile::tempdir().unwrap();
        let out = support::innotune_in(state.path())
            .env(FAULT, n.to_string())
            .arg("--root")
            .arg(&root)
            .args(["apply", "--yes", "--format", "json", "--sample", "0"])
            .args(["--only", "storage,filesystem,server"])
            .args(&sock)
            .arg(&lab.mnt)
            .output()
            .unwrap();
        let step = killed_at(&out, n);
        state_is_whole(state.path(), n);
        if step.is_none() {
            let r: Value = serde_json::from_slice(&out.stdout).unwrap();
            applied = r["result"]["applied"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_string())
                .collect();
        }
        restore(state.path(), n);
        let at = format!("N={n} (killed after {step:?})");
        assert_eq!(lab.scheduler(), "bfq", "{at}");
        assert_eq!(queue_attrs(lab.name()), queue, "{at}: queue attributes");
        assert_eq!(server_vars(&srv), vars, "{at}: server variables");
        assert_eq!(
            support::tree(&root.join("etc")),
            etc,
            "{at}: {}/etc",
            root.display()
        );
        assert_eq!(support::tree(&confd), dropins, "{at}: {}", confd.display());
        match step {
            Some(s) => steps.push(s),
            None => break,
        }
    }
    // What the completed run changed: each kind the test means to cover.
    let has = |f: &dyn Fn(&str) -> bool| applied.iter().any(|a| f(a));
    assert!(
        has(&|a| a.ends_with(&format!("{}/queue/scheduler", lab.name()))),
        "{applied:?}"
    );
    assert!(has(&|a| a.starts_with("query_cache_type@")), "{applied:?}");
    assert!(
        has(&|a| a.starts_with("innodb_buffer_pool_size@")),
        "{applied:?}"
    );
    assert!(
        has(&|a| a == "/etc/udev/rules.d/99-innotune.rules"),
        "{applied:?}"
    );
    assert!(has(&|a| Path::new(a).starts_with(&confd)), "{applied:?}");
    assert_eq!(
        steps.iter().filter(|s| *s == "change made").count(),
        applied.len(),
        "one step after each change: {steps:?}"
    );
    assert_every_kind_of_step(&steps);
}

/// Real InnoDB tablespaces (the shared fixtures).
const TABLESPACES: &str = "/work/shared/fixtures/mysql-tablespaces";

/// A small ext4 (64 MiB) on a loop device backed by RAM, mounted.
fn small_lab(tag: &str, size: u64) -> Lab {
    Lab::new(LabOpts {
        tag,
        base: RAM,
        size,
        ..LabOpts::default()
    })
}

/// No temporary file of an interrupted durable write under `dir`.
fn no_temporaries(dir: &Path) {
    let left: Vec<PathBuf> = support::tree(dir)
        .into_keys()
        .filter(|p| p.to_string_lossy().ends_with(".innotune-tmp"))
        .collect();
    assert!(
        left.is_empty(),
        "temporary files left in {}: {left:?}",
        dir.display()
    );
}

/// `checksum --record` with the state directory on a filesystem that
/// filled since the last record: the verification result is still
/// reported in full (it is what the command is for), the failure to
/// record is one error line naming the full filesystem, exit 2; the last
/// record is kept whole, byte for byte (old, never half-written), and a
/// path never recorded gets no record.
#[test]
fn checksum_record_on_a_full_filesystem_reports_the_result_and_keeps_the_old_record() {
    if !support::live() {
        return;
    }
    let lab = small_lab("faults-record", 64 << 20);
    let state = lab.mnt.join("state");
    let ibd = Path::new(TABLESPACES).join("t_10k_rows.ibd");
    let other = Path::new(TABLESPACES).join("t_empty.ibd");
    let first = support::innotune_in(&state)
        .args(["checksum", "--record"])
        .arg(&ibd)
        .output()
        .unwrap();
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let records = state.join("checksum");
    let before = support::tree(&records);
    assert_eq!(before.len(), 1, "{before:?}");

    support::fill(&lab.mnt, "filler");
    for (path, recorded) in [(&ibd, true), (&other, false)] {
        let out = support::innotune_in(&state)
            .args(["checksum", "--record", "--format", "json"])
            .arg(path)
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}: {err}", path.display());
        // The result, whole.
        let v: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("no report ({e}): {}\n{err}", text(&out.stdout)));
        let f = &v["result"]["files"][0];
        assert_eq!(f["path"], path.to_str().unwrap(), "{v:#}");
        assert!(f["pages_checked"].as_u64().unwrap() > 0, "{v:#}");
        // One error line, naming what is full and that the old record stays.
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 1, "{err}");
        assert!(lines[0].starts_with("innotune: error: "), "{err}");
        assert!(lines[0].contains("no space left"), "{err}");
        assert!(lines[0].contains(records.to_str().unwrap()), "{err}");
        assert!(!lines[0].contains(".innotune-tmp"), "{err}");
        if recorded {
            assert!(lines[0].contains("the last record is kept"), "{err}");
        }
        assert_eq!(support::tree(&records), before, "the record changed");
        no_temporaries(&records);
    }
}

/// One at a time: the tests that start servers or load the machine (a
/// tune's budget and a sweep's trials are shared with whatever else runs).
static HEAVY: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn heavy() -> std::sync::MutexGuard<'static, ()> {
    HEAVY.lock().unwrap_or_else(|p| p.into_inner())
}

/// The lines of `err` that are innotune's errors.
fn error_lines(err: &str) -> Vec<&str> {
    err.lines()
        .filter(|l| l.starts_with("innotune: error: "))
        .collect()
}

/// `innotune sandbox start --dir DIR` (its own state directory); the
/// server's pid from the sandbox's manifest.
fn cli_sandbox(state: &Path, dir: &Path) -> u32 {
    let out = support::innotune_in(state)
        .args(["sandbox", "start", "--dir"])
        .arg(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("innotune-sandbox.json")).unwrap())
            .unwrap();
    m["pid"].as_u64().unwrap() as u32
}

fn sigkill(pid: u32) {
    // SAFETY: a server process this test started (through innotune).
    assert_eq!(
        unsafe { libc::kill(pid as i32, libc::SIGKILL) },
        0,
        "kill {pid}"
    );
}

/// `innotune oltp … run` against a sandbox whose server is SIGKILLed
/// mid-run: the report keeps the run's figures until then (JSON: the run
/// with its `error`), then one error line names the server, its pid and
/// that it died; exit 2. `sandbox stop` then leaves neither the
/// directory nor a process.
#[test]
fn oltp_run_whose_server_is_killed_names_it_and_keeps_the_partial_run() {
    if !support::live() {
        return;
    }
    let _one = heavy();
    let state = tempfile::tempdir().unwrap();
    // Short: a socket path has room for ~100 bytes.
    let parent = tempfile::Builder::new()
        .prefix("itfk")
        .tempdir_in("/tmp")
        .unwrap();
    let dir = parent.path().join("sb");
    let pid = cli_sandbox(state.path(), &dir);
    let sock = dir.join("mysql.sock");
    let conn = [
        "--socket",
        sock.to_str().unwrap(),
        "--user",
        "root",
        "--no-defaults",
    ];
    let table = ["--tables", "1", "--table-size", "2000"];
    let prep = support::innotune_in(state.path())
        .args(["oltp", "oltp_read_write", "prepare"])
        .args(conn)
        .args(table)
        .output()
        .unwrap();
    assert_eq!(prep.status.code(), Some(0), "{}", text(&prep.stderr));
    let out_json = parent.path().join("run.json");
    let child = support::innotune_sys()
        .env("INNOTUNE_STATE_DIR", state.path())
        .args(["oltp", "oltp_read_write", "run", "--format", "json"])
        .args(conn)
        .args(table)
        .args(["--threads", "2", "--time", "300", "--report-interval", "1"])
        .arg("--output")
        .arg(&out_json)
        .stderr(std::process::Stdio::piped())
        .start();
    // Under way: the server has committed the run's transactions.
    let spec = innotune::db::ConnSpec::socket(&sock, "root");
    let commits = || -> u64 {
        use mysql::prelude::Queryable;
        let mut c = spec.connect().unwrap();
        let r: Option<(String, u64)> = c
            .query_first("SHOW GLOBAL STATUS LIKE 'Com_commit'")
            .unwrap();
        r.unwrap().1
    };
    let at_start = commits();
    support::wait_for("the run's first 200 commits", support::WAIT, || {
        commits() > at_start + 200
    });
    sigkill(pid);
    let out = child.output_within(support::WAIT);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let errors = error_lines(&err);
    assert_eq!(errors.len(), 1, "{err}");
    let want = format!(
        "innotune: error: the server at socket {} as root (pid {pid}) died during the run: ",
        sock.display()
    );
    assert!(errors[0].starts_with(&want), "{err}");
    // The partial run, in the report written before the error.
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&out_json).unwrap()).unwrap();
    let runs = v["result"]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{v:#}");
    let r = &runs[0];
    assert!(
        r["error"]
            .as_str()
            .unwrap()
            .contains(&format!("(pid {pid}) died")),
        "{r:#}"
    );
    assert!(r["transactions"].as_u64().unwrap() >= 100, "{r:#}");
    assert!(!r["intervals"].as_array().unwrap().is_empty(), "{r:#}");
    let secs = r["total_time_s"].as_f64().unwrap();
    assert!(secs > 0.0 && secs < 300.0, "{r:#}");

    let stop = support::innotune_in(state.path())
        .args(["sandbox", "stop", "--dir"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(stop.status.code(), Some(0), "{}", text(&stop.stderr));
    assert!(!dir.exists(), "the sandbox directory is left");
    assert!(support::servers_under(&dir).is_empty());
}

/// The labs for sweeps with an OLTP workload: the server's datadir is in
/// the sweep's work directory on the lab.
fn oltp_lab(tag: &str, size: u64) -> Lab {
    Lab::new(LabOpts {
        tag,
        base: RAM,
        size,
        ..LabOpts::default()
    })
}

/// Everything a sweep or tune switched or started on `lab` is back or
/// gone: the loop device's scheduler is `sched` again, no work directory
/// or server is left, and no journal.
fn assert_lab_restored(lab: &Lab, sched: &str, state: &Path) {
    assert_eq!(lab.scheduler(), sched, "the loop device's scheduler");
    assert!(
        support::servers_under(&lab.mnt).is_empty(),
        "a server was left running"
    );
    let left: Vec<String> = std::fs::read_dir(&lab.mnt)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".innotune"))
        .collect();
    assert!(left.is_empty(), "work directories left: {left:?}");
    assert!(!state.join("journal.json").exists(), "journal left behind");
    no_temporaries(state);
}

/// A sweep with an OLTP workload whose server is SIGKILLed mid-trial
/// (issue 39's "mid-search": tune's scheduler search is this sweep): one
/// error line naming the OLTP server, its pid and the signal, exit 2; the
/// scheduler is back, the work directory (the server's datadir) gone, no
/// process left, no journal. (A sweep keeps no partial results on any
/// early end, as on Ctrl-C: its verdicts need every round.)
#[test]
fn sweep_whose_oltp_server_is_killed_names_it_and_restores_everything() {
    if !support::live() {
        return;
    }
    let _one = heavy();
    let lab = oltp_lab("faults-sweepkill", 1 << 30);
    let state = tempfile::tempdir().unwrap();
    let child = support::innotune_sys()
        .env("INNOTUNE_STATE_DIR", state.path())
        .arg("sweep")
        .arg(&lab.mnt)
        // Neither is the loop device's scheduler (none): the first trial
        // switches it, after the server is loaded.
        .args(["--schedulers", "kyber,bfq", "--workload", "oltp_read_write"])
        .args(["--trial", "60s", "--warmup", "0", "--oltp-tables", "1"])
        .args(["--oltp-table-size", "2000", "--oltp-threads", "2"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .start();
    support::wait_for("the sweep's first switch", support::WAIT, || {
        matches!(lab.scheduler().as_str(), "kyber" | "bfq")
    });
    let servers = support::servers_under(&lab.mnt);
    assert_eq!(servers.len(), 1, "{servers:?}");
    sigkill(servers[0]);
    let out = child.output_within(support::WAIT);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let errors = error_lines(&err);
    assert_eq!(errors.len(), 1, "{err}");
    let want = format!(
        "the OLTP server (pid {}) died during the run: killed by SIGKILL",
        servers[0]
    );
    assert!(errors[0].contains(&want), "{err}");
    assert!(out.stdout.is_empty(), "no report: {}", text(&out.stdout));
    assert_lab_restored(&lab, "none", state.path());
}

/// `innotune tune --quick` whose "before" sandbox is SIGKILLed during the
/// second round of the before/after cells (against a sandbox "live"
/// server with an 8 MiB buffer pool, so the advice changes something a
/// sandbox can show; else the phase is skipped): the OLTP phase fails naming the before
/// server, its pid and the signal (a warning line, and the phase's note);
/// the run goes on and writes its report with what was measured (probe,
/// check, the sweep, the first pair); everything is put back.
#[test]
fn tune_whose_sandbox_is_killed_keeps_the_pairs_measured_and_names_it() {
    if !support::live() {
        return;
    }
    let _one = heavy();
    let lab = Lab::new(LabOpts {
        tag: "faults-tunekill",
        base: RAM,
        size: 2 << 30,
        scheduler: "kyber",
        ..LabOpts::default()
    });
    let state = tempfile::tempdir().unwrap();
    let out_dir = lab.dir.join("report");
    // The "live" server: a sandbox of our own (never the one at 3306,
    // whose advice may change nothing a sandbox can show, so the phase
    // would be skipped) with an undersized buffer pool, which check
    // advises enlarging: the before and after sandboxes differ.
    let live = tempfile::tempdir().unwrap();
    let planted = support::Planted::start(live.path(), live.path());
    let mut child = support::innotune_sys()
        .env("INNOTUNE_STATE_DIR", state.path())
        // Not --quick: its 2-s check sample saw no buffer-pool misses on
        // the empty server, so "after" differed only in logging and the
        // OLTP phase was skipped; the planted tune_live run's flags do.
        .args(["tune", "--budget", "200s", "--threads", "8", "--seed", "3"])
        .arg(&lab.mnt)
        .args(planted.sock_args())
        .arg("--out")
        .arg(&out_dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .start();
    let lines = child.stderr_lines();
    let mut err = String::new();
    let mut killed = None;
    while let Some(l) = lines.next_within(support::WAIT) {
        err.push_str(&l);
        err.push('\n');
        if killed.is_none() && l.contains("tune [oltp] round 2/") {
            let before: Vec<u32> = support::servers_under(&lab.mnt)
                .into_iter()
                .filter(|p| {
                    let cmd = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
                    text(&cmd).contains("/b/my.cnf")
                })
                .collect();
            assert_eq!(before.len(), 1, "{before:?}");
            sigkill(before[0]);
            killed = Some(before[0]);
        }
    }
    let pid = killed.unwrap_or_else(|| panic!("tune never reached round 2: {err}"));
    let out = child.output_within(support::WAIT);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let note = format!("the before server (pid {pid}) died during the run: killed by SIGKILL");
    let warned: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("innotune: warning: tune: the oltp phase failed: "))
        .collect();
    assert_eq!(warned.len(), 1, "{err}");
    assert!(warned[0].contains(&note), "{err}");
    let tune: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("tune.json")).unwrap()).unwrap();
    let r = &tune["result"];
    let phase = |name: &str| {
        r["phases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("no {name} phase: {r:#}"))
            .clone()
    };
    assert_eq!(phase("oltp")["status"], "failed", "{r:#}");
    assert!(
        phase("oltp")["note"].as_str().unwrap().contains(&note),
        "{r:#}"
    );
    assert_eq!(phase("sweep")["status"], "done", "{r:#}");
    // The first round is kept: one round per cell, too few for a verdict.
    let cells = r["oltp"]["cells"].as_array().unwrap();
    assert!(
        !cells.is_empty(),
        "the first round is kept: {:#}",
        r["oltp"]
    );
    for c in cells {
        assert_eq!(c["rounds"], 1, "{c}");
        assert_eq!(c["verdict"], "too_few_rounds", "{c}");
        assert!(c["before_tps_per_s"].as_f64().unwrap() > 0.0, "{c}");
    }
    assert!(out_dir.join("sweep.json").exists());
    assert_lab_restored(&lab, "kyber", state.path());
}

/// A sweep whose OLTP workload (oltp_insert) fills the filesystem it runs
/// on, which also holds the state directory (the journal): the test fills
/// the rest once trials run, the server's inserts then fail. One error
/// line saying the server's table is full and where to free space, exit
/// 2; the scheduler is back, the work directory (with the server's
/// datadir) gone, no server left, the journal gone, no temporary file.
/// Then, on the filesystem full from the start, the sweep cannot journal
/// its first change: one error line naming the journal and the lack of
/// space, and nothing was changed.
#[test]
fn sweep_that_fills_its_filesystem_stops_in_one_line_and_restores_everything() {
    if !support::live() {
        return;
    }
    let _one = heavy();
    let lab = oltp_lab("faults-sweepfull", 512 << 20);
    let state = lab.mnt.join("state");
    let child = support::innotune_sys()
        .env("INNOTUNE_STATE_DIR", &state)
        .arg("sweep")
        .arg(&lab.mnt)
        .args(["--schedulers", "kyber,bfq", "--workload", "oltp_insert"])
        .args(["--trial", "60s", "--warmup", "0", "--oltp-tables", "1"])
        .args(["--oltp-table-size", "1000", "--oltp-threads", "2"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .start();
    support::wait_for("the sweep's first switch", support::WAIT, || {
        matches!(lab.scheduler().as_str(), "kyber" | "bfq")
    });
    support::fill(&lab.mnt, "filler");
    let out = child.output_within(support::WAIT);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let errors = error_lines(&err);
    assert_eq!(errors.len(), 1, "{err}");
    assert!(errors[0].contains("oltp_insert under "), "{err}");
    assert!(errors[0].contains("error 1114"), "{err}");
    assert!(errors[0].contains("is full"), "{err}");
    assert!(errors[0].contains("free space on the filesystem"), "{err}");
    assert_lab_restored(&lab, "none", &state);
    state_is_whole(&state, 0);

    // Full from the start (the sandbox's space is free again: fill it).
    support::fill(&lab.mnt, "filler2");
    let out = support::innotune_in(&state)
        .arg("sweep")
        .arg(&lab.mnt)
        .args(["--schedulers", "kyber,bfq", "--workload", "oltp_insert"])
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let errors = error_lines(&err);
    assert_eq!(errors.len(), 1, "{err}");
    assert!(
        errors[0].contains(&format!(
            "cannot write journal {}",
            state.join("journal.json").display()
        )),
        "{err}"
    );
    assert!(errors[0].contains("No space left on device"), "{err}");
    assert!(
        errors[0].contains("free space on the state directory's filesystem"),
        "{err}"
    );
    assert_lab_restored(&lab, "none", &state);
}

fn bench_json(dir: &Path, job: &Path, output: &Path) -> Output {
    support::innotune()
        .args(["bench", "--format", "json", "--job-file"])
        .arg(job)
        .arg("--directory")
        .arg(dir)
        .arg("--output")
        .arg(output)
        .output()
        .unwrap()
}

/// The manifest of a bench directory, parsed: it must be whole JSON.
fn manifest(dir: &Path) -> Value {
    let p = dir.join(".innotune-bench");
    let s = std::fs::read_to_string(&p).unwrap();
    serde_json::from_str(&s).unwrap_or_else(|e| panic!("{} is not whole ({e}): {s}", p.display()))
}

/// `bench` on a filesystem that fills: (1) a run whose `--output` is on
/// the filesystem, full by the time the report is written: one error line
/// naming the output and the lack of space, exit 2, and the previous
/// report left byte for byte (never half a new one); (2) a job file whose
/// first job's files would fill the filesystem so that the second's do not
/// fit: space is checked for every job before any file is written, so one
/// error line, exit 2, no file of either job, the manifest as it was, no
/// temporary file anywhere.
#[test]
fn bench_on_a_filesystem_that_fills_keeps_its_output_and_manifest_whole() {
    if !support::live() {
        return;
    }
    let lab = small_lab("faults-benchfull", 96 << 20);
    let dir = lab.mnt.join("b");
    std::fs::create_dir(&dir).unwrap();
    let job = |name: &str, jobs: &[&str]| {
        let p = lab.dir.join(name);
        let mut t = String::from(
            "[global]\ndirect = 1\nsize = \"30m\"\nbs = \"16k\"\nruntime = \"1s\"\nrw = \"randwrite\"\n",
        );
        for j in jobs {
            t.push_str(&format!("\n[[job]]\nname = \"{j}\"\n"));
        }
        std::fs::write(&p, t).unwrap();
        p
    };
    let one = job("one.toml", &["a"]);
    let output = lab.mnt.join("bench.json");
    let first = bench_json(&dir, &one, &output);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let report = std::fs::read(&output).unwrap();
    let files = manifest(&dir);

    // (1) Full by the time the report is written (the run reuses its file).
    let filler = support::fill(&lab.mnt, "filler");
    let out = bench_json(&dir, &one, &output);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let errors = error_lines(&err);
    assert_eq!(errors.len(), 1, "{err}");
    assert!(
        errors[0].contains(&format!(
            "no space left to write --output {}",
            output.display()
        )),
        "{err}"
    );
    assert!(errors[0].contains("left as it was"), "{err}");
    assert_eq!(
        std::fs::read(&output).unwrap(),
        report,
        "the report changed"
    );
    assert_eq!(manifest(&dir), files);
    no_temporaries(&lab.mnt);

    // (2) The first job's layout would fill what is left; the second's
    // would not fit: refused before either is written.
    std::fs::remove_file(&filler).unwrap();
    let two = job("two.toml", &["c", "d"]);
    let out = bench_json(&dir, &two, &lab.dir.join("two.json"));
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let errors = error_lines(&err);
    assert_eq!(errors.len(), 1, "{err}");
    assert!(errors[0].contains("not enough space in"), "{err}");
    assert!(errors[0].contains("files of this run need"), "{err}");
    assert_eq!(manifest(&dir), files, "the manifest as it was");
    for f in ["innotune-c.0", "innotune-d.0"] {
        assert!(
            !dir.join(f).exists(),
            "{f} written although the run was refused"
        );
    }
    no_temporaries(&lab.mnt);
}

/// `tune --quick` on a filesystem with room for its sweep but not for its
/// two OLTP sandboxes: the OLTP phase fails in one warning line that
/// names the lack of space; the report (outside the filesystem) keeps
/// probe, check and the sweep; everything is put back, no server left.
#[test]
fn tune_on_a_filesystem_too_small_for_its_sandboxes_keeps_the_rest() {
    if !support::live() {
        return;
    }
    let _one = heavy();
    let lab = Lab::new(LabOpts {
        tag: "faults-tunefull",
        base: RAM,
        size: 512 << 20,
        scheduler: "kyber",
        ..LabOpts::default()
    });
    // Room for the sweep's files (256 MiB at this budget; a quick tune lays out 64 MiB per
    // workload, one to three of them), not for two servers (each takes
    // about 130 MiB: redo log, system tablespace, tables).
    let st = rustix::fs::statvfs(&lab.mnt).unwrap();
    let free = st.f_bavail * st.f_frsize;
    let keep = 300u64 << 20;
    let f = std::fs::File::create(lab.mnt.join("filler")).unwrap();
    rustix::fs::fallocate(&f, rustix::fs::FallocateFlags::empty(), 0, free - keep).unwrap();
    f.sync_all().unwrap();
    let state = tempfile::tempdir().unwrap();
    let out_dir = lab.dir.join("report");
    // The "live" server: a sandbox of our own with an 8 MiB pool and data
    // several times it, so check advises a larger pool and the before and
    // after sandboxes differ (against the server at 3306 the OLTP phase is
    // skipped as "after differs only in logging", and nothing would fill).
    let live = tempfile::tempdir().unwrap();
    let planted = support::Planted::start(live.path(), live.path());
    planted.load(2, 60_000);
    let out = support::innotune_in(state.path())
        .args(["tune", "--budget", "120s", "--threads", "8", "--seed", "3"])
        .arg(&lab.mnt)
        .args(planted.sock_args())
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(error_lines(&err).is_empty(), "{err}");
    let warned: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("innotune: warning: tune: the oltp phase failed: "))
        .collect();
    assert_eq!(warned.len(), 1, "{err}");
    assert!(warned[0].contains("free space"), "{err}");
    let tune: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("tune.json")).unwrap()).unwrap();
    let r = &tune["result"];
    let status = |name: &str| {
        r["phases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .map(|p| p["status"].clone())
    };
    assert_eq!(status("oltp"), Some("failed".into()), "{r:#}");
    for p in ["probe", "check", "sweep", "report"] {
        assert_eq!(status(p), Some("done".into()), "{p}: {r:#}");
    }
    for f in [
        "probe.json",
        "check.json",
        "sweep.json",
        "summary.md",
        "report.html",
    ] {
        assert!(out_dir.join(f).exists(), "{f} not written");
    }
    assert_lab_restored(&lab, "kyber", state.path());
    no_temporaries(&lab.mnt);
}

/// Reads completed on block device `name` so far (/proc/diskstats).
fn reads_completed(name: &str) -> u64 {
    std::fs::read_to_string("/proc/diskstats")
        .unwrap()
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.get(2) == Some(&name)).then(|| f[3].parse().unwrap())
        })
        .unwrap_or_else(|| panic!("{name} not in /proc/diskstats"))
}

/// `innotune trace` with a tiny per-CPU buffer (4 KiB) on a loop device
/// under a heavy random-read load: the kernel overwrites events before
/// they are read. The loss is counted (the per-CPU `overrun`/`dropped
/// events` counters, at least what the pages' headers flag), carried in
/// JSON (`lines.lost_events`, `lines.overrun`, `lines.dropped`, a note,
/// the envelope's warnings), warned about on stderr naming --buffer-kb,
/// and shown in the text report; never silently missing. The instance is
/// gone afterwards.
#[test]
fn trace_buffer_overrun_is_counted_warned_and_reported() {
    if !support::live() {
        return;
    }
    let _one = heavy();
    let lab = small_lab("faults-overrun", 1 << 30);
    let dir = lab.mnt.join("b");
    std::fs::create_dir(&dir).unwrap();
    let mut load = support::innotune_sys()
        .args(["bench", "--name", "load", "--rw", "randread", "--bs", "4k"])
        .args([
            "--iodepth",
            "32",
            "--size",
            "128m",
            "--direct=1",
            "--runtime",
            "600s",
        ])
        .arg("--directory")
        .arg(&dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .start();
    let r0 = reads_completed(lab.name());
    support::wait_for("the load's first 20,000 reads", support::WAIT, || {
        reads_completed(lab.name()) > r0 + 20_000
    });
    let state = tempfile::tempdir().unwrap();
    let trace = |format: &str| {
        support::innotune_in(state.path())
            .args(["trace", "--device", lab.name(), "--duration", "2s"])
            .args(["--buffer-kb", "4", "--format", format])
            .output()
            .unwrap()
    };
    let out = trace("json");
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let l = &v["result"]["lines"];
    let n = |k: &str| l[k].as_u64().unwrap_or_else(|| panic!("no lines.{k}: {l}"));
    assert!(
        n("overrun") + n("dropped") > 0,
        "no loss counted under load: {l}"
    );
    assert!(n("lost_events") >= n("overrun") + n("dropped"), "{l}");
    assert!(n("events") > 0, "{l}");
    let lost = n("lost_events");
    let said = format!("the kernel lost {lost} ");
    let warned: Vec<&str> = err
        .lines()
        .filter(|w| w.starts_with("innotune: warning: ") && w.contains(&said))
        .collect();
    assert_eq!(warned.len(), 1, "{err}");
    assert!(warned[0].contains("--buffer-kb"), "{err}");
    assert!(
        v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains(&said)),
        "{v:#}"
    );
    assert!(
        v["result"]["notes"].as_array().unwrap().iter().any(|w| w
            .as_str()
            .unwrap()
            .contains(&format!("dropped {lost} events"))),
        "{v:#}"
    );

    let out = trace("text");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    assert!(
        report
            .lines()
            .any(|l| l.contains("Lost") && l.contains("events")),
        "{report}"
    );
    load.signal(libc::SIGINT);
    load.wait_within(support::WAIT);
    // No instance of an innotune that is gone (other runs may trace now).
    let orphans: Vec<String> = std::fs::read_dir("/sys/kernel/tracing/instances")
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| {
                    n.strip_prefix("innotune-")
                        .and_then(|p| p.parse::<u32>().ok())
                        .is_some_and(|p| support::host::start_ticks(p).is_none())
                })
                .collect()
        })
        .unwrap_or_default();
    assert!(orphans.is_empty(), "trace instances left: {orphans:?}");
    assert!(!state.path().join("journal.json").exists());
}
