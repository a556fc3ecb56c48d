//! The allocator's bookkeeping for one device (PyTorch's
//! `DeviceCachingAllocator`): the blocks, the two pools, the events that
//! hold back blocks used on other streams, and the statistics, with the
//! algorithms over them (best-fit search, splitting, merging, event
//! processing, releasing the cache, the out-of-memory report).
//!
//! Everything here runs under the allocator's mutex; the device is passed
//! in by reference to each operation that needs it.

use std::collections::{BTreeMap, VecDeque};
use std::mem;

use c10_core::{Error, Result};

use super::block::{Block, BlockMap, BlockPool, BlockState};
use super::device::{DeviceMallocError, DeviceMemory, StreamId};
use super::size::{allocation_size, format_size, round_size, should_split, PoolKind};
use super::snapshot::{BlockSnapshot, BlockSnapshotState, SegmentSnapshot};
use super::stats::{DeviceStats, StatType};

/// The bookkeeping of one device's allocator.
pub(crate) struct AllocatorState<E> {
    blocks: BlockMap,
    small_blocks: BlockPool,
    large_blocks: BlockPool,
    /// Per using stream, the events recorded when blocks used on that
    /// stream were freed, oldest first, with the address of the block each
    /// one holds back. Events on one stream complete in order, so each
    /// queue is only examined up to its first incomplete event.
    events: BTreeMap<StreamId, VecDeque<(E, u64)>>,
    pub stats: DeviceStats,
}

fn missing_block(ptr: u64) -> Error {
    Error::internal(format!(
        "CUDA caching allocator: no block at address {ptr:#x} (bookkeeping is inconsistent)"
    ))
}

impl<E> AllocatorState<E> {
    pub fn new() -> Self {
        AllocatorState {
            blocks: BlockMap::new(),
            small_blocks: BlockPool::default(),
            large_blocks: BlockPool::default(),
            events: BTreeMap::new(),
            stats: DeviceStats::default(),
        }
    }

    fn pool(&self, kind: PoolKind) -> &BlockPool {
        match kind {
            PoolKind::Small => &self.small_blocks,
            PoolKind::Large => &self.large_blocks,
        }
    }

    fn pool_mut(&mut self, kind: PoolKind) -> &mut BlockPool {
        match kind {
            PoolKind::Small => &mut self.small_blocks,
            PoolKind::Large => &mut self.large_blocks,
        }
    }

    fn block(&self, ptr: u64) -> Result<&Block> {
        self.blocks.get(&ptr).ok_or_else(|| missing_block(ptr))
    }

    fn block_mut(&mut self, ptr: u64) -> Result<&mut Block> {
        self.blocks.get_mut(&ptr).ok_or_else(|| missing_block(ptr))
    }

    /// Allocates `orig_size` (non-zero) bytes usable on `stream`.
    pub fn malloc<D>(&mut self, device: &D, orig_size: usize, stream: StreamId) -> Result<u64>
    where
        D: DeviceMemory<Event = E>,
    {
        // Blocks whose other-stream uses have finished become reusable
        // before the search, so a request can be served by them.
        self.process_events(device)?;

        let sizes = round_size(orig_size).and_then(|size| Some((size, allocation_size(size)?)));
        let Some((size, alloc_size)) = sizes else {
            // No device holds a request whose rounded size overflows a
            // usize; report it as PyTorch reports any request the device
            // cannot satisfy, without asking the device.
            return Err(self.out_of_memory(device, orig_size));
        };
        let pool = PoolKind::for_size(size);

        let ptr = match self.get_free_block(pool, stream, size) {
            Some(ptr) => ptr,
            None => match self.alloc_block(device, pool, stream, alloc_size, false)? {
                Some(ptr) => ptr,
                None => {
                    // Give every cached segment back and try once more.
                    self.release_cached_blocks(device)?;
                    match self.alloc_block(device, pool, stream, alloc_size, true)? {
                        Some(ptr) => ptr,
                        None => return Err(self.out_of_memory(device, alloc_size)),
                    }
                }
            },
        };
        self.alloc_found_block(ptr, size, orig_size)
    }

    /// Takes the best-fitting cached block out of its pool.
    fn get_free_block(&mut self, pool: PoolKind, stream: StreamId, size: usize) -> Option<u64> {
        let ptr = self.pool(pool).best_fit(stream, size)?;
        let key = self.blocks.get(&ptr)?.key();
        self.pool_mut(pool).remove(key);
        Some(ptr)
    }

