//! `IntrusivePtr`: the shared handle behind tensors and storages
//! (`c10::intrusive_ptr`).
//!
//! A thread-safe reference-counted pointer like `Arc`, with three
//! differences that matter on an eager operator's path, where every result
//! is allocated, handed back and soon dropped:
//!
//! - there are no weak references, so the count is one word (`Arc` also
//!   decrements its weak count, a second atomic read-modify-write);
//! - the count is *biased* towards the thread that made the value (see
//!   [`handle_owner`](crate::handle_owner)): that thread's clones and drops
//!   change a plain integer, other threads' an atomic one, so the common
//!   case (handles made, passed down a call and dropped on one thread) has
//!   no locked instruction at all: a locked read-modify-write costs about
//!   4.6 ns on the machines we measure, and a boxed call with two tensor
//!   arguments makes six;
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
//! # The two counts
//!
//! The number of handles is `biased + counter(shared)`:
//!
//! - `biased` is the owner's part. Only the owner thread reads or writes
//!   it while it is above zero; it never rises again once it reaches zero,
//!   and a *merge* (below) sets it to zero. Once the owner retires, nobody
//!   writes it, and a thread that merges for it reads it after the
//!   retirement (ordered by the queues' lock).
//! - `shared` holds every other thread's part in its upper bits, and two
//!   flags: [`MERGED`] (the owner's part was added in: the counter alone is
//!   the count, and the handle whose drop takes it to zero frees the value)
//!   and [`QUEUED`] (the value waits in its owner's queue to be merged).
//!
//! A thread other than the owner may drop a handle the owner cloned, so the
//! counter can fall below zero. The drop that takes it there sets
//! [`QUEUED`] in the same atomic step and queues the value to its owner;
//! the owner merges it later: adds its part, sets [`MERGED`], and frees the
//! value if that makes the count zero. When the owner's own part reaches
//! zero first, it merges at once (unless the value is queued, when the
//! queue's merge does it). A value is queued at most once and merged at most
//! once, and nobody frees it while it is queued and unmerged: a non-owner
//! frees only a merged value, the owner's merge skips queued values.
//!
//! Orderings are `Arc`'s: increments are relaxed (a handle can only be
//! cloned from a live one); atomic decrements and merges release, and
//! whoever frees the value acquires first, so every access through another
//! handle happens before the value is dropped. The owner's plain writes are
//! ordered before its merge by program order, and a merge releases them.

use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;
use std::ptr::NonNull;

use crate::handle_owner::{self, Queued, Token, UNOWNED};
use crate::small_block_cache;
use crate::sync::{fence, AtomicI32, Ordering, UnsafeCell};

/// The atomic part with its flags: 32 bits, so that the whole header is
/// one word, as a plain atomic count was (a wider header moved every
/// field of a tensor and cost `eager/add_1` 10-15%).
type Shared = i32;
/// The flag in `shared`: the owner's part was added to the counter.
const MERGED: Shared = 1;
/// The flag in `shared`: the value waits in its owner's queue.
const QUEUED: Shared = 2;
/// One handle in `shared`'s counter (the bits above the flags).
const ONE: Shared = 4;
/// The owner's part stays below this (further clones take the atomic
/// part).
const MAX_PART: u16 = u16::MAX;
/// Counters past this abort, as `Arc`'s do: they can only come from leaked
/// handles (`mem::forget` in a loop), and wrapping would free a live value.
const MAX_SHARED: Shared = Shared::MAX / 2;

/// The counter in a `shared` word.
#[inline(always)]
fn counter(shared: Shared) -> Shared {
    shared >> 2
}

/// The allocation: the counts, then the value.
#[repr(C)]
struct Counted<T> {
    /// The token of the thread that made the value, or `UNOWNED`.
    owner: Token,
    /// The owner's part of the count (see the module docs for who may
    /// touch it).
    biased: UnsafeCell<u16>,
    shared: AtomicI32,
    value: T,
}

/// A shared handle to a `T` (see the module docs).
pub(crate) struct IntrusivePtr<T> {
    ptr: NonNull<Counted<T>>,
    /// Owns a `Counted<T>` (for drop check and variance).
    _owns: PhantomData<Counted<T>>,
}

