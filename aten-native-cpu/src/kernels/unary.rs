//! Unary pointwise operations: the floating math functions (integers
//! promote to the default float dtype), the dtype-preserving ones (`abs`,
//! `neg`, `sign`, rounding, `relu`, `bitwise_not`) and
//! `logical_not`.

use aten_core::tensor_iterator::{TensorIterator, TensorIteratorConfig};
use aten_core::Tensor;
use c10_core::{Element, Numeric, Result, ScalarType};

use super::arith::{Arith, Float};
use aten_core::structured::SetOutput;

use super::util::not_implemented;
use super::vector_math::{exp_f32, tanh_f32};
use crate::loops::unary;
use crate::{dispatch_all, dispatch_floating, dispatch_integral};

/// The floating math functions.
#[derive(Copy, Clone, Debug)]
#[allow(missing_docs)]
pub enum FloatFn {
    Cos,
    Sin,
    Tanh,
    Exp,
    Expm1,
    Log,
    Log1p,
    Sqrt,
    Rsqrt,
    Reciprocal,
    Sigmoid,
    Erf,
    /// `gelu(approximate='none')`.
    Gelu,
    /// `gelu(approximate='tanh')`.
    GeluTanh,
    Silu,
    Acos,
    Asin,
    Atan,
    Acosh,
    Asinh,
    Atanh,
    Cosh,
    Sinh,
    Tan,
    Log2,
    Log10,
    /// `x * min(max(x + 3, 0), 6) / 6`.
    Hardswish,
    /// `min(max(x + 3, 0), 6) / 6`.
    Hardsigmoid,
}

impl FloatFn {
    fn name(self) -> &'static str {
        match self {
            FloatFn::Cos => "cos_vml_cpu",
            FloatFn::Sin => "sin_vml_cpu",
            FloatFn::Tanh => "tanh_cpu",
            FloatFn::Exp => "exp_vml_cpu",
            FloatFn::Expm1 => "expm1_vml_cpu",
            FloatFn::Log => "log_vml_cpu",
            FloatFn::Log1p => "log1p_vml_cpu",
            FloatFn::Sqrt => "sqrt_vml_cpu",
            FloatFn::Rsqrt => "rsqrt_cpu",
            FloatFn::Reciprocal => "reciprocal_cpu",
            FloatFn::Sigmoid => "sigmoid_cpu",
            FloatFn::Erf => "erf_vml_cpu",
            FloatFn::Gelu | FloatFn::GeluTanh => "GeluKernelImpl",
            FloatFn::Silu => "silu_cpu",
            FloatFn::Acos => "acos_vml_cpu",
            FloatFn::Asin => "asin_vml_cpu",
            FloatFn::Atan => "atan_vml_cpu",
            FloatFn::Acosh => "acosh_cpu",
            FloatFn::Asinh => "asinh_cpu",
            FloatFn::Atanh => "atanh_cpu",
            FloatFn::Cosh => "cosh_cpu",
            FloatFn::Sinh => "sinh_cpu",
            FloatFn::Tan => "tan_vml_cpu",
            FloatFn::Log2 => "log2_vml_cpu",
            FloatFn::Log10 => "log10_vml_cpu",
            FloatFn::Hardswish => "hardswish_cpu",
            FloatFn::Hardsigmoid => "hardsigmoid_cpu",
        }
    }

    #[inline(always)]
    fn f64(self, x: f64) -> f64 {
        float_fn_arms!(
            self,
            x,
            erf = libm::erf(x),
            gelu = 0.5 * x * (1.0 + libm::erf(x * std::f64::consts::FRAC_1_SQRT_2)),
            gelu_tanh = {
                let k = (2.0 / std::f64::consts::PI).sqrt();
                0.5 * x * (1.0 + (k * (x + 0.044715 * x * x * x)).tanh())
            }
        )
    }

    #[inline(always)]
    pub(crate) fn f32(self, x: f32) -> f32 {
        // The logistic activations and `tanh` take the functions a loop
        // vectorizes (as PyTorch's vectorized kernels take Sleef's): with
        // the library's, `sigmoid` was a fifth of EfficientNet's time and
        // `tanh` half of a temporal convolution network's.
        match self {
            FloatFn::Sigmoid => return 1.0 / (1.0 + exp_f32(-x)),
            FloatFn::Silu => return x / (1.0 + exp_f32(-x)),
            FloatFn::Tanh => return tanh_f32(x),
            _ => {}
        }
        float_fn_arms!(
            self,
            x,
            erf = libm::erff(x),
            gelu = gelu_erf_f32(x),
            gelu_tanh = gelu_tanh_f32(x)
        )
    }
}

