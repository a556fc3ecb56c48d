//! The normalization entry points of `torch.nn.functional`
//! (CompositeImplicitAutograd, as PyTorch's `Normalization.cpp` and
//! `group_norm.cpp` write them): `batch_norm` (checks, then
//! `native_batch_norm`; an empty input is scaled and shifted copies),
//! `instance_norm` (a batch norm over `1 x (N*C)` channels, the running
//! statistics averaged back over the batch), `group_norm` (checks, then
//! `native_group_norm` on contiguous operands) and `rms_norm`.

use c10_core::{Error, MemoryFormat, Result};

use super::dims::fmt_list;
use crate::generated::ops;
use crate::Tensor;

/// `input.sizes()[1]`, the channels.
fn channels(input: &Tensor) -> Result<i64> {
    let sizes = input.sizes();
    sizes.get(1).copied().ok_or_else(|| {
        Error::runtime(format!(
            "ArrayRef: invalid index Index = 1; Length = {}",
            sizes.len()
        ))
    })
}

/// `check_dims_match_num_input_features`.
fn check_features(name: &str, expected: i64, actual: i64) -> Result<()> {
    if actual != expected {
        return Err(Error::runtime(format!(
            "{name} should contain {expected} elements not {actual}"
        )));
    }
    Ok(())
}

/// `batch_norm(input, weight, bias, running_mean, running_var, training,
/// momentum, eps, cudnn_enabled)`: PyTorch's `_batch_norm_impl_index`
/// checks, then `native_batch_norm`'s output.
#[allow(clippy::too_many_arguments)]
pub fn batch_norm(
    input: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    running_mean: Option<&Tensor>,
    running_var: Option<&Tensor>,
    training: bool,
    momentum: f64,
    eps: f64,
    _cudnn_enabled: bool,
) -> Result<Tensor> {
    let features = channels(input)?;
    if input.numel() == 0 {
        // No view of the input, and no empty tensor: the gradient chain
        // stays whole.
        let mut out = ops::clone(input)?;
        if let Some(w) = weight {
            out = ops::mul_tensor(&out, &ops::select_int(w, 0, 0)?)?;
        }
        if let Some(b) = bias {
            out = ops::add_tensor(&out, &ops::select_int(b, 0, 0)?)?;
        }
        return Ok(out);
    }
    match running_mean {
        Some(m) => check_features("running_mean", features, m.numel())?,
        None if !training => {
            return Err(Error::runtime(
                "running_mean must be defined in evaluation mode",
            ))
        }
        None => {}
    }
    match running_var {
        Some(v) => check_features("running_var", features, v.numel())?,
        None if !training => {
            return Err(Error::runtime(
                "running_var must be defined in evaluation mode",
            ))
        }
        None => {}
    }
    if let Some(w) = weight {
        check_features("weight", features, w.numel())?;
    }
    if let Some(b) = bias {
        check_features("bias", features, b.numel())?;
    }
    let (out, _, _) = ops::native_batch_norm(
        input,
        weight,
        bias,
        running_mean,
        running_var,
        training,
        momentum,
        eps,
    )?;
    Ok(out)
}

/// `instance_norm(input, weight, bias, running_mean, running_var,
/// use_input_stats, momentum, eps, cudnn_enabled)`.
#[allow(clippy::too_many_arguments)]
pub fn instance_norm(
    input: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    running_mean: Option<&Tensor>,
    running_var: Option<&Tensor>,
    use_input_stats: bool,
    momentum: f64,
    eps: f64,
    cudnn_enabled: bool,
) -> Result<Tensor> {
    if !use_input_stats && (running_mean.is_none() || running_var.is_none()) {
        return Err(Error::runtime(
            "Expected running_mean and running_var to be defined when use_input_stats is false",
        ));
    }
    let sizes = input.sizes();
    let c = channels(input)?;
    let b = sizes[0];
    let mut shape = sizes.to_vec();
    shape[1] = b
        .checked_mul(c)
        .ok_or_else(|| Error::runtime("instance_norm: size overflow"))?;
    shape[0] = 1;
    let repeat = |t: Option<&Tensor>| t.map(|t| ops::repeat(t, &[b])).transpose();
    let weight_ = repeat(weight)?;
    let bias_ = repeat(bias)?;
    let running_mean_ = repeat(running_mean)?;
    let running_var_ = repeat(running_var)?;
    let reshaped = ops::view(&ops::contiguous(input)?, &shape)?;
    let out = ops::batch_norm(
        &reshaped,
        weight_.as_ref(),
        bias_.as_ref(),
        running_mean_.as_ref(),
        running_var_.as_ref(),
        use_input_stats,
        momentum,
        eps,
        cudnn_enabled,
    )?;
    // The running statistics are written back, averaged over the batch.
    for (stat, repeated) in [(running_mean, &running_mean_), (running_var, &running_var_)] {
        if let (Some(stat), Some(repeated)) = (stat, repeated) {
            let averaged = ops::mean_dim(&ops::view(repeated, &[b, c])?, Some(&[0]))?;
            ops::copy_(&ops::alias(stat)?, &averaged)?;
        }
    }
    ops::view(&out, &sizes)
}

