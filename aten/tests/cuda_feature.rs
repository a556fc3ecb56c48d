//! `aten::cuda` without the `cuda` feature: CUDA is never available, and
//! a tensor on CUDA is PyTorch's "not compiled" error.

#[cfg(not(feature = "cuda"))]
#[test]
fn cuda_is_unavailable_without_the_feature() {
    use aten::c10::{DeviceType, TensorBase};
    use aten::{Device, ScalarType};

    aten::dispatcher();
    assert!(!aten::cuda::is_available());
    assert_eq!(aten::cuda::device_count(), 0);
    let e =
        TensorBase::empty(&[2], ScalarType::Float, Device::new(DeviceType::CUDA, 0)).unwrap_err();
    assert_eq!(e.message(), "Torch not compiled with CUDA enabled");
}