/// The formula of each [`FloatFn`] on `$x` of either float type; the
/// three whose precision needs a per-type formula are given.
macro_rules! float_fn_arms {
    ($f:expr, $x:ident, erf = $erf:expr, gelu = $gelu:expr, gelu_tanh = $gelu_tanh:expr) => {
        match $f {
            FloatFn::Cos => $x.cos(),
            FloatFn::Sin => $x.sin(),
            FloatFn::Tanh => $x.tanh(),
            FloatFn::Exp => $x.exp(),
            FloatFn::Expm1 => $x.exp_m1(),
            FloatFn::Log => $x.ln(),
            FloatFn::Log1p => $x.ln_1p(),
            FloatFn::Sqrt => $x.sqrt(),
            FloatFn::Rsqrt => 1.0 / $x.sqrt(),
            FloatFn::Reciprocal => 1.0 / $x,
            FloatFn::Sigmoid => 1.0 / (1.0 + (-$x).exp()),
            FloatFn::Erf => $erf,
            FloatFn::Gelu => $gelu,
            FloatFn::GeluTanh => $gelu_tanh,
            FloatFn::Silu => $x / (1.0 + (-$x).exp()),
            FloatFn::Acos => $x.acos(),
            FloatFn::Asin => $x.asin(),
            FloatFn::Atan => $x.atan(),
            FloatFn::Acosh => $x.acosh(),
            FloatFn::Asinh => $x.asinh(),
            FloatFn::Atanh => $x.atanh(),
            FloatFn::Cosh => $x.cosh(),
            FloatFn::Sinh => $x.sinh(),
            FloatFn::Tan => $x.tan(),
            FloatFn::Log2 => $x.log2(),
            FloatFn::Log10 => $x.log10(),
            FloatFn::Hardswish => $x * relu6($x + 3.0) / 6.0,
            FloatFn::Hardsigmoid => relu6($x + 3.0) / 6.0,
        }
    };
}
use float_fn_arms;

/// `std::min(std::max(x, 0), 6)`, as PyTorch's kernels write it: a NaN
/// stays NaN (Rust's `max` would drop it).
#[inline(always)]
fn relu6<T: Copy + PartialOrd + From<u8>>(x: T) -> T {
    let (zero, six) = (T::from(0), T::from(6));
    let x = if x < zero { zero } else { x };
    if six < x {
        six
    } else {
        x
    }
}

/// A floating math function over an iteration (`gelu` and `silu` refuse
/// other dtypes; the rest were promoted by the meta function).
pub fn float_loop(iter: &mut TensorIterator<'_>, f: FloatFn) -> Result<()> {
    let dtype = iter.common_dtype();
    if !dtype.is_floating_point() {
        return Err(not_implemented(f.name(), dtype));
    }
    if !iter.has_data() {
        return Ok(());
    }
    // The activations each get their own loop, in which the formula
    // inlines (and vectorizes where it can), for every floating dtype
    // (float16 and bfloat16 compute through float32): through the match
    // of `FloatFn::f32` per element, `sigmoid` spent as long in the match
    // as in its `exp`, and bfloat16's `gelu` took 15 ns an element.
    macro_rules! own_loops {
        ($($v:ident)*) => {
            match f {
                $(FloatFn::$v => {
                    return dispatch_floating!(dtype, f.name(), T => unary::<T, T>(iter, |x| {
                        x.map32(|p| FloatFn::$v.f32(p), |p| FloatFn::$v.f64(p))
                    }));
                })*
                _ => {}
            }
        };
    }
    own_loops!(Sigmoid Silu Tanh Exp Gelu GeluTanh Hardswish Hardsigmoid);
    dispatch_floating!(dtype, f.name(), T => unary::<T, T>(iter, move |x| {
        x.map32(|p| f.f32(p), |p| f.f64(p))
    }))
}

/// Defines the floating functions' impls.
macro_rules! float_impls {
    ($($name:ident => $f:ident),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($name), "`.")]
        pub fn $name(iter: &mut TensorIterator<'_>, _: &Tensor) -> Result<()> {
            float_loop(iter, FloatFn::$f)
        }
    )*};
}

