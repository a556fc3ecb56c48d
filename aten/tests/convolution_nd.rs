//! `convolution` and `convolution_backward` over 1-, 2- and 3-d inputs,
//! plain and transposed: plain convolutions against a direct loop,
//! transposed ones as the adjoints of plain ones (`<conv(x), y> = <x,
//! conv_transposed(y)>`), the backward's gradients against the same
//! identities, memory formats and PyTorch's argument errors, on every
//! device (`DeviceTest`).

use aten::core::testing::DeviceTest;
use aten::{ops, Tensor};

aten::instantiate_device_type_tests!(
    plain_convolutions_match_a_direct_loop,
    transposed_convolutions_are_adjoints,
    backward_gradients,
    formats_and_errors,
);

/// Deterministic values in [-2, 2].
fn values(n: usize, seed: usize) -> Vec<f64> {
    (0..n)
        .map(|i| (((i * 7 + seed * 13) % 17) as f64 - 8.0) / 4.0)
        .collect()
}

fn numel(shape: &[i64]) -> usize {
    shape.iter().product::<i64>() as usize
}

/// Shapes padded to 3 spatial dimensions (leading ones of size 1).
fn spatial3(shape: &[i64]) -> [usize; 3] {
    let s = &shape[2..];
    let mut out = [1usize; 3];
    for (i, &v) in s.iter().enumerate() {
        out[3 - s.len() + i] = v as usize;
    }
    out
}

/// A direct plain convolution (no bias), any spatial rank up to 3.
#[allow(clippy::too_many_arguments)]
fn reference(
    x: &[f64],
    xs: &[i64],
    w: &[f64],
    ws: &[i64],
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    groups: usize,
) -> (Vec<f64>, Vec<i64>) {
    let k = xs.len() - 2;
    let pad3 = |v: &[i64], fill: i64| {
        let mut o = [fill; 3];
        o[3 - k..].copy_from_slice(v);
        o
    };
    let (s, p, d) = (pad3(stride, 1), pad3(padding, 0), pad3(dilation, 1));
    let (n, c, o) = (xs[0] as usize, xs[1] as usize, ws[0] as usize);
    let (i3, k3) = (spatial3(xs), spatial3(ws));
    let o3: [usize; 3] = std::array::from_fn(|a| {
        ((i3[a] as i64 + 2 * p[a] - d[a] * (k3[a] as i64 - 1) - 1) / s[a] + 1) as usize
    });
    let (cg, og) = (c / groups, o / groups);
    let mut out = vec![0.0; n * o * o3.iter().product::<usize>()];
    let mut at = 0;
    for b in 0..n {
        for oc in 0..o {
            let g = oc / og;
            for z in 0..o3[0] {
                for y in 0..o3[1] {
                    for xx in 0..o3[2] {
                        let mut acc = 0.0;
                        for ic in 0..cg {
                            for kz in 0..k3[0] {
                                for ky in 0..k3[1] {
                                    for kx in 0..k3[2] {
                                        let pos = [
                                            (z as i64) * s[0] - p[0] + kz as i64 * d[0],
                                            (y as i64) * s[1] - p[1] + ky as i64 * d[1],
                                            (xx as i64) * s[2] - p[2] + kx as i64 * d[2],
                                        ];
                                        if (0..3).any(|a| pos[a] < 0 || pos[a] >= i3[a] as i64) {
                                            continue;
                                        }
                                        let xi = (((b * c + g * cg + ic) * i3[0]
                                            + pos[0] as usize)
                                            * i3[1]
                                            + pos[1] as usize)
                                            * i3[2]
                                            + pos[2] as usize;
                                        let wi = (((oc * cg + ic) * k3[0] + kz) * k3[1] + ky)
                                            * k3[2]
                                            + kx;
                                        acc += x[xi] * w[wi];
                                    }
                                }
                            }
                        }
                        out[at] = acc;
                        at += 1;
                    }
                }
            }
        }
    }
    let mut shape = vec![n as i64, o as i64];
    shape.extend(o3[3 - k..].iter().map(|&v| v as i64));
    (out, shape)
}

fn dot(a: &Tensor, b: &Tensor) -> f64 {
    let (a, b) = (a.to_vec::<f64>().unwrap(), b.to_vec::<f64>().unwrap());
    a.iter().zip(&b).map(|(x, y)| x * y).sum()
}

/// The cases: input shape, weight shape, stride, padding, dilation,
/// groups.
type Case = (Vec<i64>, Vec<i64>, Vec<i64>, Vec<i64>, Vec<i64>, i64);

