//! Reading tablespaces at disk speed and feeding pages to [`super::page`].
//!
//! Shape (after github.com/neoremind/fast_innochecksum and Percona
//! XtraBackup's `fil_cur.cc`, which both read large chunks ahead of the
//! checking threads): files are cut into shards (up to 256 MiB, smaller when
//! there are few files so every thread gets work); N workers each pair a
//! *prefetch* thread, which `pread`s aligned chunks (8 MiB with O_DIRECT,
//! 1 MiB through the page cache) into a pool of 3 buffers, with a *checker* thread that verifies the previous chunk
//! meanwhile. So I/O overlaps with checking, and threads spread across files
//! and within large files. `--direct` opens with O_DIRECT (aligned buffers,
//! aligned offsets), so a cold scan neither fills nor trusts the page cache.
//! With `--direct` and io_uring available, one reader ([`super::ring`])
//! replaces the prefetch threads: several large reads in flight, in file
//! order, each chunk handed to the least busy checker; the pread threads
//! remain the fallback.
//! Without `--direct`, spans the page cache already holds whole are mapped
//! instead of read (`map_resident`): a warm scan then copies nothing.
//!
//! Files are only ever opened read-only; each open takes a shared `fcntl`
//! read lock like innochecksum. A lock refused by a writer means a server is
//! running on the file: mismatching pages are then re-read a few times before
//! being reported, since a live page may be caught mid-write.

use super::algo;
use super::page::{self, Failure, Hint, Layout, Mode, Verdict};
use std::fs::File;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use crate::aligned::ALIGN;
/// Request size with O_DIRECT (several MiB, as fast checkers use).
pub const CHUNK_BYTES: usize = 8 << 20;
/// Request size through the page cache (see `prefetch`).
pub const CACHED_CHUNK_BYTES: usize = 1 << 20;
/// Span mapped at once when the page cache already holds it.
const MAP_BYTES: usize = 32 << 20;
const MAX_SHARD_BYTES: u64 = 256 << 20;
pub(super) const BUFFERS_PER_READER: usize = 3;
/// With O_DIRECT nothing reads ahead for us: each checker is fed by this
/// many reader threads, so several large requests are in flight. Shards are
/// then small, so the readers of all checkers walk a file together, close
/// to one sequential stream (what a virtio or RAID device serves best).
/// Measured on the 3.4 GB bench file, cold: one 8 MiB pread at a time per
/// checker ran at ~1.0–1.2 GB/s where fio's 8 MiB reads at depth 4 ran at
/// 1.7–1.9 GB/s.
pub(super) const DIRECT_READERS: usize = 2;
/// Shards whose file a checker keeps at hand for re-reads (see `check`).
const FILES_KEPT: usize = 4;
const DIRECT_SHARD_BYTES: u64 = 4 * CHUNK_BYTES as u64;
/// Re-reads of a mismatching page when a server is live on the file.
pub const LIVE_REREADS: u32 = 5;
pub const LIVE_REREAD_DELAY: Duration = Duration::from_millis(50);

/// One file to check, with its geometry and page range `[first, end)`.
#[derive(Debug, Clone)]
pub struct Target {
    pub path: PathBuf,
    pub layout: Layout,
    pub first: u64,
    pub end: u64,
    /// A server has the file open (from /proc); re-read mismatches.
    pub live: bool,
    /// Page number of this file's first page: 0, except for the second and
    /// later files of a multi-file system tablespace (ibdata2…), whose pages
    /// continue the numbering of the files before them.
    pub base: u64,
}

#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub threads: usize,
    pub direct: bool,
    pub mode: Mode,
}

/// Per-shard tallies, merged per file by the caller.
#[derive(Debug, Clone, Default)]
pub struct Counts {
    pub checked: u64,
    pub valid: [u64; page::Algo::COUNT],
    pub empty: u64,
    pub doublewrite: u64,
    pub encrypted: u64,
    pub page_compressed: u64,
    pub free: u64,
    pub bad: u64,
    pub types: [u64; page::TYPE_SLOTS],
    /// Mismatches that went away on re-read (live server).
    pub recovered_on_reread: u64,
}

