//! `--direct` reads through io_uring: one reader thread keeps [`DEPTH`]
//! large reads in flight, in file order, and hands each finished chunk to
//! the least busy checker.
//!
//! Why one reader for all checkers rather than a ring per checker: one
//! stream in file order is what fio's sequential read measures and what a
//! disk's (or a host's) readahead serves best; several readers each on their
//! own shard interleave streams, and the pread path (`DIRECT_READERS`
//! blocking reads per checker) let the queue run dry whenever its readers
//! were between reads. The checkers verify 16 KiB pages at several GB/s
//! each (crc32), so one stream of reads keeps them all busy.
//!
//! Depth and request size come from fio on the 3.4 GB bench file, cold, on
//! this VM (virtio-blk, `max_sectors_kb` 4096, one hardware queue), while
//! other work shared the disk: medians of 3–7 alternating runs of
//! `fio --rw=read --direct=1 --readonly` in MB/s, psync 4 MiB (the bench
//! baseline, one read at a time) 426; io_uring 4 MiB at depth 2/4/8:
//! 503/498/622; 8 MiB at 2/4/8: 472/601/651; 2 MiB at 2/4/8: 556/724/779;
//! 1 MiB at 2–16: 450–500. Single runs ranged 3× (120–1466) with the
//! neighbours' load, so only the shape is trusted: several MiB per read,
//! and the more bytes in flight (up to 32 MiB) the better; 1 MiB reads never
//! were. 4 MiB is one device request (`max_sectors_kb`) and fio's own size;
//! 8 of them keep 32 MiB in flight.
//!
//! A ring that cannot be made (kernel without io_uring,
//! `kernel.io_uring_disabled`, a seccomp filter) leaves `--direct` on the
//! pread path, which reads the same bytes; so does the environment variable
//! `INNOTUNE_CHECKSUM_NO_URING=1`, which exists so the tests can cover that path.

use super::reader::{open_readonly, read_full, shared_lock, Msg, Options, Shard, Target};
use crate::aligned::{AlignedBuf, ALIGN};
use io_uring::{opcode, types, IoUring};
use std::collections::HashSet;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};

/// Reads in flight (see the measurements above).
pub const DEPTH: usize = 8;
/// Bytes per read.
pub const CHUNK: usize = 4 << 20;
/// Buffers: the reads in flight plus one being checked per checker and one
/// queued for it, so a checker that is momentarily slower does not stall the reads.
/// (Capped: more checkers than cores only wait for each other.)
fn pool_size(checkers: usize) -> usize {
    DEPTH + 2 * checkers.min(8)
}

/// Capacity of each checker's channel: every buffer of the pool plus a
/// Start per chunk fit, so the reader never blocks on a send.
pub const CHANNEL: usize = 2 * (DEPTH + 16) + 4;

/// Set only by tests: take the pread path even where io_uring works.
pub const DISABLE_ENV: &str = "INNOTUNE_CHECKSUM_NO_URING";

/// A ring and its buffers, made on the calling thread (so a refusal is
/// known before any thread starts) and used by the reader thread, which
/// becomes its single issuer.
pub struct Ring {
    ring: IoUring,
    /// Every buffer of the pool, by registered index (only the addresses:
    /// the buffers themselves move between the reader and the checkers).
    addrs: Vec<usize>,
    free: Vec<AlignedBuf>,
    fixed: bool,
    disabled: bool,
}

impl Drop for Ring {
    /// Unregister now rather than in the ring's deferred teardown, which
    /// keeps pages pinned after the process has moved on (see the bench
    /// engine's `UringEngine`).
    fn drop(&mut self) {
        if self.fixed {
            let _ = self.ring.submitter().unregister_buffers();
        }
    }
}

impl Ring {
    /// None when io_uring is unavailable or refused (or disabled for tests).
    pub fn new(checkers: usize) -> Option<Ring> {
        if std::env::var_os(DISABLE_ENV).is_some_and(|v| v == "1") {
            return None;
        }
        let entries = (DEPTH as u32).next_power_of_two();
        // Single issuer + deferred task running: completions are run when
        // the reader waits, not by interrupting it. The ring starts disabled
        // because the reader thread, not this one, submits.
        let (ring, disabled) = match IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .setup_r_disabled()
            .build(entries)
        {
            Ok(r) => (r, true),
            Err(_) => (IoUring::new(entries).ok()?, false),
        };
        let free: Vec<AlignedBuf> = (0..pool_size(checkers))
            .map(|_| AlignedBuf::new_huge(CHUNK))
            .collect();
        let addrs: Vec<usize> = free.iter().map(|b| b.as_mut_ptr() as usize).collect();
        let iovecs: Vec<libc::iovec> = free
            .iter()
            .map(|b| libc::iovec {
                iov_base: b.as_mut_ptr().cast(),
                iov_len: b.len(),
            })
            .collect();
        // Registered buffers spare the kernel pinning 1024 pages per read.
        // Refused (RLIMIT_MEMLOCK without CAP_IPC_LOCK): plain reads.
        // SAFETY: the buffers live as long as the ring: they are only ever
        // dropped after the ring has no read in flight into them and after
        // unregistering (Reader::drop, then Ring::drop).
        let fixed = unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
        Some(Ring {
            ring,
            addrs,
            free,
            fixed,
            disabled,
        })
    }
}

