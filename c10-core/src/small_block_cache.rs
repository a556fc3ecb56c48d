//! A per-thread cache of small, aligned CPU blocks.
//!
//! An eager operator on a few elements allocates one small output buffer and
//! frees it soon after. Aligned allocation is the slow path of most `malloc`
//! implementations (glibc's `posix_memalign` splits a larger chunk and frees
//! the pieces, several hundred instructions, more than the rest of the
//! allocation and the kernel together), so blocks of up to
//! [`MAX_CACHED_BYTES`] are kept in per-thread free lists by size class and
//! handed out again. A block freed on another thread than the one that made
//! it joins that thread's lists; lists are bounded, and a thread's blocks are
//! returned to the system allocator when the thread ends.
//!
//! Blocks are handed out zeroed, like every CPU allocation.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::cell::RefCell;
use std::ptr::NonNull;

use crate::storage::ALIGNMENT;

/// The largest block size kept in the cache.
pub(crate) const MAX_CACHED_BYTES: usize = 1024;

/// Size classes: multiples of the alignment up to [`MAX_CACHED_BYTES`].
const CLASSES: usize = MAX_CACHED_BYTES / ALIGNMENT;

/// Blocks kept per size class and thread.
const BLOCKS_PER_CLASS: usize = 16;

/// One thread's free lists.
struct FreeLists {
    lists: [Vec<NonNull<u8>>; CLASSES],
}

impl Drop for FreeLists {
    fn drop(&mut self) {
        for (class, list) in self.lists.iter_mut().enumerate() {
            let layout = class_layout(class);
            for block in list.drain(..) {
                // SAFETY: every cached block was allocated with its class's
                // layout and is owned by the list.
                unsafe { dealloc(block.as_ptr(), layout) };
            }
        }
    }
}

thread_local! {
    static FREE_LISTS: RefCell<FreeLists> = const {
        RefCell::new(FreeLists { lists: [const { Vec::new() }; CLASSES] })
    };
}

/// The size class of a block of `size` bytes, if it is cached.
fn class_of(size: usize) -> Option<usize> {
    (size <= MAX_CACHED_BYTES).then(|| size.max(1).div_ceil(ALIGNMENT) - 1)
}

fn class_layout(class: usize) -> Layout {
    // The size is a non-zero multiple of the (power-of-two) alignment.
    Layout::from_size_align((class + 1) * ALIGNMENT, ALIGNMENT).expect("valid class layout")
}

/// The layout a block of `size` bytes is allocated with: its class's layout
/// when it is cached, else `size` (at least one byte) at [`ALIGNMENT`].
/// `None` when `size` is too large for any layout.
pub(crate) fn block_layout(size: usize) -> Option<Layout> {
    match class_of(size) {
        Some(class) => Some(class_layout(class)),
        None => Layout::from_size_align(size, ALIGNMENT).ok(),
    }
}

/// A zeroed block of `layout` (from [`block_layout`]); null when out of
/// memory.
pub(crate) fn allocate(layout: Layout) -> *mut u8 {
    if let Some(class) = class_of(layout.size()) {
        let cached = FREE_LISTS
            .try_with(|lists| lists.borrow_mut().lists[class].pop())
            .ok()
            .flatten();
        if let Some(block) = cached {
            // SAFETY: the block holds `layout.size()` bytes (its class's
            // size) and is owned by the caller from now on.
            unsafe { block.as_ptr().write_bytes(0, layout.size()) };
            return block.as_ptr();
        }
    }
    // SAFETY: `layout` has a non-zero size.
    unsafe { alloc_zeroed(layout) }
}

/// Frees a block from [`allocate`].
///
/// # Safety
///
/// `ptr` must come from [`allocate`] with this `layout` and not be used
/// afterwards.
pub(crate) unsafe fn free(ptr: NonNull<u8>, layout: Layout) {
    if let Some(class) = class_of(layout.size()) {
        let kept = FREE_LISTS
            .try_with(|lists| {
                let list = &mut lists.borrow_mut().lists[class];
                if list.len() < BLOCKS_PER_CLASS {
                    list.push(ptr);
                    true
                } else {
                    false
                }
            })
            .unwrap_or(false);
        if kept {
            return;
        }
    }
    // SAFETY: the caller passes a block allocated with `layout`.
    unsafe { dealloc(ptr.as_ptr(), layout) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_come_back_zeroed_aligned_and_reused() {
        let layout = block_layout(12).unwrap();
        assert_eq!((layout.size(), layout.align()), (64, ALIGNMENT));
        let a = allocate(layout);
        assert!(!a.is_null() && a as usize % ALIGNMENT == 0);
        // SAFETY: `a` holds 64 bytes.
        unsafe { a.write_bytes(0xAB, 64) };
        // SAFETY: `a` came from `allocate(layout)`.
        unsafe { free(NonNull::new(a).unwrap(), layout) };
        let b = allocate(layout);
        assert_eq!(a, b, "the freed block is reused");
        // SAFETY: `b` holds 64 bytes.
        assert!(unsafe { std::slice::from_raw_parts(b, 64) }
            .iter()
            .all(|&x| x == 0));
        // SAFETY: `b` came from `allocate(layout)`.
        unsafe { free(NonNull::new(b).unwrap(), layout) };
    }

    #[test]
    fn sizes_map_to_classes() {
        assert_eq!(class_of(0), Some(0));
        assert_eq!(class_of(64), Some(0));
        assert_eq!(class_of(65), Some(1));
        assert_eq!(class_of(MAX_CACHED_BYTES), Some(CLASSES - 1));
        assert_eq!(class_of(MAX_CACHED_BYTES + 1), None);
        assert_eq!(block_layout(5000).unwrap().size(), 5000);
    }

    #[test]
    fn blocks_freed_on_another_thread_are_released() {
        let layout = block_layout(100).unwrap();
        let blocks: Vec<usize> = (0..BLOCKS_PER_CLASS + 4)
            .map(|_| allocate(layout) as usize)
            .collect();
        std::thread::spawn(move || {
            for b in blocks {
                // SAFETY: each block came from `allocate(layout)`.
                unsafe { free(NonNull::new(b as *mut u8).unwrap(), layout) };
            }
        })
        .join()
        .unwrap();
    }
}
