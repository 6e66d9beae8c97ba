//! I/O engines behind one interface, as fio's `ioengine_ops`: the job loop
//! (runner.rs) queues I/Os into numbered slots and reaps completions; it knows
//! nothing of how they reach the kernel.
//!
//! A synchronous engine completes an I/O inside [`Engine::queue`] (fio's
//! `FIO_Q_COMPLETED`); an asynchronous one only prepares it there and
//! submits the whole batch in [`Engine::reap`], one system call for many I/Os.

pub mod sync;
pub mod uring;

use anyhow::Result;
use std::os::fd::RawFd;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
}

/// One I/O of `len` bytes on file `file` (index into the engine's fds) at
/// `offset`, using the buffer of `slot`.
#[derive(Debug, Clone, Copy)]
pub struct Io {
    pub op: Op,
    pub file: usize,
    pub offset: u64,
    pub slot: usize,
}

pub trait Engine {
    /// Called once on the thread that will issue the I/Os, before the first.
    fn start(&mut self) -> Result<()> {
        Ok(())
    }
    /// Queue one I/O. Returns `Some(result)` if it already completed
    /// (bytes transferred, or `-errno`), `None` if it is in flight.
    fn queue(&mut self, io: Io) -> Result<Option<i64>>;
    /// Submit everything queued and wait for at least `min` completions;
    /// `done(slot, result)` is called for each one reaped.
    fn reap(&mut self, min: usize, done: &mut dyn FnMut(usize, i64)) -> Result<()>;
}

/// With `mem=auto`, a thread's buffers go on huge pages from this many bytes.
pub const HUGE_BUFFERS_FROM: usize = 2 << 20;

/// With `mem=auto`, an I/O of this size or larger puts its thread's buffers
/// on huge pages whatever the depth: from 4 KiB pages a 1 MiB read reached a
/// loop device as two 512 KiB requests (128 segments at most), and at depth 1
/// huge pages gave 1.056x (1.030-1.084) the rate of 4 KiB pages over 128 KiB
/// to 1 MiB sequential reads, never slower at any size (bench/RESULTS.md,
/// 2026-11-27 23:16). Below it (16 KiB pages) they bought nothing (14:03).
pub const HUGE_IO_FROM: usize = 128 << 10;

/// `depth` page-aligned buffers of `bs` bytes, allocated once per thread:
/// O_DIRECT needs the alignment, and the hot loop must not allocate. Write
/// buffers hold random bytes so nothing below can compress or dedupe them.
pub struct Buffers {
    buf: crate::aligned::AlignedBuf,
    bs: usize,
    depth: usize,
}

impl Buffers {
    /// `huge`: on transparent huge pages (see [`crate::bench::job::Mem`]);
    /// each large I/O is then one physically contiguous segment instead of
    /// a 4 KiB page list for the device (and a loop device's copy) to walk.
    /// Measured with bench/engine-variants/seq-ab.sh (1 MiB reads at depth
    /// 16, RAM-backed loop, 10 alternating rounds): 7133 MiB/s on huge pages
    /// against 5682 on 4 KiB pages, fio 6114.
    pub fn new(bs: usize, depth: usize, huge: bool) -> Buffers {
        let len = bs * depth;
        let mut buf = if huge {
            crate::aligned::AlignedBuf::new_huge(len)
        } else {
            crate::aligned::AlignedBuf::new(len)
        };
        fill_random(buf.as_mut_slice());
        Buffers { buf, bs, depth }
    }
    pub fn bs(&self) -> usize {
        self.bs
    }
    pub fn depth(&self) -> usize {
        self.depth
    }
    pub fn slot_ptr(&self, slot: usize) -> *mut u8 {
        assert!(slot < self.depth);
        // SAFETY: slot < depth, so the offset stays inside the allocation
        // (bs * depth bytes, rounded up).
        unsafe { self.buf.as_mut_ptr().add(slot * self.bs) }
    }
}

/// Incompressible bytes, fast: the data only has to defeat compression and
/// deduplication below us, not be unpredictable, so a small non-crypto
/// generator (xoshiro, ~1 GB/s unoptimised, 10x that optimised) replaces the
/// ChaCha of `thread_rng`, which dominated short runs of the debug binary.
pub fn fill_random(buf: &mut [u8]) {
    use rand::{RngCore, SeedableRng};
    rand::rngs::SmallRng::from_entropy().fill_bytes(buf);
}

/// The descriptors a thread opened; `OwnedFd` closes each when dropped.
pub struct Fds(pub Vec<std::os::fd::OwnedFd>);

impl Fds {
    /// The raw descriptors, for engines that hand them to the kernel. They
    /// stay valid as long as `self` lives.
    pub fn raw(&self) -> Vec<RawFd> {
        use std::os::fd::AsRawFd;
        self.0.iter().map(|f| f.as_raw_fd()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::Buffers;

    /// kB of anonymous huge pages in the mapping that holds `addr`.
    fn anon_huge_kb(addr: usize) -> Option<u64> {
        let maps = crate::model::process::own_smaps(&crate::host::Host::live()).ok()?;
        maps.iter()
            .find(|m| (m.start..m.end).contains(&(addr as u64)))
            .map(|m| m.anon_huge_bytes / 1024)
    }

    #[test]
    fn huge_buffers_sit_on_huge_pages() {
        let big = Buffers::new(1 << 20, 16, true);
        let p = big.slot_ptr(0) as usize;
        assert_eq!(p % (2 << 20), 0, "a 16 MiB set is 2 MiB aligned");
        let thp = crate::model::system::read(&crate::host::Host::live()).thp_enabled;
        if thp.value().is_some_and(|v| v != "never") {
            let kb = anon_huge_kb(p).expect("the buffer's mapping is in smaps");
            assert!(
                kb >= 2048,
                "expected huge pages under the buffers, got {kb} kB"
            );
        }
        // Slots are bs apart and writable end to end.
        let last = big.slot_ptr(15);
        assert_eq!(last as usize - p, 15 << 20);
        // SAFETY: slot 15 holds bs (1 MiB) bytes of the allocation.
        unsafe { std::ptr::write_bytes(last, 7, 1 << 20) };

        let small = Buffers::new(16 << 10, 32, false);
        assert_eq!(small.slot_ptr(0) as usize % 4096, 0, "O_DIRECT alignment");
    }
}