impl Counts {
    pub fn add(&mut self, o: &Counts) {
        self.checked += o.checked;
        for i in 0..page::Algo::COUNT {
            self.valid[i] += o.valid[i];
        }
        self.empty += o.empty;
        self.doublewrite += o.doublewrite;
        self.encrypted += o.encrypted;
        self.page_compressed += o.page_compressed;
        self.free += o.free;
        self.bad += o.bad;
        for i in 0..page::TYPE_SLOTS {
            self.types[i] += o.types[i];
        }
        self.recovered_on_reread += o.recovered_on_reread;
    }
}

#[derive(Debug, Clone, Copy)]
pub struct RawBad {
    pub page: u64,
    pub page_type: u16,
    pub failure: Failure,
}

#[derive(Debug, Default)]
pub struct ShardResult {
    pub file: usize,
    pub counts: Counts,
    pub bad: Vec<RawBad>,
    pub error: Option<String>,
    /// The shared lock was refused: a writer (server) holds the file.
    pub lock_refused: bool,
    pub direct_unsupported: bool,
    pub bytes: u64,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Shard {
    pub(super) file: usize,
    pub(super) first: u64,
    pub(super) end: u64,
}

use crate::aligned::AlignedBuf;

/// Open read-only (never for writing), optionally O_DIRECT, with O_NOATIME
/// when permitted. Returns the file and whether O_DIRECT was refused (tmpfs).
pub fn open_readonly(path: &std::path::Path, direct: bool) -> std::io::Result<(File, bool)> {
    let mut tries: Vec<(i32, bool)> = Vec::new();
    if direct {
        tries.push((libc::O_DIRECT | libc::O_NOATIME, false));
        tries.push((libc::O_DIRECT, false));
    }
    tries.push((libc::O_NOATIME, direct));
    tries.push((0, direct));
    let mut last = None;
    for (flags, refused) in tries {
        // O_NONBLOCK: opening a FIFO put where a tablespace was must not
        // block (it is then refused as not a regular file); no effect on files.
        match std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(flags | libc::O_NONBLOCK)
            .open(path)
        {
            Ok(f) => return Ok((f, refused)),
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINVAL) | Some(libc::EPERM)) => {
                last = Some(e)
            }
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("open failed")))
}

/// Take a shared (read) fcntl lock on the whole file, as innochecksum does.
/// Returns false when another process holds a write lock.
pub fn shared_lock(f: &File) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: flock is plain data; fcntl reads it.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = libc::F_RDLCK as _;
    fl.l_whence = libc::SEEK_SET as _;
    fl.l_start = 0;
    fl.l_len = 0;
    // SAFETY: valid fd and pointer.
    unsafe { libc::fcntl(f.as_raw_fd(), libc::F_SETLK, &fl) == 0 }
}

/// The pid of the process whose write lock refused [`shared_lock`], when
/// the kernel names one (`F_GETLK`; an open-file-description lock has no
/// pid, and the holder may have let go since: `None`).
pub fn write_lock_holder(f: &File) -> Option<u32> {
    use std::os::fd::AsRawFd;
    // SAFETY: flock is plain data; fcntl fills it.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = libc::F_RDLCK as _;
    fl.l_whence = libc::SEEK_SET as _;
    // SAFETY: valid fd and pointer.
    if unsafe { libc::fcntl(f.as_raw_fd(), libc::F_GETLK, &mut fl) } != 0
        || fl.l_type == libc::F_UNLCK as libc::c_short
    {
        return None;
    }
    u32::try_from(fl.l_pid).ok().filter(|p| *p > 0)
}

