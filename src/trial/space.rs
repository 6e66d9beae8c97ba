//! Will the sweep's files fit? Checked for the whole plan (every file
//! workload's file set, and the OLTP server's datadir) before any device is
//! switched, so a full filesystem is found in a second rather than at the
//! last workload under the last scheduler after many minutes.

use super::workload::Spec;
use crate::error::Fix;
use crate::units::fmt_size;
use anyhow::Result;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Free space kept beyond what the files take: bench's own layout check
/// wants 2% more than the file, and the filesystem's metadata and the
/// journal want some too.
const HEADROOM: f64 = 1.05;
/// Smallest file set per job innotune scales down to by itself: below it a
/// random-read workload measures the device's cache more than its media.
/// (`--size` may go lower: then the user chose it.)
pub const MIN_SCALED_JOB_BYTES: u64 = 64 << 20;

/// How file sizes were chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sizing {
    /// The workloads' own sizes (presets: 1 GiB per job).
    Workloads,
    /// `--size`.
    Option,
    /// Scaled down to fit the free space (a warning said so).
    Scaled,
}

/// One workload's files.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct WorkloadFiles {
    pub workload: String,
    pub bytes: u64,
}

/// Where the sweep's files go and how much they take (JSON: `files`).
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct FilePlan {
    /// `PATH/.innotune-sweep.PID`, removed afterwards.
    pub work_dir: PathBuf,
    /// Space available on PATH's filesystem at start; absent when the
    /// filesystem reports no capacity (ramfs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub free_bytes: Option<u64>,
    /// Every file workload's files plus the OLTP server's estimate.
    pub need_bytes: u64,
    /// The OLTP server's directory, estimated (0 without OLTP workloads).
    pub oltp_estimate_bytes: u64,
    pub sizing: Sizing,
    /// File workloads only.
    pub workloads: Vec<WorkloadFiles>,
}

impl FilePlan {
    /// One line for the report.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "{} in {}",
            fmt_size(self.need_bytes),
            self.work_dir.display()
        );
        if let Some(f) = self.free_bytes {
            s += &format!(" ({} free at start)", fmt_size(f));
        }
        match self.sizing {
            Sizing::Workloads => {}
            Sizing::Option => s += "; --size chose the file sizes",
            Sizing::Scaled => s += "; files scaled down to fit",
        }
        s
    }
}

/// Space available to this process on `dir`'s filesystem; None when the
/// filesystem reports no capacity (ramfs) or cannot be asked.
pub fn free_bytes(dir: &Path) -> Option<u64> {
    let st = rustix::fs::statvfs(dir).ok()?;
    (st.f_blocks > 0).then(|| st.f_bavail.saturating_mul(st.f_frsize))
}

/// Resize every file workload to `total` bytes of files, its jobs keeping
/// their proportions; each job's size stays whole blocks per file.
fn resize(b: &mut super::workload::BenchTrial, total: u64) {
    let own = b.file_bytes().max(1);
    for j in b.workload.jobs.iter_mut().filter(|j| j.filename.is_none()) {
        let unit = j.bs.max(1) * j.nrfiles.max(1) as u64;
        let share = (j.file_size() * j.nrfiles as u64) as f64 / own as f64;
        let want = (total as f64 * share) as u64;
        j.size = (want / unit).max(1) * unit;
    }
}

fn file_workloads(specs: &mut [Spec]) -> impl Iterator<Item = &mut super::workload::BenchTrial> {
    specs.iter_mut().filter_map(|s| match s {
        Spec::Bench(b) => Some(b),
        Spec::Oltp { .. } => None,
    })
}

