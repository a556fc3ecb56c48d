//! `split_with_sizes` and `diagonal` (views), `constant_pad_nd`, the
//! geometry queries (`sym_size.int`, `sym_stride.int`, `sym_numel`,
//! `sym_storage_offset`, `sym_is_contiguous`), `scalar_tensor`,
//! `_local_scalar_dense` and `resize_`, on every device the build has.

use aten::c10::{MemoryFormat, Scalar, ScalarType};
use aten::core::testing::DeviceTest;
use aten::ops;
use aten::Tensor;

aten::instantiate_device_type_tests!(
    split_with_sizes_views,
    diagonal_views,
    constant_pad_nd_pads_and_crops,
    geometry_queries,
    scalar_tensor_factory,
    resize_in_place,
);

/// `t`'s strides.
fn strides(t: &Tensor) -> Vec<i64> {
    t.layout().expect("a defined tensor").strides().to_vec()
}

fn split_with_sizes_views(dev: DeviceTest) {
    let a = dev.tensor(&[0i32, 1, 2, 3, 4, 5, 6, 7], &[2, 4]);
    let parts =
        ops::split_with_sizes_with(&a, &[1, 0, 3], ops::SplitWithSizesOptions { dim: -1 }).unwrap();
    assert_eq!(parts.len(), 3);
    dev.assert_values(&parts[0], &[2, 1], &[0i32, 4]);
    dev.assert_values::<i32>(&parts[1], &[2, 0], &[]);
    dev.assert_values(&parts[2], &[2, 3], &[1i32, 2, 3, 5, 6, 7]);
    // Views: the input's strides, offsets into its storage.
    assert_eq!(strides(&parts[2]), vec![4, 1]);
    assert_eq!(ops::sym_storage_offset(&parts[2]).unwrap(), 1);
    let err = dev.assert_error(ops::split_with_sizes(&a, &[1, 2]));
    assert_eq!(
        err,
        "split_with_sizes expects split_sizes to sum exactly to 2 (input tensor's size at dimension 0), but got split_sizes=[1, 2]"
    );
    let err = dev.assert_error(ops::split_with_sizes(&a, &[3, -1]));
    assert_eq!(
        err,
        "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=[3, -1]"
    );
    let err = dev.assert_error(ops::split_with_sizes(&dev.tensor(&[1i32], &[]), &[1]));
    assert_eq!(err, "split expects at least a 1-dimensional tensor");
    // Hostile sizes saturate instead of overflowing, and fail the sum.
    assert!(ops::split_with_sizes(&a, &[i64::MAX, i64::MAX]).is_err());
}

fn diagonal_views(dev: DeviceTest) {
    let a = dev.tensor(&(0..12).collect::<Vec<i64>>(), &[3, 4]);
    let d = ops::diagonal(&a).unwrap();
    dev.assert_values(&d, &[3], &[0i64, 5, 10]);
    assert_eq!(strides(&d), vec![5]);
    let above = ops::diagonal_with(
        &a,
        ops::DiagonalOptions {
            offset: 2,
            dim1: 0,
            dim2: 1,
        },
    )
    .unwrap();
    dev.assert_values(&above, &[2], &[2i64, 7]);
    let below = ops::diagonal_with(
        &a,
        ops::DiagonalOptions {
            offset: -1,
            dim1: -1,
            dim2: 0,
        },
    )
    .unwrap();
    // dim1 along columns: the offset drops leading columns.
    dev.assert_values(&below, &[3], &[1i64, 6, 11]);
    // Offsets past the end give an empty diagonal; hostile ones too.
    for offset in [4, -3, i64::MAX, i64::MIN] {
        let e = ops::diagonal_with(
            &a,
            ops::DiagonalOptions {
                offset,
                dim1: 0,
                dim2: 1,
            },
        )
        .unwrap();
        assert_eq!(e.sizes(), &[0], "offset {offset}");
    }
    // The remaining dimensions come first, the diagonal last.
    let c = dev.tensor(&(0..24).collect::<Vec<i16>>(), &[2, 3, 4]);
    let d = ops::diagonal_with(
        &c,
        ops::DiagonalOptions {
            offset: 0,
            dim1: 2,
            dim2: 0,
        },
    )
    .unwrap();
    dev.assert_values(&d, &[3, 2], &[0i16, 13, 4, 17, 8, 21]);
    assert_eq!(strides(&d), vec![4, 13]);
    let err = dev.assert_error(ops::diagonal_with(
        &c,
        ops::DiagonalOptions {
            offset: 0,
            dim1: 1,
            dim2: -2,
        },
    ));
    assert_eq!(err, "diagonal dimensions cannot be identical 1, -2");
    let err = dev.assert_error(ops::diagonal(&dev.tensor(&[1i16], &[1])));
    assert_eq!(
        err,
        "Dimension out of range (expected to be in range of [-1, 0], but got 1)"
    );
}

