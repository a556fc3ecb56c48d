//! Pooling (1-d composites, 3-d max and average, adaptive), reflection and
//! replication padding, nearest and bilinear upsampling, `col2im`,
//! `grid_sampler_2d` and the pairwise distances, on every device
//! (`DeviceTest`): shapes, memory formats and PyTorch's argument errors
//! everywhere, values against hand-computed references where there is
//! data.

use aten::core::testing::DeviceTest;
use aten::{ops, Tensor};

aten::instantiate_device_type_tests!(
    padding_reflects_and_replicates,
    padding_errors,
    pooling_3d,
    pooling_1d_composites,
    adaptive_pooling_keeps_channels_last,
    upsampling,
    col2im_sums_blocks,
    grid_sampler_modes,
    distances,
);

fn seq(n: usize) -> Vec<f32> {
    (0..n).map(|i| i as f32).collect()
}

fn strides(t: &Tensor) -> Vec<i64> {
    t.strides().to_vec()
}

fn padding_reflects_and_replicates(dev: DeviceTest) {
    let x = dev.tensor(&[1.0f32, 2., 3.], &[1, 1, 3]);
    let r = ops::reflection_pad1d(&x, &[2, 1]).unwrap();
    dev.assert_values(&r, &[1, 1, 6], &[3.0f32, 2., 1., 2., 3., 2.]);
    // Negative padding crops.
    let c = ops::reflection_pad1d(&x, &[-1, 1]).unwrap();
    dev.assert_values(&c, &[1, 1, 3], &[2.0f32, 3., 2.]);
    let x2 = dev.tensor(&seq(4), &[1, 2, 2]);
    let rep = ops::replication_pad2d(&x2, &[1, 0, 0, 1]).unwrap();
    dev.assert_values(&rep, &[1, 3, 3], &[0.0f32, 0., 1., 2., 2., 3., 2., 2., 3.]);
    let ref2 = ops::reflection_pad2d(&x2, &[1, 1, 1, 1]).unwrap();
    assert_eq!(ref2.sizes(), &[1, 4, 4]);
    // Integer dtypes pad too; 3-d padding of a 4-d (unbatched) input.
    let xi = dev.tensor(&[5i64, 6], &[1, 1, 1, 2]);
    let p3 = ops::replication_pad3d(&xi, &[0, 1, 1, 0, 0, 1]).unwrap();
    dev.assert_values(&p3, &[1, 2, 2, 3], &[5i64, 6, 6, 5, 6, 6, 5, 6, 6, 5, 6, 6]);
    let r3 =
        ops::reflection_pad3d(&dev.tensor(&seq(8), &[1, 1, 2, 2, 2]), &[1, 1, 1, 1, 1, 1]).unwrap();
    assert_eq!(r3.sizes(), &[1, 1, 4, 4, 4]);
    // A channels-last batched input keeps its format.
    let cl = ops::contiguous_with(
        &dev.tensor(&seq(12), &[1, 3, 2, 2]),
        ops::ContiguousOptions {
            memory_format: aten::MemoryFormat::ChannelsLast,
        },
    )
    .unwrap();
    let padded = ops::replication_pad2d(&cl, &[1, 1, 1, 1]).unwrap();
    assert_eq!(strides(&padded), &[48, 1, 12, 3]);
    let padded = ops::reflection_pad2d(&cl, &[1, 1, 1, 1]).unwrap();
    assert_eq!(strides(&padded), &[48, 1, 12, 3]);
}

fn padding_errors(dev: DeviceTest) {
    let x = dev.tensor(&seq(8), &[1, 1, 4, 2]);
    let e = dev.assert_error(ops::reflection_pad3d(&x, &[2, 1, 0, 2, 0, 0]));
    assert!(e.contains("Padding size should be less than the corresponding input dimension, but got: padding (2, 1) at dimension 3 of input [1, 1, 4, 2]"), "{e}");
    let e = dev.assert_error(ops::replication_pad3d(&x, &[1, 2, 0, 3, 0]));
    assert!(
        e.contains("padding size is expected to be 6, but got: 5"),
        "{e}"
    );
    let e = dev.assert_error(ops::replication_pad2d(
        &dev.tensor(&seq(2), &[2]),
        &[1, 1, 1, 1],
    ));
    assert!(e.contains("Expected 3D or 4D (batch mode) tensor"), "{e}");
    let e = dev.assert_error(ops::reflection_pad1d(
        &dev.tensor(&seq(3), &[1, 3]),
        &[-2, -2],
    ));
    assert!(e.contains("too small"), "{e}");
    // Hostile sizes: no overflow.
    let e = dev.assert_error(ops::replication_pad2d(
        &dev.tensor(&seq(4), &[1, 2, 2]),
        &[i64::MAX, i64::MAX, 0, 0],
    ));
    assert!(!e.is_empty());
}

