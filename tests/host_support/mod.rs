//! Host commands for tests that build real devices and mounts.
//!
//! Unmounting in test guards. A filesystem that just served io_uring I/O
//! (fio's, or any process killed mid-run) can stay busy for a moment while
//! the kernel tears the ring down in a worker, so one `umount` is not enough:
//! retry for up to 10 s, then detach lazily so nothing stays mounted.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Run a host command that must succeed; its trimmed stdout.
pub fn sh(cmd: &str, args: &[&str]) -> String {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{cmd}: {e}"));
    assert!(
        out.status.success(),
        "{cmd} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

pub fn umount_retry(mnt: &Path) {
    for _ in 0..40 {
        if !is_mounted(mnt) {
            return;
        }
        let ok = Command::new("umount")
            .arg(mnt)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            return;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    let _ = Command::new("umount").arg("-l").arg(mnt).status();
}

fn is_mounted(mnt: &Path) -> bool {
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

/// Live tests (loop devices, mounts, switching the root disk's scheduler,
/// tracefs) run only when `INNOTUNE_LIVE_TESTS=1` (which `.ci/run` sets) and
/// as root, so `cargo test` as a normal user runs the rest. Call at the top
/// of such a test: `if !host_support::live() { return; }` — it says on
/// stderr why the test did nothing.
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

/// Run a shell command as the unprivileged user `nobody` (`runuser`), which
/// must succeed: tests plant files as a hostile or careless other user.
pub fn sh_as_nobody(script: &str) {
    let out = Command::new("runuser")
        .args(["-u", "nobody", "--", "sh", "-c", script])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "as nobody: {script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