fn cases() -> Vec<Case> {
    vec![
        (vec![2, 2, 7], vec![4, 1, 3], vec![2], vec![1], vec![1], 2),
        (vec![1, 3, 6], vec![2, 3, 2], vec![1], vec![0], vec![2], 1),
        (
            vec![1, 2, 5, 6],
            vec![2, 2, 3, 2],
            vec![2, 1],
            vec![1, 0],
            vec![1, 2],
            1,
        ),
        (
            vec![1, 2, 4, 5, 4],
            vec![1, 2, 3, 1, 3],
            vec![1, 1, 2],
            vec![0, 0, 1],
            vec![1, 1, 1],
            1,
        ),
        (
            vec![2, 2, 3, 4, 3],
            vec![2, 1, 2, 2, 2],
            vec![2, 1, 1],
            vec![1, 1, 0],
            vec![1, 2, 1],
            2,
        ),
    ]
    .into_iter()
    .chain(small_batch_cases())
    .chain(depthwise_cases())
    .collect()
}

/// Batches of small planes, which the CPU kernel unfolds side by side
/// into one product: a 3x3 window with bias and padding, and a pointwise
/// one.
fn small_batch_cases() -> Vec<Case> {
    vec![
        (
            vec![3, 4, 4, 3],
            vec![5, 4, 3, 3],
            vec![1, 1],
            vec![1, 1],
            vec![1, 1],
            1,
        ),
        (
            vec![2, 3, 2, 2],
            vec![4, 3, 1, 1],
            vec![1, 1],
            vec![0, 0],
            vec![1, 1],
            1,
        ),
    ]
}

/// Depthwise 2-d convolutions (a group per channel, one filter each: the
/// backend's direct kernel where it has one): MobileNet's 3x3 at strides
/// 1 and 2, ConvNeXt's 7x7, windows wider than the input, dilation,
/// uneven strides and paddings, small planes and large ones.
fn depthwise_cases() -> Vec<Case> {
    let case = |x: [i64; 4], k: [i64; 2], s: [i64; 2], p: [i64; 2], d: [i64; 2]| {
        (
            x.to_vec(),
            vec![x[1], 1, k[0], k[1]],
            s.to_vec(),
            p.to_vec(),
            d.to_vec(),
            x[1],
        )
    };
    vec![
        case([2, 3, 7, 6], [3, 3], [1, 1], [1, 1], [1, 1]),
        case([1, 4, 9, 8], [3, 3], [2, 2], [1, 1], [1, 1]),
        case([1, 2, 8, 8], [7, 7], [1, 1], [3, 3], [1, 1]),
        case([1, 2, 3, 2], [7, 7], [1, 1], [3, 3], [1, 1]),
        case([2, 2, 6, 7], [3, 2], [2, 1], [2, 0], [2, 1]),
        case([1, 3, 5, 19], [5, 5], [1, 3], [2, 2], [1, 2]),
        // Planes of more than 64 outputs, convolved a plane at a time: at
        // strides 1, 2 (an odd width) and 3, and a 7x7 window.
        case([1, 2, 12, 13], [3, 3], [1, 1], [1, 1], [1, 1]),
        case([1, 3, 20, 17], [3, 3], [2, 2], [1, 1], [1, 1]),
        case([1, 2, 30, 31], [5, 5], [3, 3], [2, 2], [1, 1]),
        case([1, 2, 12, 12], [7, 7], [1, 1], [3, 3], [1, 1]),
        // Small planes of many channels, the channels innermost: runs of
        // 64 and 32 in registers and a tail, at strides 1 and 2.
        case([2, 40, 5, 5], [3, 3], [1, 1], [1, 1], [1, 1]),
        case([1, 37, 6, 7], [3, 3], [2, 2], [1, 1], [1, 1]),
        case([1, 100, 3, 3], [5, 5], [1, 1], [2, 2], [1, 1]),
        // A window so dilated over so much padding that the direct kernel
        // declines it.
        case([1, 2, 4, 4], [3, 3], [1, 1], [100, 100], [100, 100]),
    ]
}

