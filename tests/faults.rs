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
