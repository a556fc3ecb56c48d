//! Type promotion: `promoteTypes` for two dtypes, and `result_type` for the
//! operands of an operation, with PyTorch's rules for 0-dim tensors and
//! wrapped Python numbers.
//!
//! Dtypes are ordered by category (bool < integral < floating < complex).
//! Within a category the wider type wins; `uint8` with `int8` gives `int16`
//! and `float16` with `bfloat16` gives `float32`. In `result_type`, tensors
//! with dimensions decide unless a 0-dim tensor or a number is of a higher
//! category, and numbers only contribute their category (a Python float is
//! the default dtype, `float32`).

use crate::error::{Error, Result};
use crate::scalar_type::ScalarType;

/// The category rank: bool 0, integral 1, floating 2, complex 3.
fn category(t: ScalarType) -> u8 {
    if t == ScalarType::Bool {
        0
    } else if t.is_integral(false) {
        1
    } else if t.is_floating_point() {
        2
    } else {
        3
    }
}

/// The complex type whose parts are `t` (a floating type).
fn to_complex(t: ScalarType) -> ScalarType {
    match t {
        ScalarType::Double => ScalarType::ComplexDouble,
        ScalarType::Half => ScalarType::ComplexHalf,
        ScalarType::BFloat16 => ScalarType::ComplexBFloat16,
        _ => ScalarType::ComplexFloat,
    }
}

/// `promoteTypes(a, b)` (`torch.promote_types`).
pub fn promote_types(a: ScalarType, b: ScalarType) -> Result<ScalarType> {
    use ScalarType as S;
    if a == b {
        return Ok(a);
    }
    for t in [a, b] {
        if matches!(t, S::QInt8 | S::QUInt8 | S::QInt32) {
            return Err(Error::runtime(format!(
                "Promotion for quantized types is not supported, attempted to promote {a} and {b}"
            )));
        }
    }
    let (ca, cb) = (category(a), category(b));
    if ca != cb {
        let (hi, lo) = if ca > cb { (a, b) } else { (b, a) };
        // A complex type absorbs a wider real floating type's precision.
        if category(hi) == 3 && category(lo) == 2 {
            let real = promote_types(hi.to_real_value_type(), lo)?;
            return Ok(to_complex(real));
        }
        return Ok(hi);
    }
    Ok(match ca {
        1 => {
            let signed_width = |t: S| match t {
                S::Byte => (false, 1),
                S::Char => (true, 1),
                S::Short => (true, 2),
                S::Int => (true, 4),
                _ => (true, 8),
            };
            let ((sa, wa), (sb, wb)) = (signed_width(a), signed_width(b));
            if sa != sb && wa == 1 && wb == 1 {
                S::Short
            } else if !sa && wa >= wb {
                a
            } else if !sb && wb >= wa {
                b
            } else if wa >= wb {
                a
            } else {
                b
            }
        }
        2 => {
            if matches!((a, b), (S::Half, S::BFloat16) | (S::BFloat16, S::Half)) {
                S::Float
            } else if a.element_size() >= b.element_size() {
                a
            } else {
                b
            }
        }
        _ => to_complex(promote_types(
            a.to_real_value_type(),
            b.to_real_value_type(),
        )?),
    })
}

/// The kind of a Python number wrapped into an operation.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum WrappedNumber {
    /// `bool`.
    Bool,
    /// `int`.
    Int,
    /// `float`.
    Float,
    /// `complex`.
    Complex,
}

impl WrappedNumber {
    /// The kind of number a tensor of `dtype` wraps.
    pub fn of_dtype(dtype: ScalarType) -> WrappedNumber {
        if dtype == ScalarType::Bool {
            WrappedNumber::Bool
        } else if dtype.is_complex() {
            WrappedNumber::Complex
        } else if dtype.is_floating_point() {
            WrappedNumber::Float
        } else {
            WrappedNumber::Int
        }
    }

