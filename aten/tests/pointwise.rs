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

fn meta(shape: &[i64]) -> Tensor {
    ops::empty_memory_format_with(
        shape,
        ops::EmptyMemoryFormatOptions {
            device: Some(aten::Device::META),
            ..Default::default()
        },
    )
    .unwrap()
}

#[test]
fn meta_tensors_flow() {
    let m = meta(&[2, 3]);
    let r = ops::add_tensor(&m, &m).unwrap();
    assert_eq!(r.sizes(), &[2, 3]);
    assert_eq!(r.device(), Some(aten::Device::META));
    let c = ops::gt_scalar(&m, Scalar::Int(0)).unwrap();
    assert_eq!(c.dtype(), Some(ScalarType::Bool));
}

#[test]
fn reductions_and_copies() {
    let a = f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    assert_eq!(ops::sum(&a).unwrap().to_vec::<f32>().unwrap(), vec![21.0]);
    let s = ops::sum_dim_intlist_with(
        &a,
        Some(&[1][..]),
        ops::SumDimIntlistOptions {
            keepdim: true,
            dtype: None,
        },
    )
    .unwrap();
    assert_eq!(s.sizes(), &[2, 1]);
    assert_eq!(s.to_vec::<f32>().unwrap(), vec![6.0, 15.0]);
    let (v, i) = ops::max_dim(&a, 0).unwrap();
    assert_eq!(v.to_vec::<f32>().unwrap(), vec![4.0, 5.0, 6.0]);
    assert_eq!(i.to_vec::<i64>().unwrap(), vec![1, 1, 1]);
    let sm = ops::softmax_int(&a, 1).unwrap();
    let row: f32 = sm.to_vec::<f32>().unwrap()[..3].iter().sum();
    assert!((row - 1.0).abs() < 1e-6);
    let i64s = Tensor::from_slice(&[1i64, 2, 3], &[3]).unwrap();
    assert_eq!(ops::sum(&i64s).unwrap().dtype(), Some(ScalarType::Long));
    assert!(ops::mean(&i64s).is_err());
    let t = Tensor::from(a.base().as_strided(&[3, 2], &[1, 3], None).unwrap());
    let c = ops::clone(&t).unwrap();
    assert_eq!(c.strides(), &[1, 3]);
    let k = ops::contiguous(&t).unwrap();
    assert_eq!(k.strides(), &[2, 1]);
    assert_eq!(k.to_vec::<f32>().unwrap(), vec![1., 4., 2., 5., 3., 6.]);
    assert!(ops::sum_dim_intlist(&a, Some(&[5][..])).is_err());
}

#[test]
fn functional_and_in_place_forms_run_through_out_variants() {
    let a = Tensor::from_slice(&[-1.5f32, 0.0, 2.0], &[3]).unwrap();
    let b = Tensor::from_slice(&[1.0f32, 1.0, 0.0], &[3]).unwrap();
    assert_eq!(
        ops::abs(&a).unwrap().to_vec::<f32>().unwrap(),
        vec![1.5, 0.0, 2.0]
    );
    let and = ops::logical_and(&a, &b).unwrap();
    assert_eq!(and.dtype(), Some(aten::ScalarType::Bool));
    assert_eq!(and.to_vec::<bool>().unwrap(), vec![true, false, false]);
    // In place: the result keeps self's dtype and storage.
    let c = ops::clone(&a).unwrap();
    let r = ops::logical_and_(&c, &b).unwrap();
    assert!(r.base().is_same(c.base()));
    assert_eq!(c.to_vec::<f32>().unwrap(), vec![1.0, 0.0, 0.0]);
    let d = ops::clone(&a).unwrap();
    ops::abs_(&d).unwrap();
    assert_eq!(d.to_vec::<f32>().unwrap(), vec![1.5, 0.0, 2.0]);
    // A transposed input gives a result laid out like it (the out kernel
    // resizes the fresh output with the input's strides).
    let m = Tensor::from_slice(&[-1.0f32, 2.0, -3.0, 4.0, -5.0, 6.0], &[2, 3])
        .unwrap()
        .t()
        .unwrap();
    assert_eq!(ops::abs(&m).unwrap().strides(), m.strides());
    assert_eq!(ops::logical_not(&m).unwrap().strides(), m.strides());
}

#[test]
fn logsumexp_composes_over_its_out_variant() {
    let a = f32s(
        &[
            1.0,
            2.0,
            3.0,
            f32::NEG_INFINITY,
            f32::NEG_INFINITY,
            f32::INFINITY,
        ],
        &[2, 3],
    );
    let r = ops::logsumexp(&a, &[1]).unwrap();
    assert_eq!(r.sizes(), &[2]);
    let v = r.to_vec::<f32>().unwrap();
    let expected = (1f32.exp() + 2f32.exp() + 3f32.exp()).ln();
    assert!((v[0] - expected).abs() < 1e-6, "{v:?}");
    assert_eq!(v[1], f32::INFINITY);
    // A row of -inf only gives -inf (the infinite maximum is not subtracted).
    let n = f32s(&[f32::NEG_INFINITY, f32::NEG_INFINITY], &[1, 2]);
    let k = ops::logsumexp_with(&n, &[1], ops::LogsumexpOptions { keepdim: true }).unwrap();
    assert_eq!(k.sizes(), &[1, 1]);
    assert_eq!(k.to_vec::<f32>().unwrap(), vec![f32::NEG_INFINITY]);
    // Integral inputs compute in the default dtype; an integral out= is refused.
    let i = Tensor::from_slice(&[0i64, 0], &[2]).unwrap();
    let li = ops::logsumexp(&i, &[0]).unwrap();
    assert_eq!(li.dtype(), Some(ScalarType::Float));
    assert!((li.to_vec::<f32>().unwrap()[0] - 2f32.ln()).abs() < 1e-6);
    let bad = Tensor::from_slice(&[0i64], &[1]).unwrap();
    let err = ops::logsumexp_out(&i, &[0], false, &bad)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("logsumexp(): Expected floating point type for result tensor, but got: Long"),
        "{err}"
    );
    // The out variant resizes its output; Meta tensors flow through.
    let out = f32s(&[0.0; 5], &[5]);
    ops::logsumexp_out(&a, &[0], false, &out).unwrap();
    assert_eq!(out.sizes(), &[3]);
    let m = meta(&[4, 5]);
    let lm = ops::logsumexp(&m, &[0]).unwrap();
    assert_eq!(
        (&lm.sizes()[..], lm.device()),
        (&[5][..], Some(aten::Device::META))
    );
}
