//! A per-thread cache of small and medium aligned CPU blocks, and of the
//! small blocks behind shared handles.
//!
//! An eager operator allocates its output and frees it soon after. For a
//! few elements, aligned allocation is the slow path of most `malloc`
//! implementations (glibc's `posix_memalign` splits a larger chunk and frees
//! the pieces, several hundred instructions, more than the rest of the
//! allocation and the kernel together). For tens of kilobytes, glibc gives
//! freed memory back to the system and the next allocation faults every
//! page in again (a layer of a small MLP spent more time in page faults
//! than in `relu`). So blocks of up to [`MAX_CACHED_BYTES`] are kept in
//! per-thread free lists by size class (multiples of the alignment up to
//! 1 KiB, powers of two above) and handed out again. A block freed on another thread than the one that made
//! it joins that thread's lists; lists are bounded, and a thread's blocks are
//! returned to the system allocator when the thread ends.
//!
//! Blocks are handed out zeroed, like every CPU allocation. Larger blocks
//! come from `calloc` (the system allocator's zeroed allocation at its own
//! alignment), over-allocated by [`ALIGNMENT`] and aligned inside: for a
//! large block `calloc` maps fresh pages, which are zero without being
//! written, where an aligned allocation followed by zeroing wrote (and so
//! faulted in) every page before the kernel wrote it again. The byte before
//! such a block records how far into the allocation it starts.
//!
//! Object blocks ([`allocate_object`]) are the allocations of shared
//! handles (a tensor's implementation, a storage's): at most [`OBJECT_ALIGN`]
//! aligned, up to [`MAX_OBJECT_BYTES`], in classes of multiples of
//! `OBJECT_ALIGN`, not zeroed, and from the system allocator's fast path
//! (`malloc`) when their list is empty. An eager operator makes and frees
//! two per result. Left to `malloc`, they depend on the state of its heap:
//! after a chunk of the next size up had filled its per-thread bin, every
//! request for a tensor's block took `malloc`'s slow path and got that
//! larger chunk back, which returned to the full bin on free, a cycle that
//! cost an eager `add` 10-15% of its time in `_int_malloc` and `_int_free`.

use std::alloc::{alloc, alloc_zeroed, dealloc, Layout};
use std::cell::RefCell;
use std::ptr::NonNull;

use crate::allocator::ALIGNMENT;

/// The largest small block: small classes are the multiples of the
/// alignment up to it.
const MAX_SMALL_BYTES: usize = 1024;

/// The largest block size kept in the cache.
pub(crate) const MAX_CACHED_BYTES: usize = 256 * 1024;

const SMALL_CLASSES: usize = MAX_SMALL_BYTES / ALIGNMENT;

/// Small classes, then one class per power of two above 1 KiB.
const DATA_CLASSES: usize =
    SMALL_CLASSES + (MAX_CACHED_BYTES.trailing_zeros() - MAX_SMALL_BYTES.trailing_zeros()) as usize;

/// The alignment object blocks are kept at, what `malloc` gives every
/// block on the platforms this builds for.
pub(crate) const OBJECT_ALIGN: usize = 16;

/// The largest cached object block.
pub(crate) const MAX_OBJECT_BYTES: usize = 512;

const OBJECT_CLASSES: usize = MAX_OBJECT_BYTES / OBJECT_ALIGN;

/// Data classes, then object classes.
const CLASSES: usize = DATA_CLASSES + OBJECT_CLASSES;

/// Blocks kept per thread in a small class, in a medium one (at most
/// 16 KiB of small blocks and 2 MiB of medium ones per class and thread),
/// and in an object class (at most 16 KiB per class and thread).
const SMALL_BLOCKS_PER_CLASS: usize = 16;
const MEDIUM_BLOCKS_PER_CLASS: usize = 8;
const OBJECT_BLOCKS_PER_CLASS: usize = 32;

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
    if size <= MAX_SMALL_BYTES {
        Some(size.max(1).div_ceil(ALIGNMENT) - 1)
    } else if size <= MAX_CACHED_BYTES {
        let log2 = size.next_power_of_two().trailing_zeros() as usize;
        Some(SMALL_CLASSES + log2 - MAX_SMALL_BYTES.trailing_zeros() as usize - 1)
    } else {
        None
    }
}

/// The object class of a block of `layout`, if it is cached.
#[inline]
fn object_class_of(layout: Layout) -> Option<usize> {
    (layout.align() <= OBJECT_ALIGN && layout.size() <= MAX_OBJECT_BYTES)
        .then(|| DATA_CLASSES + layout.size().max(1).div_ceil(OBJECT_ALIGN) - 1)
}