    /// Asks the device for a new segment of `alloc_size` bytes. `Ok(None)`
    /// means the device is out of memory.
    fn alloc_block<D>(
        &mut self,
        device: &D,
        pool: PoolKind,
        stream: StreamId,
        alloc_size: usize,
        is_retry: bool,
    ) -> Result<Option<u64>>
    where
        D: DeviceMemory<Event = E>,
    {
        if is_retry {
            self.stats.num_alloc_retries += 1;
        }
        let ptr = match device.malloc(alloc_size) {
            Ok(ptr) => ptr,
            Err(DeviceMallocError::OutOfMemory) => return Ok(None),
            Err(DeviceMallocError::Other(error)) => return Err(error),
        };
        let fits = ptr != 0 && ptr.checked_add(alloc_size as u64).is_some();
        if !fits || self.blocks.contains_key(&ptr) {
            // A device that breaks its contract must not corrupt the
            // bookkeeping; hand the memory back and report it.
            let _ = device.free(ptr);
            return Err(Error::internal(format!(
                "CUDA caching allocator: the device returned an unusable segment address {ptr:#x}"
            )));
        }
        self.blocks
            .insert(ptr, Block::segment(ptr, alloc_size, stream, pool));
        self.stats.segment.increase(pool, 1);
        self.stats.reserved_bytes.increase(pool, alloc_size);
        self.stats.num_device_alloc += 1;
        Ok(Some(ptr))
    }

    /// Hands out the block at `ptr` (out of its pool), splitting off the
    /// remainder when it is worth keeping.
    fn alloc_found_block(&mut self, ptr: u64, size: usize, orig_size: usize) -> Result<u64> {
        let block = self.block(ptr)?;
        let pool = block.pool;
        let already_split = block.is_split();
        let block_size = block.size;
        if should_split(pool, block_size, size) {
            // The caller gets the low part; the remainder stays cached just
            // above it. Segments were checked to end inside the address
            // space, so the sum cannot overflow; it is checked all the same.
            let remaining_ptr = ptr.checked_add(size as u64).ok_or_else(|| {
                Error::internal(format!(
                    "CUDA caching allocator: block at {ptr:#x} extends past the address space"
                ))
            })?;
            let old_next = block.next;
            let remaining = Block {
                ptr: remaining_ptr,
                size: block_size - size,
                requested_size: 0,
                stream: block.stream,
                pool,
                state: BlockState::Cached,
                prev: Some(ptr),
                next: old_next,
                stream_uses: Default::default(),
            };
            if let Some(next) = old_next {
                self.block_mut(next)?.prev = Some(remaining_ptr);
            }
            let block = self.block_mut(ptr)?;
            block.next = Some(remaining_ptr);
            block.size = size;
            self.pool_mut(pool).insert(remaining.key());
            let remaining_size = remaining.size;
            self.blocks.insert(remaining_ptr, remaining);
            if already_split {
                // An inactive split block shrinks by `size` bytes.
                self.stats.inactive_split_bytes.decrease(pool, size);
            } else {
                // A new inactive split block appears.
                self.stats
                    .inactive_split_bytes
                    .increase(pool, remaining_size);
                self.stats.inactive_split.increase(pool, 1);
            }
        } else if already_split {
            // An inactive split block becomes active whole.
            self.stats.inactive_split_bytes.decrease(pool, block_size);
            self.stats.inactive_split.decrease(pool, 1);
        }

        let block = self.block_mut(ptr)?;
        block.state = BlockState::Allocated;
        block.requested_size = orig_size;
        let size = block.size;
        let stats = &mut self.stats;
        stats.allocation.increase(pool, 1);
        stats.allocated_bytes.increase(pool, size);
        stats.active.increase(pool, 1);
        stats.active_bytes.increase(pool, size);
        stats.requested_bytes.increase(pool, orig_size);
        Ok(ptr)
    }

    /// Frees the block allocated at `ptr`.
    pub fn free<D>(&mut self, device: &D, ptr: u64) -> Result<()>
    where
        D: DeviceMemory<Event = E>,
    {
        let block = match self.blocks.get_mut(&ptr) {
            Some(block) if block.state == BlockState::Allocated => block,
            _ => {
                return Err(Error::runtime(format!("invalid device pointer: {ptr:#x}")));
            }
        };
        // Until its events are recorded the block is neither allocated nor
        // cached: should recording fail, it stays out of reach for good
        // rather than be reused while another stream may still use it.
        block.state = BlockState::AwaitingEvents { count: 0 };
        let (pool, size) = (block.pool, block.size);
        let stream_uses = mem::take(&mut block.stream_uses);
        self.stats.allocation.decrease(pool, 1);
        self.stats.allocated_bytes.decrease(pool, size);
        if stream_uses.is_empty() {
            self.free_block(ptr)
        } else {
            self.insert_events(device, ptr, stream_uses)
        }
    }

