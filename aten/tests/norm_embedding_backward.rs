//! The backward operators of embedding, layer norm and group norm
//! (`embedding_dense_backward`, `native_layer_norm_backward`,
//! `native_group_norm_backward`) on every device: the gradients' shapes,
//! dtypes and layouts (PyTorch's CPU kernel's, on Meta too), undefined
//! gradients where `output_mask` switches them off, values against the
//! formulas, and PyTorch's argument errors.

use aten::core::testing::DeviceTest;
use aten::{ops, ScalarType, Tensor};

aten::instantiate_device_type_tests!(
    embedding_dense_backward_adds_rows_per_index,
    embedding_dense_backward_bad_arguments,
    layer_norm_backward_gradients_and_layouts,
    layer_norm_backward_bad_arguments,
    group_norm_backward_gradients_and_layouts,
    group_norm_backward_channels_last_and_empty,
    group_norm_backward_bad_arguments,
);

fn values(t: &Tensor) -> Vec<f64> {
    cast(t, ScalarType::Double).to_vec::<f64>().unwrap()
}

fn cast(t: &Tensor, dtype: ScalarType) -> Tensor {
    ops::_to_copy_with(
        t,
        ops::ToCopyOptions {
            dtype: Some(dtype),
            ..Default::default()
        },
    )
    .unwrap()
}

fn assert_close(got: &[f64], expected: &[f64]) {
    assert_eq!(got.len(), expected.len());
    for (g, e) in got.iter().zip(expected) {
        assert!(
            (g - e).abs() <= 1e-9 * (1.0 + e.abs()),
            "{got:?} != {expected:?}"
        );
    }
}

/// `[0.5 * i - 1, ...]` of `n` values (distinct, both signs).
fn ramp(n: usize) -> Vec<f64> {
    (0..n).map(|i| 0.5 * i as f64 - 1.0).collect()
}

fn embedding_dense_backward_adds_rows_per_index(dev: DeviceTest) {
    // Rows 0..3 of a transposed grad: row i is [i, 10 + i].
    let grad = ops::t(&dev.tensor(&[0.0f64, 1.0, 2.0, 10.0, 11.0, 12.0], &[2, 3])).unwrap();
    let indices = dev.tensor(&[1i64, 0, 1], &[3]);
    let gw = ops::embedding_dense_backward(&grad, &indices, 3, -1, false).unwrap();
    assert_eq!(gw.strides(), &[2, 1]);
    dev.assert_values(&gw, &[3, 2], &[1.0f64, 11.0, 2.0, 22.0, 0.0, 0.0]);
    // The padding row gets nothing; a repeated index is divided by its count.
    let padded = ops::embedding_dense_backward(&grad, &indices, 3, 1, false).unwrap();
    dev.assert_values(&padded, &[3, 2], &[1.0f64, 11.0, 0.0, 0.0, 0.0, 0.0]);
    let scaled = ops::embedding_dense_backward(&grad, &indices, 3, -1, true).unwrap();
    dev.assert_values(&scaled, &[3, 2], &[1.0f64, 11.0, 1.0, 11.0, 0.0, 0.0]);
    // int32 indices of any shape; the grad's dtype.
    let grad = cast(&dev.tensor(&ramp(8), &[2, 2, 2]), ScalarType::Half);
    let indices = dev.tensor(&[3i32, 3, 0, 3], &[2, 2]);
    let gw = ops::embedding_dense_backward(&grad, &indices, 5, -1, false).unwrap();
    assert_eq!(gw.sizes(), &[5, 2]);
    assert_eq!(gw.dtype(), Some(ScalarType::Half));
    if dev.has_data() {
        assert_eq!(
            values(&gw),
            [1.0, 1.5, 0.0, 0.0, 0.0, 0.0, 1.0, 2.5, 0.0, 0.0]
        );
    }
    // No indices: zeros.
    let none = ops::embedding_dense_backward(
        &dev.tensor::<f32>(&[], &[0, 4]),
        &dev.tensor::<i64>(&[], &[0]),
        2,
        -1,
        true,
    )
    .unwrap();
    dev.assert_values(&none, &[2, 4], &[0.0f32; 8]);
}

