//! The files a job does I/O on: laid out by real writes, marked as ours,
//! reused when still valid, and removed only if ours (the ownership rules
//! are in [`super::manifest`]); or a raw block device, claimed exclusively.

use super::job::JobSpec;
use super::manifest::{self, Dir, Identity, Loaded, Manifest};
use crate::error::Fix;
use crate::units::fmt_size;
use anyhow::{bail, Result};
use manifest::io_fix;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::fd::OwnedFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

pub use manifest::{cleanup, MANIFEST};

/// Names whose presence says "this is a MySQL/MariaDB data directory".
const DATADIR_MARKERS: &[&str] = &[
    "ibdata1",
    "ib_logfile0",
    "#innodb_redo",
    "aria_log_control",
    "ibtmp1",
    "mysql",
    "undo001",
    "auto.cnf",
    "mysql.ibd",
];

/// Files only a server's datadir holds (no schema directories, no table
/// files: `/var/lib` has a `mysql/` and a scratch dir may hold a copied .ibd).
const STRONG_MARKERS: &[&str] = &[
    "ibdata1",
    "ib_logfile0",
    "#innodb_redo",
    "aria_log_control",
    "mysql.ibd",
];

/// Why `dir` looks like a datadir, if it does.
pub fn datadir_evidence(dir: &Path) -> Option<String> {
    for m in DATADIR_MARKERS {
        if dir.join(m).exists() {
            return Some((*m).to_string());
        }
    }
    let rd = fs::read_dir(dir).ok()?;
    for e in rd.flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        if n.ends_with(".ibd") || n.ends_with(".frm") || n.ends_with(".MYD") {
            return Some(n);
        }
    }
    None
}

/// Check the directory before anything is written to it.
pub fn check_dir(dir: &Path, allow_datadir: bool) -> Result<()> {
    let md = fs::metadata(dir).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Fix::new(
            format!("directory {} does not exist", dir.display()),
            "create it first, or give another --directory",
        )
        .into(),
        _ => io_fix(e, dir, "open"),
    })?;
    if !md.is_dir() {
        bail!(Fix::new(
            format!("{} is not a directory", dir.display()),
            "give --directory a directory (or --filename a block device)"
        ));
    }
    if !allow_datadir {
        if let Some(ev) = datadir_evidence(dir) {
            bail!(Fix::new(
                format!(
                    "{} looks like a MySQL data directory (it has {ev})",
                    dir.display()
                ),
                "use an empty directory on the same filesystem, or pass --allow-datadir"
            ));
        }
        // A subdirectory of a datadir is a schema to the server.
        let parent = fs::canonicalize(dir)
            .ok()
            .and_then(|c| c.parent().map(Path::to_path_buf));
        if let Some(p) = parent {
            if let Some(ev) = STRONG_MARKERS.iter().find(|m| p.join(m).exists()) {
                bail!(Fix::new(
                    format!(
                        "{} is inside what looks like a MySQL data directory ({} has {ev})",
                        dir.display(),
                        p.display()
                    ),
                    "use a directory outside the datadir, or pass --allow-datadir"
                ));
            }
        }
    }
    Ok(())
}

/// What a job's threads open.
#[derive(Debug)]
pub struct JobFiles {
    pub paths: Vec<PathBuf>,
    /// Usable bytes of each file (whole blocks).
    pub file_size: u64,
    /// A raw block device (no layout, no manifest).
    pub raw: bool,
    /// Device and inode each laid-out file had when it was verified as
    /// innotune's; every open must find the same (none for a raw device).
    pub identity: Vec<Identity>,
    /// For a raw device: an O_EXCL handle held for the whole run, so nobody
    /// can mount it while we write to it.
    _excl: Option<File>,
    /// Every open is O_RDONLY; [`JobFiles::open`] refuses a write open.
    /// Set for `bench --survey`'s devices, which may be mounted and in use.
    read_only: bool,
}

