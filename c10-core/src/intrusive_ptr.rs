//! `IntrusivePtr`: the shared handle behind tensors and storages
//! (`c10::intrusive_ptr`).
//!
//! A thread-safe reference-counted pointer like `Arc`, with two differences
//! that matter on an eager operator's path, where every result is
//! allocated, handed back and soon dropped:
//!
//! - there are no weak references, so the count is one word and the last
//!   drop is one atomic decrement (`Arc` also decrements its weak count,
//!   a second atomic read-modify-write, as costly as the first);
//! - a new value is written straight into its allocation
//!   ([`IntrusivePtr::new_with`]), not built elsewhere and copied in.
//!
//! Blocks are object blocks of the per-thread cache
//! (`small_block_cache::allocate_object`): at the value's own alignment,
//! from `malloc`'s fast path when the cache has none, and handed out again
//! without a trip through `malloc`, whose speed for them depends on the
//! state of its heap (see that module). Not its 64-byte data blocks: their
//! fallback is the system's slow aligned allocation, and a model holds
//! more tensors than the cache keeps.
//!
//! The count's orderings are `Arc`'s: increments are relaxed (a handle can
//! only be cloned from a live one), the decrement releases, and the one
//! that reaches zero acquires before dropping the value, so every access
//! through another handle happens before the value is dropped.

use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::atomic::{fence, AtomicUsize, Ordering};

use crate::small_block_cache;

/// Counts past this abort, as `Arc`'s do: they can only come from leaked
/// handles (`mem::forget` in a loop), and wrapping would free a live value.
const MAX_REFCOUNT: usize = isize::MAX as usize;

/// The allocation: the count, then the value.
struct Counted<T> {
    refcount: AtomicUsize,
    value: T,
}

/// A shared handle to a `T` (see the module docs).
pub(crate) struct IntrusivePtr<T> {
    ptr: NonNull<Counted<T>>,
    /// Owns a `Counted<T>` (for drop check and variance).
    _owns: PhantomData<Counted<T>>,
}

// SAFETY: as for `Arc<T>`: handles on several threads share the `T` (so it
// must be `Sync`) and any of them may drop it (so it must be `Send`); the
// count is atomic.
unsafe impl<T: Send + Sync> Send for IntrusivePtr<T> {}
// SAFETY: as above.
unsafe impl<T: Send + Sync> Sync for IntrusivePtr<T> {}

impl<T> IntrusivePtr<T> {
    /// A handle to a new shared `value` (`make_intrusive`).
    #[inline]
    pub(crate) fn new(value: T) -> IntrusivePtr<T> {
        Self::new_with(|| value)
    }

    /// A handle to the value `make` returns, which it computes after the
    /// block is allocated, so that (inlined) it is written where it lives:
    /// a large value built first is copied into the block in wide,
    /// unaligned stores, and the first narrow read of it waits for them.
    #[inline(always)]
    pub(crate) fn new_with(make: impl FnOnce() -> T) -> IntrusivePtr<T> {
        let block = small_block_cache::new_object(
            #[inline(always)]
            || Counted {
                refcount: AtomicUsize::new(1),
                value: make(),
            },
        );
        IntrusivePtr {
            ptr: block,
            _owns: PhantomData,
        }
    }

    #[inline(always)]
    fn counted(&self) -> &Counted<T> {
        // SAFETY: the allocation lives while any handle does, and this one
        // does.
        unsafe { self.ptr.as_ref() }
    }

    /// The number of handles (`use_count`). A result of 1 from the only
    /// handle's owner means nobody else can reach the value: there are no
    /// weak references, and the acquiring load orders every other
    /// handle's accesses before the caller's.
    #[inline]
    pub(crate) fn strong_count(this: &Self) -> usize {
        this.counted().refcount.load(Ordering::Acquire)
    }

    /// Whether both handles share one value.
    #[inline]
    pub(crate) fn ptr_eq(a: &Self, b: &Self) -> bool {
        a.ptr == b.ptr
    }

    /// The value's address (an identity, never dereferenced by callers).
    #[inline]
    pub(crate) fn as_ptr(this: &Self) -> *const T {
        &this.counted().value
    }
}

impl<T> Clone for IntrusivePtr<T> {
    #[inline]
    fn clone(&self) -> IntrusivePtr<T> {
        // Relaxed, as `Arc::clone`: the new handle is made from a live one,
        // which keeps the value alive meanwhile.
        let old = self.counted().refcount.fetch_add(1, Ordering::Relaxed);
        if old > MAX_REFCOUNT {
            std::process::abort();
        }
        IntrusivePtr {
            ptr: self.ptr,
            _owns: PhantomData,
        }
    }
}

impl<T> Drop for IntrusivePtr<T> {
    #[inline]
    fn drop(&mut self) {
        if self.counted().refcount.fetch_sub(1, Ordering::Release) != 1 {
            return;
        }
        // Every other handle's accesses happen before this point: each
        // released its decrement, and this acquires them.
        fence(Ordering::Acquire);
        self.drop_slow();
    }
}

impl<T> IntrusivePtr<T> {
    /// Drops the value and frees its block (the last handle's drop).
    #[inline(never)]
    fn drop_slow(&mut self) {
        // SAFETY: the count reached zero, so this is the last handle and
        // nothing else reaches the `new_object` block; it is given up once.
        unsafe { small_block_cache::drop_object(self.ptr) }
    }
}

impl<T> Deref for IntrusivePtr<T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        &self.counted().value
    }
}

impl<T: fmt::Debug> fmt::Debug for IntrusivePtr<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::DropProbe;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    #[test]
    fn the_last_handle_drops_the_value_once() {
        let drops = Arc::new(AtomicUsize::new(0));
        let a = IntrusivePtr::new(DropProbe(drops.clone()));
        let b = a.clone();
        assert_eq!(IntrusivePtr::strong_count(&a), 2);
        assert!(IntrusivePtr::ptr_eq(&a, &b));
        drop(a);
        assert_eq!(drops.load(Ordering::Relaxed), 0);
        assert_eq!(IntrusivePtr::strong_count(&b), 1);
        drop(b);
        assert_eq!(drops.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn handles_cross_threads() {
        let drops = Arc::new(AtomicUsize::new(0));
        let a = IntrusivePtr::new(DropProbe(drops.clone()));
        std::thread::scope(|s| {
            for _ in 0..4 {
                let mine = a.clone();
                s.spawn(move || {
                    for _ in 0..1000 {
                        let c = mine.clone();
                        assert!(IntrusivePtr::strong_count(&c) >= 2);
                    }
                    drop(mine);
                });
            }
        });
        assert_eq!(IntrusivePtr::strong_count(&a), 1);
        // A value made here and dropped on another thread frees its block
        // there.
        std::thread::spawn(move || drop(a)).join().unwrap();
        assert_eq!(drops.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn distinct_values_have_distinct_addresses() {
        let a = IntrusivePtr::new(1u64);
        let b = IntrusivePtr::new(1u64);
        assert!(!IntrusivePtr::ptr_eq(&a, &b));
        assert_ne!(IntrusivePtr::as_ptr(&a), IntrusivePtr::as_ptr(&b));
        assert_eq!(*a + *b, 2);
    }
}
