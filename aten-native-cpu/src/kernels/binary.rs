//! Binary pointwise arithmetic: `add`, `sub` (with `alpha`), `mul`, `div`
//! (true, `trunc` and `floor` rounding), `remainder`, `fmod`, `atan2`,
//! `pow`, `maximum`, `minimum`, with PyTorch's type promotion, dtype
//! coverage and errors.

use aten_core::tensor_iterator::TensorIterator;
use aten_core::Tensor;
use c10_core::{Error, Numeric, Result, Scalar, ScalarType};

use aten_core::meta::pointwise::Rounding;

use super::arith::{Arith, Float};
use crate::loops::{binary, binary_vec};
use crate::{dispatch_all, dispatch_floating};

/// Elements of a vectorized block of PyTorch's CPU loops for the 2-byte
/// floating types: `2 * Vectorized<T>::size()`, 32-byte AVX2 vectors.
const REDUCED_FLOAT_BLOCK: usize = 32;

/// `a + alpha * b` for float16 and bfloat16 as PyTorch's CPU kernel
/// computes it, with `alpha` in the narrow type (`alpha.to<scalar_t>()`,
/// through float32). Its vectorized form fuses in float32 (`fmadd`: one
/// rounding to float32, then to the narrow type); its scalar form, which
/// takes the elements past the last whole block of an inner loop and the
/// loops it does not vectorize, is narrow arithmetic, `a + T(alpha * b)`,
/// rounding the product and then the sum. Formed in `f64` (where the
/// products of narrow values are exact) and rounded to float32, each value
/// below is the one PyTorch's float32 arithmetic gives.
fn add_alpha_reduced(iter: &mut TensorIterator<'_>, alpha: f64) -> Result<()> {
    dispatch_floating!(iter.common_dtype(), "add_cpu/sub_cpu", T => {
        let alpha = T::from_f64(f64::from(alpha as f32)).to_f64();
        let rounded = |v: f64| T::from_f64(f64::from(v as f32));
        binary_vec::<T, T, T>(
            iter,
            REDUCED_FLOAT_BLOCK,
            move |x, y| rounded(x.to_f64() + alpha * y.to_f64()),
            move |x, y| rounded(x.to_f64() + T::from_f64(alpha * y.to_f64()).to_f64()),
        )
    })
}

fn is_reduced_float(dtype: ScalarType) -> bool {
    matches!(dtype, ScalarType::Half | ScalarType::BFloat16)
}

/// `add.out`: `a + alpha * b` over the meta function's iteration.
pub fn add_out(iter: &mut TensorIterator<'_>, _: &Tensor, _: &Tensor, alpha: Scalar) -> Result<()> {
    if !iter.has_data() {
        return Ok(());
    }
    if is_reduced_float(iter.common_dtype()) {
        return add_alpha_reduced(iter, alpha.to_f64());
    }
    dispatch_all!(iter.common_dtype(), "add_cpu", T => {
        let al = T::from_scalar(alpha)?;
        if al == T::one() {
            binary::<T, T, T>(iter, |x, y| x.add(y))
        } else {
            binary::<T, T, T>(iter, move |x, y| x.add(y.mul(al)))
        }
    })
}

/// `sub.out`: `a - alpha * b`.
pub fn sub_out(iter: &mut TensorIterator<'_>, _: &Tensor, _: &Tensor, alpha: Scalar) -> Result<()> {
    if !iter.has_data() {
        return Ok(());
    }
    if is_reduced_float(iter.common_dtype()) {
        return add_alpha_reduced(iter, -alpha.to_f64());
    }
    dispatch_all!(iter.common_dtype(), "sub_cpu", T => {
        let al = T::from_scalar(alpha)?;
        binary::<T, T, T>(iter, move |x, y| x.sub(y.mul(al)))
    })
}

/// `mul.out`: `a * b`.
pub fn mul_out(iter: &mut TensorIterator<'_>, _: &Tensor, _: &Tensor) -> Result<()> {
    if !iter.has_data() {
        return Ok(());
    }
    dispatch_all!(iter.common_dtype(), "mul_cpu", T => binary::<T, T, T>(iter, |x, y| x.mul(y)))
}

fn zero_division() -> Error {
    Error::runtime("ZeroDivisionError")
}

/// Checks an integer loop for division by zero before running it.
fn check_integer_divisors(iter: &mut TensorIterator<'_>) -> Result<()> {
    let mut zero = false;
    dispatch_all!(iter.common_dtype(), "div", T => {
        if T::IS_FLOAT {
            return Ok(());
        }
        iter.for_each(|ptrs, strides, n| {
            for i in 0..n as isize {
                // SAFETY: operand 2 is the divisor, of type T, valid for `n`
                // elements at its stride.
                let d = unsafe { (ptrs[2].offset(i * strides[2] as isize) as *const T).read() };
                if d == T::zero() {
                    zero = true;
                }
            }
        })
    })?;
    if zero {
        return Err(zero_division());
    }
    Ok(())
}

