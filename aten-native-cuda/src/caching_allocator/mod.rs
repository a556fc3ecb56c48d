//! PyTorch's CUDA caching allocator (`c10/cuda/CUDACachingAllocator.cpp`)
//! as device-independent logic over the [`DeviceMemory`] trait.
//!
//! [`CachingAllocator`] serves one device. It asks the device for large
//! segments and carves blocks out of them:
//!
//! - sizes round up to multiples of 512 bytes; requests of at most 1 MiB
//!   come from the small pool, whose segments are 2 MiB; larger ones from
//!   the large pool, whose segments are 20 MiB for requests under 10 MiB
//!   and the request rounded up to 2 MiB otherwise;
//! - a freed block is cached for reuse by later requests on the same
//!   stream (best fit by size, then address), split when it is larger than
//!   needed and merged with its free neighbours when freed;
//! - a block used on other streams ([`CachingAllocator::record_stream`])
//!   returns to its pool only after events recorded on those streams at
//!   free time have completed;
//! - when the device runs out of memory, every cached whole segment is
//!   given back and the device is asked once more before the request fails
//!   with PyTorch's "CUDA out of memory" message;
//! - statistics follow `torch.cuda.memory_stats()`.
//!
//! Files: `device.rs` (the device trait), `size.rs` (rounding and size
//! classes), `block.rs` (blocks and pools), `state.rs` (the algorithms),
//! `stats.rs`, `snapshot.rs`, and `fake.rs` (a device for tests).
//!
//! ```
//! use aten_native_cuda::caching_allocator::fake::FakeDevice;
//! use aten_native_cuda::caching_allocator::{CachingAllocator, StreamId};
//!
//! let device = FakeDevice::new(0, 1 << 30);
//! let allocator = CachingAllocator::new(device.clone());
//! let a = allocator.malloc(1000, StreamId::DEFAULT)?;
//! allocator.free(a)?;
//! // The second request reuses the cached block: one device malloc in all.
//! let b = allocator.malloc(1000, StreamId::DEFAULT)?;
//! assert_eq!((a, device.malloc_calls()), (b, 1));
//! assert_eq!(allocator.memory_allocated(), 1024);
//! assert_eq!(allocator.memory_reserved(), 2 << 20);
//! # Ok::<(), c10_core::Error>(())
//! ```

mod block;
pub mod device;
pub mod fake;
pub mod size;
pub mod snapshot;
mod state;
pub mod stats;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use c10_core::{Error, Result};

pub use device::{DeviceMallocError, DeviceMemory, StreamId};
pub use size::{format_size, PoolKind};
pub use snapshot::{BlockSnapshot, BlockSnapshotState, SegmentSnapshot};
pub use stats::{DeviceStats, Stat, StatArray, StatType};

use state::AllocatorState;

/// The caching allocator of one device (PyTorch's
/// `DeviceCachingAllocator`). It is `Send + Sync`: every operation takes
/// one internal mutex, and the device is only called under it.
pub struct CachingAllocator<D: DeviceMemory> {
    device: D,
    state: Mutex<AllocatorState<D::Event>>,
}

impl<D: DeviceMemory> CachingAllocator<D> {
    /// An allocator with an empty cache over `device`.
    pub fn new(device: D) -> Self {
        CachingAllocator {
            device,
            state: Mutex::new(AllocatorState::new()),
        }
    }

    /// The device.
    pub fn device(&self) -> &D {
        &self.device
    }

