//! `floor_divide`: division rounded towards negative infinity, which is
//! `div` with `rounding_mode="floor"` over the same binary iteration
//! (PyTorch's `div_floor_stub`). The tensor forms are the backends'
//! kernels, the number forms (CompositeExplicitAutograd) wrap the number.

use c10_core::{Result, Scalar};

use super::scalar_ops::wrapped_scalar_tensor;
use crate::generated::ops;
use crate::Tensor;

const FLOOR: Option<&str> = Some("floor");

/// `floor_divide(self, other)`.
pub fn floor_divide(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
    ops::div_tensor_mode(self_, other, FLOOR)
}

/// `floor_divide_.Tensor(self, other)`.
pub fn floor_divide_(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
    ops::div_tensor_mode_(self_, other, FLOOR)
}

/// `floor_divide.out(self, other, *, out)`.
pub fn floor_divide_out(self_: &Tensor, other: &Tensor, out: &Tensor) -> Result<Tensor> {
    ops::div_out_mode(self_, other, FLOOR, out)
}

/// `floor_divide.Scalar(self, other)`.
pub fn floor_divide_scalar(self_: &Tensor, other: Scalar) -> Result<Tensor> {
    ops::floor_divide(self_, &wrapped_scalar_tensor(other)?)
}

/// `floor_divide_.Scalar(self, other)`.
pub fn floor_divide_scalar_(self_: &Tensor, other: Scalar) -> Result<Tensor> {
    ops::floor_divide_tensor_(self_, &wrapped_scalar_tensor(other)?)
}
