//! CUDA availability and storages on `cuda:N`: on a machine without a
//! driver (or without devices), PyTorch's errors; on one with a device,
//! zero-filled allocations through the caching allocator.

use aten_native_cuda::{allocator, availability};
use c10_core::{Device, DeviceType, ScalarType, TensorBase};

#[test]
fn cuda_storages_follow_availability() {
    aten_native_cuda::link();
    let cuda0 = Device::new(DeviceType::CUDA, 0);
    if let Some(why) = availability::skip_reason() {
        eprintln!("skipping the CUDA allocations: {why}");
        assert!(!aten_native_cuda::is_available());
        assert_eq!(aten_native_cuda::device_count(), 0);
        let e = TensorBase::empty(&[2, 3], ScalarType::Float, cuda0).unwrap_err();
        assert_eq!(e.message(), why);
        return;
    }
    let count = aten_native_cuda::device_count();
    assert!(aten_native_cuda::is_available());
    let t = TensorBase::empty(&[1024], ScalarType::Float, cuda0).unwrap();
    assert_eq!(t.device(), Some(cuda0));
    let caching = allocator::device_allocator(0).unwrap().caching_allocator();
    assert!(caching.memory_allocated() >= 4096);
    drop(t);
    assert_eq!(caching.memory_allocated(), 0);
    // A second tensor of the same size reuses the cached block.
    let reserved = caching.memory_reserved();
    let _t = TensorBase::empty(&[1024], ScalarType::Float, cuda0).unwrap();
    assert_eq!(caching.memory_reserved(), reserved);
    let beyond = Device::new(DeviceType::CUDA, i8::try_from(count).unwrap_or(i8::MAX));
    let e = TensorBase::empty(&[1], ScalarType::Float, beyond).unwrap_err();
    assert!(e.message().contains("invalid device ordinal"), "{e}");
}

#[test]
fn without_a_driver_the_error_is_pytorchs() {
    // SAFETY: only opens the library by name.
    if unsafe { cudarc::driver::sys::is_culib_present() } {
        eprintln!("skipping: a CUDA driver library is present");
        return;
    }
    aten_native_cuda::link();
    let e =
        TensorBase::empty(&[1], ScalarType::Float, Device::new(DeviceType::CUDA, 0)).unwrap_err();
    assert_eq!(e.message(), availability::NO_DRIVER);
    assert!(e.message().starts_with(
        "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU"
    ));
}
