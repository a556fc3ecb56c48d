//! Meta functions of the pointwise families: each configures and builds the
//! family's `TensorIterator` (PyTorch's `build_borrowing_binary_op` and
//! friends) with the member's output, and checks what PyTorch's meta
//! function checks. The built iteration is the structured state the
//! backend's impl loops over.

use c10_core::type_promotion::{ResultTypeState, WrappedNumber};
use c10_core::{Error, Result, Scalar, ScalarType};

use crate::native::scalar_ops::wrapped_scalar_tensor;
use crate::structured::{MetaOutput, SetOutput};
use crate::tensor_iterator::convert::to_dtype;
use crate::tensor_iterator::{IntoInput, TensorIterator, TensorIteratorConfig};
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
fn binary_op<'a>(
    out: SetOutput<'a>,
    a: &'a Tensor,
    b: impl IntoInput<'a>,
) -> Result<TensorIterator<'a>> {
    out.build(TensorIteratorConfig::binary_op(
        out.maybe_get_output(),
        a,
        b,
    ))
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

/// `add.Tensor`: `self + alpha * other`. Always inlined into its wrappers:
/// the eager `add`'s cost depends on it.
#[inline(always)]
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

/// Rounding of a division.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Rounding {
    /// True division (integers promote to float).
    True,
    /// Toward zero.
    Trunc,
    /// Toward negative infinity.
    Floor,
}

impl Rounding {
    /// From `rounding_mode`, with PyTorch's error.
    pub fn parse(mode: Option<&str>) -> Result<Rounding> {
        match mode {
            None => Ok(Rounding::True),
            Some("trunc") => Ok(Rounding::Trunc),
            Some("floor") => Ok(Rounding::Floor),
            Some(other) => Err(Error::runtime(format!(
                "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{other}'"
            ))),
        }
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
    if Rounding::parse(rounding_mode)? == Rounding::True {
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
    b: impl IntoInput<'a>,
) -> Result<TensorIterator<'a>> {
    out.build(TensorIteratorConfig::comparison_op(
        out.maybe_get_output(),
        a,
        b,
    ))
}

/// Defines the Scalar overloads of comparisons: the scalar is a wrapped
/// number the iteration owns.
macro_rules! comparison_scalar_metas {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {$(
        $(#[$doc])*
        pub fn $name<'a>(
            out: SetOutput<'a>,
            self_: &'a Tensor,
            other: Scalar,
        ) -> Result<TensorIterator<'a>> {
            comparison_op(out, self_, wrapped_scalar_tensor(other)?)
        }
    )*};
}

comparison_scalar_metas!(
    /// `eq.Scalar`.
    eq_scalar,
    /// `ne.Scalar`.
    ne_scalar,
    /// `lt.Scalar`.
    lt_scalar,
    /// `le.Scalar`.
    le_scalar,
    /// `gt.Scalar`.
    gt_scalar,
    /// `ge.Scalar`.
    ge_scalar,
);

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
    /// `acos`.
    acos,
    /// `asin`.
    asin,
    /// `atan`.
    atan,
    /// `acosh`.
    acosh,
    /// `asinh`.
    asinh,
    /// `atanh`.
    atanh,
    /// `cosh`.
    cosh,
    /// `sinh`.
    sinh,
    /// `tan`.
    tan,
    /// `log2`.
    log2,
    /// `log10`.
    log10,
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
    /// `hardsigmoid`.
    hardsigmoid,
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

/// `lerp.Scalar`: `self` and `end` of one dtype.
pub fn lerp_scalar<'a>(
    out: SetOutput<'a>,
    self_: &'a Tensor,
    end: &'a Tensor,
    _weight: Scalar,
) -> Result<TensorIterator<'a>> {
    let (da, de) = (self_.dtype(), end.dtype());
    if da != de {
        let name = |d: Option<ScalarType>| d.map_or("undefined", |d| d.python_name());
        return Err(Error::runtime(format!(
            "expected dtype {} for `end` but got dtype {}",
            name(da),
            name(de)
        )));
    }
    out.build(
        TensorIteratorConfig::default()
            .add_output(out.maybe_get_output())
            .add_input(self_)
            .add_input(end),
    )
}

/// `pow.Tensor_Scalar`: integers to negative integer powers are refused;
/// the exponent is a wrapped number the iteration owns.
pub fn pow_tensor_scalar<'a>(
    out: SetOutput<'a>,
    self_: &'a Tensor,
    exponent: Scalar,
) -> Result<TensorIterator<'a>> {
    if let (Some(dtype), Scalar::Int(e)) = (self_.dtype(), exponent) {
        if dtype.is_integral(true) && e < 0 {
            return Err(Error::runtime(
                "Integers to negative integer powers are not allowed.",
            ));
        }
    }
    binary_op(out, self_, wrapped_scalar_tensor(exponent)?)
}

/// `clamp.Tensor`: the bounds are tensors that take part in type promotion
/// and broadcasting; the result is cast to the output if that is safe.
pub fn clamp_tensor<'a>(
    out: SetOutput<'a>,
    self_: &'a Tensor,
    min: Option<&'a Tensor>,
    max: Option<&'a Tensor>,
) -> Result<TensorIterator<'a>> {
    if min.is_none() && max.is_none() {
        return Err(Error::runtime(
            "torch.clamp: At least one of 'min' or 'max' must not be None",
        ));
    }
    let mut config = TensorIteratorConfig::default()
        .add_output(out.maybe_get_output())
        .add_input(self_)
        .promote_inputs_to_common_dtype(true)
        .cast_common_dtype_to_outputs(true)
        .enforce_safe_casting_to_output(true);
    for bound in [min, max].into_iter().flatten() {
        config = config.add_input(bound);
    }
    out.build(config)
}

