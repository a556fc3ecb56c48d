//! Structured reductions (`sum`, `mean`, `prod.dim_int`, `amax`, `amin`,
//! `argmax`, `argmin`, `max.dim`, `min.dim`, `all`, `any`, `any.dims`),
//! `var.dim`, and operations along one dimension (`cumsum`, `_softmax`,
//! `_log_softmax`) on every device the build has: one meta function gives
//! each member its output, dtype and errors.

use aten::c10::ScalarType;
use aten::core::testing::DeviceTest;
use aten::ops;

aten::instantiate_device_type_tests!(
    sums_and_means,
    extremes_and_indices,
    max_dim_fills_two_outputs,
    all_and_any,
    cumsum_members,
    softmax_members,
    argmin_takes_the_first_minimum,
    min_dim_values_and_indices,
    prod_over_one_dimension,
    any_over_all_and_several_dimensions,
    var_dim_is_var_with_a_correction,
);

fn sums_and_means(dev: DeviceTest) {
    let a = dev.tensor(&[1i32, 2, 3, 4, 5, 6], &[2, 3]);
    // Integers sum to int64.
    dev.assert_values(
        &ops::sum_dim_intlist(&a, Some(&[1])).unwrap(),
        &[2],
        &[6i64, 15],
    );
    let kept = ops::sum_dim_intlist_with(
        &a,
        Some(&[0]),
        ops::SumDimIntlistOptions {
            keepdim: true,
            dtype: Some(ScalarType::Double),
        },
    )
    .unwrap();
    dev.assert_values(&kept, &[1, 3], &[5.0f64, 7.0, 9.0]);
    // An out= of another dtype sets the dtype computed in.
    let out = dev.tensor(&[0.0f32; 2], &[2]);
    ops::sum_intlist_out(&a, Some(&[1]), false, None, &out).unwrap();
    dev.assert_values(&out, &[2], &[6.0f32, 15.0]);
    let err = dev.assert_error(ops::sum_dim_intlist(&a, Some(&[1, -1])));
    assert_eq!(err, "dim 1 appears multiple times in the list of dims");
    let f = dev.tensor(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]);
    dev.assert_values(
        &ops::mean_dim(&f, Some(&[0])).unwrap(),
        &[2],
        &[2.0f32, 3.0],
    );
    let err = dev.assert_error(ops::mean_dim(&a, None));
    assert_eq!(
        err,
        "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Int"
    );
}

fn extremes_and_indices(dev: DeviceTest) {
    let a = dev.tensor(&[3.0f32, -1.0, 7.0, 2.0, 9.0, 0.5], &[2, 3]);
    dev.assert_values(
        &ops::amax_with(
            &a,
            ops::AmaxOptions {
                dim: &[1],
                keepdim: false,
            },
        )
        .unwrap(),
        &[2],
        &[7.0f32, 9.0],
    );
    dev.assert_values(&ops::amin(&a).unwrap(), &[], &[-1.0f32]);
    dev.assert_values(&ops::argmax(&a).unwrap(), &[], &[4i64]);
    let kept = ops::argmax_with(
        &a,
        ops::ArgmaxOptions {
            dim: None,
            keepdim: true,
        },
    )
    .unwrap();
    dev.assert_values(&kept, &[1, 1], &[4i64]);
    let out = dev.tensor(&[0i32; 2], &[2]);
    let err = dev.assert_error(ops::amax_out(&a, &[1], false, &out));
    assert_eq!(
        err,
        "Expected the dtype for input and out to match, but got Float for input's dtype and Int for out's dtype."
    );
    let empty = dev.tensor::<f32>(&[], &[0, 3]);
    let err = dev.assert_error(ops::argmax(&empty));
    assert_eq!(
        err,
        "argmax(): Expected reduction dim to be specified for input.numel() == 0."
    );
    let err = dev.assert_error(ops::amax_with(
        &empty,
        ops::AmaxOptions {
            dim: &[0],
            keepdim: false,
        },
    ));
    assert_eq!(
        err,
        "amax(): Expected reduction dim 0 to have non-zero size."
    );
}

fn max_dim_fills_two_outputs(dev: DeviceTest) {
    let a = dev.tensor(&[3i64, 8, 1, 9, 2, 9], &[2, 3]);
    let (values, indices) = ops::max_dim(&a, 1).unwrap();
    dev.assert_values(&values, &[2], &[8i64, 9]);
    dev.assert_values(&indices, &[2], &[1i64, 0]);
    // Both outputs of out=: resized (empty ones, no warning) and written.
    let (max, at) = (dev.tensor::<i64>(&[], &[0]), dev.tensor::<i64>(&[], &[0]));
    let (v, i) = ops::max_dim_max(&a, 0, true, &max, &at).unwrap();
    assert!(v.base().is_same(max.base()) && i.base().is_same(at.base()));
    dev.assert_values(&max, &[1, 3], &[9i64, 8, 9]);
    dev.assert_values(&at, &[1, 3], &[1i64, 0, 1]);
    let wrong = dev.tensor::<i32>(&[], &[0]);
    let err = dev.assert_error(ops::max_dim_max(&a, 0, false, &max, &wrong));
    assert_eq!(
        err,
        "Expected out tensor to have dtype long int, but got int instead"
    );
}

