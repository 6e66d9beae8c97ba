//! Typed job description and the one table of option names.
//!
//! As in fio, job options are data: [`OPTIONS`] lists every name a job
//! accepts, and [`JobSpec::set`] is the only place a value is parsed, so the
//! command line, presets and TOML job files cannot disagree about a name or
//! its units.

use crate::error::Fix;
use crate::units::{fmt_fio_size, fmt_size, parse_size};
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// fio's `rw=` values we implement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rw {
    Read,
    Write,
    RandRead,
    RandWrite,
    RandRw,
    /// Sequential mixed reads and writes (fio's `rw=rw` / `readwrite`).
    ReadWrite,
}

impl Rw {
    pub fn parse(s: &str) -> Result<Rw> {
        Ok(match s {
            "read" => Rw::Read,
            "write" => Rw::Write,
            "randread" => Rw::RandRead,
            "randwrite" => Rw::RandWrite,
            "randrw" => Rw::RandRw,
            "rw" | "readwrite" => Rw::ReadWrite,
            _ => bail!(Fix::new(
                format!("unknown rw mode {s:?}"),
                "use read, write, randread, randwrite, randrw or rw"
            )),
        })
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Rw::Read => "read",
            Rw::Write => "write",
            Rw::RandRead => "randread",
            Rw::RandWrite => "randwrite",
            Rw::RandRw => "randrw",
            Rw::ReadWrite => "rw",
        }
    }
    pub fn is_random(self) -> bool {
        matches!(self, Rw::RandRead | Rw::RandWrite | Rw::RandRw)
    }
    /// Share of reads in percent, given the job's `rwmixread`.
    pub fn read_pct(self, rwmixread: u32) -> u32 {
        match self {
            Rw::Read | Rw::RandRead => 100,
            Rw::Write | Rw::RandWrite => 0,
            Rw::RandRw | Rw::ReadWrite => rwmixread,
        }
    }
    pub fn writes(self, rwmixread: u32) -> bool {
        self.read_pct(rwmixread) < 100
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// io_uring when iodepth > 1, else sync.
    Auto,
    /// pread/pwrite, one I/O in flight per thread (fio's psync).
    Sync,
    IoUring,
}

impl EngineKind {
    pub fn parse(s: &str) -> Result<EngineKind> {
        Ok(match s {
            "auto" => EngineKind::Auto,
            "sync" | "psync" => EngineKind::Sync,
            "io_uring" | "io-uring" | "uring" => EngineKind::IoUring,
            _ => bail!(Fix::new(
                format!("unknown ioengine {s:?}"),
                "use sync, io_uring or auto"
            )),
        })
    }
    pub fn as_str(self) -> &'static str {
        match self {
            EngineKind::Auto => "auto",
            EngineKind::Sync => "sync",
            EngineKind::IoUring => "io_uring",
        }
    }
}

/// Where a thread's I/O buffers live (fio's `mem`).
///
/// The layout decides what reaches the device: a 1 MiB I/O from 4 KiB pages
/// is a list of up to 256 page segments, and a loop device (128 segments at
/// most) split each into two 512 KiB requests here, where fio's buffers
/// happened to be contiguous enough to stay whole (measured with
/// /sys/block/loopN/stat: bench/RESULTS.md, "request shape"). On huge pages
/// a 1 MiB I/O is one segment, whatever the allocator did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mem {
    /// Huge pages when each I/O is 128 KiB or larger, or the thread's
    /// buffers add up to 2 MiB or more; 4 KiB pages for smaller I/Os at
    /// shallower depths (16 KiB pages, say), where rounding up to a huge page
    /// bought nothing measurable.
    #[default]
    Auto,
    /// 4 KiB pages (fio's default, `malloc`).
    Malloc,
    /// Transparent huge pages (fio's `mmaphuge` uses hugetlbfs pages, which
    /// must be reserved first; THP needs no reservation and falls back to
    /// 4 KiB pages where the kernel has it off).
    Mmaphuge,
}