fn embedding_dense_backward_bad_arguments(dev: DeviceTest) {
    let grad = dev.tensor(&ramp(6), &[3, 2]);
    let float_indices = dev.tensor(&[0.0f32, 1.0, 0.0], &[3]);
    assert_eq!(
        dev.assert_error(ops::embedding_dense_backward(&grad, &float_indices, 2, -1, false)),
        "Expected tensor for argument #2 'indices' to have one of the following scalar types: Long, Int; but got torch.FloatTensor instead (while checking arguments for embedding_backward)"
    );
    let indices = dev.tensor(&[0i64, 1], &[2]);
    assert_eq!(
        dev.assert_error(ops::embedding_dense_backward(&grad, &indices, 2, -1, false)),
        "shape '[2, 2]' is invalid for input of size 6"
    );
    let scalar = dev.tensor(&[1.0f64], &[]);
    assert_eq!(
        dev.assert_error(ops::embedding_dense_backward(
            &scalar, &indices, 2, -1, false
        )),
        "dimension specified as -1 but tensor has no dimensions"
    );
    let indices = dev.tensor(&[0i64, 1, 1], &[3]);
    let negative = dev.assert_error(ops::embedding_dense_backward(
        &grad, &indices, -2, -1, false,
    ));
    assert!(negative.contains("negative dimension -2"), "{negative}");
}

/// A normalization's forward statistics of `x` in rows of `len` values:
/// the mean and rstd it saves.
fn norm_stats(x: &[f64], len: usize) -> (Vec<f64>, Vec<f64>) {
    let eps = 1e-5;
    x.chunks(len)
        .map(|row| {
            let n = len as f64;
            let mean = row.iter().sum::<f64>() / n;
            let var = row.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
            (mean, 1.0 / (var + eps).sqrt())
        })
        .unzip()
}

