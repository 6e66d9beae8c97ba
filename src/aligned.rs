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
}

// Plain owned memory; moving it between threads (reader → checker, or a
// bench thread handing it to the kernel for its own I/Os) is sound.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// A zeroed buffer of at least `len` bytes, rounded up to [`ALIGN`].
    pub fn new(len: usize) -> AlignedBuf {
        let len = len.max(1).div_ceil(ALIGN) * ALIGN;
        let layout = Self::layout(len);
        // SAFETY: non-zero size, valid power-of-two alignment; null handled.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBuf { ptr, len }
    }

    fn layout(len: usize) -> std::alloc::Layout {
        std::alloc::Layout::from_size_align(len, ALIGN).expect("buffer size fits a layout")
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
        unsafe { std::alloc::dealloc(self.ptr, Self::layout(self.len)) }
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
