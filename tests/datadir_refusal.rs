//! Issue 11, item 2, with a real server run by a real unprivileged user.
//!
//! `nobody` starts a throwaway sandbox (a real mariadbd whose datadir
//! `nobody` created and owns, as the mysql user owns /var/lib/mysql) and
//! plants a few directories inside it. Root's `sandbox start --dir`,
//! `bench --directory` (also with --allow-datadir) and sweep's work
//! directory are then refused at, inside (subdirectories at any depth) and
//! around that datadir, each with one error line naming the datadir and
//! the server's pid, and nothing is created there. A datadir that only the
//! server option files name (no server running) is refused the same way;
//! those option files are read from a replayed host tree (`--root`), so
//! the host's own /etc and its server at 3306 are never touched.

mod support;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::sh_as_nobody;

const NOBODY: u32 = 65534;

fn innotune(state: &Path) -> Command {
    let mut c = support::innotune_sys();
    c.env("INNOTUNE_STATE_DIR", state).env("NO_COLOR", "1");
    c
}

/// Run `innotune ARGS` as `nobody`; the output.
fn as_nobody(state: &Path, args: &[&str]) -> Output {
    Command::new("runuser")
        .args(["-u", "nobody", "--"])
        .arg(support::bin::INNOTUNE)
        .args(args)
        .env("INNOTUNE_STATE_DIR", state)
        .output()
        .unwrap()
}

/// A directory under /tmp owned by `nobody` (0755), removed on drop.
fn nobody_dir(prefix: &str) -> tempfile::TempDir {
    let t = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in("/tmp")
        .unwrap();
    std::os::unix::fs::chown(t.path(), Some(NOBODY), Some(NOBODY)).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    t
}

/// A sandbox `nobody` started with the innotune CLI; stopped (as nobody)
/// and removed on drop, also when an assertion failed.
struct NobodyServer {
    dir: PathBuf,
    state: tempfile::TempDir,
    pid: u64,
    // Last: removed after the server has stopped.
    parent: tempfile::TempDir,
}

impl NobodyServer {
    fn start() -> NobodyServer {
        let parent = nobody_dir("itdd");
        let state = tempfile::tempdir().unwrap();
        let dir = parent.path().join("sb");
        let out = as_nobody(
            state.path(),
            &["sandbox", "start", "--dir", dir.to_str().unwrap()],
        );
        let mut s = NobodyServer {
            dir,
            state,
            pid: 0,
            parent,
        };
        assert!(
            out.status.success(),
            "nobody's sandbox start: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let st: Value =
            serde_json::from_slice(&std::fs::read(s.dir.join("innotune-sandbox.json")).unwrap())
                .unwrap();
        s.pid = st["pid"].as_u64().unwrap();
        use std::os::unix::fs::MetadataExt;
        let owner = std::fs::metadata(format!("/proc/{}", s.pid)).unwrap().uid();
        assert_eq!(owner, NOBODY, "the server runs as nobody");
        s
    }
    fn datadir(&self) -> PathBuf {
        self.dir.join("data")
    }
}

impl Drop for NobodyServer {
    fn drop(&mut self) {
        let _ = as_nobody(
            self.state.path(),
            &["sandbox", "stop", "--dir", self.dir.to_str().unwrap()],
        );
        let _ = self.parent.path();
    }
}

/// Every path under `dir` (names only), to show nothing was created.
fn tree(dir: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                todo.push(p.clone());
            }
            out.insert(p);
        }
    }
    out
}

/// Expect exit 2 and exactly one stderr line, which contains every needle.
fn refused(out: Output, what: &str, needles: &[&str]) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{what}: not one line: {err}"
    );
    assert!(err.starts_with("innotune: error: "), "{what}: {err}");
    for n in needles {
        assert!(err.contains(n), "{what}: no {n:?} in {err}");
    }
    assert!(err.contains("fix:"), "{what}: {err}");
}

/// Bench arguments that would write 1 MiB into `dir`.
fn bench_args(dir: &Path) -> Vec<String> {
    ["bench", "--rw", "write", "--size", "1m", "--io_size", "64k"]
        .iter()
        .map(|s| s.to_string())
        .chain(["--directory".into(), dir.display().to_string()])
        .collect()
}

/// Sweep arguments whose budget is too small for any sweep: a refusal
/// that came too late would fail on that instead, with nothing switched.
fn sweep_args(dir: &Path) -> Vec<String> {
    vec![
        "sweep".into(),
        dir.display().to_string(),
        "--schedulers".into(),
        "none,none".into(),
        "--budget".into(),
        "5s".into(),
    ]
}

