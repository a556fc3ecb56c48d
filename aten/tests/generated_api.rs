//! The generated typed API, registrations and BackendSelect kernels work end
//! to end through the global dispatcher.

use aten::core::ops;
use aten::{Device, ScalarType, Tensor};

#[test]
fn factories_route_through_backend_select() {
    let t = ops::empty_memory_format(&[2, 3]).unwrap();
    assert_eq!(t.sizes(), &[2, 3]);
    assert_eq!(t.dtype(), Some(ScalarType::Float));
    assert_eq!(t.device(), Some(Device::CPU));
    let m = ops::empty_memory_format_with(
        &[4],
        ops::EmptyMemoryFormatOptions {
            device: Some(Device::META),
            dtype: Some(ScalarType::Long),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(m.device(), Some(Device::META));
    assert_eq!(m.dtype(), Some(ScalarType::Long));
    let z = ops::zeros_with(
        &[2],
        ops::ZerosOptions {
            dtype: Some(ScalarType::Double),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(z.to_vec::<f64>().unwrap(), vec![0.0, 0.0]);
    let s = ops::empty_strided(&[2, 2], &[1, 2]).unwrap();
    assert_eq!(s.strides(), &[1, 2]);
    assert!(ops::empty_memory_format(&[-1]).is_err());
}

#[test]
fn generated_methods_make_views() {
    let t = Tensor::from_slice(&[1i64, 2, 3, 4, 5, 6], &[2, 3]).unwrap();
    let v = t.as_strided(&[3, 2], &[1, 3]).unwrap();
    assert_eq!(v.to_vec::<i64>().unwrap(), vec![1, 4, 2, 5, 3, 6]);
    let tail = t
        .as_strided_with(
            &[2],
            &[1],
            aten::core::ops::AsStridedOptions {
                storage_offset: Some(4),
            },
        )
        .unwrap();
    assert_eq!(tail.to_vec::<i64>().unwrap(), vec![5, 6]);
    let table = aten::dispatcher()
        .find_schema_or_throw("aten::as_strided", "")
        .unwrap()
        .dump_computed_table();
    assert!(table.contains("CPU: registered at aten-native-cpu/src/generated/register_cpu.rs"));
    // One backend-neutral kernel serves CPU and Meta, registered with the CPU kernels.
    assert!(table.contains("Meta: registered at aten-native-cpu/src/generated/register_cpu.rs"));
}
