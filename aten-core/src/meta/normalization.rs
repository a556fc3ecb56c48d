//! Meta kernels of the normalizations: the batch-norm forwards (their
//! outputs as the CPU kernels allocate them) and the layer-norm and
//! group-norm backwards, which return the gradients as PyTorch's CPU
//! kernels allocate them (sizes, dtypes, memory format), an undefined
//! tensor where `output_mask` switches one off.

use c10_core::{Error, MemoryFormat, Result, ScalarType};

use super::{dtype_and_device, new_output, torch_check};
use crate::native::batch_norm::batch_norm_outputs;
use crate::native::nn::check_layer_norm_inputs;
use crate::Tensor;

/// Whether gradient `i` of a `bool[3] output_mask` is asked for.
fn wanted(output_mask: &[bool], i: usize) -> bool {
    output_mask.get(i).copied().unwrap_or(false)
}

/// `native_layer_norm_backward(grad_out, input, normalized_shape, mean,
/// rstd, weight, bias, output_mask)`: `native_layer_norm`'s argument
/// checks; the gradients of input, weight and bias, contiguous, each in
/// its argument's shape and dtype (an absent weight or bias has none).
#[allow(clippy::too_many_arguments)]
pub fn native_layer_norm_backward_meta(
    _grad_out: &Tensor,
    input: &Tensor,
    normalized_shape: &[i64],
    _mean: &Tensor,
    _rstd: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    output_mask: &[bool],
) -> Result<(Tensor, Tensor, Tensor)> {
    check_layer_norm_inputs(input, normalized_shape, weight, bias)?;
    let like = |t: Option<&Tensor>, i: usize| -> Result<Tensor> {
        match t {
            Some(t) if wanted(output_mask, i) => {
                let (dtype, device) = dtype_and_device(t)?;
                new_output(&t.sizes(), MemoryFormat::Contiguous, dtype, device)
            }
            _ => Ok(Tensor::undefined()),
        }
    };
    Ok((like(Some(input), 0)?, like(weight, 1)?, like(bias, 2)?))
}

/// PyTorch's `check_mixed_data_type(input, parameters...)`: a mixed call
/// has a float16 or bfloat16 input and float32 parameters.
fn check_mixed_data_type(input: ScalarType, parameters: &[&Tensor]) -> Result<()> {
    if parameters
        .iter()
        .any(|p| p.dtype().is_some_and(|d| d != ScalarType::Float))
    {
        return Err(Error::runtime(
            "mixed dtype (CPU): expect parameter to have scalar type of Float",
        ));
    }
    if !matches!(input, ScalarType::Half | ScalarType::BFloat16) {
        return Err(Error::runtime(
            "mixed dtype (CPU): expect input to have scalar type of BFloat16/Half",
        ));
    }
    Ok(())
}

/// `native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C,
/// HxW, group, output_mask)`: PyTorch's checks (the wrapper's dtypes; for
/// a non-empty input, the kernel's element counts and a channel count
/// the groups divide); the input's gradient in the input's suggested
/// memory format, the weight's and bias's as `[C]` vectors in the weight's
/// dtype (the input's without a weight, whose gradient is then still
/// given when asked for, as PyTorch's kernel does).
#[allow(clippy::too_many_arguments, non_snake_case)]
pub fn native_group_norm_backward_meta(
    grad_out: &Tensor,
    input: &Tensor,
    mean: &Tensor,
    rstd: &Tensor,
    weight: Option<&Tensor>,
    N: i64,
    C: i64,
    HxW: i64,
    group: i64,
    output_mask: &[bool],
) -> Result<(Tensor, Tensor, Tensor)> {
    let (dtype, device) = dtype_and_device(input)?;
    if grad_out.dtype() != Some(dtype) {
        return Err(Error::runtime(
            "Expected scalar types of X and dY are same.",
        ));
    }
    // `is_mixed_type(X, mean, rstd)`: the first defined statistic decides.
    if mean.dtype().is_some_and(|d| d != dtype) {
        check_mixed_data_type(dtype, &[mean, rstd])?;
    }
    if input.numel() > 0 {
        if !dtype.is_floating_point() {
            return Err(Error::not_implemented_for(
                "GroupNormBackwardKernelImpl",
                dtype,
            ));
        }
        let elements = N.checked_mul(C).and_then(|nc| nc.checked_mul(HxW));
        torch_check(
            elements == Some(grad_out.numel()),
            "dY.numel() == N * C * HxW",
        )?;
        torch_check(elements == Some(input.numel()), "X.numel() == N * C * HxW")?;
        let stats = N.checked_mul(group);
        torch_check(stats == Some(mean.numel()), "mean.numel() == N * group")?;
        torch_check(stats == Some(rstd.numel()), "rstd.numel() == N * group")?;
        torch_check(
            weight.is_none_or(|w| w.numel() == C),
            "!gamma.defined() || gamma.numel() == C",
        )?;
        if group <= 0 || C % group != 0 {
            return Err(Error::runtime(format!(
                "Expect number of channels {C} to be evenly-divisible by number of groups {group}"
            )));
        }
    }
    let format = MemoryFormat::suggest(&input.sizes(), &input.strides());
    let param_dtype = weight.and_then(|w| w.dtype()).unwrap_or(dtype);
    let param = |i: usize| -> Result<Tensor> {
        if wanted(output_mask, i) {
            new_output(&[C], MemoryFormat::Contiguous, param_dtype, device)
        } else {
            Ok(Tensor::undefined())
        }
    };
    let grad_input = if wanted(output_mask, 0) {
        new_output(&input.sizes(), format, dtype, device)?
    } else {
        Tensor::undefined()
    };
    Ok((grad_input, param(1)?, param(2)?))
}

/// `_native_batch_norm_legit` on Meta: the checks and outputs; the running
/// statistics are not touched.
#[allow(clippy::too_many_arguments)]
pub fn batch_norm_legit_meta(
    input: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    running_mean: &Tensor,
    running_var: &Tensor,
    training: bool,
    _momentum: f64,
    _eps: f64,
) -> Result<(Tensor, Tensor, Tensor)> {
    let o = batch_norm_outputs(
        input,
        weight,
        bias,
        Some(running_mean),
        Some(running_var),
        training,
    )?;
    Ok(o.into_results())
}

/// `native_batch_norm` on Meta: the checks and outputs.
#[allow(clippy::too_many_arguments)]
pub fn native_batch_norm_meta(
    input: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    running_mean: Option<&Tensor>,
    running_var: Option<&Tensor>,
    training: bool,
    _momentum: f64,
    _eps: f64,
) -> Result<(Tensor, Tensor, Tensor)> {
    let o = batch_norm_outputs(input, weight, bias, running_mean, running_var, training)?;
    Ok(o.into_results())
}

/// `_native_batch_norm_legit.no_stats` on Meta.
pub fn batch_norm_legit_no_stats_meta(
    input: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    training: bool,
    _momentum: f64,
    _eps: f64,
) -> Result<(Tensor, Tensor, Tensor)> {
    let o = batch_norm_outputs(input, weight, bias, None, None, training)?;
    Ok(o.into_results())
}
