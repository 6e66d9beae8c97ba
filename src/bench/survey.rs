//! `innotune bench --survey [DEV…]`: every whole disk of the host (or the
//! named ones), read-only, to learn each disk's limits and each class's
//! aggregate, as the practice's disk-class survey script does with fio.
//!
//! That script runs fio writes on raw devices, which destroys data on a
//! mounted disk. The survey only reads: each device is opened O_RDONLY with
//! O_DIRECT (never O_WRONLY/O_RDWR, enforced by
//! [`JobFiles::read_only_device`]), so it is safe on mounted disks, md
//! members and the root disk, and needs no O_EXCL claim (which a mounted
//! disk would refuse anyway). Writes are measured on a scratch file instead
//! (`innotune bench --directory DIR --rw randwrite`).
//!
//! Flow: the host model's `/sys/block` → [`plan`] (classes, skipped disks)
//! → [`execute`]: per class, each disk alone through the four [`JOBS`], then
//! (two disks or more) every disk of the class at once, job by job, so the
//! table shows per-disk limits and the class aggregate. The jobs are
//! ordinary [`JobSpec`]s run by [`super::runner::run`]: the same engine and
//! accounting as every other bench run.

use super::files::JobFiles;
use super::job::{JobSpec, Rw};
use super::manifest::io_fix;
use super::result::{DirStats, WorkloadResult};
use super::runner::{self, Window};
use crate::error::Fix;
use crate::host::{Host, Known};
use crate::model::block::{self, Kind};
use crate::model::HostModel;
use anyhow::{bail, Result};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Measured window of each survey job without `--runtime`: long enough for
/// a steady figure on a disk, short enough to survey many disks.
pub const DEFAULT_RUNTIME: Duration = Duration::from_secs(5);

/// One of the survey's fixed read jobs.
#[derive(Debug, Clone, Copy)]
pub struct SurveyJobDef {
    /// Key in the results (`seq-read-1m-qd16`).
    pub key: &'static str,
    pub rw: Rw,
    pub bs: u64,
    pub iodepth: u32,
}

/// The practice's four figures per disk: sequential bandwidth (backups,
/// full scans), 16 KiB random reads deep and at depth 1 (InnoDB pages under
/// load, and one query's latency), 4 KiB random reads (the device's IOPS
/// limit). Reads only.
pub const JOBS: [SurveyJobDef; 4] = [
    SurveyJobDef {
        key: "seq-read-1m-qd16",
        rw: Rw::Read,
        bs: 1 << 20,
        iodepth: 16,
    },
    SurveyJobDef {
        key: "rand-read-16k-qd32",
        rw: Rw::RandRead,
        bs: 16 << 10,
        iodepth: 32,
    },
    SurveyJobDef {
        key: "rand-read-16k-qd1",
        rw: Rw::RandRead,
        bs: 16 << 10,
        iodepth: 1,
    },
    SurveyJobDef {
        key: "rand-read-4k-qd32",
        rw: Rw::RandRead,
        bs: 4 << 10,
        iodepth: 32,
    },
];

impl SurveyJobDef {
    /// The job on `dev` of `size` bytes, named `name`.
    fn spec(&self, name: &str, dev: &Path, size: u64) -> JobSpec {
        JobSpec {
            name: name.to_string(),
            rw: self.rw,
            bs: self.bs,
            iodepth: self.iodepth,
            numjobs: 1,
            direct: true,
            size,
            filename: Some(dev.to_path_buf()),
            ..JobSpec::default()
        }
    }
}

pub use crate::model::block::DiskClass;

impl DiskClass {
    pub fn label(&self) -> &'static str {
        match self {
            DiskClass::Nvme => "NVMe",
            DiskClass::SataSsd => "SATA/SAS SSD",
            DiskClass::Hdd => "HDD",
            DiskClass::Virtual => "virtual",
            DiskClass::Loop => "loop (virtual)",
            DiskClass::Other => "other",
        }
    }
}

/// One measured figure of one job on one disk (or a class aggregate).
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct Figure {
    /// A key of [`JOBS`].
    pub job: String,
    pub iops_per_s: f64,
    pub bw_bytes_per_s: f64,
    pub total_ios: u64,
    pub clat_p50_ns: u64,
    pub clat_p99_ns: u64,
    pub runtime_s: f64,
}

