//! Issue 39, item 4: `innotune restore` undoes only entries innotune
//! could have written, from a journal only the running user could have
//! written.
//!
//! Every entry field is checked against what innotune writes: sysctls
//! from the list the rules may set, server variables from the list the
//! rules may change and at an endpoint the run recorded, file edits only
//! at the paths apply's emitters target, a `root` only `/` or a `--root`
//! the run recorded (and never followed out of through a symlink). The
//! journal and its state directory must be the running user's and not
//! writable by others.
//!
//! The "victims" are files this test creates (root-owned, in its own temp
//! directories) and a throwaway sandbox server it starts; the one real
//! sysctl is only ever listed (`--dry-run`). Planting runs as `nobody`.

mod support;
use mysql::prelude::Queryable;
use serde_json::{json, Value};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use support::sh_as_nobody;

const NOBODY: u32 = 65534;

fn innotune(state: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_innotune"));
    c.env("INNOTUNE_STATE_DIR", state).env("NO_COLOR", "1");
    c
}

fn restore(state: &Path, extra: &[&str]) -> (i32, Value, String) {
    let o = innotune(state)
        .args(["--format", "json", "restore"])
        .args(extra)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        serde_json::from_slice(&o.stdout).unwrap_or(Value::Null),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn tmp(mode: u32) -> tempfile::TempDir {
    let t = tempfile::Builder::new()
        .prefix("itrt")
        .tempdir_in("/tmp")
        .unwrap();
    chmod(t.path(), mode);
    t
}

fn journal(entries: &[Value], scope: Value) -> String {
    let entries: Vec<Value> = entries
        .iter()
        .enumerate()
        .map(|(i, c)| json!({"kind": "change", "id": i + 1, "change": c}))
        .collect();
    serde_json::to_string_pretty(&json!({
        "version": 2,
        "owner": {"pid": 4_000_000_000u32, "command": "innotune apply --yes", "started": "2026-01-01T00:00:00Z"},
        "scope": scope,
        "entries": entries,
    }))
    .unwrap()
}

fn sha(b: &[u8]) -> String {
    innotune::change::sha256_hex(b)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A root-owned replayed host tree holding one scheduler and one sysctl.
fn tree(parent: &Path) -> PathBuf {
    let f = parent.join("tree");
    std::fs::create_dir_all(f.join("sys/block/sda/queue")).unwrap();
    std::fs::create_dir_all(f.join("proc/sys/kernel")).unwrap();
    std::fs::write(f.join("sys/block/sda/queue/scheduler"), "none\n").unwrap();
    std::fs::write(f.join("proc/sys/kernel/core_pattern"), "core\n").unwrap();
    f
}

fn var(sb: &support::TestServer, name: &str) -> String {
    let r: Option<(String, String)> = sb
        .conn()
        .query_first(format!("SHOW GLOBAL VARIABLES LIKE '{name}'"))
        .unwrap();
    r.unwrap().1
}

/// Forged entries of every kind the issue found accepted are refused
/// (exit 2, one line, nothing written, journal untouched); the legitimate
/// server-variable entry at a recorded endpoint still restores.
#[test]
fn entries_innotune_could_not_have_written_are_refused() {
    let state = tempfile::tempdir().unwrap();
    let t = tmp(0o755);
    let victim = t.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    chmod(&victim, 0o600);
    let f = tree(t.path());
    // nobody's tree: its scheduler is a symlink to root's victim.
    let evil = t.path().join("evil");
    std::fs::create_dir(&evil).unwrap();
    std::os::unix::fs::chown(&evil, Some(NOBODY), Some(NOBODY)).unwrap();
    sh_as_nobody(&format!(
        "mkdir -p {e}/sys/block/sda/queue && ln -s {v} {e}/sys/block/sda/queue/scheduler",
        e = evil.display(),
        v = victim.display()
    ));
    // A *.cnf innotune never emits, holding what the forged entry says
    // innotune wrote.
    let cnf = t.path().join("x.cnf");
    std::fs::write(&cnf, "# Managed by innotune\n[mysqld]\n").unwrap();
    let sb = support::server();
    let ep = json!({"socket": sb.socket(), "user": "root", "no_defaults": true});
    let io_before = var(&sb, "innodb_io_capacity");
    let log_file_before = var(&sb, "general_log_file");
    let recorded = json!({"roots": [f], "endpoints": [ep]});

    let sysfs = |root: &Path| {
        json!({"kind": "sysfs", "path": "/sys/block/sda/queue/scheduler", "value": "none",
               "label": "sda scheduler", "original": "pwned", "root": root})
    };
    let cases: Vec<(&str, Vec<Value>, Value)> = vec![
        (
            "sysfs root not recorded",
            vec![sysfs(&evil)],
            recorded.clone(),
        ),
        (
            "sysfs root recorded, but another user's symlink leads out of it",
            vec![sysfs(&evil)],
            json!({"roots": [evil]}),
        ),
        (
            "file_edit of a *.cnf innotune never emits",
            vec![
                json!({"kind": "file_edit", "path": cnf, "content": "# Managed by innotune\n[mysqld]\n",
                        "require_prefix": "# Managed by innotune",
                        "original_hex": hex(b"# Managed by innotune\npwned\n"),
                        "original_sha256": sha(b"# Managed by innotune\npwned\n"),
                        "written_sha256": sha(b"# Managed by innotune\n[mysqld]\n"),
                        "mode": 420, "root": "/"}),
            ],
            recorded.clone(),
        ),
        (
            "sysctl no rule sets (kernel.core_pattern), on a recorded tree",
            vec![
                json!({"kind": "sysctl", "name": "kernel.core_pattern", "value": "core",
                        "original": "|/tmp/evil.sh %p", "root": f}),
            ],
            recorded.clone(),
        ),
        (
            "server variables no rule changes",
            vec![
                json!({"kind": "server_variable", "endpoint": ep, "name": "general_log_file",
                       "value": log_file_before, "persist": false, "original": t.path().join("evil.log")}),
                json!({"kind": "server_variable", "endpoint": ep, "name": "general_log",
                       "value": "OFF", "persist": false, "original": "ON"}),
            ],
            recorded.clone(),
        ),
        (
            "a server variable at an endpoint the run did not record",
            vec![
                json!({"kind": "server_variable", "endpoint": ep, "name": "innodb_io_capacity",
                        "value": io_before, "persist": false, "original": "4321"}),
            ],
            json!({"roots": [f]}),
        ),
        (
            "a remount of the root filesystem",
            vec![
                json!({"kind": "remount", "mount_point": "/", "option": "noatime",
                        "original": "strictatime", "maj_min": "254:1"}),
            ],
            recorded.clone(),
        ),
        (
            "a remount to an option innotune never sets (ro)",
            vec![
                json!({"kind": "remount", "mount_point": t.path(), "option": "noatime",
                        "original": "ro", "maj_min": "7:0"}),
            ],
            recorded.clone(),
        ),
    ];
    // The root filesystem's mount options, which no case may change.
    let root_options = || {
        std::fs::read_to_string("/proc/self/mountinfo")
            .unwrap()
            .lines()
            .find(|l| l.split(' ').nth(4) == Some("/"))
            .and_then(|l| l.split(' ').nth(5).map(String::from))
            .unwrap()
    };
    let root_before = root_options();
    let jp = state.path().join("journal.json");
    // Each case on its own: what it did is put back before the next, and
    // every failing case is named at the end.
    let mut failed: Vec<String> = Vec::new();
    for (case, entries, scope) in cases {
        let text = journal(&entries, scope);
        std::fs::write(&jp, &text).unwrap();
        for extra in [&[][..], &["--dry-run"][..]] {
            let (code, v, err) = restore(state.path(), extra);
            if code != 2
                || err.trim_end().lines().count() != 1
                || !err.contains("not one innotune writes")
            {
                failed.push(format!(
                    "{case} {extra:?}: exit {code}: {err} {}",
                    v["result"]["entries"]
                ));
            }
        }
        let mut check = |what: &str, now: String, want: &str| {
            if now != want {
                failed.push(format!("{case}: {what} is now {now:?}"));
            }
        };
        check(
            "the journal",
            std::fs::read_to_string(&jp).unwrap_or_default(),
            &text,
        );
        check(
            "victim",
            std::fs::read_to_string(&victim).unwrap(),
            "precious\n",
        );
        check(
            "x.cnf",
            std::fs::read_to_string(&cnf).unwrap(),
            "# Managed by innotune\n[mysqld]\n",
        );
        check(
            "the tree's core_pattern",
            std::fs::read_to_string(f.join("proc/sys/kernel/core_pattern")).unwrap(),
            "core\n",
        );
        check(
            "the root filesystem's options",
            root_options(),
            &root_before,
        );
        check("general_log", var(&sb, "general_log"), "OFF");
        check(
            "general_log_file",
            var(&sb, "general_log_file"),
            &log_file_before,
        );
        check(
            "innodb_io_capacity",
            var(&sb, "innodb_io_capacity"),
            &io_before,
        );
        // Put back whatever a failing case changed.
        std::fs::write(&victim, "precious\n").unwrap();
        std::fs::write(&cnf, "# Managed by innotune\n[mysqld]\n").unwrap();
        std::fs::write(f.join("proc/sys/kernel/core_pattern"), "core\n").unwrap();
        let mut c = sb.conn();
        c.query_drop("SET GLOBAL general_log = OFF").unwrap();
        c.query_drop(format!("SET GLOBAL general_log_file = '{log_file_before}'"))
            .unwrap();
        c.query_drop(format!("SET GLOBAL innodb_io_capacity = {io_before}"))
            .unwrap();
    }
    assert!(failed.is_empty(), "{failed:#?}");

    // The live kernel.core_pattern is only ever listed: refused too.
    let text = journal(
        &[
            json!({"kind": "sysctl", "name": "kernel.core_pattern", "value": "core",
                 "original": "|/tmp/evil.sh %p", "root": "/"}),
        ],
        json!({}),
    );
    std::fs::write(&jp, &text).unwrap();
    let (code, v, err) = restore(state.path(), &["--dry-run"]);
    assert_eq!(code, 2, "{v:#} {err}");
    assert!(err.contains("kernel.core_pattern"), "{err}");
    std::fs::remove_file(&jp).unwrap();

    // What innotune does write still restores: a rule's server variable
    // at the endpoint the run recorded.
    sb.conn()
        .query_drop("SET GLOBAL innodb_io_capacity = 1234")
        .unwrap();
    let text = journal(
        &[
            json!({"kind": "server_variable", "endpoint": ep, "name": "innodb_io_capacity",
                 "value": "1234", "persist": false, "original": io_before}),
        ],
        recorded,
    );
    std::fs::write(&jp, &text).unwrap();
    let (code, v, err) = restore(state.path(), &[]);
    assert_eq!(code, 0, "{v:#} {err}");
    assert_eq!(v["result"]["entries"][0]["outcome"], "restored", "{v:#}");
    assert_eq!(var(&sb, "innodb_io_capacity"), io_before);
}

/// A journal (or state directory) another user owns or may write is not
/// trusted: `restore` refuses it with one line and writes nothing. The
/// same journal, root's own in root's 0700 directory, restores.
#[test]
fn a_journal_or_state_directory_others_can_write_is_refused() {
    let t = tmp(0o755);
    let f = tree(t.path());
    let sched = f.join("sys/block/sda/queue/scheduler");
    let text = journal(
        &[
            json!({"kind": "sysfs", "path": "/sys/block/sda/queue/scheduler", "value": "none",
                 "label": "sda scheduler", "original": "mq-deadline", "root": f}),
        ],
        json!({"roots": [f]}),
    );
    let src = t.path().join("journal.src");
    std::fs::write(&src, &text).unwrap();
    chmod(&src, 0o644);
    let cp_as_nobody = |s: &Path| {
        sh_as_nobody(&format!(
            "cp {} {}/journal.json",
            src.display(),
            s.display()
        ))
    };
    type Plant<'a> = Box<dyn Fn(&Path) + 'a>;
    let cases: Vec<(&str, Plant)> = vec![
        (
            "nobody's journal in a world-writable directory",
            Box::new(|s: &Path| {
                chmod(s, 0o777);
                cp_as_nobody(s);
            }),
        ),
        (
            "root's journal in a world-writable directory",
            Box::new(|s: &Path| {
                chmod(s, 0o777);
                std::fs::write(s.join("journal.json"), &text).unwrap();
                chmod(&s.join("journal.json"), 0o600);
            }),
        ),
        (
            "root's journal that others may write",
            Box::new(|s: &Path| {
                chmod(s, 0o700);
                std::fs::write(s.join("journal.json"), &text).unwrap();
                chmod(&s.join("journal.json"), 0o666);
            }),
        ),
        (
            "nobody's directory and journal",
            Box::new(|s: &Path| {
                chmod(s, 0o755);
                std::os::unix::fs::chown(s, Some(NOBODY), Some(NOBODY)).unwrap();
                cp_as_nobody(s);
            }),
        ),
    ];
    let mut failed: Vec<String> = Vec::new();
    for (case, plant) in cases {
        let s = t.path().join("state");
        std::fs::create_dir(&s).unwrap();
        plant(&s);
        let (code, v, err) = restore(&s, &[]);
        if code != 2 || err.trim_end().lines().count() != 1 || !err.contains("fix:") {
            failed.push(format!(
                "{case}: exit {code}: {err} {}",
                v["result"]["entries"]
            ));
        }
        let now = std::fs::read_to_string(&sched).unwrap();
        if now != "none\n" {
            failed.push(format!("{case}: the tree's scheduler is now {now:?}"));
        }
        std::fs::write(&sched, "none\n").unwrap();
        std::fs::remove_dir_all(&s).unwrap();
    }
    assert!(failed.is_empty(), "{failed:#?}");
    let s = tempfile::tempdir().unwrap();
    std::fs::write(s.path().join("journal.json"), &text).unwrap();
    chmod(&s.path().join("journal.json"), 0o600);
    let (code, v, err) = restore(s.path(), &[]);
    assert_eq!(code, 0, "{v:#} {err}");
    assert_eq!(std::fs::read_to_string(&sched).unwrap(), "mq-deadline");
}
