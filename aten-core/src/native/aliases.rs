//! PyTorch's operator aliases (CompositeImplicitAutograd): `multiply` for
//! `mul`, `divide` and `true_divide` for `div`, `subtract`, `negative`,
//! `absolute`, the `arc*` trigonometric names, `fix` for `trunc`, the
//! spelled-out comparisons (`greater`, `less_equal`, `not_equal`, ...) and
//! the `special_*` and `linalg_*` names of existing operators. Each calls
//! its operator with the same arguments.

use c10_core::{Result, Scalar};

use crate::generated::ops;
use crate::Tensor;

/// Defines `name(args) -> ret` as a call of the operator handle `target`.
macro_rules! aliases {
    ($($name:ident($($arg:ident: $ty:ty),*) -> $ret:ty = $target:ident;)*) => {$(
        #[doc = concat!("An alias: the operator of `ops::", stringify!($target), "`.")]
        pub fn $name($($arg: $ty),*) -> Result<$ret> {
            ops::$target()?.call(($($arg,)*))
        }
    )*};
}

aliases! {
    absolute(self_: &Tensor) -> Tensor = abs_op;
    absolute_(self_: &Tensor) -> Tensor = abs_op_;
    absolute_out(self_: &Tensor, out: &Tensor) -> Tensor = abs_out_op;
    arccos(self_: &Tensor) -> Tensor = acos_op;
    arccos_(self_: &Tensor) -> Tensor = acos_op_;
    arccos_out(self_: &Tensor, out: &Tensor) -> Tensor = acos_out_op;
    arccosh(self_: &Tensor) -> Tensor = acosh_op;
    arccosh_(self_: &Tensor) -> Tensor = acosh_op_;
    arccosh_out(self_: &Tensor, out: &Tensor) -> Tensor = acosh_out_op;
    arcsinh(self_: &Tensor) -> Tensor = asinh_op;
    arcsinh_(self_: &Tensor) -> Tensor = asinh_op_;
    arcsinh_out(self_: &Tensor, out: &Tensor) -> Tensor = asinh_out_op;
    arctanh(self_: &Tensor) -> Tensor = atanh_op;
    arctanh_(self_: &Tensor) -> Tensor = atanh_op_;
    arctanh_out(self_: &Tensor, out: &Tensor) -> Tensor = atanh_out_op;
    arcsin(self_: &Tensor) -> Tensor = asin_op;
    arcsin_(self_: &Tensor) -> Tensor = asin_op_;
    arcsin_out(self_: &Tensor, out: &Tensor) -> Tensor = asin_out_op;
    arctan(self_: &Tensor) -> Tensor = atan_op;
    arctan_(self_: &Tensor) -> Tensor = atan_op_;
    arctan_out(self_: &Tensor, out: &Tensor) -> Tensor = atan_out_op;
    divide_tensor(self_: &Tensor, other: &Tensor) -> Tensor = div_tensor_op;
    divide_tensor_(self_: &Tensor, other: &Tensor) -> Tensor = div_tensor_op_;
    divide_out(self_: &Tensor, other: &Tensor, out: &Tensor) -> Tensor = div_out_op;
    divide_scalar(self_: &Tensor, other: Scalar) -> Tensor = div_scalar_op;
    divide_tensor_mode(self_: &Tensor, other: &Tensor, rounding_mode: Option<&str>) -> Tensor = div_tensor_mode_op;
    divide_tensor_mode_(self_: &Tensor, other: &Tensor, rounding_mode: Option<&str>) -> Tensor = div_tensor_mode_op_;
    divide_out_mode(self_: &Tensor, other: &Tensor, rounding_mode: Option<&str>, out: &Tensor) -> Tensor = div_out_mode_op;
    divide_scalar_mode(self_: &Tensor, other: Scalar, rounding_mode: Option<&str>) -> Tensor = div_scalar_mode_op;
    true_divide_tensor(self_: &Tensor, other: &Tensor) -> Tensor = div_tensor_op;
    true_divide_tensor_(self_: &Tensor, other: &Tensor) -> Tensor = div_tensor_op_;
    true_divide_out(self_: &Tensor, other: &Tensor, out: &Tensor) -> Tensor = div_out_op;
    true_divide_scalar(self_: &Tensor, other: Scalar) -> Tensor = div_scalar_op;
    multiply_tensor(self_: &Tensor, other: &Tensor) -> Tensor = mul_tensor_op;
    multiply_tensor_(self_: &Tensor, other: &Tensor) -> Tensor = mul_tensor_op_;
    multiply_out(self_: &Tensor, other: &Tensor, out: &Tensor) -> Tensor = mul_out_op;
    multiply_scalar(self_: &Tensor, other: Scalar) -> Tensor = mul_scalar_op;
    negative(self_: &Tensor) -> Tensor = neg_op;
    negative_(self_: &Tensor) -> Tensor = neg_op_;
    negative_out(self_: &Tensor, out: &Tensor) -> Tensor = neg_out_op;
    fix(self_: &Tensor) -> Tensor = trunc_op;
    fix_(self_: &Tensor) -> Tensor = trunc_op_;
    fix_out(self_: &Tensor, out: &Tensor) -> Tensor = trunc_out_op;
    subtract_out(self_: &Tensor, other: &Tensor, alpha: Scalar, out: &Tensor) -> Tensor = sub_out_op;
    subtract_tensor(self_: &Tensor, other: &Tensor, alpha: Scalar) -> Tensor = sub_tensor_op;
    subtract_tensor_(self_: &Tensor, other: &Tensor, alpha: Scalar) -> Tensor = sub_tensor_op_;
    subtract_scalar(self_: &Tensor, other: Scalar, alpha: Scalar) -> Tensor = sub_scalar_op;
    not_equal_scalar_out(self_: &Tensor, other: Scalar, out: &Tensor) -> Tensor = ne_scalar_out_op;
    not_equal_scalar(self_: &Tensor, other: Scalar) -> Tensor = ne_scalar_op;
    not_equal_tensor_out(self_: &Tensor, other: &Tensor, out: &Tensor) -> Tensor = ne_tensor_out_op;
    not_equal_tensor(self_: &Tensor, other: &Tensor) -> Tensor = ne_tensor_op;
    not_equal_scalar_(self_: &Tensor, other: Scalar) -> Tensor = ne_scalar_op_;
    not_equal_tensor_(self_: &Tensor, other: &Tensor) -> Tensor = ne_tensor_op_;
    greater_equal_scalar_out(self_: &Tensor, other: Scalar, out: &Tensor) -> Tensor = ge_scalar_out_op;
    greater_equal_scalar(self_: &Tensor, other: Scalar) -> Tensor = ge_scalar_op;
    greater_equal_tensor_out(self_: &Tensor, other: &Tensor, out: &Tensor) -> Tensor = ge_tensor_out_op;
    greater_equal_tensor(self_: &Tensor, other: &Tensor) -> Tensor = ge_tensor_op;
    greater_equal_scalar_(self_: &Tensor, other: Scalar) -> Tensor = ge_scalar_op_;
    greater_equal_tensor_(self_: &Tensor, other: &Tensor) -> Tensor = ge_tensor_op_;
    less_equal_scalar_out(self_: &Tensor, other: Scalar, out: &Tensor) -> Tensor = le_scalar_out_op;
    less_equal_scalar(self_: &Tensor, other: Scalar) -> Tensor = le_scalar_op;
    less_equal_tensor_out(self_: &Tensor, other: &Tensor, out: &Tensor) -> Tensor = le_tensor_out_op;
    less_equal_tensor(self_: &Tensor, other: &Tensor) -> Tensor = le_tensor_op;
    less_equal_scalar_(self_: &Tensor, other: Scalar) -> Tensor = le_scalar_op_;
    less_equal_tensor_(self_: &Tensor, other: &Tensor) -> Tensor = le_tensor_op_;
    greater_scalar_out(self_: &Tensor, other: Scalar, out: &Tensor) -> Tensor = gt_scalar_out_op;
    greater_scalar(self_: &Tensor, other: Scalar) -> Tensor = gt_scalar_op;
    greater_tensor_out(self_: &Tensor, other: &Tensor, out: &Tensor) -> Tensor = gt_tensor_out_op;
    greater_tensor(self_: &Tensor, other: &Tensor) -> Tensor = gt_tensor_op;
    greater_scalar_(self_: &Tensor, other: Scalar) -> Tensor = gt_scalar_op_;
    greater_tensor_(self_: &Tensor, other: &Tensor) -> Tensor = gt_tensor_op_;
    less_scalar_out(self_: &Tensor, other: Scalar, out: &Tensor) -> Tensor = lt_scalar_out_op;
    less_scalar(self_: &Tensor, other: Scalar) -> Tensor = lt_scalar_op;
    less_tensor_out(self_: &Tensor, other: &Tensor, out: &Tensor) -> Tensor = lt_tensor_out_op;
    less_tensor(self_: &Tensor, other: &Tensor) -> Tensor = lt_tensor_op;
    less_scalar_(self_: &Tensor, other: Scalar) -> Tensor = lt_scalar_op_;
    less_tensor_(self_: &Tensor, other: &Tensor) -> Tensor = lt_tensor_op_;
    arctan2(self_: &Tensor, other: &Tensor) -> Tensor = atan2_op;
    arctan2_out(self_: &Tensor, other: &Tensor, out: &Tensor) -> Tensor = atan2_out_op;
    arctan2_(self_: &Tensor, other: &Tensor) -> Tensor = atan2_op_;
    special_expm1(self_: &Tensor) -> Tensor = expm1_op;
    special_expm1_out(self_: &Tensor, out: &Tensor) -> Tensor = expm1_out_op;
    special_erf(self_: &Tensor) -> Tensor = erf_op;
    special_erf_out(self_: &Tensor, out: &Tensor) -> Tensor = erf_out_op;
    special_logsumexp(self_: &Tensor, dim: &[i64], keepdim: bool) -> Tensor = logsumexp_op;
    special_logsumexp_out(self_: &Tensor, dim: &[i64], keepdim: bool, out: &Tensor) -> Tensor = logsumexp_out_op;
    special_expit(self_: &Tensor) -> Tensor = sigmoid_op;
    special_expit_out(self_: &Tensor, out: &Tensor) -> Tensor = sigmoid_out_op;
    special_log1p(self_: &Tensor) -> Tensor = log1p_op;
    special_log1p_out(self_: &Tensor, out: &Tensor) -> Tensor = log1p_out_op;
    linalg_matmul(self_: &Tensor, other: &Tensor) -> Tensor = matmul_op;
}