// SAFETY: as for `Arc<T>`: handles on several threads share the `T` (so it
// must be `Sync`) and any of them may drop it (so it must be `Send`). The
// atomic count is shared; the plain one is only touched by the thread whose
// token the value records (`handle_owner::current()`), or by a merge after
// that thread retired, never by two threads at once (module docs).
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
        // The closure captures nothing but `make`, as it would for a plain
        // value: capturing the counts too made the compiler copy `make`'s
        // captures through the stack, and the copy's loads stalled on the
        // stores that had just written them (`eager/add_1` +10 ns). The
        // counts are written into the fresh block afterwards.
        let block = small_block_cache::new_object(
            #[inline(always)]
            || Counted {
                owner: UNOWNED,
                biased: UnsafeCell::new(0),
                shared: AtomicI32::new(ONE | MERGED),
                value: make(),
            },
        );
        let owner = handle_owner::owner_for_new_value();
        if owner != UNOWNED {
            // SAFETY: the block is fresh: no handle or other thread reaches
            // it yet, so plain writes to its counts race with nothing.
            unsafe {
                let counted = block.as_ptr();
                (*counted).owner = owner;
                (*counted).biased.with_mut(|part| *part = 1);
                #[cfg(not(loom))]
                {
                    *(*counted).shared.get_mut() = 0;
                }
                #[cfg(loom)]
                (*counted).shared.with_mut(|shared| *shared = 0);
            }
        }
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

    /// The owner's part, when the calling thread is the owner and the part
    /// is above zero (it is the owner's to change then), else `None`.
    #[inline(always)]
    fn owned_part(&self) -> Option<u16> {
        let c = self.counted();
        if c.owner != handle_owner::current() {
            return None;
        }
        // SAFETY: this thread is the value's owner: no other thread writes
        // the plain count while the owner lives (module docs).
        let part = c.biased.with(|part| unsafe { *part });
        (part != 0).then_some(part)
    }

    /// Sets the owner's part; only after [`owned_part`](Self::owned_part)
    /// returned `Some` on this thread.
    #[inline(always)]
    fn set_owned_part(&self, part: u16) {
        // SAFETY: the caller is the owner thread (it just read the part
        // through `owned_part`).
        self.counted().biased.with_mut(|p| unsafe { *p = part })
    }

    /// The number of handles, when this thread can know it: it is the
    /// owner, or the counts were merged. Elsewhere the owner's part is not
    /// readable.
    #[inline]
    pub(crate) fn known_count(this: &Self) -> Option<usize> {
        // Acquire: when the count is one, every other handle's accesses
        // happen before the caller's (their drops released).
        let shared = this.counted().shared.load(Ordering::Acquire);
        if shared & MERGED != 0 {
            return usize::try_from(counter(shared)).ok();
        }
        let part = this.owned_part()?;
        usize::try_from(Shared::from(part) + counter(shared)).ok()
    }

    /// The number of handles (`use_count`). Exact on the thread that made
    /// the value and once its counts are merged; elsewhere before that the
    /// maker's part cannot be read and counts as one handle, so the result
    /// is never 1 there.
    #[inline]
    pub(crate) fn strong_count(this: &Self) -> usize {
        Self::known_count(this).unwrap_or_else(|| {
            let shared = this.counted().shared.load(Ordering::Relaxed);
            usize::try_from(counter(shared).max(0)).unwrap_or(0) + 2
        })
    }

    /// Whether this is the only handle. Never a false yes: where the count
    /// is not known ([`known_count`](Self::known_count)), no.
    #[inline]
    pub(crate) fn is_unique(this: &Self) -> bool {
        Self::known_count(this) == Some(1)
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
        match self.owned_part() {
            Some(part) if part < MAX_PART => self.set_owned_part(part + 1),
            // A plain count at its limit (or another thread): the atomic part takes
            // the handle, which the sum still counts.
            _ => {
                // Relaxed, as `Arc::clone`: the new handle is made from a
                // live one, which keeps the value alive meanwhile.
                let old = self.counted().shared.fetch_add(ONE, Ordering::Relaxed);
                if old > MAX_SHARED {
                    std::process::abort();
                }
            }
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
        match self.owned_part() {
            Some(part) if part > 1 => self.set_owned_part(part - 1),
            Some(_) => {
                self.set_owned_part(0);
                self.merge_owned_part();
            }
            None => self.drop_shared(),
        }
    }
}

