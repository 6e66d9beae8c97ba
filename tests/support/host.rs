//! Host commands for tests that build real devices and mounts, the gate
//! for live tests, and what tests read of the host to check innotune.
//!
//! Unmounting in test guards. A filesystem that just served io_uring I/O
//! (fio's, or any process killed mid-run) can stay busy for a moment while
//! the kernel tears the ring down in a worker, so one `umount` is not enough:
//! retry for up to 10 s, then detach lazily so nothing stays mounted.

use super::proc::{spawn, sys, WAIT};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

/// Run a host command that must succeed (within [`WAIT`]); its trimmed
/// stdout.
pub fn sh(cmd: &str, args: &[&str]) -> String {
    let out = spawn(
        sys(cmd)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    )
    .output_within(WAIT);
    assert!(
        out.status.success(),
        "{cmd} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Run a shell command as the unprivileged user `nobody` (`runuser`), which
/// must succeed: tests plant files as a hostile or careless other user.
pub fn sh_as_nobody(script: &str) {
    sh("runuser", &["-u", "nobody", "--", "sh", "-c", script]);
}

/// Live tests (loop devices, mounts, switching the root disk's scheduler,
/// tracefs) run only when `INNOTUNE_LIVE_TESTS=1` (which `.ci/run` sets) and
/// as root, so `cargo test` as a normal user runs the rest. Call at the top
/// of such a test: `if !support::live() { return; }` — it says on stderr
/// why the test did nothing.
pub fn live() -> bool {
    let on = std::env::var("INNOTUNE_LIVE_TESTS").as_deref() == Ok("1");
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !on {
        eprintln!("skipped: live test (set INNOTUNE_LIVE_TESTS=1 and run as root)");
    } else if !root {
        eprintln!("skipped: live test needs root");
    }
    on && root
}

/// Unmount `mnt`, retrying while it is busy, lazily as a last resort.
pub fn umount_retry(mnt: &Path) {
    for _ in 0..40 {
        if !is_mounted(mnt) {
            return;
        }
        let ok = spawn(sys("umount").arg(mnt).stderr(Stdio::null()))
            .wait_within(WAIT)
            .success();
        if ok {
            return;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    let _ = spawn(sys("umount").arg("-l").arg(mnt)).wait_within(WAIT);
}

/// Whether `mnt` is a mount point now (/proc/self/mounts).
pub fn is_mounted(mnt: &Path) -> bool {
    let want = mnt.to_string_lossy();
    std::fs::read_to_string("/proc/self/mounts")
        .unwrap_or_default()
        .lines()
        .any(|l| l.split_whitespace().nth(1).map(unescape).as_deref() == Some(&*want))
}

/// /proc/self/mounts writes space, tab, newline and backslash in a mount
/// point as octal escapes (`\040`); decode them so such mount points match.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The active scheduler of block device `name` (`none`, `mq-deadline`, …),
/// read from sysfs.
pub fn active_scheduler(name: &str) -> String {
    let s = std::fs::read_to_string(format!("/sys/block/{name}/queue/scheduler")).unwrap();
    let a = s.find('[').unwrap();
    let b = s.find(']').unwrap();
    s[a + 1..b].to_string()
}

/// Set the scheduler of block device `name`; must succeed.
pub fn set_scheduler(name: &str, sched: &str) {
    std::fs::write(format!("/sys/block/{name}/queue/scheduler"), sched)
        .unwrap_or_else(|e| panic!("{name}: scheduler {sched}: {e}"));
    assert_eq!(active_scheduler(name), sched, "{name}");
}

/// A host tree under tests/fixtures/hosts (for `--root`).
pub fn fixture_host(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hosts")
        .join(name)
}

/// mysqld/mariadbd processes whose command line mentions `p` (zombies
/// excluded: they have exited).
pub fn servers_under(p: &Path) -> Vec<u32> {
    let want = p.to_string_lossy().into_owned();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            matches!(comm.trim(), "mariadbd" | "mysqld")
                && String::from_utf8_lossy(&cmd).contains(&want)
                && start_ticks(*pid).is_some()
        })
        .collect()
}

/// /proc/PID/stat start time, None once it has exited (zombie included).
pub fn start_ticks(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let f: Vec<&str> = s[s.rfind(')')? + 1..].split_whitespace().collect();
    (f[0] != "Z" && f[0] != "X")
        .then(|| f[19].parse().ok())
        .flatten()
}

/// Wait until the process that started at `ticks` is gone (its new parent
/// may take a moment to reap it); false after 10 s.
pub fn wait_gone(pid: u32, ticks: u64) -> bool {
    let t0 = std::time::Instant::now();
    while start_ticks(pid) == Some(ticks) {
        if t0.elapsed() > Duration::from_secs(10) {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    true
}
