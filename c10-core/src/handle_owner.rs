//! The threads that own handles' biased counts: per-thread tokens, and the
//! queues of values whose counts another thread let fall below zero.
//!
//! [`IntrusivePtr`](crate::intrusive_ptr) counts its handles in two parts
//! (biased reference counting, Choi, Shull and Torrellas, PACT 2018, the
//! scheme free-threaded CPython uses): the thread that made the value counts
//! its own clones and drops in a plain integer, every other thread in an
//! atomic one. This module gives each thread a token that the values it
//! makes record as their owner, and a queue through which another thread
//! hands the owner a value whose shared count went below zero: only the
//! owner can add its own part to the shared one (a *merge*) and so learn
//! whether the last handle is gone.
//!
//! The owner merges its queue when it next makes a value (one relaxed load
//! of its `pending` flag on that path), when it exits, and when it calls
//! [`merge_queued_handle_counts`] (a pool's workers do before they go
//! idle). A value made on one thread and last dropped on another is
//! therefore freed at one of those points, not at that drop; a thread
//! blocked for good keeps its queue until it wakes or exits.
//!
//! Tokens are never reused: a thread whose token matched a value made by a
//! thread that has exited could otherwise touch that value's plain count
//! while another thread merges it. Once a thread retires (its exit guard
//! runs), its token reads [`DEAD`], which no value records, so everything it
//! does afterwards goes through the atomic count; a thread that is already
//! tearing down, or finds the tokens exhausted, makes [`UNOWNED`] values.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::ptr::NonNull;
use std::sync::{Arc, PoisonError};

use crate::sync::{static_seam, thread_local_seam};
use crate::sync::{AtomicBool, AtomicU32, Mutex, MutexGuard, Ordering};

/// A thread's token, as values record it: 16 bits, to keep a handle's
/// header one word (`intrusive_ptr`). A program that starts more than
/// 65,533 threads over its life makes its later threads' values
/// [`UNOWNED`]: counted atomically, as correct and slower.
pub(crate) type Token = u16;

/// The owner of a value counted only atomically (a thread without a token
/// made it).
pub(crate) const UNOWNED: Token = 0;
/// A thread that has not needed a token yet.
const UNASSIGNED: Token = Token::MAX;
/// A thread that retired or found the tokens exhausted: no value records
/// it, so its handles all take the atomic path.
const DEAD: Token = Token::MAX - 1;

static_seam! {
    /// The next token to hand out (tokens run from 1 up to, not including,
    /// [`DEAD`]).
    static NEXT_TOKEN: AtomicU32 = AtomicU32::new(1);
}

/// A value whose owner must merge its counts, with the function that does
/// it for the value's type.
pub(crate) struct Queued {
    ptr: NonNull<()>,
    merge: unsafe fn(NonNull<()>),
}

// SAFETY: a `Queued` is the obligation to merge one value's counts; the
// value is `Send + Sync` (`IntrusivePtr`'s bounds for crossing threads) and
// is merged exactly once, by whoever takes the entry from its queue.
unsafe impl Send for Queued {}

impl Queued {
    /// An entry for the value at `ptr`, merged by `merge`.
    ///
    /// # Safety
    ///
    /// `merge(ptr)` must be sound to call once, on the owner's thread or
    /// after the owner retired, and the value must stay allocated until
    /// then.
    pub(crate) unsafe fn new(ptr: NonNull<()>, merge: unsafe fn(NonNull<()>)) -> Queued {
        Queued { ptr, merge }
    }

    fn run(self) {
        // SAFETY: `new`'s contract: the entry is taken from its queue once,
        // on the owner's thread or after it retired.
        unsafe { (self.merge)(self.ptr) }
    }
}

/// One thread's queue.
struct OwnerQueue {
    /// Whether `items` may be non-empty: the owner's cheap check.
    pending: AtomicBool,
    items: Mutex<Vec<Queued>>,
}

