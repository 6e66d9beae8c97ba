//! `innotune bench` flags. Job options carry fio's names (and accept the
//! dashed spelling); each is applied through `job::JobSpec::set`, the same
//! table job files and presets use.

use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  innotune bench --preset page-read --directory /var/lib/bench --runtime 30s
  innotune bench --rw randread --bs 16k --iodepth 32 --direct=1 --size 4g --runtime 60 --directory /data/x
  innotune bench --job-file jobs.toml
  innotune bench --list-presets
  innotune bench --cleanup --directory /data/x
  innotune bench --survey                     # every whole disk, read-only
  innotune bench --survey /dev/sdb /dev/sdc --runtime 10s
  innotune bench --survey --dry-run           # the disks, classes and plan; no I/O

Files are innotune-<job>.<n> in --directory, recorded (inode, owner) in
DIR/.innotune-bench; only those are ever written or removed, never through a
symlink. A manifest owned by another user, or in a directory anyone may write
to without the sticky bit, is ignored with a warning. A directory that is,
is inside or contains a running server's datadir (or the one the option files
name) is refused. Ctrl-C or SIGTERM ends a run early with partial results,
written as usual, and exit 130 or 143 (during layout: the partial file is
removed, exit 2). With --runtime the run is time-based (files
are wrapped around); without it each job transfers --io_size per thread
(default: one pass over its files). --survey reads whole disks (O_RDONLY, O_DIRECT; safe on mounted disks):
sequential 1 MiB at depth 16, 16 KiB random at depth 32 and 1, 4 KiB
random at depth 32, each disk alone, then every disk of a class at once.
It never writes; measure writes on a scratch file (--directory DIR --rw
randwrite). A job's --numjobs threads share its files
(as sysbench's threads do; fio gives each clone its own) and are reported
merged, as fio's group_reporting. Random offsets are uniform and
block-aligned, drawn with replacement (fio's norandommap), the same sequence
on every run (fio's randrepeat=1).")]
pub struct BenchArgs {
    /// Run a preset (see --list-presets); job flags given too override it.
    #[arg(long, value_name = "NAME")]
    pub preset: Option<String>,
    /// List presets with their settings and exit.
    #[arg(long)]
    pub list_presets: bool,
    /// Jobs from a TOML file: a [global] table and [[job]] tables, fio's option names.
    #[arg(long, value_name = "FILE.toml")]
    pub job_file: Option<PathBuf>,
    /// Directory for the job files (must exist).
    #[arg(long, value_name = "DIR")]
    pub directory: Option<PathBuf>,
    /// Remove innotune's files from --directory (after the run, if a job is given).
    #[arg(long)]
    pub cleanup: bool,
    /// Allow a job that writes to write to the raw block device --filename
    /// names (never when mounted); read-only jobs need no consent.
    #[arg(long)]
    pub allow_raw_device: bool,
    /// Allow a --directory that looks like a MySQL/MariaDB data directory.
    #[arg(long)]
    pub allow_datadir: bool,
    /// Survey every whole disk (or the DEVs named) read-only: per-disk
    /// limits and each class's aggregate (--runtime per job, default 5s).
    #[arg(long)]
    pub survey: bool,
    /// With --survey: show the disks, their classes and the plan; read nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// With --survey: the whole disks to survey (default: every one).
    #[arg(value_name = "DEV")]
    pub devices: Vec<PathBuf>,

    /// Job name (names its files).
    #[arg(long)]
    pub name: Option<String>,
    /// read|write|randread|randwrite|randrw|rw.
    #[arg(long)]
    pub rw: Option<String>,
    /// Percent of reads in randrw/rw (default 50).
    #[arg(long)]
    pub rwmixread: Option<String>,
    /// Block size, fio units (16k, 1m; default 4k).
    #[arg(long)]
    pub bs: Option<String>,
    /// I/Os in flight per thread (default 1; > 1 selects io_uring).
    #[arg(long)]
    pub iodepth: Option<String>,
    /// I/Os queued before one submission (fio's; default 1, as fio: each
    /// I/O is submitted as soon as its slot is free; 0 = iodepth).
    #[arg(long = "iodepth_batch_submit", visible_aliases = ["iodepth-batch-submit", "iodepth_batch"], value_name = "N")]
    pub iodepth_batch_submit: Option<String>,
    /// Threads running the job (default 1).
    #[arg(long)]
    pub numjobs: Option<String>,
    /// O_DIRECT; `--direct` or fio's `--direct=1` / `--direct=0`.
    #[arg(long, num_args = 0..=1, default_missing_value = "1", value_name = "0|1")]
    pub direct: Option<String>,
    /// fsync after every N writes of a thread.
    #[arg(long, value_name = "N")]
    pub fsync: Option<String>,
    /// fdatasync after every N writes of a thread.
    #[arg(long, value_name = "N")]
    pub fdatasync: Option<String>,
    /// Open with O_DSYNC; `--sync` or `--sync=1`.
    #[arg(long, num_args = 0..=1, default_missing_value = "1", value_name = "0|1")]
    pub sync: Option<String>,
    /// Measured window (10s, 2m); makes the run time-based.
    #[arg(long)]
    pub runtime: Option<String>,
    /// Warm-up before the window, excluded from results.
    #[arg(long = "ramp_time", visible_alias = "ramp-time")]
    pub ramp_time: Option<String>,
    /// Total size of a job's files (default 1g).
    #[arg(long)]
    pub size: Option<String>,
    /// Bytes each thread transfers when not time-based.
    #[arg(long = "io_size", visible_alias = "io-size")]
    pub io_size: Option<String>,
    /// Number of files the size is split over (default 1).
    #[arg(long)]
    pub nrfiles: Option<String>,
    /// sync|io_uring|auto (default auto: io_uring when iodepth > 1).
    #[arg(long)]
    pub ioengine: Option<String>,
    /// Where the I/O buffers live: malloc (4 KiB pages, fio's default),
    /// mmaphuge (huge pages) or auto (default: huge for I/Os of 128 KiB and
    /// up, or from 2 MiB of buffers per thread, e.g. 64 KiB x depth 32).
    #[arg(long, visible_alias = "iomem", value_name = "MEM")]
    pub mem: Option<String>,
    /// A raw block device instead of files (a job that writes needs
    /// --allow-raw-device; reads open it read-only).
    #[arg(long, value_name = "DEV")]
    pub filename: Option<PathBuf>,
}

impl BenchArgs {
    /// The job options given on the command line, as (fio name, value).
    pub fn job_options(&self) -> Vec<(&'static str, String)> {
        let mut v = Vec::new();
        let mut put = |k: &'static str, o: &Option<String>| {
            if let Some(x) = o {
                v.push((k, x.clone()));
            }
        };
        put("rw", &self.rw);
        put("rwmixread", &self.rwmixread);
        put("bs", &self.bs);
        put("iodepth", &self.iodepth);
        put("iodepth_batch_submit", &self.iodepth_batch_submit);
        put("numjobs", &self.numjobs);
        put("direct", &self.direct);
        put("fsync", &self.fsync);
        put("fdatasync", &self.fdatasync);
        put("sync", &self.sync);
        put("size", &self.size);
        put("io_size", &self.io_size);
        put("nrfiles", &self.nrfiles);
        put("ioengine", &self.ioengine);
        put("mem", &self.mem);
        if let Some(f) = &self.filename {
            v.push(("filename", f.display().to_string()));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::job::{Scope, OPTIONS};
    use clap::{Args, Command, FromArgMatches};

    fn command() -> Command {
        BenchArgs::augment_args(Command::new("bench"))
    }

    /// Option names live in three places (the table, the clap fields and
    /// `job_options`); this ties them: every table option is a flag of the
    /// same name, and every job option given on a command line reaches
    /// `JobSpec::set` under its table name.
    #[test]
    fn flags_match_the_option_table() {
        let cmd = command();
        for o in OPTIONS {
            let found = cmd.get_arguments().any(|a| {
                a.get_long() == Some(o.name)
                    || a.get_long() == Some(&o.name.replace('_', "-"))
                    || a.get_visible_aliases().is_some_and(|v| v.contains(&o.name))
            });
            assert!(found, "option {} has no --{} flag", o.name, o.name);
        }
        let job_opts: Vec<&str> = OPTIONS
            .iter()
            .filter(|o| o.scope == Scope::Job && o.name != "name")
            .map(|o| o.name)
            .collect();
        let mut argv = vec!["bench".to_string()];
        for n in &job_opts {
            argv.push(format!("--{n}=1"));
        }
        let m = command().try_get_matches_from(&argv).unwrap();
        let args = BenchArgs::from_arg_matches(&m).unwrap();
        let given: Vec<&str> = args.job_options().iter().map(|(k, _)| *k).collect();
        let mut want = job_opts.clone();
        want.sort_unstable();
        let mut got = given.clone();
        got.sort_unstable();
        assert_eq!(got, want, "job_options() misses or adds a table option");
        // And no job-scoped flag exists that the table does not know.
        for a in command().get_arguments() {
            let Some(long) = a.get_long() else { continue };
            let known = crate::bench::job::canonical(long).is_some()
                || [
                    "preset",
                    "list-presets",
                    "job-file",
                    "cleanup",
                    "allow-raw-device",
                    "allow-datadir",
                    "survey",
                    "dry-run",
                ]
                .contains(&long);
            assert!(known, "--{long} is neither in OPTIONS nor a command flag");
        }
    }
}
