//! Journal tests on a fixture root: the Host writes into fake sysfs files,
//! and the journal lives in a temp state directory.

use super::*;
use std::fs;

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
fn bracketed_choice_is_the_value() {
    assert_eq!(sysfs_value("none [mq-deadline] kyber\n"), "mq-deadline");
    assert_eq!(sysfs_value(" 128\n"), "128");
    assert_eq!(sysfs_value("always [madvise] never"), "madvise");
}

#[test]
fn original_is_on_disk_before_the_change_and_drop_restores() {
    let fx = Fx::new();
    let h = fx.host();
    {
        let g = Journal::begin_in(fx.state.path(), "test", false).unwrap();
        g.set_sysfs(&h, SDX, "none").unwrap();
        g.set_sysfs(&h, SDX, "kyber").unwrap();
        g.set_sysfs(&h, SDY, "mq-deadline").unwrap();
        // The fixture file now holds what we wrote (a real sysfs file would
        // show the bracketed list; restore handles both).
        assert_eq!(fx.read(SDX), "kyber");
        let j = load(&fx.journal()).unwrap().unwrap();
        assert_eq!(j.owner.pid, std::process::id());
        assert_eq!(j.entries.len(), 2, "one entry per path, original kept once");
        match &j.entries[0] {
            Entry::Sysfs { original, new, .. } => {
                assert_eq!(original, "mq-deadline");
                assert_eq!(new, "kyber");
            }
            e => panic!("{e:?}"),
        }
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
    g.set_sysfs(&h, SDX, "none").unwrap();
    g.set_sysfs(&h, SDX_NR, "8").unwrap();
    let work = fx.state.path().join("work");
    fs::create_dir(&work).unwrap();
    fs::write(work.join("f"), "x").unwrap();
    g.track_created(&work).unwrap();
    // Simulate a crash: the guard never runs its destructor.
    std::mem::forget(g);
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
    g.set_sysfs(&fx.host(), SDX, "none").unwrap();
    let err = Journal::begin_in(fx.state.path(), "second", false)
        .err()
        .unwrap();
    assert!(err.to_string().contains("another innotune run"), "{err}");
    // Our own pid owns it, so restore_at is allowed (the guard's own path).
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
    g.set_sysfs(&h, SDX_NR, "8").unwrap();
    g.set_sysfs(&h, SDX, "none").unwrap();
    let entries = g.entries();
    std::mem::forget(g);
    let results = restore_entries(&entries, false);
    // Results come back in entry order, whatever order they were applied in.
    assert_eq!(results[0].path, PathBuf::from(SDX_NR));
    assert_eq!(fx.read(SDX), "mq-deadline");
    assert_eq!(fx.read(SDX_NR), "64");
}

#[test]
fn vanished_device_is_gone_not_failed() {
    let fx = Fx::new();
    let h = fx.host();
    let g = Journal::begin_in(fx.state.path(), "t", false).unwrap();
    g.set_sysfs(&h, SDY, "mq-deadline").unwrap();
    fs::remove_dir_all(fx.root.path().join("sys/block/sdy")).unwrap();
    let r = g.restore_all();
    assert_eq!(r[0].outcome, Outcome::Gone);
    assert!(g.entries().is_empty());
}

#[test]
fn unreadable_attribute_changes_nothing() {
    let fx = Fx::new();
    let g = Journal::begin_in(fx.state.path(), "t", false).unwrap();
    let err = g
        .set_sysfs(&fx.host(), "/sys/block/nope/queue/scheduler", "none")
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
        g.set_sysctl(&fx.host(), "vm.swappiness", "1").unwrap();
        assert_eq!(fx.read("/proc/sys/vm/swappiness"), "1");
        assert_eq!(g.entries()[0].path(), Path::new("/proc/sys/vm/swappiness"));
    }
    assert_eq!(fx.read("/proc/sys/vm/swappiness"), "60");
}