static_seam! {
    /// The queues of the threads that hold a token and have not retired. A
    /// thread removes its own when it retires; a queuer that finds none
    /// merges the value itself.
    static QUEUES: Mutex<BTreeMap<Token, Arc<OwnerQueue>>> = Mutex::new(BTreeMap::new());
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing here panics while holding a lock, and the data (a map, a
    // vector of entries) is valid at every step: a poisoned lock is used.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// This thread's token and queue (no destructor, so always readable, also
/// while the thread's other thread-locals are torn down).
struct ThisThread {
    token: Cell<Token>,
    /// This thread's queue while it holds a token: the `Arc` in [`QUEUES`]
    /// keeps it alive until the thread retires, which clears this first.
    queue: Cell<*const OwnerQueue>,
}

thread_local_seam! {
    static THIS: ThisThread =
        ThisThread { token: Cell::new(UNASSIGNED), queue: Cell::new(std::ptr::null()) };
}
thread_local_seam! {
    /// Retires the thread when its thread-locals are destroyed.
    static RETIRE: RetireOnExit = RetireOnExit { token: Cell::new(UNASSIGNED) };
}

/// The calling thread's token, to compare with a value's owner. Never
/// equal to [`UNOWNED`] or to any live value's owner made elsewhere.
#[inline(always)]
pub(crate) fn current() -> Token {
    with_this(|t| t.token.get(), DEAD)
}

/// The owner to record in a value made now on this thread: its token (taken
/// on first use), or [`UNOWNED`]. Merges the thread's queue first when
/// another thread queued values.
#[inline]
pub(crate) fn owner_for_new_value() -> Token {
    let (token, queue) = with_this(|t| (t.token.get(), t.queue.get()), (DEAD, std::ptr::null()));
    if token < DEAD {
        merge_if_pending(queue);
        return token;
    }
    if token == UNASSIGNED {
        return take_token();
    }
    UNOWNED
}

/// Merges the calling thread's queue now, if another thread queued a value
/// to it: frees the values this thread made whose last handles other
/// threads dropped. A thread does this itself when it next makes a value;
/// one about to go idle for long (a pool's worker) calls this first.
pub fn merge_queued_handle_counts() {
    let (token, queue) = with_this(|t| (t.token.get(), t.queue.get()), (DEAD, std::ptr::null()));
    if token < DEAD {
        merge_if_pending(queue);
    }
}

/// Merges `queue`, this thread's, if anything waits in it.
#[inline(always)]
fn merge_if_pending(queue: *const OwnerQueue) {
    // SAFETY: a thread with a token has its queue pointer set, and the
    // queue lives until this thread retires (which resets the token); the
    // callers pass this thread's queue while it holds its token.
    if unsafe { (*queue).pending.load(Ordering::Relaxed) } {
        merge_queue(queue);
    }
}

/// Gives this thread a token and a queue, or [`UNOWNED`] when it is tearing
/// down (its exit guard can no longer be registered) or tokens ran out.
#[cold]
fn take_token() -> Token {
    // Registering the guard first: a thread that cannot retire must not own
    // values, or their queue would never be merged.
    if RETIRE.try_with(|_| ()).is_err() {
        with_this(|t| t.token.set(DEAD), ());
        return UNOWNED;
    }
    let token = NEXT_TOKEN
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |t| {
            (t < u32::from(DEAD)).then_some(t + 1)
        })
        .ok()
        .and_then(|t| Token::try_from(t).ok())
        .unwrap_or(DEAD);
    if token >= DEAD {
        with_this(|t| t.token.set(DEAD), ());
        return UNOWNED;
    }
    let queue = Arc::new(OwnerQueue {
        pending: AtomicBool::new(false),
        items: Mutex::new(Vec::new()),
    });
    let raw = Arc::as_ptr(&queue);
    lock(&QUEUES).insert(token, queue);
    with_this(
        |t| {
            t.queue.set(raw);
            t.token.set(token);
        },
        (),
    );
    // The guard retires this token (it was reached above, so it lives).
    let _ = RETIRE.try_with(|r| r.token.set(token));
    token
}

/// Merges every value queued to this thread.
#[cold]
#[inline(never)]
fn merge_queue(queue: *const OwnerQueue) {
    // SAFETY: called by the queue's thread before it retires (see
    // `owner_for_new_value`).
    let queue = unsafe { &*queue };
    let items = {
        let mut items = lock(&queue.items);
        queue.pending.store(false, Ordering::Relaxed);
        std::mem::take(&mut *items)
    };
    // Outside the lock: merging may free values, whose drops may queue
    // more entries, here or elsewhere.
    for item in items {
        item.run();
    }
}

/// Hands `item` to the queue of `owner`, or merges it on the spot when the
/// owner has retired (its plain count is final then, and the lock on the
/// queues orders its last writes before this read).
#[cold]
#[inline(never)]
pub(crate) fn queue_merge(owner: Token, item: Queued) {
    {
        let queues = lock(&QUEUES);
        if let Some(queue) = queues.get(&owner) {
            lock(&queue.items).push(item);
            queue.pending.store(true, Ordering::Release);
            return;
        }
    }
    item.run();
}

/// Thread-local guard whose destructor retires the thread.
struct RetireOnExit {
    /// The token it retires (the thread's, once it has one): kept here so
    /// that retiring does not depend on the order in which the thread's
    /// thread-locals are destroyed.
    token: Cell<Token>,
}

/// `f` on this thread's [`ThisThread`], or `gone` where it can no longer
/// be read. Never the case in a normal build (it has no destructor, so it
/// is readable to the end); a `loom` model destroys every thread-local at
/// its thread's exit, in an order of its own, and a thread past that point
/// behaves as retired.
#[inline(always)]
fn with_this<R>(f: impl FnOnce(&ThisThread) -> R, gone: R) -> R {
    #[cfg(not(loom))]
    {
        let _ = gone;
        THIS.with(f)
    }
    #[cfg(loom)]
    THIS.try_with(f).unwrap_or(gone)
}

impl RetireOnExit {
    /// Retires the thread: its token's queue leaves the map and is merged.
    fn retire(&self) {
        with_this(
            |t| {
                t.queue.set(std::ptr::null());
                t.token.set(DEAD);
            },
            (),
        );
        let token = self.token.replace(DEAD);
        if token >= DEAD {
            return;
        }
        // From here this thread takes the atomic path for every value; the
        // queue leaves the map under its lock, so every entry pushed to it
        // is in it now, and later queuers merge their values themselves.
        let Some(queue) = lock(&QUEUES).remove(&token) else {
            return;
        };
        let items = std::mem::take(&mut *lock(&queue.items));
        for item in items {
            item.run();
        }
    }
}

impl Drop for RetireOnExit {
    fn drop(&mut self) {
        // Under `loom` a thread-local's destructor runs outside the model,
        // where no lock may be taken: the models retire their threads
        // explicitly (`retire_this_thread`), as this would at their exit.
        #[cfg(not(loom))]
        self.retire();
    }
}

/// Retires the calling thread now, as its exit would (`loom` models).
#[cfg(all(test, loom))]
pub(crate) fn retire_this_thread() {
    RETIRE.with(RetireOnExit::retire);
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_distinct_per_thread_and_stable() {
        let here = owner_for_new_value();
        assert_ne!(here, UNOWNED);
        assert_eq!(owner_for_new_value(), here);
        assert_eq!(current(), here);
        let there = std::thread::spawn(|| (owner_for_new_value(), current()))
            .join()
            .unwrap();
        assert_eq!(there.0, there.1);
        assert_ne!(there.0, here);
        assert_ne!(there.0, UNOWNED);
    }

    #[test]
    fn a_thread_without_values_has_no_token() {
        let token = std::thread::spawn(current).join().unwrap();
        assert_eq!(token, UNASSIGNED);
    }

    #[test]
    fn a_retired_thread_has_no_queue() {
        let token = std::thread::spawn(owner_for_new_value).join().unwrap();
        assert!(!lock(&QUEUES).contains_key(&token));
    }
}