impl Mem {
    pub fn parse(s: &str) -> Result<Mem> {
        Ok(match s {
            "auto" => Mem::Auto,
            "malloc" => Mem::Malloc,
            "mmaphuge" | "shmhuge" | "huge" => Mem::Mmaphuge,
            _ => bail!(Fix::new(
                format!("unknown mem {s:?}"),
                "use malloc (4 KiB pages), mmaphuge (huge pages) or auto"
            )),
        })
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Mem::Auto => "auto",
            Mem::Malloc => "malloc",
            Mem::Mmaphuge => "mmaphuge",
        }
    }
    fn is_auto(&self) -> bool {
        *self == Mem::Auto
    }
}

/// One job: `numjobs` threads doing the same kind of I/O on the job's files.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobSpec {
    pub name: String,
    pub rw: Rw,
    pub rwmixread: u32,
    pub bs: u64,
    pub iodepth: u32,
    /// I/Os queued before they are submitted (fio's `iodepth_batch_submit`,
    /// default 1: each I/O goes to the kernel as soon as its slot is free).
    #[serde(default = "one")]
    pub iodepth_batch_submit: u32,
    pub numjobs: u32,
    pub direct: bool,
    /// fsync after every N writes of a thread (0 = never).
    pub fsync: u64,
    /// fdatasync after every N writes of a thread (0 = never).
    pub fdatasync: u64,
    /// Open with O_DSYNC (fio's `sync=1`).
    pub sync: bool,
    /// Total size of the job's files (split over `nrfiles`).
    pub size: u64,
    /// Bytes each thread transfers when the run is not time-based
    /// (default: `size / numjobs`, i.e. one pass over the files per job).
    pub io_size: Option<u64>,
    pub nrfiles: u32,
    pub ioengine: EngineKind,
    /// Where the I/O buffers live (fio's `mem`; absent in JSON when auto).
    #[serde(default, skip_serializing_if = "Mem::is_auto")]
    pub mem: Mem,
    /// A raw block device (or one named file) instead of laid-out files.
    pub filename: Option<PathBuf>,
}

fn one() -> u32 {
    1
}

impl Default for JobSpec {
    fn default() -> Self {
        JobSpec {
            name: "job".into(),
            rw: Rw::Read,
            rwmixread: 50,
            bs: 4096,
            iodepth: 1,
            iodepth_batch_submit: 1,
            numjobs: 1,
            direct: false,
            fsync: 0,
            fdatasync: 0,
            sync: false,
            size: 1 << 30,
            io_size: None,
            nrfiles: 1,
            ioengine: EngineKind::Auto,
            mem: Mem::Auto,
            filename: None,
        }
    }
}

/// Files per job: each thread opens all of them, so this bounds the
/// descriptors a run holds (threads × files).
pub const MAX_NRFILES: u64 = 1 << 16;

/// Where an option may appear.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Per job (may differ between the jobs of a workload).
    Job,
    /// Applies to the whole workload (all jobs run in one window).
    Workload,
}

/// One job option: name (fio's), scope and help.
pub struct OptDef {
    pub name: &'static str,
    pub scope: Scope,
    pub help: &'static str,
}