fn pooling_3d(dev: DeviceTest) {
    let x = dev.tensor(&seq(16), &[1, 1, 2, 2, 4]);
    let (v, i) = ops::max_pool3d_with_indices(&x, &[2, 2, 2]).unwrap();
    dev.assert_values(&v, &[1, 1, 1, 1, 2], &[13.0f32, 15.]);
    dev.assert_values(&i, &[1, 1, 1, 1, 2], &[13i64, 15]);
    // Unbatched input, padding, dilation; NaN wins.
    let mut data = seq(8);
    data[5] = f32::NAN;
    let x4 = dev.tensor(&data, &[1, 2, 2, 2]);
    let (v, i) = ops::max_pool3d_with_indices_with(
        &x4,
        &[2, 2, 2],
        ops::MaxPool3dWithIndicesOptions {
            stride: &[1],
            padding: &[1],
            dilation: &[1],
            ceil_mode: false,
        },
    )
    .unwrap();
    assert_eq!(v.sizes(), &[1, 3, 3, 3]);
    if dev.has_data() {
        assert_eq!(i.to_vec::<i64>().unwrap()[0], 0);
        assert!(v.to_vec::<f32>().unwrap()[13].is_nan());
    }
    let avg = ops::avg_pool3d(&x, &[1, 2, 2]).unwrap();
    dev.assert_values(&avg, &[1, 1, 2, 1, 2], &[2.5f32, 4.5, 10.5, 12.5]);
    // Padding with and without counting it, and a divisor.
    let x1 = dev.tensor(&[4.0f64, 8.], &[1, 1, 1, 2]);
    let opts = |count_include_pad, divisor_override| ops::AvgPool3dOptions {
        stride: &[1],
        padding: &[0, 0, 1],
        ceil_mode: false,
        count_include_pad,
        divisor_override,
    };
    let a = ops::avg_pool3d_with(&x1, &[1, 1, 2], opts(true, None)).unwrap();
    dev.assert_values(&a, &[1, 1, 1, 3], &[2.0f64, 6., 4.]);
    let a = ops::avg_pool3d_with(&x1, &[1, 1, 2], opts(false, None)).unwrap();
    dev.assert_values(&a, &[1, 1, 1, 3], &[4.0f64, 6., 8.]);
    let a = ops::avg_pool3d_with(&x1, &[1, 1, 2], opts(true, Some(4))).unwrap();
    dev.assert_values(&a, &[1, 1, 1, 3], &[1.0f64, 3., 2.]);
    // int64 averages divide as integers.
    let xl = dev.tensor(&[1i64, 2, 4, 7], &[1, 1, 1, 4]);
    let a = ops::avg_pool3d(&xl, &[1, 1, 2]).unwrap();
    dev.assert_values(&a, &[1, 1, 1, 2], &[1i64, 5]);
    // Channels-last 3-d input: channels-last output.
    let cl = ops::contiguous_with(
        &dev.tensor(&seq(32), &[1, 2, 2, 2, 4]),
        ops::ContiguousOptions {
            memory_format: aten::MemoryFormat::ChannelsLast3d,
        },
    )
    .unwrap();
    let (v, i) = ops::max_pool3d_with_indices(&cl, &[2, 2, 2]).unwrap();
    assert_eq!(strides(&v), &[4, 1, 4, 4, 2]);
    assert_eq!(strides(&i), &[4, 1, 4, 4, 2]);
    // Errors.
    let e = dev.assert_error(ops::max_pool3d_with_indices(&x, &[1, 2]));
    assert!(
        e.contains("kernel_size must either be a single int, or a tuple of three ints"),
        "{e}"
    );
    let e = dev.assert_error(ops::avg_pool3d(&dev.tensor(&seq(4), &[2, 2]), &[1]));
    assert!(e.contains("4D or 5D"), "{e}");
    let e = dev.assert_error(ops::avg_pool3d(&x, &[1, 4, 4]));
    assert!(
        e.contains("smaller than kernel size") || e.contains("too small"),
        "{e}"
    );
    let e = dev.assert_error(ops::max_pool3d_with_indices(&x, &[i64::MAX]));
    assert!(e.contains("integer out of range"), "{e}");
}

