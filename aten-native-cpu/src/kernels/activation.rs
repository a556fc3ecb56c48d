//! Activations with scalar parameters, on floating dtypes only (PyTorch's
//! `elu_kernel`, `leaky_relu_kernel` and `softplus_kernel`): computed in
//! float32 for the single- and half-precision types (the parameters too)
//! and in float64 for float64.

use aten_core::tensor_iterator::TensorIterator;
use aten_core::Tensor;
use c10_core::{Result, Scalar};

use super::arith::Float;
use super::util::not_implemented;
use crate::dispatch_floating;
use crate::loops::unary;

/// Runs `f32fn` / `f64fn` over a floating iteration, refusing other
/// dtypes with `"name" not implemented for ...`.
fn activation_loop(
    iter: &mut TensorIterator<'_>,
    name: &str,
    f32fn: impl Fn(f32) -> f32 + Copy + Send + Sync,
    f64fn: impl Fn(f64) -> f64 + Copy + Send + Sync,
) -> Result<()> {
    let dtype = iter.common_dtype();
    if !dtype.is_floating_point() {
        return Err(not_implemented(name, dtype));
    }
    if !iter.has_data() {
        return Ok(());
    }
    dispatch_floating!(dtype, name, T => unary::<T, T>(iter, move |x| x.map32(f32fn, f64fn)))
}

/// `elu.out`: `x * scale` for positive `x`, else
/// `(exp(x * input_scale) - 1) * alpha * scale`.
pub fn elu_out(
    iter: &mut TensorIterator<'_>,
    _: &Tensor,
    alpha: Scalar,
    scale: Scalar,
    input_scale: Scalar,
) -> Result<()> {
    let (neg, pos, input) = (
        alpha.to_f64() * scale.to_f64(),
        scale.to_f64(),
        input_scale.to_f64(),
    );
    let (neg32, pos32, input32) = (neg as f32, pos as f32, input as f32);
    activation_loop(
        iter,
        "elu_cpu",
        move |x| {
            if x <= 0.0 {
                (x * input32).exp_m1() * neg32
            } else {
                x * pos32
            }
        },
        move |x| {
            if x <= 0.0 {
                (x * input).exp_m1() * neg
            } else {
                x * pos
            }
        },
    )
}

/// `leaky_relu.out`: `x` for positive `x`, else `x * negative_slope`.
pub fn leaky_relu_out(
    iter: &mut TensorIterator<'_>,
    _: &Tensor,
    negative_slope: Scalar,
) -> Result<()> {
    let slope = negative_slope.to_f64();
    let slope32 = slope as f32;
    activation_loop(
        iter,
        "leaky_relu_cpu",
        move |x| if x > 0.0 { x } else { x * slope32 },
        move |x| if x > 0.0 { x } else { x * slope },
    )
}

/// `softplus.out`: `log1p(exp(x * beta)) / beta`, or `x` where
/// `x * beta` exceeds `threshold`.
pub fn softplus_out(
    iter: &mut TensorIterator<'_>,
    _: &Tensor,
    beta: Scalar,
    threshold: Scalar,
) -> Result<()> {
    let (beta, threshold) = (beta.to_f64(), threshold.to_f64());
    let (beta32, threshold32) = (beta as f32, threshold as f32);
    activation_loop(
        iter,
        "softplus_forward",
        move |x| {
            if x * beta32 > threshold32 {
                x
            } else {
                (x * beta32).exp().ln_1p() / beta32
            }
        },
        move |x| {
            if x * beta > threshold {
                x
            } else {
                (x * beta).exp().ln_1p() / beta
            }
        },
    )
}