/// `clamp_min` and `clamp_max` with a number: a floating `self` keeps its
/// dtype; another promotes with the bound, which an output that is `self`
/// cannot take.
fn clamp_bound<'a>(
    out: SetOutput<'a>,
    self_: &'a Tensor,
    bound: Scalar,
) -> Result<TensorIterator<'a>> {
    let own = super::dtype_and_device(self_)?.0;
    if own.is_complex() || matches!(bound, Scalar::ComplexDouble(_)) {
        return Err(Error::runtime("clamp is not supported for complex types"));
    }
    let given = out.maybe_get_output();
    if own.is_floating_point() {
        return out.build(TensorIteratorConfig::unary_op(given, self_));
    }
    let mut state = ResultTypeState::default();
    state.add_tensor(own, self_.dim())?;
    state.add_number(WrappedNumber::of_scalar(bound))?;
    let dtype = state.result()?.unwrap_or(own);
    if dtype == own {
        return out.build(TensorIteratorConfig::unary_op(given, self_));
    }
    if given.is_some_and(|g| g.base().is_same(self_.base())) {
        return Err(Error::runtime(format!(
            "result type {dtype} can't be cast to the desired output type {}",
            own.type_meta_name()
        )));
    }
    out.build(TensorIteratorConfig::unary_op(
        given,
        to_dtype(self_, dtype)?,
    ))
}

/// `clamp_min(self, min)`.
pub fn clamp_min<'a>(
    out: SetOutput<'a>,
    self_: &'a Tensor,
    min: Scalar,
) -> Result<TensorIterator<'a>> {
    clamp_bound(out, self_, min)
}

/// `clamp_max(self, max)`.
pub fn clamp_max<'a>(
    out: SetOutput<'a>,
    self_: &'a Tensor,
    max: Scalar,
) -> Result<TensorIterator<'a>> {
    clamp_bound(out, self_, max)
}

/// `clamp_min.Tensor(self, min)`: a binary operation with type promotion.
pub fn clamp_min_tensor<'a>(
    out: SetOutput<'a>,
    self_: &'a Tensor,
    min: &'a Tensor,
) -> Result<TensorIterator<'a>> {
    binary_op(out, self_, min)
}

/// `clamp_max.Tensor(self, max)`: a binary operation with type promotion.
pub fn clamp_max_tensor<'a>(
    out: SetOutput<'a>,
    self_: &'a Tensor,
    max: &'a Tensor,
) -> Result<TensorIterator<'a>> {
    binary_op(out, self_, max)
}

/// `elu(self, alpha, scale, input_scale)`: a unary operation that keeps
/// the dtype.
pub fn elu<'a>(
    out: SetOutput<'a>,
    self_: &'a Tensor,
    _alpha: Scalar,
    _scale: Scalar,
    _input_scale: Scalar,
) -> Result<TensorIterator<'a>> {
    unary_op(out, self_)
}

/// `leaky_relu(self, negative_slope)`.
pub fn leaky_relu<'a>(
    out: SetOutput<'a>,
    self_: &'a Tensor,
    _negative_slope: Scalar,
) -> Result<TensorIterator<'a>> {
    unary_op(out, self_)
}

/// `softplus(self, beta, threshold)`.
pub fn softplus<'a>(
    out: SetOutput<'a>,
    self_: &'a Tensor,
    _beta: Scalar,
    _threshold: Scalar,
) -> Result<TensorIterator<'a>> {
    unary_op(out, self_)
}

/// `pow.Scalar(self, exponent)`: a Python number to tensor powers, shaped
/// like `exponent` (contiguous), in the dtype the two promote to (or the
/// given output's).
pub fn pow_scalar(out: SetOutput<'_>, self_: Scalar, exponent: &Tensor) -> Result<MetaOutput> {
    let (exponent_dtype, device) = super::dtype_and_device(exponent)?;
    let dtype = match out.maybe_get_output().and_then(|o| o.dtype()) {
        Some(given) => given,
        None => {
            let mut state = ResultTypeState::default();
            state.add_tensor(exponent_dtype, exponent.dim())?;
            state.add_number(WrappedNumber::of_scalar(self_))?;
            state.result()?.unwrap_or(ScalarType::Float)
        }
    };
    out.set_output(&exponent.sizes(), dtype, device)
}

/// `clamp`: the bounds take part in type promotion (an in-place clamp
/// keeps `self`'s dtype); `self` is converted to the result dtype, which
/// the iteration owns.
pub fn clamp<'a>(
    out: SetOutput<'a>,
    self_: &'a Tensor,
    min: Option<Scalar>,
    max: Option<Scalar>,
) -> Result<TensorIterator<'a>> {
    if min.is_none() && max.is_none() {
        return Err(Error::runtime(
            "torch.clamp: At least one of 'min' or 'max' must not be None",
        ));
    }
    let self_dtype = self_
        .dtype()
        .ok_or_else(|| Error::runtime("undefined tensor"))?;
    let dtype = match out {
        SetOutput::Inplace(_) => self_dtype,
        _ => {
            let mut state = ResultTypeState::default();
            state.add_tensor(self_dtype, self_.dim())?;
            for s in [min, max].into_iter().flatten() {
                state.add_number(WrappedNumber::of_scalar(s))?;
            }
            state.result()?.unwrap_or(ScalarType::Float)
        }
    };
    let given = out.maybe_get_output();
    if dtype == self_dtype {
        out.build(TensorIteratorConfig::unary_op(given, self_))
    } else {
        out.build(TensorIteratorConfig::unary_op(
            given,
            to_dtype(self_, dtype)?,
        ))
    }
}
