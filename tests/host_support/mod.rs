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
        .any(|l| l.split_whitespace().nth(1) == Some(&*want))
}
