//! Views, factories, matrix products, convolutions and `nn` operators end
//! to end through the generated API: views share storage, factories infer
//! dtypes and draw reproducible random numbers, matrix products and
//! convolutions match plain reference loops; the copying shape operators,
//! the `nn` operators and the composites run on every device
//! (`DeviceTest`).

use aten::core::testing::DeviceTest;
use aten::{ops, Device, Generator, Scalar, ScalarType, Tensor};

aten::instantiate_device_type_tests!(
    copying_shape_operators,
    nn_operators,
    composites_reach_the_device_kernels,
);

fn f32s(v: &[f32], shape: &[i64]) -> Tensor {
    Tensor::from_slice(v, shape).unwrap()
}

fn seq_values(n: usize) -> Vec<f32> {
    (0..n).map(|i| ((i * 7) % 11) as f32 - 5.0).collect()
}

fn seq(n: usize, shape: &[i64]) -> Tensor {
    f32s(&seq_values(n), shape)
}

fn copying_shape_operators(dev: DeviceTest) {
    let values = seq_values(6);
    let a = dev.tensor(&values, &[2, 3]);
    let c = ops::cat(&[a.clone(), ops::t(&ops::t(&a).unwrap()).unwrap()]).unwrap();
    let mut joined = values.clone();
    joined.extend(&values);
    dev.assert_values(&c, &[4, 3], &joined);
    let s = ops::stack_with(&[a.clone(), a.clone()], ops::StackOptions { dim: 2 }).unwrap();
    assert_eq!(s.sizes(), &[2, 3, 2]);
    let r = ops::repeat(&dev.tensor(&[1.0f32, 2.0], &[2]), &[2, 2]).unwrap();
    dev.assert_values(&r, &[2, 4], &[1.0f32, 2., 1., 2., 1., 2., 1., 2.]);
    let f = ops::flip(&a, &[1]).unwrap();
    let mut reversed = values.clone();
    reversed[..3].reverse();
    reversed[3..].reverse();
    dev.assert_values(&f, &[2, 3], &reversed);
    let idx = dev.tensor(&[1i64, 0, 1], &[3]);
    let g = ops::index_select(&a, 0, &idx).unwrap();
    let picked: Vec<f32> = [1, 0, 1]
        .iter()
        .flat_map(|&r| values[r * 3..][..3].to_vec())
        .collect();
    dev.assert_values(&g, &[3, 3], &picked);
    let ones = dev.tensor(&[1i64; 9], &[3, 3]);
    dev.assert_values(
        &ops::triu(&ones).unwrap(),
        &[3, 3],
        &[1i64, 1, 1, 0, 1, 1, 0, 0, 1],
    );
    let gathered = ops::gather(&a, 1, &dev.tensor(&[2i64, 0], &[2, 1])).unwrap();
    dev.assert_values(&gathered, &[2, 1], &[values[2], values[3]]);
}

fn nn_operators(dev: DeviceTest) {
    let x = dev.tensor(&seq_values(32), &[1, 2, 4, 4]);
    let pooled = ops::max_pool2d(&x, &[2, 2]).unwrap();
    assert_eq!(pooled.sizes(), &[1, 2, 2, 2]);
    let ln = ops::layer_norm(&dev.tensor(&seq_values(12), &[3, 4]), &[4]).unwrap();
    assert_eq!(ln.sizes(), &[3, 4]);
    if dev.has_data() {
        let row = &ln.to_vec::<f32>().unwrap()[..4];
        assert!(row.iter().sum::<f32>().abs() < 1e-4);
    }
    let logits = dev.tensor(&seq_values(12), &[4, 3]);
    let target = dev.tensor(&[0i64, 2, 1, 1], &[4]);
    let ce = ops::cross_entropy_loss(&logits, &target).unwrap();
    let nll = ops::nll_loss(&ops::log_softmax_int(&logits, 1).unwrap(), &target).unwrap();
    assert!(ce.sizes().is_empty() && nll.sizes().is_empty());
    assert_eq!(ce.device(), logits.device());
    if dev.has_data() {
        assert_eq!(ce.to_vec::<f32>().unwrap(), nll.to_vec::<f32>().unwrap());
    }
    let emb = ops::embedding(
        &dev.tensor(&seq_values(12), &[4, 3]),
        &dev.tensor(&[3i64, 0], &[1, 2]),
    )
    .unwrap();
    assert_eq!(emb.sizes(), &[1, 2, 3]);
    // Dropout: identity in eval, zero or scaled in training.
    let ones = dev.tensor(&[1.0f32; 1000], &[1000]);
    let eval = ops::dropout(&ones, 0.5, false).unwrap();
    assert!(eval.is_same(&ones));
    let train = ops::dropout(&ones, 0.25, true).unwrap();
    assert_eq!(train.sizes(), &[1000]);
    if dev.has_data() {
        let train = train.to_vec::<f32>().unwrap();
        assert!(train
            .iter()
            .all(|v| *v == 0.0 || (*v - 1.0 / 0.75).abs() < 1e-6));
        let kept = train.iter().filter(|v| **v != 0.0).count();
        assert!((650..850).contains(&kept), "{kept}");
    }
}