impl<T> IntrusivePtr<T> {
    /// The owner's part just reached zero: the counter alone is the count
    /// from now on. Frees the value if that is zero too; leaves a queued
    /// value to its queue's merge.
    #[inline(never)]
    fn merge_owned_part(&mut self) {
        let shared = &self.counted().shared;
        // Acquire: orders other threads' drops (if any) before the free.
        let mut old = shared.load(Ordering::Acquire);
        if old == 0 {
            // No other thread holds a handle, none waits to be merged and
            // no flag is set: this was the last handle, and with no handle
            // left nobody else can change the word. The common case (a
            // value that never left its thread) frees without a locked
            // instruction.
            // SAFETY: the count is zero: this was the last handle.
            unsafe { free(self.ptr) };
            return;
        }
        loop {
            if old & QUEUED != 0 {
                return;
            }
            // Release: the owner's accesses happen before the free that a
            // later atomic drop may make; acquire: and the other threads'
            // before ours, if ours frees.
            match shared.compare_exchange_weak(
                old,
                old | MERGED,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(now) => old = now,
            }
        }
        // Not queued: no drop took the counter below zero unmerged.
        debug_assert!(counter(old) >= 0);
        if counter(old) == 0 {
            // SAFETY: the count is zero: this was the last handle.
            unsafe { free(self.ptr) }
        }
    }

    /// Drops a handle through the atomic part: on another thread than the
    /// owner, or the owner's after its part reached zero.
    #[inline(never)]
    fn drop_shared(&mut self) {
        let c = self.counted();
        let mut old = c.shared.load(Ordering::Relaxed);
        loop {
            let mut new = old - ONE;
            // The owner's part is still out and this handle was one of
            // its clones: only the owner can tell whether it was the last.
            let queue = counter(new) < 0 && old & (MERGED | QUEUED) == 0;
            if queue {
                new |= QUEUED;
            }
            match c
                .shared
                .compare_exchange_weak(old, new, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => {
                    if old & MERGED != 0 && counter(new) == 0 {
                        // Every other handle's accesses happen before this
                        // point: each released its decrement (or its merge),
                        // and this acquires them.
                        fence(Ordering::Acquire);
                        // SAFETY: the count is zero: this was the last
                        // handle.
                        unsafe { free(self.ptr) }
                    } else if queue {
                        // SAFETY: the value is queued once (the flag was
                        // clear), and nobody frees a queued, unmerged value,
                        // so it stays allocated until the merge.
                        let item = unsafe { Queued::new(self.ptr.cast(), merge_queued::<T>) };
                        handle_owner::queue_merge(c.owner, item);
                    }
                    return;
                }
                Err(now) => old = now,
            }
        }
    }
}

/// Merges a queued value's counts (the owner's part into the counter) and
/// frees it if no handle is left.
///
/// # Safety
///
/// `ptr` is a `Counted<T>` queued by `drop_shared`, merged once, on its
/// owner's thread or after the owner retired.
unsafe fn merge_queued<T>(ptr: NonNull<()>) {
    let ptr = ptr.cast::<Counted<T>>();
    // SAFETY: queued values stay allocated until merged (module docs).
    let c = unsafe { ptr.as_ref() };
    // SAFETY: the owner's thread, or nobody's any more (the contract).
    let part = c.biased.with_mut(|p| unsafe { p.replace(0) });
    // The merged flag is clear (a queued value is merged only here), so
    // adding it sets it.
    // At most `u16::MAX` handles: this does not overflow.
    let add = Shared::from(part) * ONE + MERGED;
    let old = c.shared.fetch_add(add, Ordering::AcqRel);
    if counter(old + add) == 0 {
        // SAFETY: the count is zero: no handle is left.
        unsafe { free(ptr) }
    }
}

