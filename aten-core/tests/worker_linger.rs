//! Lingering workers (`aten_core::parallel::worker_linger`): they run work sent while
//! they linger, return once there is none, and are only sent to pools of
//! more than one thread. Its own test binary, one test at a time: the
//! count is global.

mod support;

use support::pool_of;

use aten_core::parallel::worker_linger::{linger, lingering, LINGER};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Held by each test: they read the global count.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn wait_until_none_linger() {
    let deadline = Instant::now() + Duration::from_secs(10);
    while lingering() != 0 {
        assert!(Instant::now() < deadline, "lingering jobs never returned");
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn lingering_workers_run_later_work_then_return() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let pool = pool_of(3);
    pool.install(|| {
        linger();
        // Two workers at most: the pool's other threads.
        assert!(lingering() <= 2);
        linger();
        assert!(lingering() <= 2);
        // Work sent while they linger runs, nested work included, and a
        // region's end sends no more than the pool's other threads.
        for i in 0..200u64 {
            let (a, b) = rayon::join(|| (0..1000u64).sum::<u64>(), || rayon::join(|| i, || i + 1));
            assert_eq!((a, b), (499_500, (i, i + 1)));
            linger();
            assert!(lingering() <= 2);
        }
    });
    // They return once they find no work for LINGER.
    std::thread::sleep(LINGER);
    wait_until_none_linger();
    // Outside a pool, the global pool's workers linger (all but one).
    linger();
    assert!(lingering() < rayon::current_num_threads().max(2));
    wait_until_none_linger();
    // In a pool of one, nothing is sent.
    pool_of(1).install(linger);
    assert_eq!(lingering(), 0);
    drop(pool);
}

#[test]
fn work_run_by_a_lingering_worker_still_keeps_the_others_awake() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;
    let pool = pool_of(2);
    let counts = Arc::new((AtomicUsize::new(usize::MAX), AtomicUsize::new(0)));
    let done = Arc::new(AtomicBool::new(false));
    pool.install(|| {
        linger();
        // The other worker takes the lingering job first (stealing is
        // first in, first out), then this job as pending work; this
        // thread only spins meanwhile, so it runs neither.
        let (counts, finished) = (counts.clone(), done.clone());
        rayon::spawn(move || {
            let before = lingering();
            // A region ending inside the lingering job: the sending
            // thread is now the one that lingered, and the other needs a
            // lingering job of its own.
            linger();
            counts.0.store(before, Ordering::SeqCst);
            counts.1.store(lingering(), Ordering::SeqCst);
            finished.store(true, Ordering::SeqCst);
        });
        let deadline = Instant::now() + Duration::from_secs(10);
        while !done.load(Ordering::SeqCst) {
            assert!(Instant::now() < deadline, "the spawned job never ran");
            std::hint::spin_loop();
        }
    });
    assert_eq!(counts.0.load(Ordering::SeqCst), 1);
    assert_eq!(counts.1.load(Ordering::SeqCst), 2);
    wait_until_none_linger();
}
