//! Lingering workers (`aten_core::worker_linger`): they run work sent while
//! they linger, return once there is none, and are only sent to pools of
//! more than one thread. Its own test binary: the count is global.

use aten_core::worker_linger::{linger, lingering, LINGER};
use std::time::{Duration, Instant};

fn wait_until_none_linger() {
    let deadline = Instant::now() + Duration::from_secs(10);
    while lingering() != 0 {
        assert!(Instant::now() < deadline, "lingering jobs never returned");
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn lingering_workers_run_later_work_then_return() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
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
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(linger);
    assert_eq!(lingering(), 0);
    drop(pool);
}