impl JobFiles {
    /// Open file `i` for the job's I/O with `flags` (O_DIRECT, O_DSYNC…),
    /// never through a symlink, and only if it is still the file that was
    /// verified (a file swapped in since is refused).
    pub fn open(&self, i: usize, write: bool, flags: i32) -> Result<OwnedFd> {
        let p = &self.paths[i];
        if write && self.read_only {
            // Unreachable through the survey's read-only jobs; kept so that a
            // future job kind can never open a surveyed (maybe mounted) disk
            // for writing.
            bail!(Fix::new(
                format!("{} is open for reading only", p.display()),
                "measure writes on a scratch file: innotune bench --directory DIR --rw randwrite"
            ));
        }
        let doing = if flags & libc::O_DIRECT != 0 {
            "open with O_DIRECT"
        } else {
            "open"
        };
        let nofollow = if self.raw { 0 } else { libc::O_NOFOLLOW };
        let f = OpenOptions::new()
            .read(true)
            .write(write)
            .custom_flags(flags | nofollow | libc::O_CLOEXEC)
            .open(p)
            .map_err(|e| io_fix(e, p, doing))?;
        if let Some(want) = self.identity.get(i) {
            let md = f.metadata().map_err(|e| io_fix(e, p, "inspect"))?;
            if (md.dev(), md.ino()) != (want.dev, want.ino) {
                bail!(Fix::new(
                    format!("{} was replaced while innotune was using it", p.display()),
                    "make sure nobody else writes to the bench directory, then run again"
                ));
            }
        }
        Ok(f.into())
    }
}

fn file_name(job: &JobSpec, i: u32) -> String {
    format!("innotune-{}.{i}", job.name)
}

/// Refuse at once when the files of all `jobs` together do not fit in
/// `dir`: [`prepare`] checks one job at a time, so a two-job workload
/// (`--preset mixed`) would write the first job's file and only then find
/// no room for the second, naming half the space it needs and leaving the
/// first file behind. Counts what `prepare` would write: every file that is
/// not already there at its size (an existing one is reused). A directory
/// that cannot be read is left to `prepare`, which says why.
pub fn check_space(dir: &Path, jobs: &[JobSpec]) -> Result<()> {
    let mut need = 0u64;
    let mut files = 0usize;
    for j in jobs.iter().filter(|j| j.filename.is_none()) {
        let size = j.file_size();
        for i in 0..j.nrfiles {
            let there = fs::symlink_metadata(dir.join(file_name(j, i))).is_ok_and(|m| {
                m.file_type().is_file() && m.len() == size && m.blocks() * 512 >= size
            });
            if !there {
                need += size;
                files += 1;
            }
        }
    }
    if files < 2 {
        // One file: prepare's own check says the same, for one job.
        return Ok(());
    }
    // f_blocks == 0: the filesystem reports no capacity (ramfs); skip.
    let Some(st) = rustix::fs::statvfs(dir).ok().filter(|st| st.f_blocks > 0) else {
        return Ok(());
    };
    let free = st.f_bavail.saturating_mul(st.f_frsize);
    if free < need + need / 50 {
        bail!(Fix::new(
            format!(
                "not enough space in {}: the {files} files of this run need {}, {} is free",
                dir.display(),
                fmt_size(need),
                fmt_size(free)
            ),
            "lower --size, remove earlier runs' files (innotune bench --cleanup --directory DIR), or choose another --directory"
        ));
    }
    Ok(())
}

