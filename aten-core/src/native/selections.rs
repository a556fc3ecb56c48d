//! Selections with numbers and the `clamp` aliases (CompositeImplicitAutograd,
//! PyTorch's `TensorCompare.cpp`): `where` with a number for either side
//! (a wrapped number, which keeps the tensor side's dtype) or both (0-dim
//! tensors of the numbers' result type), `clip` as `clamp`, and
//! `min.other`/`max.other` as `minimum`/`maximum`.

use c10_core::{Result, Scalar, ScalarType};

use super::scalar_ops::wrapped_scalar_tensor;
use crate::generated::ops;
use crate::Tensor;

/// `where.ScalarSelf(condition, self, other)`.
pub fn where_scalarself(condition: &Tensor, self_: Scalar, other: &Tensor) -> Result<Tensor> {
    ops::where_self(condition, &wrapped_scalar_tensor(self_)?, other)
}

/// `where.ScalarOther(condition, self, other)`.
pub fn where_scalarother(condition: &Tensor, self_: &Tensor, other: Scalar) -> Result<Tensor> {
    ops::where_self(condition, self_, &wrapped_scalar_tensor(other)?)
}

/// The result type of two Python numbers (`result_type(Scalar, Scalar)`):
/// bool, then int64, then the default float, then complex.
fn numbers_result_type(a: Scalar, b: Scalar) -> ScalarType {
    let rank = |s: Scalar| match s {
        Scalar::Bool(_) => 0,
        Scalar::Int(_) => 1,
        Scalar::Double(_) => 2,
        Scalar::ComplexDouble(_) => 3,
    };
    match rank(a).max(rank(b)) {
        0 => ScalarType::Bool,
        1 => ScalarType::Long,
        2 => ScalarType::Float,
        _ => ScalarType::ComplexFloat,
    }
}

/// `where.Scalar(condition, self, other)`.
pub fn where_scalar(condition: &Tensor, self_: Scalar, other: Scalar) -> Result<Tensor> {
    let dtype = numbers_result_type(self_, other);
    let scalar = |s| {
        ops::scalar_tensor_with(
            s,
            ops::ScalarTensorOptions {
                dtype: Some(dtype),
                device: condition.device(),
                ..Default::default()
            },
        )
    };
    ops::where_self(condition, &scalar(self_)?, &scalar(other)?)
}

/// `clip(self, min, max)`: `clamp`.
pub fn clip(self_: &Tensor, min: Option<Scalar>, max: Option<Scalar>) -> Result<Tensor> {
    ops::clamp_with(self_, ops::ClampOptions { min, max })
}

/// `clip_(self, min, max)`: `clamp_`.
pub fn clip_(self_: &Tensor, min: Option<Scalar>, max: Option<Scalar>) -> Result<Tensor> {
    ops::clamp_with_(self_, ops::ClampInplaceOptions { min, max })
}

/// `clip.Tensor(self, min, max)`: `clamp.Tensor`.
pub fn clip_tensor(self_: &Tensor, min: Option<&Tensor>, max: Option<&Tensor>) -> Result<Tensor> {
    ops::clamp_tensor_with(self_, ops::ClampTensorOptions { min, max })
}

/// `clip_.Tensor(self, min, max)`: `clamp_.Tensor`.
pub fn clip_tensor_(self_: &Tensor, min: Option<&Tensor>, max: Option<&Tensor>) -> Result<Tensor> {
    ops::clamp_tensor_with_(self_, ops::ClampTensorInplaceOptions { min, max })
}

/// `min.other(self, other)`: `minimum`.
pub fn min_other(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
    ops::minimum(self_, other)
}

/// `max.other(self, other)`: `maximum`.
pub fn max_other(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
    ops::maximum(self_, other)
}
