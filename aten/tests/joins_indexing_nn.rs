//! Structured `cat`, `gather`, `max_pool2d_with_indices`,
//! `nll_loss_forward` and `mse_loss`, and `native_layer_norm` (a CPU
//! kernel, and PyTorch's decomposition as the default-backend kernel that
//! serves Meta), on every device the build has.

use aten::core::testing::DeviceTest;
use aten::ops;

aten::instantiate_device_type_tests!(
    cat_joins_promotes_and_checks,
    gather_picks_along_a_dimension,
    max_pool_fills_values_and_indices,
    nll_loss_forward_outputs,
    mse_loss_reductions,
    layer_norm_normalizes_rows,
);

fn cat_joins_promotes_and_checks(dev: DeviceTest) {
    let a = dev.tensor(&[1i32, 2, 3, 4], &[2, 2]);
    let b = dev.tensor(&[0.5f64, 1.5], &[1, 2]);
    // Promoted; a legacy `[0]` tensor is skipped.
    let legacy = dev.tensor::<i32>(&[], &[0]);
    let c = ops::cat(&[a.clone(), legacy, b.clone()]).unwrap();
    dev.assert_values(&c, &[3, 2], &[1.0f64, 2.0, 3.0, 4.0, 0.5, 1.5]);
    let wide = ops::cat_with(&[a.clone(), a.clone()], ops::CatOptions { dim: -1 }).unwrap();
    dev.assert_values(&wide, &[2, 4], &[1i32, 2, 1, 2, 3, 4, 3, 4]);
    // out= of a wider dtype, resized from empty, laid out transposed.
    let out = dev.tensor(&[0.0f32; 8], &[2, 4]).t().unwrap();
    ops::cat_out(&[a.clone(), a.clone()], 0, &out).unwrap();
    assert_eq!(out.strides(), &[1, 4]);
    dev.assert_values(
        &ops::contiguous(&out).unwrap(),
        &[4, 2],
        &[1.0f32, 2.0, 3.0, 4.0, 1.0, 2.0, 3.0, 4.0],
    );
    let narrow = dev.tensor(&[0i32; 4], &[4]);
    let err = dev.assert_error(ops::cat_out(&[a.clone(), b.clone()], 0, &narrow));
    assert_eq!(
        err,
        "torch.cat(): input types can't be cast to the desired output type Int"
    );
    let err = dev.assert_error(ops::cat(&[a.clone(), dev.tensor(&[1i32; 3], &[1, 3])]));
    assert_eq!(
        err,
        "Sizes of tensors must match except in dimension 0. Expected size 2 but got size 3 for tensor number 1 in the list."
    );
    let scalar = dev.tensor(&[1i32], &[]);
    let err = dev.assert_error(ops::cat(&[a, scalar]));
    assert_eq!(
        err,
        "zero-dimensional tensor (at position 1) cannot be concatenated"
    );
    let err = dev.assert_error(ops::cat(&[]));
    assert_eq!(err, "torch.cat(): expected a non-empty list of Tensors");
}

