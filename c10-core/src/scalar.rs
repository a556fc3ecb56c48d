//! `Scalar`: a number of one of PyTorch's scalar kinds (`c10::Scalar`).

use std::fmt;

/// A complex number of two `f64` (`c10::complex<double>`).
#[derive(Copy, Clone, Debug, PartialEq, Default)]
pub struct Complex64 {
    /// Real part.
    pub re: f64,
    /// Imaginary part.
    pub im: f64,
}

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
