//! Loop devices, mounts and labs (a loop device with a filesystem,
//! mounted), each undone on drop, on every path, panics included.
//!
//! A loop device's queue (and its scheduler) outlives its attachment: a
//! scheduler a test left on loopN would come back with the next user of
//! loopN. Every [`Loop`] starts from, and is put back to, `none` (the
//! kernel's default for new loop devices here) unless asked otherwise.

use super::host::{active_scheduler, servers_under, set_scheduler, sh, umount_retry};
use super::proc::{spawn, sys, WAIT};
use std::path::{Path, PathBuf};

/// Backing files in RAM: tmpfs has no block device, so a sweep switches
/// only the loop device, never the root disk.
pub const RAM: &str = "/dev/shm";
/// Backing files on the real disk (the disk under them is switched too).
pub const VAR_TMP: &str = "/var/tmp";

/// A loop device (`losetup --direct-io=on`) over a file; on drop its
/// scheduler goes back to `none` and it is detached. The file itself is
/// the caller's, unless the loop made it ([`Loop::new_in`]).
pub struct Loop {
    /// `/dev/loopN`.
    pub dev: String,
    /// `loopN`.
    pub name: String,
    /// The backing file.
    pub file: PathBuf,
    // Last: removed after the device is detached.
    _dir: Option<tempfile::TempDir>,
}

impl Loop {
    /// Attach `file` with direct I/O (and `extra` losetup options, e.g.
    /// `--sector-size 4096`); the scheduler is set to `none`.
    pub fn attach(file: &Path, extra: &[&str]) -> Loop {
        Loop::attach_io(file, extra, true)
    }

    /// [`Loop::attach`], with direct I/O to the backing file (loop/dio
    /// reads 1) or without it (`--direct-io=off`: the loop device reads
    /// and writes its backing file through the page cache).
    pub fn attach_io(file: &Path, extra: &[&str], direct_io: bool) -> Loop {
        let mut args = vec![if direct_io {
            "--direct-io=on"
        } else {
            "--direct-io=off"
        }];
        args.extend_from_slice(extra);
        args.extend(["-f", "--show", file.to_str().unwrap()]);
        let dev = sh("losetup", &args);
        let name = dev.trim_start_matches("/dev/").to_string();
        let l = Loop {
            dev,
            name,
            file: file.to_path_buf(),
            _dir: None,
        };
        l.set_scheduler("none");
        l
    }

    /// A new sparse file of `size` bytes in a new directory under `base`
    /// ([`RAM`] or [`VAR_TMP`]), attached; the directory goes on drop.
    pub fn new_in(base: &str, size: u64) -> Loop {
        Loop::new_with(base, size, &[])
    }

    /// [`Loop::new_in`] with `extra` losetup options.
    pub fn new_with(base: &str, size: u64, extra: &[&str]) -> Loop {
        Loop::new_from(base, extra, |img| {
            std::fs::File::create(img).unwrap().set_len(size).unwrap();
        })
    }

    /// A loop device over a file that `make` writes at the path it is
    /// given, in a new directory under `base` (removed on drop).
    pub fn new_from(base: &str, extra: &[&str], make: impl FnOnce(&Path)) -> Loop {
        let dir = tempfile::Builder::new()
            .prefix("innotune-test-loop")
            .tempdir_in(base)
            .unwrap();
        let img = dir.path().join("disk.img");
        make(&img);
        let mut l = Loop::attach(&img, extra);
        l._dir = Some(dir);
        l
    }

    /// ext4 on the device, mounted on a new directory. Keep the returned
    /// guard, declared after the loop (so it is unmounted first).
    #[must_use = "the filesystem is unmounted when the guard is dropped"]
    pub fn mount_ext4(&self) -> Mount {
        sh("mkfs.ext4", &["-q", "-F", &self.dev]);
        Mount::new("", &self.dev, "")
    }

    pub fn sched_path(&self) -> PathBuf {
        PathBuf::from(format!("/sys/block/{}/queue/scheduler", self.name))
    }

    /// The active scheduler.
    pub fn scheduler(&self) -> String {
        active_scheduler(&self.name)
    }

    /// Switch the scheduler; must take.
    pub fn set_scheduler(&self, sched: &str) {
        set_scheduler(&self.name, sched);
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = std::fs::write(self.sched_path(), "none");
        let _ = spawn(sys("losetup").args(["-d", &self.dev])).wait_within(WAIT);
    }
}

/// A mount made or guarded by a test: unmounted on drop (retrying while
/// busy), and its directory removed when the mount made it.
pub struct Mount {
    pub path: PathBuf,
    made_dir: bool,
}

impl Mount {
    /// Mount `source` (a device) or, for tmpfs, ramfs and the like, a
    /// filesystem of type `fstype`, with `opts` (none when empty), on a new
    /// directory under /var/tmp.
    pub fn new(fstype: &str, source: &str, opts: &str) -> Mount {
        let dir = tempfile::Builder::new()
            .prefix("innotune-test-mnt")
            .tempdir_in(VAR_TMP)
            .unwrap()
            .keep();
        let m = Mount {
            path: dir,
            made_dir: true,
        };
        m.mount(fstype, source, opts);
        m
    }

    /// A `fstype` filesystem (tmpfs, ramfs) with `opts`.
    pub fn fs(fstype: &str, opts: &str) -> Mount {
        Mount::new(fstype, fstype, opts)
    }

    /// Mount `source` on the existing directory `path` (left in place on
    /// drop).
    pub fn on(path: &Path, fstype: &str, source: &str, opts: &str) -> Mount {
        let m = Mount {
            path: path.to_path_buf(),
            made_dir: false,
        };
        m.mount(fstype, source, opts);
        m
    }

