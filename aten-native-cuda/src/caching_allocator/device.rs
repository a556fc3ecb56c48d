//! The device side of the caching allocator: the [`DeviceMemory`] trait a
//! backend implements (raw device malloc and free, events, memory info), the
//! opaque [`StreamId`], and [`DeviceMallocError`], which tells an
//! out-of-memory failure apart from every other device error.
//!
//! The allocator's logic is written against this trait alone, so it runs
//! the same over `cudarc` and over the fake device of the tests.

use c10_core::Error;

/// An opaque stream identifier (PyTorch's `cudaStream_t` as the allocator
/// sees it): the allocator only compares and orders streams, it never
/// launches work on one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamId(pub u64);

impl StreamId {
    /// The default (legacy null) stream.
    pub const DEFAULT: StreamId = StreamId(0);
}

/// Why a device allocation failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceMallocError {
    /// The device has not enough free memory (`cudaErrorMemoryAllocation`):
    /// the allocator may free its cache and try again.
    OutOfMemory,
    /// Any other device error; the allocator returns it as is, without a
    /// retry.
    Other(Error),
}

impl From<Error> for DeviceMallocError {
    fn from(error: Error) -> DeviceMallocError {
        DeviceMallocError::Other(error)
    }
}

/// The operations of one device that the caching allocator needs (one
/// allocator per device).
///
/// Device pointers are plain `u64` addresses: the allocator does
/// arithmetic on them (splitting a segment into blocks) but never
/// dereferences one. A non-zero address returned by [`malloc`] must stay
/// valid, and must not overlap another live allocation, until it is given
/// to [`free`].
///
/// [`malloc`]: DeviceMemory::malloc
/// [`free`]: DeviceMemory::free
pub trait DeviceMemory: Send + Sync {
    /// A device event (`cudaEvent_t`). The allocator owns every event it
    /// creates and hands each back through [`destroy_event`] exactly once.
    ///
    /// [`destroy_event`]: DeviceMemory::destroy_event
    type Event: Send;

    /// The device's index (the `N` of `cuda:N`), printed in the
    /// out-of-memory message.
    fn device_index(&self) -> i8;

    /// Allocates `bytes` (never zero) of device memory (`cudaMalloc`) and
    /// returns its non-zero address.
    fn malloc(&self, bytes: usize) -> Result<u64, DeviceMallocError>;

    /// Returns memory obtained from [`malloc`](DeviceMemory::malloc) to the
    /// device (`cudaFree`).
    fn free(&self, ptr: u64) -> c10_core::Result<()>;

    /// The device's free and total memory in bytes (`cudaMemGetInfo`).
    fn mem_get_info(&self) -> c10_core::Result<(usize, usize)>;

    /// Creates an event (`cudaEventCreateWithFlags(cudaEventDisableTiming)`).
    fn create_event(&self) -> c10_core::Result<Self::Event>;

    /// Records `event` on `stream`: it completes once the work queued on
    /// the stream so far has finished (`cudaEventRecord`).
    fn record_event(&self, event: &Self::Event, stream: StreamId) -> c10_core::Result<()>;

    /// Whether `event` has completed (`cudaEventQuery`); does not block.
    fn query_event(&self, event: &Self::Event) -> c10_core::Result<bool>;

    /// Blocks until `event` has completed (`cudaEventSynchronize`).
    fn synchronize_event(&self, event: &Self::Event) -> c10_core::Result<()>;

    /// Destroys `event` (`cudaEventDestroy`).
    fn destroy_event(&self, event: Self::Event) -> c10_core::Result<()>;
}
