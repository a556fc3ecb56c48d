//! Memory of devices other than the CPU: the [`DeviceBuffer`] a storage
//! owns there, and the registry through which a backend crate provides its
//! devices' allocators ([`DEVICE_ALLOCATORS`], PyTorch's `SetAllocator` /
//! `REGISTER_CUDA_HOOKS`).
//!
//! A backend is linked in by the facade's features. When none registered
//! for a device type, creating a tensor there fails the way a PyTorch build
//! without that backend does ("Torch not compiled with CUDA enabled").

use std::fmt;

use crate::allocator::Allocator;
use crate::device::{Device, DeviceType};
use crate::error::{Error, Result};

#[doc(hidden)]
pub use linkme as __linkme;

/// Device memory that a storage owns: its address in the device's address
/// space. Dropping it gives the memory back to the allocator that made it
/// (which may cache it), so the storage's last handle frees it.
pub trait DeviceBuffer: Send + Sync + fmt::Debug {
    /// The device address of the first byte.
    fn device_ptr(&self) -> u64;
}

/// A backend's allocators for one device type.
pub struct DeviceAllocatorRegistration {
    /// The device type served.
    pub device_type: DeviceType,
    /// The allocator of device `index` of that type, or why there is none
    /// (no driver, no such device).
    pub allocator: fn(index: i8) -> Result<&'static dyn Allocator>,
}

/// Every linked backend's allocator registration (a link-time collection:
/// a backend crate adds one with `#[distributed_slice(DEVICE_ALLOCATORS)]`).
#[linkme::distributed_slice]
pub static DEVICE_ALLOCATORS: [DeviceAllocatorRegistration];

/// The allocator a linked backend registered for `device`.
pub(crate) fn registered_allocator(device: Device) -> Result<&'static dyn Allocator> {
    let device_type = device.device_type();
    match DEVICE_ALLOCATORS
        .iter()
        .find(|r| r.device_type == device_type)
    {
        Some(registration) => (registration.allocator)(device.index()),
        None => Err(not_compiled(device_type)),
    }
}

/// The error for a device type no linked backend serves: PyTorch's wording
/// for CUDA, a plain statement for the others.
fn not_compiled(device_type: DeviceType) -> Error {
    match device_type {
        DeviceType::CUDA => Error::runtime("Torch not compiled with CUDA enabled"),
        other => Error::runtime(format!(
            "no allocator is available for device {} in this build",
            Device::new(other, -1)
        )),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use super::*;
    use crate::allocator::DataPtr;
    use crate::storage::Storage;
    use crate::test_support::DropProbe;
    use crate::{ScalarType, TensorBase};

    #[test]
    fn cuda_without_a_backend_is_pytorchs_error() {
        // No backend crate is linked into c10-core's own tests.
        let cuda = Device::new(DeviceType::CUDA, 0);
        let e = Storage::new(16, cuda).unwrap_err();
        assert_eq!(e.message(), "Torch not compiled with CUDA enabled");
        let e = TensorBase::empty(&[2, 3], ScalarType::Float, cuda).unwrap_err();
        assert_eq!(e.message(), "Torch not compiled with CUDA enabled");
    }

    #[derive(Debug)]
    struct FakeBuffer {
        ptr: u64,
        _freed: DropProbe,
    }

    impl DeviceBuffer for FakeBuffer {
        fn device_ptr(&self) -> u64 {
            self.ptr
        }
    }

    #[test]
    fn device_storage_owns_its_buffer_until_the_last_handle() {
        let freed = Arc::new(AtomicUsize::new(0));
        let cuda = Device::new(DeviceType::CUDA, 1);
        let data = DataPtr::from_device_buffer(
            Box::new(FakeBuffer {
                ptr: 0x7000_0000,
                _freed: DropProbe(freed.clone()),
            }),
            cuda,
        )
        .unwrap();
        // SAFETY: the fake address is never dereferenced.
        let s = unsafe { Storage::from_data_ptr(data, 256) };
        assert_eq!(s.device_ptr(), Some(0x7000_0000));
        assert_eq!((s.nbytes(), s.device(), s.has_data()), (256, cuda, false));
        assert!(s.data_ptr().is_none());
        let view = s.clone();
        drop(s);
        assert_eq!(freed.load(Ordering::Relaxed), 0);
        drop(view);
        assert_eq!(freed.load(Ordering::Relaxed), 1);
        // A device buffer never backs CPU storage; CPU storage has no
        // device address.
        let e = DataPtr::from_device_buffer(
            Box::new(FakeBuffer {
                ptr: 1,
                _freed: DropProbe(freed.clone()),
            }),
            Device::CPU,
        );
        assert!(e.is_err());
        assert_eq!(Storage::new(8, Device::CPU).unwrap().device_ptr(), None);
    }
}
