//! The FFT operators `_fft_r2c` and `_fft_c2r`: values against a direct
//! DFT, round trips, normalization modes, one- and two-sided outputs,
//! non-contiguous real and complex inputs, and (on every device) output
//! shapes, dtypes and PyTorch's strides, and the argument errors.

use aten::c10::half::f16;
use aten::c10::{Complex, ScalarType};
use aten::core::testing::DeviceTest;
use aten::ops;
use aten::Tensor;

aten::instantiate_device_type_tests!(geometry_and_errors);

/// `t`'s strides.
fn strides(t: &Tensor) -> Vec<i64> {
    t.layout().expect("a defined tensor").strides().to_vec()
}

/// The row-major index of `idx` in `sizes`.
fn flat(sizes: &[usize], idx: &[usize]) -> usize {
    idx.iter().zip(sizes).fold(0, |acc, (i, s)| acc * s + i)
}

/// The multi-index of row-major position `i` in `sizes`.
fn unflat(sizes: &[usize], mut i: usize) -> Vec<usize> {
    let mut idx = vec![0; sizes.len()];
    for d in (0..sizes.len()).rev() {
        idx[d] = i % sizes[d];
        i /= sizes[d];
    }
    idx
}

/// The forward DFT of `x` (row-major, of `sizes`) over `dims`, directly
/// from the definition.
fn dft(x: &[(f64, f64)], sizes: &[usize], dims: &[usize]) -> Vec<(f64, f64)> {
    let mut cur = x.to_vec();
    for &d in dims {
        let n = sizes[d];
        let mut next = vec![(0.0, 0.0); cur.len()];
        for (o, slot) in next.iter_mut().enumerate() {
            let idx = unflat(sizes, o);
            let k = idx[d];
            let mut acc = (0.0, 0.0);
            for j in 0..n {
                let mut src = idx.clone();
                src[d] = j;
                let (re, im) = cur[flat(sizes, &src)];
                let angle = -2.0 * std::f64::consts::PI * (j * k) as f64 / n as f64;
                let (c, s) = (angle.cos(), angle.sin());
                acc.0 += re * c - im * s;
                acc.1 += re * s + im * c;
            }
            *slot = acc;
        }
        cur = next;
    }
    cur
}

fn r2c(x: &Tensor, dim: &[i64], normalization: i64, onesided: bool) -> Tensor {
    ops::_fft_r2c(x, dim, normalization, onesided).unwrap()
}

fn assert_close(got: &[(f64, f64)], want: &[(f64, f64)], tol: f64) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g.0 - w.0).abs() <= tol && (g.1 - w.1).abs() <= tol,
            "element {i}: got {g:?}, want {w:?}"
        );
    }
}

fn complex_values(t: &Tensor) -> Vec<(f64, f64)> {
    match t.dtype() {
        Some(ScalarType::ComplexDouble) => t
            .to_vec::<Complex<f64>>()
            .unwrap()
            .into_iter()
            .map(|c| (c.re, c.im))
            .collect(),
        _ => t
            .to_vec::<Complex<f32>>()
            .unwrap()
            .into_iter()
            .map(|c| (f64::from(c.re), f64::from(c.im)))
            .collect(),
    }
}

