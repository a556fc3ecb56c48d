//! `PublishedCell`: a value that writers replace and readers read with one
//! plain atomic load. The dispatcher publishes operator tables through it.
//! (Tensor layouts, which `resize_` replaces far more often, are published
//! through `tensor_layout`'s cell, which frees replaced values.)
//!
//! The first value lives inside the cell (an operator costs no
//! extra allocation until it is first replaced). Writers box each new value,
//! keep the box, and swing an atomic pointer to it; a null pointer means
//! the first value is current. Readers load the pointer and borrow the value
//! for as long as they borrow the cell. Old values are never freed while the
//! cell lives, so a reader can never see freed memory, and the read needs
//! neither a lock, nor a reference count, nor a hazard slot.
//!
//! Why not `arc-swap`: its `load()` costs about 8 ns (a sequentially
//! consistent store into a per-thread debt slot and its release), two thirds
//! of the whole typed-call budget. The price here is memory: every value a
//! cell ever held stays until the cell is dropped. Tables are republished
//! when kernels are registered, which is rare; a program that re-registers
//! kernels in a loop grows with each change.

use crate::sync::{AtomicPtr, Mutex, Ordering};

/// A value published by writers and read lock-free (see the module docs).
pub struct PublishedCell<T> {
    /// The current value when not null (a `Box::into_raw` pointer kept in
    /// `retained`); null: `initial` is current.
    current: AtomicPtr<T>,
    /// The first value.
    initial: T,
    /// Every later value, as `Box::into_raw` pointers; freed on drop. (An
    /// empty `Vec` does not allocate: a cell that is never replaced costs
    /// no allocation.)
    retained: Mutex<Vec<*mut T>>,
}

// SAFETY: the cell owns `T`s (freed only in `drop`), hands out `&T` to any
// thread, and moves them between threads only as owned boxes: exactly what
// `T: Send + Sync` permits. The raw pointers are never exposed.
unsafe impl<T: Send + Sync> Send for PublishedCell<T> {}
// SAFETY: as above; shared access only ever produces `&T`.
unsafe impl<T: Send + Sync> Sync for PublishedCell<T> {}

impl<T> PublishedCell<T> {
    /// A cell holding `value`.
    pub fn new(value: T) -> PublishedCell<T> {
        PublishedCell {
            current: AtomicPtr::new(std::ptr::null_mut()),
            initial: value,
            retained: Mutex::new(Vec::new()),
        }
    }

    /// The current value.
    #[inline(always)]
    pub fn load(&self) -> &T {
        let ptr = self.current.load(Ordering::Acquire);
        if ptr.is_null() {
            return &self.initial;
        }
        // SAFETY: a non-null `ptr` came from `Box::into_raw` in `store`, was
        // published with Release after the value was fully written (the
        // Acquire load synchronizes with it), and is freed only by `drop`,
        // which cannot run while `self` is borrowed. Values are never mutated
        // after publication.
        unsafe { &*ptr }
    }

    /// Publishes `value`; later loads see it.
    pub fn store(&self, value: T) {
        let ptr = Box::into_raw(Box::new(value));
        let mut retained = self.retained.lock().unwrap_or_else(|p| p.into_inner());
        retained.push(ptr);
        self.current.store(ptr, Ordering::Release);
    }
}

impl<T> Drop for PublishedCell<T> {
    fn drop(&mut self) {
        let retained = self.retained.get_mut().unwrap_or_else(|p| p.into_inner());
        for ptr in retained.drain(..) {
            // SAFETY: each pointer came from `Box::into_raw`, is in the list
            // exactly once, and no borrow of the cell (hence of the value)
            // outlives `&mut self`.
            drop(unsafe { Box::from_raw(ptr) });
        }
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use loom::sync::Arc;
    use loom::thread;

    use super::*;

    /// A value whose contents `loom` tracks: reading it before its
    /// writer's stores are visible is reported.
    struct Tracked(loom::cell::UnsafeCell<usize>);

    impl Tracked {
        fn new(v: usize) -> Tracked {
            Tracked(loom::cell::UnsafeCell::new(v))
        }
        fn get(&self) -> usize {
            // SAFETY: published values are never written after `new`.
            self.0.with(|p| unsafe { *p })
        }
    }

    #[test]
    fn loom_a_reader_sees_a_whole_published_value() {
        loom::model(|| {
            let cell = Arc::new(PublishedCell::new(Tracked::new(0)));
            let writer = {
                let cell = Arc::clone(&cell);
                thread::spawn(move || {
                    cell.store(Tracked::new(1));
                    cell.store(Tracked::new(2));
                })
            };
            // Values only move forward, and each is seen whole.
            let first = cell.load().get();
            let second = cell.load().get();
            assert!(first <= second && second <= 2);
            writer.join().unwrap();
            assert_eq!(cell.load().get(), 2);
        });
    }

    #[test]
    fn loom_concurrent_writers_keep_every_value_until_drop() {
        loom::model(|| {
            let cell = Arc::new(PublishedCell::new(Tracked::new(0)));
            let writers: Vec<_> = (1..=2)
                .map(|v| {
                    let cell = Arc::clone(&cell);
                    thread::spawn(move || cell.store(Tracked::new(v)))
                })
                .collect();
            let seen = cell.load().get();
            assert!(seen <= 2);
            for w in writers {
                w.join().unwrap();
            }
            assert!(cell.load().get() >= 1);
        });
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn publishes_and_frees() {
        let cell = PublishedCell::new(String::from("a"));
        assert_eq!(cell.load(), "a");
        cell.store(String::from("b"));
        assert_eq!(cell.load(), "b");
        let shared = std::sync::Arc::new(cell);
        let reader = {
            let shared = std::sync::Arc::clone(&shared);
            std::thread::spawn(move || shared.load().clone())
        };
        shared.store(String::from("c"));
        let seen = reader.join().unwrap();
        assert!(seen == "b" || seen == "c");
    }
}
