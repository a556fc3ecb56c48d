//! Meta functions of the pointwise families: each configures and builds the
//! family's `TensorIterator` (PyTorch's `build_borrowing_binary_op` and
//! friends) with the member's output, and checks what PyTorch's meta
//! function checks. The built iteration is the structured state the
//! backend's impl loops over.

use c10_core::{Error, Result, Scalar, ScalarType};

use crate::structured::SetOutput;
use crate::tensor_iterator::{TensorIterator, TensorIteratorConfig};
use crate::Tensor;

/// `alpha` must suit the result dtype (`alpha_check`).
fn alpha_check(dtype: ScalarType, alpha: Scalar) -> Result<()> {
    if matches!(alpha, Scalar::Bool(_)) && dtype != ScalarType::Bool {
        return Err(Error::runtime(
            "Boolean alpha only supported for Boolean results.",
        ));
    }
    if !(dtype.is_floating_point() || dtype.is_complex() || alpha.is_integral(true)) {
        return Err(Error::runtime(
            "For integral input tensors, argument alpha must not be a floating point number.",
        ));
    }
    Ok(())
}

/// Subtraction refuses bool operands (`sub_check`).
fn sub_check(a: &Tensor, b: &Tensor) -> Result<()> {
    let (ab, bb) = (
        a.dtype() == Some(ScalarType::Bool),
        b.dtype() == Some(ScalarType::Bool),
    );
    if ab && bb {
        return Err(Error::runtime("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead."));
    }
    if ab || bb {
        return Err(Error::runtime("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."));
    }
    Ok(())
}

/// A binary operation with type promotion (`build_borrowing_binary_op`).
#[inline]
fn binary_op<'a>(out: SetOutput<'a>, a: &'a Tensor, b: &'a Tensor) -> Result<TensorIterator<'a>> {
    out.build(TensorIteratorConfig::binary_op(out.maybe_get_output(), a, b))
}

/// A binary floating operation: integers promote to the default float
/// dtype (`build_borrowing_binary_float_op`).
#[inline]
fn binary_float_op<'a>(
    out: SetOutput<'a>,
    a: &'a Tensor,
    b: &'a Tensor,
) -> Result<TensorIterator<'a>> {
    out.build(
        TensorIteratorConfig::binary_op(out.maybe_get_output(), a, b)
            .promote_integer_inputs_to_float(true),
    )
}

/// `add.Tensor`: `self + alpha * other`.
#[inline]
pub fn add_tensor<'a>(
    out: SetOutput<'a>,
    self_: &'a Tensor,
    other: &'a Tensor,
    alpha: Scalar,
) -> Result<TensorIterator<'a>> {
    let iter = binary_op(out, self_, other)?;
    alpha_check(iter.common_dtype(), alpha)?;
    Ok(iter)
}

/// `sub.Tensor`: `self - alpha * other`.
pub fn sub_tensor<'a>(
    out: SetOutput<'a>,
    self_: &'a Tensor,
    other: &'a Tensor,
    alpha: Scalar,
) -> Result<TensorIterator<'a>> {
    sub_check(self_, other)?;
    let iter = binary_op(out, self_, other)?;
    alpha_check(iter.common_dtype(), alpha)?;
    Ok(iter)
}

/// `div.Tensor_mode`'s rounding mode, with PyTorch's error.
pub fn check_rounding_mode(mode: Option<&str>) -> Result<()> {
    match mode {
        None | Some("trunc") | Some("floor") => Ok(()),
        Some(other) => Err(Error::runtime(format!(
            "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{other}'"
        ))),
    }
}

/// `div.Tensor_mode`: true division promotes integers to float, `trunc`
/// and `floor` keep the promoted dtype.
pub fn div_tensor_mode<'a>(
    out: SetOutput<'a>,
    self_: &'a Tensor,
    other: &'a Tensor,
    rounding_mode: Option<&str>,
) -> Result<TensorIterator<'a>> {
    check_rounding_mode(rounding_mode)?;
    if rounding_mode.is_none() {
        binary_float_op(out, self_, other)
    } else {
        binary_op(out, self_, other)
    }
}

/// Defines meta functions that build one kind of iteration.
macro_rules! binary_metas {
    ($build:ident: $($(#[$doc:meta])* $name:ident),* $(,)?) => {$(
        $(#[$doc])*
        #[inline]
        pub fn $name<'a>(
            out: SetOutput<'a>,
            self_: &'a Tensor,
            other: &'a Tensor,
        ) -> Result<TensorIterator<'a>> {
            $build(out, self_, other)
        }
    )*};
}