#[test]
fn r2c_matches_the_definition() {
    let x = Tensor::from_slice(&[1.0f64, 2.0, 3.0, 4.0], &[4]).unwrap();
    let full = r2c(&x, &[0], 0, false);
    assert_eq!(full.dtype(), Some(ScalarType::ComplexDouble));
    assert_close(
        &complex_values(&full),
        &[(10.0, 0.0), (-2.0, 2.0), (-2.0, 0.0), (-2.0, -2.0)],
        1e-12,
    );
    let half = r2c(&x, &[0], 2, true);
    assert_close(
        &complex_values(&half),
        &[(2.5, 0.0), (-0.5, 0.5), (-0.5, 0.0)],
        1e-12,
    );
    let root = r2c(&x, &[-1], 1, true);
    assert_close(&complex_values(&root)[..1], &[(5.0, 0.0)], 1e-12);

    // Several dimensions of a transposed, offset float32 view.
    let sizes = [3usize, 4, 5];
    let data: Vec<f32> = (0..70)
        .map(|i| ((i * 37) % 23) as f32 * 0.25 - 2.0)
        .collect();
    let base = Tensor::from_slice(&data, &[70]).unwrap();
    let view = Tensor::from(
        base.base()
            .as_strided(&[3, 4, 5], &[1, 15, 3], Some(7))
            .unwrap(),
    );
    let logical: Vec<(f64, f64)> = view
        .to_vec::<f32>()
        .unwrap()
        .into_iter()
        .map(|v| (f64::from(v), 0.0))
        .collect();
    for (dims, onesided) in [
        (vec![0usize, 2], false),
        (vec![2, 0, 1], true),
        (vec![1], true),
    ] {
        let dim: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
        let got = r2c(&view, &dim, 0, onesided);
        assert_eq!(got.dtype(), Some(ScalarType::ComplexFloat));
        let want = dft(&logical, &sizes, &dims);
        let last = *dims.last().unwrap();
        let kept = if onesided {
            sizes[last] / 2 + 1
        } else {
            sizes[last]
        };
        let mut out_sizes = sizes.to_vec();
        out_sizes[last] = kept;
        assert_eq!(
            got.sizes().to_vec(),
            out_sizes.iter().map(|&s| s as i64).collect::<Vec<_>>()
        );
        let want: Vec<(f64, f64)> = (0..out_sizes.iter().product())
            .map(|i| want[flat(&sizes, &unflat(&out_sizes, i))])
            .collect();
        assert_close(&complex_values(&got), &want, 1e-4);
    }
}

#[test]
fn c2r_inverts_r2c() {
    for (sizes, dims) in [
        (vec![6i64], vec![0i64]),
        (vec![5], vec![0]),
        (vec![3, 4], vec![0, 1]),
        (vec![2, 3, 5], vec![2, 0]),
        (vec![4, 3, 2], vec![1]),
    ] {
        let n: i64 = sizes.iter().product();
        let data: Vec<f64> = (0..n).map(|i| ((i * 13) % 7) as f64 - 3.0).collect();
        let x = Tensor::from_slice(&data, &sizes).unwrap();
        let spectrum = r2c(&x, &dims, 0, true);
        let last = dims[dims.len() - 1];
        let len = sizes[last.rem_euclid(sizes.len() as i64) as usize];
        // The spectrum's layout is permuted: the input is a strided view.
        let back = ops::_fft_c2r(&spectrum, &dims, 2, len).unwrap();
        assert_eq!(back.dtype(), Some(ScalarType::Double));
        assert_eq!(back.sizes().to_vec(), sizes);
        let got = back.to_vec::<f64>().unwrap();
        for (g, w) in got.iter().zip(&data) {
            assert!(
                (g - w).abs() < 1e-9,
                "{sizes:?} over {dims:?}: {got:?} vs {data:?}"
            );
        }
    }
    // A sliced complex view (every other row) and complex64.
    let x = Tensor::from_slice(&[1.0f32, -2.0, 0.5, 4.0, 3.0, -1.0, 2.0, 0.0], &[4, 2]).unwrap();
    let spectrum = r2c(&x, &[1], 0, true);
    let rows = ops::slice_tensor_with(
        &spectrum,
        ops::SliceTensorOptions {
            dim: 0,
            start: Some(1),
            end: None,
            step: 2,
        },
    )
    .unwrap();
    let back = ops::_fft_c2r(&rows, &[1], 2, 2).unwrap();
    assert_eq!(back.dtype(), Some(ScalarType::Float));
    assert_eq!(back.to_vec::<f32>().unwrap(), vec![0.5, 4.0, 2.0, 0.0]);
    // Imaginary parts of the zero frequency do not reach the output.
    let c = Tensor::from_slice(&[Complex::new(4.0f64, 9.0), Complex::new(0.0, 0.0)], &[2]).unwrap();
    let r = ops::_fft_c2r(&c, &[0], 0, 2).unwrap();
    assert_eq!(r.to_vec::<f64>().unwrap(), vec![4.0, 4.0]);
}

