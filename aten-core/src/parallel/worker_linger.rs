//! Keeping a `rayon` pool's idle workers awake between parallel regions,
//! as OpenMP's active wait policy keeps libtorch's.
//!
//! A `rayon` worker that finds no work yields a few dozen times and then
//! sleeps on a futex. The next parallel region wakes it, and on a virtual
//! machine that wake-up takes longer than a typical region: the caller does
//! most of the work alone and then waits for the late worker's piece. On
//! this project's machine kind a 200K-element `sub_` took 19 us on one
//! thread, 10 us on two awake threads and 29.5 us on two when the second
//! had fallen asleep, which it does between the regions of an eager
//! training step.
//!
//! [`linger`], called when a region ends, sends the pool's other workers a
//! job that runs the pool's pending work as it appears
//! (`rayon::yield_now`) and returns once it has found none for [`LINGER`].
//! Sending it also starts waking a sleeping worker at the end of a region,
//! in the serial gap before the next one, rather than at its start.
//!
//! A worker that takes a lingering job while it waits inside a `join` of
//! its own returns to that `join` only when the job returns: at most
//! [`LINGER`] after the pool's last work. The regions that call
//! [`linger`] run one level deep, so on their pools nobody waits so.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long a lingering worker waits without finding work before it
/// returns to `rayon`'s own idling (and sleep). Longer than the serial
/// gaps between the parallel regions of an eager step (a few tens of
/// microseconds), short enough that an idle program stops spinning at once
/// to a person's eye.
pub const LINGER: Duration = Duration::from_micros(250);

/// Lingering jobs running or sent, over all pools (a pool whose count is
/// taken by another's lingerers only wakes more slowly).
static LINGERING: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Whether this thread is inside a lingering job, so that one that it
    /// runs as pending work returns at once.
    static IN_LINGER: Cell<bool> = const { Cell::new(false) };
}

/// Lingering jobs running or sent, over all pools.
pub fn lingering() -> usize {
    LINGERING.load(Ordering::Relaxed)
}

/// Sends the current pool's other workers a lingering job each, unless
/// they have one already (see the module docs). Outside a pool's threads,
/// the global pool is the current one, and all but one of its workers
/// linger: the caller's own serial work needs a core. Does nothing in a
/// pool of one thread.
pub fn linger() {
    let threads = rayon::current_num_threads();
    // No worker index outside a pool: no thread of the pool sent the job.
    let sender = rayon::current_thread_index().unwrap_or(usize::MAX);
    // A caller inside a lingering job of its own (which took the caller's
    // work, a whole `install` perhaps, as pending work) is counted but
    // busy: the pool's other workers still need theirs.
    let own = usize::from(IN_LINGER.with(Cell::get));
    let wanted = threads.saturating_sub(1) + own;
    let mut now = LINGERING.load(Ordering::Relaxed);
    while now < wanted {
        match LINGERING.compare_exchange_weak(now, now + 1, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => {
                rayon::spawn(move || run(sender));
                now += 1;
            }
            Err(seen) => now = seen,
        }
    }
}

/// The lingering job: runs the pool's pending work until it has found none
/// for [`LINGER`]. Returns at once on the thread that sent it (which would
/// otherwise spin in place of its own next step) and inside another
/// lingering job.
fn run(sender: usize) {
    /// Gives back the job's count and this thread's flag, however it ends.
    struct Done {
        flagged: bool,
    }
    impl Drop for Done {
        fn drop(&mut self) {
            if self.flagged {
                IN_LINGER.with(|f| f.set(false));
            }
            LINGERING.fetch_sub(1, Ordering::Relaxed);
        }
    }
    let nested = IN_LINGER.with(|f| f.replace(true));
    let _done = Done { flagged: !nested };
    if nested || rayon::current_thread_index() == Some(sender) {
        return;
    }
    let mut idle_since = Instant::now();
    loop {
        match rayon::yield_now() {
            Some(rayon::Yield::Executed) => idle_since = Instant::now(),
            _ if idle_since.elapsed() >= LINGER => {
                // About to sleep: free what this worker made and others
                // have dropped since (it would otherwise wait for the
                // worker's next allocation).
                c10_core::merge_queued_handle_counts();
                return;
            }
            _ => std::hint::spin_loop(),
        }
    }
}