fn class_size(class: usize) -> usize {
    if class < SMALL_CLASSES {
        (class + 1) * ALIGNMENT
    } else if class < DATA_CLASSES {
        MAX_SMALL_BYTES << (class + 1 - SMALL_CLASSES)
    } else {
        (class - DATA_CLASSES + 1) * OBJECT_ALIGN
    }
}

fn class_capacity(class: usize) -> usize {
    if class < SMALL_CLASSES {
        SMALL_BLOCKS_PER_CLASS
    } else if class < DATA_CLASSES {
        MEDIUM_BLOCKS_PER_CLASS
    } else {
        OBJECT_BLOCKS_PER_CLASS
    }
}

fn class_layout(class: usize) -> Layout {
    let align = if class < DATA_CLASSES {
        ALIGNMENT
    } else {
        OBJECT_ALIGN
    };
    // The size is a non-zero multiple of the (power-of-two) alignment.
    Layout::from_size_align(class_size(class), align).expect("valid class layout")
}

/// A block of `class` from this thread's list, if it has one.
#[inline]
fn pop(class: usize) -> Option<NonNull<u8>> {
    FREE_LISTS
        .try_with(|lists| lists.borrow_mut().lists[class].pop())
        .ok()
        .flatten()
}

/// Keeps a block of `class` in this thread's list if it has room; `false`
/// when the caller must free it.
#[inline]
fn push(class: usize, block: NonNull<u8>) -> bool {
    FREE_LISTS
        .try_with(|lists| {
            let list = &mut lists.borrow_mut().lists[class];
            let room = list.len() < class_capacity(class);
            if room {
                list.push(block);
            }
            room
        })
        .unwrap_or(false)
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

/// A block of `layout` (from [`block_layout`]), zeroed when `zeroed`, of
/// unspecified contents otherwise; null when out of memory.
pub(crate) fn allocate(layout: Layout, zeroed: bool) -> *mut u8 {
    if let Some(class) = class_of(layout.size()) {
        if let Some(block) = pop(class) {
            if zeroed {
                // SAFETY: the block holds `layout.size()` bytes (its class's
                // size) and is owned by the caller from now on.
                unsafe { block.as_ptr().write_bytes(0, layout.size()) };
            }
            return block.as_ptr();
        }
        return system_allocate(layout, zeroed);
    }
    allocate_large(layout, zeroed)
}

/// A block of `layout` (of non-zero size) from the system allocator,
/// zeroed when `zeroed`.
fn system_allocate(layout: Layout, zeroed: bool) -> *mut u8 {
    // SAFETY: every layout here has a non-zero size (block layouts are at
    // least one alignment unit).
    unsafe {
        if zeroed {
            alloc_zeroed(layout)
        } else {
            alloc(layout)
        }
    }
}

/// The system allocation behind a large block of `layout`: `ALIGNMENT`
/// bytes more, at an alignment `calloc` provides.
fn large_layout(layout: Layout) -> Option<Layout> {
    Layout::from_size_align(layout.size().checked_add(ALIGNMENT)?, 16).ok()
}

/// An `ALIGNMENT`-aligned block of `layout` (zeroed when `zeroed`) of a
/// size that is not cached (see the module docs); null when out of memory.
fn allocate_large(layout: Layout, zeroed: bool) -> *mut u8 {
    let Some(system) = large_layout(layout) else {
        return std::ptr::null_mut();
    };
    let base = system_allocate(system, zeroed);
    if base.is_null() {
        return base;
    }
    // `base` is 16-aligned: the block starts 16 to 64 bytes in, which
    // leaves its `layout.size()` bytes inside the allocation and a byte
    // before it for the offset.
    let offset = ALIGNMENT - base as usize % ALIGNMENT;
    // SAFETY: `offset` is in 1..=ALIGNMENT, inside the allocation of
    // `layout.size() + ALIGNMENT` bytes; the byte at `offset - 1` belongs to
    // the allocation and precedes the block.
    unsafe {
        let block = base.add(offset);
        block.sub(1).write(offset as u8);
        block
    }
}

/// Frees a block from [`allocate`].
///
/// # Safety
///
/// `ptr` must come from [`allocate`] with this `layout` and not be used
/// afterwards.
pub(crate) unsafe fn free(ptr: NonNull<u8>, layout: Layout) {
    if let Some(class) = class_of(layout.size()) {
        if !push(class, ptr) {
            // SAFETY: a cached size's block came from `system_allocate(layout, _)`
            // (`alloc_zeroed` or `alloc` with `layout`).
            unsafe { dealloc(ptr.as_ptr(), layout) };
        }
        return;
    }
    // SAFETY: the caller passes a block from `allocate(layout)`, which for
    // an uncached size is `allocate_large`'s: the byte before it holds its
    // offset in an allocation of `large_layout(layout)`.
    unsafe {
        let offset = ptr.as_ptr().sub(1).read() as usize;
        let system = large_layout(layout).expect("the layout was allocated");
        dealloc(ptr.as_ptr().sub(offset), system)
    }
}

/// A block for a value of `layout`, of unspecified contents, aligned for
/// `layout`; null when out of memory (and for a size of zero at more than
/// [`OBJECT_ALIGN`], which has no block). Cached sizes take their class's
/// block; others come straight from the system allocator.
#[inline]
pub(crate) fn allocate_object(layout: Layout) -> *mut u8 {
    match object_class_of(layout) {
        Some(class) => match pop(class) {
            Some(block) => block.as_ptr(),
            None => system_allocate(class_layout(class), false),
        },
        None if layout.size() == 0 => std::ptr::null_mut(),
        // SAFETY: the size is not zero.
        None => unsafe { alloc(layout) },
    }
}

/// Frees a block from [`allocate_object`].
///
/// # Safety
///
/// `ptr` must come from [`allocate_object`] with this `layout` and not be
/// used afterwards.
#[inline]
pub(crate) unsafe fn free_object(ptr: NonNull<u8>, layout: Layout) {
    match object_class_of(layout) {
        Some(class) => {
            if !push(class, ptr) {
                // SAFETY: a cached size's block came from
                // `system_allocate(class_layout(class), false)`.
                unsafe { dealloc(ptr.as_ptr(), class_layout(class)) }
            }
        }
        // SAFETY: an uncached size's block came from `alloc(layout)`.
        None => unsafe { dealloc(ptr.as_ptr(), layout) },
    }
}

/// A `T` made by `make`, written straight into an object block (inlined,
/// `make` runs after the block is allocated, so the value is stored where
/// it lives rather than built elsewhere and copied in); a dangling,
/// well-aligned pointer for a zero-sized `T`. Owned by the caller, who
/// gives it back with [`drop_object`].
#[inline(always)]
pub(crate) fn new_object<T>(make: impl FnOnce() -> T) -> NonNull<T> {
    let layout = Layout::new::<T>();
    let ptr = if layout.size() == 0 {
        NonNull::dangling()
    } else {
        match NonNull::new(allocate_object(layout).cast::<T>()) {
            Some(ptr) => ptr,
            None => std::alloc::handle_alloc_error(layout),
        }
    };
    // SAFETY: `ptr` is a fresh block of `size_of::<T>()` bytes at `T`'s
    // alignment (or dangling and well aligned for a zero-sized `T`), which
    // nothing else reaches. (A panic in `make` leaves the block allocated
    // and unused: a leak, nothing read.)
    unsafe { ptr.as_ptr().write(make()) };
    ptr
}

/// Drops the value of a [`new_object`] block and frees the block.
///
/// # Safety
///
/// `ptr` must come from [`new_object::<T>`], hold a live value, and not be
/// used afterwards.
#[inline]
pub(crate) unsafe fn drop_object<T>(ptr: NonNull<T>) {
    let layout = Layout::new::<T>();
    // SAFETY: the caller passes a live value in a block from `new_object`,
    // dropped once; the block (from `allocate_object(layout)` unless `T` is
    // zero-sized) is freed once.
    unsafe {
        std::ptr::drop_in_place(ptr.as_ptr());
        if layout.size() != 0 {
            free_object(ptr.cast(), layout);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_come_back_zeroed_aligned_and_reused() {
        let layout = block_layout(12).unwrap();
        assert_eq!((layout.size(), layout.align()), (64, ALIGNMENT));
        let a = allocate(layout, true);
        assert!(!a.is_null() && (a as usize).is_multiple_of(ALIGNMENT));
        // SAFETY: `a` holds 64 bytes.
        unsafe { a.write_bytes(0xAB, 64) };
        // SAFETY: `a` came from `allocate(layout)`.
        unsafe { free(NonNull::new(a).unwrap(), layout) };
        let b = allocate(layout, true);
        assert_eq!(a, b, "the freed block is reused");
        // SAFETY: `b` holds 64 bytes.
        assert!(unsafe { std::slice::from_raw_parts(b, 64) }
            .iter()
            .all(|&x| x == 0));
        // SAFETY: `b` came from `allocate(layout)`.
        unsafe { free(NonNull::new(b).unwrap(), layout) };
    }

    #[test]
    fn large_blocks_are_zeroed_and_aligned() {
        for size in [MAX_CACHED_BYTES + 1, 4 << 20, 3_000_001] {
            let layout = block_layout(size).unwrap();
            let a = allocate(layout, true);
            assert!(!a.is_null() && (a as usize).is_multiple_of(ALIGNMENT));
            // SAFETY: `a` holds `size` bytes.
            let bytes = unsafe { std::slice::from_raw_parts_mut(a, size) };
            assert!(bytes.iter().all(|&x| x == 0));
            bytes.fill(0xCD);
            // SAFETY: `a` came from `allocate(layout)`.
            unsafe { free(NonNull::new(a).unwrap(), layout) };
        }
    }

    #[test]
    fn sizes_map_to_classes() {
        assert_eq!(class_of(0), Some(0));
        assert_eq!(class_of(64), Some(0));
        assert_eq!(class_of(65), Some(1));
        assert_eq!(class_of(MAX_SMALL_BYTES), Some(SMALL_CLASSES - 1));
        assert_eq!(class_of(MAX_SMALL_BYTES + 1), Some(SMALL_CLASSES));
        assert_eq!(block_layout(MAX_SMALL_BYTES + 1).unwrap().size(), 2048);
        assert_eq!(block_layout(64 * 1024).unwrap().size(), 64 * 1024);
        assert_eq!(class_of(MAX_CACHED_BYTES), Some(DATA_CLASSES - 1));
        assert_eq!(class_size(DATA_CLASSES - 1), MAX_CACHED_BYTES);
        assert_eq!(class_of(MAX_CACHED_BYTES + 1), None);
        assert_eq!(block_layout(500_000).unwrap().size(), 500_000);
    }

    #[test]
    fn object_blocks_are_aligned_reused_and_sized_by_class() {
        let layout = Layout::from_size_align(248, 8).unwrap();
        assert_eq!(class_layout(object_class_of(layout).unwrap()).size(), 256);
        let a = allocate_object(layout);
        assert!(!a.is_null() && (a as usize).is_multiple_of(OBJECT_ALIGN));
        // SAFETY: `a` holds at least 248 bytes.
        unsafe { a.write_bytes(0x5A, 248) };
        // SAFETY: `a` came from `allocate_object(layout)`.
        unsafe { free_object(NonNull::new(a).unwrap(), layout) };
        // Another size of the same class gets the freed block back.
        let same_class = Layout::from_size_align(250, 2).unwrap();
        let b = allocate_object(same_class);
        assert_eq!(a, b, "the freed block is reused");
        // SAFETY: `b` came from `allocate_object(same_class)`, whose class
        // is `layout`'s.
        unsafe { free_object(NonNull::new(b).unwrap(), same_class) };
        for (size, align) in [
            (0, 1),
            (1, 1),
            (512, 16),
            (513, 8),
            (4096, 8),
            (64, 64),
            (0, 64),
        ] {
            let layout = Layout::from_size_align(size, align).unwrap();
            let p = allocate_object(layout);
            if size == 0 && align > OBJECT_ALIGN {
                assert!(p.is_null(), "no block of size zero outside the classes");
                continue;
            }
            assert!(
                !p.is_null() && (p as usize).is_multiple_of(align),
                "{size} at {align}"
            );
            // SAFETY: `p` holds `size` bytes.
            unsafe { p.write_bytes(1, size) };
            // SAFETY: `p` came from `allocate_object(layout)`.
            unsafe { free_object(NonNull::new(p).unwrap(), layout) };
        }
    }

    #[test]
    fn object_blocks_past_a_list_go_back_to_the_system() {
        let layout = Layout::from_size_align(72, 8).unwrap();
        let blocks: Vec<usize> = (0..OBJECT_BLOCKS_PER_CLASS * 2)
            .map(|_| allocate_object(layout) as usize)
            .collect();
        let spawned = blocks.clone();
        // Half are freed on another thread (its list keeps some, the rest
        // are released), half here.
        std::thread::spawn(move || {
            for b in &spawned[..OBJECT_BLOCKS_PER_CLASS] {
                // SAFETY: each block came from `allocate_object(layout)`.
                unsafe { free_object(NonNull::new(*b as *mut u8).unwrap(), layout) };
            }
        })
        .join()
        .unwrap();
        for b in &blocks[OBJECT_BLOCKS_PER_CLASS..] {
            // SAFETY: each block came from `allocate_object(layout)`.
            unsafe { free_object(NonNull::new(*b as *mut u8).unwrap(), layout) };
        }
        let class = object_class_of(layout).unwrap();
        let kept = FREE_LISTS.with(|l| l.borrow().lists[class].len());
        assert!(kept <= OBJECT_BLOCKS_PER_CLASS);
    }

    #[test]
    fn blocks_freed_on_another_thread_are_released() {
        let layout = block_layout(100).unwrap();
        let blocks: Vec<usize> = (0..SMALL_BLOCKS_PER_CLASS + 4)
            .map(|_| allocate(layout, true) as usize)
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
