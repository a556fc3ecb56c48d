//! The registered pointwise kernels of the operators that are not
//! structured families (logical operations, `where`, `masked_fill_`,
//! `abs.out`, `relu`):
//! one function per operator overload, each a thin entry into the shared
//! loops (they serve the CPU and Meta keys: Meta tensors stop before the
//! loops). The structured families' impls live beside their loops.

use aten_core::Tensor;
use c10_core::{Error, Result, Scalar, ScalarType};

use super::compare::{logical, Logic};
use super::ternary::{masked_fill_impl, where_impl};
use super::unary::{float_fn, logical_not_impl, same_fn, FloatFn, SameFn};
use aten_core::structured::SetOutput;

macro_rules! logic_ops {
    ($($logical:ident => $op:ident);* $(;)?) => {$(
        #[doc = concat!("`", stringify!($logical), "`.")]
        pub fn $logical(self_: &Tensor, other: &Tensor, out: &Tensor) -> Result<Tensor> {
            logical(SetOutput::Out(&[out]), self_, other, Logic::$op)
        }
    )*};
}

logic_ops!(
    logical_and_out => And;
    logical_or_out => Or;
    logical_xor_out => Xor;
);

/// `where.self`.
pub fn where_self(condition: &Tensor, self_: &Tensor, other: &Tensor) -> Result<Tensor> {
    where_impl(SetOutput::Functional, condition, self_, other)
}

/// `masked_fill_.Scalar`.
pub fn masked_fill_scalar_(self_: &Tensor, mask: &Tensor, value: Scalar) -> Result<Tensor> {
    masked_fill_impl(SetOutput::Inplace(self_), self_, mask, value)
}

/// `abs.out`.
pub fn abs_out(self_: &Tensor, out: &Tensor) -> Result<Tensor> {
    same_fn(SetOutput::Out(&[out]), self_, SameFn::Abs)
}

/// PyTorch's `relu` and `relu_` refuse booleans before anything else.
fn reject_bool_relu(self_: &Tensor) -> Result<()> {
    if self_.dtype() == Some(ScalarType::Bool) {
        return Err(Error::runtime("Boolean inputs not supported for relu"));
    }
    Ok(())
}

/// `relu`.
pub fn relu(self_: &Tensor) -> Result<Tensor> {
    reject_bool_relu(self_)?;
    same_fn(SetOutput::Functional, self_, SameFn::Relu)
}

/// `relu_`.
pub fn relu_(self_: &Tensor) -> Result<Tensor> {
    reject_bool_relu(self_)?;
    same_fn(SetOutput::Inplace(self_), self_, SameFn::Relu)
}

/// `logical_not.out`.
pub fn logical_not_out(self_: &Tensor, out: &Tensor) -> Result<Tensor> {
    logical_not_impl(SetOutput::Out(&[out]), self_)
}

/// `hardswish`.
pub fn hardswish(self_: &Tensor) -> Result<Tensor> {
    float_fn(SetOutput::Functional, self_, FloatFn::Hardswish)
}

/// `hardswish_`.
pub fn hardswish_(self_: &Tensor) -> Result<Tensor> {
    float_fn(SetOutput::Inplace(self_), self_, FloatFn::Hardswish)
}

/// `hardswish.out`.
pub fn hardswish_out(self_: &Tensor, out: &Tensor) -> Result<Tensor> {
    float_fn(SetOutput::Out(&[out]), self_, FloatFn::Hardswish)
}
