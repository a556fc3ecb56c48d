//! Helpers shared by the CPU kernels: wrapping Python numbers, filling a
//! meta function's outputs (directly when fresh, else through a
//! temporary), dtype dispatch by category and PyTorch's "not implemented
//! for" error.

use aten_core::structured::MetaOutput;
use aten_core::tensor_iterator::convert::copy_into;
use aten_core::Tensor;
use c10_core::{Error, LayoutRef, Result, ScalarType, TensorBase};

pub use aten_core::native::scalar_ops::wrapped_scalar_tensor as wrap;

/// `"name" not implemented for 'Dtype'` ([`Error::not_implemented_for`]).
pub fn not_implemented(name: &str, dtype: ScalarType) -> Error {
    Error::not_implemented_for(name, dtype)
}

/// Runs `$body` with `$T` bound to a floating element type, or fails with
/// `"$name" not implemented for 'Dtype'` (c10's `dispatch_dtype!` with the
/// kernels' error).
#[macro_export]
macro_rules! dispatch_floating {
    ($dtype:expr, $name:expr, $T:ident => $body:expr) => {
        c10_core::dispatch_dtype!(floating: $dtype, $T => $body,
            _ => Err($crate::kernels::util::not_implemented($name, $dtype)))
    };
}

/// Runs `$body` with `$T` bound to an integral element type (bool
/// included), or fails with `"$name" not implemented for 'Dtype'`.
#[macro_export]
macro_rules! dispatch_integral {
    ($dtype:expr, $name:expr, $T:ident => $body:expr) => {
        c10_core::dispatch_dtype!(integral: $dtype, $T => $body,
            _ => Err($crate::kernels::util::not_implemented($name, $dtype)))
    };
}

/// Runs `$body` with `$T` bound to any supported element type.
#[macro_export]
macro_rules! dispatch_all {
    ($dtype:expr, $name:expr, $T:ident => $body:expr) => {
        c10_core::dispatch_dtype!($dtype, $T => $body,
            _ => Err($crate::kernels::util::not_implemented($name, $dtype)))
    };
}

/// A snapshot of the layout of a defined tensor: a kernel takes one and
/// computes every shape and address from it.
pub fn layout_of(t: &TensorBase) -> Result<LayoutRef<'_>> {
    t.layout().ok_or_else(|| Error::runtime("undefined tensor"))
}

/// The dtype of a defined tensor.
pub fn dtype_of(t: &TensorBase) -> Result<ScalarType> {
    t.dtype().ok_or_else(|| Error::runtime("undefined tensor"))
}

/// The device of `t` (CPU for an undefined tensor).
pub fn device_of(t: &TensorBase) -> c10_core::Device {
    t.device().unwrap_or(c10_core::Device::CPU)
}

/// Runs `compute` on a fresh contiguous output: the meta function's own
/// when it allocated it, else a temporary copied into the given output
/// afterwards (an `out=` or in-place output may overlap the inputs or be
/// laid out otherwise).
pub fn with_fresh_output(
    meta: &MetaOutput,
    compute: impl FnOnce(&TensorBase) -> Result<()>,
) -> Result<()> {
    with_fresh_output_of(meta.output(), meta.is_fresh(), compute)
}

/// [`with_fresh_output`] for one output `out` of a meta function's,
/// `fresh` when the call allocated it.
pub fn with_fresh_output_of(
    out: &Tensor,
    fresh: bool,
    compute: impl FnOnce(&TensorBase) -> Result<()>,
) -> Result<()> {
    if fresh && out.is_contiguous() {
        return compute(out.base());
    }
    let tmp = TensorBase::empty(&out.sizes(), dtype_of(out)?, device_of(out))?;
    compute(&tmp)?;
    copy_into(&tmp, out.base())
}

/// Writes `values` (row-major) into `out`, one output of a meta
/// function's (`fresh` when the call allocated it), through
/// [`with_fresh_output_of`].
pub fn write_output<T: c10_core::Element>(out: &Tensor, fresh: bool, values: &[T]) -> Result<()> {
    with_fresh_output_of(out, fresh, |o| {
        o.with_data_mut::<T, _>(|dst| {
            if dst.len() != values.len() {
                return Err(Error::internal("write_output: the output's size differs"));
            }
            dst.copy_from_slice(values);
            Ok(())
        })?
    })
}

/// An empty vector with room for `n` elements, or PyTorch's out-of-memory
/// error: a kernel's scratch space grows with its tensors, whose sizes
/// may be hostile.
pub fn try_vec_with_capacity<T>(n: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        c10_core::tensor_impl::out_of_memory(n.saturating_mul(std::mem::size_of::<T>()))
    })?;
    Ok(v)
}

