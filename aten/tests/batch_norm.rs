//! Batch normalization's Core ATen forms (`_native_batch_norm_legit`, its
//! `no_stats` overload and `_native_batch_norm_legit_no_training`) on
//! every device: values against the formula, the running statistics a
//! training call updates, the outputs' layouts, mixed reduced-precision
//! calls, and PyTorch's argument errors.

use aten::core::testing::DeviceTest;
use aten::{ops, ScalarType, Tensor};

aten::instantiate_device_type_tests!(
    evaluation_uses_the_running_statistics,
    training_uses_and_updates_the_batch_statistics,
    layouts_and_mixed_dtypes,
    bad_arguments_are_errors,
);

fn values(t: &Tensor) -> Vec<f64> {
    ops::_to_copy_with(
        t,
        ops::ToCopyOptions {
            dtype: Some(ScalarType::Double),
            ..Default::default()
        },
    )
    .unwrap()
    .to_vec::<f64>()
    .unwrap()
}

fn assert_close(got: &[f64], expected: &[f64]) {
    assert_eq!(got.len(), expected.len());
    for (g, e) in got.iter().zip(expected) {
        assert!(
            (g - e).abs() <= 1e-5 * (1.0 + e.abs()),
            "{got:?} != {expected:?}"
        );
    }
}

/// `x` of shape `[2, 2, 3]` and the expected output per element.
fn input(dev: &DeviceTest) -> (Tensor, Vec<f64>) {
    let x: Vec<f64> = (0..12).map(|i| f64::from(i * 5 % 7) - 3.0).collect();
    (dev.tensor(&x, &[2, 2, 3]), x)
}

fn evaluation_uses_the_running_statistics(dev: DeviceTest) {
    let (x, xs) = input(&dev);
    let (w, b) = (
        dev.tensor(&[2.0f64, -1.0], &[2]),
        dev.tensor(&[0.5f64, 1.0], &[2]),
    );
    let (rm, rv) = (
        dev.tensor(&[1.0f64, -2.0], &[2]),
        dev.tensor(&[4.0f64, 0.25], &[2]),
    );
    let eps = 1e-3;
    let (y, mean, invstd) =
        ops::_native_batch_norm_legit_no_training(&x, Some(&w), Some(&b), &rm, &rv, 0.1, eps)
            .unwrap();
    assert_eq!(y.sizes(), &[2, 2, 3]);
    assert_eq!(mean.sizes(), &[0]);
    assert_eq!(invstd.sizes(), &[0]);
    let (m, v, wv, bv) = ([1.0, -2.0], [4.0, 0.25], [2.0, -1.0], [0.5, 1.0]);
    let expected: Vec<f64> = xs
        .iter()
        .enumerate()
        .map(|(i, x)| {
            let c = i / 3 % 2;
            (x - m[c]) / (v[c] + eps).sqrt() * wv[c] + bv[c]
        })
        .collect();
    if dev.has_data() {
        assert_close(&values(&y), &expected);
        // Without training the running statistics stay as they were.
        assert_eq!(values(&rm), [1.0, -2.0]);
    }
    // The legit form without training is the same call.
    let (y2, ..) =
        ops::_native_batch_norm_legit(&x, Some(&w), Some(&b), &rm, &rv, false, 0.1, eps).unwrap();
    if dev.has_data() {
        assert_close(&values(&y2), &expected);
    }
}

fn training_uses_and_updates_the_batch_statistics(dev: DeviceTest) {
    let (x, xs) = input(&dev);
    let (rm, rv) = (
        dev.tensor(&[1.0f64, -2.0], &[2]),
        dev.tensor(&[4.0f64, 0.25], &[2]),
    );
    let (momentum, eps) = (0.25, 1e-5);
    let (y, mean, invstd) =
        ops::_native_batch_norm_legit(&x, None, None, &rm, &rv, true, momentum, eps).unwrap();
    assert_eq!(mean.sizes(), &[2]);
    assert_eq!(invstd.sizes(), &[2]);
    if !dev.has_data() {
        return;
    }
    let channel = |c: usize| -> Vec<f64> {
        xs.iter()
            .enumerate()
            .filter(|(i, _)| i / 3 % 2 == c)
            .map(|(_, v)| *v)
            .collect()
    };
    let mut expected_mean = vec![];
    let mut expected_invstd = vec![];
    let mut expected_rv = vec![];
    for c in 0..2 {
        let v = channel(c);
        let n = v.len() as f64;
        let m = v.iter().sum::<f64>() / n;
        let ss: f64 = v.iter().map(|x| (x - m).powi(2)).sum();
        expected_mean.push(m);
        expected_invstd.push(1.0 / (ss / n + eps).sqrt());
        expected_rv.push(momentum * ss / (n - 1.0) + (1.0 - momentum) * [4.0, 0.25][c]);
    }
    assert_close(&values(&mean), &expected_mean);
    assert_close(&values(&invstd), &expected_invstd);
    let expected_rm: Vec<f64> = (0..2)
        .map(|c| momentum * expected_mean[c] + (1.0 - momentum) * [1.0, -2.0][c])
        .collect();
    assert_close(&values(&rm), &expected_rm);
    assert_close(&values(&rv), &expected_rv);
    let expected_y: Vec<f64> = xs
        .iter()
        .enumerate()
        .map(|(i, x)| {
            let c = i / 3 % 2;
            (x - expected_mean[c]) * expected_invstd[c]
        })
        .collect();
    assert_close(&values(&y), &expected_y);
    // `no_stats` normalizes the same way and updates nothing.
    let (y2, mean2, _) =
        ops::_native_batch_norm_legit_no_stats(&x, None, None, true, momentum, eps).unwrap();
    assert_close(&values(&y2), &expected_y);
    assert_close(&values(&mean2), &expected_mean);
}