fn layer_norm_backward_gradients_and_layouts(dev: DeviceTest) {
    let xs = [1.0, -2.0, 0.5, 3.0, 3.5, -1.0];
    let gs = [0.25, 1.0, -0.5, 2.0, -1.5, 0.75];
    let ws = [2.0, -1.0, 0.5];
    // A transposed input: the gradient is contiguous anyway.
    let x = ops::t(&dev.tensor(&[xs[0], xs[3], xs[1], xs[4], xs[2], xs[5]], &[3, 2])).unwrap();
    let g = dev.tensor(&gs, &[2, 3]);
    let (w, b) = (dev.tensor(&ws, &[3]), dev.tensor(&[0.0f64; 3], &[3]));
    let (m, r) = norm_stats(&xs, 3);
    let (mean, rstd) = (dev.tensor(&m, &[2, 1]), dev.tensor(&r, &[2, 1]));
    let (dx, dw, db) = ops::native_layer_norm_backward(
        &g,
        &x,
        &[3],
        &mean,
        &rstd,
        Some(&w),
        Some(&b),
        &[true, true, true],
    )
    .unwrap();
    assert_eq!(dx.sizes(), &[2, 3]);
    assert_eq!(dx.strides(), &[3, 1]);
    assert_eq!(dw.sizes(), &[3]);
    assert_eq!(db.sizes(), &[3]);
    if dev.has_data() {
        let x_hat: Vec<f64> = (0..6).map(|i| (xs[i] - m[i / 3]) * r[i / 3]).collect();
        let mut expected_dx = Vec::new();
        for row in 0..2 {
            let wg: Vec<f64> = (0..3).map(|j| gs[row * 3 + j] * ws[j]).collect();
            let a = wg.iter().sum::<f64>() / 3.0;
            let b = (0..3).map(|j| wg[j] * x_hat[row * 3 + j]).sum::<f64>() / 3.0;
            expected_dx.extend((0..3).map(|j| r[row] * (wg[j] - a - x_hat[row * 3 + j] * b)));
        }
        assert_close(&values(&dx), &expected_dx);
        let dw_expected: Vec<f64> = (0..3)
            .map(|j| gs[j] * x_hat[j] + gs[3 + j] * x_hat[3 + j])
            .collect();
        assert_close(&values(&dw), &dw_expected);
        assert_close(&values(&db), &[2.25, -0.5, 0.25]);
    }
    // Switched off, or without the parameter: undefined.
    let (dx, dw, db) = ops::native_layer_norm_backward(
        &g,
        &x,
        &[3],
        &mean,
        &rstd,
        None,
        Some(&b),
        &[false, true, true],
    )
    .unwrap();
    assert!(!dx.defined() && !dw.defined() && db.defined());
    // Mixed precision: the parameters' gradients keep their dtype.
    let xh = cast(&x, ScalarType::BFloat16);
    let gh = cast(&g, ScalarType::BFloat16);
    let (wf, bf) = (cast(&w, ScalarType::Float), cast(&b, ScalarType::Float));
    let (mf, rf) = (
        cast(&mean, ScalarType::Float),
        cast(&rstd, ScalarType::Float),
    );
    let (dx, dw, db) = ops::native_layer_norm_backward(
        &gh,
        &xh,
        &[3],
        &mf,
        &rf,
        Some(&wf),
        Some(&bf),
        &[true, true, true],
    )
    .unwrap();
    assert_eq!(
        (dx.dtype(), dw.dtype(), db.dtype()),
        (
            Some(ScalarType::BFloat16),
            Some(ScalarType::Float),
            Some(ScalarType::Float)
        )
    );
    // An empty batch: zero parameter gradients.
    let empty = dev.tensor::<f64>(&[], &[0, 3]);
    let stat = dev.tensor::<f64>(&[], &[0, 1]);
    let (dx, dw, _) = ops::native_layer_norm_backward(
        &empty,
        &empty,
        &[3],
        &stat,
        &stat,
        Some(&w),
        None,
        &[true, true, false],
    )
    .unwrap();
    assert_eq!(dx.sizes(), &[0, 3]);
    dev.assert_values(&dw, &[3], &[0.0f64; 3]);
}

fn layer_norm_backward_bad_arguments(dev: DeviceTest) {
    let x = dev.tensor(&ramp(6), &[3, 2, 1]);
    let stat = dev.tensor(&[1.0f64], &[1]);
    let call = |shape: &[i64], bias: Option<&Tensor>| {
        ops::native_layer_norm_backward(
            &x,
            &x,
            shape,
            &stat,
            &stat,
            None,
            bias,
            &[true, false, true],
        )
    };
    assert_eq!(
        dev.assert_error(call(&[3, 2, 2], Some(&x))),
        "Expected bias to be of same shape as normalized_shape, but got bias of shape [3, 2, 1] and normalized_shape = [3, 2, 2]"
    );
    assert_eq!(
        dev.assert_error(call(&[2], None)),
        "Given normalized_shape=[2], expected input with shape [*, 2], but got input of size[3, 2, 1]"
    );
    assert!(dev
        .assert_error(call(&[], None))
        .starts_with("Expected normalized_shape to be at least 1-dimensional"));
}

