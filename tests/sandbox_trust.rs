//! Issue 39, items 2 and 3: a sandbox directory, its manifest
//! (`innotune-sandbox.json`) and everything in it are trusted only when
//! innotune created them for the user running it.
//!
//! The planting runs as the real unprivileged user `nobody` (`runuser`),
//! in temporary directories; the "victims" are files and directories this
//! test creates (root-owned, in its own temp dir) and a throwaway sandbox
//! server it starts, never a system file or the server at 3306. Every
//! server and process a test starts is stopped by its own pid.

mod support;
use innotune::sandbox::{Sandbox, SandboxOpts};
use mysql::prelude::Queryable;
use serde_json::{json, Value};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use support::sh_as_nobody;

const NOBODY: u32 = 65534;

fn innotune(state: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_innotune"));
    c.env("INNOTUNE_STATE_DIR", state).env("NO_COLOR", "1");
    c
}

/// A root-owned temporary directory with `mode` (0755: `nobody` may
/// enter it and use what it is given inside).
fn root_dir(mode: u32) -> tempfile::TempDir {
    let t = tempfile::Builder::new()
        .prefix("itst")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(mode)).unwrap();
    t
}

fn mkdir(p: &Path, mode: u32, owner: Option<u32>) {
    std::fs::create_dir(p).unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    if let Some(u) = owner {
        std::os::unix::fs::chown(p, Some(u), Some(u)).unwrap();
    }
}

/// Processes whose command line carries `--defaults-file=DIR/my.cnf`.
fn servers_of(dir: &Path) -> Vec<u32> {
    let want = format!("--defaults-file={}", dir.join("my.cnf").display());
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| c.split(|&b| b == 0).any(|a| a == want.as_bytes()))
                .unwrap_or(false)
        })
        .collect()
}

fn alive(pid: u32) -> bool {
    innotune::journal::process_start_ticks(pid).is_some()
}

/// Kills (by pid) any server a failed assertion left running in `dir`.
struct KillServersOf(PathBuf);
impl Drop for KillServersOf {
    fn drop(&mut self) {
        for pid in servers_of(&self.0) {
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
    }
}

/// Exit 2, exactly one line on stderr naming a fix.
fn refused(out: &Output, what: &str) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{what}: {err}");
    assert!(err.contains("fix:"), "{what}: {err}");
    err
}

fn manifest(pid: u64, socket: &Path, keep: bool) -> String {
    json!({
        "pid": pid,
        "port": 3307,
        "socket": socket,
        "server_binary": "/usr/sbin/mariadbd",
        "version": "10.11.0-MariaDB",
        "profile": "default",
        "keep": keep,
    })
    .to_string()
}

/// The victims of item 2: a root-owned config file, a log, and a
/// directory only root may enter.
struct Victims {
    cnf: PathBuf,
    log: PathBuf,
    rootonly: PathBuf,
}