impl Figure {
    fn of(job: &str, d: &DirStats) -> Figure {
        Figure {
            job: job.to_string(),
            iops_per_s: d.iops,
            bw_bytes_per_s: d.bw_bytes,
            total_ios: d.total_ios,
            clat_p50_ns: d.clat_ns.p50,
            clat_p99_ns: d.clat_ns.p99,
            runtime_s: d.runtime_s,
        }
    }
}

/// One disk of the survey: identity from the host model, then figures.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct SurveyDisk {
    /// Kernel name (`nvme0n1`, `sda`, `loop0`).
    pub name: String,
    /// The device node read (`/dev/sda`).
    pub device: String,
    pub kind: Kind,
    pub rotational: Option<bool>,
    pub model: Option<String>,
    pub size_bytes: u64,
    /// Where the disk or one of its partitions is mounted (reading is safe).
    pub mounted_on: Vec<String>,
    /// md member, loop backing file, … (context for the figures).
    pub notes: Vec<String>,
    /// Each job on this disk with no other survey I/O running.
    pub alone: Vec<Figure>,
    /// Wall time of the alone runs (all jobs), seconds.
    pub alone_wall_s: f64,
    /// Each job while every disk of the class ran it; empty for a class of one.
    pub in_parallel: Vec<Figure>,
}

/// A class's aggregate for one job: every disk at once.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Aggregate {
    pub job: String,
    /// Sum over the class's disks of what each did in the parallel run.
    pub iops_per_s: f64,
    pub bw_bytes_per_s: f64,
    /// Sum of the disks' alone figures: what perfect scaling would give.
    pub sum_alone_iops_per_s: f64,
    /// `iops_per_s / sum_alone_iops_per_s`: 1.0 = the disks do not share a
    /// bottleneck (controller, bus, backing filesystem); 1/N = they share one.
    pub scaling: f64,
    /// Worst disk's p99 in the parallel run.
    pub worst_clat_p99_ns: u64,
}

/// Every disk of a class at once, job by job.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct ParallelRun {
    /// Wall time of the parallel runs (all jobs), seconds; compare with the
    /// class's `alone_wall_s`, the sum of its disks' alone runs.
    pub wall_s: f64,
    pub aggregate: Vec<Aggregate>,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct ClassSurvey {
    pub class: DiskClass,
    pub disks: Vec<SurveyDisk>,
    /// Sum of the disks' `alone_wall_s`.
    pub alone_wall_s: f64,
    /// Absent for a class of one disk, in a dry run, or when interrupted first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parallel: Option<ParallelRun>,
}

/// A disk the survey left out, and why.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Skipped {
    pub name: String,
    pub reason: String,
}

/// A job of the survey as fio options.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct SurveyJobInfo {
    pub job: String,
    /// `rw=randread bs=16k iodepth=32 direct=1` (fio syntax).
    pub options: String,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Survey {
    /// `--dry-run`: the plan only, nothing was read.
    pub dry_run: bool,
    /// Window of each job run.
    pub runtime_s: f64,
    pub ramp_s: f64,
    pub jobs: Vec<SurveyJobInfo>,
    pub classes: Vec<ClassSurvey>,
    pub skipped: Vec<Skipped>,
    /// Windows the plan needs (ramp included), seconds.
    pub planned_s: f64,
    /// Wall time of the whole survey, seconds (0 in a dry run).
    pub wall_s: f64,
    /// Ctrl-C or SIGTERM ended the survey early; what ran is kept.
    pub interrupted: bool,
}

/// What `innotune bench --survey` returns (`result.survey` in JSON).
#[derive(Debug, Serialize, serde::Deserialize)]
pub struct SurveyReport {
    pub survey: Survey,
    /// The signal that ended the survey early: exit 128 + its number.
    #[serde(skip)]
    pub signal: Option<i32>,
}

/// What the survey's options are, checked.
pub struct SurveyOpts {
    pub devices: Vec<PathBuf>,
    pub runtime: Duration,
    pub ramp: Duration,
    pub dry_run: bool,
    pub progress: bool,
}

/// The one line for a survey asked to write.
pub fn writes_refused(rw: &str) -> anyhow::Error {
    Fix::new(
        format!("--survey only reads (it runs on whole, possibly mounted disks); --rw {rw} would write to them"),
        "measure writes on a scratch file instead: innotune bench --directory DIR --rw randwrite",
    )
    .into()
}