/// Every option a job accepts, by fio's name. CLI flags, `--list-presets`
/// and TOML keys use exactly these.
pub const OPTIONS: &[OptDef] = &[
    OptDef {
        name: "name",
        scope: Scope::Job,
        help: "job name (also names its files)",
    },
    OptDef {
        name: "rw",
        scope: Scope::Job,
        help: "read|write|randread|randwrite|randrw|rw",
    },
    OptDef {
        name: "rwmixread",
        scope: Scope::Job,
        help: "percent of reads in randrw/rw",
    },
    OptDef {
        name: "bs",
        scope: Scope::Job,
        help: "block size (16k, 1m)",
    },
    OptDef {
        name: "iodepth",
        scope: Scope::Job,
        help: "I/Os in flight per thread",
    },
    OptDef {
        name: "iodepth_batch_submit",
        scope: Scope::Job,
        help: "I/Os queued before one submission (default 1, 0 = iodepth)",
    },
    OptDef {
        name: "numjobs",
        scope: Scope::Job,
        help: "threads running this job",
    },
    OptDef {
        name: "direct",
        scope: Scope::Job,
        help: "O_DIRECT (1/0)",
    },
    OptDef {
        name: "fsync",
        scope: Scope::Job,
        help: "fsync every N writes",
    },
    OptDef {
        name: "fdatasync",
        scope: Scope::Job,
        help: "fdatasync every N writes",
    },
    OptDef {
        name: "sync",
        scope: Scope::Job,
        help: "O_DSYNC (1/0)",
    },
    OptDef {
        name: "size",
        scope: Scope::Job,
        help: "total size of the job's files",
    },
    OptDef {
        name: "io_size",
        scope: Scope::Job,
        help: "bytes per thread when not time-based",
    },
    OptDef {
        name: "nrfiles",
        scope: Scope::Job,
        help: "files the size is split over",
    },
    OptDef {
        name: "ioengine",
        scope: Scope::Job,
        help: "sync|io_uring|auto",
    },
    OptDef {
        name: "mem",
        scope: Scope::Job,
        help: "I/O buffers on malloc (4 KiB pages), mmaphuge (huge pages) or auto (huge from 128 KiB I/Os or 2 MiB of buffers)",
    },
    OptDef {
        name: "filename",
        scope: Scope::Job,
        help: "raw block device to use instead of files",
    },
    OptDef {
        name: "runtime",
        scope: Scope::Workload,
        help: "measured window (time-based)",
    },
    OptDef {
        name: "ramp_time",
        scope: Scope::Workload,
        help: "warm-up excluded from results",
    },
    OptDef {
        name: "directory",
        scope: Scope::Workload,
        help: "where the files live",
    },
];

/// Canonical option name: accepts fio's underscores and the dashed spelling.
pub fn canonical(key: &str) -> Option<&'static OptDef> {
    let mut k = key.replace('-', "_");
    // fio's older name for the same option.
    if k == "iodepth_batch" {
        k = "iodepth_batch_submit".into();
    }
    if k == "iomem" {
        k = "mem".into();
    }
    OPTIONS.iter().find(|o| o.name == k)
}

fn parse_bool(key: &str, v: &str) -> Result<bool> {
    match v {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => bail!(Fix::new(
            format!("{key}={v:?} is not a boolean"),
            format!("use {key}=1 or {key}=0")
        )),
    }
}

fn parse_count(key: &str, v: &str, min: u64) -> Result<u64> {
    match v.trim().parse::<u64>() {
        Ok(n) if n >= min => Ok(n),
        _ => bail!(Fix::new(
            format!("{key}={v:?} is not a whole number >= {min}"),
            format!("give {key} as a number such as {}", min.max(1))
        )),
    }
}

/// A count in `min..=max`: `{key}={n} is too {what}` above it.
fn parse_range(key: &str, v: &str, min: u64, max: u64, what: &str, note: &str) -> Result<u32> {
    let n = parse_count(key, v, min)?;
    if n > max {
        bail!(Fix::new(
            format!("{key}={n} is too {what}"),
            format!("use {min}..{max}{note}")
        ));
    }
    Ok(n as u32)
}

fn parse_sz(key: &str, v: &str) -> Result<u64> {
    parse_size(v).map_err(|e| {
        anyhow::Error::new(Fix::new(
            format!("{key}: {e}"),
            format!("give {key} like 16k, 1m or 4g"),
        ))
    })
}