    /// Records an event on each stream that used the block at `ptr`; the
    /// block returns to its pool once all of them completed.
    fn insert_events<D>(
        &mut self,
        device: &D,
        ptr: u64,
        streams: std::collections::BTreeSet<StreamId>,
    ) -> Result<()>
    where
        D: DeviceMemory<Event = E>,
    {
        let mut recorded = Vec::with_capacity(streams.len());
        for stream in streams {
            let event =
                device
                    .create_event()
                    .and_then(|event| match device.record_event(&event, stream) {
                        Ok(()) => Ok(event),
                        Err(error) => {
                            let _ = device.destroy_event(event);
                            Err(error)
                        }
                    });
            match event {
                Ok(event) => recorded.push((stream, event)),
                Err(error) => {
                    for (_, event) in recorded {
                        let _ = device.destroy_event(event);
                    }
                    return Err(error);
                }
            }
        }
        self.block_mut(ptr)?.state = BlockState::AwaitingEvents {
            count: recorded.len(),
        };
        for (stream, event) in recorded {
            self.events
                .entry(stream)
                .or_default()
                .push_back((event, ptr));
        }
        Ok(())
    }

    /// Notes that one event holding back the block at `ptr` completed.
    fn event_completed(&mut self, ptr: u64) -> Result<()> {
        let block = self.block_mut(ptr)?;
        match block.state {
            BlockState::AwaitingEvents { count } if count > 1 => {
                block.state = BlockState::AwaitingEvents { count: count - 1 };
                Ok(())
            }
            BlockState::AwaitingEvents { count: 1 } => self.free_block(ptr),
            _ => Err(missing_block(ptr)),
        }
    }

    /// Returns the freed block at `ptr` to its pool, merged with the free
    /// neighbours of its segment.
    fn free_block(&mut self, ptr: u64) -> Result<()> {
        let block = self.block(ptr)?;
        let (pool, original_size, requested_size) = (block.pool, block.size, block.requested_size);
        let mut merged_blocks = 0;
        let mut subsumed_bytes = 0;

        // Absorb a free block just above.
        if let Some(next_ptr) = block.next {
            if self.block(next_ptr)?.state == BlockState::Cached {
                let next = self
                    .blocks
                    .remove(&next_ptr)
                    .ok_or_else(|| missing_block(next_ptr))?;
                self.pool_mut(pool).remove(next.key());
                if let Some(after) = next.next {
                    self.block_mut(after)?.prev = Some(ptr);
                }
                let block = self.block_mut(ptr)?;
                block.size += next.size;
                block.next = next.next;
                merged_blocks += 1;
                subsumed_bytes += next.size;
            }
        }

        // Be absorbed by a free block just below: the merged block keeps
        // the lower address.
        let mut ptr = ptr;
        if let Some(prev_ptr) = self.block(ptr)?.prev {
            let prev = self.block(prev_ptr)?;
            if prev.state == BlockState::Cached {
                let (prev_size, key) = (prev.size, prev.key());
                self.pool_mut(pool).remove(key);
                let block = self.blocks.remove(&ptr).ok_or_else(|| missing_block(ptr))?;
                if let Some(after) = block.next {
                    self.block_mut(after)?.prev = Some(prev_ptr);
                }
                let prev = self.block_mut(prev_ptr)?;
                prev.size += block.size;
                prev.next = block.next;
                merged_blocks += 1;
                subsumed_bytes += prev_size;
                ptr = prev_ptr;
            }
        }

        let block = self.block_mut(ptr)?;
        block.state = BlockState::Cached;
        block.requested_size = 0;
        block.stream_uses.clear();
        let (is_split, size, key) = (block.is_split(), block.size, block.key());
        self.pool_mut(pool).insert(key);

        // The merged neighbours stop being inactive split blocks; the
        // result is one if its segment is still split.
        let stats = &mut self.stats;
        let (added_blocks, added_bytes) = if is_split { (1, size) } else { (0, 0) };
        stats
            .inactive_split
            .adjust(pool, added_blocks, merged_blocks);
        stats
            .inactive_split_bytes
            .adjust(pool, added_bytes, subsumed_bytes);
        stats.active.decrease(pool, 1);
        stats.active_bytes.decrease(pool, original_size);
        stats.requested_bytes.decrease(pool, requested_size);
        Ok(())
    }

