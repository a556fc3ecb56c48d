//! `histc` (PyTorch's `histogram_histc` over `histogramdd`): counts of the
//! elements in `bins` equal-width bins between `min` and `max` (the
//! input's extrema when they are equal), the last bin closed on the
//! right; NaNs and elements outside the range are not counted. Bin
//! positions are computed in the input's dtype, rounding as PyTorch's
//! element arithmetic rounds, and so are the counts.

use aten_core::{ops, Tensor};
use c10_core::{dispatch_dtype, Error, Numeric, Result, Scalar};

use super::util::{dtype_of, not_implemented};

/// A double as C++ streams print it in PyTorch's messages: integers
/// without a fraction, `inf`, `nan` with its sign.
fn cpp_double(v: f64) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.into();
    }
    format!("{v}")
}

/// `histc_select_outer_bin_edges`: the range, checked.
fn outer_edges(self_: &Tensor, min: Scalar, max: Scalar) -> Result<(f64, f64)> {
    let (mut left, mut right) = (min.to_f64(), max.to_f64());
    if left == right && self_.numel() > 0 {
        left = ops::_local_scalar_dense(&ops::amin(self_)?)?.to_f64();
        right = ops::_local_scalar_dense(&ops::amax(self_)?)?.to_f64();
    }
    if left == right {
        left -= 1.0;
        right += 1.0;
    }
    if !(left.is_finite() && right.is_finite()) {
        return Err(Error::runtime(format!(
            "torch.histc: range of [{}, {}] is not finite",
            cpp_double(left),
            cpp_double(right)
        )));
    }
    if left >= right {
        return Err(Error::runtime("torch.histc: max must be larger than min"));
    }
    Ok((left, right))
}

/// The counts of `values` in `bins` bins between `left` and `right`.
fn counts<T: Numeric>(values: &[T], bins: i64, left: f64, right: f64) -> Vec<T> {
    // Every operation of PyTorch's loop rounds to `T`.
    let r = |v: f64| T::from_f64(v).to_f64();
    let (left, right) = (r(left), r(right));
    let (width, scale) = (r(right - left), r(bins as f64));
    let mut hist = vec![T::from_f64(0.0); bins as usize];
    for v in values {
        let x = v.to_f64();
        if !(x >= left && x <= right) {
            continue;
        }
        let pos = r(r(r(x - left) * scale) / width) as i64;
        let pos = pos.clamp(0, bins - 1) as usize;
        hist[pos] = T::from_f64(hist[pos].to_f64() + 1.0);
    }
    hist
}

/// `histc` into `hist`, resized to `[bins]`.
fn histc_into(self_: &Tensor, bins: i64, min: Scalar, max: Scalar, hist: &Tensor) -> Result<()> {
    if bins <= 0 {
        return Err(Error::runtime(format!(
            "torch.histogram(): bins must be > 0, but got {bins} for dimension 0"
        )));
    }
    let dtype = dtype_of(self_)?;
    let hist_dtype = dtype_of(hist)?;
    if hist_dtype != dtype {
        return Err(Error::runtime(format!(
            "torch.histogramdd: input tensor and hist tensor should have the same dtype, but got input {dtype} and hist {hist_dtype}"
        )));
    }
    ops::resize_(hist, &[bins])?;
    let (left, right) = outer_edges(self_, min, max)?;
    if !dtype.is_floating_point() {
        return Err(not_implemented("histogram_cpu", dtype));
    }
    dispatch_dtype!(floating: dtype, T => {
        let values = ops::contiguous(self_)?.to_vec::<T>()?;
        let fresh = Tensor::from_slice(&counts(&values, bins, left, right), &[bins])?;
        ops::copy_(hist, &fresh).map(drop)
    }, _ => Err(not_implemented("histogram_cpu", dtype)))
}

/// `histc(self, bins, min, max)`.
pub fn histogram_histc(self_: &Tensor, bins: i64, min: Scalar, max: Scalar) -> Result<Tensor> {
    let hist = ops::empty_memory_format_with(
        &[0],
        ops::EmptyMemoryFormatOptions {
            dtype: self_.dtype(),
            device: self_.device(),
            ..Default::default()
        },
    )?;
    histc_into(self_, bins, min, max, &hist)?;
    Ok(hist)
}

/// `histc.out(self, bins, min, max, *, out)`.
pub fn histogram_histc_out(
    self_: &Tensor,
    bins: i64,
    min: Scalar,
    max: Scalar,
    out: &Tensor,
) -> Result<Tensor> {
    histc_into(self_, bins, min, max, out)?;
    Ok(out.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_bin_is_closed_and_nan_is_skipped() {
        let v = [0.0f32, 1.0, 2.9, 3.0, f32::NAN, -0.1];
        assert_eq!(counts(&v, 3, 0.0, 3.0), vec![1.0, 1.0, 2.0]);
    }

    #[test]
    fn doubles_print_as_cpp_streams_print_them() {
        assert_eq!(cpp_double(0.0), "0");
        assert_eq!(cpp_double(f64::INFINITY), "inf");
        assert_eq!(cpp_double(-f64::NAN), "-nan");
    }
}
