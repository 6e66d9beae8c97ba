//! The journal end to end, through the real binary: a run SIGKILLed while
//! it holds changes of every kind is put back by `innotune restore`; a file
//! edited since is a conflict and left alone; a forged journal is refused
//! with nothing written; two concurrent runs never both hold the journal.
//!
//! Every test uses a private INNOTUNE_STATE_DIR and a host tree generated
//! by tests/fixtures/hosts/make-check-fixtures.py (real files, replayed
//! with `--root`). The server-variable change runs against a throwaway
//! sandbox server, never the one at 3306.

mod support;
use support::Start as _;

use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A generated check-planted host tree (the committed one has lost its
/// symlinks in some checkouts; the generator is the source of truth).
fn planted_tree() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let gen =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts/make-check-fixtures.py");
    let st = Command::new("python3")
        .arg(gen)
        .arg(t.path())
        .status()
        .unwrap();
    assert!(st.success());
    let root = t.path().join("check-planted");
    (t, root)
}

/// Every file under `p` (symlinks as their target), for before/after.
/// Attributes under sys/ and proc/sys/ as the kernel would show their value
/// (a plain fixture file keeps the word written back, where the kernel
/// would show the bracketed list again).
fn snapshot(p: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![p.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let ft = e.file_type().unwrap();
            let rel = e.path().strip_prefix(p).unwrap().to_path_buf();
            if ft.is_symlink() {
                let t = std::fs::read_link(e.path()).unwrap();
                out.insert(rel, format!("-> {}", t.display()).into_bytes());
            } else if ft.is_dir() {
                out.insert(rel, b"<dir>".to_vec());
                stack.push(e.path());
            } else if rel.starts_with("sys") || rel.starts_with("proc/sys") {
                let text = std::fs::read_to_string(e.path()).unwrap();
                let v = innotune::change::sysfs::norm(&rel, &text);
                out.insert(rel, v.into_bytes());
            } else {
                out.insert(rel, std::fs::read(e.path()).unwrap());
            }
        }
    }
    out
}

/// What differs between two snapshots, one line per path.
fn diff(a: &BTreeMap<PathBuf, Vec<u8>>, b: &BTreeMap<PathBuf, Vec<u8>>) -> Vec<String> {
    let mut out = Vec::new();
    for k in a.keys().chain(b.keys().filter(|k| !a.contains_key(*k))) {
        let (x, y) = (a.get(k), b.get(k));
        if x != y {
            let show = |v: Option<&Vec<u8>>| v.map(|v| String::from_utf8_lossy(v).into_owned());
            out.push(format!("{}: {:?} → {:?}", k.display(), show(x), show(y)));
        }
    }
    out
}

fn innotune(state: &Path) -> Command {
    let mut c = support::innotune_sys();
    c.env("INNOTUNE_STATE_DIR", state).env("NO_COLOR", "1");
    c
}

