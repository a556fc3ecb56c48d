//! `where`, `masked_fill`, `clamp` (with `clamp_min` and `clamp_max`) and `lerp`.

use aten_core::tensor_iterator::convert::to_dtype_if_needed;
use aten_core::tensor_iterator::{TensorIterator, TensorIteratorConfig};
use aten_core::Tensor;
use c10_core::type_promotion::{ResultTypeState, WrappedNumber};
use c10_core::{Error, Numeric, Result, Scalar, ScalarType};

use super::arith::Arith;
use crate::loops::{binary, ternary, unary};
use crate::{dispatch_all, dispatch_floating};
use aten_core::structured::SetOutput;

fn dtype_of(t: &Tensor) -> Result<ScalarType> {
    t.dtype().ok_or_else(|| Error::runtime("undefined tensor"))
}

fn add_operand(state: &mut ResultTypeState, t: &Tensor) -> Result<()> {
    let dtype = dtype_of(t)?;
    if t.is_wrapped_number() {
        state.add_number(WrappedNumber::of_dtype(dtype))
    } else {
        state.add_tensor(dtype, t.dim())
    }
}

/// `where(condition, self, other)`.
pub fn where_impl(v: SetOutput<'_>, cond: &Tensor, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let cd = dtype_of(cond)?;
    if cd != ScalarType::Bool && cd != ScalarType::Byte {
        return Err(Error::runtime(format!(
            "where expected condition to be a boolean tensor, but got a tensor with dtype {cd}"
        )));
    }
    let cond = to_dtype_if_needed(cond, ScalarType::Bool)?;
    let mut state = ResultTypeState::default();
    add_operand(&mut state, a)?;
    add_operand(&mut state, b)?;
    let dtype = state.result()?.unwrap_or(ScalarType::Float);
    let (a, b) = (to_dtype_if_needed(a, dtype)?, to_dtype_if_needed(b, dtype)?);
    let mut iter = v.build(
        TensorIteratorConfig::default()
            .add_output(v.maybe_get_output())
            .add_input(&cond)
            .add_input(&a)
            .add_input(&b)
            .check_all_same_dtype(false)
            .static_output_dtype(dtype),
    )?;
    if iter.has_data() {
        dispatch_all!(dtype, "where_cpu", T => ternary::<T, bool, T, T>(&mut iter, |c, x, y| if c { x } else { y }))?;
    }
    Ok(v.finish(iter.into_output(0)))
}

/// `masked_fill(self, mask, value)`.
pub fn masked_fill_impl(
    v: SetOutput<'_>,
    a: &Tensor,
    mask: &Tensor,
    value: Scalar,
) -> Result<Tensor> {
    let md = dtype_of(mask)?;
    if md != ScalarType::Bool {
        return Err(Error::runtime(format!(
            "masked_fill_ only supports boolean masks, but got mask with dtype {}",
            md.python_name()
        )));
    }
    // The value is cast to the tensor's dtype (a float into an integer
    // tensor truncates), as PyTorch does.
    let dtype = dtype_of(a)?;
    let mut iter = v.build(
        TensorIteratorConfig::default()
            .add_output(v.maybe_get_output())
            .add_input(a)
            .add_input(mask)
            .check_all_same_dtype(false),
    )?;
    if iter.has_data() {
        dispatch_all!(dtype, "masked_fill", T => {
            let fill = T::from_scalar(value)?;
            binary::<T, T, bool>(&mut iter, move |x, m| if m { fill } else { x })
        })?;
    }
    Ok(v.finish(iter.into_output(0)))
}

/// `clamp.out`: NaN stays NaN, a NaN bound gives NaN.
pub fn clamp_out(
    iter: &mut TensorIterator<'_>,
    _: &Tensor,
    min: Option<Scalar>,
    max: Option<Scalar>,
) -> Result<()> {
    clamp_scalars(iter, min, max, "clamp_scalar_cpu")
}

/// `clamp_min.out`: [`clamp_out`] with a lower bound only.
pub fn clamp_min_out(iter: &mut TensorIterator<'_>, _: &Tensor, min: Scalar) -> Result<()> {
    clamp_scalars(iter, Some(min), None, "clamp_min_scalar_cpu")
}

/// `clamp_max.out`: [`clamp_out`] with an upper bound only.
pub fn clamp_max_out(iter: &mut TensorIterator<'_>, _: &Tensor, max: Scalar) -> Result<()> {
    clamp_scalars(iter, None, Some(max), "clamp_max_scalar_cpu")
}

/// `clamp_min.Tensor_out`: `maximum`, whose NaN rules are the clamp's.
pub fn clamp_min_tensor_out(
    iter: &mut TensorIterator<'_>,
    self_: &Tensor,
    min: &Tensor,
) -> Result<()> {
    super::binary::maximum_out(iter, self_, min)
}

