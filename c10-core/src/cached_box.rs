//! `CachedBox`: a uniquely owned heap value whose block comes from the
//! per-thread cache of object blocks (`small_block_cache`), for values an
//! operator makes and drops on every call.
//!
//! Like `Box`, with two differences that matter on an eager operator's
//! path:
//!
//! - a block freed on this thread is handed out again without a trip
//!   through `malloc`, whose speed for such blocks depends on the state of
//!   its heap;
//! - the value is written straight into its block
//!   ([`CachedBox::new_with`]): `Box::new` of a large value builds it first
//!   and copies it in, wide loads of freshly written narrow stores (a
//!   store-forwarding stall).
//!
//! Moving a `CachedBox` moves one pointer, where moving a large value
//! (returned in a `Result`, unwrapped, passed on) copies it each time.

use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

use crate::small_block_cache;

/// The largest value whose block is cached; larger ones come from the
/// system allocator every time.
pub const MAX_CACHED_BYTES: usize = small_block_cache::MAX_OBJECT_BYTES;

/// A uniquely owned `T` in a cached block (see the module docs).
pub struct CachedBox<T> {
    ptr: NonNull<T>,
    /// Owns a `T` (for drop check and variance).
    _owns: PhantomData<T>,
}

// SAFETY: a `CachedBox<T>` owns its `T` as a `Box<T>` does: sending it
// sends the `T`, sharing it shares `&T`. Its block may be freed on any
// thread (blocks come from, and go back to, the system allocator).
unsafe impl<T: Send> Send for CachedBox<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for CachedBox<T> {}

impl<T> CachedBox<T> {
    /// A box of `value`.
    #[inline]
    pub fn new(value: T) -> CachedBox<T> {
        Self::new_with(|| value)
    }

    /// A box of the value `make` returns, which it computes after the block
    /// is allocated, so that (inlined) it is written where it lives.
    #[inline(always)]
    pub fn new_with(make: impl FnOnce() -> T) -> CachedBox<T> {
        CachedBox {
            ptr: small_block_cache::new_object(make),
            _owns: PhantomData,
        }
    }
}

impl<T> Drop for CachedBox<T> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the box owns the live value of a `new_object` block and
        // gives it up once, here.
        unsafe { small_block_cache::drop_object(self.ptr) }
    }
}

impl<T> Deref for CachedBox<T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        // SAFETY: the box owns a live `T`; `&self` lends it shared.
        unsafe { self.ptr.as_ref() }
    }
}

impl<T> DerefMut for CachedBox<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the box owns a live `T`; `&mut self` lends it uniquely.
        unsafe { self.ptr.as_mut() }
    }
}

impl<T: Clone> Clone for CachedBox<T> {
    fn clone(&self) -> CachedBox<T> {
        CachedBox::new_with(|| (**self).clone())
    }
}

impl<T: fmt::Debug> fmt::Debug for CachedBox<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::DropProbe;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// A value large enough to need a block of its own.
    type Counted = (DropProbe, [u64; 30]);

    #[test]
    fn values_are_dropped_once_and_blocks_reused() {
        let drops = Arc::new(AtomicUsize::new(0));
        let a = CachedBox::new((DropProbe(drops.clone()), [7u64; 30]));
        let first = &*a as *const Counted;
        assert_eq!(a.1[29], 7);
        drop(a);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        let mut b = CachedBox::new_with(|| (DropProbe(drops.clone()), [1u64; 30]));
        assert_eq!(&*b as *const Counted, first, "the freed block is reused");
        b.1[0] = 9;
        assert_eq!(b.1[..2], [9, 1]);
        drop(b);
        assert_eq!(drops.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn clones_are_deep_and_boxes_cross_threads() {
        let a = CachedBox::new(vec![1, 2, 3]);
        let mut b = a.clone();
        b.push(4);
        assert_eq!((a.len(), b.len()), (3, 4));
        let moved = std::thread::spawn(move || {
            b.push(5);
            b
        })
        .join()
        .unwrap();
        assert_eq!(*moved, [1, 2, 3, 4, 5]);
        assert_eq!(format!("{a:?}"), "[1, 2, 3]");
    }

    #[test]
    fn zero_sized_and_large_values() {
        #[derive(Debug, PartialEq)]
        #[repr(align(64))]
        struct Aligned;
        let z = CachedBox::new(Aligned);
        assert_eq!(*z, Aligned);
        assert_eq!(&*z as *const Aligned as usize % 64, 0);
        let big = CachedBox::new([3u8; 4096]);
        assert!(big.iter().all(|&x| x == 3));
        #[repr(align(64))]
        struct Line([u8; 64]);
        let line = CachedBox::new(Line([5; 64]));
        assert_eq!(&*line as *const Line as usize % 64, 0);
        assert_eq!(line.0[63], 5);
    }
}
