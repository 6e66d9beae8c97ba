//! Journal tests on a fixture root: the Host writes into fake sysfs files,
//! and the journal lives in a temp state directory.

use super::*;
use crate::change::{CreatedDir, ServerStarted, Sysctl, SysfsAttr};
use std::fs;

/// Set a sysfs attribute under `g`, as sweep does.
fn set(g: &Guard, h: &Host, path: &str, value: &str) -> Result<u64> {
    g.apply(h, Box::new(SysfsAttr::set(path, value)))
}

struct Fx {
    root: tempfile::TempDir,
    state: tempfile::TempDir,
}

impl Fx {
    fn new() -> Fx {
        let root = tempfile::tempdir().unwrap();
        for (dev, sched) in [
            ("sdx", "none [mq-deadline] kyber bfq"),
            ("sdy", "[none] mq-deadline"),
        ] {
            let q = root.path().join(format!("sys/block/{dev}/queue"));
            fs::create_dir_all(&q).unwrap();
            fs::write(q.join("scheduler"), format!("{sched}\n")).unwrap();
            fs::write(q.join("nr_requests"), "64\n").unwrap();
        }
        Fx {
            root,
            state: tempfile::tempdir().unwrap(),
        }
    }
    fn host(&self) -> Host {
        Host::with_root(self.root.path())
    }
    fn read(&self, p: &str) -> String {
        fs::read_to_string(self.root.path().join(p.trim_start_matches('/'))).unwrap()
    }
    fn journal(&self) -> PathBuf {
        self.state.path().join(JOURNAL_FILE)
    }
}

const SDX: &str = "/sys/block/sdx/queue/scheduler";
const SDY: &str = "/sys/block/sdy/queue/scheduler";
const SDX_NR: &str = "/sys/block/sdx/queue/nr_requests";

