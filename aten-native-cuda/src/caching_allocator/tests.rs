//! Tests of the caching allocator against the fake device: reuse, size
//! classes, splitting and merging, stream isolation, `record_stream`,
//! out-of-memory handling, `empty_cache`, statistics, bad pointers, hostile
//! sizes and concurrent use.

use std::sync::Arc;

use c10_core::Error;

use super::fake::FakeDevice;
use super::*;

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;
const S0: StreamId = StreamId::DEFAULT;
const S1: StreamId = StreamId(1);
const S2: StreamId = StreamId(2);

fn fake_allocator(capacity: usize) -> (CachingAllocator<FakeDevice>, FakeDevice) {
    let device = FakeDevice::new(0, capacity);
    (CachingAllocator::new(device.clone()), device)
}

/// The blocks of each segment as (size, state), by address.
fn layout(allocator: &CachingAllocator<FakeDevice>) -> Vec<Vec<(usize, BlockSnapshotState)>> {
    allocator.assert_invariants();
    allocator
        .snapshot()
        .iter()
        .map(|segment| {
            segment
                .blocks
                .iter()
                .map(|block| (block.size, block.state))
                .collect()
        })
        .collect()
}

use BlockSnapshotState::{
    ActiveAllocated as Alloc, ActivePendingFree as Pending, Inactive as Free,
};

#[test]
fn allocator_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<CachingAllocator<FakeDevice>>();
}

#[test]
fn freed_block_is_reused_without_a_device_malloc() {
    let (allocator, device) = fake_allocator(1 << 30);
    let a = allocator.malloc(3000, S0).unwrap();
    assert_ne!(a, 0);
    allocator.free(a).unwrap();
    let b = allocator.malloc(2900, S0).unwrap();
    assert_eq!(a, b);
    assert_eq!(device.malloc_calls(), 1);

    // A large block is reused the same way.
    let c = allocator.malloc(30 * MIB, S0).unwrap();
    allocator.free(c).unwrap();
    assert_eq!(allocator.malloc(29 * MIB, S0).unwrap(), c);
    assert_eq!(device.malloc_calls(), 2);
}

#[test]
fn zero_bytes_return_null_without_touching_the_device() {
    let (allocator, device) = fake_allocator(1 << 30);
    assert_eq!(allocator.malloc(0, S0).unwrap(), 0);
    assert_eq!(device.malloc_calls(), 0);
    allocator.free(0).unwrap();
    allocator.record_stream(0, S1).unwrap();
    assert_eq!(allocator.memory_allocated(), 0);
    assert_eq!(
        allocator.device_stats().allocation[StatType::Aggregate].allocated,
        0
    );
}

#[test]
fn segment_sizes_of_the_small_and_large_pools() {
    let (allocator, device) = fake_allocator(1 << 30);
    let cases = [
        (1, 2 * MIB, PoolKind::Small),
        (MIB, 2 * MIB, PoolKind::Small),
        (MIB + 1, 20 * MIB, PoolKind::Large),
        (9 * MIB, 20 * MIB, PoolKind::Large),
        (10 * MIB - 1, 10 * MIB, PoolKind::Large),
        (10 * MIB, 10 * MIB, PoolKind::Large),
        (11 * MIB, 12 * MIB, PoolKind::Large),
        (100 * MIB + 1, 102 * MIB, PoolKind::Large),
    ];
    for (request, segment, pool) in cases {
        // A new stream each time, so no cached block can serve the request.
        let stream = StreamId(request as u64);
        let ptr = allocator.malloc(request, stream).unwrap();
        let snapshot = allocator.snapshot();
        let seg = snapshot.iter().find(|s| s.address == ptr).unwrap();
        assert_eq!(
            (seg.total_size, seg.pool),
            (segment, pool),
            "request {request}"
        );
        assert_eq!(seg.stream, stream);
        assert_eq!(device.live_allocations().last().unwrap().1, segment);
    }
    let stats = allocator.device_stats();
    assert_eq!(stats.segment[StatType::SmallPool].current, 2);
    assert_eq!(stats.segment[StatType::LargePool].current, 6);
    assert_eq!(
        stats.reserved_bytes[StatType::SmallPool].current,
        4 * MIB as i64
    );
    // Sizes are rounded to 512 bytes.
    assert_eq!(
        stats.allocated_bytes[StatType::SmallPool].current,
        (512 + MIB) as i64
    );
    assert_eq!(
        stats.requested_bytes[StatType::SmallPool].current,
        (1 + MIB) as i64
    );
}