fn all_and_any(dev: DeviceTest) {
    let a = dev.tensor(&[1.0f32, 0.0, 2.0, 3.0], &[2, 2]);
    dev.assert_values(&ops::all_dim(&a, 1).unwrap(), &[2], &[false, true]);
    dev.assert_values(&ops::any_dim(&a, 0).unwrap(), &[2], &[true, true]);
    // uint8 in, uint8 out.
    let b = dev.tensor(&[0u8, 0, 5, 0], &[2, 2]);
    dev.assert_values(&ops::any_dim(&b, 1).unwrap(), &[2], &[0u8, 1]);
    let out = dev.tensor(&[0.0f32; 2], &[2]);
    let err = dev.assert_error(ops::all_out(&a, 1, false, &out));
    assert_eq!(err, "all only supports bool tensor for result, got: Float");
}

fn cumsum_members(dev: DeviceTest) {
    let a = dev.tensor(&[1i32, 2, 3, 4, 5, 6], &[2, 3]);
    dev.assert_values(
        &ops::cumsum(&a, 1).unwrap(),
        &[2, 3],
        &[1i64, 3, 6, 4, 9, 15],
    );
    // In place keeps `self`'s dtype and writes through the view.
    let f = dev.tensor(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]);
    let t = f.t().unwrap();
    ops::cumsum_(&t, 1).unwrap();
    dev.assert_values(&f, &[2, 2], &[1.0f32, 2.0, 4.0, 6.0]);
    // In place, the accumulating dtype is `self`'s.
    ops::cumsum_(&a, 0).unwrap();
    dev.assert_values(&a, &[2, 3], &[1i32, 2, 3, 5, 7, 9]);
    let err = dev.assert_error(ops::cumsum(&a, 2));
    assert_eq!(
        err,
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)"
    );
}

fn softmax_members(dev: DeviceTest) {
    let a = dev.tensor(&[0.0f64, 0.0, 1.0, 1.0], &[2, 2]);
    dev.assert_values(
        &ops::_softmax(&a, 1, false).unwrap(),
        &[2, 2],
        &[0.5f64, 0.5, 0.5, 0.5],
    );
    let log = ops::_log_softmax(&a, 1, false).unwrap();
    dev.assert_values(&log, &[2, 2], &[-(2f64.ln()); 4]);
    // The last-dimension float path, into an out= through a temporary.
    let f = dev.tensor(&[1.0f32, 1.0, 1.0, 1.0], &[1, 4]);
    let out = dev.tensor(&[0.0f32; 4], &[4, 1]).t().unwrap();
    ops::_softmax_out(&f, -1, false, &out).unwrap();
    dev.assert_values(&ops::contiguous(&out).unwrap(), &[1, 4], &[0.25f32; 4]);
    // bfloat16 along the last dimension: PyTorch rounds each row's sum of
    // exponentials and its log to bfloat16 before subtracting (-0.0459
    // where one rounding of the exact value gives -0.0474); along another
    // dimension they stay in float.
    let to = |t: &aten::Tensor, dtype| {
        ops::_to_copy_with(
            t,
            ops::ToCopyOptions {
                dtype: Some(dtype),
                ..Default::default()
            },
        )
        .unwrap()
    };
    let row = to(
        &dev.tensor(&[-1.5f32, 2.0, -2.0], &[1, 3]),
        ScalarType::BFloat16,
    );
    for (t, dim, expected) in [
        (row.clone(), -1, [-3.546875f64, -0.0458984375, -4.03125]),
        (row.t().unwrap(), 0, [-3.546875f64, -0.04736328125, -4.0625]),
    ] {
        let log = ops::_log_softmax(&t, dim, false).unwrap();
        assert_eq!(log.dtype(), Some(ScalarType::BFloat16));
        let log = ops::reshape(&to(&log, ScalarType::Double), &[3]).unwrap();
        dev.assert_values(&log, &[3], &expected);
    }
    // Half-to-float: the meta function says float; CPU refuses it.
    if let Some(err) = dev.assert_data_error(ops::_softmax(&f, 1, true)) {
        assert_eq!(
            err,
            "softmax with half to float conversion is not supported on CPU"
        );
    }
}

