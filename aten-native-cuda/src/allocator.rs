//! How `cuda:N` storages are made: this crate's entry in
//! [`DEVICE_ALLOCATORS`], which checks that the device can be used
//! (PyTorch's errors when there is no driver or no such device), then
//! allocates through the device's caching allocator over the driver.

use std::sync::OnceLock;

use c10_core::allocator::{Allocator, DataPtr};
use c10_core::device_allocator::{DeviceAllocatorRegistration, DeviceBuffer, DEVICE_ALLOCATORS};
use c10_core::{Device, DeviceType, Error, Result};

use crate::availability::check_device;
use crate::caching_allocator::{CachingAllocator, StreamId};
use crate::driver_memory::DriverMemory;

#[c10_core::device_allocator::__linkme::distributed_slice(DEVICE_ALLOCATORS)]
#[linkme(crate = c10_core::device_allocator::__linkme)]
static CUDA_ALLOCATORS: DeviceAllocatorRegistration = DeviceAllocatorRegistration {
    device_type: DeviceType::CUDA,
    allocator: cuda_allocator,
};

/// The allocator of `cuda:index`.
fn cuda_allocator(index: i8) -> Result<&'static dyn Allocator> {
    let ordinal = check_device(index)?;
    Ok(device_allocator(ordinal)?)
}

/// The allocator of one device: PyTorch's caching allocator over the
/// driver, making zero-filled storages on the default stream.
pub struct CudaAllocator {
    ordinal: usize,
    device: Device,
    memory: CachingAllocator<DriverMemory>,
}

impl CudaAllocator {
    /// The caching allocator behind this device's storages (statistics,
    /// `empty_cache`, `record_stream`).
    pub fn caching_allocator(&self) -> &CachingAllocator<DriverMemory> {
        &self.memory
    }
}

// SAFETY: `allocate` returns a fresh block of at least `nbytes` bytes
// from the caching allocator, zero-filled, that only the storage built
// from it uses (the block returns to the cache when that storage drops).
unsafe impl Allocator for CudaAllocator {
    fn device(&self) -> Device {
        self.device
    }

    fn allocate(&self, nbytes: usize) -> Result<DataPtr> {
        let ptr = self.memory.malloc(nbytes, StreamId::DEFAULT)?;
        let buffer = CudaBuffer {
            ptr,
            ordinal: self.ordinal,
        };
        // On an error, dropping `buffer` gives the block back.
        self.memory.device().zero(ptr, nbytes)?;
        DataPtr::from_device_buffer(Box::new(buffer), self.device)
    }
}

/// A block of device memory a storage owns; dropping it returns the block
/// to its device's caching allocator (not to the driver).
#[derive(Debug)]
struct CudaBuffer {
    ptr: u64,
    ordinal: usize,
}

impl DeviceBuffer for CudaBuffer {
    fn device_ptr(&self) -> u64 {
        self.ptr
    }
}

impl Drop for CudaBuffer {
    fn drop(&mut self) {
        // The buffer was made by this device's allocator, which lives for
        // the rest of the process.
        let Some(Ok(allocator)) = ALLOCATORS.get().and_then(|all| all.get(self.ordinal)) else {
            return;
        };
        if let Err(e) = allocator.memory.free(self.ptr) {
            c10_core::torch_warn!("freeing CUDA memory failed: {e}");
        }
    }
}

/// Every device's allocator, made at the first CUDA allocation and never
/// freed, or the error that making its driver context gave.
static ALLOCATORS: OnceLock<Vec<std::result::Result<CudaAllocator, Error>>> = OnceLock::new();

/// The allocator of device `ordinal`, which [`check_device`] accepted.
pub fn device_allocator(ordinal: usize) -> Result<&'static CudaAllocator> {
    let all = ALLOCATORS.get_or_init(|| {
        (0..crate::device_count())
            .map(|i| {
                let index = i8::try_from(i)
                    .map_err(|_| Error::runtime(format!("CUDA device {i} is out of range")))?;
                Ok(CudaAllocator {
                    ordinal: i,
                    device: Device::new(DeviceType::CUDA, index),
                    memory: CachingAllocator::new(DriverMemory::new(i)?),
                })
            })
            .collect()
    });
    match all.get(ordinal) {
        Some(Ok(a)) => Ok(a),
        Some(Err(e)) => Err(e.clone()),
        None => Err(Error::runtime(format!(
            "CUDA error: invalid device ordinal (device {ordinal} requested, {} available)",
            all.len()
        ))),
    }
}