    /// The state, for operations that change it: a panic inside an earlier
    /// operation may have left it half-updated, so it is not used again.
    fn lock(&self) -> Result<MutexGuard<'_, AllocatorState<D::Event>>> {
        self.state.lock().map_err(|_| {
            Error::internal(
                "CUDA caching allocator: the allocator's state was poisoned by a panic in an earlier operation",
            )
        })
    }

    /// The state, for reading statistics, which stay meaningful even after
    /// a panic elsewhere.
    fn read(&self) -> MutexGuard<'_, AllocatorState<D::Event>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Allocates `size` bytes for use on `stream` and returns the device
    /// address. A zero-byte request returns the null address 0 without
    /// touching the device, as PyTorch does.
    ///
    /// Fails with PyTorch's "CUDA out of memory. Tried to allocate ..."
    /// message when the device cannot provide the memory even after the
    /// cache was released (or when the rounded size does not fit a
    /// `usize`), and with the device's error when the device fails
    /// otherwise.
    pub fn malloc(&self, size: usize, stream: StreamId) -> Result<u64> {
        if size == 0 {
            return Ok(0);
        }
        self.lock()?.malloc(&self.device, size, stream)
    }

    /// Frees the block at `ptr` (an address [`malloc`] returned). Freeing
    /// the null address does nothing; an address that is not currently
    /// allocated (never returned, or already freed) is an error: "invalid
    /// device pointer: 0x...".
    ///
    /// A block used on other streams ([`record_stream`]) is held back
    /// until the work queued on those streams so far has finished.
    ///
    /// [`malloc`]: CachingAllocator::malloc
    /// [`record_stream`]: CachingAllocator::record_stream
    pub fn free(&self, ptr: u64) -> Result<()> {
        if ptr == 0 {
            return Ok(());
        }
        self.lock()?.free(&self.device, ptr)
    }

    /// Marks the allocated block at `ptr` as used on `stream`
    /// (`Tensor.record_stream`): when it is freed, it is not reused until
    /// the work queued on `stream` by then has finished. Uses on the
    /// block's own stream need nothing. The null address is ignored.
    pub fn record_stream(&self, ptr: u64, stream: StreamId) -> Result<()> {
        if ptr == 0 {
            return Ok(());
        }
        self.lock()?.record_stream(ptr, stream)
    }

    /// Waits for the events holding back freed blocks, then gives every
    /// cached segment none of whose blocks is in use back to the device
    /// (`torch.cuda.empty_cache()`).
    pub fn empty_cache(&self) -> Result<()> {
        self.lock()?.release_cached_blocks(&self.device)
    }

    /// Returns to their pools the freed blocks whose other-stream uses have
    /// finished; [`malloc`](CachingAllocator::malloc) does this first
    /// anyway.
    pub fn process_events(&self) -> Result<()> {
        self.lock()?.process_events(&self.device)
    }

    /// A copy of every statistic (PyTorch's `getDeviceStats`).
    pub fn device_stats(&self) -> DeviceStats {
        self.read().stats.clone()
    }

    /// The statistics flattened as `torch.cuda.memory_stats()` returns
    /// them.
    pub fn memory_stats(&self) -> BTreeMap<String, i64> {
        self.read().stats.to_memory_stats()
    }

    fn aggregate(&self, stat: impl Fn(&DeviceStats) -> &StatArray, peak: bool) -> usize {
        let state = self.read();
        let stat = stat(&state.stats)[StatType::Aggregate];
        usize::try_from(if peak { stat.peak } else { stat.current }).unwrap_or(0)
    }

    /// Bytes of the blocks currently allocated
    /// (`torch.cuda.memory_allocated()`).
    pub fn memory_allocated(&self) -> usize {
        self.aggregate(|stats| &stats.allocated_bytes, false)
    }

    /// The most bytes allocated at once since the last peak reset
    /// (`torch.cuda.max_memory_allocated()`).
    pub fn max_memory_allocated(&self) -> usize {
        self.aggregate(|stats| &stats.allocated_bytes, true)
    }

    /// Bytes of the segments held from the device
    /// (`torch.cuda.memory_reserved()`).
    pub fn memory_reserved(&self) -> usize {
        self.aggregate(|stats| &stats.reserved_bytes, false)
    }

    /// The most bytes held from the device at once since the last peak
    /// reset (`torch.cuda.max_memory_reserved()`).
    pub fn max_memory_reserved(&self) -> usize {
        self.aggregate(|stats| &stats.reserved_bytes, true)
    }

    /// Sets every peak statistic to its current value
    /// (`torch.cuda.reset_peak_memory_stats()`).
    pub fn reset_peak_memory_stats(&self) {
        self.read().stats.reset_peak();
    }

    /// Forgets the accumulated totals and counters
    /// (`torch.cuda.reset_accumulated_memory_stats()`).
    pub fn reset_accumulated_memory_stats(&self) {
        self.read().stats.reset_accumulated();
    }

    /// The size of the largest cached free block (PyTorch's `cacheInfo`
    /// without its free-memory guess).
    pub fn largest_cached_block(&self) -> usize {
        self.read().largest_cached_block()
    }

    /// Panics unless the bookkeeping is consistent.
    #[cfg(test)]
    fn assert_invariants(&self) {
        if let Err(problem) = self.read().check_invariants() {
            panic!("caching allocator bookkeeping: {problem}");
        }
    }

    /// The segments and their blocks, by address
    /// (`torch.cuda.memory_snapshot()`).
    pub fn snapshot(&self) -> Vec<SegmentSnapshot> {
        self.read().snapshot()
    }
}

impl<D: DeviceMemory> Drop for CachingAllocator<D> {
    /// Gives the cached segments back to the device. Segments with blocks
    /// still allocated stay with the device: their addresses may still be
    /// in use, and their owners can no longer free them through this
    /// allocator.
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(PoisonError::into_inner);
        // Nothing can report an error from a drop; a device that fails here
        // keeps the memory, which the process's exit returns.
        let _ = state.release_cached_blocks(&self.device);
    }
}

/// Whether `error` is the allocator's out-of-memory error (PyTorch's
/// `torch.OutOfMemoryError`, a `RuntimeError`), which a caller may recover
/// from by freeing memory and trying again.
pub fn is_out_of_memory(error: &Error) -> bool {
    error.kind() == c10_core::ErrorKind::Runtime
        && error.message().starts_with("CUDA out of memory.")
}