    /// Adds `stream` to the streams the allocated block at `ptr` is used
    /// on.
    pub fn record_stream(&mut self, ptr: u64, stream: StreamId) -> Result<()> {
        match self.blocks.get_mut(&ptr) {
            Some(block) if block.state == BlockState::Allocated => {
                // Uses on the allocation stream are ordered with later
                // allocations anyway.
                if stream != block.stream {
                    block.stream_uses.insert(stream);
                }
                Ok(())
            }
            _ => Err(Error::internal("No allocated block can be found")),
        }
    }

    /// Returns to their pools the blocks whose recorded events have all
    /// completed, without waiting for any.
    pub fn process_events<D>(&mut self, device: &D) -> Result<()>
    where
        D: DeviceMemory<Event = E>,
    {
        self.drain_events(device, |device, event| device.query_event(event))
    }

    /// Waits for every outstanding event and returns the blocks they held
    /// back to their pools.
    fn synchronize_and_free_events<D>(&mut self, device: &D) -> Result<()>
    where
        D: DeviceMemory<Event = E>,
    {
        self.stats.num_sync_all_streams += 1;
        self.drain_events(device, |device, event| {
            device.synchronize_event(event).map(|()| true)
        })
    }

    /// Walks each stream's event queue from its oldest event while `done`
    /// says the event completed, retiring each such event.
    fn drain_events<D>(&mut self, device: &D, done: impl Fn(&D, &E) -> Result<bool>) -> Result<()>
    where
        D: DeviceMemory<Event = E>,
    {
        let streams: Vec<StreamId> = self.events.keys().copied().collect();
        for stream in streams {
            while let Some(queue) = self.events.get_mut(&stream) {
                let Some((event, _)) = queue.front() else {
                    self.events.remove(&stream);
                    break;
                };
                if !done(device, event)? {
                    break;
                }
                let Some((event, ptr)) = queue.pop_front() else {
                    break;
                };
                if queue.is_empty() {
                    self.events.remove(&stream);
                }
                self.event_completed(ptr)?;
                device.destroy_event(event)?;
            }
        }
        Ok(())
    }

    /// PyTorch's `release_cached_blocks`: waits for all outstanding events,
    /// then gives every cached whole segment back to the device.
    pub fn release_cached_blocks<D>(&mut self, device: &D) -> Result<()>
    where
        D: DeviceMemory<Event = E>,
    {
        self.synchronize_and_free_events(device)?;
        self.release_blocks(device, PoolKind::Large)?;
        self.release_blocks(device, PoolKind::Small)
    }

    /// Gives back the cached blocks of `pool` that span a whole segment; a
    /// block of a split segment cannot be freed on its own.
    fn release_blocks<D>(&mut self, device: &D, pool: PoolKind) -> Result<()>
    where
        D: DeviceMemory<Event = E>,
    {
        let whole: Vec<u64> = self
            .pool(pool)
            .iter()
            .filter(|ptr| self.blocks.get(ptr).is_some_and(|block| !block.is_split()))
            .collect();
        for ptr in whole {
            // The device frees first: should it fail, the segment stays
            // cached and the bookkeeping stays true.
            device.free(ptr)?;
            let block = self.blocks.remove(&ptr).ok_or_else(|| missing_block(ptr))?;
            self.pool_mut(pool).remove(block.key());
            self.stats.segment.decrease(pool, 1);
            self.stats.reserved_bytes.decrease(pool, block.size);
            self.stats.num_device_free += 1;
        }
        Ok(())
    }

    /// Counts an out-of-memory failure and builds PyTorch's message for a
    /// request of `alloc_size` bytes.
    fn out_of_memory<D>(&mut self, device: &D, alloc_size: usize) -> Error
    where
        D: DeviceMemory<Event = E>,
    {
        self.stats.num_ooms += 1;
        let (device_free, device_total) = match device.mem_get_info() {
            Ok(info) => info,
            Err(error) => return error,
        };
        let allocated = self.stats.allocated_bytes[StatType::Aggregate].current;
        let reserved = self.stats.reserved_bytes[StatType::Aggregate].current;
        let bytes = |n: i64| format_size(u64::try_from(n).unwrap_or(0));
        // PyTorch adds the process's own usage from NVML when it can reach
        // it, and the allowed maximum and private-pool usage when those are
        // configured; none of them exists here, and PyTorch leaves each out
        // when it is absent.
        Error::runtime(format!(
            "CUDA out of memory. Tried to allocate {}. GPU {} has a total capacity of {} of which {} is free. \
             Of the allocated memory {} is allocated by PyTorch, and {} is reserved by PyTorch but unallocated. \
             If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \
             to avoid fragmentation.  See documentation for Memory Management  \
             (https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)",
            format_size(alloc_size as u64),
            device.device_index(),
            format_size(device_total as u64),
            format_size(device_free as u64),
            bytes(allocated),
            bytes(reserved.saturating_sub(allocated)),
        ))
    }

