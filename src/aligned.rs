//! Heap buffers aligned for O_DIRECT, shared by the bench engines and the
//! checksum reader.
//!
//! Hand-written (std::alloc with an explicit alignment) because `Vec<u8>`
//! cannot promise 4096-byte alignment and no small, well-kept crate offers
//! just this. Buffers are zeroed at allocation so every byte is initialised.

/// The alignment O_DIRECT needs on every Linux filesystem and device innotune
/// meets (logical blocks are at most 4 KiB).
pub const ALIGN: usize = 4096;

pub struct AlignedBuf {
    ptr: *mut u8,
    len: usize,
    align: usize,
}

// Plain owned memory; moving it between threads (reader → checker, or a
// bench thread handing it to the kernel for its own I/Os) is sound.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// A zeroed buffer of at least `len` bytes, rounded up to [`ALIGN`].
    pub fn new(len: usize) -> AlignedBuf {
        let len = len.max(1).div_ceil(ALIGN) * ALIGN;
        let layout = Self::layout(len, ALIGN);
        // SAFETY: non-zero size, valid power-of-two alignment; null handled.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBuf {
            ptr,
            len,
            align: ALIGN,
        }
    }

    /// A zeroed buffer of `len` bytes (a multiple of 2 MiB) on transparent
    /// huge pages where the kernel allows them. Why: with an alignment above
    /// 16 the allocator zeroes with a memset, and faulting in a 4 MiB buffer
    /// 4 KiB at a time cost ~4 ms here (measured with strace -r: a 12-buffer
    /// io_uring pool was ~50 ms of a 70 ms `checksum --direct` start); two
    /// 2 MiB faults cost a fraction of that, and the device gets physically
    /// contiguous segments. Without THP (`never`) it is a plain buffer.
    pub fn new_huge(len: usize) -> AlignedBuf {
        const HUGE: usize = 2 << 20;
        let len = len.max(1).div_ceil(HUGE) * HUGE;
        let layout = Self::layout(len, HUGE);
        // SAFETY: non-zero size, valid power-of-two alignment; null handled.
        let ptr = unsafe { std::alloc::alloc(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        // SAFETY: the range is this allocation; advice only, failure harmless.
        unsafe { libc::madvise(ptr.cast(), len, libc::MADV_HUGEPAGE) };
        // SAFETY: ptr owns len writable bytes.
        unsafe { std::ptr::write_bytes(ptr, 0, len) };
        AlignedBuf {
            ptr,
            len,
            align: HUGE,
        }
    }

    fn layout(len: usize, align: usize) -> std::alloc::Layout {
        std::alloc::Layout::from_size_align(len, align).expect("buffer size fits a layout")
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr owns len initialised (zeroed at allocation) bytes.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self gives exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }

    /// Raw pointer for I/O submitted to the kernel (io_uring), which writes
    /// into the buffer while no Rust reference to it is live.
    pub fn as_mut_ptr(&self) -> *mut u8 {
        self.ptr
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in new() with this layout.
        unsafe { std::alloc::dealloc(self.ptr, Self::layout(self.len, self.align)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_zeroed_and_rounded() {
        let mut b = AlignedBuf::new(5000);
        assert_eq!(b.len(), 8192);
        assert_eq!(b.as_mut_ptr() as usize % ALIGN, 0);
        assert!(b.as_slice().iter().all(|&x| x == 0));
        b.as_mut_slice()[8191] = 7;
        assert_eq!(b.as_slice()[8191], 7);
    }
}
