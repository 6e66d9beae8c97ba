//! The files a job does I/O on: laid out by real writes, marked as ours,
//! reused when still valid, and removed only if ours.
//!
//! Ownership is a manifest, `DIR/.innotune-bench`, listing every file
//! innotune created there. It is written *before* a file is created, so an
//! interrupted layout is still cleaned up by `--cleanup`, and a file of the
//! expected name that the manifest does not list is never touched. (An xattr
//! would not survive `cp`/`rsync` of the directory and is not supported on
//! every filesystem; a manifest is visible to the user with `cat`.)

use super::job::JobSpec;
use crate::error::Fix;
use crate::units::fmt_size;
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

pub const MANIFEST: &str = ".innotune-bench";

#[derive(Debug, Default, Serialize, Deserialize)]
struct Manifest {
    /// Always "innotune bench": what wrote this file.
    tool: String,
    /// File name (inside the directory) → size it was laid out with.
    files: BTreeMap<String, u64>,
}

fn manifest_path(dir: &Path) -> PathBuf {
    dir.join(MANIFEST)
}

fn load_manifest(dir: &Path) -> Result<Manifest> {
    let p = manifest_path(dir);
    match fs::read_to_string(&p) {
        Ok(s) => serde_json::from_str(&s).map_err(|e| {
            Fix::new(
                format!("{} is not an innotune manifest ({e})", p.display()),
                "remove it if innotune did not write it, or choose another --directory",
            )
            .into()
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Manifest {
            tool: "innotune bench".into(),
            files: BTreeMap::new(),
        }),
        Err(e) => Err(io_fix(e, &p, "read")),
    }
}

fn save_manifest(dir: &Path, m: &Manifest) -> Result<()> {
    let p = manifest_path(dir);
    let tmp = dir.join(format!("{MANIFEST}.tmp.{}", std::process::id()));
    let body = serde_json::to_string_pretty(m)? + "\n";
    fs::write(&tmp, body).map_err(|e| io_fix(e, &tmp, "write"))?;
    fs::rename(&tmp, &p).map_err(|e| io_fix(e, &p, "write"))?;
    Ok(())
}

/// Turn an OS error on `path` into one line naming the fix.
pub fn io_fix(e: std::io::Error, path: &Path, doing: &str) -> anyhow::Error {
    let p = path.display();
    match e.raw_os_error() {
        Some(libc::ENOSPC) | Some(libc::EDQUOT) => Fix::new(
            format!("no space left to {doing} {p}"),
            "free space, lower --size, or choose another --directory",
        )
        .into(),
        Some(libc::EACCES) | Some(libc::EPERM) => Fix::new(
            format!("permission denied to {doing} {p}"),
            "run as a user who may write there, or choose another --directory",
        )
        .into(),
        Some(libc::EROFS) => Fix::new(
            format!("{p} is on a read-only filesystem"),
            "choose a --directory on a writable filesystem",
        )
        .into(),
        Some(libc::EINVAL) if doing.contains("O_DIRECT") => Fix::new(
            format!("the filesystem of {p} does not support O_DIRECT (e.g. ramfs, some FUSE)"),
            "use --direct=0, or a --directory on a disk filesystem (ext4, xfs)",
        )
        .into(),
        _ => anyhow::Error::new(e).context(format!("cannot {doing} {p}")),
    }
}

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
    /// For a raw device: an O_EXCL handle held for the whole run, so nobody
    /// can mount it while we write to it.
    _excl: Option<File>,
}

