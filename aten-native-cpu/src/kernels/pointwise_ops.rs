//! The registered pointwise kernels: one function per operator overload of
//! the project's `native_functions.yaml`, each a thin entry into the shared
//! implementations (they serve the CPU and Meta keys: Meta tensors stop
//! before the loops).

use aten_core::Tensor;
use c10_core::{Result, Scalar};

use super::binary::{
    add_impl, atan2_impl, div_impl, max_min_impl, mod_impl, mul_impl, pow_impl, pow_scalar_impl,
    sub_impl, Rounding,
};
use super::compare::{bitwise, compare, logical, Cmp, Logic};
use super::ternary::{clamp_impl, lerp_scalar_impl, masked_fill_impl, where_impl};
use super::unary::{float_fn, logical_not_impl, same_fn, FloatFn, SameFn};
use super::util::{wrap, Variant};

/// `add.Tensor`.
pub fn add_tensor(self_: &Tensor, other: &Tensor, alpha: Scalar) -> Result<Tensor> {
    add_impl(Variant::Functional, self_, other, alpha)
}

/// `add_.Tensor`.
pub fn add_tensor_(self_: &Tensor, other: &Tensor, alpha: Scalar) -> Result<Tensor> {
    add_impl(Variant::Inplace(self_), self_, other, alpha)
}

/// `add.out`.
pub fn add_out(self_: &Tensor, other: &Tensor, alpha: Scalar, out: &Tensor) -> Result<Tensor> {
    add_impl(Variant::Out(out), self_, other, alpha)
}

/// `sub.Tensor`.
pub fn sub_tensor(self_: &Tensor, other: &Tensor, alpha: Scalar) -> Result<Tensor> {
    sub_impl(Variant::Functional, self_, other, alpha)
}

/// `mul.Tensor`.
pub fn mul_tensor(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
    mul_impl(Variant::Functional, self_, other)
}

/// `mul_.Tensor`.
pub fn mul_tensor_(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
    mul_impl(Variant::Inplace(self_), self_, other)
}

/// `div.Tensor`.
pub fn div_tensor(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
    div_impl(Variant::Functional, self_, other, Rounding::True)
}

/// `div.Tensor_mode`.
pub fn div_tensor_mode(
    self_: &Tensor,
    other: &Tensor,
    rounding_mode: Option<&str>,
) -> Result<Tensor> {
    div_impl(
        Variant::Functional,
        self_,
        other,
        Rounding::parse(rounding_mode)?,
    )
}

/// `atan2`.
pub fn atan2(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
    atan2_impl(Variant::Functional, self_, other)
}

/// `fmod.Tensor`.
pub fn fmod_tensor(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
    mod_impl(Variant::Functional, self_, other, false)
}

/// `remainder.Tensor`.
pub fn remainder_tensor(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
    mod_impl(Variant::Functional, self_, other, true)
}

/// `maximum`.
pub fn maximum(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
    max_min_impl(Variant::Functional, self_, other, true)
}

/// `minimum`.
pub fn minimum(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
    max_min_impl(Variant::Functional, self_, other, false)
}

/// `pow.Tensor_Tensor`.
pub fn pow_tensor_tensor(self_: &Tensor, exponent: &Tensor) -> Result<Tensor> {
    pow_impl(Variant::Functional, self_, exponent)
}

/// `pow.Tensor_Scalar`.
pub fn pow_tensor_scalar(self_: &Tensor, exponent: Scalar) -> Result<Tensor> {
    pow_scalar_impl(Variant::Functional, self_, exponent)
}

macro_rules! cmp_ops {
    ($($tensor:ident, $scalar:ident => $cmp:ident);* $(;)?) => {$(
        #[doc = concat!("`", stringify!($tensor), "` (Tensor overload).")]
        pub fn $tensor(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
            compare(Variant::Functional, self_, other, Cmp::$cmp)
        }
        #[doc = concat!("`", stringify!($scalar), "` (Scalar overload).")]
        pub fn $scalar(self_: &Tensor, other: Scalar) -> Result<Tensor> {
            compare(Variant::Functional, self_, &wrap(other)?, Cmp::$cmp)
        }
    )*};
}

cmp_ops!(
    eq_tensor, eq_scalar => Eq;
    ne_tensor, ne_scalar => Ne;
    lt_tensor, lt_scalar => Lt;
    le_tensor, le_scalar => Le;
    gt_tensor, gt_scalar => Gt;
    ge_tensor, ge_scalar => Ge;
);

macro_rules! logic_ops {
    ($($logical:ident, $bitwise:ident => $op:ident);* $(;)?) => {$(
        #[doc = concat!("`", stringify!($logical), "`.")]
        pub fn $logical(self_: &Tensor, other: &Tensor, out: &Tensor) -> Result<Tensor> {
            logical(Variant::Out(out), self_, other, Logic::$op)
        }
        #[doc = concat!("`", stringify!($bitwise), "`.")]
        pub fn $bitwise(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
            bitwise(Variant::Functional, self_, other, Logic::$op)
        }
    )*};
}

logic_ops!(
    logical_and_out, bitwise_and_tensor => And;
    logical_or_out, bitwise_or_tensor => Or;
    logical_xor_out, bitwise_xor_tensor => Xor;
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

macro_rules! float_ops {
    ($($name:ident => $f:ident),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($name), "`.")]
        pub fn $name(self_: &Tensor) -> Result<Tensor> {
            float_fn(Variant::Functional, self_, FloatFn::$f)
        }
    )*};
}

float_ops!(
    cos => Cos, sin => Sin, tanh => Tanh, exp => Exp, expm1 => Expm1, log => Log,
    log1p => Log1p, sqrt => Sqrt, rsqrt => Rsqrt, reciprocal => Reciprocal,
    sigmoid => Sigmoid, erf => Erf, silu => Silu,
);

/// `gelu`.
pub fn gelu(self_: &Tensor, approximate: &str) -> Result<Tensor> {
    let f = match approximate {
        "none" => FloatFn::Gelu,
        "tanh" => FloatFn::GeluTanh,
        other => {
            return Err(c10_core::Error::runtime(format!(
                "approximate argument must be either none or tanh, got {other}"
            )))
        }
    };
    float_fn(Variant::Functional, self_, f)
}

macro_rules! same_ops {
    ($($name:ident => $f:ident),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($name), "`.")]
        pub fn $name(self_: &Tensor) -> Result<Tensor> {
            same_fn(Variant::Functional, self_, SameFn::$f)
        }
    )*};
}

/// `abs.out`.
pub fn abs_out(self_: &Tensor, out: &Tensor) -> Result<Tensor> {
    same_fn(Variant::Out(out), self_, SameFn::Abs)
}

same_ops!(
    neg => Neg, sign => Sign, ceil => Ceil, floor => Floor, round => Round,
    trunc => Trunc, relu => Relu, bitwise_not => BitwiseNot,
);

/// `relu_`.
pub fn relu_(self_: &Tensor) -> Result<Tensor> {
    same_fn(Variant::Inplace(self_), self_, SameFn::Relu)
}

/// `logical_not.out`.
pub fn logical_not_out(self_: &Tensor, out: &Tensor) -> Result<Tensor> {
    logical_not_impl(Variant::Out(out), self_)
}
