//! `Element`: the Rust types that tensor elements can be, one per supported
//! dtype (bool, uint8, int8, int16, int32, int64, float16, bfloat16,
//! float32, float64, and complex64 and complex128, which only the FFT
//! operators compute with).

use half::{bf16, f16};

use crate::complex::Complex;
use crate::scalar_type::ScalarType;

/// A Rust type that is the element type of a dtype.
///
/// # Safety
///
/// `Self` must be plain data of exactly `DTYPE.element_size()` bytes, valid
/// for every bit pattern that a kernel of that dtype can store (storage is
/// zero-initialised and written only with values of `Self`), and aligned to
/// at most 64 bytes.
pub unsafe trait Element:
    Copy + Send + Sync + PartialEq + std::fmt::Debug + 'static
{
    /// The dtype.
    const DTYPE: ScalarType;
}

macro_rules! elements {
    ($($t:ty => $dtype:ident),*) => {$(
        // SAFETY: a primitive of the dtype's size; zero is a valid value and
        // kernels only store values of this type.
        unsafe impl Element for $t {
            const DTYPE: ScalarType = ScalarType::$dtype;
        }
    )*};
}

// SAFETY: `repr(C)` pairs of `f32` (`f64`): 8 (16) bytes, the complex
// dtypes' sizes, aligned to 4 (8); every bit pattern is a valid value.
unsafe impl Element for Complex<f32> {
    const DTYPE: ScalarType = ScalarType::ComplexFloat;
}

// SAFETY: as for `Complex<f32>`.
unsafe impl Element for Complex<f64> {
    const DTYPE: ScalarType = ScalarType::ComplexDouble;
}

elements!(
    u8 => Byte,
    i8 => Char,
    i16 => Short,
    i32 => Int,
    i64 => Long,
    f16 => Half,
    bf16 => BFloat16,
    f32 => Float,
    f64 => Double,
    bool => Bool
);

/// Numeric conversions between element types, as C++ `static_cast` does
/// them in PyTorch's kernels (floats to integers truncate toward zero, then
/// wrap; anything to bool is `!= 0`).
pub trait Numeric: Element + PartialOrd {
    /// Whether the type is a floating-point type.
    const IS_FLOAT: bool;
    /// The value as `f64`.
    fn to_f64(self) -> f64;
    /// The value as `i64` (floats truncate toward zero).
    fn to_i64(self) -> i64;
    /// From `f64`.
    fn from_f64(v: f64) -> Self;
    /// From `i64`.
    fn from_i64(v: i64) -> Self;
    /// Converts from another element type.
    #[inline(always)]
    fn cast_from<S: Numeric>(v: S) -> Self {
        if Self::IS_FLOAT || S::IS_FLOAT {
            Self::from_f64(v.to_f64())
        } else {
            Self::from_i64(v.to_i64())
        }
    }
}

macro_rules! numeric_int {
    ($($t:ty),*) => {$(
        impl Numeric for $t {
            const IS_FLOAT: bool = false;
            #[inline(always)]
            fn to_f64(self) -> f64 { self as f64 }
            #[inline(always)]
            fn to_i64(self) -> i64 { self as i64 }
            #[inline(always)]
            fn from_f64(v: f64) -> Self { (v as i64) as $t }
            #[inline(always)]
            fn from_i64(v: i64) -> Self { v as $t }
        }
    )*};
}

numeric_int!(u8, i8, i16, i32, i64);

impl Numeric for bool {
    const IS_FLOAT: bool = false;
    #[inline(always)]
    fn to_f64(self) -> f64 {
        f64::from(u8::from(self))
    }
    #[inline(always)]
    fn to_i64(self) -> i64 {
        i64::from(self)
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
    #[inline(always)]
    fn from_i64(v: i64) -> Self {
        v != 0
    }
}

macro_rules! numeric_float {
    ($($t:ty => $to:expr, $from:expr);*) => {$(
        impl Numeric for $t {
            const IS_FLOAT: bool = true;
            #[inline(always)]
            fn to_f64(self) -> f64 { ($to)(self) }
            #[inline(always)]
            fn to_i64(self) -> i64 { ($to)(self) as i64 }
            #[inline(always)]
            fn from_f64(v: f64) -> Self { ($from)(v) }
            #[inline(always)]
            fn from_i64(v: i64) -> Self { ($from)(v as f64) }
        }
    )*};
}

numeric_float!(
    f32 => |x: f32| f64::from(x), |v: f64| v as f32;
    f64 => |x: f64| x, |v: f64| v;
    f16 => |x: f16| x.to_f64(), f16::from_f64;
    bf16 => |x: bf16| x.to_f64(), bf16::from_f64
);

/// Runs `$body` with `$T` bound to the element type of `$dtype`, or
/// evaluates `$otherwise` for dtypes outside the chosen family (PyTorch's
/// `AT_DISPATCH_*` macros, one family of them):
///
/// - `dispatch_dtype!(dtype, T => body, _ => otherwise)`: every dtype with
///   an element type (bool, the integers, the four floating types);
/// - `dispatch_dtype!(floating: ...)`: float16, bfloat16, float32, float64;
/// - `dispatch_dtype!(integral: ...)`: bool and the integers;
/// - `dispatch_dtype!(numeric: ...)`: the integers and the floating types
///   (no bool).
///
/// ```
/// use c10_core::{dispatch_dtype, ScalarType};
/// let width = dispatch_dtype!(floating: ScalarType::Half, T => std::mem::size_of::<T>(), _ => 0);
/// assert_eq!(width, 2);
/// assert_eq!(dispatch_dtype!(floating: ScalarType::Int, T => 1, _ => 0), 0);
/// ```
#[macro_export]
macro_rules! dispatch_dtype {
    (floating: $dtype:expr, $T:ident => $body:expr, _ => $otherwise:expr) => {
        $crate::dispatch_dtype!(@arms $dtype, $T, $body, $otherwise;
            Half => $crate::half::f16, BFloat16 => $crate::half::bf16, Float => f32, Double => f64)
    };
    (integral: $dtype:expr, $T:ident => $body:expr, _ => $otherwise:expr) => {
        $crate::dispatch_dtype!(@arms $dtype, $T, $body, $otherwise;
            Bool => bool, Byte => u8, Char => i8, Short => i16, Int => i32, Long => i64)
    };
    (numeric: $dtype:expr, $T:ident => $body:expr, _ => $otherwise:expr) => {
        $crate::dispatch_dtype!(@arms $dtype, $T, $body, $otherwise;
            Byte => u8, Char => i8, Short => i16, Int => i32, Long => i64,
            Half => $crate::half::f16, BFloat16 => $crate::half::bf16, Float => f32, Double => f64)
    };
    (@arms $dtype:expr, $T:ident, $body:expr, $otherwise:expr; $($variant:ident => $ty:ty),*) => {
        match $dtype {
            $($crate::ScalarType::$variant => {
                type $T = $ty;
                $body
            })*
            _ => $otherwise,
        }
    };
    ($dtype:expr, $T:ident => $body:expr, _ => $otherwise:expr) => {
        $crate::dispatch_dtype!(@arms $dtype, $T, $body, $otherwise;
            Bool => bool, Byte => u8, Char => i8, Short => i16, Int => i32, Long => i64,
            Half => $crate::half::f16, BFloat16 => $crate::half::bf16, Float => f32, Double => f64)
    };
}
