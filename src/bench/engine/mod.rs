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

/// `depth` page-aligned buffers of `bs` bytes, allocated once per thread:
/// O_DIRECT needs the alignment, and the hot loop must not allocate. Write
/// buffers hold random bytes so nothing below can compress or dedupe them.
pub struct Buffers {
    buf: crate::aligned::AlignedBuf,
    bs: usize,
    depth: usize,
}

impl Buffers {
    pub fn new(bs: usize, depth: usize) -> Buffers {
        let mut buf = crate::aligned::AlignedBuf::new(bs * depth);
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