float_impls!(
    cos_out => Cos, sin_out => Sin, tanh_out => Tanh, exp_out => Exp, expm1_out => Expm1,
    log_out => Log, log1p_out => Log1p, sqrt_out => Sqrt, rsqrt_out => Rsqrt,
    reciprocal_out => Reciprocal, sigmoid_out => Sigmoid, erf_out => Erf, silu_out => Silu,
    acos_out => Acos,
    asin_out => Asin,
    atan_out => Atan,
    acosh_out => Acosh,
    asinh_out => Asinh,
    atanh_out => Atanh,
    cosh_out => Cosh,
    sinh_out => Sinh,
    tan_out => Tan,
    log2_out => Log2,
    log10_out => Log10,
    hardsigmoid_out => Hardsigmoid,
);

/// A floating math function of an unstructured operator (`hardswish`):
/// the output as `v` asks, the iteration built as `unary_op` builds it.
pub fn float_fn(v: SetOutput<'_>, a: &Tensor, f: FloatFn) -> Result<Tensor> {
    let mut iter = v.build(TensorIteratorConfig::unary_op(v.maybe_get_output(), a))?;
    float_loop(&mut iter, f)?;
    Ok(v.finish(iter.into_output(0)))
}

/// `gelu.out`.
pub fn gelu_out(iter: &mut TensorIterator<'_>, _: &Tensor, approximate: &str) -> Result<()> {
    float_loop(
        iter,
        if approximate == "tanh" {
            FloatFn::GeluTanh
        } else {
            FloatFn::Gelu
        },
    )
}

/// `gelu(x) = x / 2 * (1 + erf(x / sqrt(2)))` in float32, with `erf` as
/// PyTorch's vectorized CPU kernels compute it (`Vectorized<float>::erf`:
/// Abramowitz and Stegun 7.1.26, absolute error below 1.5e-7, times an
/// `exp`). A branch-free body the compiler vectorizes: `libm::erff` per
/// element was a tenth of the attention model's time. float16 and
/// bfloat16 compute through it too, as PyTorch's do through float.
#[inline(always)]
fn gelu_erf_f32(x: f32) -> f32 {
    const P: f32 = 0.327_591_1;
    const P1: f32 = 0.254_829_6;
    const P2: f32 = -0.284_496_72;
    const P3: f32 = 1.421_413_8;
    const P4: f32 = -1.453_152;
    const P5: f32 = 1.061_405_4;
    let z = x * std::f32::consts::FRAC_1_SQRT_2;
    let t = 1.0 / (P * z.abs() + 1.0);
    let r = (((P5 * t + P4) * t + P3) * t + P2) * t + P1;
    let erf_abs = 1.0 - r * t * exp_f32(-(z * z));
    0.5 * x * (1.0 + erf_abs.copysign(z))
}

/// `gelu(x, approximate='tanh') = x / 2 * (1 + tanh(sqrt(2 / pi) * (x +
/// 0.044715 x^3)))` in float32, as PyTorch's vectorized CPU kernel computes
/// it (in float, with a vectorized `tanh`): the library's `tanh` in
/// float64 per element was 60% of the GPT model's time.
#[inline(always)]
fn gelu_tanh_f32(x: f32) -> f32 {
    const BETA: f32 = std::f32::consts::SQRT_2 * std::f32::consts::FRAC_2_SQRT_PI * 0.5;
    const KAPPA: f32 = 0.044_715;
    let inner = BETA * (x + KAPPA * (x * x * x));
    0.5 * x * (1.0 + tanh_f32(inner))
}

/// The dtype-preserving unary operations.
#[derive(Copy, Clone, Debug)]
#[allow(missing_docs)]
pub enum SameFn {
    Abs,
    Neg,
    Sign,
    Ceil,
    Floor,
    Round,
    Trunc,
    Relu,
    BitwiseNot,
}

/// Round half to even, as `std::nearbyint` does.
fn round_half_even(x: f64) -> f64 {
    let r = x.round();
    if (x - x.trunc()).abs() == 0.5 {
        2.0 * (x / 2.0).round()
    } else {
        r
    }
}

