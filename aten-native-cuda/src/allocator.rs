//! How `cuda:N` storages are made: this crate's entry in
//! [`DEVICE_ALLOCATORS`], which checks that the device can be used
//! (PyTorch's errors when there is no driver or no such device) before
//! handing out the device's allocator.

use c10_core::device_allocator::{DeviceAllocatorRegistration, DEVICE_ALLOCATORS};
use c10_core::storage::Allocator;
use c10_core::{DeviceType, Result};

use crate::availability::check_device;

#[c10_core::device_allocator::__linkme::distributed_slice(DEVICE_ALLOCATORS)]
#[linkme(crate = c10_core::device_allocator::__linkme)]
static CUDA_ALLOCATORS: DeviceAllocatorRegistration = DeviceAllocatorRegistration {
    device_type: DeviceType::CUDA,
    allocator: cuda_allocator,
};

/// The allocator of `cuda:index`.
fn cuda_allocator(index: i8) -> Result<&'static dyn Allocator> {
    let ordinal = check_device(index)?;
    device_allocator(ordinal)
}