fn constant_pad_nd_pads_and_crops(dev: DeviceTest) {
    let a = dev.tensor(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]);
    let padded = ops::constant_pad_nd_with(
        &a,
        &[1, 0, 0, 1],
        ops::ConstantPadNdOptions {
            value: Scalar::Double(-1.0),
        },
    )
    .unwrap();
    dev.assert_values(
        &padded,
        &[3, 3],
        &[-1.0f32, 1.0, 2.0, -1.0, 3.0, 4.0, -1.0, -1.0, -1.0],
    );
    // Negative pads crop; only non-positive pads give a copy of the view.
    let cropped = ops::constant_pad_nd(&a, &[-1, 0]).unwrap();
    dev.assert_values(&cropped, &[2, 1], &[2.0f32, 4.0]);
    let mixed = ops::constant_pad_nd(&a, &[-1, 2]).unwrap();
    dev.assert_values(&mixed, &[2, 3], &[2.0f32, 0.0, 0.0, 4.0, 0.0, 0.0]);
    // Integer and bool inputs keep their dtype.
    let b = dev.tensor(&[true, false], &[2]);
    let pb = ops::constant_pad_nd_with(
        &b,
        &[1, 1],
        ops::ConstantPadNdOptions {
            value: Scalar::Bool(true),
        },
    )
    .unwrap();
    dev.assert_values(&pb, &[4], &[true, true, false, true]);
    // A channels-last input gives a channels-last result.
    let cl = ops::contiguous_with(
        &dev.tensor(&[1u8; 8], &[1, 2, 2, 2]),
        ops::ContiguousOptions {
            memory_format: MemoryFormat::ChannelsLast,
        },
    )
    .unwrap();
    let pcl = ops::constant_pad_nd(&cl, &[1, 1]).unwrap();
    assert_eq!(pcl.sizes(), &[1, 2, 2, 4]);
    assert_eq!(strides(&pcl), vec![16, 1, 8, 2]);
    let err = dev.assert_error(ops::constant_pad_nd(&a, &[1]));
    assert_eq!(err, "Length of pad must be even but instead it equals 1");
    let err = dev.assert_error(ops::constant_pad_nd(&a, &[1, 1, 1, 1, 1, 1]));
    assert_eq!(
        err,
        "Length of pad should be no more than twice the number of dimensions of the input. Pad length is 6while the input has 2dimensions."
    );
    let err = dev.assert_error(ops::constant_pad_nd(&a, &[-3, 1]));
    assert_eq!(err, "narrow(): length must be non-negative.");
    let err = dev.assert_error(ops::constant_pad_nd(&a, &[i64::MAX, 1]));
    assert_eq!(err, "constant_pad_nd: the padded size overflows");
}