/// One read in flight, indexed by its buffer's registered index.
struct InFlight {
    shard: usize,
    file: Arc<File>,
    first_page: u64,
    pages: usize,
    /// Bytes the pages need (the read asks for this rounded up to ALIGN).
    want: usize,
    off: u64,
    buf: AlignedBuf,
    lock_refused: bool,
    direct_unsupported: bool,
}

/// The shard being queued: its open file and the next page to read.
struct Cursor {
    shard: usize,
    file: Arc<File>,
    lock_refused: bool,
    direct_unsupported: bool,
    next_page: u64,
}

/// Per-file open, shared by consecutive shards of the same file.
struct Opened {
    target: usize,
    direct: bool,
    file: Arc<File>,
    lock_refused: bool,
    refused: bool,
}

pub struct Reader<'a> {
    ring: Ring,
    targets: &'a [Target],
    shards: &'a [Shard],
    next: &'a AtomicUsize,
    opts: Options,
    outs: Vec<mpsc::SyncSender<Msg>>,
    returned: mpsc::Receiver<AlignedBuf>,
    inflight: Vec<Option<InFlight>>,
    in_flight: usize,
    /// Chunks handed to each checker and not yet returned.
    outstanding: Vec<usize>,
    /// Which checker holds each buffer (by registered index).
    owner: Vec<usize>,
    /// (shard, checker) pairs whose Start was sent.
    started: HashSet<(usize, usize)>,
    /// Shards whose read failed: their later chunks are dropped, as the
    /// pread path stops a shard at its first error.
    failed: Vec<bool>,
    cursor: Option<Cursor>,
    opened: Option<Opened>,
    /// The checkers hung up (one panicked): stop queueing.
    gone: bool,
    /// The ring could not be enabled: each read is done at once with pread.
    sync: bool,
}

impl Drop for Reader<'_> {
    /// Never free a buffer the kernel may still write into: wait for every
    /// read in flight, whatever path leaves the reader.
    fn drop(&mut self) {
        while self.in_flight > 0 {
            match self.ring.ring.submit_and_wait(1) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(_) => {
                    // Cannot reap: leak the buffers rather than free them under the kernel.
                    for slot in self.inflight.iter_mut() {
                        if let Some(f) = slot.take() {
                            std::mem::forget(f.buf);
                        }
                    }
                    return;
                }
            }
            let done: Vec<u64> = self.ring.ring.completion().map(|c| c.user_data()).collect();
            for idx in done {
                if self.inflight[idx as usize].take().is_some() {
                    self.in_flight -= 1;
                }
            }
        }
    }
}