/// `f` applied to one element.
#[inline(always)]
#[allow(clippy::eq_op)]
fn same_fn_value<T: Arith>(f: SameFn, x: T) -> T {
    // `x != x`: NaN (integers never are).
    match f {
        SameFn::Abs => x.abs(),
        SameFn::Neg => x.neg(),
        SameFn::Sign => {
            if T::IS_FLOAT && x != x {
                T::from_f64(0.0)
            } else if x > T::zero() {
                T::one()
            } else if x < T::zero() {
                T::one().neg()
            } else {
                T::zero()
            }
        }
        SameFn::Ceil if T::IS_FLOAT => T::from_f64(x.to_f64().ceil()),
        SameFn::Floor if T::IS_FLOAT => T::from_f64(x.to_f64().floor()),
        SameFn::Round if T::IS_FLOAT => T::from_f64(round_half_even(x.to_f64())),
        SameFn::Trunc if T::IS_FLOAT => T::from_f64(x.to_f64().trunc()),
        SameFn::Ceil | SameFn::Floor | SameFn::Round | SameFn::Trunc => x,
        SameFn::Relu => {
            if x > T::zero() || (T::IS_FLOAT && x != x) {
                x
            } else {
                T::zero()
            }
        }
        SameFn::BitwiseNot => x,
    }
}

/// A dtype-preserving unary operation for every variant (`abs`,
/// `relu`, which are not structured here).
pub fn same_fn(v: SetOutput<'_>, a: &Tensor, f: SameFn) -> Result<Tensor> {
    let mut iter = v.build(TensorIteratorConfig::unary_op(v.maybe_get_output(), a))?;
    same_loop(&mut iter, f)?;
    Ok(v.finish(iter.into_output(0)))
}

/// A dtype-preserving unary operation over an iteration.
pub fn same_loop(iter: &mut TensorIterator<'_>, f: SameFn) -> Result<()> {
    let dtype = iter.common_dtype();
    if dtype == ScalarType::Bool {
        match f {
            SameFn::Abs => return Err(not_implemented("abs_cpu", dtype)),
            SameFn::Relu => return Err(not_implemented("clamp_min_scalar_cpu", dtype)),
            SameFn::Ceil => return Err(not_implemented("ceil_vml_cpu", dtype)),
            SameFn::Floor => return Err(not_implemented("floor_vml_cpu", dtype)),
            SameFn::Round => return Err(not_implemented("round_vml_cpu", dtype)),
            SameFn::Trunc => return Err(not_implemented("trunc_vml_cpu", dtype)),
            _ => {}
        }
    }
    if matches!(f, SameFn::BitwiseNot) && dtype.is_floating_point() {
        return Err(not_implemented("bitwise_not_cpu", dtype));
    }
    if !iter.has_data() {
        return Ok(());
    }
    match f {
        SameFn::BitwiseNot => {
            dispatch_integral!(dtype, "bitwise_not_cpu", T => unary::<T, T>(iter, |x| {
                if T::DTYPE == ScalarType::Bool {
                    T::from_i64(i64::from(x.to_i64() == 0))
                } else {
                    T::from_i64(!x.to_i64())
                }
            }))
        }
        _ => {
            // One loop per function, so each closure's `match` folds away
            // and the loop vectorizes.
            macro_rules! per_fn {
                ($T:ty; $($f:ident),*) => {
                    match f {
                        $(SameFn::$f => unary::<$T, $T>(iter, |x| same_fn_value(SameFn::$f, x)),)*
                    }
                };
            }
            dispatch_all!(dtype, "unary", T => per_fn!(T; Abs, Neg, Sign, Ceil, Floor, Round, Trunc, Relu, BitwiseNot))
        }
    }
}

/// Defines the dtype-preserving functions' impls.
macro_rules! same_impls {
    ($($name:ident => $f:ident),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($name), "`.")]
        pub fn $name(iter: &mut TensorIterator<'_>, _: &Tensor) -> Result<()> {
            same_loop(iter, SameFn::$f)
        }
    )*};
}

same_impls!(
    neg_out => Neg, sign_out => Sign, ceil_out => Ceil, floor_out => Floor,
    round_out => Round, trunc_out => Trunc, bitwise_not_out => BitwiseNot,
);

/// `logical_not`: a bool result (or the out tensor's dtype).
pub fn logical_not_impl(v: SetOutput<'_>, a: &Tensor) -> Result<Tensor> {
    let mut config = aten_core::tensor_iterator::TensorIteratorConfig::default()
        .add_output(v.maybe_get_output())
        .add_input(a)
        .check_all_same_dtype(false);
    if v.maybe_get_output().is_none() {
        config = config.static_output_dtype(ScalarType::Bool);
    }
    let mut iter = v.build(config)?;
    if iter.has_data() {
        dispatch_all!(iter.dtype(0), "logical_not_cpu", O => {
            dispatch_all!(iter.dtype(1), "logical_not_cpu", I => unary::<O, I>(&mut iter, |x| {
                O::from_i64(i64::from(x.to_f64() == 0.0))
            }))
        })?;
    }
    Ok(v.finish(iter.into_output(0)))
}
