//! Pointwise operators end to end through the generated API.

use aten::{ops, Scalar, ScalarType, Tensor};

fn f32s(v: &[f32], shape: &[i64]) -> Tensor {
    Tensor::from_slice(v, shape).unwrap()
}

#[test]
fn arithmetic_broadcasts_and_promotes() {
    let a = f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let b = f32s(&[10.0, 20.0, 30.0], &[3]);
    let r = ops::add_tensor(&a, &b).unwrap();
    assert_eq!(
        r.to_vec::<f32>().unwrap(),
        vec![11., 22., 33., 14., 25., 36.]
    );
    let i = Tensor::from_slice(&[1i64, 2, 3], &[3]).unwrap();
    let r = ops::add_tensor_with(
        &i,
        &i,
        ops::AddTensorOptions {
            alpha: Scalar::Int(2),
        },
    )
    .unwrap();
    assert_eq!(r.to_vec::<i64>().unwrap(), vec![3, 6, 9]);
    let r = ops::add_scalar(&i, Scalar::Double(0.5)).unwrap();
    assert_eq!(r.dtype(), Some(ScalarType::Float));
    let r = ops::div_tensor(&i, &i).unwrap();
    assert_eq!(r.dtype(), Some(ScalarType::Float));
    let z = Tensor::from_slice(&[0i64, 1, 1], &[3]).unwrap();
    let err = ops::div_tensor_mode(&i, &z, Some("trunc")).unwrap_err();
    assert_eq!(err.message(), "ZeroDivisionError");
    let err = ops::bitwise_xor_tensor(&a, &a).unwrap_err();
    assert_eq!(
        err.message(),
        "\"bitwise_xor_cpu\" not implemented for 'Float'"
    );
    // In place: a.t() views and version bumps.
    let before = a.version();
    a.add_tensor_(&b).unwrap();
    assert_eq!(
        a.to_vec::<f32>().unwrap(),
        vec![11., 22., 33., 14., 25., 36.]
    );
    assert_eq!(a.version(), before + 1);
    let c = ops::lt_tensor(&a, &b).unwrap();
    assert_eq!(c.dtype(), Some(ScalarType::Bool));
    let e = ops::exp(&f32s(&[0.0], &[1])).unwrap();
    assert_eq!(e.to_vec::<f32>().unwrap(), vec![1.0]);
}

#[test]
fn meta_tensors_flow() {
    let m = ops::empty_memory_format_with(
        &[2, 3],
        ops::EmptyMemoryFormatOptions {
            device: Some(aten::Device::META),
            ..Default::default()
        },
    )
    .unwrap();
    let r = ops::add_tensor(&m, &m).unwrap();
    assert_eq!(r.sizes(), &[2, 3]);
    assert_eq!(r.device(), Some(aten::Device::META));
    let c = ops::gt_scalar(&m, Scalar::Int(0)).unwrap();
    assert_eq!(c.dtype(), Some(ScalarType::Bool));
}
