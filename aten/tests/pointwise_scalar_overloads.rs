//! The Core ATen pointwise overloads built over other operators or with
//! scalar parameters, on every device: `clamp.Tensor` (tensor bounds,
//! broadcasting, promotion, NaN bounds), the `Scalar` overloads of `div`
//! (rounding modes), `fmod` and the bitwise operators, `pow.Scalar`,
//! `isnan` / `isinf`, `relu`, `hardtanh`, `elu` and `leaky_relu`, with PyTorch's
//! errors.

use aten::core::testing::DeviceTest;
use aten::{ops, Scalar, ScalarType, Tensor};

aten::instantiate_device_type_tests!(
    clamp_between_tensor_bounds,
    scalar_overloads_wrap_the_scalar,
    float_classes_and_activations,
);

fn clamp_between_tensor_bounds(dev: DeviceTest) {
    let x = dev.tensor(&[-3.0f32, 0.5, 7.0, f32::NAN], &[4]);
    let lo = dev.tensor(&[-1.0f32], &[1]);
    let hi = dev.tensor(&[1.0f32, 1.0, 8.0, 1.0], &[4]);
    let both = ops::clamp_tensor_with(
        &x,
        ops::ClampTensorOptions {
            min: Some(&lo),
            max: Some(&hi),
        },
    )
    .unwrap();
    assert_eq!(both.sizes(), &[4]);
    if dev.has_data() {
        let v = both.to_vec::<f32>().unwrap();
        assert_eq!(&v[..3], &[-1.0, 0.5, 7.0]);
        assert!(v[3].is_nan());
    }
    // A NaN bound gives NaN; one bound is `maximum` / `minimum`.
    let nan_hi = dev.tensor(&[f32::NAN], &[1]);
    let r = ops::clamp_tensor_with(
        &dev.tensor(&[2.0f32], &[1]),
        ops::ClampTensorOptions {
            min: Some(&lo),
            max: Some(&nan_hi),
        },
    )
    .unwrap();
    if dev.has_data() {
        assert!(r.to_vec::<f32>().unwrap()[0].is_nan());
    }
    let ints = dev.tensor(&[1i64, 5, 9], &[3]);
    let r = ops::clamp_tensor_with(
        &ints,
        ops::ClampTensorOptions {
            min: Some(&dev.tensor(&[4i64], &[])),
            max: None,
        },
    )
    .unwrap();
    dev.assert_values(&r, &[3], &[4i64, 5, 9]);
    // Bounds take part in promotion: int64 with a float bound is float.
    let r = ops::clamp_tensor_with(
        &ints,
        ops::ClampTensorOptions {
            min: None,
            max: Some(&dev.tensor(&[4.5f32], &[1])),
        },
    )
    .unwrap();
    dev.assert_values(&r, &[3], &[1.0f32, 4.5, 4.5]);
    // An in-place clamp cannot change `self`'s dtype.
    let e = dev.assert_error(ops::clamp_tensor_with_(
        &ints,
        ops::ClampTensorInplaceOptions {
            min: None,
            max: Some(&dev.tensor(&[4.5f32], &[1])),
        },
    ));
    assert!(
        e.contains("can't be cast to the desired output type Long"),
        "{e}"
    );
    let e = dev.assert_error(ops::clamp_tensor(&x));
    assert_eq!(
        e,
        "torch.clamp: At least one of 'min' or 'max' must not be None"
    );
    let flags = dev.tensor(&[true, false], &[2]);
    let e = dev.assert_data_error(ops::clamp_tensor_with(
        &flags,
        ops::ClampTensorOptions {
            min: Some(&flags),
            max: Some(&flags),
        },
    ));
    if let Some(e) = e {
        assert_eq!(e, "\"clamp_cpu\" not implemented for 'Bool'");
    }
}

