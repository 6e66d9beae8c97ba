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
        use rand::RngCore;
        let mut buf = crate::aligned::AlignedBuf::new(bs * depth);
        rand::thread_rng().fill_bytes(buf.as_mut_slice());
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

/// The descriptors a thread opened, closed when dropped.
pub struct Fds(pub Vec<RawFd>);

impl Drop for Fds {
    fn drop(&mut self) {
        for &fd in &self.0 {
            // SAFETY: fds were opened by this thread and are closed once.
            unsafe {
                libc::close(fd);
            }
        }
    }
}
