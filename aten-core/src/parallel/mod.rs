//! Intra-op parallelism (PyTorch's `ATen/Parallel.h`): [`parallel_for`]
//! splits an index range over the current `rayon` pool's threads,
//! [`GRAIN_SIZE`] is the size below which a range stays on the calling
//! thread, and [`worker_linger`] keeps the pool's workers awake between
//! regions.
//!
//! # Regions that never run foreign work
//!
//! A kernel calls [`parallel_for`] while it holds its operands' storage
//! borrows. A `rayon::scope` or `join` would let the calling thread, while
//! it waits for its chunks, run any job of the pool: a job of the caller's
//! own `par_iter`, say, whose kernel then finds this thread's borrows
//! taken. So a region here waits without stealing. The caller and the
//! helper jobs it sends share one `Region`: each claims the next chunk
//! with one `fetch_add` on `next` and runs it; the caller runs chunks
//! until none is left and then waits only for the chunks others already
//! claimed, which are running. No one waits for a job that is merely
//! queued, so a region completes even when every other worker is busy (the
//! caller then runs every chunk itself).
//!
//! Why the body, which lives on the caller's stack, is never used after
//! the caller returns: a chunk index is claimed at most once (`fetch_add`
//! hands out each value once) and only indices below `chunks` reach the
//! body; the caller returns only after `done` counted `chunks`
//! completions, each counted after its body call returned (a panic is
//! caught and counted too). A helper that starts late claims an index at
//! or past `chunks` and returns without touching the body; the region's
//! counters stay alive for it through its `Arc`. Each completion is a
//! `Release` increment and the caller's final load is `Acquire`, so every
//! write of a chunk happens before the caller reads the results.
//!
//! As in PyTorch, a [`parallel_for`] inside a region's chunk (a nested
//! region) runs serially on its thread ([`in_parallel_region`]).

pub mod worker_linger;

use std::any::Any;
use std::cell::Cell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use c10_core::ThreadShared;

/// Number of elements below which a loop stays on the calling thread
/// (`at::internal::GRAIN_SIZE`).
pub const GRAIN_SIZE: i64 = 32768;

thread_local! {
    /// Whether this thread is running a chunk of a region.
    static IN_REGION: Cell<bool> = const { Cell::new(false) };
}

/// Whether the calling thread runs inside a [`parallel_for`] chunk
/// (`at::in_parallel_region`).
pub fn in_parallel_region() -> bool {
    IN_REGION.with(Cell::get)
}

/// Runs `f(chunk_begin, chunk_end)` over `[begin, end)` split into
/// contiguous chunks on the current `rayon` pool's threads
/// (`at::parallel_for`): one chunk per thread, no chunk smaller than
/// `grain_size` where the range allows. Runs `f(begin, end)` on the calling
/// thread when the range is smaller than `grain_size`, the pool has one
/// thread, or the caller is already inside a region. An empty range calls
/// nothing. A panic in `f` is raised on the calling thread once every
/// chunk has finished. The pool's other workers then linger for the next
/// region ([`worker_linger`]).
pub fn parallel_for(begin: i64, end: i64, grain_size: i64, f: impl Fn(i64, i64) + Sync) {
    if begin >= end {
        return;
    }
    let len = end - begin;
    let grain = grain_size.max(1);
    if len < grain || in_parallel_region() {
        return f(begin, end);
    }
    let threads = rayon::current_num_threads() as i64;
    let chunks = threads.min(len / grain + i64::from(len % grain != 0));
    if chunks <= 1 {
        return f(begin, end);
    }
    // Chunk `c` of `chunks` (in i128: `len * c` may not fit an i64).
    let bound = |c: usize| begin + (i128::from(len) * c as i128 / i128::from(chunks)) as i64;
    let body = |c: usize| f(bound(c), bound(c + 1));
    run_region(chunks as usize, &body);
    worker_linger::linger();
}