fn scalar_overloads_wrap_the_scalar(dev: DeviceTest) {
    let x = dev.tensor(&[-7i64, 7], &[2]);
    let r = ops::div_scalar_mode(&x, Scalar::Int(2), Some("floor")).unwrap();
    dev.assert_values(&r, &[2], &[-4i64, 3]);
    let r = ops::div_scalar_mode(&x, Scalar::Int(2), Some("trunc")).unwrap();
    dev.assert_values(&r, &[2], &[-3i64, 3]);
    let r = ops::div_scalar_mode(&x, Scalar::Int(2), None).unwrap();
    dev.assert_values(&r, &[2], &[-3.5f32, 3.5]);
    let e = dev.assert_error(ops::div_scalar_mode(&x, Scalar::Int(2), Some("round")));
    assert!(e.contains("rounding_mode"), "{e}");
    // The scalar is a wrapped number: it does not widen an int32 tensor.
    let small = dev.tensor(&[5i32, -5], &[2]);
    dev.assert_values(
        &ops::fmod_scalar(&small, Scalar::Int(3)).unwrap(),
        &[2],
        &[2i32, -2],
    );
    dev.assert_values(
        &ops::bitwise_and_scalar(&small, Scalar::Int(6)).unwrap(),
        &[2],
        &[4i32, 2],
    );
    dev.assert_values(
        &ops::bitwise_or_scalar(&small, Scalar::Int(2)).unwrap(),
        &[2],
        &[7i32, -5],
    );
    dev.assert_values(
        &ops::bitwise_xor_scalar(&small, Scalar::Int(1)).unwrap(),
        &[2],
        &[4i32, -6],
    );
    if let Some(e) = dev.assert_data_error(ops::bitwise_and_scalar(
        &dev.tensor(&[1.0f32], &[1]),
        Scalar::Int(1),
    )) {
        assert!(e.contains("not implemented for 'Float'"), "{e}");
    }
    // pow.Scalar: a base of one is all ones; else the promoted power.
    let e2 = dev.tensor(&[0i64, 1, 3], &[3]);
    dev.assert_values(
        &ops::pow_scalar(Scalar::Int(2), &e2).unwrap(),
        &[3],
        &[1i64, 2, 8],
    );
    dev.assert_values(
        &ops::pow_scalar(Scalar::Double(2.0), &e2).unwrap(),
        &[3],
        &[1.0f32, 2.0, 8.0],
    );
    dev.assert_values(
        &ops::pow_scalar(Scalar::Int(1), &e2).unwrap(),
        &[3],
        &[1i64, 1, 1],
    );
    let t = ops::t(&dev.tensor(&[1.0f64, 2.0, 3.0, 4.0], &[2, 2])).unwrap();
    let r = ops::pow_scalar(Scalar::Int(2), &t).unwrap();
    assert_eq!(r.strides(), &[2, 1]);
    dev.assert_values(&r, &[2, 2], &[2.0f64, 8.0, 4.0, 16.0]);
    // An empty input in a permuted order: the output follows the order,
    // and the strides past its empty dimension are 0 (PyTorch's
    // `compatible_stride`); in the natural order they are contiguous ones.
    let empty = dev.tensor::<f32>(&[], &[0]);
    let permuted = ops::as_strided(&empty, &[4, 5, 0], &[5, 1, 2]).unwrap();
    let r = ops::div_scalar_mode(&permuted, Scalar::Double(-0.0), Some("trunc")).unwrap();
    assert_eq!(r.sizes(), &[4, 5, 0]);
    assert_eq!(r.strides(), &[0, 1, 5]);
    let natural = ops::as_strided(&empty, &[4, 0, 5], &[5, 5, 1]).unwrap();
    let r = ops::mul_scalar(&natural, Scalar::Int(2)).unwrap();
    assert_eq!(r.strides(), &[5, 5, 1]);
}

fn float_classes_and_activations(dev: DeviceTest) {
    let x = dev.tensor(&[f32::NAN, f32::INFINITY, -f32::INFINITY, 1.0, -2.0], &[5]);
    dev.assert_values(
        &ops::isnan(&x).unwrap(),
        &[5],
        &[true, false, false, false, false],
    );
    dev.assert_values(
        &ops::isinf(&x).unwrap(),
        &[5],
        &[false, true, true, false, false],
    );
    let ints = dev.tensor(&[3i64, -3], &[2]);
    dev.assert_values(&ops::isinf(&ints).unwrap(), &[2], &[false, false]);
    dev.assert_values(&ops::isnan(&ints).unwrap(), &[2], &[false, false]);

    let h = ops::hardtanh(&dev.tensor(&[-3.0f32, 0.25, 2.0], &[3])).unwrap();
    dev.assert_values(&h, &[3], &[-1.0f32, 0.25, 1.0]);
    let h = ops::hardtanh_with(
        &ints,
        ops::HardtanhOptions {
            min_val: Scalar::Double(-1.5),
            max_val: Scalar::Double(2.5),
        },
    )
    .unwrap();
    dev.assert_values(&h, &[2], &[2i64, -1]);
    let e = dev.assert_error(ops::relu(&dev.tensor(&[true], &[1])));
    assert_eq!(e, "Boolean inputs not supported for relu");
    let e = dev.assert_error(ops::relu_(&dev.tensor(&[false], &[1])));
    assert_eq!(e, "Boolean inputs not supported for relu");
    let e = dev.assert_error(ops::hardtanh(&dev.tensor(&[true], &[1])));
    assert_eq!(e, "Bool inputs not supported for hardtanh");
    let e = dev.assert_error(ops::hardtanh(&dev.tensor(&[1u8], &[1])));
    assert_eq!(
        e,
        "cannot do hardtanh on an unsigned type with negative limits"
    );

    let v = dev.tensor(&[-1.0f64, 0.0, 2.0], &[3]);
    let y = ops::elu_with(
        &v,
        ops::EluOptions {
            alpha: Scalar::Double(0.5),
            scale: Scalar::Double(2.0),
            input_scale: Scalar::Double(3.0),
        },
    )
    .unwrap();
    dev.assert_values(&y, &[3], &[((-3.0f64).exp() - 1.0) * 1.0, 0.0, 4.0]);
    let y = ops::leaky_relu_with(
        &v,
        ops::LeakyReluOptions {
            negative_slope: Scalar::Double(0.25),
        },
    )
    .unwrap();
    dev.assert_values(&y, &[3], &[-0.25f64, 0.0, 2.0]);
    let half = ops::_to_copy_with(
        &v,
        ops::ToCopyOptions {
            dtype: Some(ScalarType::BFloat16),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        ops::leaky_relu(&half).unwrap().dtype(),
        Some(ScalarType::BFloat16)
    );
    // The dtype is checked by the kernels, as in PyTorch (Meta has none).
    if let Some(e) = dev.assert_data_error(ops::elu(&ints)) {
        assert_eq!(e, "\"elu_cpu\" not implemented for 'Long'");
    }
    if let Some(e) = dev.assert_data_error(ops::leaky_relu(&ints)) {
        assert_eq!(e, "\"leaky_relu_cpu\" not implemented for 'Long'");
    }
    let _: Tensor = y;
}