#[test]
fn three_blocks_of_one_segment_merge_back_in_any_free_order() {
    let orders = [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];
    for (request, segment) in [(512 * KIB, 2 * MIB), (4 * MIB, 20 * MIB)] {
        for order in orders {
            let (allocator, device) = fake_allocator(1 << 30);
            let ptrs: Vec<u64> = (0..3)
                .map(|_| allocator.malloc(request, S0).unwrap())
                .collect();
            assert_eq!(device.malloc_calls(), 1);
            // Consecutive blocks of one segment, the remainder cached above.
            for (i, ptr) in ptrs.iter().enumerate() {
                assert_eq!(*ptr, ptrs[0] + (i * request) as u64);
            }
            assert_eq!(
                layout(&allocator),
                vec![vec![
                    (request, Alloc),
                    (request, Alloc),
                    (request, Alloc),
                    (segment - 3 * request, Free)
                ]]
            );
            let stats = allocator.device_stats();
            assert_eq!(stats.inactive_split[StatType::Aggregate].current, 1);
            assert_eq!(
                stats.inactive_split_bytes[StatType::Aggregate].current,
                (segment - 3 * request) as i64
            );

            for i in order {
                allocator.free(ptrs[i]).unwrap();
            }
            assert_eq!(
                layout(&allocator),
                vec![vec![(segment, Free)]],
                "order {order:?}"
            );
            let stats = allocator.device_stats();
            assert_eq!(stats.inactive_split[StatType::Aggregate].current, 0);
            assert_eq!(stats.inactive_split_bytes[StatType::Aggregate].current, 0);
            assert_eq!(stats.active[StatType::Aggregate].current, 0);
            assert_eq!(stats.active_bytes[StatType::Aggregate].current, 0);
            assert_eq!(allocator.largest_cached_block(), segment);

            // The whole segment can now serve a request of the pool's
            // largest size.
            let largest = if segment == 2 * MIB { MIB } else { segment };
            let whole = allocator.malloc(largest, S0).unwrap();
            assert_eq!(whole, ptrs[0]);
            assert_eq!(device.malloc_calls(), 1);
        }
    }
}

#[test]
fn inactive_split_stats_follow_partial_merges() {
    let (allocator, _device) = fake_allocator(1 << 30);
    let a = allocator.malloc(512 * KIB, S0).unwrap();
    let b = allocator.malloc(512 * KIB, S0).unwrap();
    let _c = allocator.malloc(512 * KIB, S0).unwrap();
    allocator.free(a).unwrap();
    let stats = allocator.device_stats();
    // `a` and the tail remainder are two separate inactive split blocks.
    assert_eq!(stats.inactive_split[StatType::SmallPool].current, 2);
    assert_eq!(
        stats.inactive_split_bytes[StatType::SmallPool].current,
        MIB as i64
    );
    allocator.free(b).unwrap();
    let stats = allocator.device_stats();
    // `b` merged into `a`.
    assert_eq!(stats.inactive_split[StatType::SmallPool].current, 2);
    assert_eq!(
        stats.inactive_split_bytes[StatType::SmallPool].current,
        (3 * MIB / 2) as i64
    );
    assert_eq!(
        layout(&allocator),
        vec![vec![(MIB, Free), (512 * KIB, Alloc), (512 * KIB, Free)]]
    );
    // Reusing part of the merged block shrinks it.
    let d = allocator.malloc(768 * KIB, S0).unwrap();
    assert_eq!(d, a);
    let stats = allocator.device_stats();
    assert_eq!(stats.inactive_split[StatType::SmallPool].current, 2);
    assert_eq!(
        stats.inactive_split_bytes[StatType::SmallPool].current,
        (3 * MIB / 4) as i64
    );
}

#[test]
fn split_thresholds_of_the_two_pools() {
    let (allocator, _device) = fake_allocator(1 << 30);
    // Small pool: a remainder of 512 bytes is kept as a block of its own.
    allocator.malloc(MIB, S0).unwrap();
    allocator.malloc(MIB - 512, S0).unwrap();
    assert_eq!(
        layout(&allocator),
        vec![vec![(MIB, Alloc), (MIB - 512, Alloc), (512, Free)]]
    );
    let last = allocator.malloc(512, S0).unwrap();
    assert_eq!(layout(&allocator)[0].len(), 3);
    allocator.free(last).unwrap();

    // Large pool: a remainder of 1 MiB stays with the block it came from.
    let (allocator, _device) = fake_allocator(1 << 30);
    allocator.malloc(9 * MIB, S0).unwrap();
    assert_eq!(
        layout(&allocator),
        vec![vec![(9 * MIB, Alloc), (11 * MIB, Free)]]
    );
    allocator.malloc(10 * MIB, S0).unwrap();
    assert_eq!(
        layout(&allocator),
        vec![vec![(9 * MIB, Alloc), (11 * MIB, Alloc)]]
    );
    assert_eq!(allocator.memory_allocated(), 20 * MIB);
}

