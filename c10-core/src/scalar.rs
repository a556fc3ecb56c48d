//! `Scalar`: a number of one of PyTorch's scalar kinds (`c10::Scalar`).

use std::fmt;

use half::{bf16, f16};

use crate::complex::Complex;
use crate::error::{Error, Result};
use crate::scalar_type::ScalarType;

/// A complex number of two `f64` (`c10::complex<double>`), the payload of
/// complex scalars and the element of complex128 tensors.
pub type Complex64 = Complex<f64>;

/// `c10::Scalar`: a bool, integer, float or complex number.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Scalar {
    /// A bool.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Double(f64),
    /// A complex number.
    ComplexDouble(Complex64),
}

impl Scalar {
    /// The value as `f64` (complex: the real part).
    pub fn to_f64(self) -> f64 {
        match self {
            Scalar::Bool(b) => f64::from(u8::from(b)),
            Scalar::Int(i) => i as f64,
            Scalar::Double(d) => d,
            Scalar::ComplexDouble(c) => c.re,
        }
    }

    /// The value as `i64` (floats truncate toward zero, as a C++ cast).
    pub fn to_i64(self) -> i64 {
        match self {
            Scalar::Bool(b) => i64::from(b),
            Scalar::Int(i) => i,
            Scalar::Double(d) => d as i64,
            Scalar::ComplexDouble(c) => c.re as i64,
        }
    }

    /// `isIntegral(includeBool)`.
    pub fn is_integral(self, include_bool: bool) -> bool {
        match self {
            Scalar::Int(_) => true,
            Scalar::Bool(_) => include_bool,
            _ => false,
        }
    }

    /// The overflow check of `Scalar::to<T>()` for the element type of
    /// `dtype` (`c10::overflows`): integers must lie in the type's range,
    /// except that a negative integer may wrap into an unsigned type when its
    /// magnitude fits; floats must lie in the type's finite range (infinity
    /// and NaN pass for floating types; NaN fails for integral ones). Bool,
    /// complex and bool targets are not checked.
    #[inline]
    pub fn check_fits(self, dtype: ScalarType) -> Result<()> {
        // A small integer (the default `alpha=1`, most literals) fits every
        // type checked here.
        if let Scalar::Int(-128..=127) = self {
            return Ok(());
        }
        self.check_fits_slow(dtype)
    }

    /// [`check_fits`](Self::check_fits) past its small-integer case.
    #[inline(never)]
    fn check_fits_slow(self, dtype: ScalarType) -> Result<()> {
        use ScalarType as S;
        let (name, lowest, max) = match dtype {
            S::Byte => ("uint8_t", 0.0, u8::MAX as f64),
            S::Char => ("int8_t", i8::MIN as f64, i8::MAX as f64),
            S::Short => ("int16_t", i16::MIN as f64, i16::MAX as f64),
            S::Int => ("int", i32::MIN as f64, i32::MAX as f64),
            S::Long => ("int64_t", i64::MIN as f64, i64::MAX as f64),
            S::Half => ("c10::Half", f16::MIN.to_f64(), f16::MAX.to_f64()),
            S::BFloat16 => ("c10::BFloat16", bf16::MIN.to_f64(), bf16::MAX.to_f64()),
            S::Float => ("float", f32::MIN as f64, f32::MAX as f64),
            _ => return Ok(()),
        };
        let overflows = match self {
            Scalar::Bool(_) | Scalar::ComplexDouble(_) => false,
            Scalar::Int(i) => {
                if dtype == S::Long {
                    false
                } else if dtype == S::Byte {
                    !(-255..=255).contains(&i)
                } else {
                    (i as f64) < lowest || (i as f64) > max
                }
            }
            Scalar::Double(d) => {
                if dtype.is_floating_point() {
                    d.is_finite() && (d < lowest || d > max)
                } else {
                    d.is_nan() || d < lowest || d > max
                }
            }
        };
        if overflows {
            return Err(Error::runtime(format!(
                "value cannot be converted to type {name} without overflow"
            )));
        }
        Ok(())
    }

    /// `isFloatingPoint()`.
    pub fn is_floating_point(self) -> bool {
        matches!(self, Scalar::Double(_))
    }
}

impl From<i64> for Scalar {
    fn from(v: i64) -> Self {
        Scalar::Int(v)
    }
}

impl From<f64> for Scalar {
    fn from(v: f64) -> Self {
        Scalar::Double(v)
    }
}

impl From<bool> for Scalar {
    fn from(v: bool) -> Self {
        Scalar::Bool(v)
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Bool(b) => write!(f, "{}", if *b { "True" } else { "False" }),
            Scalar::Int(i) => write!(f, "{i}"),
            Scalar::Double(d) => write!(f, "{d}"),
            Scalar::ComplexDouble(c) => write!(f, "({}+{}j)", c.re, c.im),
        }
    }
}