#[test]
fn original_is_on_disk_before_the_change_and_drop_restores() {
    let fx = Fx::new();
    let h = fx.host();
    {
        let g = Journal::begin_in(fx.state.path(), "test", false).unwrap();
        set(&g, &h, SDX, "none").unwrap();
        set(&g, &h, SDX, "kyber").unwrap();
        set(&g, &h, SDY, "mq-deadline").unwrap();
        // The fixture file now holds what we wrote (a real sysfs file would
        // show the bracketed list; restore handles both).
        assert_eq!(fx.read(SDX), "kyber");
        let j = load(&fx.journal()).unwrap().unwrap();
        assert_eq!(j.owner.pid, std::process::id());
        assert_eq!(j.entries.len(), 2, "one entry per path, original kept once");
        let v = serde_json::to_value(&j.entries[0]).unwrap();
        assert_eq!(v["change"]["kind"], "sysfs");
        assert_eq!(v["change"]["original"], "mq-deadline");
        // The journal file is private to root (it may hold config backups).
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(fx.journal()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    assert_eq!(fx.read(SDX), "mq-deadline");
    assert_eq!(fx.read(SDY), "none");
    assert!(!fx.journal().exists(), "journal removed after restore");
}

#[test]
fn crash_leaves_journal_and_restore_puts_back() {
    let fx = Fx::new();
    let h = fx.host();
    let g = Journal::begin_in(fx.state.path(), "sweep /x", false).unwrap();
    set(&g, &h, SDX, "none").unwrap();
    set(&g, &h, SDX_NR, "8").unwrap();
    let work = fx.state.path().join(".innotune-work");
    fs::create_dir(&work).unwrap();
    g.apply(&Host::live(), Box::new(CreatedDir::adopt(&work)))
        .unwrap();
    fs::write(work.join("f"), "x").unwrap();
    // Simulate a crash: the guard never runs its destructor.
    g.simulate_crash();
    // Pretend the owner died: a pid that cannot exist.
    let mut j = load(&fx.journal()).unwrap().unwrap();
    j.owner.pid = u32::MAX - 1;
    persist(&fx.journal(), &j).unwrap();
    assert!(!j.owner.is_alive());

    // A new run refuses to start over the pending journal.
    let err = Journal::begin_in(fx.state.path(), "sweep /y", false)
        .err()
        .unwrap();
    assert!(err.to_string().contains("innotune restore"), "{err}");

    let dry = restore::restore_at(&fx.journal(), true).unwrap();
    assert!(dry
        .entries
        .iter()
        .all(|r| r.outcome == Outcome::WouldRestore));
    assert_eq!(fx.read(SDX), "none", "dry run changes nothing");

    let rep = restore::restore_at(&fx.journal(), false).unwrap();
    assert_eq!(rep.failed(), 0);
    assert!(rep.journal_removed);
    assert_eq!(fx.read(SDX), "mq-deadline");
    assert_eq!(fx.read(SDX_NR), "64");
    assert!(!work.exists(), "created directory removed");
    assert!(!fx.journal().exists());
    // Now a new run can start.
    drop(Journal::begin_in(fx.state.path(), "sweep /y", false).unwrap());
}

#[test]
fn live_owner_blocks_a_second_run_and_restore() {
    let fx = Fx::new();
    let g = Journal::begin_in(fx.state.path(), "first", false).unwrap();
    set(&g, &fx.host(), SDX, "none").unwrap();
    let err = Journal::begin_in(fx.state.path(), "second", false)
        .err()
        .unwrap();
    assert!(err.to_string().contains("another innotune run"), "{err}");
    // The guard holds the lock: restore refuses, naming the owner.
    let mut j = load(&fx.journal()).unwrap().unwrap();
    j.owner.pid = 1; // init is alive
    j.owner.start_ticks = process_start_ticks(1);
    persist(&fx.journal(), &j).unwrap();
    let err = restore::restore_at(&fx.journal(), false).err().unwrap();
    assert!(err.to_string().contains("still running"), "{err}");
    drop(g);
    assert_eq!(fx.read(SDX), "mq-deadline");
}

#[test]
fn scheduler_is_restored_before_nr_requests() {
    // Real kernels reset nr_requests when the scheduler changes: restoring
    // nr_requests first would be undone. Record nr_requests first on purpose.
    let fx = Fx::new();
    let h = fx.host();
    let g = Journal::begin_in(fx.state.path(), "t", false).unwrap();
    set(&g, &h, SDX_NR, "8").unwrap();
    set(&g, &h, SDX, "none").unwrap();
    let entries = g.entries();
    std::mem::forget(g);
    let results = restore_entries(&entries, false);
    // Results come back in entry order, whatever order they were applied
    // in; each path as written, under the fixture root.
    assert_eq!(
        results[0].path,
        fx.root.path().join(SDX_NR.trim_start_matches('/'))
    );
    assert_eq!(fx.read(SDX), "mq-deadline");
    assert_eq!(fx.read(SDX_NR), "64");
}

#[test]
fn vanished_device_is_gone_not_failed() {
    let fx = Fx::new();
    let h = fx.host();
    let g = Journal::begin_in(fx.state.path(), "t", false).unwrap();
    set(&g, &h, SDY, "mq-deadline").unwrap();
    fs::remove_dir_all(fx.root.path().join("sys/block/sdy")).unwrap();
    let r = g.restore_all();
    assert_eq!(r[0].outcome, Outcome::Gone);
    assert!(g.entries().is_empty());
}

#[test]
fn unreadable_attribute_changes_nothing() {
    let fx = Fx::new();
    let g = Journal::begin_in(fx.state.path(), "t", false).unwrap();
    let err = set(&g, &fx.host(), "/sys/block/nope/queue/scheduler", "none")
        .err()
        .unwrap();
    assert!(err.to_string().contains("nothing was changed"), "{err}");
    assert!(g.entries().is_empty());
}

#[test]
fn sysctl_is_a_proc_sys_write_back() {
    let fx = Fx::new();
    let p = fx.root.path().join("proc/sys/vm");
    fs::create_dir_all(&p).unwrap();
    fs::write(p.join("swappiness"), "60\n").unwrap();
    {
        let g = Journal::begin_in(fx.state.path(), "t", false).unwrap();
        g.apply(&fx.host(), Box::new(Sysctl::new("vm.swappiness", "1")))
            .unwrap();
        assert_eq!(fx.read("/proc/sys/vm/swappiness"), "1");
        assert_eq!(g.entries()[0].path(), Path::new("vm.swappiness"));
        assert_eq!(g.entries()[0].kind(), "sysctl");
    }
    assert_eq!(fx.read("/proc/sys/vm/swappiness"), "60");
}

#[test]
fn server_entry_round_trips_and_version_1_journals_load() {
    let e = server(
        Path::new("/data/.innotune-sweep.42/sandbox"),
        Some(1234),
        Some(98765),
    );
    let v = serde_json::to_value(&e).unwrap();
    assert_eq!(v["kind"], "change");
    assert_eq!(v["change"]["kind"], "server");
    assert_eq!(v["change"]["dir"], "/data/.innotune-sweep.42/sandbox");
    assert_eq!(v["change"]["pid"], 1234);
    assert_eq!(v["change"]["start_ticks"], 98765);
    assert_eq!(serde_json::from_value::<Entry>(v).unwrap(), e);
    assert_eq!(e.kind(), "server");
    assert_eq!(e.path(), Path::new("/data/.innotune-sweep.42/sandbox"));
    // A version-1 journal (sysfs/dir/server records) loads as changes.
    let fx = Fx::new();
    fs::write(
        fx.journal(),
        r#"{"version": 1, "owner": {"pid": 7, "command": "innotune sweep /x", "started": "2025-01-01T00:00:00Z"},
            "entries": [{"kind": "sysfs", "path": "/sys/block/sdx/queue/scheduler", "original": "mq-deadline", "new": "none"},
                        {"kind": "dir", "path": "/x/.innotune-sweep.7"},
                        {"kind": "server", "dir": "/d/sb"}]}"#,
    )
    .unwrap();
    let j = load(&fx.journal()).unwrap().unwrap();
    let kinds: Vec<&str> = j.entries.iter().map(|e| e.kind()).collect();
    assert_eq!(kinds, ["sysfs", "dir", "server"]);
    assert_eq!(j.owner.start_ticks, None);
    assert_eq!(
        j.entries[2],
        server(Path::new("/d/sb"), None, None).with_id(3)
    );
}

#[test]
fn passwords_never_reach_the_journal() {
    for (argv, want) in [
        (
            "innotune check / --password=s3cret",
            "innotune check / --password=***",
        ),
        ("innotune oltp -ps3cret run", "innotune oltp -p*** run"),
        (
            "innotune check --password s3cret /",
            "innotune check --password *** /",
        ),
        (
            "innotune x --mysql-password=s3cret",
            "innotune x --mysql-password=***",
        ),
        (
            "innotune x mysql://u:s3cret@h/db",
            "innotune x mysql://u:***@h/db",
        ),
        (
            "innotune sweep /data --rounds 5",
            "innotune sweep /data --rounds 5",
        ),
    ] {
        assert_eq!(redact(argv), want);
    }
    let fx = Fx::new();
    let g =
        Journal::begin_in(fx.state.path(), "innotune apply --password=s3cret /", false).unwrap();
    let text = fs::read_to_string(g.path()).unwrap();
    assert!(!text.contains("s3cret"), "{text}");
}

/// A stand-in for a sandbox server: `sleep` (run through a symlink named
/// `mariadbd` when the test needs a server's name: comm is the name exec'd;
/// a copied binary could hit ETXTBSY when another test thread forks while
/// the copy's write handle is still open) whose argv[0] is the argument a sandbox's
/// server carries, `--defaults-file=DIR/my.cnf`.
struct FakeServer {
    child: std::process::Child,
    _bin: Option<tempfile::TempDir>,
}

impl FakeServer {
    fn start(dir: &Path, named_mariadbd: bool) -> FakeServer {
        use std::os::unix::process::CommandExt;
        let sleep = which::which("sleep").unwrap();
        let (prog, bin) = if named_mariadbd {
            let t = tempfile::tempdir().unwrap();
            let p = t.path().join("mariadbd");
            std::os::unix::fs::symlink(&sleep, &p).unwrap();
            (p, Some(t))
        } else {
            (sleep, None)
        };
        let child = std::process::Command::new(prog)
            .arg0(format!("--defaults-file={}", dir.join("my.cnf").display()))
            .arg("120")
            .spawn()
            .unwrap();
        // Wait for the exec: until then the cmdline is the test binary's.
        let t0 = std::time::Instant::now();
        while !crate::sandbox::runs_from(child.id(), dir) {
            assert!(t0.elapsed().as_secs() < 10, "fake server never exec'd");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        FakeServer { child, _bin: bin }
    }
    fn pid(&self) -> u32 {
        self.child.id()
    }
    fn ticks(&self) -> u64 {
        process_start_ticks(self.pid()).unwrap()
    }
    fn alive(&self) -> bool {
        process_start_ticks(self.pid()).is_some()
    }
    /// Reap it and return the signal it died of.
    fn reap(&mut self) -> Option<i32> {
        use std::os::unix::process::ExitStatusExt;
        self.child.wait().unwrap().signal()
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn server(dir: &Path, pid: Option<u32>, start_ticks: Option<u64>) -> Entry {
    let mut s = ServerStarted::new(dir);
    s.pid = pid;
    s.start_ticks = start_ticks;
    Entry::Change {
        id: 1,
        change: Box::new(s),
    }
}

impl Entry {
    fn with_id(self, id: u64) -> Entry {
        match self {
            Entry::Change { change, .. } => Entry::Change { id, change },
        }
    }
}

fn entry(c: impl crate::change::Change + 'static) -> Entry {
    Entry::Change {
        id: 1,
        change: Box::new(c),
    }
}

#[test]
fn a_recycled_pid_is_never_signalled() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("sb");
    let mut fake = FakeServer::start(&dir, false);
    let (pid, ticks) = (fake.pid(), fake.ticks());
    // Same pid, another start time: the pid was recycled.
    let r = restore_entries(&[server(&dir, Some(pid), Some(ticks - 1))], false);
    assert_eq!(r[0].outcome, Outcome::Gone);
    // Same pid and start time, but the command line names another sandbox
    // (one whose name only starts the same way).
    let other = work.path().join("s");
    let r = restore_entries(&[server(&other, Some(pid), Some(ticks))], false);
    assert_eq!(r[0].outcome, Outcome::Gone);
    // A pid without a start time cannot be checked: left alone.
    let r = restore_entries(&[server(&dir, Some(pid), None)], false);
    assert_eq!(r[0].outcome, Outcome::Gone);
    assert!(fake.alive(), "a process that is not provably ours was hit");

    // A dry run names it and leaves it running.
    let r = restore_entries(&[server(&dir, Some(pid), Some(ticks))], true);
    assert_eq!(r[0].outcome, Outcome::WouldRestore);
    assert_eq!(r[0].pid, Some(pid));
    assert!(fake.alive());

    // Pid, start time and command line agree: SIGTERM stops it.
    let r = restore_entries(&[server(&dir, Some(pid), Some(ticks))], false);
    assert_eq!(
        r[0].outcome,
        Outcome::Stopped {
            signal: "SIGTERM".into()
        }
    );
    assert_eq!(fake.reap(), Some(libc::SIGTERM));
    // Once it is gone, restoring again is a no-op.
    let r = restore_entries(&[server(&dir, Some(pid), Some(ticks))], false);
    assert_eq!(r[0].outcome, Outcome::Gone);
}

#[test]
fn a_server_journaled_without_a_pid_is_found_by_its_command_line() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("sb");
    let mut ours = FakeServer::start(&dir, true);
    let theirs = FakeServer::start(&work.path().join("sb2"), true);
    let r = restore_entries(&[server(&dir, None, None)], true);
    assert_eq!(r[0].outcome, Outcome::WouldRestore);
    assert_eq!(r[0].pid, Some(ours.pid()));
    let r = restore_entries(&[server(&dir, None, None)], false);
    assert!(matches!(r[0].outcome, Outcome::Stopped { .. }), "{r:?}");
    assert_eq!(ours.reap(), Some(libc::SIGTERM));
    assert!(theirs.alive(), "another sandbox's server was stopped");
}

#[test]
fn servers_stop_before_any_directory_is_deleted() {
    use crate::change::CreatedFile;
    let entries = [
        entry(CreatedDir::adopt("/m/.innotune-sweep.1")),
        entry(SysfsAttr::remember(SDX_NR)),
        server(Path::new("/m/.innotune-sweep.1/sandbox"), None, None),
        entry(CreatedFile::new("/m/.innotune-sweep.1/f", String::new())),
        entry(SysfsAttr::new(SDX, "kyber", "sdx")),
    ];
    assert_eq!(restore::restore_order(&entries), [4, 1, 2, 3, 0]);
}

#[test]
fn guard_journals_the_pid_at_spawn_and_stops_the_server_on_drop() {
    use std::os::unix::process::CommandExt;
    let fx = Fx::new();
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("sb");
    let live = Host::live();
    let g = Journal::begin_in(fx.state.path(), "t", false).unwrap();
    // Before the data directory is initialised: no pid yet.
    let boot = g.apply(&live, Box::new(ServerStarted::new(&dir))).unwrap();
    let on_disk = load(&fx.journal()).unwrap().unwrap();
    assert_eq!(on_disk.entries, [server(&dir, None, None)]);
    // A spawn that fails leaves its entry journaled, without a pid.
    let (bad, spawned) =
        ServerStarted::spawn(&dir, std::process::Command::new("/nonexistent/mariadbd"));
    let err = g.apply(&live, Box::new(bad)).err().unwrap();
    assert!(
        err.to_string().contains("starting /nonexistent/mariadbd"),
        "{err}"
    );
    assert!(spawned.child().is_none());
    assert_eq!(g.entries().len(), 2);
    let mut cmd = std::process::Command::new("sleep");
    cmd.arg0(format!("--defaults-file={}", dir.join("my.cnf").display()))
        .arg("120");
    let (change, spawned) = ServerStarted::spawn(&dir, cmd);
    let id = g.apply(&live, Box::new(change)).unwrap();
    let mut child = spawned.child().unwrap();
    assert!(spawned.child().is_none(), "handed over once");
    let pid = child.id();
    let on_disk = load(&fx.journal()).unwrap().unwrap();
    assert_eq!(
        on_disk.entries[2],
        server(&dir, Some(pid), process_start_ticks(pid)).with_id(id),
        "pid and start time are on disk when apply returns"
    );
    let t0 = std::time::Instant::now();
    while !crate::sandbox::runs_from(pid, &dir) {
        assert!(t0.elapsed().as_secs() < 10);
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    drop(g);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGTERM));
    assert!(!fx.journal().exists());
    let _ = boot;

    // Stopped cleanly elsewhere: undoing its entry finds it gone.
    let g = Journal::begin_in(fx.state.path(), "t", false).unwrap();
    let boot = g.apply(&live, Box::new(ServerStarted::new(&dir))).unwrap();
    assert_eq!(g.undo(boot).unwrap().outcome, Outcome::Gone);
    assert!(g.entries().is_empty());
}