impl<'a> Reader<'a> {
    pub fn new(
        ring: Ring,
        targets: &'a [Target],
        shards: &'a [Shard],
        next: &'a AtomicUsize,
        opts: Options,
        outs: Vec<mpsc::SyncSender<Msg>>,
        returned: mpsc::Receiver<AlignedBuf>,
    ) -> Reader<'a> {
        let n = ring.addrs.len();
        Reader {
            ring,
            targets,
            shards,
            next,
            opts,
            outstanding: vec![0; outs.len()],
            outs,
            returned,
            inflight: (0..n).map(|_| None).collect(),
            in_flight: 0,
            owner: vec![0; n],
            started: HashSet::new(),
            failed: vec![false; shards.len()],
            cursor: None,
            opened: None,
            gone: false,
            sync: false,
        }
    }

    /// Read every shard taken from `next`, until none is left or the checkers are gone.
    pub fn run(mut self) {
        if self.ring.disabled {
            // Refused only by a kernel that accepted R_DISABLED and then
            // changed its mind; read synchronously rather than not at all.
            self.sync = self.ring.ring.submitter().register_enable_rings().is_err();
            self.ring.disabled = false;
        }
        let mut more = true;
        loop {
            while let Ok(b) = self.returned.try_recv() {
                self.give_back(b);
            }
            while more && !self.gone && self.in_flight < DEPTH && !self.ring.free.is_empty() {
                more = self.queue_one();
            }
            if self.gone {
                return;
            }
            if self.in_flight == 0 {
                if !more {
                    return;
                }
                // Every buffer is with a checker: wait for one back.
                match self.returned.recv() {
                    Ok(b) => self.give_back(b),
                    Err(_) => return,
                }
                continue;
            }
            match self.ring.ring.submit_and_wait(1) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) => {
                    // The ring broke (not a read error: those come in CQEs).
                    // Pending reads are reaped by Drop; say which shard stopped.
                    if let Some(c) = &self.cursor {
                        let msg = format!("io_uring: {e}");
                        self.fail(c.shard, msg);
                    }
                    return;
                }
            }
            let done: Vec<(u64, i32)> = self
                .ring
                .ring
                .completion()
                .map(|c| (c.user_data(), c.result()))
                .collect();
            for (idx, res) in done {
                self.complete(idx as usize, res);
            }
        }
    }

    fn index_of(&self, b: &AlignedBuf) -> usize {
        let a = b.as_mut_ptr() as usize;
        self.ring
            .addrs
            .iter()
            .position(|&x| x == a)
            .expect("buffer from this pool")
    }

    fn give_back(&mut self, b: AlignedBuf) {
        let i = self.index_of(&b);
        self.outstanding[self.owner[i]] -= 1;
        self.ring.free.push(b);
    }

    /// Queue the next read; false when every shard is done.
    fn queue_one(&mut self) -> bool {
        let Some((idx, sqe)) = self.next_read() else {
            return false;
        };
        if self.sync {
            let f = self.inflight[idx].as_mut().expect("queued read");
            let len = f.want.div_ceil(ALIGN) * ALIGN;
            let res = match read_full(&f.file, &mut f.buf.as_mut_slice()[..len], f.off) {
                Ok(n) => n as i32,
                Err(e) => -e.raw_os_error().unwrap_or(libc::EIO),
            };
            self.in_flight += 1;
            self.complete(idx, res);
            return true;
        }
        // SAFETY: the buffer of `idx` is owned by `inflight[idx]` and neither
        // read nor freed until this read's completion is reaped (run/Drop).
        let pushed = unsafe { self.ring.ring.submission().push(&sqe) };
        if pushed.is_err() {
            // The ring holds DEPTH entries and at most DEPTH are queued; flush anyway.
            let _ = self.ring.ring.submit();
            // SAFETY: as above.
            if unsafe { self.ring.ring.submission().push(&sqe) }.is_err() {
                let f = self.inflight[idx].take().expect("queued read");
                self.ring.free.push(f.buf);
                self.fail(f.shard, "io_uring submission queue full".to_string());
                return true;
            }
        }
        self.in_flight += 1;
        true
    }

    /// Take the next chunk (opening the next shard's file as needed), park
    /// its buffer in `inflight`, and build its read. None: no work left.
    fn next_read(&mut self) -> Option<(usize, io_uring::squeue::Entry)> {
        loop {
            if self.cursor.is_none() {
                let si = self.next.fetch_add(1, Ordering::Relaxed);
                let sh = *self.shards.get(si)?;
                match self.open(si, &sh) {
                    Some(c) => self.cursor = Some(c),
                    None => continue,
                }
            }
            let c = self.cursor.as_mut().expect("cursor set above");
            let sh = self.shards[c.shard];
            if c.next_page >= sh.end || self.failed[c.shard] {
                self.cursor = None;
                continue;
            }
            let ps = self.targets[sh.file].layout.physical;
            let per_chunk = (CHUNK / ps).max(1) as u64;
            let p = c.next_page;
            let n = per_chunk.min(sh.end - p) as usize;
            c.next_page += n as u64;
            let (shard, file) = (c.shard, c.file.clone());
            let (lock_refused, direct_unsupported) = (c.lock_refused, c.direct_unsupported);
            let want = n * ps;
            // O_DIRECT needs the length aligned too; past EOF comes back short.
            let len = want.div_ceil(ALIGN) * ALIGN;
            let off = p * ps as u64;
            let buf = self.ring.free.pop().expect("caller checked a free buffer");
            let idx = self.index_of(&buf);
            let ptr = buf.as_mut_ptr();
            let fd = types::Fd(file.as_raw_fd());
            let sqe = if self.ring.fixed {
                opcode::ReadFixed::new(fd, ptr, len as u32, idx as u16)
                    .offset(off)
                    .build()
            } else {
                opcode::Read::new(fd, ptr, len as u32).offset(off).build()
            };
            self.inflight[idx] = Some(InFlight {
                shard,
                file,
                first_page: p,
                pages: n,
                want,
                off,
                buf,
                lock_refused,
                direct_unsupported,
            });
            return Some((idx, sqe.user_data(idx as u64)));
        }
    }

    /// Open a shard's file (or reuse the previous shard's open of it).
    fn open(&mut self, si: usize, sh: &Shard) -> Option<Cursor> {
        let targets = self.targets;
        let t = &targets[sh.file];
        let ps = t.layout.physical as u64;
        // O_DIRECT needs aligned offsets; a range starting mid-block (1-2 KiB
        // compressed pages) is read through the page cache, as on the pread path.
        let direct = self.opts.direct && (sh.first * ps) % ALIGN as u64 == 0;
        let reuse = matches!(&self.opened, Some(o) if o.target == sh.file && o.direct == direct);
        if !reuse {
            match open_readonly(&t.path, direct) {
                Ok((f, refused)) => {
                    let lock_refused = !shared_lock(&f);
                    self.opened = Some(Opened {
                        target: sh.file,
                        direct,
                        file: Arc::new(f),
                        lock_refused,
                        refused,
                    });
                }
                Err(e) => {
                    self.fail(
                        si,
                        format!("cannot open {}: {e}", crate::output::path(&t.path)),
                    );
                    return None;
                }
            }
        }
        let o = self.opened.as_ref().expect("opened above");
        Some(Cursor {
            shard: si,
            file: o.file.clone(),
            lock_refused: o.lock_refused,
            direct_unsupported: o.refused,
            next_page: sh.first,
        })
    }

    /// The checker with the fewest chunks in hand.
    fn least_busy(&self) -> usize {
        (0..self.outs.len())
            .min_by_key(|&c| self.outstanding[c])
            .unwrap_or(0)
    }

    fn send(&mut self, c: usize, msg: Msg) {
        if self.outs[c].send(msg).is_err() {
            self.gone = true;
        }
    }

    /// Report a shard's error once and drop the rest of the shard.
    fn fail(&mut self, shard: usize, msg: String) {
        if !self.failed[shard] {
            self.failed[shard] = true;
            let c = self.least_busy();
            self.send(c, Msg::Error { shard, msg });
        }
    }

    fn complete(&mut self, idx: usize, res: i32) {
        let Some(mut f) = self.inflight[idx].take() else {
            return;
        };
        self.in_flight -= 1;
        let targets = self.targets;
        let t = &targets[self.shards[f.shard].file];
        let len = f.want.div_ceil(ALIGN) * ALIGN;
        let got = if res == -libc::EAGAIN || res == -libc::EINTR {
            // Not an I/O error: read this chunk synchronously instead.
            read_full(&f.file, &mut f.buf.as_mut_slice()[..len], f.off)
        } else if res < 0 {
            Err(std::io::Error::from_raw_os_error(-res))
        } else {
            let n = res as usize;
            if n >= f.want || n == 0 {
                Ok(n)
            } else {
                // A short read before the pages end: finish it with pread
                // (which loops), so only a real end of file counts as short.
                read_full(&f.file, &mut f.buf.as_mut_slice()[n..len], f.off + n as u64)
                    .map(|m| n + m)
            }
        };
        if self.failed[f.shard] {
            self.ring.free.push(f.buf);
            return;
        }
        let p = f.first_page;
        match got {
            Ok(n) if n >= f.want => {
                let c = self.least_busy();
                if self.started.insert((f.shard, c)) {
                    self.send(
                        c,
                        Msg::Start {
                            shard: f.shard,
                            file: f.file.clone(),
                            lock_refused: f.lock_refused,
                            direct_unsupported: f.direct_unsupported,
                        },
                    );
                }
                self.owner[idx] = c;
                self.outstanding[c] += 1;
                let msg = Msg::Chunk {
                    shard: f.shard,
                    first_page: p,
                    pages: f.pages,
                    data: super::reader::ChunkData::Buf(f.buf),
                };
                self.send(c, msg);
            }
            Ok(n) => {
                self.ring.free.push(f.buf);
                let msg = format!(
                    "{}: file shrank while reading (got {n} bytes at page {p}, expected {})",
                    crate::output::path(&t.path),
                    f.want
                );
                self.fail(f.shard, msg);
            }
            Err(e) => {
                self.ring.free.push(f.buf);
                let msg = format!(
                    "{}: read error at page {p}: {e}",
                    crate::output::path(&t.path)
                );
                self.fail(f.shard, msg);
            }
        }
    }
}