/// A disk's identity from the host model (no I/O).
fn describe(model: &HostModel, name: &str) -> Result<SurveyDisk, String> {
    let host = model.host();
    let sys = block::sys_dir(host, name).map_err(|e| format!("not a block device: {e}"))?;
    if host.exists(sys.join("partition")) {
        return Err("a partition; the survey reads whole disks".into());
    }
    let kind = block::kind_of(host, &sys, name);
    let mut notes = Vec::new();
    if kind == Kind::Loop {
        match host.read_trim(sys.join("loop/backing_file")) {
            Ok(f) => notes.push(format!("backing file {f}")),
            Err(_) => return Err("loop device with no backing file".into()),
        }
    }
    let size = match block::read_size(host, &sys) {
        Known::Value(0) => return Err("zero size (no medium, or not set up)".into()),
        Known::Value(s) => s,
        Known::Unknown { unknown } => return Err(format!("size unknown: {unknown}")),
    };
    let mut holders: Vec<String> = host.list(sys.join("holders")).unwrap_or_default();
    for sub in host.list(&sys).unwrap_or_default() {
        if host.exists(sys.join(&sub).join("partition")) {
            holders.extend(
                host.list(sys.join(&sub).join("holders"))
                    .unwrap_or_default(),
            );
        }
    }
    holders.sort();
    holders.dedup();
    if !holders.is_empty() {
        notes.push(format!("member of {}", holders.join(", ")));
    }
    let q = block::read_queue(host, &sys);
    let rotational = q.rotational.value().copied();
    let model_name = block::read_model(host, &sys, kind).value().cloned();
    let mounted_on = model
        .mounts_of_device(name)
        .map(|ms| ms.iter().map(|m| m.mount_point.clone()).collect())
        .unwrap_or_default();
    Ok(SurveyDisk {
        name: name.to_string(),
        device: format!("/dev/{name}"),
        kind,
        rotational,
        model: model_name,
        size_bytes: size,
        mounted_on,
        notes,
        alone: Vec::new(),
        alone_wall_s: 0.0,
        in_parallel: Vec::new(),
    })
}

/// Layers over other disks (surveyed as themselves) and RAM are left out of
/// a whole-host survey; named explicitly they are measured.
fn skip_in_host_survey(kind: Kind) -> Option<&'static str> {
    match kind {
        Kind::Md | Kind::Dm => Some(
            "software layer over other disks (its members are surveyed); name it to measure it",
        ),
        Kind::Zram => Some("compressed RAM, not a disk; name it to measure it"),
        _ => None,
    }
}

/// Kernel name of a device argument: `/dev/sda`, `sda`, or a symlink such
/// as `/dev/disk/by-id/…` (resolved on the live host).
fn device_name(host: &Host, arg: &Path) -> Result<String> {
    let resolved = if host.is_live() && arg.is_absolute() {
        std::fs::canonicalize(arg).map_err(|e| io_fix(e, arg, "open"))?
    } else {
        arg.to_path_buf()
    };
    let name = resolved
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name.is_empty() || (resolved.is_absolute() && resolved.parent() != Some(Path::new("/dev"))) {
        bail!(Fix::new(
            format!("{} is not a device node in /dev", arg.display()),
            "name whole disks as /dev/sda or sda"
        ));
    }
    Ok(name)
}