/// `n` copies of `value`, or PyTorch's out-of-memory error: a few made
/// one by one, then doubled by copies of what is there (a `memcpy` for
/// plain values; `resize`'s loop of clones is not vectorised, and zeroing
/// a kernel's scratch that way was a fifth of a small depthwise
/// convolution).
pub fn try_vec_filled<T: Clone>(value: T, n: usize) -> Result<Vec<T>> {
    let mut v = try_vec_with_capacity(n)?;
    v.resize(n.min(64), value);
    while v.len() < n {
        let k = v.len().min(n - v.len());
        v.extend_from_within(..k);
    }
    Ok(v)
}

/// Whether `x` is NaN (never for integers and bool).
#[inline]
#[allow(clippy::eq_op)]
pub fn is_nan<T: PartialEq + Copy>(x: T) -> bool {
    x != x
}

/// One column of a window sliding along a dimension, as
/// [`window_columns`] lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WindowColumn {
    /// Its position in the window (`kj`).
    pub tap: usize,
    /// The input position it reads for output 0 (`kj * dilation -
    /// padding`): output `o` reads `first + o * stride`.
    pub first: i64,
    /// The outputs for which that position lies inside the input.
    pub outputs: std::ops::Range<usize>,
}

/// The columns of a window (`kernel` taps `dilation` apart, moving by
/// `stride` over `input` positions padded by `padding` on each side, for
/// `output` positions) that some output reads inside the input, in order,
/// each with the outputs that read it there. A kernel's loop over them
/// reads the input without a bounds test per element, and neighbouring
/// outputs do not wait for each other. Only those columns are listed, so
/// a huge window over a small input lists few (at most about
/// `2 * input / dilation + 1`, as the output size bounds the padding).
pub fn window_columns(
    kernel: i64,
    stride: i64,
    padding: i64,
    dilation: i64,
    input: i64,
    output: i64,
) -> Vec<WindowColumn> {
    let wide = i128::from;
    let (s, d, pad) = (wide(stride.max(1)), wide(dilation.max(1)), wide(padding));
    let (out, width) = (wide(output.max(0)), wide(input));
    if out == 0 {
        return Vec::new();
    }
    // `kj * d - pad` must reach `[-(out - 1) * s, width)`.
    let lo_tap = ((pad - (out - 1) * s).max(0) + d - 1) / d;
    let hi_tap = ((width - 1 + pad) / d + 1).min(wide(kernel));
    (lo_tap..hi_tap.max(lo_tap))
        .filter_map(|kj| {
            let first = kj * d - pad;
            // `first + o * s` in `[0, width)`.
            let lo = if first >= 0 { 0 } else { (-first + s - 1) / s };
            let hi = if width - first <= 0 {
                0
            } else {
                (width - 1 - first) / s + 1
            };
            let (lo, hi) = (lo.min(out), hi.min(out));
            (lo < hi).then_some(WindowColumn {
                tap: usize::try_from(kj).ok()?,
                first: i64::try_from(first).ok()?,
                outputs: lo as usize..hi as usize,
            })
        })
        .collect()
}

#[cfg(test)]
mod window_tests {
    use super::*;

    /// The columns by brute force: every tap and output, tested.
    fn reference(k: i64, s: i64, p: i64, d: i64, input: i64, out: i64) -> Vec<WindowColumn> {
        (0..k)
            .filter_map(|kj| {
                let first = kj * d - p;
                let inside: Vec<usize> = (0..out)
                    .filter(|o| (0..input).contains(&(first + o * s)))
                    .map(|o| o as usize)
                    .collect();
                let (&lo, &hi) = (inside.first()?, inside.last()?);
                Some(WindowColumn {
                    tap: kj as usize,
                    first,
                    outputs: lo..hi + 1,
                })
            })
            .collect()
    }

    #[test]
    fn window_columns_match_a_brute_force_walk() {
        for k in 1..6 {
            for s in 1..4 {
                for p in 0..=k / 2 + 1 {
                    for d in 1..3 {
                        for input in 1..9 {
                            let out = (input + 2 * p - d * (k - 1) - 1) / s + 1;
                            if out < 1 {
                                continue;
                            }
                            // Also one output more (ceil mode's last window).
                            for out in [out, out + 1] {
                                assert_eq!(
                                    window_columns(k, s, p, d, input, out),
                                    reference(k, s, p, d, input, out),
                                    "k {k} s {s} p {p} d {d} input {input} out {out}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_huge_window_over_a_small_input_lists_few_columns() {
        let cols = window_columns(1 << 40, 1, 1 << 39, 1, 4, 1);
        assert!(cols.len() <= 4, "{}", cols.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filled_vectors_have_every_length() {
        for n in [0, 1, 63, 64, 65, 127, 128, 129, 1000, 4099] {
            let v = try_vec_filled(7u16, n).unwrap();
            assert_eq!(v.len(), n);
            assert!(v.iter().all(|&x| x == 7));
            let s = try_vec_filled(String::from("a"), n.min(130)).unwrap();
            assert!(s.len() == n.min(130) && s.iter().all(|x| x == "a"));
        }
        assert!(try_vec_filled(0u64, usize::MAX / 4).is_err());
    }
}