#[test]
fn best_fit_picks_the_smallest_block_that_fits() {
    let (allocator, device) = fake_allocator(1 << 30);
    let a = allocator.malloc(1024, S0).unwrap();
    let _s1 = allocator.malloc(512, S0).unwrap();
    let b = allocator.malloc(2048, S0).unwrap();
    let _s2 = allocator.malloc(512, S0).unwrap();
    allocator.free(b).unwrap();
    allocator.free(a).unwrap();
    assert_eq!(allocator.malloc(1000, S0).unwrap(), a);
    assert_eq!(allocator.malloc(1500, S0).unwrap(), b);
    // `b` was split: its last 512 bytes are cached.
    assert_eq!(allocator.malloc(512, S0).unwrap(), b + 1536);
    assert_eq!(device.malloc_calls(), 1);
}

#[test]
fn blocks_are_reused_only_on_their_stream() {
    let (allocator, device) = fake_allocator(1 << 30);
    let a = allocator.malloc(4096, S0).unwrap();
    allocator.free(a).unwrap();
    let b = allocator.malloc(4096, S1).unwrap();
    assert_ne!(a, b);
    assert_eq!(device.malloc_calls(), 2);
    allocator.free(b).unwrap();
    assert_eq!(allocator.malloc(4096, S0).unwrap(), a);
    assert_eq!(allocator.malloc(4096, S1).unwrap(), b);
    assert_eq!(device.malloc_calls(), 2);
    let streams: Vec<StreamId> = allocator.snapshot().iter().map(|s| s.stream).collect();
    assert_eq!(streams, vec![S0, S1]);
}

#[test]
fn record_stream_delays_reuse_until_the_event_completes() {
    let (allocator, device) = fake_allocator(1 << 30);
    let a = allocator.malloc(20 * MIB, S0).unwrap();
    // A use on the allocation stream needs no event.
    allocator.record_stream(a, S0).unwrap();
    allocator.record_stream(a, S1).unwrap();
    allocator.free(a).unwrap();
    assert_eq!(device.pending_events(), 1);
    assert_eq!(allocator.memory_allocated(), 0);
    // Still active: the other stream may be using it.
    assert_eq!(
        allocator.device_stats().active_bytes[StatType::Aggregate].current,
        20 * MIB as i64
    );
    assert_eq!(layout(&allocator), vec![vec![(20 * MIB, Pending)]]);
    // A pending block cannot be freed again.
    assert!(allocator.free(a).is_err());

    let b = allocator.malloc(20 * MIB, S0).unwrap();
    assert_ne!(a, b);
    assert_eq!(device.malloc_calls(), 2);
    allocator.free(b).unwrap();

    // Events on another stream do not release it.
    device.complete_stream(S2);
    allocator.process_events().unwrap();
    assert_eq!(layout(&allocator)[0], vec![(20 * MIB, Pending)]);

    device.complete_stream(S1);
    // The next malloc processes the events first and finds `a` again (the
    // lower address of the two equal cached blocks).
    assert_eq!(allocator.malloc(20 * MIB, S0).unwrap(), a);
    assert_eq!(device.malloc_calls(), 2);
    assert_eq!(device.live_events(), 0);
    assert_eq!(
        allocator.device_stats().active_bytes[StatType::Aggregate].current,
        20 * MIB as i64
    );
}

#[test]
fn a_block_used_on_several_streams_waits_for_all_of_them() {
    let (allocator, device) = fake_allocator(1 << 30);
    let a = allocator.malloc(512, S0).unwrap();
    let b = allocator.malloc(512, S0).unwrap();
    allocator.record_stream(a, S1).unwrap();
    allocator.record_stream(a, S2).unwrap();
    allocator.record_stream(a, S2).unwrap();
    allocator.free(a).unwrap();
    assert_eq!(device.pending_events(), 2);
    device.complete_stream(S1);
    allocator.process_events().unwrap();
    assert_eq!(layout(&allocator)[0][0], (512, Pending));
    device.complete_stream(S2);
    allocator.process_events().unwrap();
    assert_eq!(layout(&allocator)[0][0], (512, Free));
    assert_eq!(device.live_events(), 0);
    // Freeing `b` now merges the whole segment.
    allocator.free(b).unwrap();
    assert_eq!(layout(&allocator), vec![vec![(2 * MIB, Free)]]);
}

