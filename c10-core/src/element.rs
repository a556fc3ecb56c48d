//! `Element`: the Rust types that tensor elements can be, one per supported
//! dtype (bool, uint8, int8, int16, int32, int64, float16, bfloat16,
//! float32, float64).

use half::{bf16, f16};

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