/// `group_norm(input, num_groups, weight, bias, eps, cudnn_enabled)`.
pub fn group_norm(
    input: &Tensor,
    num_groups: i64,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
    _cudnn_enabled: bool,
) -> Result<Tensor> {
    let sizes = input.sizes();
    if sizes.len() < 2 {
        return Err(Error::runtime(format!(
            "Expected at least 2 dimensions for input tensor but received {}",
            sizes.len()
        )));
    }
    let (n, c) = (sizes[0], sizes[1]);
    if num_groups <= 0 {
        return Err(Error::runtime(format!(
            "Expected num groups to be greater than 0, got {num_groups}"
        )));
    }
    if c % num_groups != 0 {
        return Err(Error::runtime(format!(
            "Expected number of channels in input to be divisible by num_groups, but got input of shape {} and num_groups={num_groups}",
            fmt_list(&sizes)
        )));
    }
    if let Some(w) = weight {
        if w.dim() != 1 || w.numel() != c {
            return Err(Error::runtime(format!(
                "Expected weight to be a vector of size equal to the number of channels in input, but got weight of shape {} and input of shape {}",
                fmt_list(&w.sizes()),
                fmt_list(&sizes)
            )));
        }
    }
    if let Some(b) = bias {
        if b.dim() != 1 || b.numel() != c {
            return Err(Error::runtime(format!(
                "Expected bias to be a vector of size equal to the number of channels in input, but got bias of shape {} and input of shape {}",
                fmt_list(&b.sizes()),
                fmt_list(&sizes)
            )));
        }
    }
    let hxw = sizes[2..]
        .iter()
        .try_fold(1i64, |acc, &s| acc.checked_mul(s))
        .ok_or_else(|| Error::runtime("group_norm: size overflow"))?;
    let format = MemoryFormat::suggest(&sizes, &input.strides());
    let x = ops::contiguous_with(
        input,
        ops::ContiguousOptions {
            memory_format: format,
        },
    )?;
    let gamma = weight.map(ops::contiguous).transpose()?;
    let beta = bias.map(ops::contiguous).transpose()?;
    let (out, _, _) = ops::native_group_norm(
        &x,
        gamma.as_ref(),
        beta.as_ref(),
        n,
        c,
        hxw,
        num_groups,
        eps,
    )?;
    Ok(out)
}

/// `rms_norm(input, normalized_shape, weight, eps)`: `input *
/// rsqrt(mean(input^2) + eps)` over the normalized dimensions, in float32
/// for float16 and bfloat16 (the default `eps` is the computing dtype's
/// machine epsilon), then scaled by `weight`.
pub fn rms_norm(
    input: &Tensor,
    normalized_shape: &[i64],
    weight: Option<&Tensor>,
    eps: Option<f64>,
) -> Result<Tensor> {
    super::nn::check_layer_norm_inputs(input, normalized_shape, weight, None)?;
    let dtype = input
        .dtype()
        .ok_or_else(|| Error::runtime("rms_norm: an undefined tensor"))?;
    if !dtype.is_floating_point() {
        return Err(Error::not_implemented(format!(
            "\"rms_norm\" not implemented for '{}'",
            dtype.name()
        )));
    }
    let opmath = match dtype {
        c10_core::ScalarType::Half | c10_core::ScalarType::BFloat16 => c10_core::ScalarType::Float,
        other => other,
    };
    let eps = eps.unwrap_or(match opmath {
        c10_core::ScalarType::Double => f64::EPSILON,
        _ => f64::from(f32::EPSILON),
    });
    let dims: Vec<i64> = (0..normalized_shape.len())
        .map(|i| input.dim() as i64 - i as i64 - 1)
        .collect();
    let x = if dtype == opmath {
        input.clone()
    } else {
        ops::_to_copy_with(
            input,
            ops::ToCopyOptions {
                dtype: Some(opmath),
                ..Default::default()
            },
        )?
    };
    let mean_square = ops::mean_dim_with(
        &ops::pow_tensor_scalar(&x, c10_core::Scalar::Int(2))?,
        Some(&dims),
        ops::MeanDimOptions {
            keepdim: true,
            dtype: None,
        },
    )?;
    let rsqrt = ops::rsqrt(&ops::add_scalar(
        &mean_square,
        c10_core::Scalar::Double(eps),
    )?)?;
    let result = ops::type_as(&ops::mul_tensor(&x, &rsqrt)?, input)?;
    match weight {
        Some(w) => ops::type_as(&ops::mul_tensor(&result, w)?, &result),
        None => Ok(result),
    }
}