fn group_norm_backward_gradients_and_layouts(dev: DeviceTest) {
    // N = 2, C = 4, HxW = 2, two groups of 2 channels (4 values each).
    let xs: Vec<f64> = (0..16).map(|i| f64::from(i * 7 % 11) - 5.0).collect();
    let gs: Vec<f64> = (0..16).map(|i| f64::from(i * 5 % 9) - 4.0).collect();
    let (m, r) = norm_stats(&xs, 4);
    let x = dev.tensor(&xs, &[2, 4, 2]);
    let g = dev.tensor(&gs, &[2, 4, 2]);
    let (mean, rstd) = (dev.tensor(&m, &[2, 2]), dev.tensor(&r, &[2, 2]));
    // Without a weight the weight's gradient is still given, in the
    // input's dtype.
    let (dx, dw, db) = ops::native_group_norm_backward(
        &g,
        &x,
        &mean,
        &rstd,
        None,
        2,
        4,
        2,
        2,
        &[true, true, true],
    )
    .unwrap();
    assert_eq!(dx.sizes(), &[2, 4, 2]);
    assert_eq!(dx.strides(), &[8, 2, 1]);
    assert_eq!(dw.sizes(), &[4]);
    assert_eq!(dw.dtype(), Some(ScalarType::Double));
    assert_eq!(db.sizes(), &[4]);
    if dev.has_data() {
        let x_hat: Vec<f64> = (0..16).map(|i| (xs[i] - m[i / 4]) * r[i / 4]).collect();
        let per_channel = |f: &dyn Fn(usize) -> f64| -> Vec<f64> {
            (0..4)
                .map(|c| {
                    (0..2)
                        .flat_map(|n| (0..2).map(move |p| n * 8 + c * 2 + p))
                        .map(f)
                        .sum()
                })
                .collect()
        };
        assert_close(&values(&db), &per_channel(&|i| gs[i]));
        assert_close(&values(&dw), &per_channel(&|i| gs[i] * x_hat[i]));
        // Without a weight, each group's input gradient sums to zero.
        let dxs = values(&dx);
        for group in dxs.chunks(4) {
            assert!(group.iter().sum::<f64>().abs() < 1e-9, "{dxs:?}");
        }
    }
    // Switched off: undefined; the parameters' gradients in the weight's
    // dtype.
    let w = dev.tensor(&[1.0f64, 2.0, -1.0, 0.5], &[4]);
    let (dx, dw, db) = ops::native_group_norm_backward(
        &g,
        &x,
        &mean,
        &rstd,
        Some(&w),
        2,
        4,
        2,
        2,
        &[false, false, true],
    )
    .unwrap();
    assert!(!dx.defined() && !dw.defined());
    assert_eq!(db.dtype(), Some(ScalarType::Double));
    // Mixed precision: a float16 input with float32 statistics and weight.
    let xh = cast(&x, ScalarType::Half);
    let gh = cast(&g, ScalarType::Half);
    let (mf, rf, wf) = (
        cast(&mean, ScalarType::Float),
        cast(&rstd, ScalarType::Float),
        cast(&w, ScalarType::Float),
    );
    let (dx, dw, _) = ops::native_group_norm_backward(
        &gh,
        &xh,
        &mf,
        &rf,
        Some(&wf),
        2,
        4,
        2,
        2,
        &[true, true, false],
    )
    .unwrap();
    assert_eq!(
        (dx.dtype(), dw.dtype()),
        (Some(ScalarType::Half), Some(ScalarType::Float))
    );
}

fn group_norm_backward_channels_last_and_empty(dev: DeviceTest) {
    // A channels-last [1, 4, 3, 1] input gives a channels-last gradient.
    let nhwc = dev.tensor(&ramp(12), &[1, 3, 1, 4]);
    let x = ops::permute(&nhwc, &[0, 3, 1, 2]).unwrap();
    let stat = dev.tensor(&[0.0f64, 1.0], &[1, 2]);
    let (dx, ..) = ops::native_group_norm_backward(
        &x,
        &x,
        &stat,
        &stat,
        None,
        1,
        4,
        3,
        2,
        &[true, false, false],
    )
    .unwrap();
    assert_eq!(dx.sizes(), &[1, 4, 3, 1]);
    assert_eq!(dx.strides(), &[12, 1, 4, 4]);
    // The forward's output on CPU is channels-last too (PyTorch's CPU
    // kernel allocates it in the input's suggested format; its Meta
    // registration is the contiguous composite), with the same values as
    // from a contiguous copy of the input.
    let (y, ..) = ops::native_group_norm(&x, None, None, 1, 4, 3, 2, 1e-5).unwrap();
    let contiguous = ops::clone_with(
        &x,
        ops::CloneOptions {
            memory_format: Some(aten::MemoryFormat::Contiguous),
        },
    )
    .unwrap();
    assert_eq!(contiguous.strides(), &[12, 3, 1, 1]);
    let (want, ..) = ops::native_group_norm(&contiguous, None, None, 1, 4, 3, 2, 1e-5).unwrap();
    if dev.has_data() {
        assert_eq!(y.strides(), &[12, 1, 4, 4]);
        assert_eq!(values(&y), values(&want));
    }
    // An empty input: zeros everywhere.
    let empty = dev.tensor::<f32>(&[], &[2, 3, 0]);
    let stat = dev.tensor(&[1.0f32; 6], &[2, 3]);
    let (dx, dw, db) = ops::native_group_norm_backward(
        &empty,
        &empty,
        &stat,
        &stat,
        None,
        2,
        3,
        0,
        3,
        &[true, true, true],
    )
    .unwrap();
    assert_eq!(dx.sizes(), &[2, 3, 0]);
    dev.assert_values(&dw, &[3], &[0.0f32; 3]);
    dev.assert_values(&db, &[3], &[0.0f32; 3]);
}

