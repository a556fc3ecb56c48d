//! Binary pointwise arithmetic: `add`, `sub` (with `alpha`), `mul`, `div`
//! (true, `trunc` and `floor` rounding), `remainder`, `fmod`, `atan2`,
//! `pow`, `maximum`, `minimum`, with PyTorch's type promotion, dtype
//! coverage and errors.

use aten_core::tensor_iterator::{TensorIterator, TensorIteratorConfig};
use aten_core::Tensor;
use c10_core::{Error, Numeric, Result, Scalar, ScalarType};

use super::arith::{Arith, Float};
use super::util::{wrap, Variant};
use crate::loops::binary;
use crate::{dispatch_all, dispatch_floating};

fn build<'a>(v: Variant<'_>, config: TensorIteratorConfig<'a>) -> Result<TensorIterator<'a>> {
    v.configure(config).build()
}

fn alpha_check(dtype: ScalarType, alpha: Scalar) -> Result<()> {
    if matches!(alpha, Scalar::Bool(_)) && dtype != ScalarType::Bool {
        return Err(Error::runtime(
            "Boolean alpha only supported for Boolean results.",
        ));
    }
    if !(dtype.is_floating_point() || dtype.is_complex() || alpha.is_integral(true)) {
        return Err(Error::runtime(
            "For integral input tensors, argument alpha must not be a floating point number.",
        ));
    }
    Ok(())
}

fn sub_check(a: &Tensor, b: &Tensor) -> Result<()> {
    let (ab, bb) = (
        a.dtype() == Some(ScalarType::Bool),
        b.dtype() == Some(ScalarType::Bool),
    );
    if ab && bb {
        return Err(Error::runtime("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead."));
    }
    if ab || bb {
        return Err(Error::runtime("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."));
    }
    Ok(())
}

/// `a + alpha * b` for every variant.
pub fn add_impl(v: Variant<'_>, a: &Tensor, b: &Tensor, alpha: Scalar) -> Result<Tensor> {
    let mut iter = build(v, TensorIteratorConfig::binary_op(v.output(), a, b))?;
    let dtype = iter.common_dtype();
    alpha_check(dtype, alpha)?;
    if iter.has_data() {
        dispatch_all!(dtype, "add_cpu", T => {
            let al = T::from_scalar(alpha)?;
            if al == T::one() {
                binary::<T, T, T>(&mut iter, |x, y| x.add(y))
            } else {
                binary::<T, T, T>(&mut iter, move |x, y| x.add(y.mul(al)))
            }
        })?;
    }
    Ok(v.finish(iter))
}

/// `a - alpha * b`.
pub fn sub_impl(v: Variant<'_>, a: &Tensor, b: &Tensor, alpha: Scalar) -> Result<Tensor> {
    sub_check(a, b)?;
    let mut iter = build(v, TensorIteratorConfig::binary_op(v.output(), a, b))?;
    let dtype = iter.common_dtype();
    alpha_check(dtype, alpha)?;
    if iter.has_data() {
        dispatch_all!(dtype, "sub_cpu", T => {
            let al = T::from_scalar(alpha)?;
            binary::<T, T, T>(&mut iter, move |x, y| x.sub(y.mul(al)))
        })?;
    }
    Ok(v.finish(iter))
}

/// `a * b`.
pub fn mul_impl(v: Variant<'_>, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let mut iter = build(v, TensorIteratorConfig::binary_op(v.output(), a, b))?;
    if iter.has_data() {
        dispatch_all!(iter.common_dtype(), "mul_cpu", T => binary::<T, T, T>(&mut iter, |x, y| x.mul(y)))?;
    }
    Ok(v.finish(iter))
}

/// Rounding of a division.
#[derive(Copy, Clone, PartialEq, Eq)]
pub enum Rounding {
    /// True division (integers promote to float).
    True,
    /// Toward zero.
    Trunc,
    /// Toward negative infinity.
    Floor,
}

