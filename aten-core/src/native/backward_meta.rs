//! Meta kernels of the backward operators whose Meta tensors PyTorch
//! serves from Python (`embedding_dense_backward`,
//! `native_layer_norm_backward`, `native_group_norm_backward`): each makes
//! the checks of PyTorch's CPU kernel that need no data and returns the
//! gradients as that kernel allocates them (sizes, dtypes, memory
//! format), an undefined tensor where `output_mask` switches one off. The
//! CPU kernels begin with these functions and fill what they return, so
//! the two cannot disagree on a layout or an error.

use c10_core::{Device, Error, MemoryFormat, Result, ScalarType, TensorBase};

use super::factories::strides_for;
use super::nn::check_layer_norm_inputs;
use crate::meta::{check_scalar_types, dtype_and_device, torch_check};
use crate::Tensor;

/// A new zero-filled tensor of `sizes` laid out in `format` on `device`.
fn new_output(
    sizes: &[i64],
    format: MemoryFormat,
    dtype: ScalarType,
    device: Device,
) -> Result<Tensor> {
    let strides = strides_for(sizes, format)?;
    Ok(Tensor::from(TensorBase::empty_strided(
        sizes, &strides, dtype, device,
    )?))
}

/// Whether gradient `i` of a `bool[3] output_mask` is asked for.
fn wanted(output_mask: &[bool], i: usize) -> bool {
    output_mask.get(i).copied().unwrap_or(false)
}

/// `embedding_dense_backward(grad_output, indices, num_weights,
/// padding_idx, scale_grad_by_freq)`: the weight's gradient,
/// `[num_weights, grad_output.size(-1)]` in `grad_output`'s dtype, for
/// int64 or int32 indices with one row of `grad_output` each.
pub fn embedding_dense_backward_meta(
    grad_output: &Tensor,
    indices: &Tensor,
    num_weights: i64,
    _padding_idx: i64,
    _scale_grad_by_freq: bool,
) -> Result<Tensor> {
    check_scalar_types(
        indices,
        (2, "indices"),
        &[ScalarType::Long, ScalarType::Int],
        "embedding_backward",
    )?;
    let (dtype, device) = dtype_and_device(grad_output)?;
    let features = grad_output.size(-1)?;
    let grad_weight = new_output(
        &[num_weights, features],
        MemoryFormat::Contiguous,
        dtype,
        device,
    )?;
    // `grad_.contiguous().view({indices.numel(), grad_.size(-1)})`.
    let rows = indices.numel();
    if rows.checked_mul(features) != Some(grad_output.numel()) {
        return Err(Error::runtime(format!(
            "shape '[{rows}, {features}]' is invalid for input of size {}",
            grad_output.numel()
        )));
    }
    Ok(grad_weight)
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