fn file_name(job: &JobSpec, i: u32) -> String {
    format!("innotune-{}.{i}", job.name)
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
    let size = job.file_size();
    let mut man = load_manifest(dir)?;
    let names: Vec<String> = (0..job.nrfiles).map(|i| file_name(job, i)).collect();

    // First pass: refuse anything not ours, decide what must be written.
    let mut todo = Vec::new();
    for n in &names {
        let p = dir.join(n);
        match fs::symlink_metadata(&p) {
            Ok(md) => {
                if !man.files.contains_key(n) {
                    bail!(Fix::new(
                        format!("{} exists and innotune did not create it", p.display()),
                        "remove or rename it, use another --name, or choose another --directory"
                    ));
                }
                let valid = md.file_type().is_file()
                    && md.len() == size
                    && md.blocks() * 512 >= size
                    && man.files.get(n) == Some(&size);
                if !valid {
                    todo.push(n.clone());
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => todo.push(n.clone()),
            Err(e) => return Err(io_fix(e, &p, "inspect")),
        }
    }
    if !todo.is_empty() {
        let need = size * todo.len() as u64;
        // f_blocks == 0: the filesystem reports no capacity (ramfs); skip.
        if let Some(st) = rustix::fs::statvfs(dir).ok().filter(|st| st.f_blocks > 0) {
            let free = st.f_bavail.saturating_mul(st.f_frsize);
            if free < need + (need / 50) {
                bail!(Fix::new(
                    format!(
                        "not enough space in {}: the files need {}, {} is free",
                        dir.display(),
                        fmt_size(need),
                        fmt_size(free)
                    ),
                    "lower --size, or choose another --directory"
                ));
            }
        }
        // Mark as ours before creating, so an interrupted layout is cleanable.
        for n in &todo {
            man.files.insert(n.clone(), size);
        }
        save_manifest(dir, &man)?;
        for n in &todo {
            write_file(&dir.join(n), size)?;
        }
    }
    Ok(JobFiles {
        paths: names.iter().map(|n| dir.join(n)).collect(),
        file_size: size,
        raw: false,
        _excl: None,
    })
}

/// Write `size` bytes of incompressible data, so the file is fully
/// allocated (not sparse: reads hit the device, not the zero page) and its
/// blocks are as a database would leave them.
fn write_file(p: &Path, size: u64) -> Result<()> {
    use rand::RngCore;
    let mut f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(p)
        .map_err(|e| io_fix(e, p, "create"))?;
    let mut buf = vec![0u8; 1 << 20];
    rand::thread_rng().fill_bytes(&mut buf);
    let mut left = size;
    let interrupt = super::interrupt_flag();
    while left > 0 {
        if interrupt.load(std::sync::atomic::Ordering::Relaxed) {
            let _ = fs::remove_file(p);
            bail!("interrupted while laying out {}", p.display());
        }
        let n = left.min(buf.len() as u64) as usize;
        // Vary the chunk so no two blocks are identical (dedup/compression).
        buf[..8].copy_from_slice(&left.to_le_bytes());
        f.write_all(&buf[..n]).map_err(|e| {
            let _ = fs::remove_file(p);
            io_fix(e, p, "write")
        })?;
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
    if !allow_raw {
        bail!(Fix::new(
            format!(
                "{} is a raw block device: writing to it destroys its contents",
                dev.display()
            ),
            "pass --allow-raw-device if the device holds nothing you need"
        ));
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
        _excl: Some(excl),
    })
}

/// Mount point of `dev` (or of one of its partitions), from /proc/mounts.
fn mounted_at(dev: &Path) -> Option<String> {
    let host = crate::host::Host::live();
    let mounts = host.read("/proc/mounts").ok()?;
    let canon = fs::canonicalize(dev).unwrap_or_else(|_| dev.to_path_buf());
    let base = canon.file_name()?.to_string_lossy().into_owned();
    for line in mounts.lines() {
        let mut it = line.split_whitespace();
        let (Some(src), Some(mp)) = (it.next(), it.next()) else {
            continue;
        };
        if !src.starts_with("/dev/") {
            continue;
        }
        let sc = fs::canonicalize(src).unwrap_or_else(|_| PathBuf::from(src));
        let sbase = sc
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        // The device itself, or a partition of it (sda → sda1, loop0 → loop0p1).
        if sc == canon
            || (sbase.starts_with(&base)
                && sbase[base.len()..]
                    .trim_start_matches('p')
                    .chars()
                    .all(|c| c.is_ascii_digit())
                && sbase.len() > base.len())
        {
            return Some(mp.to_string());
        }
    }
    None
}

/// Remove every file the manifest in `dir` lists, then the manifest.
/// Returns the removed paths. Files not listed are never touched.
pub fn cleanup(dir: &Path) -> Result<Vec<PathBuf>> {
    let mp = manifest_path(dir);
    if !mp.exists() {
        return Ok(Vec::new());
    }
    let man = load_manifest(dir)?;
    let mut removed = Vec::new();
    for n in man.files.keys() {
        // Names come from our own manifest, but never follow a path out.
        if n.contains('/') || n.starts_with('.') {
            continue;
        }
        let p = dir.join(n);
        match fs::remove_file(&p) {
            Ok(()) => removed.push(p),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_fix(e, &p, "remove")),
        }
    }
    fs::remove_file(&mp).map_err(|e| io_fix(e, &mp, "remove"))?;
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

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
