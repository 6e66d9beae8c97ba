//! Did a result's I/O reach a device? A figure measured in RAM is not a
//! disk's, and nothing in the figure itself says so: 178 k IOPS of 16 KiB
//! page reads from a loop device whose backing file sat in the page cache
//! look like a fast SSD. Three ways it happens, each flagged in the result
//! (bench, sweep and prove):
//!
//! - the files are on a RAM filesystem (tmpfs, ramfs): no device at all;
//! - a loop device under the files reads and writes its backing file
//!   through the page cache (`/sys/block/loopN/loop/dio` 0, a loop set up
//!   without `--direct-io`): the loop device counts every request, the
//!   disk under its backing file few or none;
//! - the device's own counters (/proc/diskstats over the window) show far
//!   fewer bytes than the jobs moved: buffered reads served by the page
//!   cache, buffered writes still in it when the window closed.
//!
//! Bytes, not I/O counts, are compared: the block layer merges small
//! sequential requests (fewer, larger device I/Os for the same bytes) and
//! splits large ones, and readahead only adds device bytes, so a count
//! would flag a sequential 4 KiB writer on a real disk, bytes do not.

use crate::model::stack::Stack;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Below this share of the bytes the jobs moved, a direction's I/O did not
/// reach the device. O_DIRECT I/O reaches it whole (100 %, more with
/// filesystem metadata); a page-cache hit is 0 %. A tenth leaves room for
/// windows whose counters were read a little before the jobs' last I/O
/// completed, and flags a run served nine-tenths from memory.
pub const MIN_DEVICE_SHARE: f64 = 0.10;

/// One reason a result's I/O did not (all) reach a device. JSON: an object
/// tagged by `why`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum NotOnDevice {
    /// The files are on a RAM filesystem: no device is under them.
    MemoryFilesystem {
        /// `tmpfs` or `ramfs`.
        filesystem: String,
        /// The jobs asked for O_DIRECT (tmpfs accepts it since Linux 6.6:
        /// it still measures memory).
        direct: bool,
    },
    /// A loop device under the files reads and writes its backing file
    /// through the page cache (`loop/dio` 0).
    LoopBuffered {
        /// Kernel name (`loop3`).
        device: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        backing_file: Option<String>,
    },
    /// The device counted less than [`MIN_DEVICE_SHARE`] of the bytes the
    /// jobs read (or wrote) over the window.
    FewDeviceBytes {
        /// The top device under the files (the one the filesystem is on).
        device: String,
        /// sweep and prove: the workload (the median over its trials).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        workload: Option<String>,
        /// `read` or `write`.
        direction: String,
        /// What the jobs moved, per second of the window.
        issued_bytes_per_s: f64,
        /// What the device counted, per second of the same window.
        device_bytes_per_s: f64,
    },
}

impl NotOnDevice {
    /// One sentence for people: what happened and what to do instead.
    pub fn describe(&self) -> String {
        match self {
            NotOnDevice::MemoryFilesystem { filesystem, direct } => format!(
                "the files are on {filesystem}: results are RAM speed{}, not a disk's (bench a directory on the disk's filesystem)",
                if *direct { " even with --direct" } else { "" }
            ),
            NotOnDevice::LoopBuffered {
                device,
                backing_file,
            } => format!(
                "{device} reads and writes its backing file{} through the page cache (loop/dio = 0): its I/O did not reach a device, results are largely RAM speed (attach it with `losetup --direct-io=on`)",
                backing_file
                    .as_ref()
                    .map(|f| format!(" {f}"))
                    .unwrap_or_default()
            ),
            NotOnDevice::FewDeviceBytes {
                device,
                workload,
                direction,
                issued_bytes_per_s,
                device_bytes_per_s,
            } => format!(
                "{}{device} counted {} of the {} the jobs {} ({:.1} %): the rest never reached the device (served from or left in the page cache; use direct=1 to measure the device)",
                workload
                    .as_ref()
                    .map(|w| format!("{w}: "))
                    .unwrap_or_default(),
                rate(*device_bytes_per_s),
                rate(*issued_bytes_per_s),
                if direction == "read" { "read" } else { "wrote" },
                share(*device_bytes_per_s, *issued_bytes_per_s) * 100.0
            ),
        }
    }
}

fn rate(b: f64) -> String {
    format!("{}/s", crate::units::fmt_size(b.max(0.0).round() as u64))
}

fn share(seen: f64, issued: f64) -> f64 {
    if issued > 0.0 {
        seen / issued
    } else {
        1.0
    }
}

/// Loop devices of `stack` whose `loop/dio` reads 0 (read through `Host`
/// when the stack was walked, so a fixture tree replays it). A dio that
/// could not be read flags nothing: this only qualifies results.
pub fn buffered_loops(stack: &Stack) -> Vec<NotOnDevice> {
    stack
        .devices
        .iter()
        .filter_map(|d| {
            let l = d.loop_dev.as_ref()?;
            (l.direct_io.value() == Some(&false)).then(|| NotOnDevice::LoopBuffered {
                device: d.name.clone(),
                backing_file: l.backing_file.value().cloned(),
            })
        })
        .collect()
}