/// [`parallel_for`] over `dst` cut into units of `unit` elements (the last
/// one may be shorter): `f(first_unit, part)` gets one contiguous part of
/// whole units, `part` starting at unit `first_unit`. `grain` is in units.
pub fn parallel_chunks_mut<T: Send>(
    dst: &mut [T],
    unit: usize,
    grain: usize,
    f: impl Fn(usize, &mut [T]) + Sync,
) {
    let unit = unit.max(1);
    let len = dst.len();
    let units = len.div_ceil(unit);
    // More units than an index range holds (only slices of zero-sized
    // values are that long): one part.
    let (Ok(units), Ok(grain)) = (i64::try_from(units), i64::try_from(grain)) else {
        return f(0, dst);
    };
    let ptr = dst.as_mut_ptr();
    // SAFETY: the parts handed out below are disjoint ranges of `dst`,
    // which this function borrows mutably until every part has returned.
    let ptr = unsafe { ThreadShared::new(ptr) };
    parallel_for(0, units, grain, |u0, u1| {
        let (u0, u1) = (u0 as usize, u1 as usize);
        // Saturating: `u1 * unit` may pass `usize::MAX` for the last,
        // shorter unit; both ends are cut at `len`.
        let start = u0.saturating_mul(unit).min(len);
        let end = u1.saturating_mul(unit).min(len);
        // SAFETY: `start <= end <= len`, so `start..end` lies inside
        // `dst`, and `parallel_for` hands out disjoint unit ranges, so no
        // two parts alias.
        let part = unsafe { std::slice::from_raw_parts_mut(ptr.get().add(start), end - start) };
        f(u0, part);
    });
}

/// The state a region's caller and helpers share (see the module docs).
struct Region {
    /// The next chunk to claim.
    next: AtomicUsize,
    /// Chunks whose body has returned (or panicked).
    done: AtomicUsize,
    /// Number of chunks.
    chunks: usize,
    /// The first panic of a chunk, raised again by the caller.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    /// The chunk body, on the caller's stack, its lifetime erased: only
    /// called for a claimed index below `chunks`, while the caller waits.
    body: *const (dyn Fn(usize) + Sync),
}

// SAFETY: `body` points at a `Sync` closure that is only called while the
// caller keeps it alive (module docs); every other field is thread-safe.
unsafe impl Send for Region {}
// SAFETY: as for `Send`: shared access calls `body` (a `Sync` closure) and
// touches atomics and a mutex.
unsafe impl Sync for Region {}

impl Region {
    /// Claims and runs chunks until none is left.
    fn help(&self) {
        loop {
            let c = self.next.fetch_add(1, Ordering::Relaxed);
            if c >= self.chunks {
                return;
            }
            let was = IN_REGION.with(|r| r.replace(true));
            // SAFETY: `c < chunks` was claimed by this thread alone, and
            // the caller does not return before this chunk is counted in
            // `done` below, so the closure `body` points at is alive.
            let result = catch_unwind(AssertUnwindSafe(|| unsafe { (*self.body)(c) }));
            IN_REGION.with(|r| r.set(was));
            if let Err(payload) = result {
                let mut first = self.panic.lock().unwrap_or_else(|e| e.into_inner());
                first.get_or_insert(payload);
            }
            self.done.fetch_add(1, Ordering::Release);
        }
    }
}

/// Runs `body(0..chunks)` on the calling thread and helpers of the
/// current pool, returning once every chunk has run.
fn run_region(chunks: usize, body: &(dyn Fn(usize) + Sync)) {
    // SAFETY: only the lifetime is erased (same layout); `Region::help`
    // calls the closure only while this function waits below.
    let body: *const (dyn Fn(usize) + Sync + 'static) = unsafe {
        std::mem::transmute::<*const (dyn Fn(usize) + Sync + '_), *const (dyn Fn(usize) + Sync)>(
            body,
        )
    };
    let region = Arc::new(Region {
        next: AtomicUsize::new(0),
        done: AtomicUsize::new(0),
        chunks,
        panic: Mutex::new(None),
        body,
    });
    for _ in 1..chunks {
        let region = Arc::clone(&region);
        rayon::spawn(move || region.help());
    }
    region.help();
    let mut spins = 0u32;
    while region.done.load(Ordering::Acquire) < chunks {
        // The chunks still running were claimed by working threads: they
        // end soon (a chunk is about a grain of work).
        if spins < 64 {
            std::hint::spin_loop();
            spins += 1;
        } else {
            std::thread::yield_now();
        }
    }
    let payload = region
        .panic
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    if let Some(payload) = payload {
        resume_unwind(payload);
    }
}
