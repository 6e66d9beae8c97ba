//! Presets: the measurements the practice already makes, named for what they
//! model. Each is a list of `key=value` settings in fio's names, applied with
//! [`JobSpec::set`], so `--list-presets` prints exactly what runs.

use super::job::JobSpec;
use anyhow::Result;
use std::time::Duration;

pub struct Preset {
    pub name: &'static str,
    pub models: &'static str,
    /// One entry per job (jobs of a preset run together).
    pub jobs: &'static [&'static [(&'static str, &'static str)]],
}

/// Measured window when the user gives neither `--runtime` nor `--io_size`.
pub const DEFAULT_RUNTIME: Duration = Duration::from_secs(30);

pub const PRESETS: &[Preset] = &[
    Preset {
        name: "page-read",
        models: "InnoDB page reads: 16 KiB random reads, 24 threads, O_DIRECT (sysbench fileio rndrd)",
        jobs: &[&[
            ("name", "page-read"),
            ("rw", "randread"),
            ("bs", "16k"),
            ("numjobs", "24"),
            ("iodepth", "1"),
            ("direct", "1"),
        ]],
    },
    Preset {
        name: "page-write",
        models: "InnoDB page flushing: 16 KiB random writes, 24 threads, O_DIRECT (sysbench fileio rndwr)",
        jobs: &[&[
            ("name", "page-write"),
            ("rw", "randwrite"),
            ("bs", "16k"),
            ("numjobs", "24"),
            ("iodepth", "1"),
            ("direct", "1"),
        ]],
    },
    Preset {
        name: "fsync-4k",
        models: "commit latency: 4 KiB random writes, fsync after each, depth 1, O_DIRECT",
        jobs: &[&[
            ("name", "fsync-4k"),
            ("rw", "randwrite"),
            ("bs", "4k"),
            ("iodepth", "1"),
            ("numjobs", "1"),
            ("direct", "1"),
            ("fsync", "1"),
        ]],
    },
    Preset {
        name: "redo",
        models: "redo log: sequential 512-byte-aligned appends into a preallocated file, fdatasync per commit group (one 512 B log block per group, buffered as MySQL writes redo)",
        jobs: &[&[
            ("name", "redo"),
            ("rw", "write"),
            ("bs", "512"),
            ("iodepth", "1"),
            ("numjobs", "1"),
            ("direct", "0"),
            ("fdatasync", "1"),
            ("size", "256m"),
        ]],
    },
    Preset {
        name: "seq-read",
        models: "device read throughput: 1 MiB sequential reads, depth 16, O_DIRECT",
        jobs: &[&[
            ("name", "seq-read"),
            ("rw", "read"),
            ("bs", "1m"),
            ("iodepth", "16"),
            ("numjobs", "1"),
            ("direct", "1"),
        ]],
    },
    Preset {
        name: "seq-write",
        models: "device write throughput: 1 MiB sequential writes, depth 16, O_DIRECT",
        jobs: &[&[
            ("name", "seq-write"),
            ("rw", "write"),
            ("bs", "1m"),
            ("iodepth", "16"),
            ("numjobs", "1"),
            ("direct", "1"),
        ]],
    },
    Preset {
        name: "mixed",
        models: "page reads during a flush storm: 16 KiB random reads at depth 1 while a 1 MiB sequential writer (4 KiB-page buffers, as InnoDB's) runs at depth 32",
        jobs: &[
            &[
                ("name", "mixed-read"),
                ("rw", "randread"),
                ("bs", "16k"),
                ("iodepth", "1"),
                ("numjobs", "1"),
                ("direct", "1"),
            ],
            &[
                ("name", "mixed-write"),
                ("rw", "write"),
                ("bs", "1m"),
                ("iodepth", "32"),
                ("numjobs", "1"),
                ("direct", "1"),
                // 4 KiB pages, not `mem=auto`'s huge pages for its 32 MiB of
                // buffers: InnoDB flushes from a buffer pool on 4 KiB pages
                // (without large_pages), fio's default is malloc, and this
                // is the writer that found none's read p99 far below
                // mq-deadline's on this VM (2026-11-23, before huge pages
                // existed). On huge pages each 1 MiB write reaches the disk
                // as one request instead of two 512 KiB ones and the writer
                // runs faster (bench/engine-variants/write-shape.sh), and the
                // effect vanished (bench/RESULTS.md, 2026-11-26 10:51, 11:27).
                ("mem", "malloc"),
            ],
        ],
    },
];

pub fn find(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

impl Preset {
    /// The preset's jobs, built through the same option table as the CLI.
    pub fn jobs(&self) -> Result<Vec<JobSpec>> {
        self.jobs
            .iter()
            .map(|settings| {
                let mut j = JobSpec::default();
                for (k, v) in settings.iter() {
                    j.set(k, v)?;
                }
                Ok(j)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::job::Rw;

    #[test]
    fn every_preset_builds_and_validates() {
        for p in PRESETS {
            let jobs = p.jobs().unwrap();
            assert!(!jobs.is_empty(), "{}", p.name);
            for j in &jobs {
                j.validate().unwrap();
            }
        }
        let mixed = find("mixed").unwrap().jobs().unwrap();
        assert_eq!(mixed.len(), 2);
        assert_eq!(
            (mixed[0].rw, mixed[0].bs, mixed[0].iodepth),
            (Rw::RandRead, 16384, 1)
        );
        assert_eq!(
            (mixed[1].rw, mixed[1].bs, mixed[1].iodepth),
            (Rw::Write, 1 << 20, 32)
        );
        // The writer on 4 KiB pages (see the preset), the reader's 16 KiB
        // buffer on them anyway.
        assert!(!mixed[1].huge_buffers(32) && !mixed[0].huge_buffers(1));
        let pr = find("page-read").unwrap().jobs().unwrap();
        assert_eq!((pr[0].numjobs, pr[0].direct), (24, true));
    }
}