/// Composite operators decompose into the device's kernels: shapes and
/// devices on every device.
fn composites_reach_the_device_kernels(dev: DeviceTest) {
    let zeros = |shape: &[i64]| {
        let n = shape.iter().product::<i64>() as usize;
        dev.tensor(&vec![0.0f32; n], shape)
    };
    let a = zeros(&[8, 3, 16, 16]);
    let y = ops::conv2d(&a, &zeros(&[4, 3, 3, 3])).unwrap();
    assert_eq!(y.sizes(), &[8, 4, 14, 14]);
    assert_eq!(y.device(), a.device());
    assert_eq!(ops::max_pool2d(&a, &[2, 2]).unwrap().sizes(), &[8, 3, 8, 8]);
    let product = ops::mm(&zeros(&[5, 7]), &zeros(&[7, 2])).unwrap();
    assert_eq!(product.sizes(), &[5, 2]);
    let batched = ops::matmul(&zeros(&[3, 5, 7]), &zeros(&[7])).unwrap();
    assert_eq!(batched.sizes(), &[3, 5]);
    let normed = ops::layer_norm(&zeros(&[2, 5]), &[5]).unwrap();
    assert_eq!(normed.sizes(), &[2, 5]);
}

#[test]
fn views_share_storage_and_reshape_copies_only_when_it_must() {
    let a = seq(6, &[2, 3]);
    let t = ops::t(&a).unwrap();
    assert_eq!(
        (&t.sizes()[..], &t.strides()[..]),
        (&[3, 2][..], &[1, 3][..])
    );
    // Writing through a view is visible in the base.
    ops::fill_scalar_(&ops::select_int(&t, 0, 1).unwrap(), Scalar::Double(9.0)).unwrap();
    assert_eq!(a.to_vec::<f32>().unwrap()[1], 9.0);
    assert_eq!(a.to_vec::<f32>().unwrap()[4], 9.0);
    // A transposed matrix cannot be viewed flat; reshape copies.
    assert!(ops::view(&t, &[6]).is_err());
    let flat = ops::reshape(&t, &[6]).unwrap();
    assert!(!flat.storage().unwrap().is_same(&a.storage().unwrap()));
    let same = ops::reshape(&a, &[3, 2]).unwrap();
    assert!(same.storage().unwrap().is_same(&a.storage().unwrap()));
    // Slices, narrow, split, expand, permute, squeeze.
    let s = ops::slice_tensor_with(
        &a,
        ops::SliceTensorOptions {
            dim: 1,
            start: Some(-2),
            end: None,
            step: 1,
        },
    )
    .unwrap();
    assert_eq!((&s.sizes()[..], s.storage_offset()), (&[2, 2][..], 1));
    let parts = ops::split_tensor(&seq(5, &[5]), 2).unwrap();
    assert_eq!(
        parts.iter().map(|p| p.numel()).collect::<Vec<_>>(),
        vec![2, 2, 1]
    );
    let e = ops::expand(&seq(3, &[3, 1]), &[2, 3, 4]).unwrap();
    assert_eq!(e.strides(), &[0, 1, 0]);
    assert_eq!(
        ops::expand(&seq(3, &[3]), &[2]).unwrap_err().message(),
        "The expanded size of the tensor (2) must match the existing size (3) at non-singleton dimension 0.  Target sizes: [2].  Tensor sizes: [3]"
    );
    let p = ops::permute(&seq(24, &[2, 3, 4]), &[2, 0, 1]).unwrap();
    assert_eq!(
        (&p.sizes()[..], &p.strides()[..]),
        (&[4, 2, 3][..], &[1, 12, 4][..])
    );
    assert_eq!(ops::squeeze(&seq(3, &[1, 3, 1])).unwrap().sizes(), &[3]);
    assert_eq!(
        ops::flatten_using_ints(&seq(24, &[2, 3, 4]))
            .unwrap()
            .sizes(),
        &[24]
    );
}

