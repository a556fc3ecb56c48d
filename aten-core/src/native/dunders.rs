//! The Python operator methods PyTorch defines over the bitwise operators
//! (CompositeImplicitAutograd, `BinaryOps.cpp`): `__and__`, `__or__`,
//! `__xor__` and their in-place `__iand__`, `__ior__`, `__ixor__`, with a
//! tensor or a number (a wrapped number) on the right.

// PyTorch's names, which the generated registrations refer to.
#![allow(non_snake_case)]

use c10_core::{Result, Scalar};

use super::scalar_ops::wrapped_scalar_tensor;
use crate::generated::ops;
use crate::Tensor;

macro_rules! dunders {
    ($($tensor:ident, $scalar:ident, $itensor:ident, $iscalar:ident => $op:ident, $op_:ident;)*) => {$(
        #[doc = concat!("`", stringify!($tensor), "(self, other)`.")]
        pub fn $tensor(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
            ops::$op(self_, other)
        }

        #[doc = concat!("`", stringify!($scalar), "(self, other)`.")]
        pub fn $scalar(self_: &Tensor, other: Scalar) -> Result<Tensor> {
            ops::$op(self_, &wrapped_scalar_tensor(other)?)
        }

        #[doc = concat!("`", stringify!($itensor), "(self, other)`.")]
        pub fn $itensor(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
            ops::$op_(self_, other)
        }

        #[doc = concat!("`", stringify!($iscalar), "(self, other)`.")]
        pub fn $iscalar(self_: &Tensor, other: Scalar) -> Result<Tensor> {
            ops::$op_(self_, &wrapped_scalar_tensor(other)?)
        }
    )*};
}

dunders! {
    __and___tensor, __and___scalar, __iand___tensor, __iand___scalar
        => bitwise_and_tensor, bitwise_and_tensor_;
    __or___tensor, __or___scalar, __ior___tensor, __ior___scalar
        => bitwise_or_tensor, bitwise_or_tensor_;
    __xor___tensor, __xor___scalar, __ixor___tensor, __ixor___scalar
        => bitwise_xor_tensor, bitwise_xor_tensor_;
}