fn geometry_queries(dev: DeviceTest) {
    let a = dev.tensor(&[0i8; 24], &[2, 3, 4]);
    let p = ops::permute(&a, &[2, 0, 1]).unwrap();
    assert_eq!(ops::sym_size_int(&p, 0).unwrap(), 4);
    assert_eq!(ops::sym_size_int(&p, -1).unwrap(), 3);
    assert_eq!(ops::sym_stride_int(&p, 0).unwrap(), 1);
    assert_eq!(ops::sym_stride_int(&p, -2).unwrap(), 12);
    assert_eq!(ops::sym_numel(&p).unwrap(), 24);
    assert!(!ops::sym_is_contiguous(&p).unwrap());
    assert!(ops::sym_is_contiguous(&a).unwrap());
    let err = dev.assert_error(ops::sym_size_int(&a, 3));
    assert_eq!(
        err,
        "Dimension out of range (expected to be in range of [-3, 2], but got 3)"
    );
    // A 0-dim tensor has no dimension to ask about.
    let s = dev.tensor(&[1.0f32], &[]);
    let err = dev.assert_error(ops::sym_stride_int(&s, 0));
    assert_eq!(err, "dimension specified as 0 but tensor has no dimensions");
    assert_eq!(ops::sym_numel(&s).unwrap(), 1);
    // Memory formats: channels-last needs a 4-d tensor in its order.
    let cl = ops::contiguous_with(
        &dev.tensor(&[0.0f32; 24], &[2, 3, 2, 2]),
        ops::ContiguousOptions {
            memory_format: MemoryFormat::ChannelsLast,
        },
    )
    .unwrap();
    let is = |t: &Tensor, memory_format| {
        ops::sym_is_contiguous_with(t, ops::SymIsContiguousOptions { memory_format }).unwrap()
    };
    assert!(is(&cl, MemoryFormat::ChannelsLast));
    assert!(!is(&cl, MemoryFormat::Contiguous));
    assert!(!is(&cl, MemoryFormat::ChannelsLast3d));
    assert!(!is(&a, MemoryFormat::ChannelsLast));
    assert!(is(&a, MemoryFormat::Preserve));
    let sliced = ops::slice_tensor_with(
        &a,
        ops::SliceTensorOptions {
            dim: 2,
            start: Some(1),
            end: None,
            step: 2,
        },
    )
    .unwrap();
    assert_eq!(ops::sym_storage_offset(&sliced).unwrap(), 1);
    assert_eq!(ops::sym_stride_int(&sliced, 2).unwrap(), 2);
}

fn scalar_tensor_factory(dev: DeviceTest) {
    let on = |s, dtype| {
        ops::scalar_tensor_with(
            s,
            ops::ScalarTensorOptions {
                dtype,
                device: Some(dev.device),
                ..Default::default()
            },
        )
        .unwrap()
    };
    // The default dtype whatever the scalar's kind.
    dev.assert_values(&on(Scalar::Int(3), None), &[], &[3.0f32]);
    dev.assert_values(&on(Scalar::Bool(true), None), &[], &[1.0f32]);
    dev.assert_values(
        &on(Scalar::Double(3.75), Some(ScalarType::Char)),
        &[],
        &[3i8],
    );
    dev.assert_values(
        &on(Scalar::Double(2.5), Some(ScalarType::Double)),
        &[],
        &[2.5f64],
    );
    dev.assert_values(&on(Scalar::Int(0), Some(ScalarType::Bool)), &[], &[false]);
    let err = dev.assert_data_error(ops::scalar_tensor_with(
        Scalar::Int(300),
        ops::ScalarTensorOptions {
            dtype: Some(ScalarType::Char),
            device: Some(dev.device),
            ..Default::default()
        },
    ));
    if let Some(err) = err {
        assert!(
            err.contains("out of range") || err.contains("overflow"),
            "{err}"
        );
    }
}