fn restore(state: &Path, extra: &[&str]) -> (i32, Value, String) {
    let o = innotune(state)
        .args(["--format", "json", "restore"])
        .args(extra)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (
        o.status.code().unwrap_or(-1),
        v,
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn outcomes(v: &Value) -> BTreeMap<String, String> {
    v["result"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                format!(
                    "{} {}",
                    e["kind"].as_str().unwrap(),
                    e["path"].as_str().unwrap()
                ),
                e["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// `innotune apply --yes` on `root`, pausing (until killed) after `n`
/// changes: a real innotune process that holds the journal.
fn apply_paused(state: &Path, root: &Path, n: usize) -> support::Spawned {
    innotune(state)
        .env("INNOTUNE_APPLY_PAUSE_AFTER", n.to_string())
        .arg("--root")
        .arg(root)
        .args(["apply", "/var/lib/mysql", "--yes"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .start()
}

/// Read `child`'s stderr until the pause line; false if it ended first.
fn wait_paused(child: &mut support::Spawned) -> (bool, String) {
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut all = String::new();
    let mut line = String::new();
    loop {
        line.clear();
        if err.read_line(&mut line).unwrap() == 0 {
            return (false, all);
        }
        all.push_str(&line);
        if line.contains("paused after") {
            return (true, all);
        }
    }
}

fn journal_kinds(state: &Path) -> Vec<String> {
    let j: Value =
        serde_json::from_str(&std::fs::read_to_string(state.join("journal.json")).unwrap())
            .unwrap();
    j["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["change"]["kind"].as_str().unwrap().to_string())
        .collect()
}

/// The plan's applicable steps on `root` (pending and not blocked).
fn applicable(state: &Path, root: &Path) -> usize {
    let o = innotune(state)
        .arg("--root")
        .arg(root)
        .args(["--format", "json", "apply", "/var/lib/mysql"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["result"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["pending"] == true && s["blocked"].is_null())
        .count()
}

#[test]
fn sigkill_mid_apply_then_restore_returns_every_value_and_keeps_an_edited_file() {
    let state = tempfile::tempdir().unwrap();
    let (_t, root) = planted_tree();
    // An earlier innotune's drop-in: rewriting it is an edit (original
    // bytes kept), not a creation.
    let earlier = root.join("etc/sysctl.d/99-innotune.conf");
    std::fs::write(
        &earlier,
        "# Managed by innotune\n# an earlier version\nvm.dirty_ratio = 30\n",
    )
    .unwrap();
    let before = snapshot(&root);
    let n = applicable(state.path(), &root);
    assert!(n >= 5, "{n}");
    let mut child = apply_paused(state.path(), &root, n);
    let (paused, err) = wait_paused(&mut child);
    assert!(paused, "apply ended before pausing: {err}");
    let kinds = journal_kinds(state.path());
    for k in ["sysfs", "sysctl", "file", "file_edit"] {
        assert!(kinds.iter().any(|x| x == k), "no {k} in {kinds:?}");
    }
    assert!(
        !diff(&before, &snapshot(&root)).is_empty(),
        "the run changed the tree"
    );
    child.kill().unwrap(); // SIGKILL: no destructor, no signal handler
    child.wait_within(support::WAIT);
    let jp = state.path().join("journal.json");
    assert!(jp.exists(), "a SIGKILLed run leaves its journal");
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&jp).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    // Someone edits a file innotune created after the crash.
    let rules = root.join("etc/udev/rules.d/99-innotune.rules");
    let mut edited = std::fs::read_to_string(&rules).unwrap();
    edited.push_str("# local change\n");
    std::fs::write(&rules, &edited).unwrap();

    // --dry-run lists, changes nothing, and never prints file contents.
    let mid = snapshot(&root);
    for fmt in ["json", "text"] {
        let o = innotune(state.path())
            .args(["--format", fmt, "restore", "--dry-run"])
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{out}");
        for secret in [
            "Managed by innotune",
            "vm.dirty_ratio",
            "local change",
            "ACTION==",
        ] {
            assert!(
                !out.contains(secret),
                "{fmt} dry run shows contents ({secret}):\n{out}"
            );
        }
    }
    assert_eq!(
        diff(&mid, &snapshot(&root)),
        Vec::<String>::new(),
        "dry run wrote"
    );

    let (code, v, err) = restore(state.path(), &[]);
    assert_eq!(code, 0, "{v:#} {err}");
    let oc = outcomes(&v);
    // Paths as written: under the tree apply --root changed.
    let rules_key = format!(
        "file {}",
        root.join("etc/udev/rules.d/99-innotune.rules").display()
    );
    assert_eq!(
        oc.get(&rules_key).map(String::as_str),
        Some("conflict"),
        "{oc:#?}"
    );
    assert_eq!(
        oc.get(&format!(
            "file_edit {}",
            root.join("etc/sysctl.d/99-innotune.conf").display()
        ))
        .map(String::as_str),
        Some("restored")
    );
    assert!(
        oc.values()
            .all(|o| o == "restored" || o == "removed" || o == "conflict"),
        "{oc:#?}"
    );
    // Every value is back, except the file someone edited: left as they left it.
    let mut after = snapshot(&root);
    assert_eq!(
        after
            .remove(Path::new("etc/udev/rules.d/99-innotune.rules"))
            .unwrap(),
        edited.into_bytes()
    );
    assert_eq!(diff(&before, &after), Vec::<String>::new());
    assert!(!jp.exists());
}

#[test]
fn a_second_concurrent_run_is_always_refused() {
    let state = tempfile::tempdir().unwrap();
    let (_t, root) = planted_tree();
    let before = snapshot(&root);
    for i in 0..50 {
        // Both start at once; whichever takes the lock pauses holding it.
        let kids = [
            apply_paused(state.path(), &root, 1),
            apply_paused(state.path(), &root, 1),
        ];
        let (tx, rx) = std::sync::mpsc::channel();
        let mut kids: Vec<support::Spawned> = kids.into_iter().collect();
        for (k, c) in kids.iter_mut().enumerate() {
            let err = c.stderr.take().unwrap();
            let tx = tx.clone();
            std::thread::spawn(move || {
                let mut text = String::new();
                for line in BufReader::new(err).lines() {
                    let line = line.unwrap();
                    let paused = line.contains("paused after");
                    text.push_str(&line);
                    text.push('\n');
                    if paused {
                        let _ = tx.send((k, true, text.clone()));
                    }
                }
                let _ = tx.send((k, false, text));
            });
        }
        let mut winner = None;
        let mut loser = None;
        while winner.is_none() || loser.is_none() {
            let (k, paused, text) = rx.recv().unwrap();
            if paused {
                assert!(
                    winner.is_none(),
                    "iteration {i}: both runs hold the journal"
                );
                winner = Some(k);
            } else if winner != Some(k) {
                loser = Some((k, text));
            }
        }
        let (l, text) = loser.unwrap();
        let w = winner.unwrap();
        let status = kids[l].wait_within(support::WAIT);
        assert_eq!(status.code(), Some(2), "iteration {i}: {text}");
        assert_eq!(text.lines().count(), 1, "iteration {i}: one line: {text}");
        assert!(
            text.contains("another innotune run"),
            "iteration {i}: {text}"
        );
        kids[w].kill().unwrap();
        kids[w].wait_within(support::WAIT);
        let (code, v, err) = restore(state.path(), &[]);
        assert_eq!(code, 0, "iteration {i}: {v:#} {err}");
    }
    assert_eq!(diff(&before, &snapshot(&root)), Vec::<String>::new());
}

#[test]
fn a_forged_entry_is_refused_and_nothing_is_written() {
    let state = tempfile::tempdir().unwrap();
    let (_t, root) = planted_tree();
    let sched = "/sys/block/nvme1n1/queue/scheduler";
    std::fs::write(root.join(&sched[1..]), "none\n").unwrap();
    let legit = serde_json::json!({"kind": "change", "id": 1, "change": {
        "kind": "sysfs", "path": sched, "value": "none", "label": "x",
        "original": "mq-deadline", "root": root}});
    let victim = root.join("etc/hostname");
    std::fs::write(&victim, "db1\n").unwrap();
    let home = root.join("home/user");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("notes"), "mine\n").unwrap();
    let sha = |b: &[u8]| innotune::change::sha256_hex(b);
    let forged = [
        serde_json::json!({"kind": "sysfs", "path": "/etc/hostname", "value": "x", "label": "x", "original": "pwned", "root": root}),
        serde_json::json!({"kind": "sysfs", "path": "/sys/block/../../etc/hostname", "value": "x", "label": "x", "original": "pwned", "root": root}),
        serde_json::json!({"kind": "sysctl", "name": "../../etc/hostname", "value": "x", "original": "pwned", "root": root}),
        serde_json::json!({"kind": "file", "path": "/etc/hostname", "content": "db1\n", "written_sha256": sha(b"db1\n"), "root": root}),
        serde_json::json!({"kind": "file_edit", "path": "/etc/hostname", "content": "db1\n", "original_hex": "70776e65640a", "original_sha256": sha(b"pwned\n"), "written_sha256": sha(b"db1\n"), "mode": 420, "root": root}),
        serde_json::json!({"kind": "dir", "path": "/home/user", "recursive": true, "root": root}),
        serde_json::json!({"kind": "dir", "path": "/home/user", "root": root}),
    ];
    let jp = state.path().join("journal.json");
    let before = snapshot(&root);
    for f in forged {
        let j = serde_json::json!({
            "version": 2,
            "owner": {"pid": 4_000_000_000u32, "command": "innotune x", "started": "2026-01-01T00:00:00Z"},
            "entries": [legit, {"kind": "change", "id": 2, "change": f}],
        });
        let text = serde_json::to_string_pretty(&j).unwrap();
        std::fs::write(&jp, &text).unwrap();
        for extra in [&[][..], &["--dry-run"][..]] {
            let (code, _, err) = restore(state.path(), extra);
            assert_eq!(code, 2, "{f}: {err}");
            assert_eq!(err.lines().count(), 1, "one line: {err}");
            assert!(err.contains("not one innotune writes"), "{err}");
        }
        assert_eq!(diff(&before, &snapshot(&root)), Vec::<String>::new(), "{f}");
        assert_eq!(
            std::fs::read_to_string(&jp).unwrap(),
            text,
            "journal untouched"
        );
    }
}

/// Issue 11, smaller ones: a journal of a format version this innotune
/// does not read used to fail on a field ("expected struct Owner"). Now
/// restore, and the pending-journal warning of every other command, say
/// the version and which innotune (and run) wrote it, and the journal is
/// left as it was.
#[test]
fn a_journal_of_an_unknown_version_names_it_and_its_writer() {
    let state = tempfile::tempdir().unwrap();
    let jp = state.path().join("journal.json");
    let future = serde_json::json!({
        "version": 7,
        "written_by": "innotune 9.1.0",
        "owner": {"pid": 4_000_000_000u32, "command": "innotune sweep /data", "started": "2030-01-01T00:00:00Z", "host": "db1"},
        "entries": [{"kind": "switch", "device": "sda"}],
    });
    let text = serde_json::to_string_pretty(&future).unwrap();
    std::fs::write(&jp, &text).unwrap();
    for extra in [&[][..], &["--dry-run"][..]] {
        let (code, _, err) = restore(state.path(), extra);
        assert_eq!(code, 2, "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
        assert!(
            err.contains("format version 7")
                && err
                    .contains("written by innotune 9.1.0, pid 4000000000: `innotune sweep /data`")
                && err.contains(concat!(
                    "innotune ",
                    env!("CARGO_PKG_VERSION"),
                    " cannot read"
                ))
                && err.contains("fix:"),
            "{err}"
        );
        assert!(!err.contains("expected"), "{err}");
    }
    // A journal with no version and no writer says so.
    let mut old = future.clone();
    old.as_object_mut().unwrap().remove("version");
    old.as_object_mut().unwrap().remove("written_by");
    std::fs::write(&jp, serde_json::to_string(&old).unwrap()).unwrap();
    let (code, _, err) = restore(state.path(), &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("has no format version")
            && err.contains("an innotune that did not record its version"),
        "{err}"
    );
    // A version of the wrong type says so, not that there is none (issue
    // 39: `"version":"2"` said "has no format version").
    for (bad, words) in [
        (serde_json::json!("2"), "\"2\" (a string"),
        (serde_json::json!(2.5), "2.5 (not a whole number"),
        (serde_json::json!(-1), "-1 (not a whole number"),
        (serde_json::json!([2]), "[2] (an array"),
    ] {
        let mut odd = future.clone();
        odd["version"] = bad;
        std::fs::write(&jp, serde_json::to_string(&odd).unwrap()).unwrap();
        let (code, _, err) = restore(state.path(), &[]);
        assert_eq!(code, 2, "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
        assert!(
            err.contains(&format!("has an unsupported format version field {words}"))
                && !err.contains("no format version")
                && err.contains("fix:"),
            "{err}"
        );
    }
    // Any other command warns with the same words (and goes on).
    std::fs::write(&jp, &text).unwrap();
    let o = innotune(state.path())
        .args(["checksum", "/nonexistent/x.ibd"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.lines()
            .any(|l| l.starts_with("innotune: warning:") && l.contains("format version 7")),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&jp).unwrap(),
        text,
        "journal untouched"
    );
}

/// The child side of `every_kind_killed_mid_run_then_restored`: runs only
/// when the parent test re-executes this binary with INNOTUNE_TEST_CHILD
/// set (a plain `cargo test` returns at once). Holds one change of every
/// kind through the library's guard, says READY, and waits to be killed.
#[test]
fn child_holding_every_kind() {
    use innotune::change::*;
    use innotune::host::Host;
    let Ok(spec) = std::env::var("INNOTUNE_TEST_CHILD") else {
        return;
    };
    let v: Value = serde_json::from_str(&spec).unwrap();
    let p = |k: &str| PathBuf::from(v[k].as_str().unwrap());
    let tree = Host::with_root(p("root"));
    let live = Host::live();
    let g = innotune::journal::Journal::begin("innotune test-child --password=s3cret").unwrap();
    g.apply(
        &tree,
        Box::new(SysfsAttr::scheduler("nvme1n1", "none", None)),
    )
    .unwrap();
    g.apply(&tree, Box::new(Sysctl::new("vm.swappiness", "1")))
        .unwrap();
    g.apply(
        &tree,
        Box::new(CreatedFile::new(
            "/etc/sysctl.d/99-innotune.conf",
            "vm.swappiness = 1\n".into(),
        )),
    )
    .unwrap();
    // An edit of a file an earlier innotune installed (apply edits only
    // those: they start with its marker).
    let mut edit = EditedFile::new(
        "/etc/systemd/system/innotune-queues.service",
        "# Managed by innotune\n[Service]\nNice=-5\n".into(),
    );
    edit.require_prefix = Some(innotune::change::allowed::MARKER.into());
    g.apply(&tree, Box::new(edit)).unwrap();
    g.apply(
        &tree,
        Box::new(CreatedDir::new("/etc/systemd/system/mysql.service.d")),
    )
    .unwrap();
    // Real paths on the live root: a work directory and a server.
    let work = p("work");
    std::fs::create_dir(&work).unwrap();
    g.apply(&live, Box::new(CreatedDir::adopt(&work))).unwrap();
    std::fs::write(work.join("data"), "x").unwrap();
    let sb = p("server_dir");
    g.apply(&live, Box::new(ServerStarted::new(&sb))).unwrap();
    let mut cmd = Command::new("sleep");
    std::os::unix::process::CommandExt::arg0(
        &mut cmd,
        format!("--defaults-file={}", sb.join("my.cnf").display()),
    );
    cmd.arg("600");
    // Never waited for: this process is SIGKILLed holding it, and restore
    // stops it.
    let (server, spawned) = ServerStarted::spawn(&sb, cmd);
    g.apply(&live, Box::new(server)).unwrap();
    #[allow(clippy::zombie_processes)]
    let _server = spawned.child().unwrap();
    let ep = innotune::check::facts::ServerEndpoint {
        socket: Some(v["socket"].as_str().unwrap().into()),
        host: None,
        port: None,
        user: "root".into(),
        defaults_file: None,
        no_defaults: true,
    };
    g.apply(
        &live,
        Box::new(ServerVariable::new(
            &ep,
            "innodb_io_capacity",
            "1234",
            false,
        )),
    )
    .unwrap();
    println!("READY");
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).unwrap();
    panic!("the parent kills this process; it never gets here");
}

#[test]
fn every_kind_killed_mid_run_then_restored() {
    use innotune::sandbox::{Sandbox, SandboxOpts};
    use mysql::prelude::Queryable;
    let state = tempfile::tempdir().unwrap();
    let (t, root) = planted_tree();
    std::fs::write(
        root.join("etc/systemd/system/innotune-queues.service"),
        "# Managed by innotune\n[Unit]\n",
    )
    .unwrap();
    let before = snapshot(&root);
    let sbdir = tempfile::Builder::new()
        .prefix("itjrn")
        .tempdir_in("/tmp")
        .unwrap();
    let sb = Sandbox::start(SandboxOpts::new(sbdir.path().join("sb")))
        .unwrap_or_else(|e| panic!("sandbox: {e:#}"));
    let var = || -> String {
        let mut c = sb.conn_spec().connect().unwrap();
        let r: Option<(String, String)> = c
            .query_first("SHOW GLOBAL VARIABLES LIKE 'innodb_io_capacity'")
            .unwrap();
        r.unwrap().1
    };
    let io_before = var();
    assert_ne!(io_before, "1234");
    let work = t.path().join(".innotune-work");
    let fake = t.path().join("fake-server");
    let spec = serde_json::json!({
        "root": root, "work": work, "server_dir": fake, "socket": sb.socket(),
    });
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_holding_every_kind",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("INNOTUNE_TEST_CHILD", spec.to_string())
        .env("INNOTUNE_STATE_DIR", state.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .start();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "child ended before READY"
        );
        // libtest prints `test NAME ... ` before the test's own output.
        if line.trim_end().ends_with("READY") {
            break;
        }
    }
    let mut kinds = journal_kinds(state.path());
    kinds.sort();
    assert_eq!(
        kinds,
        [
            "dir",
            "dir",
            "file",
            "file_edit",
            // Journaled before initialising, and with its pid at spawn.
            "server",
            "server",
            "server_variable",
            "sysctl",
            "sysfs"
        ]
    );
    let jtext = std::fs::read_to_string(state.path().join("journal.json")).unwrap();
    assert!(
        !jtext.contains("s3cret") && jtext.contains("--password=***"),
        "{jtext}"
    );
    let j: Value = serde_json::from_str(&jtext).unwrap();
    let server_pid = j["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|e| e["change"]["pid"].as_u64())
        .unwrap() as u32;
    assert_eq!(var(), "1234");
    child.kill().unwrap();
    child.wait_within(support::WAIT);

    let (code, v, err) = restore(state.path(), &[]);
    assert_eq!(code, 0, "{v:#} {err}");
    // The server entry with the pid stops it (undone first, the newer);
    // the one journaled before it existed then finds it gone.
    let mut servers: Vec<&str> = v["result"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "server")
        .map(|e| e["outcome"].as_str().unwrap())
        .collect();
    servers.sort();
    assert_eq!(servers, ["gone", "stopped"], "{v:#}");
    let oc = outcomes(&v);
    assert_eq!(oc.len(), 8, "{oc:#?}");
    for (k, o) in &oc {
        let want: &[&str] = match k.split(' ').next().unwrap() {
            "server" => &["stopped"],
            "file" | "dir" => &["removed"],
            _ => &["restored"],
        };
        assert!(want.contains(&o.as_str()), "{k}: {o}");
    }
    assert_eq!(var(), io_before);
    assert_eq!(diff(&before, &snapshot(&root)), Vec::<String>::new());
    assert!(!work.exists());
    assert!(
        innotune::journal::process_start_ticks(server_pid).is_none(),
        "fake server still runs"
    );
    assert!(!state.path().join("journal.json").exists());
}