fn group_norm_backward_bad_arguments(dev: DeviceTest) {
    let x = dev.tensor(&ramp(12), &[2, 3, 2]);
    let stat = dev.tensor(&[0.0f64; 6], &[2, 3]);
    let call = |g: &Tensor, mean: &Tensor, rstd: &Tensor, c: i64, group: i64| {
        ops::native_group_norm_backward(g, &x, mean, rstd, None, 2, c, 2, group, &[true; 3])
    };
    let float_grad = cast(&x, ScalarType::Float);
    assert_eq!(
        dev.assert_error(call(&float_grad, &stat, &stat, 3, 3)),
        "Expected scalar types of X and dY are same."
    );
    // Statistics of another dtype make a mixed call, which needs float32
    // statistics and a reduced-precision input.
    let float_stat = cast(&stat, ScalarType::Float);
    assert_eq!(
        dev.assert_error(call(&x, &float_stat, &float_stat, 3, 3)),
        "mixed dtype (CPU): expect input to have scalar type of BFloat16/Half"
    );
    let xh = cast(&x, ScalarType::Half);
    assert_eq!(
        dev.assert_error(ops::native_group_norm_backward(
            &xh, &xh, &stat, &stat, None, 2, 3, 2, 3, &[true; 3]
        )),
        "mixed dtype (CPU): expect parameter to have scalar type of Float"
    );
    assert!(dev
        .assert_error(call(&x, &stat, &stat, 4, 3))
        .starts_with("Expected dY.numel() == N * C * HxW to be true, but got false."));
    let short = dev.tensor(&[0.0f64; 4], &[2, 2]);
    assert!(dev
        .assert_error(call(&x, &short, &stat, 3, 3))
        .starts_with("Expected mean.numel() == N * group to be true"));
    assert!(dev
        .assert_error(call(&x, &stat, &short, 3, 3))
        .starts_with("Expected rstd.numel() == N * group to be true"));
    let w = dev.tensor(&[1.0f64; 2], &[2]);
    assert!(dev
        .assert_error(ops::native_group_norm_backward(
            &x,
            &x,
            &stat,
            &stat,
            Some(&w),
            2,
            3,
            2,
            3,
            &[true; 3]
        ))
        .starts_with("Expected !gamma.defined() || gamma.numel() == C to be true"));
    // Groups that do not divide the channels (a zero count of groups
    // included) are an error, not a division by zero.
    let none = dev.tensor::<f64>(&[], &[2, 0]);
    assert_eq!(
        dev.assert_error(call(&x, &none, &none, 3, 0)),
        "Expect number of channels 3 to be evenly-divisible by number of groups 0"
    );
    let ints = dev.tensor(&[1i64; 12], &[2, 3, 2]);
    assert_eq!(
        dev.assert_error(ops::native_group_norm_backward(
            &ints, &ints, &ints, &ints, None, 2, 3, 2, 3, &[true; 3]
        )),
        "\"GroupNormBackwardKernelImpl\" not implemented for 'Long'"
    );
}
