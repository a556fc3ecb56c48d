//! Hostile parameters and inputs: sizes computed from user parameters are
//! checked (no overflow panics in debug builds, no wrapping in release
//! builds), and bad inputs are errors, never panics.

use aten::{ops, Scalar, Tensor};

fn f32s(v: &[f32], shape: &[i64]) -> Tensor {
    Tensor::from_slice(v, shape).unwrap()
}

/// An empty float tensor of sizes whose nonzero product overflows.
fn huge_empty() -> Tensor {
    ops::empty_memory_format(&[0, 1 << 40, 1 << 40]).unwrap()
}

#[test]
fn conv2d_with_a_padded_extent_past_i64_is_an_error() {
    let x = f32s(&[1.0], &[1, 1, 1, 1]);
    let w = f32s(&[1.0, 2.0, 3.0], &[1, 1, 3, 1]);
    let r = ops::conv2d_with(
        &x,
        &w,
        ops::Conv2dOptions {
            padding: &[1 << 62, 0],
            dilation: &[1 << 62, 1],
            ..Default::default()
        },
    );
    // Named after the operator the user called, not the backend kernel.
    let e = r.unwrap_err().to_string();
    assert!(
        e.starts_with("convolution: the padded input size (9223372036854775809 x 1) overflows"),
        "{e}"
    );
    // Large but representable parameters still work: every tap but the
    // middle one reads padding.
    let r = ops::conv2d_with(
        &x,
        &w,
        ops::Conv2dOptions {
            padding: &[1 << 40, 0],
            dilation: &[1 << 40, 1],
            stride: &[1 << 41, 1],
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(r.sizes(), &[1, 1, 1, 1]);
    assert_eq!(r.to_vec::<f32>().unwrap(), vec![2.0]);
}

#[test]
fn max_pool2d_with_huge_strides_and_dilations_does_not_overflow() {
    let x = f32s(&[1.0, 5.0, 3.0, 4.0], &[1, 1, 2, 2]);
    // Taps at -MAX, 0 and MAX (past i64 before the padding is taken off):
    // only the corner element is inside.
    let r = ops::max_pool2d_with(
        &x,
        &[3, 3],
        ops::MaxPool2dOptions {
            stride: &[i64::MAX, i64::MAX],
            padding: &[i64::MAX, i64::MAX],
            dilation: &[i64::MAX, i64::MAX],
            ceil_mode: false,
        },
    )
    .unwrap();
    assert_eq!(r.sizes(), &[1, 1, 1, 1]);
    assert_eq!(r.to_vec::<f32>().unwrap(), vec![1.0]);
}

#[test]
fn flatten_of_an_empty_tensor_with_huge_sizes() {
    let t = huge_empty();
    let r = ops::flatten_using_ints_with(
        &t,
        ops::FlattenUsingIntsOptions {
            start_dim: 1,
            end_dim: 2,
        },
    );
    assert!(r.is_err());
    let r = ops::flatten_using_ints(&t).unwrap();
    assert_eq!(r.sizes(), &[0]);
}

#[test]
fn layer_norm_of_an_empty_tensor_with_huge_sizes() {
    let t = huge_empty();
    assert!(ops::layer_norm(&t, &[1 << 40, 1 << 40]).is_err());
    // Rows of nothing: 2^62 statistics, whose bytes overflow.
    let t = ops::empty_memory_format(&[1 << 62, 0]).unwrap();
    assert!(ops::layer_norm(&t, &[0]).is_err());
    // Rows of nothing have NaN statistics.
    let t = ops::empty_memory_format(&[2, 0]).unwrap();
    let (y, mean, rstd) = ops::native_layer_norm(&t, &[0], None, None, 1e-5).unwrap();
    assert_eq!(y.sizes(), &[2, 0]);
    assert_eq!(mean.sizes(), &[2, 1]);
    assert!(mean.to_vec::<f32>().unwrap().iter().all(|v| v.is_nan()));
    assert!(rstd.to_vec::<f32>().unwrap().iter().all(|v| v.is_nan()));
    let t = ops::empty_memory_format(&[3, 0]).unwrap();
    assert_eq!(ops::layer_norm(&t, &[0]).unwrap().sizes(), &[3, 0]);
    let t = ops::empty_memory_format(&[0, 4]).unwrap();
    assert_eq!(ops::layer_norm(&t, &[4]).unwrap().sizes(), &[0, 4]);
}

#[test]
fn reductions_of_empty_tensors_with_huge_sizes() {
    let t = huge_empty();
    let s = ops::sum_dim_intlist(&t, Some(&[1, 2])).unwrap();
    assert_eq!(s.sizes(), &[0]);
    let m = ops::mean_dim(&t, Some(&[1, 2])).unwrap();
    assert_eq!(m.sizes(), &[0]);
    // The result itself would be too large.
    assert!(ops::mean_dim(&t, Some(&[0])).is_err());
    let all = ops::sum_dim_intlist(&t, None).unwrap();
    assert_eq!(all.to_vec::<f32>().unwrap(), vec![0.0]);
}

#[test]
fn ordering_an_empty_tensor_with_a_huge_dimension_allocates_nothing() {
    // PyTorch returns empty results; a lane-sized scratch buffer here
    // would ask for 2^40 entries.
    let t = ops::empty_memory_format(&[0, 1 << 32, 1 << 32]).unwrap();
    let (values, indices) = ops::topk(&t, 2).unwrap();
    assert_eq!(values.sizes(), &[0, 1 << 32, 2]);
    assert_eq!(indices.sizes(), &[0, 1 << 32, 2]);
    let t = ops::empty_memory_format(&[0, 1 << 40]).unwrap();
    let (values, indices) = ops::sort(&t).unwrap();
    assert_eq!((values.numel(), indices.numel()), (0, 0));
    assert_eq!(ops::argsort(&t).unwrap().sizes(), &[0, 1 << 40]);
    let (values, _) = ops::sort(&huge_empty()).unwrap();
    assert_eq!(values.sizes(), &[0, 1 << 40, 1 << 40]);
}

#[test]
fn upsampling_below_rank_2_is_an_error() {
    let line = f32s(&[1.0, 2.0, 3.0, 4.0], &[4]);
    assert!(ops::upsample_nearest2d_vec(&line, None, Some(&[])).is_err());
    assert!(ops::upsample_bilinear2d_vec(&line, None, true, Some(&[])).is_err());
    assert!(ops::upsample_nearest2d_vec(&line, Some(&[]), None).is_err());
}

#[test]
fn shapes_of_very_high_rank_are_refused_quickly() {
    let ones = vec![1i64; 300_000];
    let err = ops::empty_memory_format(&ones).unwrap_err();
    assert!(err.to_string().contains("at most 1024 dimensions"), "{err}");
    assert!(err.to_string().len() < 200);
    let x = ops::empty_memory_format(&ones[..1024]).unwrap();
    assert_eq!(x.numel(), 1);
}

#[test]
fn integer_pow_with_the_most_negative_exponent() {
    let base = Tensor::from_slice(&[-1i64, 1, 2, 0], &[4]).unwrap();
    let e = Tensor::from_slice(&[i64::MIN; 4], &[4]).unwrap();
    let r = ops::pow_tensor_tensor(&base, &e).unwrap();
    assert_eq!(r.to_vec::<i64>().unwrap(), vec![1, 1, 0, 0]);
    assert!(ops::pow_tensor_scalar(&base, Scalar::Int(i64::MIN)).is_err());
}

#[test]
fn arange_with_an_integral_dtype_and_a_fractional_step() {
    let long = |start: Scalar, end: Scalar, step: Scalar| {
        ops::arange_start_step_with(
            start,
            end,
            ops::ArangeStartStepOptions {
                step,
                dtype: Some(aten::ScalarType::Long),
                ..Default::default()
            },
        )
    };
    // PyTorch sizes the range in double from the Scalars, and fills
    // `start + step * i` with the step truncated to int64: 20 zeros.
    let r = long(Scalar::Int(0), Scalar::Int(10), Scalar::Double(0.5)).unwrap();
    assert_eq!(r.to_vec::<i64>().unwrap(), vec![0; 20]);
    let r = long(Scalar::Double(1.5), Scalar::Int(6), Scalar::Double(1.5)).unwrap();
    assert_eq!(r.to_vec::<i64>().unwrap(), vec![1, 2, 3]);
    // Integral Scalars size the range in integers.
    let r = long(Scalar::Int(0), Scalar::Int(10), Scalar::Int(3)).unwrap();
    assert_eq!(r.to_vec::<i64>().unwrap(), vec![0, 3, 6, 9]);
    let r = long(Scalar::Int(5), Scalar::Int(0), Scalar::Int(-2)).unwrap();
    assert_eq!(r.to_vec::<i64>().unwrap(), vec![5, 3, 1]);
    let r = long(
        Scalar::Int(i64::MIN),
        Scalar::Int(i64::MAX),
        Scalar::Int(i64::MAX),
    )
    .unwrap();
    assert_eq!(r.to_vec::<i64>().unwrap(), vec![i64::MIN, -1, i64::MAX - 1]);
    let r = ops::arange_start_step_with(
        Scalar::Int(0),
        Scalar::Int(3),
        ops::ArangeStartStepOptions {
            step: Scalar::Double(0.5),
            dtype: Some(aten::ScalarType::Int),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(r.to_vec::<i32>().unwrap(), vec![0; 6]);
}

fn meta(shape: &[i64], dtype: aten::ScalarType) -> Tensor {
    ops::empty_memory_format_with(
        shape,
        ops::EmptyMemoryFormatOptions {
            dtype: Some(dtype),
            device: Some(aten::Device::META),
            ..Default::default()
        },
    )
    .unwrap()
}

#[test]
fn meta_tensors_among_cpu_tensors_are_device_errors() {
    let msg = "Expected all tensors to be on the same device, but found at least two devices";
    let x = f32s(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
    let idx = meta(&[2], aten::ScalarType::Long);
    let e = ops::index_select(&x, 0, &idx).unwrap_err();
    assert!(e.message().starts_with(msg), "{}", e.message());
    assert!(e.message().contains("cpu and meta!"), "{}", e.message());
    let e = ops::cat(&[x.clone(), meta(&[2, 2], aten::ScalarType::Float)]).unwrap_err();
    assert!(e.message().starts_with(msg), "{}", e.message());
    // All on one device still works.
    let cpu_idx = Tensor::from_slice(&[1i64, 0], &[2]).unwrap();
    let r = ops::index_select(&x, 0, &cpu_idx).unwrap();
    assert_eq!(r.to_vec::<f32>().unwrap(), vec![3.0, 4.0, 1.0, 2.0]);
    let m = ops::index_select(&meta(&[2, 2], aten::ScalarType::Float), 0, &idx).unwrap();
    assert_eq!(m.sizes(), &[2, 2]);
    let c = ops::cat(&[
        meta(&[2, 2], aten::ScalarType::Float),
        meta(&[1, 2], aten::ScalarType::Float),
    ])
    .unwrap();
    assert_eq!(c.sizes(), &[3, 2]);
}

#[test]
fn in_place_writes_that_overlap_themselves_or_their_inputs_are_refused() {
    let internal = "unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation.";
    let partial = "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please clone() the tensor before performing the operation.";
    let x = f32s(&[1.0, 2.0], &[1, 2]);
    let e = ops::expand(&x, &[3, 2]).unwrap();
    let one = f32s(&[1.0; 6], &[3, 2]);
    assert_eq!(ops::add_tensor_(&e, &one).unwrap_err().message(), internal);
    assert_eq!(x.to_vec::<f32>().unwrap(), vec![1.0, 2.0]);
    let m = f32s(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
    let t = ops::t(&m).unwrap();
    assert_eq!(ops::add_tensor_(&m, &t).unwrap_err().message(), partial);
    assert_eq!(m.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
    // A slice overlapping part of the output.
    let v = f32s(&[1.0, 2.0, 3.0, 4.0], &[4]);
    let head = ops::narrow(&v, 0, 0, 3).unwrap();
    let tail = ops::narrow(&v, 0, 1, 3).unwrap();
    assert_eq!(
        ops::add_tensor_(&head, &tail).unwrap_err().message(),
        partial
    );
    // The same tensor, an equal view of it, and disjoint tensors are fine.
    ops::add_tensor_(&m, &m).unwrap();
    assert_eq!(m.to_vec::<f32>().unwrap(), vec![2.0, 4.0, 6.0, 8.0]);
    let same = ops::view(&m, &[2, 2]).unwrap();
    ops::add_tensor_(&m, &same).unwrap();
    assert_eq!(m.to_vec::<f32>().unwrap(), vec![4.0, 8.0, 12.0, 16.0]);
    let y = f32s(&[1.0; 4], &[2, 2]);
    ops::add_tensor_(&m, &y).unwrap();
    assert_eq!(m.to_vec::<f32>().unwrap(), vec![5.0, 9.0, 13.0, 17.0]);
    let lo = ops::narrow(&v, 0, 0, 2).unwrap();
    let hi = ops::narrow(&v, 0, 2, 2).unwrap();
    ops::add_tensor_(&lo, &hi).unwrap();
    assert_eq!(v.to_vec::<f32>().unwrap(), vec![4.0, 6.0, 3.0, 4.0]);
    // Reading an expanded input is fine.
    let z = f32s(&[0.0; 6], &[3, 2]);
    ops::add_tensor_(&z, &e).unwrap();
    assert_eq!(
        z.to_vec::<f32>().unwrap(),
        vec![1.0, 2.0, 1.0, 2.0, 1.0, 2.0]
    );
}