    /// The kind of number a `Scalar` is.
    pub fn of_scalar(s: crate::Scalar) -> WrappedNumber {
        match s {
            crate::Scalar::Bool(_) => WrappedNumber::Bool,
            crate::Scalar::Int(_) => WrappedNumber::Int,
            crate::Scalar::Double(_) => WrappedNumber::Float,
            crate::Scalar::ComplexDouble(_) => WrappedNumber::Complex,
        }
    }
}

/// `ResultTypeState`: accumulates operands, then [`result`](Self::result).
#[derive(Copy, Clone, Debug, Default)]
pub struct ResultTypeState {
    dim_result: Option<ScalarType>,
    zero_result: Option<ScalarType>,
    wrapped_result: Option<ScalarType>,
}

fn promote_opt(a: Option<ScalarType>, b: ScalarType) -> Result<Option<ScalarType>> {
    Ok(Some(match a {
        None => b,
        Some(a) => promote_types(a, b)?,
    }))
}

impl ResultTypeState {
    /// Adds a tensor operand of `dtype` with `dim` dimensions.
    pub fn add_tensor(&mut self, dtype: ScalarType, dim: usize) -> Result<()> {
        if dim > 0 {
            self.dim_result = promote_opt(self.dim_result, dtype)?;
        } else {
            self.zero_result = promote_opt(self.zero_result, dtype)?;
        }
        Ok(())
    }

    /// Adds a Python number (a wrapped scalar).
    pub fn add_number(&mut self, kind: WrappedNumber) -> Result<()> {
        let dtype = match kind {
            WrappedNumber::Bool => ScalarType::Bool,
            WrappedNumber::Int => ScalarType::Long,
            WrappedNumber::Float => ScalarType::Float,
            WrappedNumber::Complex => ScalarType::ComplexFloat,
        };
        self.wrapped_result = promote_opt(self.wrapped_result, dtype)?;
        Ok(())
    }

    /// The result dtype (`result_type(state)`); `None` with no operands.
    pub fn result(&self) -> Result<Option<ScalarType>> {
        let lower = combine_categories(self.zero_result, self.wrapped_result)?;
        combine_categories(self.dim_result, lower)
    }
}

/// `combine_categories(higher, lower)`.
fn combine_categories(
    higher: Option<ScalarType>,
    lower: Option<ScalarType>,
) -> Result<Option<ScalarType>> {
    let (Some(h), Some(l)) = (higher, lower) else {
        return Ok(higher.or(lower));
    };
    if h.is_complex() {
        return Ok(Some(h));
    }
    if l.is_complex() {
        // Preserve the value type of the higher side when it is floating.
        return Ok(Some(if h.is_floating_point() {
            to_complex(h)
        } else {
            l
        }));
    }
    if h.is_floating_point() {
        return Ok(Some(h));
    }
    if h == ScalarType::Bool || l.is_floating_point() {
        return Ok(Some(promote_types(h, l)?));
    }
    Ok(Some(h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_rules() {
        use ScalarType as S;
        assert_eq!(promote_types(S::Byte, S::Char).unwrap(), S::Short);
        assert_eq!(promote_types(S::Half, S::BFloat16).unwrap(), S::Float);
        assert_eq!(promote_types(S::Long, S::Half).unwrap(), S::Half);
        assert_eq!(
            promote_types(S::ComplexFloat, S::Double).unwrap(),
            S::ComplexDouble
        );
        let mut s = ResultTypeState::default();
        s.add_tensor(S::Int, 1).unwrap();
        s.add_number(WrappedNumber::Float).unwrap();
        assert_eq!(s.result().unwrap(), Some(S::Float));
        let mut s = ResultTypeState::default();
        s.add_tensor(S::Half, 1).unwrap();
        s.add_tensor(S::Double, 0).unwrap();
        assert_eq!(s.result().unwrap(), Some(S::Half));
    }
}