binary_metas!(binary_op:
    /// `mul.Tensor`.
    mul_tensor,
    /// `fmod.Tensor`.
    fmod_tensor,
    /// `remainder.Tensor`.
    remainder_tensor,
    /// `maximum`.
    maximum,
    /// `minimum`.
    minimum,
    /// `pow.Tensor_Tensor`.
    pow_tensor_tensor,
    /// `bitwise_and.Tensor`.
    bitwise_and_tensor,
    /// `bitwise_or.Tensor`.
    bitwise_or_tensor,
    /// `bitwise_xor.Tensor`.
    bitwise_xor_tensor,
);

binary_metas!(binary_float_op:
    /// `div.Tensor` (true division).
    div_tensor,
    /// `atan2`.
    atan2,
);

/// A comparison: promoted inputs, a bool result, or the given output's
/// dtype (`build_borrowing_comparison_op`).
#[inline]
fn comparison_op<'a>(
    out: SetOutput<'a>,
    a: &'a Tensor,
    b: &'a Tensor,
) -> Result<TensorIterator<'a>> {
    out.build(TensorIteratorConfig::comparison_op(
        out.maybe_get_output(),
        a,
        b,
    ))
}

binary_metas!(comparison_op:
    /// `eq.Tensor`.
    eq_tensor,
    /// `ne.Tensor`.
    ne_tensor,
    /// `lt.Tensor`.
    lt_tensor,
    /// `le.Tensor`.
    le_tensor,
    /// `gt.Tensor`.
    gt_tensor,
    /// `ge.Tensor`.
    ge_tensor,
);

/// A unary floating operation (`build_borrowing_unary_float_op`).
#[inline]
fn unary_float_op<'a>(out: SetOutput<'a>, a: &'a Tensor) -> Result<TensorIterator<'a>> {
    out.build(TensorIteratorConfig::unary_float_op(
        out.maybe_get_output(),
        a,
    ))
}

/// A unary operation that keeps the dtype (`build_borrowing_unary_op`).
#[inline]
fn unary_op<'a>(out: SetOutput<'a>, a: &'a Tensor) -> Result<TensorIterator<'a>> {
    out.build(TensorIteratorConfig::unary_op(out.maybe_get_output(), a))
}

/// Defines meta functions of unary families.
macro_rules! unary_metas {
    ($build:ident: $($(#[$doc:meta])* $name:ident),* $(,)?) => {$(
        $(#[$doc])*
        #[inline]
        pub fn $name<'a>(out: SetOutput<'a>, self_: &'a Tensor) -> Result<TensorIterator<'a>> {
            $build(out, self_)
        }
    )*};
}

unary_metas!(unary_float_op:
    /// `cos`.
    cos,
    /// `sin`.
    sin,
    /// `tanh`.
    tanh,
    /// `exp`.
    exp,
    /// `expm1`.
    expm1,
    /// `log`.
    log,
    /// `log1p`.
    log1p,
    /// `sqrt`.
    sqrt,
    /// `rsqrt`.
    rsqrt,
    /// `reciprocal`.
    reciprocal,
    /// `sigmoid`.
    sigmoid,
    /// `erf`.
    erf,
);

unary_metas!(unary_op:
    /// `sign`.
    sign,
    /// `ceil`.
    ceil,
    /// `floor`.
    floor,
    /// `round`.
    round,
    /// `trunc`.
    trunc,
    /// `bitwise_not`.
    bitwise_not,
    /// `silu`.
    silu,
);

/// `neg`: refuses bool tensors.
pub fn neg<'a>(out: SetOutput<'a>, self_: &'a Tensor) -> Result<TensorIterator<'a>> {
    if self_.dtype() == Some(ScalarType::Bool) {
        return Err(Error::runtime("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."));
    }
    unary_op(out, self_)
}

/// `gelu`'s `approximate` argument, with PyTorch's error.
pub fn check_gelu_approximate(approximate: &str) -> Result<()> {
    match approximate {
        "none" | "tanh" => Ok(()),
        other => Err(Error::runtime(format!(
            "approximate argument must be either none or tanh, got {other}"
        ))),
    }
}

/// `gelu`.
pub fn gelu<'a>(
    out: SetOutput<'a>,
    self_: &'a Tensor,
    approximate: &str,
) -> Result<TensorIterator<'a>> {
    check_gelu_approximate(approximate)?;
    unary_op(out, self_)
}