impl Victims {
    fn new(t: &Path) -> Victims {
        let v = Victims {
            cnf: t.join("victim.cnf"),
            log: t.join("victim.log"),
            rootonly: t.join("rootonly"),
        };
        std::fs::write(&v.cnf, "[client]\n# root's own\n").unwrap();
        std::fs::write(&v.log, "root's log\n").unwrap();
        for f in [&v.cnf, &v.log] {
            std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        mkdir(&v.rootonly, 0o700, None);
        v
    }
    fn untouched(&self, what: &str) {
        assert_eq!(
            std::fs::read_to_string(&self.cnf).unwrap(),
            "[client]\n# root's own\n",
            "{what}: victim.cnf"
        );
        assert_eq!(
            std::fs::read_to_string(&self.log).unwrap(),
            "root's log\n",
            "{what}: victim.log"
        );
        assert_eq!(
            std::fs::read_dir(&self.rootonly).unwrap().count(),
            0,
            "{what}: something was written into the root-only directory"
        );
    }
}

/// Item 2: `sandbox start --dir D` over a "kept" sandbox someone else
/// planted (manifest, and my.cnf, error.log and data as symlinks to root's
/// files) starts nothing and writes nothing through the links: in a
/// directory `nobody` owns, in a sticky world-writable root-owned one
/// (where `nobody` may add names but not replace root's), and in a
/// world-writable one without the sticky bit.
#[test]
fn a_planted_kept_sandbox_is_refused_and_nothing_is_written_through_it() {
    let t = root_dir(0o755);
    let state = tempfile::tempdir().unwrap();
    let v = Victims::new(t.path());
    let links = |d: &Path| {
        format!(
            "ln -s {cnf} {d}/my.cnf && ln -s {log} {d}/error.log && ln -s {ro} {d}/data && mkdir {d}/tmp",
            cnf = v.cnf.display(),
            log = v.log.display(),
            ro = v.rootonly.display(),
            d = d.display()
        )
    };
    for (case, mode, owner, root_manifest) in [
        ("nobody's directory", 0o755, Some(NOBODY), false),
        ("sticky world-writable, root's manifest", 0o1777, None, true),
        ("world-writable, nobody's manifest", 0o777, None, false),
    ] {
        let d = t.path().join(format!("sb-{mode:o}"));
        let _k = KillServersOf(d.clone());
        mkdir(&d, mode, owner);
        let m = manifest(0, &d.join("mysql.sock"), true);
        if root_manifest {
            std::fs::write(d.join("innotune-sandbox.json"), &m).unwrap();
        } else {
            std::fs::write(t.path().join("m.json"), &m).unwrap();
            std::fs::set_permissions(
                t.path().join("m.json"),
                std::fs::Permissions::from_mode(0o644),
            )
            .unwrap();
            sh_as_nobody(&format!(
                "cp {} {}/innotune-sandbox.json",
                t.path().join("m.json").display(),
                d.display()
            ));
        }
        sh_as_nobody(&links(&d));
        let out = innotune(state.path())
            .args(["sandbox", "start", "--timeout", "20", "--dir"])
            .arg(&d)
            .output()
            .unwrap();
        let err = refused(&out, case);
        assert!(err.contains(&d.display().to_string()), "{case}: {err}");
        assert_eq!(
            servers_of(&d),
            Vec::<u32>::new(),
            "{case}: a server started"
        );
        v.untouched(case);
        // The planted links are still links (nothing replaced them with
        // files innotune then trusts).
        for name in ["my.cnf", "error.log", "data"] {
            assert!(
                d.join(name)
                    .symlink_metadata()
                    .unwrap()
                    .file_type()
                    .is_symlink(),
                "{case}: {name}"
            );
        }
    }
}

/// A process `nobody` runs whose command line names `dir`/my.cnf, as a
/// forged manifest's "server": `bash -c 'echo $$; exec -a … sleep'`.
struct Decoy {
    pid: u32,
    runuser: std::process::Child,
}

impl Decoy {
    fn start(dir: &Path) -> Decoy {
        let arg0 = format!("--defaults-file={}", dir.join("my.cnf").display());
        let mut runuser = Command::new("runuser")
            .args(["-u", "nobody", "--", "bash", "-c"])
            .arg(format!("echo $$; exec -a '{arg0}' sleep 600"))
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(runuser.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        let pid: u32 = line.trim().parse().unwrap();
        // exec has happened once the command line names the sandbox.
        while !servers_of(dir).contains(&pid) {
            assert!(alive(pid), "the decoy died");
            std::thread::yield_now();
        }
        Decoy { pid, runuser }
    }
}

impl Drop for Decoy {
    fn drop(&mut self) {
        unsafe { libc::kill(self.pid as i32, libc::SIGKILL) };
        let _ = self.runuser.wait();
    }
}

/// The victim server still answers over its socket.
fn answers(sb: &Sandbox) -> bool {
    sb.conn_spec()
        .connect()
        .and_then(|mut c| c.query_first::<u64, _>("SELECT 1").map_err(Into::into))
        .ok()
        .flatten()
        == Some(1)
}

/// Item 3: `sandbox stop --dir D` whose manifest names another server's
/// socket and a process whose command line names D/my.cnf stops nothing:
/// no SHUTDOWN over a socket the manifest merely names, no signal to a
/// process whose start time, executable and command line are not those
/// innotune recorded when it started the server. The forged manifest is
/// `nobody`'s (refused outright), or root's own but naming a process that
/// is not the server innotune started there (another sandbox's, copied
/// with its identity; or a decoy without one).
#[test]
fn a_forged_manifest_stops_no_other_server() {
    let t = root_dir(0o755);
    let state = tempfile::tempdir().unwrap();
    let victim_parent = root_dir(0o700);
    let victim = Sandbox::start(SandboxOpts::new(victim_parent.path().join("sb")))
        .unwrap_or_else(|e| panic!("victim sandbox: {e:#}"));
    assert!(answers(&victim));

    // nobody's directory and manifest.
    let d = t.path().join("forged");
    mkdir(&d, 0o755, Some(NOBODY));
    let decoy = Decoy::start(&d);
    std::fs::write(
        t.path().join("m.json"),
        manifest(decoy.pid.into(), victim.socket(), false),
    )
    .unwrap();
    std::fs::set_permissions(
        t.path().join("m.json"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    sh_as_nobody(&format!(
        "cp {} {d}/innotune-sandbox.json && touch {d}/my.cnf",
        t.path().join("m.json").display(),
        d = d.display()
    ));
    for action in ["stop", "status"] {
        let out = innotune(state.path())
            .args(["sandbox", action, "--dir"])
            .arg(&d)
            .output()
            .unwrap();
        refused(&out, action);
    }
    assert!(answers(&victim), "the victim server was stopped");
    assert!(alive(decoy.pid), "nobody's process was signalled");
    assert!(d.join("innotune-sandbox.json").exists(), "D was removed");
    drop(decoy);

    // Root's own directory, but the manifest names a decoy (no recorded
    // identity) and the victim's socket.
    let d = t.path().join("stale");
    mkdir(&d, 0o700, None);
    std::fs::write(d.join("my.cnf"), "").unwrap();
    let decoy = Decoy::start(&d);
    std::fs::write(
        d.join("innotune-sandbox.json"),
        manifest(decoy.pid.into(), victim.socket(), false),
    )
    .unwrap();
    let out = innotune(state.path())
        .args(["sandbox", "stop", "--dir"])
        .arg(&d)
        .output()
        .unwrap();
    let err = refused(&out, "a decoy running from D");
    assert!(err.contains(&format!("pid {}", decoy.pid)), "{err}");
    assert!(answers(&victim), "the victim server was stopped: {err}");
    assert!(alive(decoy.pid), "the decoy was signalled: {err}");
    assert!(
        d.join("my.cnf").exists(),
        "D was pulled from under the decoy"
    );
    drop(decoy);

    // Root's own directory, with a manifest that copies the victim
    // server's recorded identity (pid, start time, executable, command
    // line): that server is not the one started in D.
    let d = t.path().join("copied");
    mkdir(&d, 0o700, None);
    std::fs::write(d.join("my.cnf"), "").unwrap();
    let mut m: Value =
        serde_json::from_slice(&std::fs::read(victim.dir().join("innotune-sandbox.json")).unwrap())
            .unwrap();
    m["keep"] = json!(false);
    std::fs::write(d.join("innotune-sandbox.json"), m.to_string()).unwrap();
    let out = innotune(state.path())
        .args(["sandbox", "stop", "--dir"])
        .arg(&d)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(answers(&victim), "the victim server was stopped: {err}");

    // The real one still stops.
    let pid = victim.pid();
    victim.stop().unwrap();
    assert!(!alive(pid));
}
