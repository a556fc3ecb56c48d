//! Keeping freed memory in the process, as a model runner's arena does.
//!
//! glibc's `malloc` serves large blocks with `mmap` and gives them back on
//! `free`, and trims the top of its heap once enough there is free: a
//! program that makes and frees the same large intermediates on every call
//! then faults in and clears fresh pages on every call (PyTorch's own
//! measurements on this machine kind put a third of a convolution's time
//! in page faults). ONNX Runtime keeps an arena for the same reason.
//! [`retain_freed_memory`] sets the `mmap` threshold to its largest value
//! and the trim threshold high, so freed blocks stay in the heap and are
//! reused; the peak resident memory stays what the largest call needs.
//! The `aten` tool calls it first thing, before any tensor exists; a
//! library must not change its host's allocator, so the crates never do.

/// Keeps freed memory for reuse (glibc on Linux; elsewhere nothing).
pub fn retain_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::ffi::c_int;
        // `mallopt`'s parameters, from glibc's `malloc.h`.
        const M_TRIM_THRESHOLD: c_int = -1;
        const M_MMAP_THRESHOLD: c_int = -3;
        // The largest `mmap` threshold glibc accepts on 64-bit systems.
        const MMAP_THRESHOLD_MAX: c_int = 32 << 20;
        const TRIM_THRESHOLD: c_int = 1 << 30;
        extern "C" {
            fn mallopt(param: c_int, value: c_int) -> c_int;
        }
        // SAFETY: `mallopt` takes two integers and only changes tuning
        // parameters of the allocator (under its own lock); it returns 0
        // for a value it rejects, which leaves the default in place.
        unsafe {
            mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_MAX);
            mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD);
        }
    }
}