/// Defines `floor` division of one float type as PyTorch computes it
/// (`div_floor_floating`).
macro_rules! div_floor {
    ($name:ident, $t:ty) => {
        fn $name(a: $t, b: $t) -> $t {
            if b == 0.0 {
                return a / b;
            }
            let m = a % b;
            let mut div = (a - m) / b;
            if m != 0.0 && (b < 0.0) != (m < 0.0) {
                div -= 1.0;
            }
            if div != 0.0 {
                let mut f = div.floor();
                if div - f > 0.5 {
                    f += 1.0;
                }
                f
            } else {
                (0.0 as $t).copysign(a / b)
            }
        }
    };
}

div_floor!(div_floor_f64, f64);
div_floor!(div_floor_f32, f32);

/// Integer division with the given rounding; wraps on `MIN / -1`.
fn div_int(a: i64, b: i64, rounding: Rounding) -> i64 {
    let q = a.wrapping_div(b);
    if rounding == Rounding::Floor && (a < 0) != (b < 0) && a.wrapping_rem(b) != 0 {
        q - 1
    } else {
        q
    }
}

/// `div.out`: true division.
pub fn div_out(iter: &mut TensorIterator<'_>, _: &Tensor, _: &Tensor) -> Result<()> {
    div_loop(iter, Rounding::True)
}

/// `div.out_mode`.
pub fn div_out_mode(
    iter: &mut TensorIterator<'_>,
    _: &Tensor,
    _: &Tensor,
    rounding_mode: Option<&str>,
) -> Result<()> {
    div_loop(iter, Rounding::parse(rounding_mode)?)
}

/// `a / b` with a rounding mode.
pub fn div_loop(iter: &mut TensorIterator<'_>, rounding: Rounding) -> Result<()> {
    let dtype = iter.common_dtype();
    if !iter.has_data() {
        return Ok(());
    }
    if dtype.is_integral(true) {
        check_integer_divisors(iter)?;
    }
    match rounding {
        Rounding::True => {
            dispatch_floating!(dtype, "div_true_cpu", T => binary::<T, T, T>(iter, |x, y| {
                x.zip32(y, |p, q| p / q, |p, q| p / q)
            }))
        }
        Rounding::Trunc => {
            dispatch_all!(dtype, "div_trunc_cpu", T => binary::<T, T, T>(iter, |x, y| {
                if T::IS_FLOAT {
                    T::from_f64((x.to_f64() / y.to_f64()).trunc())
                } else {
                    T::from_i64(div_int(x.to_i64(), y.to_i64(), Rounding::Trunc))
                }
            }))
        }
        Rounding::Floor => {
            dispatch_all!(dtype, "div_floor_cpu", T => binary::<T, T, T>(iter, |x, y| {
                if T::IS_FLOAT {
                    if std::mem::size_of::<T>() == 8 {
                        T::from_f64(div_floor_f64(x.to_f64(), y.to_f64()))
                    } else {
                        T::from_f64(f64::from(div_floor_f32(x.to_f64() as f32, y.to_f64() as f32)))
                    }
                } else {
                    T::from_i64(div_int(x.to_i64(), y.to_i64(), Rounding::Floor))
                }
            }))
        }
    }
}

/// `remainder.Tensor_out`: Python's `%` (the sign of the divisor).
pub fn remainder_tensor_out(iter: &mut TensorIterator<'_>, _: &Tensor, _: &Tensor) -> Result<()> {
    mod_loop(iter, true)
}

/// `fmod.Tensor_out`: the sign of the dividend.
pub fn fmod_tensor_out(iter: &mut TensorIterator<'_>, _: &Tensor, _: &Tensor) -> Result<()> {
    mod_loop(iter, false)
}

/// `remainder` (`python`) or `fmod`.
fn mod_loop(iter: &mut TensorIterator<'_>, python: bool) -> Result<()> {
    let dtype = iter.common_dtype();
    if dtype == ScalarType::Bool {
        return Err(super::util::not_implemented(
            if python { "remainder_cpu" } else { "fmod_cpu" },
            dtype,
        ));
    }
    if !iter.has_data() {
        return Ok(());
    }
    if dtype.is_integral(false) {
        check_integer_divisors(iter)?;
    }
    dispatch_all!(dtype, "remainder_cpu", T => binary::<T, T, T>(iter, move |x, y| {
        if T::IS_FLOAT {
            let (p, q) = (x.to_f64(), y.to_f64());
            let mut m = p % q;
            if python && m != 0.0 && (q < 0.0) != (m < 0.0) {
                m += q;
            }
            T::from_f64(m)
        } else {
            let (p, q) = (x.to_i64(), y.to_i64());
            let mut m = p.wrapping_rem(q);
            if python && m != 0 && (m < 0) != (q < 0) {
                m += q;
            }
            T::from_i64(m)
        }
    }))
}