    /// Checks the bookkeeping against itself: neighbour links are mutual
    /// and tile each segment without gaps, the pools hold exactly the
    /// cached blocks, and the byte statistics match the blocks.
    #[cfg(test)]
    pub fn check_invariants(&self) -> std::result::Result<(), String> {
        let (mut allocated, mut active, mut reserved, mut segments) = (0, 0, 0, 0);
        for block in self.blocks.values() {
            let at = block.ptr;
            if let Some(next) = block.next {
                let next = self
                    .blocks
                    .get(&next)
                    .ok_or(format!("{at:#x}: next missing"))?;
                if next.prev != Some(at) || at + block.size as u64 != next.ptr {
                    return Err(format!("{at:#x}: broken link to {:#x}", next.ptr));
                }
                if (next.stream, next.pool) != (block.stream, block.pool) {
                    return Err(format!("{at:#x}: neighbour on another stream or pool"));
                }
            }
            if block.prev.is_none() {
                segments += 1;
            }
            reserved += block.size;
            let cached = self.pool(block.pool).iter().any(|ptr| ptr == at);
            match block.state {
                BlockState::Cached if !cached => {
                    return Err(format!("{at:#x}: cached, not pooled"))
                }
                BlockState::Allocated | BlockState::AwaitingEvents { .. } if cached => {
                    return Err(format!("{at:#x}: in use, yet pooled"));
                }
                BlockState::Allocated => {
                    allocated += block.size;
                    active += block.size;
                }
                BlockState::AwaitingEvents { .. } => active += block.size,
                BlockState::Cached => {}
            }
        }
        let pooled = self.small_blocks.iter().count() + self.large_blocks.iter().count();
        let cached = self
            .blocks
            .values()
            .filter(|b| b.state == BlockState::Cached)
            .count();
        let stat = |array: &super::stats::StatArray| array[StatType::Aggregate].current;
        let expected = [allocated, active, reserved, segments].map(|n| n as i64);
        let actual = [
            stat(&self.stats.allocated_bytes),
            stat(&self.stats.active_bytes),
            stat(&self.stats.reserved_bytes),
            stat(&self.stats.segment),
        ];
        if pooled != cached || expected != actual {
            return Err(format!(
                "pooled {pooled} vs cached {cached}; allocated, active, reserved, segments: \
                 blocks say {expected:?}, stats say {actual:?}"
            ));
        }
        Ok(())
    }

    /// The size of the largest cached block (PyTorch's `cacheInfo`).
    pub fn largest_cached_block(&self) -> usize {
        self.small_blocks.largest().max(self.large_blocks.largest())
    }

    /// Every segment with its blocks, by address.
    pub fn snapshot(&self) -> Vec<SegmentSnapshot> {
        let mut heads: Vec<&Block> = self.blocks.values().filter(|b| b.prev.is_none()).collect();
        heads.sort_by_key(|block| block.ptr);
        heads
            .into_iter()
            .map(|head| {
                let mut segment = SegmentSnapshot {
                    address: head.ptr,
                    total_size: 0,
                    stream: head.stream,
                    pool: head.pool,
                    allocated_size: 0,
                    active_size: 0,
                    requested_size: 0,
                    blocks: Vec::new(),
                };
                let mut current = Some(head);
                while let Some(block) = current {
                    let state = match block.state {
                        BlockState::Allocated => BlockSnapshotState::ActiveAllocated,
                        BlockState::AwaitingEvents { .. } => BlockSnapshotState::ActivePendingFree,
                        BlockState::Cached => BlockSnapshotState::Inactive,
                    };
                    segment.total_size += block.size;
                    if state == BlockSnapshotState::ActiveAllocated {
                        segment.allocated_size += block.size;
                    }
                    if state != BlockSnapshotState::Inactive {
                        segment.active_size += block.size;
                        segment.requested_size += block.requested_size;
                    }
                    segment.blocks.push(BlockSnapshot {
                        address: block.ptr,
                        size: block.size,
                        requested_size: block.requested_size,
                        state,
                    });
                    current = block.next.and_then(|next| self.blocks.get(&next));
                }
                segment
            })
            .collect()
    }
}
