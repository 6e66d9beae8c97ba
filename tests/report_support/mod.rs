//! Real results for the report tests: innotune itself run on fixture host
//! trees (probe, check), and, live, a short sweep on a loop device.

#![allow(dead_code)]

use assert_cmd::Command;
use std::path::{Path, PathBuf};

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hosts")
        .join(name)
}

pub fn bin(state: &Path) -> Command {
    let mut c = Command::cargo_bin("innotune").unwrap();
    c.env("INNOTUNE_STATE_DIR", state);
    c
}

/// Run innotune with `args` (plus `--format json --output OUT`) and return
/// OUT; panics with stderr when it wrote nothing.
pub fn result_json(state: &Path, out: &Path, args: &[&str]) -> PathBuf {
    let o = bin(state)
        .args(args)
        .args(["--format", "json", "--output"])
        .arg(out)
        .output()
        .unwrap();
    assert!(
        out.exists(),
        "innotune {args:?} wrote no {}: exit {:?}, stderr {}",
        out.display(),
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    out.to_path_buf()
}

/// `innotune probe` of the md-raid0 fixture host (the datadir on md0 over
/// two partitions).
pub fn probe_json(state: &Path, dir: &Path) -> PathBuf {
    let root = fixture("md-raid0");
    result_json(
        state,
        &dir.join("probe.json"),
        &["--root", root.to_str().unwrap(), "probe"],
    )
}

/// `innotune check` of a check fixture (`check-planted`, `check-clean`).
pub fn check_json(state: &Path, dir: &Path, fixture_name: &str, file: &str) -> PathBuf {
    let root = fixture(fixture_name);
    result_json(
        state,
        &dir.join(file),
        &["--root", root.to_str().unwrap(), "check", "/var/lib/mysql"],
    )
}

use crate::host_support::{sh, umount_retry};

fn active(dev: &str) -> String {
    let s = std::fs::read_to_string(format!("/sys/block/{dev}/queue/scheduler")).unwrap();
    let a = s.find('[').unwrap();
    let b = s.find(']').unwrap();
    s[a + 1..b].to_string()
}

/// A loop device on a file in /dev/shm (tmpfs has no block device, so the
/// sweep switches only the loop device), ext4, mounted; unmounted, detached
/// and removed on drop, with its scheduler checked back.
pub struct LoopLab {
    pub dir: PathBuf,
    pub mnt: PathBuf,
    pub loopdev: String,
    orig: String,
}

impl LoopLab {
    pub fn new(tag: &str) -> LoopLab {
        let dir = PathBuf::from(format!(
            "/dev/shm/innotune-report-test-{}-{tag}",
            std::process::id()
        ));
        std::fs::create_dir_all(dir.join("mnt")).unwrap();
        let img = dir.join("disk.img");
        sh("truncate", &["-s", "1G", img.to_str().unwrap()]);
        let dev = sh(
            "losetup",
            &["--direct-io=on", "-f", "--show", img.to_str().unwrap()],
        );
        let mut lab = LoopLab {
            mnt: dir.join("mnt"),
            dir,
            loopdev: dev.trim_start_matches("/dev/").to_string(),
            orig: String::new(),
        };
        // A loop queue keeps the scheduler its last user left: start from none.
        std::fs::write(
            format!("/sys/block/{}/queue/scheduler", lab.loopdev),
            "none",
        )
        .unwrap();
        lab.orig = active(&lab.loopdev);
        sh("mkfs.ext4", &["-q", &dev]);
        sh("mount", &[&dev, lab.mnt.to_str().unwrap()]);
        lab
    }

    /// A short sweep (none vs mq-deadline, one small random-read job),
    /// its JSON written to `out`.
    pub fn sweep_json(&self, state: &Path, out: &Path) -> PathBuf {
        let job = self.dir.join("small-read.toml");
        std::fs::write(
            &job,
            "[global]\ndirect = 1\nsize = \"64m\"\n\n[[job]]\nname = \"small-read\"\nrw = \"randread\"\nbs = \"16k\"\niodepth = 4\n",
        )
        .unwrap();
        let p = result_json(
            state,
            out,
            &[
                "sweep",
                self.mnt.to_str().unwrap(),
                "--schedulers",
                "none,mq-deadline",
                "--workload",
                job.to_str().unwrap(),
                "--rounds",
                "4",
                "--trial",
                "400ms",
                "--warmup",
                "0",
            ],
        );
        assert_eq!(
            active(&self.loopdev),
            self.orig,
            "sweep left the scheduler switched"
        );
        p
    }
}

impl Drop for LoopLab {
    fn drop(&mut self) {
        umount_retry(&self.mnt);
        let _ = std::process::Command::new("losetup")
            .args(["-d", &format!("/dev/{}", self.loopdev)])
            .status();
        // The kernel's default for new loop devices here (none), not what
        // an earlier user left: the queue outlives the attachment.
        let _ = std::fs::write(
            format!("/sys/block/{}/queue/scheduler", self.loopdev),
            "none",
        );
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