#[test]
fn empty_permuted_lays_dimensions_out_in_the_physical_order() {
    let t = ops::empty_permuted(&[2, 3, 4], &[2, 0, 1]).unwrap();
    assert_eq!(t.sizes(), &[2, 3, 4]);
    assert_eq!(t.strides(), &[3, 1, 6]);
    let err =
        |size: &[i64], layout: &[i64]| ops::empty_permuted(size, layout).unwrap_err().to_string();
    assert!(err(&[2, 3], &[0]).contains("len(size) = 2 is not equal to len(physical_layout) = 1"));
    assert!(err(&[2, 3], &[-1, 0]).contains(
        "Dimension out of range (expected to be between 0 and 1, but got -1 at index 0)"
    ));
    assert!(err(&[2, 3], &[1, 1]).contains("Duplicate dim not allowed"));
}

#[test]
fn factories_infer_dtypes_and_random_draws_are_reproducible() {
    assert_eq!(
        ops::full(&[2], Scalar::Int(7)).unwrap().dtype(),
        Some(ScalarType::Long)
    );
    assert_eq!(
        ops::full(&[2], Scalar::Bool(true)).unwrap().dtype(),
        Some(ScalarType::Bool)
    );
    assert_eq!(
        ops::full(&[2], Scalar::Double(0.5)).unwrap().dtype(),
        Some(ScalarType::Float)
    );
    let r = ops::arange_start_step_with(
        Scalar::Int(1),
        Scalar::Double(2.0),
        ops::ArangeStartStepOptions {
            step: Scalar::Double(0.25),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(r.to_vec::<f32>().unwrap(), vec![1.0, 1.25, 1.5, 1.75]);
    assert_eq!(
        ops::arange_start_step_with(
            Scalar::Int(0),
            Scalar::Int(5),
            ops::ArangeStartStepOptions {
                step: Scalar::Int(-1),
                ..Default::default()
            },
        )
        .unwrap_err()
        .message(),
        "upper bound and larger bound inconsistent with step sign"
    );
    let l = ops::linspace(Scalar::Int(0), Scalar::Int(1), 5).unwrap();
    assert_eq!(l.to_vec::<f32>().unwrap(), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
    assert_eq!(
        ops::eye_m(2, 3).unwrap().to_vec::<f32>().unwrap(),
        vec![1., 0., 0., 0., 1., 0.]
    );
    let draw = |seed| {
        let g = Generator::new(Device::CPU, seed);
        ops::randn_generator(&[1000], Some(g))
            .unwrap()
            .to_vec::<f32>()
            .unwrap()
    };
    assert_eq!(draw(3), draw(3));
    assert_ne!(draw(3), draw(4));
    let x = draw(5);
    let mean = x.iter().sum::<f32>() / 1000.0;
    let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f32>() / 1000.0;
    assert!(
        mean.abs() < 0.15 && (var - 1.0).abs() < 0.15,
        "mean {mean} var {var}"
    );
    let u = ops::rand(&[1000]).unwrap().to_vec::<f32>().unwrap();
    assert!(u.iter().all(|v| (0.0..1.0).contains(v)));
    // A generator continues its stream: two draws differ.
    let g = Generator::new(Device::CPU, 1);
    let a = ops::rand_generator(&[4], Some(g.clone()))
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
    let b = ops::rand_generator(&[4], Some(g))
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
    assert_ne!(a, b);
}

fn reference_mm(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    let mut c = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
        }
    }
    c
}

fn close(a: &[f32], b: &[f32]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= 1e-3 * (1.0 + y.abs()), "{x} vs {y}");
    }
}