fn plain_convolutions_match_a_direct_loop(dev: DeviceTest) {
    for (xs, ws, s, p, d, g) in cases() {
        let (xv, wv) = (values(numel(&xs), 1), values(numel(&ws), 2));
        let x = dev.tensor(&xv, &xs);
        let w = dev.tensor(&wv, &ws);
        let k = xs.len() - 2;
        let y = ops::convolution(&x, &w, None, &s, &p, &d, false, &vec![0; k], g).unwrap();
        let (want, shape) = reference(&xv, &xs, &wv, &ws, &s, &p, &d, g as usize);
        assert_eq!(y.sizes(), &shape[..], "{xs:?} {ws:?}");
        if dev.has_data() {
            let got = y.to_vec::<f64>().unwrap();
            for (a, b) in got.iter().zip(&want) {
                assert!((a - b).abs() < 1e-9, "{xs:?}: {got:?} vs {want:?}");
            }
        }
        // A bias adds per channel.
        let bv = values(ws[0] as usize, 3);
        let b = dev.tensor(&bv, &[ws[0]]);
        let yb = ops::convolution(&x, &w, Some(&b), &s, &p, &d, false, &vec![0; k], g).unwrap();
        assert_eq!(yb.sizes(), &shape[..]);
        let plane = numel(&shape[2..]);
        let with_bias: Vec<f64> = want
            .iter()
            .enumerate()
            .map(|(i, v)| v + bv[i / plane % ws[0] as usize])
            .collect();
        // In float32 too (the kernels' vector loops), to float32's
        // precision.
        let f32 = |t: &Tensor| ops::to_dtype(t, aten::ScalarType::Float).unwrap();
        let y32 = ops::convolution(
            &f32(&x),
            &f32(&w),
            Some(&f32(&b)),
            &s,
            &p,
            &d,
            false,
            &vec![0; k],
            g,
        )
        .unwrap();
        assert_eq!(y32.sizes(), &shape[..]);
        if dev.has_data() {
            let got = yb.to_vec::<f64>().unwrap();
            let got32 = y32.to_vec::<f32>().unwrap();
            for ((a, a32), b) in got.iter().zip(&got32).zip(&with_bias) {
                assert!(
                    (a - b).abs() < 1e-9,
                    "{xs:?} {ws:?}: {got:?} vs {with_bias:?}"
                );
                assert!(
                    (f64::from(*a32) - b).abs() < 1e-4,
                    "{xs:?} {ws:?}: {got32:?} vs {with_bias:?}"
                );
            }
        }
    }
}

fn transposed_convolutions_are_adjoints(dev: DeviceTest) {
    for (xs, ws, s, p, d, g) in cases() {
        let k = xs.len() - 2;
        let x = dev.tensor(&values(numel(&xs), 1), &xs);
        let w = dev.tensor(&values(numel(&ws), 2), &ws);
        let y = ops::convolution(&x, &w, None, &s, &p, &d, false, &vec![0; k], g).unwrap();
        let ys = y.sizes();
        // The output padding that gives back x's size.
        let extra: Vec<i64> = (0..k)
            .map(|i| {
                let full = (ys[i + 2] - 1) * s[i] - 2 * p[i] + d[i] * (ws[i + 2] - 1) + 1;
                xs[i + 2] - full
            })
            .collect();
        let v = dev.tensor(&values(numel(&ys), 5), &ys);
        let t = ops::convolution(&v, &w, None, &s, &p, &d, true, &extra, g).unwrap();
        assert_eq!(t.sizes(), &xs[..], "{xs:?}");
        if dev.has_data() {
            let (lhs, rhs) = (dot(&y, &v), dot(&x, &t));
            assert!((lhs - rhs).abs() < 1e-9, "{xs:?}: {lhs} vs {rhs}");
        }
    }
}