fn resize_in_place(dev: DeviceTest) {
    let a = dev.tensor(&[1i64, 2, 3, 4, 5, 6], &[2, 3]);
    // Fewer elements: the same storage, contiguous strides.
    let r = ops::resize_(&a, &[2, 2]).unwrap();
    assert!(r.base().is_same(a.base()));
    dev.assert_values(&a, &[2, 2], &[1i64, 2, 3, 4]);
    // The same sizes keep a transposed layout; a memory format restrides it.
    let t = dev.tensor(&[1.0f32; 6], &[2, 3]).t().unwrap();
    ops::resize_(&t, &[3, 2]).unwrap();
    assert_eq!(strides(&t), vec![1, 3]);
    ops::resize_with_(
        &t,
        &[3, 2],
        ops::ResizeInplaceOptions {
            memory_format: Some(MemoryFormat::Contiguous),
        },
    )
    .unwrap();
    assert_eq!(strides(&t), vec![2, 1]);
    // Zero sizes give strides as PyTorch computes them.
    let z = dev.tensor(&[0.0f32; 4], &[4]);
    ops::resize_(&z, &[3, 0, 0]).unwrap();
    assert_eq!(strides(&z), vec![1, 1, 1]);
    // Growing keeps the elements, and the grown storage is still the one
    // every view shares: a write through an older view shows in the grown
    // tensor, and the view itself can grow into the new room.
    let g = dev.tensor(&[7i32, 8], &[2]);
    let view = ops::alias(&g).unwrap();
    ops::resize_(&g, &[2, 3]).unwrap();
    assert_eq!(g.sizes(), &[2, 3]);
    dev.assert_values(&ops::select_int(&g, 0, 0).unwrap(), &[3], &[7i32, 8, 0]);
    ops::fill_scalar_(&view, Scalar::Int(5)).unwrap();
    dev.assert_values(&ops::select_int(&g, 0, 0).unwrap(), &[3], &[5i32, 5, 0]);
    ops::resize_(&view, &[6]).unwrap();
    assert!(view
        .base()
        .storage()
        .unwrap()
        .is_same(&g.base().storage().unwrap()));
    dev.assert_values(&view, &[6], &[5i32, 5, 0, 0, 0, 0]);
    // Shrinking keeps the storage; growing again finds the old values.
    ops::resize_(&g, &[1]).unwrap();
    ops::resize_(&g, &[8]).unwrap();
    dev.assert_values(&g, &[8], &[5i32, 5, 0, 0, 0, 0, 0, 0]);
    let cl = dev.tensor(&[0u8; 16], &[16]);
    ops::resize_with_(
        &cl,
        &[1, 2, 2, 4],
        ops::ResizeInplaceOptions {
            memory_format: Some(MemoryFormat::ChannelsLast),
        },
    )
    .unwrap();
    assert_eq!(strides(&cl), vec![16, 1, 8, 2]);
    let err = dev.assert_error(ops::resize_with_(
        &cl,
        &[2, 8],
        ops::ResizeInplaceOptions {
            memory_format: Some(MemoryFormat::ChannelsLast),
        },
    ));
    assert_eq!(err, "required rank 4 tensor to use channels_last format");
    let err = dev.assert_error(ops::resize_with_(
        &cl,
        &[2, 8],
        ops::ResizeInplaceOptions {
            memory_format: Some(MemoryFormat::Preserve),
        },
    ));
    assert_eq!(err, "Unsupported memory formatPreserve");
    let err = dev.assert_error(ops::resize_(&cl, &[-1]));
    assert!(err.contains("negative dimension -1"), "{err}");
    assert!(ops::resize_(&cl, &[i64::MAX, 4]).is_err());
    // The functional variant leaves its input alone.
    let f = dev.tensor(&[1i16, 2, 3], &[3]);
    let out = ops::resize(&f, &[1]).unwrap();
    assert_eq!(out.sizes(), &[1]);
    assert_eq!(f.sizes(), &[3]);
}

#[test]
fn local_scalar_dense_reads_the_one_element() {
    let dev = DeviceTest::CPU;
    let i = dev.tensor(&[-4i16, 9, 8], &[3]);
    let last = ops::slice_tensor_with(
        &i,
        ops::SliceTensorOptions {
            dim: 0,
            start: Some(2),
            end: None,
            step: 1,
        },
    )
    .unwrap();
    assert_eq!(ops::_local_scalar_dense(&last).unwrap(), Scalar::Int(8));
    let f = dev.tensor(&[1.5f64], &[1, 1]);
    assert_eq!(ops::_local_scalar_dense(&f).unwrap(), Scalar::Double(1.5));
    let h = dev.tensor(&[aten::c10::half::f16::from_f32(0.5)], &[]);
    assert_eq!(ops::_local_scalar_dense(&h).unwrap(), Scalar::Double(0.5));
    let b = dev.tensor(&[true], &[]);
    assert_eq!(ops::_local_scalar_dense(&b).unwrap(), Scalar::Bool(true));
    let u = dev.tensor(&[200u8], &[1]);
    assert_eq!(ops::_local_scalar_dense(&u).unwrap(), Scalar::Int(200));
    let c = dev.tensor(&[aten::c10::Complex::new(1.5f32, -2.0)], &[1]);
    assert_eq!(
        ops::_local_scalar_dense(&c).unwrap(),
        Scalar::ComplexDouble(aten::c10::Complex64::new(1.5, -2.0))
    );
    let err = ops::_local_scalar_dense(&i).unwrap_err();
    assert_eq!(
        err.message(),
        "a Tensor with 3 elements cannot be converted to Scalar"
    );
    let empty = dev.tensor::<f32>(&[], &[0]);
    assert!(ops::_local_scalar_dense(&empty).is_err());
}