/// Lay out (or reuse) a job's files in `dir`, or open its raw device.
pub fn prepare(
    dir: &Path,
    job: &JobSpec,
    allow_datadir: bool,
    allow_raw: bool,
) -> Result<JobFiles> {
    if let Some(f) = &job.filename {
        return prepare_raw(f, job, allow_raw);
    }
    check_dir(dir, allow_datadir)?;
    let d = Dir::open(dir)?;
    let size = job.file_size();
    let (mut man, distrust) = match d.load()? {
        Loaded::Trusted(m) => (m, None),
        Loaded::Absent => (Manifest::new(), None),
        Loaded::Untrusted(why) => {
            crate::output::warn(format!(
                "ignoring {}: {why}; no file it lists is reused or removed",
                d.join(MANIFEST).display()
            ));
            (Manifest::new(), Some(why))
        }
    };
    let names: Vec<String> = (0..job.nrfiles).map(|i| file_name(job, i)).collect();

    // First pass: refuse anything not provably ours, decide what to write.
    let mut todo: Vec<(String, bool)> = Vec::new();
    let mut identity = Vec::with_capacity(names.len());
    // A reused file whose entry changes (a 0.2 entry upgraded) needs the
    // manifest written again; one recorded as it is does not (a run that
    // only reuses its files writes nothing: it runs on a full filesystem).
    let mut rerecorded = false;
    for n in &names {
        let p = d.join(n);
        if d.lstat(n)?.is_none() {
            todo.push((n.clone(), false));
            continue;
        }
        let Some(entry) = man.files.get(n).copied() else {
            let why = match &distrust {
                Some(w) => format!(" (its manifest was ignored: {w})"),
                None => String::new(),
            };
            bail!(Fix::new(
                format!("{} exists and innotune did not create it{why}", p.display()),
                "remove or rename it, use another --name, or choose a --directory only you can write to"
            ));
        };
        let st = d.verify(n, &entry).map_err(|why| {
            Fix::new(
                format!("{} is listed in {MANIFEST}, but {why}", p.display()),
                "remove it yourself if it is yours, or choose a --directory only you can write to",
            )
        })?;
        let valid =
            st.st_size as u64 == size && st.st_blocks as u64 * 512 >= size && entry.size() == size;
        if valid {
            // Re-recorded with its identity (upgrades a 0.2 manifest's entry).
            let now = manifest::entry_for(size, &st);
            rerecorded |= now != entry;
            man.files.insert(n.clone(), now);
            identity.push((n.clone(), Identity::of(&st)));
        } else {
            todo.push((n.clone(), true));
        }
    }
    if !todo.is_empty() {
        let need = size * todo.len() as u64;
        // f_blocks == 0: the filesystem reports no capacity (ramfs); skip.
        if let Some(st) = rustix::fs::fstatvfs(&d.fd)
            .ok()
            .filter(|st| st.f_blocks > 0)
        {
            let free = st.f_bavail.saturating_mul(st.f_frsize);
            if free < need + (need / 50) {
                bail!(Fix::new(
                    format!(
                        "not enough space in {}: the files need {}, {} is free",
                        dir.display(),
                        fmt_size(need),
                        fmt_size(free)
                    ),
                    "lower --size, remove earlier runs' files (innotune bench --cleanup --directory DIR), or choose another --directory"
                ));
            }
        }
        for (n, exists) in &todo {
            if *exists {
                // Verified as ours above; removing a name never follows it.
                d.unlink(n).map_err(|e| io_fix(e, &d.join(n), "replace"))?;
            }
            // Created first, recorded (with its inode) before any data is
            // written, so an interrupted layout is cleaned by --cleanup.
            let (f, st) = d.create(n)?;
            man.files.insert(n.clone(), manifest::entry_for(size, &st));
            if let Err(e) = d.save(&man).and_then(|_| write_file(f, &d.join(n), size)) {
                // Leave nothing stale: neither the partial file nor its entry.
                let _ = d.unlink(n);
                man.files.remove(n);
                let _ = d.save_or_remove(&man);
                return Err(e);
            }
            identity.push((n.clone(), Identity::of(&st)));
        }
    } else if distrust.is_none() && rerecorded {
        // Reused files only: record identities a 0.2 manifest lacked.
        d.save(&man)?;
    }
    Ok(JobFiles {
        paths: names.iter().map(|n| d.join(n)).collect(),
        file_size: size,
        raw: false,
        identity: names
            .iter()
            .map(|n| {
                identity
                    .iter()
                    .find(|(m, _)| m == n)
                    .map(|(_, id)| *id)
                    .expect("every name is reused or created")
            })
            .collect(),
        _excl: None,
        read_only: false,
    })
}

impl JobFiles {
    /// A whole block device for read-only jobs (`bench --survey`): every
    /// open is O_RDONLY (never O_WRONLY or O_RDWR, see [`JobFiles::open`]),
    /// so no O_EXCL claim is taken and a mounted disk, an md member or the
    /// root disk can be read while in use: reads change nothing on the
    /// device. `size` is the device's size in bytes; jobs use whole blocks.
    pub fn read_only_device(dev: &Path, size: u64) -> JobFiles {
        JobFiles {
            paths: vec![dev.to_path_buf()],
            file_size: size,
            raw: true,
            identity: Vec::new(),
            _excl: None,
            read_only: true,
        }
    }
}