fn geometry_and_errors(dev: DeviceTest) {
    // PyTorch's layouts: batch dimensions ordered by the input's strides
    // and outermost, transformed ones innermost.
    let x = dev.tensor(&[0.0f64; 15], &[5, 3, 1]);
    let y = ops::_fft_r2c(&x, &[0, 2], 2, false).unwrap();
    assert_eq!(y.sizes(), &[5, 3, 1]);
    assert_eq!(strides(&y), vec![1, 5, 1]);
    assert_eq!(y.dtype(), Some(ScalarType::ComplexDouble));
    let x = dev.tensor(&[0.0f32; 6], &[2, 3, 1]);
    let y = ops::_fft_r2c(&x, &[0, 1], 0, false).unwrap();
    assert_eq!(strides(&y), vec![3, 1, 6]);
    let y = ops::_fft_r2c(&x, &[1], 0, true).unwrap();
    assert_eq!(y.sizes(), &[2, 2, 1]);
    assert_eq!(strides(&y), vec![2, 1, 2]);
    assert_eq!(y.dtype(), Some(ScalarType::ComplexFloat));
    let c = ops::_fft_c2r(&y, &[1], 0, 3).unwrap();
    assert_eq!(c.sizes(), &[2, 3, 1]);
    assert_eq!(c.dtype(), Some(ScalarType::Float));
    let c = ops::_fft_c2r(&y, &[0, 1], 0, 2).unwrap();
    assert_eq!(c.sizes(), &[2, 2, 1]);
    // An empty batch gives an empty output; an empty signal is an error.
    let e = dev.tensor::<f32>(&[], &[0, 4]);
    assert_eq!(ops::_fft_r2c(&e, &[1], 0, true).unwrap().sizes(), &[0, 3]);
    let err = dev.assert_error(ops::_fft_r2c(&e, &[0], 0, true));
    assert_eq!(
        err,
        "cannot reshape tensor of 0 elements into shape [-1, 0] because the unspecified dimension size -1 can be any value and is ambiguous"
    );
    let i = dev.tensor(&[1i32, 2], &[2]);
    let err = dev.assert_error(ops::_fft_r2c(&i, &[0], 0, true));
    assert!(
        err.starts_with("Expected self.is_floating_point() to be true"),
        "{err}"
    );
    let h = dev.tensor(&[f16::from_f32(1.0); 2], &[2]);
    let err = dev.assert_error(ops::_fft_r2c(&h, &[0], 0, true));
    assert_eq!(err, "MKL FFT doesn't support tensors of type: Half");
    let err = dev.assert_error(ops::_fft_c2r(&x, &[0], 0, 2));
    assert!(
        err.starts_with("Expected self.is_complex() to be true"),
        "{err}"
    );
    let err = dev.assert_error(ops::_fft_r2c(&x, &[0, -3], 0, true));
    assert_eq!(err, "FFT dims must be unique");
    let err = dev.assert_error(ops::_fft_r2c(&x, &[3], 0, true));
    assert_eq!(
        err,
        "Dimension out of range (expected to be in range of [-3, 2], but got 3)"
    );
    assert!(ops::_fft_r2c(&x, &[], 0, true).is_err());
    let err = dev.assert_error(ops::_fft_c2r(&y, &[1], 0, 0));
    assert_eq!(err, "Invalid number of data points (0) specified");
    // Too few terms for the requested length.
    assert!(ops::_fft_c2r(&y, &[1], 0, 5).is_err());
    assert!(ops::_fft_c2r(&y, &[1], 0, i64::MAX).is_err());
}