#[test]
fn matrix_products_match_reference_loops() {
    let (m, k, n) = (70, 33, 45);
    let a = seq(m * k, &[m as i64, k as i64]);
    let b = seq(k * n, &[k as i64, n as i64]);
    let want = reference_mm(&a.to_vec().unwrap(), &b.to_vec().unwrap(), m, k, n);
    close(&ops::mm(&a, &b).unwrap().to_vec().unwrap(), &want);
    // Transposed operands go through strides.
    let at = ops::t(&ops::contiguous(&ops::t(&a).unwrap()).unwrap()).unwrap();
    close(&ops::mm(&at, &b).unwrap().to_vec().unwrap(), &want);
    // matmul broadcasts batches; linear adds the bias.
    let batched = ops::matmul(&ops::expand(&a, &[3, m as i64, k as i64]).unwrap(), &b).unwrap();
    assert_eq!(batched.sizes(), &[3, m as i64, n as i64]);
    close(&batched.to_vec().unwrap()[..m * n], &want);
    let v = ops::matmul(&seq(k, &[k as i64]), &b).unwrap();
    assert_eq!(v.sizes(), &[n as i64]);
    let bias = seq(n, &[n as i64]);
    let lin = ops::linear_with(
        &a,
        &ops::t(&b).unwrap(),
        ops::LinearOptions { bias: Some(&bias) },
    )
    .unwrap();
    let bv = bias.to_vec::<f32>().unwrap();
    let with_bias: Vec<f32> = want
        .iter()
        .enumerate()
        .map(|(i, x)| x + bv[i % n])
        .collect();
    close(&lin.to_vec().unwrap(), &with_bias);
    assert_eq!(
        ops::mm(&a, &a).unwrap_err().message(),
        "mm: mat1 and mat2 shapes cannot be multiplied (70x33 and 70x33)"
    );
    let bm = ops::bmm(&seq(2 * 3 * 4, &[2, 3, 4]), &seq(2 * 4 * 5, &[2, 4, 5])).unwrap();
    assert_eq!(bm.sizes(), &[2, 3, 5]);
}

/// Direct convolution, for reference.
#[allow(clippy::too_many_arguments)]
fn reference_conv(
    x: &[f32],
    (n, c, h, w): (usize, usize, usize, usize),
    wt: &[f32],
    (oc, kh, kw): (usize, usize, usize),
    stride: usize,
    pad: usize,
    dil: usize,
    groups: usize,
) -> (Vec<f32>, usize, usize) {
    let oh = (h + 2 * pad - dil * (kh - 1) - 1) / stride + 1;
    let ow = (w + 2 * pad - dil * (kw - 1) - 1) / stride + 1;
    let cg = c / groups;
    let og = oc / groups;
    let mut y = vec![0f32; n * oc * oh * ow];
    for b in 0..n {
        for o in 0..oc {
            let g = o / og;
            for i in 0..oh {
                for j in 0..ow {
                    let mut acc = 0f32;
                    for ci in 0..cg {
                        for p in 0..kh {
                            for q in 0..kw {
                                let yy = (i * stride + p * dil) as isize - pad as isize;
                                let xx = (j * stride + q * dil) as isize - pad as isize;
                                if yy < 0 || xx < 0 || yy >= h as isize || xx >= w as isize {
                                    continue;
                                }
                                let xv =
                                    x[((b * c + g * cg + ci) * h + yy as usize) * w + xx as usize];
                                acc += xv * wt[((o * cg + ci) * kh + p) * kw + q];
                            }
                        }
                    }
                    y[((b * oc + o) * oh + i) * ow + j] = acc;
                }
            }
        }
    }
    (y, oh, ow)
}

#[test]
fn conv2d_matches_a_direct_convolution() {
    for (stride, pad, dil, groups) in [
        (1, 1, 1, 1),
        (2, 0, 1, 1),
        (1, 2, 2, 1),
        (1, 1, 1, 2),
        (2, 1, 1, 1),
    ] {
        let (n, c, h, w, oc, k) = (2, 4, 9, 7, 6, 3);
        let x = seq(n * c * h * w, &[n as i64, c as i64, h as i64, w as i64]);
        let wt = seq(
            oc * (c / groups) * k * k,
            &[oc as i64, (c / groups) as i64, k as i64, k as i64],
        );
        let (want, oh, ow) = reference_conv(
            &x.to_vec().unwrap(),
            (n, c, h, w),
            &wt.to_vec().unwrap(),
            (oc, k, k),
            stride,
            pad,
            dil,
            groups,
        );
        let s = [stride as i64; 2];
        let p = [pad as i64; 2];
        let d = [dil as i64; 2];
        let got = ops::conv2d_with(
            &x,
            &wt,
            ops::Conv2dOptions {
                bias: None,
                stride: &s,
                padding: &p,
                dilation: &d,
                groups: groups as i64,
            },
        )
        .unwrap();
        assert_eq!(got.sizes(), &[n as i64, oc as i64, oh as i64, ow as i64]);
        close(&got.to_vec().unwrap(), &want);
    }
}

