//! Blocks and pools: [`Block`], a contiguous piece of one segment (PyTorch's
//! `Block`), linked to its neighbours by address, and [`BlockPool`], the
//! free blocks of one size class ordered by (stream, size, address) for
//! best-fit search (PyTorch's `BlockPool` with `BlockComparatorSize`).
//!
//! Blocks live in one map keyed by their address, and refer to their
//! neighbours by address rather than by pointer, so the bookkeeping needs no
//! `unsafe`. A block's address is stable while it is allocated or awaiting
//! events; only free blocks merge, and a merge keeps the lower address.

use std::collections::{BTreeSet, HashMap};

use super::device::StreamId;
use super::size::PoolKind;

/// What a block is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BlockState {
    /// Handed out by `malloc` and not yet freed.
    Allocated,
    /// Freed by its owner, but used on other streams: it waits for
    /// `count` recorded events before it returns to its pool.
    AwaitingEvents {
        /// Events not yet seen complete.
        count: usize,
    },
    /// In its pool, ready for reuse.
    Cached,
}

/// A contiguous range of one segment.
#[derive(Debug)]
pub(crate) struct Block {
    /// The device address of the first byte.
    pub ptr: u64,
    /// The size in bytes (a multiple of the minimum block size).
    pub size: usize,
    /// The size the caller asked for, while allocated or awaiting events.
    pub requested_size: usize,
    /// The stream the segment was allocated for; the block is reused only
    /// by allocations on this stream.
    pub stream: StreamId,
    /// The pool the block's segment belongs to.
    pub pool: PoolKind,
    /// What the block is doing.
    pub state: BlockState,
    /// The block just below in the same segment.
    pub prev: Option<u64>,
    /// The block just above in the same segment.
    pub next: Option<u64>,
    /// The other streams the block was used on (`record_stream`), while
    /// allocated.
    pub stream_uses: BTreeSet<StreamId>,
}

impl Block {
    /// A block covering a whole new segment.
    pub fn segment(ptr: u64, size: usize, stream: StreamId, pool: PoolKind) -> Block {
        Block {
            ptr,
            size,
            requested_size: 0,
            stream,
            pool,
            state: BlockState::Cached,
            prev: None,
            next: None,
            stream_uses: BTreeSet::new(),
        }
    }

    /// Whether the block is only part of its segment.
    pub fn is_split(&self) -> bool {
        self.prev.is_some() || self.next.is_some()
    }

    /// The key the block has in its pool while cached.
    pub fn key(&self) -> PoolKey {
        PoolKey {
            stream: self.stream,
            size: self.size,
            ptr: self.ptr,
        }
    }
}

/// The order of free blocks in a pool: by stream, then size, then address,
/// so that the first key at or after `(stream, size, 0)` is the best fit on
/// that stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct PoolKey {
    pub stream: StreamId,
    pub size: usize,
    pub ptr: u64,
}

/// The free blocks of one size class.
#[derive(Debug, Default)]
pub(crate) struct BlockPool {
    free: BTreeSet<PoolKey>,
}

impl BlockPool {
    /// Adds a cached block, by its [`Block::key`].
    pub fn insert(&mut self, key: PoolKey) {
        let inserted = self.free.insert(key);
        debug_assert!(inserted, "block {:#x} is already cached", key.ptr);
    }

    /// Removes a cached block, by the key it was inserted with.
    pub fn remove(&mut self, key: PoolKey) {
        let removed = self.free.remove(&key);
        debug_assert!(removed, "block {:#x} was not cached", key.ptr);
    }

    /// The address of the smallest free block of at least `size` bytes on
    /// `stream`, lowest address first among equals.
    pub fn best_fit(&self, stream: StreamId, size: usize) -> Option<u64> {
        let search = PoolKey {
            stream,
            size,
            ptr: 0,
        };
        self.free
            .range(search..)
            .next()
            .filter(|key| key.stream == stream)
            .map(|key| key.ptr)
    }

    /// The addresses of the free blocks, in pool order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.free.iter().map(|key| key.ptr)
    }

    /// The largest free block, if any.
    pub fn largest(&self) -> usize {
        self.free.iter().map(|key| key.size).max().unwrap_or(0)
    }
}

/// Every block of every segment of one device, by address.
pub(crate) type BlockMap = HashMap<u64, Block>;