/// Classes and skipped disks, from the host model alone (no I/O): what a
/// `--dry-run` shows and what [`execute`] measures.
pub fn plan(model: &HostModel, devices: &[PathBuf]) -> Result<(Vec<ClassSurvey>, Vec<Skipped>)> {
    let host = model.host();
    let mut disks = Vec::new();
    let mut skipped = Vec::new();
    if devices.is_empty() {
        let names = host.list("/sys/block").map_err(|e| {
            Fix::new(
                format!("cannot list {}: {e}", host.path("/sys/block").display()),
                "run on a Linux host with sysfs mounted, or give --root a host tree",
            )
        })?;
        for n in names {
            match describe(model, &n) {
                Ok(d) => match skip_in_host_survey(d.kind) {
                    Some(why) => skipped.push(Skipped {
                        name: n,
                        reason: why.into(),
                    }),
                    None => disks.push(d),
                },
                Err(reason) => skipped.push(Skipped { name: n, reason }),
            }
        }
    } else {
        for a in devices {
            let n = device_name(host, a)?;
            if disks.iter().any(|d: &SurveyDisk| d.name == n) {
                continue;
            }
            match describe(model, &n) {
                Ok(d) => disks.push(d),
                Err(reason) if reason.starts_with("not a block device") => bail!(Fix::new(
                    format!("{}: {reason}", a.display()),
                    "name whole disks as listed by lsblk -d (e.g. /dev/sda, /dev/nvme0n1)"
                )),
                Err(reason) if reason.starts_with("a partition") => bail!(Fix::new(
                    format!("{} is {reason}", a.display()),
                    "name the whole disk (sda, not sda1; nvme0n1, not nvme0n1p1)"
                )),
                Err(reason) => skipped.push(Skipped { name: n, reason }),
            }
        }
    }
    let mut classes: Vec<ClassSurvey> = Vec::new();
    for d in disks {
        let c = crate::model::block::classify(d.kind, d.rotational, d.model.as_deref());
        match classes.iter_mut().find(|x| x.class == c) {
            Some(x) => x.disks.push(d),
            None => classes.push(ClassSurvey {
                class: c,
                disks: vec![d],
                alone_wall_s: 0.0,
                parallel: None,
            }),
        }
    }
    classes.sort_by_key(|c| c.class);
    Ok((classes, skipped))
}

/// Windows (ramp included) the survey of `classes` takes: each disk alone,
/// then each class of two disks or more once more, all at once.
pub fn planned(classes: &[ClassSurvey], per_job: Duration) -> Duration {
    let runs: u32 = classes
        .iter()
        .map(|c| c.disks.len() as u32 + u32::from(c.disks.len() > 1))
        .sum();
    per_job * (runs * JOBS.len() as u32)
}

/// Size of a device in bytes, from the device itself (opened O_RDONLY: a
/// check that it can be read before anything is measured).
fn device_size(dev: &Path) -> Result<u64> {
    use std::io::{Seek, SeekFrom};
    use std::os::unix::fs::FileTypeExt;
    let md = std::fs::metadata(dev).map_err(|e| io_fix(e, dev, "open"))?;
    if !md.file_type().is_block_device() {
        bail!(Fix::new(
            format!("{} is not a block device", dev.display()),
            "name whole disks as /dev/sda or sda"
        ));
    }
    let mut f = std::fs::File::open(dev).map_err(|e| match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => Fix::new(
            format!("permission denied to read {}", dev.display()),
            "run as root (in a container or a locked-down VM the host may forbid opening its disks: name the disks you may read)",
        )
        .into(),
        _ => io_fix(e, dev, "open"),
    })?;
    f.seek(SeekFrom::End(0)).map_err(|e| io_fix(e, dev, "size"))
}

fn run_jobs(specs: Vec<JobSpec>, files: Vec<JobFiles>, win: &Window) -> Result<WorkloadResult> {
    // The jobs are the fixed read jobs of JOBS; checked anyway, in release
    // builds too, because a write here would land on a live disk.
    if let Some(s) = specs.iter().find(|s| s.rw.writes(s.rwmixread)) {
        return Err(writes_refused(s.rw.as_str()));
    }
    runner::run(&specs, &files, win)
}

fn figures(r: &WorkloadResult, key: &str) -> Vec<Figure> {
    r.jobs
        .iter()
        .map(|j| Figure::of(key, j.read.as_ref().unwrap_or(&DirStats::default())))
        .collect()
}

