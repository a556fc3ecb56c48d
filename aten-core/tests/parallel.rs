//! `parallel_for` and `parallel_chunks_mut` (`aten_core::parallel`): every
//! index runs once, small and nested ranges stay on their thread, a panic
//! reaches the caller after every chunk has finished, and a region
//! completes when every other worker of the pool is busy.

mod support;

use support::pool_of;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use aten_core::parallel::{in_parallel_region, parallel_chunks_mut, parallel_for, GRAIN_SIZE};

#[test]
fn every_index_runs_once_in_contiguous_chunks() {
    for threads in [1, 2, 3, 5] {
        for (begin, end, grain) in [
            (0, 0, 1),
            (3, 4, 1),
            (0, 10, 1),
            (-7, 1000, 10),
            (5, 100_000, GRAIN_SIZE),
        ] {
            let seen: Vec<AtomicUsize> = (begin..end).map(|_| AtomicUsize::new(0)).collect();
            let chunks = Mutex::new(Vec::new());
            pool_of(threads).install(|| {
                parallel_for(begin, end, grain, |b, e| {
                    assert!(begin <= b && b < e && e <= end);
                    chunks.lock().unwrap().push((b, e));
                    for i in b..e {
                        seen[(i - begin) as usize].fetch_add(1, Ordering::Relaxed);
                    }
                })
            });
            assert!(seen.iter().all(|s| s.load(Ordering::Relaxed) == 1));
            let chunks = chunks.into_inner().unwrap();
            assert!(
                chunks.len() <= threads.max(1),
                "{chunks:?} on {threads} threads"
            );
            let len = end - begin;
            if len > 0 && len < grain {
                assert_eq!(chunks, vec![(begin, end)]);
            }
        }
    }
}

#[test]
fn chunks_of_a_slice_cover_it_in_whole_units() {
    let mut v = vec![0usize; 1003];
    pool_of(3).install(|| {
        parallel_chunks_mut(&mut v, 10, 1, |first, part| {
            assert!(part.len() % 10 == 0 || first * 10 + part.len() == 1003);
            for (k, x) in part.iter_mut().enumerate() {
                *x = first * 10 + k;
            }
        })
    });
    assert!(v.iter().enumerate().all(|(i, &x)| i == x));
}

#[test]
fn a_region_inside_a_region_runs_serially() {
    let nested_calls = AtomicUsize::new(0);
    pool_of(4).install(|| {
        assert!(!in_parallel_region());
        parallel_for(0, 4, 1, |_, _| {
            assert!(in_parallel_region());
            let calls = AtomicUsize::new(0);
            parallel_for(0, 1000, 1, |b, e| {
                assert_eq!((b, e), (0, 1000));
                calls.fetch_add(1, Ordering::Relaxed);
            });
            assert_eq!(calls.load(Ordering::Relaxed), 1);
            nested_calls.fetch_add(1, Ordering::Relaxed);
        });
        assert!(!in_parallel_region());
    });
    assert!(nested_calls.load(Ordering::Relaxed) >= 1);
}

#[test]
fn a_panic_reaches_the_caller_after_every_chunk() {
    let finished = AtomicUsize::new(0);
    let result = std::panic::catch_unwind(|| {
        pool_of(3).install(|| {
            parallel_for(0, 3, 1, |b, _| {
                if b == 0 {
                    panic!("chunk 0 fails");
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
                finished.fetch_add(1, Ordering::Relaxed);
            })
        })
    });
    let payload = result.expect_err("the panic is raised on the caller");
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"chunk 0 fails"));
    // The other chunks ran to their end before the caller went on.
    assert_eq!(finished.load(Ordering::Relaxed), 2);
    assert!(!in_parallel_region());
}

#[test]
fn a_region_completes_while_every_other_worker_is_busy() {
    // Two workers: one blocks until the region on the other has finished,
    // so the region's caller must run every chunk itself.
    let pool = pool_of(2);
    let region_done = AtomicBool::new(false);
    let started = AtomicBool::new(false);
    pool.install(|| {
        rayon::join(
            || {
                started.store(true, Ordering::Release);
                while !region_done.load(Ordering::Acquire) {
                    std::thread::yield_now();
                }
            },
            || {
                while !started.load(Ordering::Acquire) {
                    std::thread::yield_now();
                }
                let sum = AtomicUsize::new(0);
                parallel_for(0, 100, 1, |b, e| {
                    sum.fetch_add((b..e).sum::<i64>() as usize, Ordering::Relaxed);
                });
                assert_eq!(sum.load(Ordering::Relaxed), 4950);
                region_done.store(true, Ordering::Release);
            },
        )
    });
}

#[test]
fn chunks_of_hostile_lengths_and_units_stay_inside_the_slice() {
    // Zero-sized values: a slice as long as `usize` allows, in units whose
    // product with the unit count passes `usize::MAX`.
    let mut zst = vec![(); usize::MAX];
    for unit in [0, 1, 3, usize::MAX / 2 + 2, usize::MAX] {
        let total = AtomicUsize::new(0);
        pool_of(2).install(|| {
            parallel_chunks_mut(&mut zst, unit, 1, |_, part| {
                total.fetch_add(part.len(), Ordering::Relaxed);
            })
        });
        assert_eq!(total.load(Ordering::Relaxed), usize::MAX, "unit {unit}");
    }
    // A unit longer than the slice, and a grain past `i64::MAX`.
    let mut v = vec![0u8; 10];
    parallel_chunks_mut(&mut v, usize::MAX, usize::MAX, |first, part| {
        assert_eq!((first, part.len()), (0, 10));
        part.fill(1);
    });
    assert!(v.iter().all(|&x| x == 1));
}