fn pooling_1d_composites(dev: DeviceTest) {
    let x = dev.tensor(&[1.0f32, 3., 5., 7.], &[1, 4]);
    dev.assert_values(&ops::avg_pool1d(&x, &[2]).unwrap(), &[1, 2], &[2.0f32, 6.]);
    let x3 = dev.tensor(&seq(6), &[1, 1, 6]);
    dev.assert_values(
        &ops::adaptive_avg_pool1d(&x3, &[4]).unwrap(),
        &[1, 1, 4],
        &[0.5f32, 1.5, 3.5, 4.5],
    );
    let e = dev.assert_error(ops::adaptive_avg_pool1d(&x3, &[-1]));
    assert!(
        e.contains(
            "elements of output_size must be greater than or equal to 0 but received {1, -1}"
        ),
        "{e}"
    );
    let e = dev.assert_error(ops::avg_pool1d(&dev.tensor(&seq(4), &[4]), &[2]));
    assert!(
        e.contains("Expected 2D to 3D tensor, but got 1D tensor"),
        "{e}"
    );
    let e = dev.assert_error(ops::avg_pool1d(&x, &[2, 2]));
    assert!(e.contains("should contain one int (got 2)"), "{e}");
}

fn adaptive_pooling_keeps_channels_last(dev: DeviceTest) {
    let x = ops::contiguous_with(
        &dev.tensor(&seq(2 * 3 * 4 * 4), &[2, 3, 4, 4]),
        ops::ContiguousOptions {
            memory_format: aten::MemoryFormat::ChannelsLast,
        },
    )
    .unwrap();
    let y = ops::_adaptive_avg_pool2d(&x, &[2, 3]).unwrap();
    assert_eq!(y.sizes(), &[2, 3, 2, 3]);
    assert_eq!(strides(&y), &[18, 1, 9, 3]);
    let g = ops::_adaptive_avg_pool2d_backward(&ops::contiguous(&y).unwrap(), &x).unwrap();
    assert_eq!(strides(&g), strides(&x));
    // The backward spreads each gradient over its window.
    let small = dev.tensor(&seq(4), &[1, 2, 2]);
    let ones = dev.tensor(&[1.0f32], &[1, 1, 1]);
    let g = ops::_adaptive_avg_pool2d_backward(&ones, &small).unwrap();
    dev.assert_values(&g, &[1, 2, 2], &[0.25f32; 4]);
    let y3 = ops::_adaptive_avg_pool3d(&dev.tensor(&seq(8), &[1, 2, 2, 2]), &[1, 1, 2]).unwrap();
    dev.assert_values(&y3, &[1, 1, 1, 2], &[3.0f32, 4.]);
    let e = dev.assert_error(ops::_adaptive_avg_pool3d(
        &dev.tensor(&seq(8), &[1, 2, 2, 2]),
        &[1, 1],
    ));
    assert!(e.contains("output_size must be 3"), "{e}");
    let e = dev.assert_error(ops::_adaptive_avg_pool2d(
        &dev.tensor(&seq(0), &[1, 0, 2]),
        &[1, 1],
    ));
    assert!(e.contains("non-zero size for non-batch dimensions"), "{e}");
}