#[test]
fn a_datadir_of_a_server_nobody_runs_is_refused_to_root() {
    if !support::live() {
        return;
    }
    let srv = NobodyServer::start();
    let data = srv.datadir();
    let d = data.display().to_string();
    // Directories the server's user made inside its datadir, at depth.
    sh_as_nobody(&format!("mkdir -p '{d}/scratch/a/b'"));
    let deep = data.join("scratch/a/b");
    let mysql = data.join("mysql");
    let pid = format!("running server pid {}", srv.pid);
    let state = tempfile::tempdir().unwrap();
    let before = tree(srv.parent.path());

    // sandbox start --dir: inside (new and existing), the datadir itself,
    // and a directory that contains it.
    for (dir, relation) in [
        (data.join("newdb"), "is inside"),
        (deep.clone(), "is inside"),
        (data.clone(), "is"),
        (srv.parent.path().to_path_buf(), "contains"),
    ] {
        let out = innotune(state.path())
            .args(["sandbox", "start", "--dir"])
            .arg(&dir)
            .output()
            .unwrap();
        refused(
            out,
            &format!("sandbox start --dir {}", dir.display()),
            &[
                &format!("{relation} the MySQL datadir {d}"),
                &pid,
                "sandbox directory",
            ],
        );
    }

    // bench --directory: the datadir, its subdirectories at any depth,
    // and a directory containing it; --allow-datadir does not lift this.
    for (dir, relation) in [
        (data.clone(), "is"),
        (mysql.clone(), "is inside"),
        (deep.clone(), "is inside"),
        (srv.dir.clone(), "contains"),
    ] {
        for extra in [None, Some("--allow-datadir")] {
            let mut args = bench_args(&dir);
            args.extend(extra.map(String::from));
            let out = innotune(state.path()).args(&args).output().unwrap();
            refused(
                out,
                &args.join(" "),
                &[
                    "bench --directory",
                    &format!("{relation} the MySQL datadir {d}"),
                    &pid,
                ],
            );
        }
    }

    // sweep: its work directory PATH/.innotune-sweep.PID is inside the
    // datadir when PATH is the datadir or any directory in it.
    for dir in [&data, &mysql, &deep] {
        let args = sweep_args(dir);
        let out = innotune(state.path()).args(&args).output().unwrap();
        refused(
            out,
            &args.join(" "),
            &[
                "sweep's work directory",
                &format!("is inside the MySQL datadir {d}"),
                &pid,
            ],
        );
        assert!(
            !state.path().join("journal.json").exists(),
            "sweep journaled before refusing"
        );
    }

    assert_eq!(
        tree(srv.parent.path()),
        before,
        "something was created in or around the datadir"
    );
    // The server is still nobody's and still up.
    assert!(Path::new(&format!("/proc/{}", srv.pid)).exists());
}

/// No server running: the datadir the server option files name (here
/// `/etc/mysql/my.cnf` of a replayed host tree) is refused for bench and
/// sweep all the same, naming the option file and line.
#[test]
fn a_datadir_named_in_the_option_files_is_refused() {
    if !support::live() {
        return;
    }
    let owner = nobody_dir("itddopt");
    let data = owner.path().join("mysql-data");
    let d = data.display().to_string();
    sh_as_nobody(&format!("mkdir -p '{d}/shop/x'"));
    let root = tempfile::tempdir().unwrap();
    let etc = root.path().join("etc/mysql");
    std::fs::create_dir_all(&etc).unwrap();
    std::fs::write(
        etc.join("my.cnf"),
        format!("[client]\nport = 3306\n[mysqld]\nuser = mysql\ndatadir = {d}\n"),
    )
    .unwrap();
    let state = tempfile::tempdir().unwrap();
    let before = tree(owner.path());
    let r = root.path().to_str().unwrap();
    for dir in [data.clone(), data.join("shop"), data.join("shop/x")] {
        for args in [bench_args(&dir), sweep_args(&dir)] {
            let out = innotune(state.path())
                .args(["--root", r])
                .args(&args)
                .output()
                .unwrap();
            refused(
                out,
                &args.join(" "),
                &[
                    &format!("MySQL datadir {d}"),
                    "server option files (/etc/mysql/my.cnf:5)",
                ],
            );
        }
    }
    // The parent of the datadir is refused for bench (a cleanup there
    // would walk over it).
    let args = bench_args(owner.path());
    let out = innotune(state.path())
        .args(["--root", r])
        .args(&args)
        .output()
        .unwrap();
    refused(
        out,
        &args.join(" "),
        &[&format!("contains the MySQL datadir {d}")],
    );
    assert_eq!(tree(owner.path()), before, "something was created");
}