/// Measure the planned disks. The survey's own check that it reads only:
/// every job is a read job and every device is opened O_RDONLY.
pub fn execute(host: &Host, opts: &SurveyOpts) -> Result<SurveyReport> {
    let model = HostModel::read(host);
    let (mut classes, skipped) = plan(&model, &opts.devices)?;
    if classes.is_empty() {
        let why = skipped
            .iter()
            .map(|s| format!("{}: {}", s.name, s.reason))
            .collect::<Vec<_>>()
            .join("; ");
        bail!(Fix::new(
            format!(
                "no disk to survey{}",
                if why.is_empty() {
                    String::new()
                } else {
                    format!(" ({why})")
                }
            ),
            "name whole disks that have a size, e.g. innotune bench --survey /dev/sda"
        ));
    }
    let per_job = opts.runtime + opts.ramp;
    let mut survey = Survey {
        dry_run: opts.dry_run,
        runtime_s: opts.runtime.as_secs_f64(),
        ramp_s: opts.ramp.as_secs_f64(),
        jobs: JOBS
            .iter()
            .map(|j| {
                let s = j.spec(j.key, Path::new("DEV"), 1 << 30);
                SurveyJobInfo {
                    job: j.key.into(),
                    options: format!(
                        "rw={} bs={} iodepth={} direct=1",
                        s.rw.as_str(),
                        crate::units::fmt_fio_size(s.bs),
                        s.iodepth
                    ),
                }
            })
            .collect(),
        classes: Vec::new(),
        skipped,
        planned_s: planned(&classes, per_job).as_secs_f64(),
        wall_s: 0.0,
        interrupted: false,
    };
    if opts.dry_run {
        survey.classes = classes;
        return Ok(SurveyReport {
            survey,
            signal: None,
        });
    }
    if !host.is_live() {
        bail!(Fix::new(
            "--survey measures this machine's disks; --root only replays a host tree",
            "add --dry-run to see the plan for that tree, or leave --root out"
        ));
    }
    // Sizes first, so a device that cannot be opened fails before any run:
    // a named one is an error, one found in /sys/block is skipped with why
    // (a host may forbid opening its root disk even to root).
    let mut sizes = Vec::new();
    for c in classes.iter_mut() {
        let mut kept = Vec::new();
        for d in std::mem::take(&mut c.disks) {
            match device_size(Path::new(&d.device)) {
                Ok(sz) => {
                    sizes.push(sz);
                    kept.push(d);
                }
                Err(e) if opts.devices.is_empty() => survey.skipped.push(Skipped {
                    name: d.name,
                    // The problem without its fix: the fix is for a named disk.
                    reason: e
                        .downcast_ref::<Fix>()
                        .map(|f| f.what.clone())
                        .unwrap_or_else(|| crate::error::one_line(&e)),
                }),
                Err(e) => return Err(e),
            }
        }
        c.disks = kept;
    }
    classes.retain(|c| !c.disks.is_empty());
    if classes.is_empty() {
        let why = survey
            .skipped
            .iter()
            .map(|s| format!("{}: {}", s.name, s.reason))
            .next_back()
            .unwrap_or_default();
        bail!(Fix::new(
            format!("no disk of this host could be opened for reading ({why})"),
            "run as root; where the host forbids opening its disks (some VMs and containers), name the disks you may read"
        ));
    }
    survey.planned_s = planned(&classes, per_job).as_secs_f64();
    let interrupt = super::interrupt_flag();
    let win = Window {
        runtime: Some(opts.runtime),
        ramp: opts.ramp,
        progress: opts.progress,
        interrupt: Some(interrupt.clone()),
    };
    let stopped = || interrupt.load(Ordering::Relaxed);
    let t_all = Instant::now();
    super::with_interrupt_signals(|| -> Result<()> {
        let mut sizes = sizes.into_iter();
        for c in classes.iter_mut() {
            let sz: Vec<u64> = c.disks.iter().map(|_| sizes.next().unwrap_or(0)).collect();
            for (d, &size) in c.disks.iter_mut().zip(&sz) {
                let t0 = Instant::now();
                for j in &JOBS {
                    if stopped() {
                        return Ok(());
                    }
                    let dev = PathBuf::from(&d.device);
                    let spec = j.spec(&format!("{}-{}", d.name, j.key), &dev, size);
                    let r = run_jobs(
                        vec![spec],
                        vec![JobFiles::read_only_device(&dev, size)],
                        &win,
                    )?;
                    d.alone.extend(figures(&r, j.key));
                }
                d.alone_wall_s = t0.elapsed().as_secs_f64();
            }
            c.alone_wall_s = c.disks.iter().map(|d| d.alone_wall_s).sum();
            if c.disks.len() < 2 {
                continue;
            }
            let t0 = Instant::now();
            let mut aggregate = Vec::new();
            for j in &JOBS {
                if stopped() {
                    return Ok(());
                }
                let (specs, files): (Vec<_>, Vec<_>) = c
                    .disks
                    .iter()
                    .zip(&sz)
                    .map(|(d, &size)| {
                        let dev = PathBuf::from(&d.device);
                        (
                            j.spec(&format!("{}-{}", d.name, j.key), &dev, size),
                            JobFiles::read_only_device(&dev, size),
                        )
                    })
                    .unzip();
                let r = run_jobs(specs, files, &win)?;
                let figs = figures(&r, j.key);
                let sum_alone: f64 = c
                    .disks
                    .iter()
                    .filter_map(|d| d.alone.iter().find(|f| f.job == j.key))
                    .map(|f| f.iops_per_s)
                    .sum();
                let iops: f64 = figs.iter().map(|f| f.iops_per_s).sum();
                aggregate.push(Aggregate {
                    job: j.key.into(),
                    iops_per_s: iops,
                    bw_bytes_per_s: figs.iter().map(|f| f.bw_bytes_per_s).sum(),
                    sum_alone_iops_per_s: sum_alone,
                    scaling: if sum_alone > 0.0 {
                        iops / sum_alone
                    } else {
                        0.0
                    },
                    worst_clat_p99_ns: figs.iter().map(|f| f.clat_p99_ns).max().unwrap_or(0),
                });
                for (d, f) in c.disks.iter_mut().zip(figs) {
                    d.in_parallel.push(f);
                }
            }
            c.parallel = Some(ParallelRun {
                wall_s: t0.elapsed().as_secs_f64(),
                aggregate,
            });
        }
        Ok(())
    })?;
    survey.wall_s = t_all.elapsed().as_secs_f64();
    survey.interrupted = stopped();
    survey.classes = classes;
    let signal = survey
        .interrupted
        .then(|| crate::command::Stop::process().signal())
        .flatten();
    Ok(SurveyReport { survey, signal })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(tree: &str) -> HostModel {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/hosts")
            .join(tree);
        HostModel::read(&Host::with_root(root))
    }

    fn classes_of(tree: &str) -> Vec<(DiskClass, Vec<String>)> {
        let (cs, _) = plan(&fixture(tree), &[]).unwrap();
        cs.into_iter()
            .map(|c| (c.class, c.disks.into_iter().map(|d| d.name).collect()))
            .collect()
    }

    #[test]
    fn fixture_trees_are_classed() {
        assert_eq!(
            classes_of("nvme-ssd"),
            vec![(DiskClass::Nvme, vec!["nvme0n1".into()])]
        );
        assert_eq!(
            classes_of("hdd-partitions"),
            vec![(DiskClass::Hdd, vec!["sda".into()])]
        );
        assert_eq!(
            classes_of("sata-ssd"),
            vec![(DiskClass::SataSsd, vec!["sda".into()])]
        );
        assert_eq!(
            classes_of("virtio"),
            vec![(DiskClass::Virtual, vec!["vda".into()])]
        );
    }

    /// md members are surveyed as disks (with a note), md0 itself is left
    /// out of a host survey with the reason.
    #[test]
    fn md_members_are_disks_and_the_array_is_skipped() {
        let (cs, skipped) = plan(&fixture("md-raid0"), &[]).unwrap();
        let all: Vec<&SurveyDisk> = cs.iter().flat_map(|c| &c.disks).collect();
        let sda = all.iter().find(|d| d.name == "sda").expect("sda surveyed");
        assert!(
            sda.notes.iter().any(|n| n.contains("member of md0")),
            "{:?}",
            sda.notes
        );
        assert!(all.iter().all(|d| d.name != "md0"));
        let md = skipped
            .iter()
            .find(|s| s.name == "md0")
            .expect("md0 skipped");
        assert!(md.reason.contains("members"), "{}", md.reason);
    }

    #[test]
    fn named_devices_and_refusals() {
        let m = fixture("md-raid0");
        let (cs, _) = plan(&m, &[PathBuf::from("/dev/sdb"), PathBuf::from("sdb")]).unwrap();
        assert_eq!(cs.iter().map(|c| c.disks.len()).sum::<usize>(), 1);
        let e = plan(&m, &[PathBuf::from("/dev/nope0")])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("not a block device") && e.contains("fix:"),
            "{e}"
        );
    }

    #[test]
    fn plan_time_counts_alone_and_parallel_runs() {
        let (cs, _) = plan(&fixture("md-raid0"), &[]).unwrap();
        let disks: usize = cs.iter().map(|c| c.disks.len()).sum();
        let parallel = cs.iter().filter(|c| c.disks.len() > 1).count();
        assert_eq!(
            planned(&cs, Duration::from_secs(1)),
            Duration::from_secs(((disks + parallel) * JOBS.len()) as u64)
        );
    }
}