#[test]
fn out_of_memory_releases_the_cache_and_retries() {
    let (allocator, device) = fake_allocator(30 * MIB);
    let a = allocator.malloc(20 * MIB, S0).unwrap();
    allocator.free(a).unwrap();
    assert_eq!(allocator.memory_reserved(), 20 * MIB);
    // 24 MiB does not fit beside the cached 20 MiB segment.
    let b = allocator.malloc(24 * MIB, S0).unwrap();
    assert_ne!(a, b);
    let stats = allocator.device_stats();
    assert_eq!(stats.num_alloc_retries, 1);
    assert_eq!(stats.num_ooms, 0);
    assert_eq!(stats.num_device_free, 1);
    assert_eq!(stats.num_device_alloc, 2);
    assert_eq!(stats.num_sync_all_streams, 1);
    assert_eq!(device.live_allocations(), vec![(b, 24 * MIB)]);
    assert_eq!(allocator.memory_reserved(), 24 * MIB);
    allocator.assert_invariants();
}

#[test]
fn out_of_memory_retry_waits_for_pending_events() {
    let (allocator, device) = fake_allocator(30 * MIB);
    let a = allocator.malloc(20 * MIB, S0).unwrap();
    allocator.record_stream(a, S1).unwrap();
    allocator.free(a).unwrap();
    // The pending block's segment is released after its event is waited
    // for, which makes room for the new one.
    let b = allocator.malloc(24 * MIB, S0).unwrap();
    assert_eq!(device.live_allocations(), vec![(b, 24 * MIB)]);
    assert_eq!(device.live_events(), 0);
}

#[test]
fn final_out_of_memory_error_has_pytorchs_text() {
    let device = FakeDevice::new(3, 30 * MIB);
    let allocator = CachingAllocator::new(device.clone());
    let _a = allocator.malloc(20 * MIB, S0).unwrap();
    let small = allocator.malloc(1000, S0).unwrap();
    let _pin = allocator.malloc(1000, S0).unwrap();
    allocator.free(small).unwrap();
    let error = allocator.malloc(7 * MIB, S0).unwrap_err();
    assert!(is_out_of_memory(&error));
    assert_eq!(error.kind(), c10_core::ErrorKind::Runtime);
    assert_eq!(
        error.message(),
        "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 3 has a total capacity of \
         30.00 MiB of which 8.00 MiB is free. Of the allocated memory 20.00 MiB is allocated \
         by PyTorch, and 2.00 MiB is reserved by PyTorch but unallocated. If reserved but \
         unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \
         to avoid fragmentation.  See documentation for Memory Management  \
         (https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)"
    );
    let stats = allocator.device_stats();
    assert_eq!(stats.num_ooms, 1);
    assert_eq!(stats.num_alloc_retries, 1);
    // The failure left everything in place.
    assert_eq!(device.live_allocations().len(), 2);
    assert_eq!(allocator.memory_allocated(), 20 * MIB + 1024);
    assert_eq!(allocator.memory_stats()["num_ooms"], 1);
    allocator.assert_invariants();
}

#[test]
fn other_device_errors_are_returned_without_a_retry() {
    let (allocator, device) = fake_allocator(1 << 30);
    device.fail_next_malloc(Error::runtime(
        "CUDA error: an illegal memory access was encountered",
    ));
    let error = allocator.malloc(4096, S0).unwrap_err();
    assert_eq!(
        error.message(),
        "CUDA error: an illegal memory access was encountered"
    );
    assert!(!is_out_of_memory(&error));
    let stats = allocator.device_stats();
    assert_eq!((stats.num_alloc_retries, stats.num_ooms), (0, 0));
    // The allocator works on afterwards.
    allocator.malloc(4096, S0).unwrap();
}