#[test]
fn unstructured_reductions_on_meta() {
    let dev = DeviceTest::META;
    let a = dev.tensor(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]);
    dev.assert_values::<f32>(&ops::prod(&a).unwrap(), &[], &[]);
    let v = ops::var_correction_with(
        &a,
        ops::VarCorrectionOptions {
            dim: Some(&[1]),
            correction: None,
            keepdim: true,
        },
    )
    .unwrap();
    dev.assert_values::<f32>(&v, &[2, 1], &[]);
}

fn argmin_takes_the_first_minimum(dev: DeviceTest) {
    // Ties: the first index in logical order, also through a transposed
    // layout.
    let a = dev.tensor(&[3i16, -1, 7, -1, 9, -1], &[2, 3]);
    dev.assert_values(&ops::argmin(&a).unwrap(), &[], &[1i64]);
    let t = a.t().unwrap();
    let by_col = ops::argmin_with(
        &t,
        ops::ArgminOptions {
            dim: Some(-1),
            keepdim: true,
        },
    )
    .unwrap();
    dev.assert_values(&by_col, &[3, 1], &[1i64, 0, 1]);
    // NaN is the minimum.
    let f = dev.tensor(&[1.0f64, f64::NAN, -5.0], &[3]);
    dev.assert_values(&ops::argmin(&f).unwrap(), &[], &[1i64]);
    // A 0-dim input and dim 0 / -1.
    let s = dev.tensor(&[4.0f32], &[]);
    let at = ops::argmin_with(
        &s,
        ops::ArgminOptions {
            dim: Some(-1),
            keepdim: true,
        },
    )
    .unwrap();
    dev.assert_values(&at, &[], &[0i64]);
    let empty = dev.tensor::<f32>(&[], &[0, 3]);
    let err = dev.assert_error(ops::argmin(&empty));
    assert_eq!(
        err,
        "argmin(): Expected reduction dim to be specified for input.numel() == 0."
    );
    let err = dev.assert_error(ops::argmin_with(
        &empty,
        ops::ArgminOptions {
            dim: Some(0),
            keepdim: false,
        },
    ));
    assert_eq!(
        err,
        "argmin(): Expected reduction dim 0 to have non-zero size."
    );
    let b = dev.tensor(&[true, false], &[2]);
    if let Some(err) = dev.assert_data_error(ops::argmin(&b)) {
        assert_eq!(err, "\"argmin_cpu\" not implemented for 'Bool'");
    }
}

fn min_dim_values_and_indices(dev: DeviceTest) {
    let a = dev.tensor(&[3u8, 8, 1, 9, 2, 0], &[2, 3]);
    let (values, indices) = ops::min_dim(&a, 1).unwrap();
    dev.assert_values(&values, &[2], &[1u8, 0]);
    dev.assert_values(&indices, &[2], &[2i64, 2]);
    let (values, indices) =
        ops::min_dim_with(&a, -2, ops::MinDimOptions { keepdim: true }).unwrap();
    dev.assert_values(&values, &[1, 3], &[3u8, 2, 0]);
    dev.assert_values(&indices, &[1, 3], &[0i64, 1, 1]);
    // Bool inputs are ordered too.
    let b = dev.tensor(&[true, false, true], &[3]);
    let (values, indices) = ops::min_dim(&b, 0).unwrap();
    dev.assert_values(&values, &[], &[false]);
    dev.assert_values(&indices, &[], &[1i64]);
    // Out= members are resized and written.
    let (min, at) = (dev.tensor::<u8>(&[], &[0]), dev.tensor::<i64>(&[], &[0]));
    ops::min_dim_min(&a, 0, false, &min, &at).unwrap();
    dev.assert_values(&min, &[3], &[3u8, 2, 0]);
    dev.assert_values(&at, &[3], &[0i64, 1, 1]);
    let empty = dev.tensor::<f32>(&[], &[2, 0]);
    let err = dev.assert_error(ops::min_dim(&empty, 1));
    assert_eq!(
        err,
        "min(): Expected reduction dim 1 to have non-zero size."
    );
    let err = dev.assert_error(ops::min_dim(&a, 2));
    assert_eq!(
        err,
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)"
    );
}

