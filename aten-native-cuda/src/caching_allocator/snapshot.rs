//! A picture of the allocator's segments and blocks, after
//! `torch.cuda.memory_snapshot()`: [`SegmentSnapshot`] per device segment,
//! [`BlockSnapshot`] per block in address order, with the block states
//! PyTorch names `active_allocated`, `active_pending_free` and `inactive`.

use super::device::StreamId;
use super::size::PoolKind;

/// What a block is doing, as the snapshot reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockSnapshotState {
    /// Allocated to a caller (`"active_allocated"`).
    ActiveAllocated,
    /// Freed by its caller, but waiting for the events of the other streams
    /// that used it (`"active_pending_free"`).
    ActivePendingFree,
    /// Cached, free for reuse (`"inactive"`).
    Inactive,
}

/// One block of a segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockSnapshot {
    /// The device address of the block.
    pub address: u64,
    /// Its size in bytes.
    pub size: usize,
    /// The size its caller asked for (zero when inactive).
    pub requested_size: usize,
    /// What it is doing.
    pub state: BlockSnapshotState,
}

/// One segment obtained from the device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentSnapshot {
    /// The device address of the segment.
    pub address: u64,
    /// Its size in bytes.
    pub total_size: usize,
    /// The stream it serves.
    pub stream: StreamId,
    /// The pool it belongs to (PyTorch's `segment_type`).
    pub pool: PoolKind,
    /// Bytes of its allocated blocks.
    pub allocated_size: usize,
    /// Bytes of its active blocks (allocated or pending free).
    pub active_size: usize,
    /// Bytes requested by the callers of its active blocks.
    pub requested_size: usize,
    /// Its blocks, by address.
    pub blocks: Vec<BlockSnapshot>,
}