/// The loop devices under `path` on `host` that go through the page cache
/// (see [`buffered_loops`]).
pub fn buffered_loops_under(host: &crate::host::Host, path: &Path) -> Vec<NotOnDevice> {
    buffered_loops(&crate::model::HostModel::read(host).stack_under(path))
}

/// Per direction, `(issued, seen)` bytes per second of one window (or
/// medians over windows): a [`NotOnDevice::FewDeviceBytes`] for each
/// direction whose device share is below [`MIN_DEVICE_SHARE`]. Directions
/// the jobs did not use (`issued` 0) flag nothing.
pub fn few_device_bytes(
    device: &str,
    workload: Option<&str>,
    read: (f64, f64),
    write: (f64, f64),
) -> Vec<NotOnDevice> {
    [("read", read), ("write", write)]
        .into_iter()
        .filter(|(_, (issued, seen))| *issued > 0.0 && share(*seen, *issued) < MIN_DEVICE_SHARE)
        .map(|(dir, (issued, seen))| NotOnDevice::FewDeviceBytes {
            device: device.to_string(),
            workload: workload.map(str::to_string),
            direction: dir.to_string(),
            issued_bytes_per_s: issued,
            device_bytes_per_s: seen,
        })
        .collect()
}

/// tmpfs and ramfs are RAM: O_DIRECT there (tmpfs accepts it since Linux
/// 6.6) still measures memory. statfs of the user's directory (not a
/// /proc or /sys read: the directory's own filesystem magic).
pub fn memory_filesystem(dir: &Path, direct: bool) -> Option<NotOnDevice> {
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    const RAMFS_MAGIC: i64 = 0x8584_58f6;
    let st = rustix::fs::statfs(dir).ok()?;
    #[allow(clippy::unnecessary_cast)]
    let kind = match st.f_type as i64 {
        TMPFS_MAGIC => "tmpfs",
        // ramfs refuses O_DIRECT at open, which says enough on its own.
        RAMFS_MAGIC if !direct => "ramfs",
        _ => return None,
    };
    Some(NotOnDevice::MemoryFilesystem {
        filesystem: kind.into(),
        direct,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::Host;

    fn fixture(name: &str) -> Host {
        Host::with_root(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/hosts")
                .join(name),
        )
    }

    /// loop-on-file: /mnt/db on loop0 (loop/dio 1), /mnt/old on loop1
    /// (loop/dio 0, its backing file deleted). Read through the fixture
    /// root, never the live /sys.
    #[test]
    fn a_loop_without_direct_io_is_read_from_the_fixture_tree() {
        let h = fixture("loop-on-file");
        let old = buffered_loops_under(&h, Path::new("/mnt/old/x"));
        assert_eq!(
            old,
            vec![NotOnDevice::LoopBuffered {
                device: "loop1".into(),
                backing_file: Some("/var/tmp/old.img".into()),
            }]
        );
        assert!(old[0].describe().contains("loop/dio = 0"), "{old:?}");
        assert!(
            buffered_loops_under(&h, Path::new("/mnt/db")).is_empty(),
            "loop0 does direct I/O"
        );
        // No loop device at all under a plain disk.
        assert!(buffered_loops_under(&fixture("virtio"), Path::new("/")).is_empty());
        let j = serde_json::to_value(&old[0]).unwrap();
        assert_eq!(j["why"], "loop_buffered");
        assert_eq!(j["device"], "loop1");
        let back: NotOnDevice = serde_json::from_value(j).unwrap();
        assert_eq!(back, old[0]);
    }

    #[test]
    fn a_direction_below_a_tenth_of_its_bytes_did_not_reach_the_device() {
        // Page-cache reads: 2.8 GB/s issued, 4 KiB/s at the device.
        let f = few_device_bytes("vda", Some("page-read"), (2.8e9, 4096.0), (0.0, 0.0));
        assert_eq!(f.len(), 1);
        let NotOnDevice::FewDeviceBytes {
            direction,
            workload,
            ..
        } = &f[0]
        else {
            panic!("{f:?}")
        };
        assert_eq!(
            (direction.as_str(), workload.as_deref()),
            ("read", Some("page-read"))
        );
        assert!(
            f[0].describe().starts_with("page-read: vda counted"),
            "{}",
            f[0].describe()
        );
        // O_DIRECT: the device sees all of it (and metadata, and readahead).
        assert!(few_device_bytes("vda", None, (1e8, 1e8), (5e7, 6e7)).is_empty());
        // Just above and just below the line.
        assert!(few_device_bytes("vda", None, (1000.0, 100.0), (0.0, 0.0)).is_empty());
        assert_eq!(
            few_device_bytes("vda", None, (1000.0, 99.0), (0.0, 0.0)).len(),
            1
        );
        // Buffered writes still in the page cache when the window closed.
        let w = few_device_bytes("vda", None, (0.0, 0.0), (8.5e9, 0.0));
        assert_eq!(w.len(), 1);
        assert!(w[0].describe().contains("wrote"), "{}", w[0].describe());
        // A direction the jobs did not use flags nothing.
        assert!(few_device_bytes("vda", None, (0.0, 0.0), (0.0, 0.0)).is_empty());
    }
}