fn layouts_and_mixed_dtypes(dev: DeviceTest) {
    // A channels-last input keeps its layout; a transposed one does not.
    let x = ops::permute(&dev.tensor(&[0.5f32; 24], &[2, 2, 3, 2]), &[0, 3, 1, 2]).unwrap();
    assert_eq!(x.strides(), &[12, 1, 6, 2]);
    let (rm, rv) = (
        dev.tensor(&[0.0f32; 2], &[2]),
        dev.tensor(&[1.0f32; 2], &[2]),
    );
    let (y, ..) =
        ops::_native_batch_norm_legit_no_training(&x, None, None, &rm, &rv, 0.1, 1e-5).unwrap();
    assert_eq!(y.strides(), x.strides());
    let xt = ops::t(&dev.tensor(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])).unwrap();
    let (yt, ..) =
        ops::_native_batch_norm_legit_no_training(&xt, None, None, &rm, &rv, 0.1, 0.0).unwrap();
    assert_eq!(yt.strides(), &[2, 1]);
    if dev.has_data() {
        assert_close(&values(&yt), &[1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    }
    // bfloat16 data with float32 parameters: float32 statistics.
    let xb = ops::_to_copy_with(
        &xt,
        ops::ToCopyOptions {
            dtype: Some(ScalarType::BFloat16),
            ..Default::default()
        },
    )
    .unwrap();
    let (yb, mean, _) =
        ops::_native_batch_norm_legit(&xb, None, None, &rm, &rv, true, 0.0, 0.0).unwrap();
    assert_eq!(yb.dtype(), Some(ScalarType::BFloat16));
    assert_eq!(mean.dtype(), Some(ScalarType::Float));
    if dev.has_data() {
        assert_close(&values(&mean), &[2.0, 5.0]);
    }
}

fn bad_arguments_are_errors(dev: DeviceTest) {
    let (x, _) = input(&dev);
    let (rm, rv) = (
        dev.tensor(&[0.0f64; 2], &[2]),
        dev.tensor(&[1.0f64; 2], &[2]),
    );
    let three = dev.tensor(&[1.0f64; 3], &[3]);
    let e = dev.assert_error(ops::_native_batch_norm_legit(
        &x,
        Some(&three),
        None,
        &rm,
        &rv,
        false,
        0.1,
        1e-5,
    ));
    assert_eq!(e, "weight should contain 2 elements not 3");
    let f32_rm = dev.tensor(&[0.0f32; 2], &[2]);
    let e = dev.assert_error(ops::_native_batch_norm_legit(
        &x, None, None, &f32_rm, &rv, false, 0.1, 1e-5,
    ));
    assert_eq!(e, "mixed dtype (CPU): all inputs must share same datatype.");
    let e = dev.assert_error(ops::_native_batch_norm_legit_no_stats(
        &x, None, None, false, 0.1, 1e-5,
    ));
    assert_eq!(e, "running_mean must be defined in evaluation mode");
    let ints = dev.tensor(&[1i64; 4], &[2, 2]);
    let e = dev.assert_error(ops::_native_batch_norm_legit_no_stats(
        &ints, None, None, true, 0.1, 1e-5,
    ));
    assert_eq!(e, "\"batch_norm\" not implemented for 'Long'");
    let empty = dev.tensor::<f64>(&[], &[0, 2]);
    let e = dev.assert_error(ops::_native_batch_norm_legit_no_stats(
        &empty, None, None, true, 0.1, 1e-5,
    ));
    assert_eq!(
        e,
        "input tensor must have at least one element, but got input_sizes = [0, 2]"
    );
    let vector = dev.tensor(&[1.0f64; 2], &[2]);
    assert!(ops::_native_batch_norm_legit_no_stats(&vector, None, None, true, 0.1, 1e-5).is_err());
}
