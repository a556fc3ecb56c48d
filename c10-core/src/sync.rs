//! The one seam between c10-core's lock-free protocols and the primitives
//! they are built from. Atomics, `UnsafeCell`, locks, thread-locals and
//! threads come from here: the standard library's in a normal build,
//! `loom`'s model-checked ones in a build with `--cfg loom`, where the
//! `loom` tests (`loom_tests` modules) run each protocol's threads through
//! every interleaving and memory ordering the C++ model allows, and report
//! a data race on an `UnsafeCell`, a causality violation or a deadlock (as
//! crossbeam does). `cargo xtask test` runs them:
//!
//! ```sh
//! RUSTFLAGS="--cfg loom" cargo test -p c10-core --release --lib loom
//! ```
//!
//! The protocols behind the seam: a storage's borrow flag and the buffer it
//! guards (`storage`), published values (`published_cell`, the
//! dispatcher's tables), and the biased reference counts with their
//! owners' queues (`intrusive_ptr`, `handle_owner`).

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{
    fence, AtomicBool, AtomicI32, AtomicIsize, AtomicPtr, AtomicU32, AtomicUsize, Ordering,
};
#[cfg(not(loom))]
pub(crate) use std::sync::{Mutex, MutexGuard};

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{
    fence, AtomicBool, AtomicI32, AtomicIsize, AtomicPtr, AtomicU32, AtomicUsize, Ordering,
};
#[cfg(loom)]
pub(crate) use loom::sync::{Mutex, MutexGuard};

#[cfg(loom)]
pub(crate) use loom::cell::UnsafeCell;

/// `std::cell::UnsafeCell` with `loom`'s access API: every access goes
/// through [`with`](Self::with) (reads) or [`with_mut`](Self::with_mut)
/// (writes), which `loom` checks for races.
#[cfg(not(loom))]
#[derive(Debug)]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    /// A cell holding `value`.
    #[inline(always)]
    pub(crate) const fn new(value: T) -> UnsafeCell<T> {
        UnsafeCell(std::cell::UnsafeCell::new(value))
    }

    /// Calls `f` with a pointer for reading the value.
    #[inline(always)]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Calls `f` with a pointer for writing the value.
    #[inline(always)]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

/// Lets a thread that waits for another one run: a hint in a normal build;
/// under `loom` the point where the model switches threads (a spinning
/// thread that never yields would never let the other one run).
#[inline(always)]
pub(crate) fn spin_hint() {
    #[cfg(not(loom))]
    std::hint::spin_loop();
    #[cfg(loom)]
    loom::thread::yield_now();
}

/// Gives up the processor: `std::thread::yield_now`, or under `loom` a
/// switch to another modelled thread.
#[inline(always)]
pub(crate) fn yield_now() {
    #[cfg(not(loom))]
    std::thread::yield_now();
    #[cfg(loom)]
    loom::thread::yield_now();
}

/// Declares thread-locals that are per modelled thread under `loom` (whose
/// threads share one OS thread).
macro_rules! thread_local_seam {
    ($(#[$attr:meta])* static $name:ident: $t:ty = $init:expr;) => {
        #[cfg(not(loom))]
        std::thread_local! {
            $(#[$attr])* static $name: $t = const { $init };
        }
        #[cfg(loom)]
        loom::thread_local! {
            $(#[$attr])* static $name: $t = $init;
        }
    };
}
pub(crate) use thread_local_seam;

/// Declares a static: a plain one in a normal build, a lazily made one
/// under `loom` (whose atomics and locks cannot be made in a constant, and
/// whose statics start afresh in every modelled execution).
macro_rules! static_seam {
    ($(#[$attr:meta])* static $name:ident: $t:ty = $init:expr;) => {
        #[cfg(not(loom))]
        $(#[$attr])* static $name: $t = $init;
        #[cfg(loom)]
        loom::lazy_static! {
            $(#[$attr])* static ref $name: $t = $init;
        }
    };
}
pub(crate) use static_seam;

/// Runs `body` as a `loom` model on a thread of its own, which then
/// retires as its exit would (`handle_owner::retire_this_thread`: `loom`
/// runs thread-local destructors outside the model, and the model's main
/// thread drops its own after the statics).
#[cfg(all(test, loom))]
pub(crate) fn model(body: fn()) {
    loom::model(move || {
        loom::thread::spawn(move || {
            body();
            crate::handle_owner::retire_this_thread();
        })
        .join()
        .unwrap()
    });
}
