//! Functional and in-place forms that PyTorch writes over an operator's
//! out variant (CompositeExplicitAutograd): the functional form passes a
//! fresh empty tensor as `out=` (the out kernel resizes it with the strides
//! it computes), the in-place form passes `self`.

use c10_core::{Result, ScalarType};

use super::factories::empty_with;
use crate::{ops, Tensor};

/// `at::empty({0}, self.options().dtype(dtype))`: the `out=` of a
/// functional form.
fn fresh_out(self_: &Tensor, dtype: Option<ScalarType>) -> Result<Tensor> {
    empty_with(&[0], dtype.or(self_.dtype()), None, self_.device(), None)
}

/// `abs(self)`.
pub fn abs(self_: &Tensor) -> Result<Tensor> {
    ops::abs_out(self_, &fresh_out(self_, None)?)
}

/// `abs_(self)`.
pub fn abs_(self_: &Tensor) -> Result<Tensor> {
    ops::abs_out(self_, self_)
}

/// `logical_not(self)`: a bool result.
pub fn logical_not(self_: &Tensor) -> Result<Tensor> {
    ops::logical_not_out(self_, &fresh_out(self_, Some(ScalarType::Bool))?)
}

/// `logical_not_(self)`: keeps `self`'s dtype.
pub fn logical_not_(self_: &Tensor) -> Result<Tensor> {
    ops::logical_not_out(self_, self_)
}

macro_rules! logical_binary {
    ($($name:ident, $inplace:ident => $out:ident);* $(;)?) => {$(
        #[doc = concat!("`", stringify!($name), "(self, other)`: a bool result.")]
        pub fn $name(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
            ops::$out(self_, other, &fresh_out(self_, Some(ScalarType::Bool))?)
        }

        #[doc = concat!("`", stringify!($inplace), "(self, other)`: keeps `self`'s dtype.")]
        pub fn $inplace(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
            ops::$out(self_, other, self_)
        }
    )*};
}

logical_binary!(
    logical_and, logical_and_ => logical_and_out;
    logical_or, logical_or_ => logical_or_out;
    logical_xor, logical_xor_ => logical_xor_out;
);