fn gather_picks_along_a_dimension(dev: DeviceTest) {
    let a = dev.tensor(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let index = dev.tensor(&[2i64, 0, 1, 1], &[2, 2]);
    dev.assert_values(
        &ops::gather(&a, 1, &index).unwrap(),
        &[2, 2],
        &[3.0f32, 1.0, 5.0, 5.0],
    );
    // int32 indices, into an out= (through a temporary).
    let index32 = dev.tensor(&[1i32, 0], &[1, 2]);
    let out = dev.tensor::<f32>(&[], &[0]);
    ops::gather_out(&a, 0, &index32, false, &out).unwrap();
    dev.assert_values(&out, &[1, 2], &[4.0f32, 2.0]);
    let err = dev.assert_error(ops::gather(&a, 1, &dev.tensor(&[0.0f32], &[1, 1])));
    assert_eq!(err, "gather(): Expected dtype int32/int64 for index");
    let err = dev.assert_error(ops::gather(&a, 1, &dev.tensor(&[0i64; 3], &[3, 1])));
    assert_eq!(
        err,
        "Size does not match at dimension 0 expected index [3, 1] to be no larger than self [2, 3] apart from dimension 1"
    );
    if let Some(err) = dev.assert_data_error(ops::gather(&a, 1, &dev.tensor(&[3i64], &[1, 1]))) {
        assert_eq!(err, "index 3 is out of bounds for dimension 1 with size 3");
    }
}

fn max_pool_fills_values_and_indices(dev: DeviceTest) {
    let x = dev.tensor(
        &[
            1.0f32, 5.0, 2.0, 0.0, //
            3.0, 4.0, 8.0, 7.0, //
            0.0, 0.0, 1.0, 1.0, //
            9.0, 0.0, 1.0, 2.0,
        ],
        &[1, 4, 4],
    );
    let (values, indices) = ops::max_pool2d_with_indices(&x, &[2]).unwrap();
    dev.assert_values(&values, &[1, 2, 2], &[5.0f32, 8.0, 9.0, 2.0]);
    dev.assert_values(&indices, &[1, 2, 2], &[1i64, 6, 12, 15]);
    let (out, at) = (dev.tensor::<f32>(&[], &[0]), dev.tensor::<i64>(&[], &[0]));
    ops::max_pool2d_with_indices_out(&x, &[2], &[2], &[0], &[1], false, &out, &at).unwrap();
    dev.assert_values(&out, &[1, 2, 2], &[5.0f32, 8.0, 9.0, 2.0]);
    dev.assert_values(&at, &[1, 2, 2], &[1i64, 6, 12, 15]);
    let err = dev.assert_error(ops::max_pool2d_with_indices(&x, &[2, 2, 2]));
    assert_eq!(
        err,
        "max_pool2d: kernel_size must either be a single int, or a tuple of two ints"
    );
    let err = dev.assert_error(ops::max_pool2d_with_indices(&x, &[5]));
    assert_eq!(
        err,
        "Given input size: (1x4x4). Calculated output size: (1x0x0). Output size is too small"
    );
}

fn nll_loss_forward_outputs(dev: DeviceTest) {
    let logp = dev.tensor(&[-1.0f32, -2.0, -3.0, -0.5, -1.5, -2.5], &[2, 3]);
    let target = dev.tensor(&[2i64, 0], &[2]);
    let (loss, total) = ops::nll_loss_forward(&logp, &target, None, 0, -100).unwrap();
    dev.assert_values(&loss, &[2], &[3.0f32, 0.5]);
    dev.assert_values(&total, &[], &[2.0f32]);
    let weight = dev.tensor(&[1.0f32, 1.0, 3.0], &[3]);
    let (out, w) = (dev.tensor::<f32>(&[], &[0]), dev.tensor::<f32>(&[], &[0]));
    ops::nll_loss_forward_output(&logp, &target, Some(&weight), 1, -100, &out, &w).unwrap();
    dev.assert_values(&out, &[], &[9.5f32 / 4.0]);
    dev.assert_values(&w, &[], &[4.0f32]);
    let err = dev.assert_error(ops::nll_loss_forward(
        &logp,
        &dev.tensor(&[0i64; 3], &[3]),
        None,
        1,
        -100,
    ));
    assert_eq!(err, "size mismatch (got input: [2, 3], target: [3])");
    let err = dev.assert_error(ops::nll_loss_forward(
        &logp,
        &target,
        Some(&dev.tensor(&[1.0f32; 2], &[2])),
        1,
        -100,
    ));
    assert_eq!(
        err,
        "weight tensor should be defined either for all 3 classes or no classes but got weight tensor of shape: [2]"
    );
}

fn mse_loss_reductions(dev: DeviceTest) {
    let a = dev.tensor(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]);
    let b = dev.tensor(&[1.0f32, 0.0], &[2]);
    let none = ops::mse_loss_with(&a, &b, ops::MseLossOptions { reduction: 0 }).unwrap();
    dev.assert_values(&none, &[2, 2], &[0.0f32, 4.0, 4.0, 16.0]);
    dev.assert_values(&ops::mse_loss(&a, &b).unwrap(), &[], &[6.0f32]);
    let out = dev.tensor::<f32>(&[], &[0]);
    ops::mse_loss_out(&a, &b, 2, &out).unwrap();
    dev.assert_values(&out, &[], &[24.0f32]);
}

