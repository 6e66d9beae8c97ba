//! pread/pwrite, one I/O at a time per thread (fio's `psync`). The simplest
//! honest engine: latency is exactly one system call.

use super::{Buffers, Engine, Io, Op};
use anyhow::Result;
use std::os::fd::RawFd;

pub struct SyncEngine {
    fds: Vec<RawFd>,
    bufs: Buffers,
}

impl SyncEngine {
    pub fn new(fds: Vec<RawFd>, bufs: Buffers) -> SyncEngine {
        SyncEngine { fds, bufs }
    }
}

impl Engine for SyncEngine {
    fn queue(&mut self, io: Io) -> Result<Option<i64>> {
        let fd = self.fds[io.file];
        let p = self.bufs.slot_ptr(io.slot);
        let n = self.bufs.bs();
        // SAFETY: p points to n bytes owned by this thread.
        let r = unsafe {
            match io.op {
                Op::Read => libc::pread(fd, p.cast(), n, io.offset as libc::off_t),
                Op::Write => libc::pwrite(fd, p.cast(), n, io.offset as libc::off_t),
            }
        };
        let r = if r < 0 {
            -(std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO) as i64)
        } else {
            r as i64
        };
        Ok(Some(r))
    }

    fn reap(&mut self, _min: usize, _done: &mut dyn FnMut(usize, i64)) -> Result<()> {
        // Every I/O completed in queue(); nothing is ever in flight.
        Ok(())
    }
}