/// `atan2.out`.
pub fn atan2_out(iter: &mut TensorIterator<'_>, _: &Tensor, _: &Tensor) -> Result<()> {
    if !iter.has_data() {
        return Ok(());
    }
    dispatch_floating!(iter.common_dtype(), "atan2_cpu", T => binary::<T, T, T>(iter, |x, y| {
        x.zip32(y, f32::atan2, f64::atan2)
    }))
}

fn powi(a: i64, b: i64) -> i64 {
    if b < 0 {
        return match a {
            1 => 1,
            -1 => {
                // `b & 1`: `-b` overflows for `i64::MIN`.
                if b & 1 == 1 {
                    -1
                } else {
                    1
                }
            }
            _ => 0,
        };
    }
    let (mut base, mut exp, mut result) = (a, b, 1i64);
    while exp > 0 {
        if exp & 1 == 1 {
            result = result.wrapping_mul(base);
        }
        base = base.wrapping_mul(base);
        exp >>= 1;
    }
    result
}

/// `pow.Tensor_Tensor_out`.
pub fn pow_tensor_tensor_out(iter: &mut TensorIterator<'_>, _: &Tensor, _: &Tensor) -> Result<()> {
    pow_loop(iter)
}

/// `pow(a, b)` over an iteration.
fn pow_loop(iter: &mut TensorIterator<'_>) -> Result<()> {
    let dtype = iter.common_dtype();
    if dtype == ScalarType::Bool {
        return Err(super::util::not_implemented("pow", dtype));
    }
    if !iter.has_data() {
        return Ok(());
    }
    dispatch_all!(dtype, "pow", T => binary::<T, T, T>(iter, |x, y| {
        if T::IS_FLOAT {
            T::from_f64(x.to_f64().powf(y.to_f64()))
        } else {
            T::from_i64(powi(x.to_i64(), y.to_i64()))
        }
    }))
}

/// `pow.Tensor_Scalar_out` (the meta function wrapped the exponent into
/// the iteration).
pub fn pow_tensor_scalar_out(iter: &mut TensorIterator<'_>, _: &Tensor, _: Scalar) -> Result<()> {
    pow_loop(iter)
}

/// `maximum.out`: propagates NaN.
pub fn maximum_out(iter: &mut TensorIterator<'_>, _: &Tensor, _: &Tensor) -> Result<()> {
    max_min_loop(iter, true)
}

/// `minimum.out`: propagates NaN.
pub fn minimum_out(iter: &mut TensorIterator<'_>, _: &Tensor, _: &Tensor) -> Result<()> {
    max_min_loop(iter, false)
}

/// `maximum` (`max`) or `minimum`.
fn max_min_loop(iter: &mut TensorIterator<'_>, max: bool) -> Result<()> {
    if !iter.has_data() {
        return Ok(());
    }
    dispatch_all!(iter.common_dtype(), "maximum_cpu", T => binary::<T, T, T>(iter, move |x, y| {
        if T::IS_FLOAT && (x.to_f64().is_nan() || y.to_f64().is_nan()) {
            T::from_f64(f64::NAN)
        } else if (x > y) == max {
            x
        } else {
            y
        }
    }))
}

/// `pow.Scalar_out`: `1` everywhere for a base of one, else
/// `pow.Tensor_Tensor_out` with the base as a wrapped number.
pub fn pow_scalar_out(
    meta: &mut aten_core::structured::MetaOutput,
    self_: Scalar,
    exponent: &Tensor,
) -> Result<()> {
    let out = meta.output();
    if self_.to_f64() == 1.0 && !matches!(self_, Scalar::ComplexDouble(c) if c.im != 0.0) {
        aten_core::ops::fill_scalar_(out, Scalar::Int(1))?;
    } else {
        let base = aten_core::native::scalar_ops::wrapped_scalar_tensor(self_)?;
        aten_core::ops::pow_tensor_tensor_out(&base, exponent, out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding() {
        assert_eq!(div_floor_f64(-7.0, 2.0), -4.0);
        assert_eq!(div_int(-7, 2, Rounding::Floor), -4);
        assert_eq!(div_int(-7, 2, Rounding::Trunc), -3);
        assert_eq!(powi(2, 10), 1024);
        assert_eq!(powi(-1, -3), -1);
        assert_eq!(powi(3, -1), 0);
    }
}