fn layer_norm_normalizes_rows(dev: DeviceTest) {
    let x = dev.tensor(&[1.0f64, 3.0, 0.0, 4.0], &[2, 2]);
    let weight = dev.tensor(&[2.0f64, 1.0], &[2]);
    let (y, mean, rstd) = ops::native_layer_norm(&x, &[2], Some(&weight), None, 0.0).unwrap();
    dev.assert_values(&y, &[2, 2], &[-2.0f64, 1.0, -2.0, 1.0]);
    dev.assert_values(&mean, &[2, 1], &[2.0f64, 2.0]);
    dev.assert_values(&rstd, &[2, 1], &[1.0f64, 0.5]);
    let err = dev.assert_error(ops::native_layer_norm(&x, &[3], None, None, 1e-5));
    assert_eq!(
        err,
        "Given normalized_shape=[3], expected input with shape [*, 3], but got input of size[2, 2]"
    );
}

#[test]
fn max_pool_outputs_keep_a_channels_last_input_layout() {
    for dev in [DeviceTest::CPU, DeviceTest::META] {
        // [1, 3, 3, 4] laid out channels-last (PyTorch's case).
        let data: Vec<f32> = (0..36).map(|i| i as f32).collect();
        let x = dev
            .to_device(&aten::Tensor::from_slice(&data, &[1, 3, 4, 3]).unwrap())
            .permute(&[0, 3, 1, 2])
            .unwrap();
        assert_eq!(x.strides(), &[36, 1, 12, 3]);
        let (values, indices) = ops::max_pool2d_with_indices_with(
            &x,
            &[3, 2],
            ops::MaxPool2dWithIndicesOptions {
                stride: &[],
                padding: &[1, 0],
                dilation: &[1, 1],
                ceil_mode: false,
            },
        )
        .unwrap();
        assert_eq!(values.sizes(), &[1, 3, 1, 2]);
        assert_eq!(values.strides(), &[6, 1, 6, 3]);
        assert_eq!(indices.strides(), &[6, 1, 6, 3]);
        if dev.has_data() {
            // x[0, c, h, w] = 12 h + 3 w + c; the windows cover rows 0-1.
            let v: Vec<f32> = ops::contiguous(&values).unwrap().to_vec().unwrap();
            assert_eq!(v, vec![15.0, 21.0, 16.0, 22.0, 17.0, 23.0]);
            let at: Vec<i64> = ops::contiguous(&indices).unwrap().to_vec().unwrap();
            assert_eq!(at, vec![5, 7, 5, 7, 5, 7]);
        }
    }
}

#[test]
fn cat_keeps_a_common_channels_last_layout() {
    for dev in [DeviceTest::CPU, DeviceTest::META] {
        let nhwc = |c: i64| {
            let n = (2 * 2 * c) as usize;
            let data: Vec<f32> = (0..n).map(|i| i as f32).collect();
            dev.to_device(&aten::Tensor::from_slice(&data, &[1, 2, 2, c]).unwrap())
                .permute(&[0, 3, 1, 2])
                .unwrap()
        };
        let (a, b) = (nhwc(2), nhwc(3));
        let joined = ops::cat_with(&[a.clone(), b.clone()], ops::CatOptions { dim: 1 }).unwrap();
        assert_eq!(joined.sizes(), &[1, 5, 2, 2]);
        assert_eq!(joined.strides(), &[20, 1, 10, 5]);
        if dev.has_data() {
            let got: Vec<f32> = ops::contiguous(&joined).unwrap().to_vec().unwrap();
            let mut want: Vec<f32> = ops::contiguous(&a).unwrap().to_vec().unwrap();
            want.extend(ops::contiguous(&b).unwrap().to_vec::<f32>().unwrap());
            assert_eq!(got, want);
        }
        // A contiguous input makes the result contiguous.
        let c = ops::contiguous(&a).unwrap();
        let mixed = ops::cat_with(&[c, b], ops::CatOptions { dim: 1 }).unwrap();
        assert_eq!(mixed.strides(), &[20, 4, 2, 1]);
    }
}