/// Drops the value and frees its block.
///
/// # Safety
///
/// No handle is left, and this runs once.
#[inline(never)]
unsafe fn free<T>(ptr: NonNull<Counted<T>>) {
    // SAFETY: nothing else reaches the `new_object` block; it is given up
    // once (the caller's contract).
    unsafe { small_block_cache::drop_object(ptr) }
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

#[cfg(all(test, loom))]
mod loom_tests {
    use crate::sync::model;
    use loom::cell::UnsafeCell;
    use loom::sync::atomic::AtomicUsize;
    use loom::sync::Arc;
    use loom::thread;

    use super::*;
    use crate::handle_owner::{merge_queued_handle_counts, retire_this_thread};

    /// A value that every handle reads (`loom` reports a read that its
    /// drop does not follow) and that counts its drops.
    struct Probe {
        value: UnsafeCell<usize>,
        drops: Arc<AtomicUsize>,
    }

    // SAFETY: handles only read `value`; the one write is the drop, which
    // the count orders after every handle's reads (what the models check).
    unsafe impl Sync for Probe {}

    impl Probe {
        fn read(&self) -> usize {
            // SAFETY: nothing writes the value after it is made.
            self.value.with(|v| unsafe { *v })
        }
    }

    impl Drop for Probe {
        fn drop(&mut self) {
            // The drop writes the value: it must follow every read.
            // SAFETY: the last handle is gone: nothing else reads it.
            self.value.with_mut(|v| unsafe { *v = 0 });
            self.drops.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn probe() -> (IntrusivePtr<Probe>, Arc<AtomicUsize>) {
        let drops = Arc::new(AtomicUsize::new(0));
        let value = IntrusivePtr::new(Probe {
            value: UnsafeCell::new(7),
            drops: Arc::clone(&drops),
        });
        (value, drops)
    }

    #[test]
    fn loom_a_handle_dropped_on_another_thread_is_merged_by_the_owner() {
        model(|| {
            let (value, drops) = probe();
            let other = value.clone();
            let t = thread::spawn(move || {
                assert_eq!(other.read(), 7);
                // The owner's part counts this handle: the drop queues
                // the value to its owner when it takes the counter below
                // zero.
                drop(other);
            });
            assert_eq!(value.read(), 7);
            drop(value);
            t.join().unwrap();
            merge_queued_handle_counts();
            assert_eq!(drops.load(Ordering::Relaxed), 1);
        });
    }

    #[test]
    fn loom_handles_made_on_another_thread_and_dropped_in_any_order() {
        model(|| {
            let (value, drops) = probe();
            let t = {
                let value = value.clone();
                thread::spawn(move || {
                    // Clones on a thread that is not the owner take the
                    // atomic part.
                    let again = value.clone();
                    assert_eq!(again.read(), 7);
                    drop(value);
                    drop(again);
                })
            };
            drop(value);
            t.join().unwrap();
            merge_queued_handle_counts();
            assert_eq!(drops.load(Ordering::Relaxed), 1);
        });
    }

    #[test]
    fn loom_a_value_whose_owner_retired_is_freed_by_its_last_handle() {
        model(|| {
            let drops = Arc::new(AtomicUsize::new(0));
            let made = {
                let drops = Arc::clone(&drops);
                thread::spawn(move || {
                    let value = IntrusivePtr::new(Probe {
                        value: UnsafeCell::new(7),
                        drops,
                    });
                    let handles = (value.clone(), value);
                    retire_this_thread();
                    handles
                })
            };
            // The owner has exited (and retired): each drop here takes
            // the atomic path, and whichever is last frees the value.
            let (a, b) = made.join().unwrap();
            let t = thread::spawn(move || {
                assert_eq!(a.read(), 7);
                drop(a);
            });
            assert_eq!(b.read(), 7);
            drop(b);
            t.join().unwrap();
            assert_eq!(drops.load(Ordering::Relaxed), 1);
        });
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::test_support::DropProbe;
    use std::sync::atomic::AtomicUsize;
    use std::sync::mpsc;
    use std::sync::Arc;

    fn probe() -> (IntrusivePtr<DropProbe>, Arc<AtomicUsize>) {
        let drops = Arc::new(AtomicUsize::new(0));
        (IntrusivePtr::new(DropProbe(drops.clone())), drops)
    }

    fn drops(d: &AtomicUsize) -> usize {
        d.load(Ordering::SeqCst)
    }

    /// Makes (and drops) a value here, which merges this thread's queue.
    fn merge_this_threads_queue() {
        drop(IntrusivePtr::new(0u8));
    }

    #[test]
    fn the_last_handle_drops_the_value_once() {
        let (a, d) = probe();
        let b = a.clone();
        assert_eq!(IntrusivePtr::strong_count(&a), 2);
        assert!(IntrusivePtr::ptr_eq(&a, &b));
        assert!(!IntrusivePtr::is_unique(&a));
        drop(a);
        assert_eq!(drops(&d), 0);
        assert_eq!(IntrusivePtr::strong_count(&b), 1);
        assert!(IntrusivePtr::is_unique(&b));
        drop(b);
        assert_eq!(drops(&d), 1);
    }

    #[test]
    fn handles_cross_threads() {
        let (a, d) = probe();
        std::thread::scope(|s| {
            for _ in 0..4 {
                let mine = a.clone();
                s.spawn(move || {
                    for _ in 0..1000 {
                        let c = mine.clone();
                        // Not this thread's value: its maker's part is not
                        // readable here, and counts as one.
                        assert!(IntrusivePtr::strong_count(&c) >= 2);
                        assert!(!IntrusivePtr::is_unique(&c));
                    }
                    drop(mine);
                });
            }
        });
        // Exact on the maker's thread, the others' drops included.
        assert_eq!(IntrusivePtr::strong_count(&a), 1);
        assert!(IntrusivePtr::is_unique(&a));
        // Dropped last on another thread, while its maker lives: queued to
        // the maker, and freed when the maker next makes a value.
        std::thread::spawn(move || drop(a)).join().unwrap();
        assert_eq!(drops(&d), 0);
        merge_this_threads_queue();
        assert_eq!(drops(&d), 1);
    }

    #[test]
    fn the_makers_last_drop_frees_once_the_others_are_gone() {
        let (a, d) = probe();
        // Cloned elsewhere: the clone is counted atomically, and the
        // maker's part is merged when the maker drops its handle.
        let b = std::thread::scope(|s| s.spawn(|| a.clone()).join().unwrap());
        drop(a);
        assert_eq!(drops(&d), 0);
        // Merged: the count is known on every thread now.
        std::thread::scope(|s| {
            s.spawn(|| {
                assert_eq!(IntrusivePtr::strong_count(&b), 1);
                assert!(IntrusivePtr::is_unique(&b));
            });
        });
        std::thread::spawn(move || drop(b)).join().unwrap();
        assert_eq!(drops(&d), 1);
    }

    #[test]
    fn a_value_whose_maker_exited_is_freed_by_its_last_drop() {
        let d = Arc::new(AtomicUsize::new(0));
        let probe = d.clone();
        let (a, b) = std::thread::spawn(move || {
            let a = IntrusivePtr::new(DropProbe(probe));
            let b = a.clone();
            (a, b)
        })
        .join()
        .unwrap();
        drop(a);
        assert_eq!(drops(&d), 0);
        drop(b);
        assert_eq!(drops(&d), 1);
    }

    #[test]
    fn a_retiring_maker_merges_its_queue() {
        let d = Arc::new(AtomicUsize::new(0));
        let probe = d.clone();
        let (to_main, from_maker) = mpsc::channel();
        let (to_maker, from_main) = mpsc::channel::<()>();
        let maker = std::thread::spawn(move || {
            let a = IntrusivePtr::new(DropProbe(probe));
            to_main.send(a.clone()).unwrap();
            // Wait until the other handle was dropped (and queued here).
            from_main.recv().unwrap();
            // The maker's part reaches zero on a queued value: left to the
            // queue, which this thread merges as it exits.
            drop(a);
        });
        drop(from_maker.recv().unwrap());
        assert_eq!(drops(&d), 0);
        to_maker.send(()).unwrap();
        maker.join().unwrap();
        assert_eq!(drops(&d), 1);
    }

    #[test]
    fn a_maker_frees_what_others_dropped_when_it_merges_its_queue() {
        let d = Arc::new(AtomicUsize::new(0));
        let probe = d.clone();
        let (to_main, from_maker) = mpsc::channel();
        let (merged, wait_merged) = mpsc::channel::<()>();
        let (to_maker, from_main) = mpsc::channel::<()>();
        let maker = std::thread::spawn(move || {
            let a = IntrusivePtr::new(DropProbe(probe));
            to_main.send(a.clone()).unwrap();
            drop(a);
            from_main.recv().unwrap();
            // No new value is made here: only the explicit merge frees it.
            handle_owner::merge_queued_handle_counts();
            merged.send(()).unwrap();
            from_main.recv().unwrap();
        });
        drop(from_maker.recv().unwrap());
        assert_eq!(drops(&d), 0);
        to_maker.send(()).unwrap();
        wait_merged.recv().unwrap();
        assert_eq!(drops(&d), 1);
        to_maker.send(()).unwrap();
        maker.join().unwrap();
    }

    #[test]
    fn handles_passed_around_threads_free_the_value_exactly_once() {
        const THREADS: usize = 4;
        const ROUNDS: usize = 2000;
        let (a, d) = probe();
        let (to_main, from_workers) = mpsc::channel();
        std::thread::scope(|s| {
            let mut senders = Vec::new();
            for _ in 0..THREADS {
                let (tx, rx) = mpsc::channel::<IntrusivePtr<DropProbe>>();
                senders.push(tx);
                let to_main = to_main.clone();
                s.spawn(move || {
                    for (i, h) in rx.into_iter().enumerate() {
                        let c = h.clone();
                        // Some go back to the maker, some die here.
                        if i % 3 == 0 {
                            to_main.send(c).unwrap();
                        }
                        drop(h);
                    }
                });
            }
            for round in 0..ROUNDS {
                senders[round % THREADS].send(a.clone()).unwrap();
                if let Ok(back) = from_workers.try_recv() {
                    let again = back.clone();
                    drop(back);
                    drop(again);
                }
            }
            drop(senders);
        });
        drop(to_main);
        for back in from_workers {
            drop(back);
        }
        // Every other handle is gone: the maker's count is exact.
        assert_eq!(IntrusivePtr::strong_count(&a), 1);
        assert_eq!(drops(&d), 0);
        drop(a);
        merge_this_threads_queue();
        assert_eq!(drops(&d), 1);
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
