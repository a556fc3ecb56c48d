//! The registered pointwise kernels of the operators that are not
//! structured families (the Scalar overloads of comparisons, `pow` with a
//! Scalar exponent, logical operations, `where`, `clamp`, `abs`, `relu`):
//! one function per operator overload, each a thin entry into the shared
//! loops (they serve the CPU and Meta keys: Meta tensors stop before the
//! loops). The structured families' impls live beside their loops.

use aten_core::Tensor;
use c10_core::{Result, Scalar};

use super::binary::pow_scalar_impl;
use super::compare::{compare, logical, Cmp, Logic};
use super::ternary::{clamp_impl, lerp_scalar_impl, masked_fill_impl, where_impl};
use super::unary::{logical_not_impl, same_fn, SameFn};
use super::util::{wrap, Variant};

/// `pow.Tensor_Scalar`.
pub fn pow_tensor_scalar(self_: &Tensor, exponent: Scalar) -> Result<Tensor> {
    pow_scalar_impl(Variant::Functional, self_, exponent)
}

macro_rules! cmp_scalar_ops {
    ($($scalar:ident => $cmp:ident);* $(;)?) => {$(
        #[doc = concat!("`", stringify!($scalar), "` (Scalar overload).")]
        pub fn $scalar(self_: &Tensor, other: Scalar) -> Result<Tensor> {
            compare(Variant::Functional, self_, &wrap(other)?, Cmp::$cmp)
        }
    )*};
}

cmp_scalar_ops!(
    eq_scalar => Eq;
    ne_scalar => Ne;
    lt_scalar => Lt;
    le_scalar => Le;
    gt_scalar => Gt;
    ge_scalar => Ge;
);

macro_rules! logic_ops {
    ($($logical:ident => $op:ident);* $(;)?) => {$(
        #[doc = concat!("`", stringify!($logical), "`.")]
        pub fn $logical(self_: &Tensor, other: &Tensor, out: &Tensor) -> Result<Tensor> {
            logical(Variant::Out(out), self_, other, Logic::$op)
        }
    )*};
}

logic_ops!(
    logical_and_out => And;
    logical_or_out => Or;
    logical_xor_out => Xor;
);

/// `lerp.Scalar`.
pub fn lerp_scalar(self_: &Tensor, end: &Tensor, weight: Scalar) -> Result<Tensor> {
    lerp_scalar_impl(Variant::Functional, self_, end, weight)
}

/// `where.self`.
pub fn where_self(condition: &Tensor, self_: &Tensor, other: &Tensor) -> Result<Tensor> {
    where_impl(Variant::Functional, condition, self_, other)
}

/// `masked_fill_.Scalar`.
pub fn masked_fill_scalar_(self_: &Tensor, mask: &Tensor, value: Scalar) -> Result<Tensor> {
    masked_fill_impl(Variant::Inplace(self_), self_, mask, value)
}

/// `clamp`.
pub fn clamp(self_: &Tensor, min: Option<Scalar>, max: Option<Scalar>) -> Result<Tensor> {
    clamp_impl(Variant::Functional, self_, min, max)
}

/// `abs.out`.
pub fn abs_out(self_: &Tensor, out: &Tensor) -> Result<Tensor> {
    same_fn(Variant::Out(out), self_, SameFn::Abs)
}

/// `relu`.
pub fn relu(self_: &Tensor) -> Result<Tensor> {
    same_fn(Variant::Functional, self_, SameFn::Relu)
}

/// `relu_`.
pub fn relu_(self_: &Tensor) -> Result<Tensor> {
    same_fn(Variant::Inplace(self_), self_, SameFn::Relu)
}

/// `logical_not.out`.
pub fn logical_not_out(self_: &Tensor, out: &Tensor) -> Result<Tensor> {
    logical_not_impl(Variant::Out(out), self_)
}