/// Write `size` bytes of incompressible data, so the file is fully
/// allocated (not sparse: reads hit the device, not the zero page) and its
/// blocks are as a database would leave them. Stops on Ctrl-C / SIGTERM.
fn write_file(mut f: File, p: &Path, size: u64) -> Result<()> {
    let mut buf = vec![0u8; 1 << 20];
    super::engine::fill_random(&mut buf);
    let mut left = size;
    let interrupt = super::interrupt_flag();
    while left > 0 {
        if interrupt.load(std::sync::atomic::Ordering::Relaxed) {
            bail!(Fix::new(
                format!("interrupted while laying out {}", p.display()),
                "run again to lay the files out (the partial file was removed)"
            ));
        }
        let n = left.min(buf.len() as u64) as usize;
        // Vary the chunk so no two blocks are identical (dedup/compression).
        buf[..8].copy_from_slice(&left.to_le_bytes());
        f.write_all(&buf[..n]).map_err(|e| io_fix(e, p, "write"))?;
        left -= n as u64;
    }
    f.sync_all().map_err(|e| io_fix(e, p, "sync"))?;
    Ok(())
}

fn prepare_raw(dev: &Path, job: &JobSpec, allow_raw: bool) -> Result<JobFiles> {
    let md = fs::metadata(dev).map_err(|e| io_fix(e, dev, "open"))?;
    if !md.file_type().is_block_device() {
        bail!(Fix::new(
            format!(
                "{} is not a block device; innotune writes only files it creates",
                dev.display()
            ),
            "use --directory DIR (innotune lays out its own files there)"
        ));
    }
    let writes = job.rw.writes(job.rwmixread);
    raw_consent(dev, writes, allow_raw)?;
    if !writes {
        // Reads change nothing on the device: no consent, no claim, and
        // every open is O_RDONLY (as `bench --survey` reads a disk in use).
        let size = device_size(dev)?.min(job.size) / job.bs * job.bs;
        if size < job.bs {
            bail!(Fix::new(
                format!("{} is smaller than bs", dev.display()),
                "lower --bs"
            ));
        }
        return Ok(JobFiles::read_only_device(dev, size));
    }
    if let Some(mp) = mounted_at(dev) {
        bail!(Fix::new(
            format!("{} is mounted on {mp}", dev.display()),
            "unmount it first, or bench a --directory on that filesystem"
        ));
    }
    // O_EXCL on a block device claims it: fails with EBUSY if it is mounted
    // or used by md/dm/swap, and keeps anyone from mounting it meanwhile.
    let excl = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(dev)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::EBUSY) {
                Fix::new(
                    format!(
                        "{} is in use (mounted, swap, md or dm member)",
                        dev.display()
                    ),
                    "stop what uses it, or bench a --directory instead",
                )
                .into()
            } else {
                io_fix(e, dev, "open")
            }
        })?;
    let dev_size = {
        use std::io::{Seek, SeekFrom};
        let mut f = &excl;
        f.seek(SeekFrom::End(0))
            .map_err(|e| io_fix(e, dev, "size"))?
    };
    let size = dev_size.min(job.size) / job.bs * job.bs;
    if size < job.bs {
        bail!(Fix::new(
            format!("{} is smaller than bs", dev.display()),
            "lower --bs"
        ));
    }
    Ok(JobFiles {
        paths: vec![dev.to_path_buf()],
        file_size: size,
        raw: true,
        identity: Vec::new(),
        _excl: Some(excl),
        read_only: false,
    })
}

/// A job that writes to a raw device destroys what is on it: only with
/// `--allow-raw-device`. A read-only job needs no consent (issue 39: `--rw
/// read` on a device was told that writing destroys its contents).
fn raw_consent(dev: &Path, writes: bool, allow_raw: bool) -> Result<()> {
    if writes && !allow_raw {
        bail!(Fix::new(
            format!(
                "{} is a raw block device: this job writes to it, which destroys its contents",
                dev.display()
            ),
            "pass --allow-raw-device if the device holds nothing you need, or use a read-only --rw (read, randread)"
        ));
    }
    Ok(())
}