#[test]
fn empty_cache_releases_only_unused_segments() {
    let (allocator, device) = fake_allocator(1 << 30);
    let small = allocator.malloc(4096, S0).unwrap();
    let large = allocator.malloc(20 * MIB, S0).unwrap();
    let kept = allocator.malloc(20 * MIB, S1).unwrap();
    let pending = allocator.malloc(40 * MIB, S0).unwrap();
    allocator.free(large).unwrap();
    allocator.record_stream(pending, S2).unwrap();
    allocator.free(pending).unwrap();
    assert_eq!(allocator.memory_reserved(), 82 * MIB);

    allocator.empty_cache().unwrap();
    // The small segment is split around a live block and `kept` is
    // allocated; the free and the pending segments are gone.
    let live: Vec<u64> = device
        .live_allocations()
        .iter()
        .map(|&(ptr, _)| ptr)
        .collect();
    assert_eq!(live, vec![small, kept]);
    assert_eq!(allocator.memory_reserved(), 22 * MIB);
    assert_eq!(device.live_events(), 0);
    let stats = allocator.device_stats();
    assert_eq!(stats.num_device_free, 2);
    assert_eq!(stats.segment[StatType::Aggregate].current, 2);
    assert_eq!(
        stats.active_bytes[StatType::Aggregate].current,
        (20 * MIB + 4096) as i64
    );

    allocator.free(small).unwrap();
    allocator.free(kept).unwrap();
    allocator.empty_cache().unwrap();
    assert!(device.live_allocations().is_empty());
    assert_eq!(allocator.memory_reserved(), 0);
    assert!(allocator.snapshot().is_empty());
}

#[test]
fn statistics_current_peak_and_totals() {
    let (allocator, _device) = fake_allocator(1 << 30);
    let a = allocator.malloc(1000, S0).unwrap();
    let b = allocator.malloc(2 * MIB, S0).unwrap();
    let c = allocator.malloc(3000, S0).unwrap();
    assert_eq!(allocator.memory_allocated(), 1024 + 2 * MIB + 3072);
    assert_eq!(allocator.memory_reserved(), 22 * MIB);
    allocator.free(b).unwrap();
    allocator.free(a).unwrap();

    let stats = allocator.device_stats();
    assert_eq!(
        stats.allocated_bytes[StatType::Aggregate],
        Stat {
            current: 3072,
            peak: (1024 + 2 * MIB + 3072) as i64,
            allocated: (1024 + 2 * MIB + 3072) as i64,
            freed: (1024 + 2 * MIB) as i64,
        }
    );
    assert_eq!(
        stats.allocated_bytes[StatType::LargePool],
        Stat {
            current: 0,
            peak: 2 * MIB as i64,
            allocated: 2 * MIB as i64,
            freed: 2 * MIB as i64,
        }
    );
    assert_eq!(stats.allocation[StatType::Aggregate].current, 1);
    assert_eq!(stats.allocation[StatType::Aggregate].peak, 3);
    assert_eq!(stats.requested_bytes[StatType::Aggregate].current, 3000);
    assert_eq!(stats.segment[StatType::Aggregate].current, 2);
    assert_eq!(
        stats.reserved_bytes[StatType::Aggregate].current,
        22 * MIB as i64
    );
    assert_eq!(stats.num_device_alloc, 2);
    assert_eq!(allocator.max_memory_allocated(), 1024 + 2 * MIB + 3072);
    assert_eq!(allocator.max_memory_reserved(), 22 * MIB);

    let map = allocator.memory_stats();
    assert_eq!(map["allocated_bytes.all.current"], 3072);
    assert_eq!(map["allocated_bytes.large_pool.peak"], 2 * MIB as i64);
    assert_eq!(map["allocation.small_pool.allocated"], 2);
    assert_eq!(map["active.all.current"], 1);

    allocator.reset_peak_memory_stats();
    assert_eq!(allocator.max_memory_allocated(), 3072);
    allocator.free(c).unwrap();
    assert_eq!(allocator.max_memory_allocated(), 3072);
    assert_eq!(allocator.memory_allocated(), 0);

    allocator.reset_accumulated_memory_stats();
    let stats = allocator.device_stats();
    assert_eq!(stats.allocated_bytes[StatType::Aggregate].allocated, 0);
    assert_eq!(stats.allocated_bytes[StatType::Aggregate].freed, 0);
    assert_eq!(stats.num_device_alloc, 0);
    assert_eq!(
        stats.reserved_bytes[StatType::Aggregate].current,
        22 * MIB as i64
    );
}