fn upsampling(dev: DeviceTest) {
    let x = dev.tensor(&[1.0f32, 2., 3., 4.], &[1, 1, 2, 2]);
    let n = ops::upsample_nearest2d_vec(&x, Some(&[4, 3]), None).unwrap();
    dev.assert_values(
        &n,
        &[1, 1, 4, 3],
        &[1.0f32, 1., 2., 1., 1., 2., 3., 3., 4., 3., 3., 4.],
    );
    let n = ops::upsample_nearest2d_vec(&x, None, Some(&[1.5, 1.0])).unwrap();
    assert_eq!(n.sizes(), &[1, 1, 3, 2]);
    let b = ops::upsample_bilinear2d_vec(&x, Some(&[3, 3]), true, None).unwrap();
    dev.assert_values(
        &b,
        &[1, 1, 3, 3],
        &[1.0f32, 1.5, 2., 2., 2.5, 3., 3., 3.5, 4.],
    );
    let b = ops::upsample_bilinear2d_vec(&x, Some(&[1, 4]), false, None).unwrap();
    dev.assert_values(&b, &[1, 1, 1, 4], &[2.0f32, 2.25, 2.75, 3.]);
    let cl = ops::contiguous_with(
        &dev.tensor(&seq(8), &[1, 2, 2, 2]),
        ops::ContiguousOptions {
            memory_format: aten::MemoryFormat::ChannelsLast,
        },
    )
    .unwrap();
    let up = ops::upsample_nearest2d_vec(&cl, Some(&[4, 4]), None).unwrap();
    assert_eq!(strides(&up), &[32, 1, 8, 2]);
    let e = dev.assert_error(ops::upsample_nearest2d_vec(
        &x,
        Some(&[2, 2]),
        Some(&[2.0, 2.0]),
    ));
    assert!(
        e.contains("Must specify exactly one of output_size and scale_factors"),
        "{e}"
    );
    let e = dev.assert_error(ops::upsample_bilinear2d_vec(&x, Some(&[0, 2]), false, None));
    assert!(
        e.contains("Input and output sizes should be greater than 0"),
        "{e}"
    );
    let e = dev.assert_error(ops::upsample_nearest2d_vec(
        &dev.tensor(&seq(2), &[1, 2]),
        Some(&[2, 2]),
        None,
    ));
    assert!(!e.is_empty());
    // Below rank 2 no size list fits, an empty one included (the spatial
    // sizes are never read).
    let line = dev.tensor(&seq(4), &[4]);
    for scales in [Some(&[][..]), Some(&[2.0][..])] {
        let e = dev.assert_error(ops::upsample_nearest2d_vec(&line, None, scales));
        assert!(e.contains("scale_factors equals to -1"), "{e}");
        let e = dev.assert_error(ops::upsample_bilinear2d_vec(&line, None, false, scales));
        assert!(e.contains("scale_factors equals to -1"), "{e}");
    }
    let e = dev.assert_error(ops::upsample_nearest2d_vec(&line, Some(&[]), None));
    assert!(e.contains("output_size equals to -1"), "{e}");
}

fn col2im_sums_blocks(dev: DeviceTest) {
    // 1 channel, 2x2 kernel over a 3x3 image: 4 blocks of 4 columns.
    let cols = dev.tensor(&[1.0f32; 16], &[1, 4, 4]);
    let y = ops::col2im(&cols, &[3, 3], &[2, 2], &[1, 1], &[0, 0], &[1, 1]).unwrap();
    dev.assert_values(&y, &[1, 1, 3, 3], &[1.0f32, 2., 1., 2., 4., 2., 1., 2., 1.]);
    let unbatched = ops::col2im(
        &dev.tensor(&[1.0f32; 16], &[4, 4]),
        &[3, 3],
        &[2, 2],
        &[1, 1],
        &[0, 0],
        &[1, 1],
    )
    .unwrap();
    assert_eq!(unbatched.sizes(), &[1, 3, 3]);
    let e = dev.assert_error(ops::col2im(
        &cols,
        &[3, 3],
        &[3, 2],
        &[1, 1],
        &[0, 0],
        &[1, 1],
    ));
    assert!(e.contains("divisible by the product of kernel_size"), "{e}");
    let e = dev.assert_error(ops::col2im(
        &cols,
        &[4, 3],
        &[2, 2],
        &[1, 1],
        &[0, 0],
        &[1, 1],
    ));
    assert!(e.contains("calculated number of sliding blocks"), "{e}");
    let e = dev.assert_error(ops::col2im(
        &cols,
        &[3, 3],
        &[i64::MAX, 2],
        &[1, 1],
        &[0, 0],
        &[1, 1],
    ));
    assert!(!e.is_empty());
}