fn backward_gradients(dev: DeviceTest) {
    for transposed in [false, true] {
        for (xs, ws, s, p, d, g) in cases() {
            let k = xs.len() - 2;
            let zero = vec![0; k];
            // A transposed convolution's input has the plain one's output
            // shape and its weight the same layout.
            let plain_out = {
                let x = dev.tensor(&values(numel(&xs), 1), &xs);
                let w = dev.tensor(&values(numel(&ws), 2), &ws);
                ops::convolution(&x, &w, None, &s, &p, &d, false, &zero, g)
                    .unwrap()
                    .sizes()
            };
            let (in_shape, extra) = if transposed {
                let extra: Vec<i64> = (0..k)
                    .map(|i| {
                        let full =
                            (plain_out[i + 2] - 1) * s[i] - 2 * p[i] + d[i] * (ws[i + 2] - 1) + 1;
                        xs[i + 2] - full
                    })
                    .collect();
                (plain_out.to_vec(), extra)
            } else {
                (xs.clone(), zero.clone())
            };
            let x = dev.tensor(&values(numel(&in_shape), 1), &in_shape);
            let w = dev.tensor(&values(numel(&ws), 2), &ws);
            let y = ops::convolution(&x, &w, None, &s, &p, &d, transposed, &extra, g).unwrap();
            let gy = dev.tensor(&values(numel(&y.sizes()), 4), &y.sizes());
            let out_ch = y.sizes()[1];
            let (gi, gw, gb) = ops::convolution_backward(
                &gy,
                &x,
                &w,
                Some(&[out_ch]),
                &s,
                &p,
                &d,
                transposed,
                &extra,
                g,
                &[true, true, true],
            )
            .unwrap();
            assert_eq!(gi.sizes(), x.sizes());
            assert_eq!(gw.sizes(), w.sizes());
            assert_eq!(gb.sizes(), &[out_ch]);
            if dev.has_data() {
                // Linear in x and in w: <gy, conv(dx, w)> = <gi, dx> and
                // <gy, conv(x, dw)> = <gw, dw>.
                let dx = dev.tensor(&values(numel(&in_shape), 7), &in_shape);
                let dw = dev.tensor(&values(numel(&ws), 8), &ws);
                let cx =
                    ops::convolution(&dx, &w, None, &s, &p, &d, transposed, &extra, g).unwrap();
                let cw =
                    ops::convolution(&x, &dw, None, &s, &p, &d, transposed, &extra, g).unwrap();
                let (a, b) = (dot(&gy, &cx), dot(&gi, &dx));
                assert!(
                    (a - b).abs() < 1e-9,
                    "input {transposed} {xs:?}: {a} vs {b}"
                );
                let (a, b) = (dot(&gy, &cw), dot(&gw, &dw));
                assert!(
                    (a - b).abs() < 1e-9,
                    "weight {transposed} {xs:?}: {a} vs {b}"
                );
            }
        }
    }
}

fn formats_and_errors(dev: DeviceTest) {
    // A channels-last-looking 1-d weight gives a channels-last result
    // (PyTorch's 1-d convolutions run as 2-d ones).
    let x = dev.tensor(&values(12, 1), &[2, 2, 3]);
    let w = ops::as_strided(
        &dev.tensor(&values(12, 2), &[4, 1, 3]),
        &[4, 1, 3],
        &[3, 1, 1],
    )
    .unwrap();
    let y = ops::convolution(&x, &w, None, &[2], &[1], &[1], false, &[0], 2).unwrap();
    assert_eq!(y.sizes(), &[2, 4, 2]);
    assert_eq!(y.strides(), &[8, 1, 4]);
    let e = dev.assert_error(ops::convolution(
        &x,
        &dev.tensor(&values(36, 2), &[4, 1, 3, 3]),
        None,
        &[1],
        &[0],
        &[1],
        false,
        &[0],
        1,
    ));
    assert!(
        e.contains("Expected 4-dimensional input for 4-dimensional weight"),
        "{e}"
    );
    let e = dev.assert_error(ops::convolution(
        &dev.tensor(&values(14, 1), &[1, 2, 1, 7]),
        &dev.tensor(&values(8, 2), &[2, 1, 2, 2]),
        None,
        &[1, 2],
        &[1, 1],
        &[1, 2],
        true,
        &[0, 1],
        1,
    ));
    assert!(e.contains("Output size is too small"), "{e}");
    let e = dev.assert_error(ops::convolution(
        &x,
        &w,
        None,
        &[2],
        &[1],
        &[1],
        false,
        &[0],
        3,
    ));
    assert!(e.contains("Given groups=3"), "{e}");
    let e = dev.assert_error(ops::convolution(
        &x,
        &w,
        None,
        &[0],
        &[1],
        &[1],
        false,
        &[0],
        2,
    ));
    assert!(e.contains("non-positive stride is not supported"), "{e}");
    let e = dev.assert_error(ops::convolution(
        &x,
        &w,
        None,
        &[1, 1],
        &[1],
        &[1],
        false,
        &[0],
        2,
    ));
    assert!(
        e.contains("expected stride to be a single integer value or a list of 1 values"),
        "{e}"
    );
    let x4 = dev.tensor(&values(24, 1), &[2, 4, 3]);
    let e = dev.assert_error(ops::convolution(
        &x4,
        &w,
        None,
        &[1],
        &[1],
        &[1],
        true,
        &[3],
        2,
    ));
    assert!(
        e.contains("output padding must be smaller than either stride or dilation"),
        "{e}"
    );
    let e = dev.assert_error(ops::convolution(
        &dev.tensor(&values(4, 1), &[2, 2]),
        &dev.tensor(&values(4, 1), &[2, 2]),
        None,
        &[1],
        &[0],
        &[1],
        false,
        &[0],
        1,
    ));
    assert!(
        e.contains("weight should have at least three dimensions"),
        "{e}"
    );
}
