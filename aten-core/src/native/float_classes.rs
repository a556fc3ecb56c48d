//! Operators PyTorch writes over other operators that every backend
//! registers as its own kernel (`CPU, Meta: ...` here): `isnan` and
//! `isinf` (the float-class tests; integers are never NaN or infinite)
//! and `hardtanh` and `hardtanh_` (`clamp` into a tensor laid out like
//! the input, or into the input, with integer bounds for integer inputs).

use c10_core::{Error, Layout, Result, Scalar, ScalarType};

use crate::generated::ops;
use crate::native::{factories::empty_like, factories::zeros_like};
use crate::Tensor;

fn dtype_of(t: &Tensor) -> Result<ScalarType> {
    t.dtype().ok_or_else(|| Error::runtime("undefined tensor"))
}

/// `isnan(self)`: `self != self`.
pub fn isnan(self_: &Tensor) -> Result<Tensor> {
    ops::ne_tensor(self_, self_)
}

/// `isinf(self)` (CompositeExplicitAutograd): all false for integers and
/// bool, else `abs(self) == inf`.
pub fn isinf(self_: &Tensor) -> Result<Tensor> {
    let dtype = dtype_of(self_)?;
    if dtype.is_integral(true) {
        return zeros_like(
            self_,
            Some(ScalarType::Bool),
            Some(Layout::Strided),
            None,
            None,
            None,
        );
    }
    ops::eq_scalar(&ops::abs(self_)?, Scalar::Double(f64::INFINITY))
}

/// `hardtanh`'s bounds: bool inputs are refused, integer inputs take
/// integer bounds (non-negative ones for uint8), so the bounds never
/// promote the dtype.
fn hardtanh_bounds(self_: &Tensor, min_val: Scalar, max_val: Scalar) -> Result<(Scalar, Scalar)> {
    let dtype = dtype_of(self_)?;
    if dtype == ScalarType::Bool {
        return Err(Error::runtime("Bool inputs not supported for hardtanh"));
    }
    if dtype.is_integral(false) {
        let (lo, hi) = (min_val.to_i64(), max_val.to_i64());
        if dtype == ScalarType::Byte && (lo < 0 || hi < 0) {
            return Err(Error::runtime(
                "cannot do hardtanh on an unsigned type with negative limits",
            ));
        }
        return Ok((Scalar::Int(lo), Scalar::Int(hi)));
    }
    Ok((min_val, max_val))
}

/// `hardtanh_(self, min_val, max_val)`: `clamp` into `self`.
pub fn hardtanh_(self_: &Tensor, min_val: Scalar, max_val: Scalar) -> Result<Tensor> {
    let (min_val, max_val) = hardtanh_bounds(self_, min_val, max_val)?;
    ops::clamp_out(self_, Some(min_val), Some(max_val), self_)
}

/// `hardtanh(self, min_val, max_val)`: `clamp` into a tensor laid out like
/// `self`; bool inputs are refused, integer inputs take integer bounds
/// (non-negative ones for uint8).
pub fn hardtanh(self_: &Tensor, min_val: Scalar, max_val: Scalar) -> Result<Tensor> {
    let (min_val, max_val) = hardtanh_bounds(self_, min_val, max_val)?;
    let out = empty_like(self_, None, None, None, None, None)?;
    ops::clamp_out(self_, Some(min_val), Some(max_val), &out)
}