impl JobSpec {
    /// Set one job-scoped option from its text form (CLI or TOML).
    pub fn set(&mut self, key: &str, v: &str) -> Result<()> {
        let Some(def) = canonical(key) else {
            bail!(Fix::new(
                format!("unknown job option {key:?}"),
                "see `innotune bench --help` for the option names (fio's)"
            ));
        };
        match def.name {
            "name" => {
                if v.is_empty() || v.contains('/') || v.starts_with('.') {
                    bail!(Fix::new(
                        format!("job name {v:?} cannot name a file"),
                        "use letters, digits, '-' or '_'"
                    ));
                }
                self.name = v.to_string()
            }
            "rw" => self.rw = Rw::parse(v)?,
            "rwmixread" => {
                let n = parse_count(key, v, 0)?;
                if n > 100 {
                    bail!(Fix::new(
                        format!("rwmixread={n} is over 100"),
                        "give a percentage 0..100"
                    ));
                }
                self.rwmixread = n as u32
            }
            "bs" => {
                let b = parse_sz(key, v)?;
                if b < 512 || b % 512 != 0 || b > (64 << 20) {
                    bail!(Fix::new(
                        format!("bs={v} must be a multiple of 512 bytes, at most 64m"),
                        "use a block size such as 4k, 16k or 1m"
                    ));
                }
                self.bs = b
            }
            "iodepth" => self.iodepth = parse_range(key, v, 1, 4096, "deep", "")?,
            "iodepth_batch_submit" => {
                self.iodepth_batch_submit =
                    parse_range(key, v, 0, 4096, "large", " (0 = the job's iodepth)")?
            }
            "numjobs" => self.numjobs = parse_range(key, v, 1, 1024, "many", "")?,
            "direct" => self.direct = parse_bool(key, v)?,
            "fsync" => self.fsync = parse_count(key, v, 0)?,
            "fdatasync" => self.fdatasync = parse_count(key, v, 0)?,
            "sync" => self.sync = parse_bool(key, v)?,
            "size" => {
                let s = parse_sz(key, v)?;
                if s == 0 {
                    bail!(Fix::new("size=0", "give the files a size such as 1g"));
                }
                self.size = s
            }
            "io_size" => self.io_size = Some(parse_sz(key, v)?),
            "nrfiles" => {
                let n = parse_count(key, v, 1)?;
                if n > MAX_NRFILES {
                    bail!(Fix::new(
                        format!("nrfiles={n} is too many files for one job"),
                        format!("use 1..{MAX_NRFILES}")
                    ));
                }
                self.nrfiles = n as u32
            }
            "ioengine" => self.ioengine = EngineKind::parse(v)?,
            "mem" => self.mem = Mem::parse(v)?,
            "filename" => self.filename = Some(PathBuf::from(v)),
            other => bail!(Fix::new(
                format!("{other} applies to the whole workload, not to one job"),
                format!("set {other} once (CLI flag or the [global] table of the job file)")
            )),
        }
        Ok(())
    }

    /// Check that the options make a runnable job.
    pub fn validate(&self) -> Result<()> {
        if self.filename.is_none() {
            let per_file = self.size / self.nrfiles as u64;
            if per_file < self.bs {
                bail!(Fix::new(
                    format!(
                        "job {}: each of {} files would hold {} (size/nrfiles), less than bs={}",
                        self.name,
                        self.nrfiles,
                        fmt_size(per_file),
                        fmt_size(self.bs)
                    ),
                    "raise --size or lower --nrfiles/--bs"
                ));
            }
        }
        if self.fsync > 0 && self.fdatasync > 0 {
            bail!(Fix::new(
                format!("job {}: both fsync and fdatasync are set", self.name),
                "choose one of --fsync N or --fdatasync N"
            ));
        }
        Ok(())
    }

    /// The engine this job will use (auto → io_uring when iodepth > 1).
    pub fn engine(&self) -> EngineKind {
        match self.ioengine {
            EngineKind::Auto if self.iodepth > 1 => EngineKind::IoUring,
            EngineKind::Auto => EngineKind::Sync,
            e => e,
        }
    }

