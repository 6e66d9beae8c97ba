//! Real results for the report tests: innotune itself run on fixture host
//! trees (probe, check), and, live, a short sweep on a loop device.

use super::bin::innotune_in;
use super::block::{Lab, LabOpts, RAM};
use super::host::fixture_host;
use std::path::{Path, PathBuf};

/// Run innotune with `args` (plus `--format json --output OUT`) and return
/// OUT; panics with stderr when it wrote nothing.
pub fn result_json(state: &Path, out: &Path, args: &[&str]) -> PathBuf {
    let o = innotune_in(state)
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
    let root = fixture_host("md-raid0");
    result_json(
        state,
        &dir.join("probe.json"),
        &["--root", root.to_str().unwrap(), "probe"],
    )
}

/// `innotune check` of a check fixture (`check-planted`, `check-clean`).
pub fn check_json(state: &Path, dir: &Path, fixture_name: &str, file: &str) -> PathBuf {
    let root = fixture_host(fixture_name);
    result_json(
        state,
        &dir.join(file),
        &["--root", root.to_str().unwrap(), "check", "/var/lib/mysql"],
    )
}

/// A 1 GiB lab in RAM (the sweep switches only the loop device).
pub struct LoopLab(pub Lab);

impl LoopLab {
    pub fn new(tag: &str) -> LoopLab {
        LoopLab(Lab::new(LabOpts {
            tag,
            base: RAM,
            size: 1 << 30,
            ..LabOpts::default()
        }))
    }

    /// A short sweep (none vs mq-deadline, one small random-read job),
    /// its JSON written to `out`.
    pub fn sweep_json(&self, state: &Path, out: &Path) -> PathBuf {
        let lab = &self.0;
        let before = lab.scheduler();
        let job = lab.dir.join("small-read.toml");
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
                lab.mnt.to_str().unwrap(),
                "--schedulers",
                "none,mq-deadline",
                "--workload",
                job.to_str().unwrap(),
                "--rounds",
                "4",
                "--trial",
                "1s",
                "--warmup",
                "0",
            ],
        );
        assert_eq!(lab.scheduler(), before, "sweep left the scheduler switched");
        p
    }
}
