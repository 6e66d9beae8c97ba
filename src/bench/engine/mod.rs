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
/// O_DIRECT needs the alignment, and the hot loop must not allocate.
/// Hand-written (std::alloc with an alignment) because no dependency offers
/// just this; write buffers hold random bytes so nothing below can compress
/// or dedupe them.
pub struct Buffers {
    ptr: *mut u8,
    layout: std::alloc::Layout,
    bs: usize,
    depth: usize,
}

// The buffers are owned by one thread; the raw pointer is only shared with
// the kernel for I/Os this thread issued and reaps.
unsafe impl Send for Buffers {}

impl Buffers {
    pub fn new(bs: usize, depth: usize) -> Buffers {
        use rand::RngCore;
        let layout = std::alloc::Layout::from_size_align(bs * depth, 4096).expect("buffer layout");
        // SAFETY: layout has non-zero size (bs >= 512, depth >= 1).
        let ptr = unsafe { std::alloc::alloc(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        // SAFETY: ptr is valid for bs*depth bytes, just allocated.
        let s = unsafe { std::slice::from_raw_parts_mut(ptr, bs * depth) };
        rand::thread_rng().fill_bytes(s);
        Buffers {
            ptr,
            layout,
            bs,
            depth,
        }
    }
    pub fn bs(&self) -> usize {
        self.bs
    }
    pub fn depth(&self) -> usize {
        self.depth
    }
    pub fn slot_ptr(&self, slot: usize) -> *mut u8 {
        assert!(slot < self.depth);
        // SAFETY: slot < depth, so the offset stays inside the allocation.
        unsafe { self.ptr.add(slot * self.bs) }
    }
}

impl Drop for Buffers {
    fn drop(&mut self) {
        // SAFETY: allocated in new() with this layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
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
