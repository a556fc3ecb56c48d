//! Composite operators PyTorch defines through other overloads: the
//! `Scalar` overloads of binary operators (`add`, `sub`, `mul`, `div`,
//! `fmod`, `remainder`, the bitwise ones; the scalar wrapped as a 0-dim
//! "wrapped number" tensor, which does not take part in type promotion)
//! `square` (as `pow(self, 2)`), `masked_fill` (over `masked_fill_`, a
//! tensor value as its number), `rsub` (as `sub` reversed), the full reductions `sum` and `mean`, and `softmax` / `log_softmax`
//! over `_softmax` / `_log_softmax` after an optional dtype conversion.

use c10_core::{Error, Result, Scalar, ScalarType, TensorBase};

use crate::generated::ops;
use crate::Tensor;

/// A Python number as a 0-dim wrapped-number tensor
/// (`wrapped_scalar_tensor`).
pub fn wrapped_scalar_tensor(s: Scalar) -> Result<Tensor> {
    Ok(Tensor::from(match s {
        Scalar::Bool(b) => TensorBase::wrapped_number(b)?,
        Scalar::Int(i) => TensorBase::wrapped_number(i)?,
        Scalar::Double(d) => TensorBase::wrapped_number(d)?,
        Scalar::ComplexDouble(_) => {
            return Err(Error::not_implemented(
                "complex scalars are not supported by this build",
            ))
        }
    }))
}

/// `add.Scalar(self, other, alpha)` (CompositeExplicitAutograd).
pub fn add_scalar(self_: &Tensor, other: Scalar, alpha: Scalar) -> Result<Tensor> {
    ops::add_tensor_with(
        self_,
        &wrapped_scalar_tensor(other)?,
        ops::AddTensorOptions { alpha },
    )
}

/// `sub.Scalar(self, other, alpha)` (CompositeExplicitAutograd).
pub fn sub_scalar(self_: &Tensor, other: Scalar, alpha: Scalar) -> Result<Tensor> {
    ops::sub_tensor_with(
        self_,
        &wrapped_scalar_tensor(other)?,
        ops::SubTensorOptions { alpha },
    )
}

/// `mul.Scalar(self, other)` (CompositeExplicitAutograd).
pub fn mul_scalar(self_: &Tensor, other: Scalar) -> Result<Tensor> {
    ops::mul_tensor(self_, &wrapped_scalar_tensor(other)?)
}

/// `div.Scalar(self, other)` (CompositeExplicitAutograd).
pub fn div_scalar(self_: &Tensor, other: Scalar) -> Result<Tensor> {
    ops::div_tensor(self_, &wrapped_scalar_tensor(other)?)
}

/// `div.Scalar_mode(self, other, rounding_mode)`
/// (CompositeExplicitAutograd).
pub fn div_scalar_mode(
    self_: &Tensor,
    other: Scalar,
    rounding_mode: Option<&str>,
) -> Result<Tensor> {
    ops::div_tensor_mode(self_, &wrapped_scalar_tensor(other)?, rounding_mode)
}

/// `fmod.Scalar(self, other)` (CompositeExplicitAutograd).
pub fn fmod_scalar(self_: &Tensor, other: Scalar) -> Result<Tensor> {
    ops::fmod_tensor(self_, &wrapped_scalar_tensor(other)?)
}

/// `bitwise_and.Scalar(self, other)` (CompositeExplicitAutograd).
pub fn bitwise_and_scalar(self_: &Tensor, other: Scalar) -> Result<Tensor> {
    ops::bitwise_and_tensor(self_, &wrapped_scalar_tensor(other)?)
}

/// `bitwise_or.Scalar(self, other)` (CompositeExplicitAutograd).
pub fn bitwise_or_scalar(self_: &Tensor, other: Scalar) -> Result<Tensor> {
    ops::bitwise_or_tensor(self_, &wrapped_scalar_tensor(other)?)
}

/// `bitwise_xor.Scalar(self, other)` (CompositeExplicitAutograd).
pub fn bitwise_xor_scalar(self_: &Tensor, other: Scalar) -> Result<Tensor> {
    ops::bitwise_xor_tensor(self_, &wrapped_scalar_tensor(other)?)
}

/// `remainder.Scalar(self, other)` (CompositeExplicitAutograd).
pub fn remainder_scalar(self_: &Tensor, other: Scalar) -> Result<Tensor> {
    ops::remainder_tensor(self_, &wrapped_scalar_tensor(other)?)
}

/// `sum(self, dtype)` (CompositeExplicitAutograd): `sum` over every
/// dimension.
pub fn sum(self_: &Tensor, dtype: Option<ScalarType>) -> Result<Tensor> {
    ops::sum_dim_intlist_with(
        self_,
        None,
        ops::SumDimIntlistOptions {
            keepdim: false,
            dtype,
        },
    )
}

