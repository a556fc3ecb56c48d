//! Scalar arithmetic on every element type with PyTorch's semantics:
//! integers wrap, `float16`/`bfloat16` compute in `float32` and round back,
//! `bool` arithmetic is logical. Kernels are written once, generically over
//! [`Arith`], and instantiated per dtype.

use c10_core::half::{bf16, f16};
use c10_core::{Numeric, Scalar};

/// Element arithmetic.
pub trait Arith: Numeric {
    /// `a + b`.
    fn add(self, b: Self) -> Self;
    /// `a - b`.
    fn sub(self, b: Self) -> Self;
    /// `a * b`.
    fn mul(self, b: Self) -> Self;
    /// `-a`.
    fn neg(self) -> Self;
    /// `|a|`.
    fn abs(self) -> Self;
    /// Zero.
    fn zero() -> Self;
    /// One.
    fn one() -> Self;
    /// `Scalar::to<T>()`: the value of a scalar argument in this type, or
    /// PyTorch's error when it overflows the type.
    #[inline]
    fn from_scalar(s: Scalar) -> c10_core::Result<Self> {
        s.check_fits(Self::DTYPE)?;
        Ok(Self::convert_scalar(s))
    }

    /// The value of a scalar argument in this type, unchecked.
    #[inline]
    fn convert_scalar(s: Scalar) -> Self {
        match s {
            Scalar::Bool(b) => Self::from_i64(i64::from(b)),
            Scalar::Int(i) => Self::from_i64(i),
            Scalar::Double(d) => Self::from_f64(d),
            Scalar::ComplexDouble(c) => Self::from_f64(c.re),
        }
    }
}

macro_rules! arith_int {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            #[inline(always)] fn add(self, b: Self) -> Self { self.wrapping_add(b) }
            #[inline(always)] fn sub(self, b: Self) -> Self { self.wrapping_sub(b) }
            #[inline(always)] fn mul(self, b: Self) -> Self { self.wrapping_mul(b) }
            #[inline(always)] fn neg(self) -> Self { (0 as $t).wrapping_sub(self) }
            #[inline(always)] fn abs(self) -> Self { if self < (0 as $t) { self.neg() } else { self } }
            #[inline(always)] fn zero() -> Self { 0 }
            #[inline(always)] fn one() -> Self { 1 }
        }
    )*};
}

arith_int!(u8, i8, i16, i32, i64);

macro_rules! arith_float {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            #[inline(always)] fn add(self, b: Self) -> Self { self + b }
            #[inline(always)] fn sub(self, b: Self) -> Self { self - b }
            #[inline(always)] fn mul(self, b: Self) -> Self { self * b }
            #[inline(always)] fn neg(self) -> Self { -self }
            #[inline(always)] fn abs(self) -> Self { <$t>::abs(self) }
            #[inline(always)] fn zero() -> Self { 0.0 }
            #[inline(always)] fn one() -> Self { 1.0 }
        }
    )*};
}

arith_float!(f32, f64);

macro_rules! arith_half {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            #[inline(always)] fn add(self, b: Self) -> Self { <$t>::from_f32(self.to_f32() + b.to_f32()) }
            #[inline(always)] fn sub(self, b: Self) -> Self { <$t>::from_f32(self.to_f32() - b.to_f32()) }
            #[inline(always)] fn mul(self, b: Self) -> Self { <$t>::from_f32(self.to_f32() * b.to_f32()) }
            #[inline(always)] fn neg(self) -> Self { -self }
            #[inline(always)] fn abs(self) -> Self { <$t>::from_f32(self.to_f32().abs()) }
            #[inline(always)] fn zero() -> Self { <$t>::ZERO }
            #[inline(always)] fn one() -> Self { <$t>::ONE }
        }
    )*};
}

arith_half!(f16, bf16);

impl Arith for bool {
    #[inline(always)]
    fn add(self, b: Self) -> Self {
        self || b
    }
    #[inline(always)]
    fn sub(self, b: Self) -> Self {
        self && !b
    }
    #[inline(always)]
    fn mul(self, b: Self) -> Self {
        self && b
    }
    #[inline(always)]
    fn neg(self) -> Self {
        self
    }
    #[inline(always)]
    fn abs(self) -> Self {
        self
    }
    #[inline(always)]
    fn zero() -> Self {
        false
    }
    #[inline(always)]
    fn one() -> Self {
        true
    }
}

/// Floating element types and their compute type (`float32` for the half
/// types).
pub trait Float: Arith {
    /// Computes `f` on the value widened to `f64` when the type is `f64`,
    /// else on `f32`.
    fn map32(self, f32fn: impl Fn(f32) -> f32, f64fn: impl Fn(f64) -> f64) -> Self;
    /// Two-argument form of [`map32`](Self::map32).
    fn zip32(
        self,
        b: Self,
        f32fn: impl Fn(f32, f32) -> f32,
        f64fn: impl Fn(f64, f64) -> f64,
    ) -> Self;
}

impl Float for f32 {
    #[inline(always)]
    fn map32(self, f: impl Fn(f32) -> f32, _: impl Fn(f64) -> f64) -> Self {
        f(self)
    }
    #[inline(always)]
    fn zip32(self, b: Self, f: impl Fn(f32, f32) -> f32, _: impl Fn(f64, f64) -> f64) -> Self {
        f(self, b)
    }
}

impl Float for f64 {
    #[inline(always)]
    fn map32(self, _: impl Fn(f32) -> f32, g: impl Fn(f64) -> f64) -> Self {
        g(self)
    }
    #[inline(always)]
    fn zip32(self, b: Self, _: impl Fn(f32, f32) -> f32, g: impl Fn(f64, f64) -> f64) -> Self {
        g(self, b)
    }
}

macro_rules! float_half {
    ($($t:ty),*) => {$(
        impl Float for $t {
            #[inline(always)]
            fn map32(self, f: impl Fn(f32) -> f32, _: impl Fn(f64) -> f64) -> Self {
                <$t>::from_f32(f(self.to_f32()))
            }
            #[inline(always)]
            fn zip32(self, b: Self, f: impl Fn(f32, f32) -> f32, _: impl Fn(f64, f64) -> f64) -> Self {
                <$t>::from_f32(f(self.to_f32(), b.to_f32()))
            }
        }
    )*};
}

float_half!(f16, bf16);