    /// I/Os queued before one submission: fio's rule, 0 means iodepth and
    /// a batch never exceeds the depth.
    pub fn submit_batch(&self) -> usize {
        match self.iodepth_batch_submit {
            0 => self.iodepth as usize,
            n => n.min(self.iodepth) as usize,
        }
    }

    /// Whether a thread's `depth` buffers of `bs` go on huge pages.
    pub fn huge_buffers(&self, depth: usize) -> bool {
        match self.mem {
            Mem::Auto => {
                self.bs as usize >= crate::bench::engine::HUGE_IO_FROM
                    || self.bs as usize * depth >= crate::bench::engine::HUGE_BUFFERS_FROM
            }
            Mem::Malloc => false,
            Mem::Mmaphuge => true,
        }
    }

    /// Bytes of one file of the job.
    pub fn file_size(&self) -> u64 {
        // Whole blocks only, so every offset is a full, aligned block.
        (self.size / self.nrfiles as u64) / self.bs * self.bs
    }

    /// The job's settings in fio's `key=value` form, for `--list-presets`
    /// and the text report header. Sizes as fio reads them (`16k`, never
    /// `16KiB`, which fio would read as 16000: see [`crate::units`]).
    pub fn describe(&self) -> String {
        let mut s = format!(
            "rw={} bs={} iodepth={} numjobs={} direct={} size={} nrfiles={}",
            self.rw.as_str(),
            fmt_fio_size(self.bs),
            self.iodepth,
            self.numjobs,
            self.direct as u8,
            fmt_fio_size(self.size),
            self.nrfiles
        );
        if matches!(self.rw, Rw::RandRw | Rw::ReadWrite) {
            s += &format!(" rwmixread={}", self.rwmixread);
        }
        if self.mem != Mem::Auto {
            s += &format!(" mem={}", self.mem.as_str());
        }
        if self.iodepth_batch_submit != 1 && self.iodepth > 1 {
            s += &format!(" iodepth_batch_submit={}", self.iodepth_batch_submit);
        }
        if self.fsync > 0 {
            s += &format!(" fsync={}", self.fsync);
        }
        if self.fdatasync > 0 {
            s += &format!(" fdatasync={}", self.fdatasync);
        }
        if self.sync {
            s += " sync=1";
        }
        if let Some(io) = self.io_size {
            s += &format!(" io_size={}", fmt_fio_size(io));
        }
        if self.ioengine != EngineKind::Auto {
            s += &format!(" ioengine={}", self.ioengine.as_str());
        }
        if let Some(f) = &self.filename {
            s += &format!(" filename={}", f.display());
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_uses_fio_names_and_units() {
        let mut j = JobSpec::default();
        j.set("rw", "randrw").unwrap();
        j.set("bs", "16k").unwrap();
        j.set("io-size", "1m").unwrap();
        j.set("ramp_time", "1").unwrap_err();
        j.set("direct", "1").unwrap();
        assert_eq!(j.rw, Rw::RandRw);
        assert_eq!(j.bs, 16384);
        assert_eq!(j.io_size, Some(1 << 20));
        assert!(j.direct);
        assert!(j.set("bs", "1000").is_err());
        assert!(j.set("rwmixread", "101").is_err());
        assert!(j.set("iodepth", "0").is_err());
        assert!(j.set("bogus", "1").is_err());
        assert!(j.set("name", "../x").is_err());
    }

    /// fio reads `16KiB` as 16000 bytes; the settings string says `16k`.
    #[test]
    fn describe_uses_fio_sizes() {
        let mut j = JobSpec::default();
        j.set("bs", "16KiB").unwrap();
        j.set("size", "256m").unwrap();
        j.set("io_size", "1536k").unwrap();
        let d = j.describe();
        assert!(d.contains("bs=16k ") && d.contains("size=256m"), "{d}");
        assert!(d.contains("io_size=1536k"), "{d}");
        assert!(!d.contains("iB"), "{d}");
    }

    /// Was silently capped at 65536.
    #[test]
    fn too_many_files_is_an_error() {
        let mut j = JobSpec::default();
        j.set("nrfiles", "65536").unwrap();
        let e = j.set("nrfiles", "100000").unwrap_err().to_string();
        assert!(
            e.contains("nrfiles=100000") && e.contains("1..65536"),
            "{e}"
        );
        assert_eq!(j.nrfiles, 65536);
    }

    #[test]
    fn auto_engine_follows_depth() {
        let mut j = JobSpec::default();
        assert_eq!(j.engine(), EngineKind::Sync);
        j.iodepth = 32;
        assert_eq!(j.engine(), EngineKind::IoUring);
        j.ioengine = EngineKind::Sync;
        assert_eq!(j.engine(), EngineKind::Sync);
    }

    #[test]
    fn mem_follows_fio_and_auto_goes_huge_from_128_kib_ios_or_2_mib() {
        let mut j = JobSpec::default();
        j.set("bs", "1m").unwrap();
        assert!(j.huge_buffers(2), "1 MiB x 2 = 2 MiB: huge");
        assert!(
            j.huge_buffers(1),
            "1 MiB x 1: huge, or a loop device splits it"
        );
        j.set("bs", "128k").unwrap();
        assert!(j.huge_buffers(1), "128 KiB x 1: huge");
        j.set("bs", "64k").unwrap();
        assert!(!j.huge_buffers(16), "64 KiB x 16 = 1 MiB: 4 KiB pages");
        assert!(j.huge_buffers(32), "64 KiB x 32 = 2 MiB: huge");
        j.set("bs", "16k").unwrap();
        assert!(!j.huge_buffers(32), "16 KiB x 32 = 512 KiB: 4 KiB pages");
        j.set("iomem", "mmaphuge").unwrap();
        assert!(j.huge_buffers(1));
        assert!(j.describe().contains("mem=mmaphuge"));
        j.set("mem", "malloc").unwrap();
        j.set("bs", "1m").unwrap();
        assert!(!j.huge_buffers(64));
        assert!(j.describe().contains("mem=malloc"));
        j.set("mem", "auto").unwrap();
        assert!(!j.describe().contains("mem="));
        let e = j.set("mem", "cudamalloc").unwrap_err().to_string();
        assert!(e.contains("mem") && e.contains("malloc"), "{e}");
        // JSON: absent when auto (older readers unchanged), named otherwise.
        let v = serde_json::to_value(&j).unwrap();
        assert!(v.get("mem").is_none());
        j.set("mem", "huge").unwrap();
        assert_eq!(serde_json::to_value(&j).unwrap()["mem"], "mmaphuge");
    }

    #[test]
    fn submit_batch_follows_fio() {
        let mut j = JobSpec::default();
        j.set("iodepth", "32").unwrap();
        assert_eq!(j.submit_batch(), 1, "fio's default: submit each I/O");
        j.set("iodepth_batch", "8").unwrap();
        assert_eq!((j.iodepth_batch_submit, j.submit_batch()), (8, 8));
        j.set("iodepth-batch-submit", "0").unwrap();
        assert_eq!(j.submit_batch(), 32, "0 means iodepth");
        j.set("iodepth_batch_submit", "64").unwrap();
        assert_eq!(j.submit_batch(), 32, "never more than the depth");
        assert!(j.describe().contains("iodepth_batch_submit=64"));
        let e = j.set("iodepth_batch_submit", "x").unwrap_err().to_string();
        assert!(e.contains("iodepth_batch_submit"), "{e}");
        assert!(j.set("iodepth_batch_submit", "5000").is_err());
    }

    #[test]
    fn file_size_is_whole_blocks() {
        let j = JobSpec {
            size: 10 * 16384 + 100,
            bs: 16384,
            nrfiles: 3,
            ..JobSpec::default()
        };
        assert_eq!(j.file_size(), 3 * 16384);
        j.validate().unwrap();
    }
}