fn grid_sampler_modes(dev: DeviceTest) {
    let x = dev.tensor(&[1.0f64, 2., 3., 4.], &[1, 1, 2, 2]);
    // The corners and the center, align_corners.
    let grid = dev.tensor(&[-1.0f64, -1., 1., 1., 0., 0.], &[1, 1, 3, 2]);
    let y = ops::grid_sampler_2d(&x, &grid, 0, 0, true).unwrap();
    dev.assert_values(&y, &[1, 1, 1, 3], &[1.0f64, 4., 2.5]);
    let y = ops::grid_sampler_2d(&x, &grid, 1, 0, true).unwrap();
    // nearbyint(0.5) rounds to even: 0.
    dev.assert_values(&y, &[1, 1, 1, 3], &[1.0f64, 4., 1.]);
    // Outside the image: zeros padding gives 0, border the edge.
    let far = dev.tensor(&[3.0f64, 3.], &[1, 1, 1, 2]);
    let y = ops::grid_sampler_2d(&x, &far, 0, 0, false).unwrap();
    dev.assert_values(&y, &[1, 1, 1, 1], &[0.0f64]);
    let y = ops::grid_sampler_2d(&x, &far, 0, 1, false).unwrap();
    dev.assert_values(&y, &[1, 1, 1, 1], &[4.0f64]);
    let y = ops::grid_sampler_2d(&x, &far, 2, 2, false).unwrap();
    assert_eq!(y.sizes(), &[1, 1, 1, 1]);
    let e = dev.assert_error(ops::grid_sampler_2d(
        &x,
        &dev.tensor(&[0.0f64; 3], &[1, 1, 1, 3]),
        0,
        0,
        false,
    ));
    assert!(
        e.contains("expected grid to have size 2 in last dimension"),
        "{e}"
    );
    let e = dev.assert_error(ops::grid_sampler_2d(
        &x,
        &dev.tensor(&[0.0f32; 2], &[1, 1, 1, 2]),
        0,
        0,
        false,
    ));
    assert!(e.contains("same dtype"), "{e}");
}

fn distances(dev: DeviceTest) {
    let a = dev.tensor(&[0.0f64, 0., 3., 4.], &[2, 2]);
    let b = dev.tensor(&[0.0f64, 0.], &[1, 2]);
    for (p, want) in [
        (2.0, [0.0f64, 5.]),
        (1.0, [0., 7.]),
        (0.0, [0., 2.]),
        (f64::INFINITY, [0., 4.]),
    ] {
        let d = ops::_cdist_forward(&a, &b, p, None).unwrap();
        dev.assert_values(&d, &[2, 1], &want);
    }
    // The matrix-product form (compute_mode 1) agrees.
    let d = ops::_cdist_forward(&a, &b, 2.0, Some(1)).unwrap();
    dev.assert_values(&d, &[2, 1], &[0.0f64, 5.]);
    // Batch dimensions broadcast.
    let d = ops::_cdist_forward(
        &dev.tensor(&[1.0f32; 12], &[3, 2, 2]),
        &dev.tensor(&[1.0f32; 2], &[1, 1, 2]),
        2.0,
        None,
    )
    .unwrap();
    assert_eq!(d.sizes(), &[3, 2, 1]);
    let e = dev.assert_error(ops::_cdist_forward(
        &a,
        &dev.tensor(&[0.0f64; 3], &[1, 3]),
        2.0,
        None,
    ));
    assert!(
        e.contains("X1 and X2 must have the same number of columns"),
        "{e}"
    );
    let e = dev.assert_error(ops::_cdist_forward(&a, &b, -1.0, None));
    assert!(e.contains("non-negative p"), "{e}");
    let e = dev.assert_error(ops::_cdist_forward(&a, &b, 2.0, Some(3)));
    assert!(e.contains("possible modes: 0, 1, 2, but was: 3"), "{e}");
    let p = ops::_pdist_forward(&dev.tensor(&[0.0f32, 0., 3., 4., 0., 4.], &[3, 2])).unwrap();
    dev.assert_values(&p, &[3], &[5.0f32, 4., 3.]);
    let one = ops::_pdist_forward(&dev.tensor(&[1.0f32, 2.], &[1, 2])).unwrap();
    assert_eq!(one.sizes(), &[0]);
    let t = ops::t(&dev.tensor(&seq(6), &[3, 2])).unwrap();
    let e = dev.assert_error(ops::_pdist_forward(&t));
    assert!(
        e.contains("_pdist_forward requires contiguous input"),
        "{e}"
    );
}