/// Size the files of `specs` for `path`'s filesystem with `free` bytes
/// available: `--size` when given (refused if it does not fit), else the
/// workloads' own sizes, scaled down in proportion when they do not fit
/// (returned with the warning to give), refused when even that would take
/// a job below [`MIN_SCALED_JOB_BYTES`].
pub fn fit(
    specs: &mut [Spec],
    size: Option<u64>,
    oltp_bytes: u64,
    free: Option<u64>,
    path: &Path,
    work_dir: &Path,
) -> Result<(FilePlan, Option<String>)> {
    if let Some(s) = size {
        for b in file_workloads(specs) {
            resize(b, s);
        }
    }
    let totals = |specs: &mut [Spec]| -> Vec<WorkloadFiles> {
        file_workloads(specs)
            .map(|b| WorkloadFiles {
                workload: b.name().to_string(),
                bytes: b.file_bytes(),
            })
            .collect()
    };
    let own = totals(specs);
    let files: u64 = own.iter().map(|w| w.bytes).sum();
    let need = files + oltp_bytes;
    let mut plan = FilePlan {
        work_dir: work_dir.to_path_buf(),
        free_bytes: free,
        need_bytes: need,
        oltp_estimate_bytes: oltp_bytes,
        sizing: if size.is_some() {
            Sizing::Option
        } else {
            Sizing::Workloads
        },
        workloads: own,
    };
    let Some(free) = free else {
        return Ok((plan, None));
    };
    if need as f64 * HEADROOM <= free as f64 {
        return Ok((plan, None));
    }
    let where_ = format!("{}'s filesystem", path.display());
    let oltp_part = if oltp_bytes > 0 {
        format!(" (the OLTP server's ≈{})", fmt_size(oltp_bytes))
    } else {
        String::new()
    };
    let room = (free as f64 / HEADROOM) as u64;
    if files == 0 || room <= oltp_bytes {
        return Err(Fix::new(
            format!(
                "the run needs {}{oltp_part} and {where_} has {} free",
                fmt_size(need),
                fmt_size(free)
            ),
            if oltp_bytes > 0 {
                "free space there, or load fewer rows (--oltp-tables, --oltp-table-size)"
            } else {
                "free space there"
            },
        )
        .into());
    }
    let n = plan.workloads.len() as u64;
    let per_workload = (room - oltp_bytes) / n;
    if size.is_some() {
        return Err(Fix::new(
            format!(
                "the work files need {} ({n} file workload{} × --size {}){oltp_part} and {where_} has {} free",
                fmt_size(need),
                if n == 1 { "" } else { "s" },
                fmt_size(size.unwrap_or(0)),
                fmt_size(free)
            ),
            format!(
                "give --size {} or less, or free space there",
                fmt_size(per_workload >> 20 << 20)
            ),
        )
        .into());
    }
    let factor = (room - oltp_bytes) as f64 / files as f64;
    let too_small = file_workloads(specs).any(|b| {
        b.workload
            .jobs
            .iter()
            .filter(|j| j.filename.is_none())
            .any(|j| {
                let own = j.file_size() * j.nrfiles as u64;
                (own as f64 * factor) < own.min(MIN_SCALED_JOB_BYTES) as f64
            })
    });
    if too_small {
        return Err(Fix::new(
            format!(
                "the work files need {}{oltp_part} and {where_} has {} free: scaled to fit, a job would get less than {}",
                fmt_size(need),
                fmt_size(free),
                fmt_size(MIN_SCALED_JOB_BYTES)
            ),
            format!(
                "free at least {} there, run fewer workloads (--workload), or choose small files yourself with --size",
                fmt_size(((need as f64 * HEADROOM) as u64).saturating_sub(free))
            ),
        )
        .into());
    }
    for b in file_workloads(specs) {
        let own = b.file_bytes();
        resize(b, (own as f64 * factor) as u64);
    }
    plan.workloads = totals(specs);
    plan.need_bytes = plan.workloads.iter().map(|w| w.bytes).sum::<u64>() + oltp_bytes;
    plan.sizing = Sizing::Scaled;
    let list: Vec<String> = plan
        .workloads
        .iter()
        .map(|w| format!("{} {}", w.workload, fmt_size(w.bytes)))
        .collect();
    let warning = format!(
        "{where_} has {} free and the work files would take {}{oltp_part}: file sizes scaled to {:.0}% to fit ({}); give --size to choose them",
        fmt_size(free),
        fmt_size(need),
        factor * 100.0,
        list.join(", ")
    );
    Ok((plan, Some(warning)))
}

#[cfg(test)]
mod tests {
    use super::super::workload;
    use super::*;

    fn specs(names: &[&str]) -> Vec<Spec> {
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        workload::load(&names, Path::new("/w"), |e| e).unwrap()
    }