/// The size in bytes of a block device, opened read-only.
fn device_size(dev: &Path) -> Result<u64> {
    use std::io::{Seek, SeekFrom};
    let mut f = File::open(dev).map_err(|e| io_fix(e, dev, "open"))?;
    f.seek(SeekFrom::End(0)).map_err(|e| io_fix(e, dev, "size"))
}

/// Mount point of `dev` (or of one of its partitions), from the host
/// model's mount table: matched by device number, never by name prefix
/// (`loop1` is not a mounted `loop10`), mount points with escapes decoded.
fn mounted_at(dev: &Path) -> Option<String> {
    let canon = fs::canonicalize(dev).unwrap_or_else(|_| dev.to_path_buf());
    let name = canon.file_name()?.to_string_lossy().into_owned();
    let model = crate::model::HostModel::read(&crate::host::Host::live());
    let mounts = model.mounts_of_device(&name).ok()?;
    mounts.first().map(|m| m.mount_point.clone())
}

#[cfg(test)]
mod tests {
    use super::super::job::Rw;
    use super::*;

    /// Only a job that writes needs `--allow-raw-device`, and only its
    /// refusal says writing destroys the contents.
    #[test]
    fn raw_device_consent_is_asked_only_for_writes() {
        let dev = Path::new("/dev/vda");
        for rw in ["read", "randread"] {
            let r = Rw::parse(rw).unwrap();
            assert!(!r.writes(100));
            assert!(raw_consent(dev, r.writes(100), false).is_ok(), "{rw}");
        }
        for (rw, mix) in [
            ("write", 100),
            ("randwrite", 100),
            ("randrw", 99),
            ("rw", 50),
        ] {
            let r = Rw::parse(rw).unwrap();
            let e = raw_consent(dev, r.writes(mix), false)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("destroys its contents") && e.contains("--allow-raw-device"),
                "{rw}: {e}"
            );
            assert!(raw_consent(dev, r.writes(mix), true).is_ok());
        }
        // randrw with every I/O a read writes nothing.
        assert!(raw_consent(dev, Rw::RandRw.writes(100), false).is_ok());
    }

    #[test]
    fn layout_is_real_reused_and_cleaned() {
        let d = tempfile::tempdir().unwrap();
        let mut j = JobSpec::default();
        j.set("size", "2m").unwrap();
        j.set("nrfiles", "2").unwrap();
        let f = prepare(d.path(), &j, false, false).unwrap();
        assert_eq!(f.paths.len(), 2);
        let md = fs::metadata(&f.paths[0]).unwrap();
        assert_eq!(md.len(), 1 << 20);
        assert!(md.blocks() * 512 >= 1 << 20, "file is sparse");
        let ino = md.ino();
        let mtime = md.mtime_nsec();
        // Reused, not rewritten.
        let f2 = prepare(d.path(), &j, false, false).unwrap();
        let md2 = fs::metadata(&f2.paths[0]).unwrap();
        assert_eq!((md2.ino(), md2.mtime_nsec()), (ino, mtime));
        // A stranger's file next to ours survives cleanup.
        fs::write(d.path().join("keep.txt"), "x").unwrap();
        let removed = cleanup(d.path()).unwrap();
        assert_eq!(removed.len(), 2);
        assert!(d.path().join("keep.txt").exists());
        assert!(!d.path().join(MANIFEST).exists());
    }

    #[test]
    fn refuses_foreign_file_and_datadir() {
        let d = tempfile::tempdir().unwrap();
        let j = JobSpec {
            size: 1 << 20,
            ..JobSpec::default()
        };
        fs::write(d.path().join("innotune-job.0"), "not ours").unwrap();
        let e = prepare(d.path(), &j, false, false).unwrap_err().to_string();
        assert!(e.contains("did not create"), "{e}");
        assert_eq!(
            fs::read(d.path().join("innotune-job.0")).unwrap(),
            b"not ours"
        );

        let dd = tempfile::tempdir().unwrap();
        fs::write(dd.path().join("ibdata1"), "").unwrap();
        let e = prepare(dd.path(), &j, false, false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("MySQL data directory"), "{e}");
        prepare(dd.path(), &j, true, false).unwrap();
        let sub = dd.path().join("schema");
        fs::create_dir(&sub).unwrap();
        let e = prepare(&sub, &j, false, false).unwrap_err().to_string();
        assert!(e.contains("inside"), "{e}");
    }
}