fn prod_over_one_dimension(dev: DeviceTest) {
    let a = dev.tensor(&[1i32, 2, 3, 4, 5, 6], &[2, 3]);
    // Integers multiply in int64.
    dev.assert_values(&ops::prod_dim_int(&a, 1).unwrap(), &[2], &[6i64, 120]);
    let kept = ops::prod_dim_int_with(
        &a,
        0,
        ops::ProdDimIntOptions {
            keepdim: true,
            dtype: Some(ScalarType::Double),
        },
    )
    .unwrap();
    dev.assert_values(&kept, &[1, 3], &[4.0f64, 10.0, 18.0]);
    // An empty dimension gives the identity; a 0-dim input itself.
    let empty = dev.tensor::<f32>(&[], &[2, 0]);
    dev.assert_values(&ops::prod_dim_int(&empty, 1).unwrap(), &[2], &[1.0f32, 1.0]);
    let s = dev.tensor(&[-3i16], &[]);
    dev.assert_values(&ops::prod_dim_int(&s, -1).unwrap(), &[], &[-3i64]);
    // An out= of another dtype sets the dtype computed in.
    let out = dev.tensor(&[0.0f32; 2], &[2]);
    ops::prod_int_out(&a, 1, false, None, &out).unwrap();
    dev.assert_values(&out, &[2], &[6.0f32, 120.0]);
}

fn any_over_all_and_several_dimensions(dev: DeviceTest) {
    let a = dev.tensor(&[0.0f32, 0.0, 0.5, 0.0, 0.0, 0.0], &[2, 3]);
    dev.assert_values(&ops::any(&a).unwrap(), &[], &[true]);
    let zeros = dev.tensor(&[0i64; 4], &[2, 2]);
    dev.assert_values(&ops::any(&zeros).unwrap(), &[], &[false]);
    // uint8 inputs give uint8 results.
    let bytes = dev.tensor(&[0u8, 7, 0, 0], &[2, 2]);
    dev.assert_values(&ops::any(&bytes).unwrap(), &[], &[1u8]);
    let over = |t, dim: Option<&[i64]>, keepdim| {
        ops::any_dims_with(t, ops::AnyDimsOptions { dim, keepdim }).unwrap()
    };
    dev.assert_values(&over(&a, Some(&[0, 1]), true), &[1, 1], &[true]);
    dev.assert_values(&over(&a, Some(&[-1]), false), &[2], &[true, false]);
    dev.assert_values(&over(&a, None, false), &[], &[true]);
    // An empty list reduces nothing: each element as bool (uint8 0/1).
    dev.assert_values(
        &over(&a, Some(&[]), false),
        &[2, 3],
        &[false, false, true, false, false, false],
    );
    dev.assert_values(&over(&bytes, Some(&[]), false), &[2, 2], &[0u8, 1, 0, 0]);
    // Empty inputs: false everywhere.
    let empty = dev.tensor::<f32>(&[], &[0, 2]);
    dev.assert_values(&over(&empty, Some(&[0]), false), &[2], &[false, false]);
    dev.assert_values(&ops::any(&empty).unwrap(), &[], &[false]);
    let err = dev.assert_error(ops::any_dims_with(
        &a,
        ops::AnyDimsOptions {
            dim: Some(&[1, -1]),
            keepdim: false,
        },
    ));
    assert_eq!(err, "dim 1 appears multiple times in the list of dims");
    // The out= members: bool or uint8 outputs only.
    let out = dev.tensor::<bool>(&[], &[0]);
    ops::any_all_out(&a, &out).unwrap();
    dev.assert_values(&out, &[], &[true]);
    let wrong = dev.tensor::<f32>(&[], &[0]);
    let err = dev.assert_error(ops::any_all_out(&a, &wrong));
    assert_eq!(err, "any only supports bool tensor for result, got: Float");
    let out = dev.tensor::<bool>(&[], &[0]);
    ops::any_dims_out(&a, Some(&[1]), true, &out).unwrap();
    dev.assert_values(&out, &[2, 1], &[true, false]);
}

fn var_dim_is_var_with_a_correction(dev: DeviceTest) {
    let a = dev.tensor(&[1.0f64, 2.0, 3.0, 4.0, 6.0, 8.0], &[2, 3]);
    dev.assert_values(&ops::var_dim(&a, Some(&[1])).unwrap(), &[2], &[1.0f64, 4.0]);
    let biased = ops::var_dim_with(
        &a,
        Some(&[1]),
        ops::VarDimOptions {
            unbiased: false,
            keepdim: true,
        },
    )
    .unwrap();
    dev.assert_values(&biased, &[2, 1], &[2.0 / 3.0, 8.0 / 3.0]);
    // `None` and `[]` reduce every dimension.
    let all = ops::var_dim(&a, Some(&[])).unwrap();
    assert_eq!(all.sizes(), &[] as &[i64]);
    let err = dev.assert_error(ops::var_dim(&dev.tensor(&[1i32, 2], &[2]), None));
    assert_eq!(
        err,
        "std and var only support floating point and complex dtypes, got: Int"
    );
}