    fn bytes(s: &[Spec]) -> Vec<u64> {
        s.iter()
            .filter_map(|s| match s {
                Spec::Bench(b) => Some(b.file_bytes()),
                _ => None,
            })
            .collect()
    }

    const G: u64 = 1 << 30;
    const M: u64 = 1 << 20;

    #[test]
    fn the_default_plan_fits_as_is_when_there_is_room() {
        let mut s = specs(&["page-read", "page-write", "fsync-4k", "mixed"]);
        let (p, warn) = fit(
            &mut s,
            None,
            0,
            Some(100 * G),
            Path::new("/d"),
            Path::new("/d/w"),
        )
        .unwrap();
        assert_eq!(p.need_bytes, 5 * G);
        assert_eq!(p.sizing, Sizing::Workloads);
        assert!(warn.is_none());
        assert_eq!(bytes(&s), [G, G, G, 2 * G]);
    }

    #[test]
    fn a_small_filesystem_scales_every_file_set_and_says_so() {
        // The case: the default sweep on a 4 GiB filesystem.
        let mut s = specs(&["page-read", "page-write", "fsync-4k", "mixed"]);
        let (p, warn) = fit(
            &mut s,
            None,
            0,
            Some(4 * G),
            Path::new("/d"),
            Path::new("/d/w"),
        )
        .unwrap();
        assert_eq!(p.sizing, Sizing::Scaled);
        assert!(p.need_bytes as f64 * HEADROOM <= (4 * G) as f64, "{p:?}");
        let b = bytes(&s);
        // Proportions kept: mixed has two jobs, twice the others.
        assert!(b[3] >= 2 * b[0] - 2 * M && b[0] > 700 * M, "{b:?}");
        let w = warn.unwrap();
        assert!(w.contains("scaled to") && w.contains("--size"), "{w}");
        for spec in &s {
            if let Spec::Bench(t) = spec {
                t.validate().unwrap();
            }
        }
    }

    #[test]
    fn too_little_room_is_refused_at_once_with_a_fix_sweep_has() {
        let mut s = specs(&["page-read", "page-write", "fsync-4k", "mixed"]);
        let e = fit(
            &mut s,
            None,
            0,
            Some(200 * M),
            Path::new("/d"),
            Path::new("/d/w"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("has 200MiB free") && e.contains("less than 64MiB"),
            "{e}"
        );
        assert!(e.contains("--size") && !e.contains("--directory"), "{e}");
    }

    #[test]
    fn size_sets_each_workload_file_set() {
        let mut s = specs(&["mixed", "page-read", "oltp_insert"]);
        let (p, warn) = fit(
            &mut s,
            Some(512 * M),
            300 * M,
            Some(10 * G),
            Path::new("/d"),
            Path::new("/d/w"),
        )
        .unwrap();
        assert!(warn.is_none());
        assert_eq!(p.sizing, Sizing::Option);
        // mixed's two jobs share its 512 MiB.
        assert_eq!(bytes(&s), [512 * M, 512 * M]);
        assert_eq!(p.need_bytes, 1024 * M + 300 * M);
        // Too large for the room: refused, naming a --size that fits.
        let mut s = specs(&["mixed", "page-read"]);
        let e = fit(
            &mut s,
            Some(4 * G),
            0,
            Some(2 * G),
            Path::new("/d"),
            Path::new("/d/w"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("2 file workloads × --size 4GiB"), "{e}");
        assert!(e.contains("give --size 975MiB or less"), "{e}");
    }

    #[test]
    fn unknown_capacity_is_not_checked() {
        let mut s = specs(&["page-read"]);
        let (p, warn) = fit(&mut s, None, 0, None, Path::new("/d"), Path::new("/d/w")).unwrap();
        assert!(warn.is_none() && p.free_bytes.is_none());
    }

    #[test]
    fn the_oltp_server_alone_can_be_too_big() {
        let mut s = specs(&["oltp_insert"]);
        let e = fit(
            &mut s,
            None,
            500 * M,
            Some(100 * M),
            Path::new("/d"),
            Path::new("/d/w"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("--oltp-table-size"), "{e}");
    }
}