impl Rounding {
    /// From `rounding_mode`, with PyTorch's error.
    pub fn parse(mode: Option<&str>) -> Result<Rounding> {
        match mode {
            None => Ok(Rounding::True),
            Some("trunc") => Ok(Rounding::Trunc),
            Some("floor") => Ok(Rounding::Floor),
            Some(other) => Err(Error::runtime(format!(
                "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{other}'"
            ))),
        }
    }
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

/// `a / b` with a rounding mode.
pub fn div_impl(v: Variant<'_>, a: &Tensor, b: &Tensor, rounding: Rounding) -> Result<Tensor> {
    let mut config = TensorIteratorConfig::binary_op(v.output(), a, b);
    if rounding == Rounding::True {
        config = config.promote_integer_inputs_to_float(true);
    }
    let mut iter = build(v, config)?;
    let dtype = iter.common_dtype();
    if iter.has_data() {
        if dtype.is_integral(true) {
            check_integer_divisors(&mut iter)?;
        }
        match rounding {
            Rounding::True => {
                dispatch_floating!(dtype, "div_true_cpu", T => binary::<T, T, T>(&mut iter, |x, y| {
                    x.zip32(y, |p, q| p / q, |p, q| p / q)
                }))?
            }
            Rounding::Trunc => {
                dispatch_all!(dtype, "div_trunc_cpu", T => binary::<T, T, T>(&mut iter, |x, y| {
                    if T::IS_FLOAT {
                        T::from_f64((x.to_f64() / y.to_f64()).trunc())
                    } else {
                        T::from_i64(div_int(x.to_i64(), y.to_i64(), Rounding::Trunc))
                    }
                }))?
            }
            Rounding::Floor => {
                dispatch_all!(dtype, "div_floor_cpu", T => binary::<T, T, T>(&mut iter, |x, y| {
                    if T::IS_FLOAT {
                        if std::mem::size_of::<T>() == 8 {
                            T::from_f64(div_floor_f64(x.to_f64(), y.to_f64()))
                        } else {
                            T::from_f64(f64::from(div_floor_f32(x.to_f64() as f32, y.to_f64() as f32)))
                        }
                    } else {
                        T::from_i64(div_int(x.to_i64(), y.to_i64(), Rounding::Floor))
                    }
                }))?
            }
        }
    }
    Ok(v.finish(iter))
}

/// `remainder` (Python's `%`: the sign of the divisor) or `fmod` (the sign
/// of the dividend).
pub fn mod_impl(v: Variant<'_>, a: &Tensor, b: &Tensor, python: bool) -> Result<Tensor> {
    let mut iter = build(v, TensorIteratorConfig::binary_op(v.output(), a, b))?;
    let dtype = iter.common_dtype();
    if dtype == ScalarType::Bool {
        return Err(super::util::not_implemented(
            if python { "remainder_cpu" } else { "fmod_cpu" },
            dtype,
        ));
    }
    if iter.has_data() {
        if dtype.is_integral(false) {
            check_integer_divisors(&mut iter)?;
        }
        dispatch_all!(dtype, "remainder_cpu", T => binary::<T, T, T>(&mut iter, move |x, y| {
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
        }))?;
    }
    Ok(v.finish(iter))
}

/// `atan2(a, b)`: a floating operation (integers promote).
pub fn atan2_impl(v: Variant<'_>, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let config =
        TensorIteratorConfig::binary_op(v.output(), a, b).promote_integer_inputs_to_float(true);
    let mut iter = build(v, config)?;
    if iter.has_data() {
        dispatch_floating!(iter.common_dtype(), "atan2_cpu", T => binary::<T, T, T>(&mut iter, |x, y| {
            x.zip32(y, f32::atan2, f64::atan2)
        }))?;
    }
    Ok(v.finish(iter))
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

/// `pow(a, b)`.
pub fn pow_impl(v: Variant<'_>, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let mut iter = build(v, TensorIteratorConfig::binary_op(v.output(), a, b))?;
    let dtype = iter.common_dtype();
    if dtype == ScalarType::Bool {
        return Err(super::util::not_implemented("pow", dtype));
    }
    if iter.has_data() {
        dispatch_all!(dtype, "pow", T => binary::<T, T, T>(&mut iter, |x, y| {
            if T::IS_FLOAT {
                T::from_f64(x.to_f64().powf(y.to_f64()))
            } else {
                T::from_i64(powi(x.to_i64(), y.to_i64()))
            }
        }))?;
    }
    Ok(v.finish(iter))
}

/// `pow(a, scalar)`.
pub fn pow_scalar_impl(v: Variant<'_>, a: &Tensor, exponent: Scalar) -> Result<Tensor> {
    if let (Some(dtype), Scalar::Int(e)) = (a.dtype(), exponent) {
        if dtype.is_integral(true) && e < 0 {
            return Err(Error::runtime(
                "Integers to negative integer powers are not allowed.",
            ));
        }
    }
    pow_impl(v, a, &wrap(exponent)?)
}

/// `maximum` (`max = true`) or `minimum`, propagating NaN.
pub fn max_min_impl(v: Variant<'_>, a: &Tensor, b: &Tensor, max: bool) -> Result<Tensor> {
    let mut iter = build(v, TensorIteratorConfig::binary_op(v.output(), a, b))?;
    if iter.has_data() {
        dispatch_all!(iter.common_dtype(), "maximum_cpu", T => binary::<T, T, T>(&mut iter, move |x, y| {
            if T::IS_FLOAT && (x.to_f64().is_nan() || y.to_f64().is_nan()) {
                T::from_f64(f64::NAN)
            } else if (x > y) == max {
                x
            } else {
                y
            }
        }))?;
    }
    Ok(v.finish(iter))
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