    fn mount(&self, fstype: &str, source: &str, opts: &str) {
        let mut args = vec![];
        if !fstype.is_empty() {
            args.extend(["-t", fstype]);
        }
        if !opts.is_empty() {
            args.extend(["-o", opts]);
        }
        args.extend([source, self.path.to_str().unwrap()]);
        sh("mount", &args);
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        umount_retry(&self.path);
        if self.made_dir {
            let _ = std::fs::remove_dir(&self.path);
        }
    }
}

/// What a [`Lab`] is made of.
#[derive(Clone, Debug)]
pub struct LabOpts<'a> {
    /// Names the scratch directory (`innotune-TAG-…`), for a reader of
    /// the host while the test runs.
    pub tag: &'a str,
    /// Where the scratch directory (backing file, mount point) goes:
    /// [`RAM`] or [`VAR_TMP`].
    pub base: &'a str,
    /// The backing file's size (sparse).
    pub size: u64,
    /// The loop device's scheduler before mkfs.
    pub scheduler: &'a str,
    /// `mount -o` options (none when empty).
    pub mount_opts: &'a str,
    /// The mount point's name inside the scratch directory.
    pub mnt_name: &'a str,
    /// The loop device does direct I/O to its backing file (the default);
    /// false: through the page cache (`loop/dio` 0).
    pub direct_io: bool,
}

impl Default for LabOpts<'_> {
    fn default() -> Self {
        LabOpts {
            tag: "lab",
            base: VAR_TMP,
            size: 64 << 20,
            scheduler: "none",
            mount_opts: "",
            mnt_name: "mnt",
            direct_io: true,
        }
    }
}

/// A loop device with ext4 on it, mounted, in a scratch directory. On drop,
/// in order: sandbox servers running from the mount are killed (only those
/// whose command line names it, never the system server), the filesystem
/// is unmounted, the loop device put back to `none` and detached, and the
/// scratch directory removed.
pub struct Lab {
    /// The scratch directory (backing file, mount point, the test's own
    /// files).
    pub dir: PathBuf,
    /// The backing file.
    pub img: PathBuf,
    /// The mount point.
    pub mnt: PathBuf,
    /// The loop device's kernel name (`loopN`).
    pub loopdev: String,
    /// The loop device's node (`/dev/loopN`).
    pub dev: String,
    // Dropped in this order, after `Drop::drop` unmounted: the device,
    // then the directory.
    lo: Option<Loop>,
    _scratch: tempfile::TempDir,
}

impl Lab {
    pub fn new(o: LabOpts) -> Lab {
        let scratch = tempfile::Builder::new()
            .prefix(&format!("innotune-{}-", o.tag))
            .tempdir_in(o.base)
            .unwrap();
        let dir = scratch.path().to_path_buf();
        let img = dir.join("disk.img");
        let mnt = dir.join(o.mnt_name);
        std::fs::create_dir_all(&mnt).unwrap();
        std::fs::File::create(&img)
            .unwrap()
            .set_len(o.size)
            .unwrap();
        let lo = Loop::attach_io(&img, &[], o.direct_io);
        lo.set_scheduler(o.scheduler);
        let lab = Lab {
            dir,
            img,
            loopdev: lo.name.clone(),
            dev: lo.dev.clone(),
            mnt,
            lo: Some(lo),
            _scratch: scratch,
        };
        sh("mkfs.ext4", &["-q", "-F", &lab.dev]);
        let mut args = vec![];
        if !o.mount_opts.is_empty() {
            args.extend(["-o", o.mount_opts]);
        }
        args.extend([lab.dev.as_str(), lab.mnt.to_str().unwrap()]);
        sh("mount", &args);
        lab
    }

    /// The loop device under the filesystem.
    pub fn loop_dev(&self) -> &Loop {
        self.lo.as_ref().unwrap()
    }

    /// The loop device's kernel name (`loopN`).
    pub fn name(&self) -> &str {
        &self.loopdev
    }

    /// The loop device's scheduler file in sysfs.
    pub fn sched_path(&self) -> PathBuf {
        self.loop_dev().sched_path()
    }

    /// The loop device's active scheduler.
    pub fn scheduler(&self) -> String {
        active_scheduler(&self.loopdev)
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        // A server left on the mount (a failed test) would keep it busy.
        for pid in servers_under(&self.mnt) {
            // SAFETY: a pid whose command line names this lab's mount.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
        umount_retry(&self.mnt);
        drop(self.lo.take());
    }
}

/// Fill the filesystem holding `dir` to its last block (the root-reserved
/// ones too: innotune runs as root) with a new file `dir/name`, fsynced;
/// its path. Most of the space is taken at once (`fallocate`), the rest by
/// appending ever smaller writes until each fails with ENOSPC, so a
/// file's data can no longer be written there (an empty file, an inode
/// only, still can: as on any full filesystem).
pub fn fill(dir: &Path, name: &str) -> PathBuf {
    use std::io::Write;
    let p = dir.join(name);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let st = rustix::fs::statvfs(dir).unwrap();
    let free = st.f_bavail * st.f_frsize;
    let mut len = free.saturating_sub(1 << 20);
    if len > 0 {
        rustix::fs::fallocate(&f, rustix::fs::FallocateFlags::empty(), 0, len)
            .unwrap_or_else(|e| panic!("fallocate {}: {e}", p.display()));
    }
    std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(len)).unwrap();
    let buf = vec![0xa5u8; 1 << 16];
    for chunk in [1usize << 16, 4096, 512, 1] {
        loop {
            match f.write(&buf[..chunk]) {
                Ok(n) => len += n as u64,
                Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
                Err(e) => panic!("filling {}: {e}", p.display()),
            }
        }
    }
    f.sync_all()
        .unwrap_or_else(|e| panic!("fsync {} after {len} bytes: {e}", p.display()));
    p
}