#[test]
fn double_free_and_unknown_pointers_are_errors() {
    let (allocator, device) = fake_allocator(1 << 30);
    let a = allocator.malloc(1024, S0).unwrap();
    let b = allocator.malloc(1024, S0).unwrap();
    allocator.free(a).unwrap();
    let before = allocator.device_stats();

    let error = allocator.free(a).unwrap_err();
    assert_eq!(error.message(), format!("invalid device pointer: {a:#x}"));
    assert_eq!(error.message(), "invalid device pointer: 0x7f0000000000");
    // Inside a live block, inside the cached remainder, or nowhere.
    for ptr in [b + 512, b + 1024, 0xdead_beef] {
        let error = allocator.free(ptr).unwrap_err();
        assert_eq!(error.message(), format!("invalid device pointer: {ptr:#x}"));
    }
    assert!(allocator.record_stream(a, S1).is_err());
    assert!(allocator.record_stream(0xdead_beef, S1).is_err());
    assert_eq!(allocator.device_stats(), before);
    assert_eq!(device.live_events(), 0);

    allocator.free(b).unwrap();
    assert_eq!(layout(&allocator), vec![vec![(2 * MIB, Free)]]);
}

#[test]
fn hostile_sizes_are_out_of_memory_errors() {
    let (allocator, device) = fake_allocator(1 << 30);
    for size in [usize::MAX, usize::MAX - 511, usize::MAX - 600] {
        let error = allocator.malloc(size, S0).unwrap_err();
        assert!(is_out_of_memory(&error), "{error:?}");
        assert!(error
            .message()
            .starts_with("CUDA out of memory. Tried to allocate 17179869184.00 GiB. GPU 0"));
    }
    // Nothing was asked of the device for sizes that do not round.
    assert_eq!(device.malloc_calls(), 0);

    // A size that rounds but that no device has: a device failure, a
    // retry, and the error.
    let error = allocator.malloc(1 << 62, S0).unwrap_err();
    assert!(error
        .message()
        .starts_with("CUDA out of memory. Tried to allocate 4294967296.00 GiB. GPU 0 has a total capacity of 1024.00 MiB of which 1024.00 MiB is free."));
    assert_eq!(device.malloc_calls(), 2);
    let stats = allocator.device_stats();
    assert_eq!((stats.num_ooms, stats.num_alloc_retries), (4, 1));
    assert_eq!(allocator.memory_reserved(), 0);
    allocator.malloc(512, S0).unwrap();
    allocator.assert_invariants();
}

#[test]
fn concurrent_allocations_from_several_threads() {
    let device = FakeDevice::new(0, 1 << 30);
    let allocator = Arc::new(CachingAllocator::new(device.clone()));
    let threads: Vec<_> = (0..4u64)
        .map(|thread| {
            let allocator = Arc::clone(&allocator);
            std::thread::spawn(move || {
                let mut held = Vec::new();
                for i in 0..1000usize {
                    let size = [1, 700, 4096, 300 * KIB, 3 * MIB][(i + thread as usize) % 5];
                    let stream = StreamId(thread % 2);
                    let ptr = allocator.malloc(size, stream).unwrap();
                    if i % 7 == 0 {
                        allocator.record_stream(ptr, StreamId(9)).unwrap();
                    }
                    held.push(ptr);
                    if held.len() > 3 {
                        allocator.free(held.remove(i % 3)).unwrap();
                    }
                    if i % 100 == 0 {
                        allocator.assert_invariants();
                    }
                }
                for ptr in held {
                    allocator.free(ptr).unwrap();
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    assert_eq!(allocator.memory_allocated(), 0);
    allocator.assert_invariants();
    let stats = allocator.device_stats();
    assert_eq!(stats.allocation[StatType::Aggregate].current, 0);
    assert_eq!(stats.allocation[StatType::Aggregate].allocated, 4000);

    device.complete_all_events();
    allocator.process_events().unwrap();
    let stats = allocator.device_stats();
    assert_eq!(stats.active_bytes[StatType::Aggregate].current, 0);
    assert_eq!(stats.inactive_split[StatType::Aggregate].current, 0);
    allocator.empty_cache().unwrap();
    assert!(device.live_allocations().is_empty());
    assert_eq!(device.live_events(), 0);
}

#[test]
fn dropping_the_allocator_releases_its_cache() {
    let (allocator, device) = fake_allocator(1 << 30);
    let kept = allocator.malloc(4096, S0).unwrap();
    let freed = allocator.malloc(20 * MIB, S0).unwrap();
    allocator.free(freed).unwrap();
    drop(allocator);
    assert_eq!(device.live_allocations(), vec![(kept, 2 * MIB)]);
}