/// `mean(self, dtype)` (CompositeExplicitAutograd): `mean` over every
/// dimension.
pub fn mean(self_: &Tensor, dtype: Option<ScalarType>) -> Result<Tensor> {
    ops::mean_dim_with(
        self_,
        None,
        ops::MeanDimOptions {
            keepdim: false,
            dtype,
        },
    )
}

/// `self` converted to `dtype` when one is given (`toType`).
fn converted(self_: &Tensor, dtype: Option<ScalarType>) -> Result<Tensor> {
    match dtype {
        Some(d) if self_.dtype() != Some(d) => ops::_to_copy_with(
            self_,
            ops::ToCopyOptions {
                dtype: Some(d),
                ..Default::default()
            },
        ),
        _ => Ok(self_.clone()),
    }
}

/// `softmax.int(self, dim, dtype)` (CompositeImplicitAutograd).
pub fn softmax_int(self_: &Tensor, dim: i64, dtype: Option<ScalarType>) -> Result<Tensor> {
    ops::_softmax(&converted(self_, dtype)?, dim, false)
}

/// `log_softmax.int(self, dim, dtype)` (CompositeImplicitAutograd).
pub fn log_softmax_int(self_: &Tensor, dim: i64, dtype: Option<ScalarType>) -> Result<Tensor> {
    ops::_log_softmax(&converted(self_, dtype)?, dim, false)
}

/// `square(self)` (CompositeImplicitAutograd): `pow(self, 2)`, so bool
/// tensors square to int64 as in PyTorch.
pub fn square(self_: &Tensor) -> Result<Tensor> {
    ops::pow_tensor_scalar(self_, Scalar::Int(2))
}

/// `masked_fill.Scalar(self, mask, value)` (CompositeExplicitAutograd): a
/// contiguous copy of `self` broadcast with `mask`, then `masked_fill_`.
pub fn masked_fill_scalar(self_: &Tensor, mask: &Tensor, value: Scalar) -> Result<Tensor> {
    ops::masked_fill_scalar_(&broadcast_copy(self_, mask)?, mask, value)
}

/// A contiguous copy of `self` broadcast with `mask` (what the out-of-place
/// `masked_fill`s fill).
fn broadcast_copy(self_: &Tensor, mask: &Tensor) -> Result<Tensor> {
    let shape = crate::tensor_iterator::broadcast::infer_size(&mask.sizes(), &self_.sizes())?;
    ops::clone_with(
        &ops::expand(self_, &shape)?,
        ops::CloneOptions {
            memory_format: Some(c10_core::MemoryFormat::Contiguous),
        },
    )
}

/// `masked_fill.Tensor(self, mask, value)` (CompositeExplicitAutograd): as
/// `masked_fill.Scalar`, through `masked_fill_.Tensor`.
pub fn masked_fill_tensor(self_: &Tensor, mask: &Tensor, value: &Tensor) -> Result<Tensor> {
    ops::masked_fill_tensor_(&broadcast_copy(self_, mask)?, mask, value)
}

/// PyTorch's check that `masked_fill_`'s `value` tensor is 0-dim.
pub(crate) fn check_fill_value(value: &Tensor) -> Result<()> {
    if value.dim() != 0 {
        return Err(Error::runtime(format!(
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {} dimension(s).",
            value.dim()
        )));
    }
    Ok(())
}

/// `masked_fill_.Tensor(self, mask, value)`: a 0-dim `value`'s number
/// through `masked_fill_.Scalar`.
pub fn masked_fill_tensor_(self_: &Tensor, mask: &Tensor, value: &Tensor) -> Result<Tensor> {
    check_fill_value(value)?;
    ops::masked_fill_scalar_(self_, mask, ops::_local_scalar_dense(value)?)
}

/// `rsub.Scalar(self, other, alpha)` (CompositeExplicitAutograd):
/// `other - alpha * self`, `other` a wrapped number.
pub fn rsub_scalar(self_: &Tensor, other: Scalar, alpha: Scalar) -> Result<Tensor> {
    ops::sub_tensor_with(
        &wrapped_scalar_tensor(other)?,
        self_,
        ops::SubTensorOptions { alpha },
    )
}

/// `rsub.Tensor(self, other, *, alpha)`: `other - alpha * self`.
pub fn rsub_tensor(self_: &Tensor, other: &Tensor, alpha: Scalar) -> Result<Tensor> {
    ops::sub_tensor_with(other, self_, ops::SubTensorOptions { alpha })
}