/// Fill `buf` from `off`, looping over short reads; returns bytes read (less
/// than `buf.len()` only at end of file).
pub(super) fn read_full(f: &File, buf: &mut [u8], off: u64) -> std::io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match f.read_at(&mut buf[done..], off + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// A chunk's bytes: read into one of the worker's buffers, or mapped
/// straight from the page cache (see [`map_resident`]).
pub(super) enum ChunkData {
    Buf(AlignedBuf),
    Map { map: memmap2::Mmap, skip: usize },
}

impl ChunkData {
    fn as_slice(&self) -> &[u8] {
        match self {
            ChunkData::Buf(b) => b.as_slice(),
            ChunkData::Map { map, skip } => &map[*skip..],
        }
    }
}

pub(super) enum Msg {
    Start {
        shard: usize,
        file: Arc<File>,
        lock_refused: bool,
        direct_unsupported: bool,
    },
    Chunk {
        shard: usize,
        first_page: u64,
        pages: usize,
        data: ChunkData,
    },
    Error {
        shard: usize,
        msg: String,
    },
}

pub(super) fn make_shards(targets: &[Target], threads: usize, direct: bool) -> Vec<Shard> {
    let total: u64 = targets
        .iter()
        .map(|t| (t.end - t.first) * t.layout.physical as u64)
        .sum();
    // Small enough that every thread gets several, large enough to amortise.
    let want = if direct {
        DIRECT_SHARD_BYTES
    } else {
        (total / (threads as u64 * 4)).clamp(CHUNK_BYTES as u64, MAX_SHARD_BYTES)
    };
    let want = want / CHUNK_BYTES as u64 * CHUNK_BYTES as u64;
    let mut shards = Vec::new();
    for (i, t) in targets.iter().enumerate() {
        let per = (want / t.layout.physical as u64).max(1);
        let mut p = t.first;
        while p < t.end {
            let e = (p + per).min(t.end);
            shards.push(Shard {
                file: i,
                first: p,
                end: e,
            });
            p = e;
        }
    }
    shards
}

pub(super) fn prefetch(
    targets: &[Target],
    shards: &[Shard],
    next: &AtomicUsize,
    opts: Options,
    tx: mpsc::SyncSender<Msg>,
    empty: &std::sync::Mutex<mpsc::Receiver<AlignedBuf>>,
) {
    let mut allocated = 0usize;
    loop {
        let si = next.fetch_add(1, Ordering::Relaxed);
        let Some(sh) = shards.get(si) else { return };
        let t = &targets[sh.file];
        let ps = t.layout.physical;
        // O_DIRECT needs aligned offsets; a range starting mid-block (1-2 KiB
        // compressed pages) is read through the page cache instead.
        let direct = opts.direct && (sh.first * ps as u64) % ALIGN as u64 == 0;
        let (file, refused) = match open_readonly(&t.path, direct) {
            Ok(f) => f,
            Err(e) => {
                let _ = tx.send(Msg::Error {
                    shard: si,
                    msg: format!("cannot open {}: {e}", crate::output::path(&t.path)),
                });
                continue;
            }
        };
        let lock_refused = !shared_lock(&file);
        let file = Arc::new(file);
        if tx
            .send(Msg::Start {
                shard: si,
                file: file.clone(),
                lock_refused,
                direct_unsupported: refused,
            })
            .is_err()
        {
            return;
        }
        // Through the page cache, buffers that stay in L2 are cheapest: the
        // copy out of the page cache then costs what innochecksum's 16K fread
        // does, and the checker re-reads cache-hot bytes. Measured on the
        // 1.1 GB bench file (CPU seconds, user+sys, 5 runs): 1 MiB reads
        // ~0.085, 8 MiB reads ~0.125, MariaDB innochecksum ~0.11. O_DIRECT
        // wants large requests instead. Cached chunks are mapped rather
        // than read when they can be (`map_resident`).
        let chunk = if direct {
            CHUNK_BYTES
        } else {
            CACHED_CHUNK_BYTES
        };
        let mappable = !direct && !t.live && !lock_refused;
        let window = if mappable { MAP_BYTES } else { chunk };
        let per_window = (window / ps).max(1) as u64;
        let per_chunk = (chunk / ps).max(1) as u64;
        let mut p = sh.first;
        while p < sh.end {
            let wend = (p + per_window).min(sh.end);
            if mappable {
                if let Some(data) = map_resident(&file, p * ps as u64, ((wend - p) as usize) * ps) {
                    let msg = Msg::Chunk {
                        shard: si,
                        first_page: p,
                        pages: (wend - p) as usize,
                        data,
                    };
                    if tx.send(msg).is_err() {
                        return;
                    }
                    p = wend;
                    continue;
                }
            }
            // Read the window in chunks (cold, live, or O_DIRECT).
            let mut stop = false;
            while p < wend {
                let n = per_chunk.min(wend - p) as usize;
                let want = n * ps;
                let off = p * ps as u64;
                // Buffers are made on first use, sized for this run's reads,
                // so a warm scan that maps everything allocates none.
                let mut buf = if allocated < BUFFERS_PER_READER {
                    allocated += 1;
                    AlignedBuf::new(if opts.direct {
                        CHUNK_BYTES
                    } else {
                        CACHED_CHUNK_BYTES
                    })
                } else {
                    let got = empty.lock().map(|rx| rx.recv());
                    let Ok(Ok(b)) = got else { return };
                    b
                };
                // O_DIRECT needs the length aligned too; the tail past EOF comes back short.
                let len = want.div_ceil(ALIGN) * ALIGN;
                let res = read_full(&file, &mut buf.as_mut_slice()[..len], off);
                let msg = match res {
                    Ok(got) if got >= want => Msg::Chunk {
                        shard: si,
                        first_page: p,
                        pages: n,
                        data: ChunkData::Buf(buf),
                    },
                    Ok(got) => Msg::Error {
                        shard: si,
                        msg: format!(
                            "{}: file shrank while reading (got {} bytes at page {p}, expected {want})",
                            crate::output::path(&t.path),
                            got
                        ),
                    },
                    Err(e) => Msg::Error {
                        shard: si,
                        msg: format!("{}: read error at page {p}: {e}", crate::output::path(&t.path)),
                    },
                };
                stop = matches!(msg, Msg::Error { .. });
                if tx.send(msg).is_err() {
                    return;
                }
                if stop {
                    break;
                }
                p += n as u64;
            }
            if stop {
                break;
            }
        }
    }
}

/// Is every page of `[off, off + len)` in the page cache? cachestat(2)
/// (Linux 6.5+) walks the cache by folio; mincore(2), the fallback, looks up
/// every 4 KiB page and cost ~18% of a warm scan's CPU in a profile here.
/// Hand-written: neither libc 0.2 (on x86_64) nor rustix wraps cachestat.
fn all_cached(file: &File, map: &memmap2::Mmap, off: u64, len: usize) -> bool {
    use std::os::fd::AsRawFd;
    #[repr(C)]
    struct Range {
        off: u64,
        len: u64,
    }
    #[repr(C)]
    #[derive(Default)]
    struct Stat {
        nr_cache: u64,
        nr_dirty: u64,
        nr_writeback: u64,
        nr_evicted: u64,
        nr_recently_evicted: u64,
    }
    const SYS_CACHESTAT: libc::c_long = 451; // the same number on every arch
    let range = Range {
        off,
        len: len as u64,
    };
    let mut st = Stat::default();
    // SAFETY: valid fd and pointers to the two structs the syscall takes.
    let r = unsafe {
        libc::syscall(
            SYS_CACHESTAT,
            file.as_raw_fd(),
            &range as *const Range,
            &mut st as *mut Stat,
            0u32,
        )
    };
    let pages = len.div_ceil(page_size()) as u64;
    if r == 0 {
        return st.nr_cache >= pages;
    }
    let mut resident = vec![0u8; pages as usize];
    // SAFETY: the mapping is `len` bytes at a page-aligned address and the
    // vector has one byte per page.
    let r = unsafe { libc::mincore(map.as_ptr() as *mut _, len, resident.as_mut_ptr()) };
    r == 0 && resident.iter().all(|b| b & 1 == 1)
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 {
        n as usize
    } else {
        ALIGN
    }
}

/// Map `len` bytes at `off` when every page is already in the page cache:
/// the checker then reads the cache itself and nothing is copied. Measured
/// here (kernel 6.18, 1.1 GB ext4 file, warm): populating the whole mapping
/// costs ~6 ms of CPU against ~56 ms to pread it in 1 MiB pieces, and the
/// copy was the largest item of a warm scan's profile (36%, CRC 17%).
///
/// Returns None — and the caller reads instead — when any page is not
/// resident (pread's readahead is the better cold path, and its errors are
/// reported as errors), when the file is shorter than the range, or when
/// MADV_POPULATE_READ fails (it reports failure instead of raising SIGBUS).
/// Only used on files no server has open and whose shared lock was granted:
/// a file truncated under a mapping would raise SIGBUS on access.
fn map_resident(file: &File, off: u64, len: usize) -> Option<ChunkData> {
    let end = off + len as u64;
    if file.metadata().ok()?.len() < end {
        return None;
    }
    let pg = page_size() as u64;
    let map_off = off / pg * pg;
    let skip = (off - map_off) as usize;
    let map_len = skip + len;
    // SAFETY: read-only shared mapping of a file we hold a shared lock on
    // and no server has open; see above for the truncation caveat.
    let map = unsafe {
        memmap2::MmapOptions::new()
            .offset(map_off)
            .len(map_len)
            .map(file)
    }
    .ok()?;
    if !all_cached(file, &map, map_off, map_len) {
        return None;
    }
    map.advise(memmap2::Advice::PopulateRead).ok()?;
    Some(ChunkData::Map { map, skip })
}

pub(super) fn check(
    targets: &[Target],
    shards: &[Shard],
    opts: Options,
    rx: mpsc::Receiver<Msg>,
    empty: mpsc::Sender<AlignedBuf>,
    on_bytes: &(dyn Fn(u64) + Sync),
) -> Vec<ShardResult> {
    let mut out: Vec<(usize, ShardResult)> = Vec::new();
    let mut files: Vec<(usize, Arc<File>)> = Vec::new();
    let mut hint = Hint::default();
    let mut reread_buf: Option<AlignedBuf> = None;
    let mut xdes_cache: Option<XdesCache> = None;
    let slot = |out: &mut Vec<(usize, ShardResult)>, si: usize| -> usize {
        match out.iter().position(|(s, _)| *s == si) {
            Some(i) => i,
            None => {
                out.push((
                    si,
                    ShardResult {
                        file: shards[si].file,
                        ..Default::default()
                    },
                ));
                out.len() - 1
            }
        }
    };
    for msg in rx {
        match msg {
            Msg::Start {
                shard,
                file,
                lock_refused,
                direct_unsupported,
            } => {
                let i = slot(&mut out, shard);
                out[i].1.lock_refused = lock_refused;
                out[i].1.direct_unsupported = direct_unsupported;
                files.retain(|(s, _)| *s != shard);
                files.push((shard, file));
                // Keep only the current shards' files open (one per reader;
                // the ring reader's reads in flight may span a few shards).
                if files.len() > FILES_KEPT {
                    files.remove(0);
                }
            }
            Msg::Error { shard, msg } => {
                let i = slot(&mut out, shard);
                out[i].1.error = Some(msg);
            }
            Msg::Chunk {
                shard,
                first_page,
                pages,
                data,
            } => {
                let i = slot(&mut out, shard);
                let r = &mut out[i].1;
                let t = &targets[r.file];
                let ps = t.layout.physical;
                let live = t.live || r.lock_refused;
                let bytes_in = data.as_slice();
                // On innodb-format files, fold four pages at a time (see
                // algo::fold_binary_x4): the fold is ~25x the cost of crc32.
                let fold4 = !t.layout.full_crc32
                    && !t.layout.is_zip()
                    && matches!(opts.mode, Mode::Auto | Mode::Innodb);
                let mut pre = [0u32; 4];
                let mut pre_from = usize::MAX;
                for k in 0..pages {
                    let pg = &bytes_in[k * ps..(k + 1) * ps];
                    let no = first_page + k as u64;
                    if fold4
                        && k % 4 == 0
                        && k + 4 <= pages
                        && hint.last() == Some(page::Algo::Innodb)
                    {
                        let p4 = |j: usize| &bytes_in[(k + j) * ps..(k + j + 1) * ps];
                        pre = algo::page_innodb_new_x4([p4(0), p4(1), p4(2), p4(3)]);
                        pre_from = k;
                    }
                    let known = (pre_from != usize::MAX && k >= pre_from && k < pre_from + 4)
                        .then(|| pre[k - pre_from]);
                    let mut v = page::verify_pre(
                        pg,
                        (no + t.base) as u32,
                        &t.layout,
                        opts.mode,
                        &mut hint,
                        known,
                    );
                    if live && matches!(v, Verdict::Bad(_)) {
                        let f = files
                            .iter()
                            .find(|(s, _)| *s == shard)
                            .map(|(_, f)| f.clone());
                        if let Some(f) = f {
                            let rb =
                                reread_buf.get_or_insert_with(|| AlignedBuf::new(ps.max(ALIGN)));
                            if let Some(nv) = reread(&f, rb, ps, no, t, opts.mode, &mut hint) {
                                v = nv;
                                r.counts.recovered_on_reread += 1;
                            }
                        }
                    }
                    if matches!(v, Verdict::Bad(_)) {
                        let f = files
                            .iter()
                            .find(|(s, _)| *s == shard)
                            .map(|(_, f)| f.clone());
                        if let Some(f) = f {
                            if page_is_free(&f, no, t, opts.mode, &mut xdes_cache, shard) {
                                v = Verdict::Skipped(page::Skip::Free);
                            }
                        }
                    }
                    r.counts.checked += 1;
                    let ptype = page::u16_at(pg, 24);
                    r.counts.types[page::type_slot(ptype, t.layout.full_crc32)] += 1;
                    match v {
                        Verdict::Valid(a) => r.counts.valid[a.index()] += 1,
                        Verdict::Empty => r.counts.empty += 1,
                        Verdict::Skipped(page::Skip::Doublewrite) => r.counts.doublewrite += 1,
                        Verdict::Skipped(page::Skip::Encrypted) => r.counts.encrypted += 1,
                        Verdict::Skipped(page::Skip::PageCompressed) => {
                            r.counts.page_compressed += 1
                        }
                        Verdict::Skipped(page::Skip::Free) => r.counts.free += 1,
                        Verdict::Bad(failure) => {
                            r.counts.bad += 1;
                            r.bad.push(RawBad {
                                page: no,
                                page_type: ptype,
                                failure,
                            });
                        }
                    }
                }
                let bytes = (pages * ps) as u64;
                r.bytes += bytes;
                on_bytes(bytes);
                if let ChunkData::Buf(b) = data {
                    let _ = empty.send(b);
                }
            }
        }
    }
    out.into_iter().map(|(_, r)| r).collect()
}

/// The last descriptor page read: (shard, page number, its bytes if valid).
type XdesCache = (usize, u64, Option<Vec<u8>>);

/// Only asked for pages that failed, so the hot path never touches
/// descriptors; one small read per failing 256 MiB span at most.
fn page_is_free(
    f: &File,
    no: u64,
    t: &Target,
    mode: Mode,
    cache: &mut Option<XdesCache>,
    shard: usize,
) -> bool {
    let ps = t.layout.physical as u64;
    let g = no + t.base;
    let xg = g - g % ps;
    if xg == g || xg < t.base {
        // A descriptor page is never free; one in an earlier file is not read.
        return false;
    }
    let xno = xg - t.base;
    let fresh = !matches!(cache, Some((s, x, _)) if *s == shard && *x == xno);
    if fresh {
        // Same fd (closing another would drop our fcntl lock), aligned
        // buffer (it may be O_DIRECT); descriptor pages sit at aligned offsets.
        let mut ab = AlignedBuf::new(ps as usize);
        let ok = matches!(read_full(f, ab.as_mut_slice(), xno * ps), Ok(n) if n >= ps as usize);
        let buf = ab.as_slice()[..ps as usize].to_vec();
        let valid = ok
            && matches!(
                page::verify(&buf, xg as u32, &t.layout, mode, &mut Hint::default()),
                Verdict::Valid(_)
            );
        *cache = Some((shard, xno, valid.then_some(buf)));
    }
    match cache {
        Some((_, _, Some(x))) => page::xdes_is_free(x, g, &t.layout),
        _ => false,
    }
}

/// Re-read a mismatching page of a live file up to [`LIVE_REREADS`] times;
/// `Some(verdict)` once it verifies.
fn reread(
    f: &File,
    rb: &mut AlignedBuf,
    ps: usize,
    no: u64,
    t: &Target,
    mode: Mode,
    hint: &mut Hint,
) -> Option<Verdict> {
    for _ in 0..LIVE_REREADS {
        std::thread::sleep(LIVE_REREAD_DELAY);
        let len = ps.div_ceil(ALIGN) * ALIGN;
        match read_full(f, &mut rb.as_mut_slice()[..len], no * ps as u64) {
            Ok(got) if got >= ps => {}
            _ => return None,
        }
        let v = page::verify(
            &rb.as_slice()[..ps],
            (no + t.base) as u32,
            &t.layout,
            mode,
            hint,
        );
        if !matches!(v, Verdict::Bad(_)) {
            return Some(v);
        }
    }
    None
}
