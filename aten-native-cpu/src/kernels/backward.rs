//! CPU kernels of the pooling, normalization and embedding operators whose
//! computation `aten-core` writes over the typed API
//! (`aten_core::native::backward`): average and adaptive pooling, group
//! norm, and the backward operators of the Core ATen opset. They run the
//! composite and hand its result to the output the meta function made.

use aten_core::meta::{
    embedding_dense_backward_meta, native_group_norm_backward_meta, native_layer_norm_backward_meta,
};
use aten_core::native::backward as composite;
use aten_core::structured::MetaOutput;
use aten_core::tensor_iterator::convert::copy_into;
use aten_core::Tensor;
use c10_core::Result;

/// Writes `result` into the structured output.
fn fill(meta: &MetaOutput, result: &Tensor) -> Result<()> {
    copy_into(result, meta.output())
}

/// `avg_pool2d.out` (the impl of the structured family).
#[allow(clippy::too_many_arguments)]
pub fn avg_pool2d_out_cpu(
    meta: &mut MetaOutput,
    self_: &Tensor,
    kernel_size: &[i64],
    stride: &[i64],
    padding: &[i64],
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: Option<i64>,
) -> Result<()> {
    fill(
        meta,
        &composite::avg_pool2d(
            self_,
            kernel_size,
            stride,
            padding,
            ceil_mode,
            count_include_pad,
            divisor_override,
        )?,
    )
}

/// `avg_pool2d_backward.grad_input`.
#[allow(clippy::too_many_arguments)]
pub fn avg_pool2d_backward_out_cpu(
    meta: &mut MetaOutput,
    grad_output: &Tensor,
    self_: &Tensor,
    kernel_size: &[i64],
    stride: &[i64],
    padding: &[i64],
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: Option<i64>,
) -> Result<()> {
    fill(
        meta,
        &composite::avg_pool2d_backward(
            grad_output,
            self_,
            kernel_size,
            stride,
            padding,
            ceil_mode,
            count_include_pad,
            divisor_override,
        )?,
    )
}

/// `max_pool2d_with_indices_backward.grad_input`.
#[allow(clippy::too_many_arguments)]
pub fn max_pool2d_with_indices_backward_out_cpu(
    meta: &mut MetaOutput,
    grad_output: &Tensor,
    self_: &Tensor,
    _kernel_size: &[i64],
    _stride: &[i64],
    _padding: &[i64],
    _dilation: &[i64],
    _ceil_mode: bool,
    indices: &Tensor,
) -> Result<()> {
    fill(
        meta,
        &composite::max_pool2d_with_indices_backward(grad_output, self_, indices)?,
    )
}

/// `native_group_norm`.
#[allow(clippy::too_many_arguments)]
pub fn native_group_norm(
    input: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    n: i64,
    c: i64,
    hxw: i64,
    group: i64,
    eps: f64,
) -> Result<(Tensor, Tensor, Tensor)> {
    if hxw <= 0 {
        return Err(c10_core::Error::runtime(format!(
            "Expected HxW to be greater than 0, got {hxw}"
        )));
    }
    let (y, mean, rstd) = composite::math_group_norm(input, weight, bias, n, c, hxw, group, eps)?;
    // PyTorch's CPU kernel writes the output in the input's suggested
    // memory format (channels-last in, channels-last out).
    let format = c10_core::MemoryFormat::suggest(&input.sizes(), &input.strides());
    if format == c10_core::MemoryFormat::Contiguous {
        return Ok((y, mean, rstd));
    }
    let y = aten_core::generated::ops::clone_with(
        &y,
        aten_core::generated::ops::CloneOptions {
            memory_format: Some(format),
        },
    )?;
    Ok((y, mean, rstd))
}

/// Copies each gradient the Meta kernel allocated (a defined output)
/// from the composite's result.
fn fill_grads(
    outputs: (Tensor, Tensor, Tensor),
    results: impl FnOnce() -> Result<(Tensor, Tensor, Tensor)>,
) -> Result<(Tensor, Tensor, Tensor)> {
    if outputs.0.numel() + outputs.1.numel() + outputs.2.numel() == 0 {
        return Ok(outputs);
    }
    let results = results()?;
    for (out, result) in [
        (&outputs.0, &results.0),
        (&outputs.1, &results.1),
        (&outputs.2, &results.2),
    ] {
        if out.defined() {
            copy_into(result, out)?;
        }
    }
    Ok(outputs)
}

/// `native_group_norm_backward`: the Meta kernel's checks and outputs
/// (zeros for an empty input), filled from the composite.
#[allow(clippy::too_many_arguments, non_snake_case)]
pub fn native_group_norm_backward(
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
    let outputs = native_group_norm_backward_meta(
        grad_out,
        input,
        mean,
        rstd,
        weight,
        N,
        C,
        HxW,
        group,
        output_mask,
    )?;
    if input.numel() == 0 {
        return Ok(outputs);
    }
    fill_grads(outputs, || {
        composite::native_group_norm_backward(
            grad_out,
            input,
            mean,
            rstd,
            weight,
            N,
            C,
            group,
            output_mask,
        )
    })
}

/// `native_layer_norm_backward`: the Meta kernel's checks and outputs,
/// filled from the composite.
#[allow(clippy::too_many_arguments)]
pub fn layer_norm_backward_cpu(
    grad_out: &Tensor,
    input: &Tensor,
    normalized_shape: &[i64],
    mean: &Tensor,
    rstd: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    output_mask: &[bool],
) -> Result<(Tensor, Tensor, Tensor)> {
    let outputs = native_layer_norm_backward_meta(
        grad_out,
        input,
        normalized_shape,
        mean,
        rstd,
        weight,
        bias,
        output_mask,
    )?;
    fill_grads(outputs, || {
        composite::native_layer_norm_backward(
            grad_out,
            input,
            normalized_shape,
            mean,
            rstd,
            weight,
            bias,
            output_mask,
        )
    })
}

/// `embedding_dense_backward`: the Meta kernel's checks and output, filled
/// from the composite.
pub fn embedding_dense_backward_cpu(
    grad_output: &Tensor,
    indices: &Tensor,
    num_weights: i64,
    padding_idx: i64,
    scale_grad_by_freq: bool,
) -> Result<Tensor> {
    let grad_weight = embedding_dense_backward_meta(
        grad_output,
        indices,
        num_weights,
        padding_idx,
        scale_grad_by_freq,
    )?;
    if grad_weight.numel() > 0 {
        let result = composite::embedding_dense_backward(
            grad_output,
            indices,
            num_weights,
            padding_idx,
            scale_grad_by_freq,
        )?;
        copy_into(&result, &grad_weight)?;
    }
    Ok(grad_weight)
}
