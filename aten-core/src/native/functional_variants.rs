//! The functional forms of in-place operators that have no other
//! out-of-place kernel (PyTorch's `autogen` functional variants and
//! `copy`): each one is the in-place operator applied to a clone of `self`.
//! Functionalization calls them in place of the in-place operator.

use c10_core::{Generator, Result, Scalar};

use crate::generated::ops;
use crate::Tensor;

/// `copy(self, src, non_blocking)`: `self`'s layout holding `src`.
pub fn copy(self_: &Tensor, src: &Tensor, non_blocking: bool) -> Result<Tensor> {
    let out = super::view_copies::clone_preserve_strides(self_)?;
    ops::copy_op_()?.call((&out, src, non_blocking))
}

/// `fill.Scalar(self, value)`.
pub fn fill_scalar(self_: &Tensor, value: Scalar) -> Result<Tensor> {
    ops::fill_scalar_(&ops::clone(self_)?, value)
}

/// `zero(self)`.
pub fn zero(self_: &Tensor) -> Result<Tensor> {
    ops::zero_(&ops::clone(self_)?)
}

/// `uniform(self, from, to, generator)`.
pub fn uniform(self_: &Tensor, from: f64, to: f64, generator: Option<Generator>) -> Result<Tensor> {
    ops::uniform_op_()?.call((&ops::clone(self_)?, from, to, generator))
}

/// `normal_functional(self, mean, std, generator)`.
pub fn normal_functional(
    self_: &Tensor,
    mean: f64,
    std: f64,
    generator: Option<Generator>,
) -> Result<Tensor> {
    ops::normal_op_()?.call((&ops::clone(self_)?, mean, std, generator))
}