#[test]
fn factories_make_meta_tensors() {
    let ones = ops::ones_with(
        &[2, 2],
        ops::OnesOptions {
            device: Some(Device::META),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(ones.device(), Some(Device::META));
    let r = ops::arange_with(
        Scalar::Int(10),
        ops::ArangeOptions {
            device: Some(Device::META),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        (&r.sizes()[..], r.dtype()),
        (&[10][..], Some(ScalarType::Long))
    );
}

#[test]
fn backend_convolutions_reject_inconsistent_weights() {
    let x = seq(2 * 3 * 5 * 5, &[2, 3, 5, 5]);
    // Weight with 2 input channels for a 3-channel input, called directly.
    let w = seq(4 * 2 * 3 * 3, &[4, 2, 3, 3]);
    assert!(ops::_slow_conv2d_forward(&x, &w, &[3, 3], None, &[1, 1], &[0, 0]).is_err());
    // kernel_size that disagrees with the weight.
    let w = seq(4 * 3 * 3 * 3, &[4, 3, 3, 3]);
    assert!(ops::_slow_conv2d_forward(&x, &w, &[2, 2], None, &[1, 1], &[0, 0]).is_err());
    // Bias of the wrong length.
    let b = seq(3, &[3]);
    assert!(ops::_slow_conv2d_forward(&x, &w, &[3, 3], Some(&b), &[1, 1], &[0, 0]).is_err());
    // Mixed dtypes.
    let wd = ops::_to_copy_with(
        &w,
        ops::ToCopyOptions {
            dtype: Some(ScalarType::Double),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(ops::conv2d(&x, &wd).is_err());
    // The consistent call works.
    assert_eq!(
        ops::_slow_conv2d_forward(&x, &w, &[3, 3], None, &[1, 1], &[0, 0])
            .unwrap()
            .sizes(),
        &[2, 4, 3, 3]
    );
}

#[test]
fn scalars_that_overflow_the_dtype_are_errors() {
    use aten::ScalarType;
    let full = |v: Scalar, dtype: ScalarType| {
        ops::full_with(
            &[2],
            v,
            ops::FullOptions {
                dtype: Some(dtype),
                ..Default::default()
            },
        )
    };
    let err = |r: aten::Result<Tensor>| r.unwrap_err().message().to_string();
    assert_eq!(
        err(full(Scalar::Int(300), ScalarType::Byte)),
        "value cannot be converted to type uint8_t without overflow"
    );
    // A negative integer wraps into an unsigned type when its magnitude fits.
    assert_eq!(
        full(Scalar::Int(-1), ScalarType::Byte)
            .unwrap()
            .to_vec::<u8>()
            .unwrap(),
        vec![255, 255]
    );
    assert!(full(Scalar::Int(-256), ScalarType::Byte).is_err());
    assert!(full(Scalar::Double(-1.0), ScalarType::Byte).is_err());
    assert_eq!(
        err(full(Scalar::Int(70000), ScalarType::Half)),
        "value cannot be converted to type c10::Half without overflow"
    );
    assert_eq!(
        err(full(Scalar::Double(1e39), ScalarType::Float)),
        "value cannot be converted to type float without overflow"
    );
    assert!(full(Scalar::Double(f64::INFINITY), ScalarType::Float).is_ok());
    assert!(full(Scalar::Double(f64::NAN), ScalarType::Int).is_err());
    assert!(full(Scalar::Int(i64::MAX), ScalarType::Long).is_ok());
    // The same check guards every scalar argument a kernel converts.
    let x = Tensor::from_slice(&[1i8, 2], &[2]).unwrap();
    let mask = Tensor::from_slice(&[true, false], &[2]).unwrap();
    assert_eq!(
        err(ops::masked_fill_scalar(&x, &mask, Scalar::Int(128))),
        "value cannot be converted to type int8_t without overflow"
    );
    assert!(ops::add_tensor_with(
        &x,
        &x,
        ops::AddTensorOptions {
            alpha: Scalar::Int(1000)
        }
    )
    .is_err());
    // Meta tensors have no values to convert to.
    let meta = ops::full_with(
        &[2],
        Scalar::Int(300),
        ops::FullOptions {
            dtype: Some(ScalarType::Byte),
            device: Some(aten::Device::META),
            ..Default::default()
        },
    );
    assert!(meta.is_ok());
}

#[test]
fn bad_arguments_are_errors_not_panics_or_overflows() {
    let x = seq(5, &[5]);
    let scalar = f32s(&[1.0], &[]);
    let many = Tensor::from_slice(&[0i64; 100], &[100]).unwrap();
    assert!(ops::index_select(&scalar, 0, &many).is_err());
    let negative = Tensor::from_slice(&[-1i64], &[1]).unwrap();
    assert!(ops::index_select(&x, 0, &negative).is_err());
    assert!(ops::gather(&x, 0, &negative).is_err());
    assert_eq!(ops::split_tensor(&x, i64::MAX).unwrap().len(), 1);
    let s = ops::slice_tensor_with(
        &x,
        ops::SliceTensorOptions {
            dim: 0,
            start: None,
            end: None,
            step: i64::MAX,
        },
    )
    .unwrap();
    assert_eq!(s.sizes(), &[1]);
    assert!(ops::narrow(&x, 0, 1, i64::MAX).is_err());
    assert!(ops::squeeze_dims(&seq(3, &[1, 3]), &[0, 0]).is_err());
    let img = seq(16, &[1, 1, 4, 4]);
    assert!(ops::max_pool2d_with(
        &img,
        &[2, 2],
        ops::MaxPool2dOptions {
            padding: &[-1, 0],
            ..Default::default()
        }
    )
    .is_err());
    assert!(ops::max_pool2d_with(
        &img,
        &[2, 2],
        ops::MaxPool2dOptions {
            dilation: &[i64::MAX, 1],
            ..Default::default()
        }
    )
    .is_err());
    let w = seq(9, &[1, 1, 3, 3]);
    assert!(ops::conv2d_with(
        &img,
        &w,
        ops::Conv2dOptions {
            dilation: &[i64::MAX / 2, 1],
            ..Default::default()
        }
    )
    .is_err());
    // nll_loss over spatial dims checks the target's shape.
    let logits = seq(2 * 3 * 4 * 5, &[2, 3, 4, 5]);
    let target = ops::zeros_with(
        &[2, 5, 4],
        ops::ZerosOptions {
            dtype: Some(ScalarType::Long),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        ops::nll_loss(&logits, &target).unwrap_err().message(),
        "Expected target size [2, 4, 5], got [2, 5, 4]"
    );
    // Probability targets are recognised by shape, not dtype.
    let probs = ops::softmax_int(&seq(12, &[4, 3]), 1).unwrap();
    let loss = ops::cross_entropy_loss(&seq(12, &[4, 3]), &probs).unwrap();
    assert_eq!(loss.sizes(), &[] as &[i64]);
    assert!(ops::cross_entropy_loss(&seq(12, &[4, 3]), &seq(4, &[4])).is_err());
}

#[test]
fn products_split_over_many_threads_stay_inside_their_output() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(80)
        .build()
        .unwrap();
    let a = ops::ones(&[1, 64]).unwrap();
    let b = ops::ones(&[64, 8193]).unwrap();
    let c = pool.install(|| ops::mm(&a, &b)).unwrap();
    assert_eq!(c.sizes(), &[1, 8193]);
    assert!(c.to_vec::<f32>().unwrap().iter().all(|v| *v == 64.0));
}

#[test]
fn random_streams_do_not_overlap() {
    let g = Generator::new(Device::CPU, 9);
    let n = ops::randn_generator(&[64], Some(g.clone())).unwrap();
    let u = ops::rand_generator(&[64], Some(g.clone())).unwrap();
    // A fresh generator that skips the normal draws gives the same uniforms.
    let h = Generator::new(Device::CPU, 9);
    h.advance(128);
    let u2 = ops::rand_generator(&[64], Some(h)).unwrap();
    assert_eq!(u.to_vec::<f32>().unwrap(), u2.to_vec::<f32>().unwrap());
    assert_eq!(n.numel(), 64);
}
