//! Structured reductions (`sum`, `mean`, `amax`, `amin`, `argmax`,
//! `max.dim`, `all`, `any`) and operations along one dimension (`cumsum`,
//! `_softmax`, `_log_softmax`) on every device the build has: one meta
//! function gives each member its output, dtype and errors.

use aten::c10::ScalarType;
use aten::core::testing::DeviceTest;
use aten::ops;

aten::core::instantiate_device_type_tests!(
    sums_and_means,
    extremes_and_indices,
    max_dim_fills_two_outputs,
    all_and_any,
    cumsum_members,
    softmax_members,
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