/// `clamp_max.Tensor_out`: `minimum`, whose NaN rules are the clamp's.
pub fn clamp_max_tensor_out(
    iter: &mut TensorIterator<'_>,
    self_: &Tensor,
    max: &Tensor,
) -> Result<()> {
    super::binary::minimum_out(iter, self_, max)
}

/// Clamps the iteration's input between the number bounds given; `name`
/// is the kernel's in the not-implemented error.
fn clamp_scalars(
    iter: &mut TensorIterator<'_>,
    min: Option<Scalar>,
    max: Option<Scalar>,
    name: &str,
) -> Result<()> {
    let dtype = iter.common_dtype();
    if dtype == ScalarType::Bool {
        return Err(super::util::not_implemented(name, dtype));
    }
    if !iter.has_data() {
        return Ok(());
    }
    dispatch_all!(dtype, name, T => {
        let lo = min.map(T::from_scalar).transpose()?;
        let hi = max.map(T::from_scalar).transpose()?;
        // Bounds that are numbers (every activation's): the comparisons
        // alone keep a NaN input NaN (both are false for it), so the loop
        // is selects without a branch, and vectorizes; with the general
        // loop's tests per element, ReLU6 spent most of its time on
        // mispredicted branches.
        let number = |b: Option<T>| b.is_none_or(|b| !b.to_f64().is_nan());
        if number(lo) && number(hi) {
            return match (lo, hi) {
                (Some(lo), Some(hi)) => unary::<T, T>(iter, move |x| {
                    let y = if x < lo { lo } else { x };
                    if y > hi { hi } else { y }
                }),
                (Some(lo), None) => unary::<T, T>(iter, move |x| if x < lo { lo } else { x }),
                (None, Some(hi)) => unary::<T, T>(iter, move |x| if x > hi { hi } else { x }),
                (None, None) => unary::<T, T>(iter, |x| x),
            };
        }
        unary::<T, T>(iter, move |x| {
            if T::IS_FLOAT && x.to_f64().is_nan() {
                return x;
            }
            let mut y = x;
            if let Some(lo) = lo {
                if y < lo || (T::IS_FLOAT && lo.to_f64().is_nan()) {
                    y = lo;
                }
            }
            if let Some(hi) = hi {
                if y > hi || (T::IS_FLOAT && hi.to_f64().is_nan()) {
                    y = hi;
                }
            }
            y
        })
    })
}

/// `clamp.Tensor_out`: between tensor bounds (NaN bounds give NaN), or
/// `maximum` with the lower bound / `minimum` with the upper one when
/// only one is given, over the meta function's promoted iteration.
pub fn clamp_tensor_out(
    iter: &mut TensorIterator<'_>,
    self_: &Tensor,
    min: Option<&Tensor>,
    max: Option<&Tensor>,
) -> Result<()> {
    match (min, max) {
        (Some(_), Some(_)) => {}
        (Some(lo), None) => return super::binary::maximum_out(iter, self_, lo),
        (None, Some(hi)) => return super::binary::minimum_out(iter, self_, hi),
        (None, None) => {
            return Err(Error::runtime(
                "torch.clamp: At least one of 'min' or 'max' must not be None",
            ))
        }
    }
    let dtype = iter.common_dtype();
    if dtype == ScalarType::Bool {
        return Err(super::util::not_implemented("clamp_cpu", dtype));
    }
    if !iter.has_data() {
        return Ok(());
    }
    dispatch_all!(dtype, "clamp_cpu", T => ternary::<T, T, T, T>(iter, |x, lo, hi| {
        if T::IS_FLOAT && (lo.to_f64().is_nan() || hi.to_f64().is_nan()) {
            return T::from_f64(f64::NAN);
        }
        // `min(max(x, lo), hi)` as C++'s std::max / std::min: a NaN `x`
        // stays.
        let y = if x < lo { lo } else { x };
        if hi < y { hi } else { y }
    }))
}

/// `lerp.Scalar_out`: `self + weight * (end - self)`, in the form that
/// stays exact at both ends.
pub fn lerp_scalar_out(
    iter: &mut TensorIterator<'_>,
    _: &Tensor,
    _: &Tensor,
    weight: Scalar,
) -> Result<()> {
    if !iter.has_data() {
        return Ok(());
    }
    let w = weight.to_f64();
    dispatch_floating!(iter.common_dtype(), "lerp_kernel_scalar", T => binary::<T, T, T>(iter, move |x, y| {
        let (p, q) = (x.to_f64(), y.to_f64());
        T::from_f64(if w.abs() < 0.5 { p + w * (q - p) } else { q - (q - p) * (1.0 - w) })
    }))
}
