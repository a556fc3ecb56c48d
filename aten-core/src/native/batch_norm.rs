//! Batch normalization's forms in the Core ATen opset
//! (`_native_batch_norm_legit`, its `no_stats` overload and
//! `_native_batch_norm_legit_no_training`) and `native_batch_norm`: PyTorch's checks, the outputs
//! a backend fills ([`batch_norm_outputs`], which is also the Meta
//! kernel), and the composite that runs the legit form without training.
//!
//! As in PyTorch's CPU kernel, a float16 or bfloat16 input may come with
//! float32 parameters (a *mixed* call); the statistics are then float32.

use c10_core::{Error, MemoryFormat, Result, ScalarType};

use crate::meta::check_same_device;
use crate::native::{dims::fmt_list, dims::wrap_dim, factories::strides_for};
use crate::{ops, Tensor};

/// The outputs of a batch normalization and what the kernel needs to
/// fill them.
#[derive(Debug)]
pub struct BatchNormOutputs {
    /// The normalized input: `input`'s sizes, in the memory format PyTorch
    /// picks (`suggest_memory_format`, or the input's own dense format
    /// when every operand is contiguous).
    pub output: Tensor,
    /// The batch mean per channel when training; empty otherwise.
    pub save_mean: Tensor,
    /// The reciprocal standard deviation per channel when training; empty
    /// otherwise.
    pub save_invstd: Tensor,
    /// The number of channels (`input.size(1)`).
    pub channels: i64,
}

impl BatchNormOutputs {
    /// `(output, save_mean, save_invstd)`: the operator's results.
    pub fn into_results(self) -> (Tensor, Tensor, Tensor) {
        (self.output, self.save_mean, self.save_invstd)
    }
}

/// Whether a strided layout is dense in a channels-last `format`
/// (PyTorch's `is_contiguous(memory_format)`): the strides are those of
/// that format, size-one dimensions aside.
fn is_contiguous_as(sizes: &[i64], strides: &[i64], format: MemoryFormat) -> bool {
    // An empty tensor is dense in every format.
    sizes.contains(&0) || format.is_channels_last_contiguous(sizes, strides)
}

/// `is_contiguous` of PyTorch's batch norm: dense in the contiguous or a
/// channels-last format.
fn is_dense_format(t: &Tensor) -> Option<MemoryFormat> {
    if t.is_contiguous() {
        return Some(MemoryFormat::Contiguous);
    }
    let (sizes, strides) = (t.sizes(), t.strides());
    [MemoryFormat::ChannelsLast3d, MemoryFormat::ChannelsLast]
        .into_iter()
        .find(|&f| is_contiguous_as(&sizes, &strides, f))
}

/// PyTorch's checks of a batch normalization's arguments, and its outputs
/// allocated on `input`'s device (data-less on Meta): this is the Meta
/// kernel of both `_native_batch_norm_legit` overloads, and the first
/// step of their backend kernels.
pub fn batch_norm_outputs(
    input: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    running_mean: Option<&Tensor>,
    running_var: Option<&Tensor>,
    training: bool,
) -> Result<BatchNormOutputs> {
    let dtype = input
        .dtype()
        .ok_or_else(|| Error::runtime("undefined tensor"))?;
    let sizes = input.sizes();
    // `input.size(1)`: the channel dimension must exist.
    wrap_dim(1, sizes.len())?;
    if !dtype.is_floating_point() {
        return Err(Error::not_implemented_for("batch_norm", dtype));
    }
    let channels = sizes[1];
    let params = [
        ("weight", weight),
        ("bias", bias),
        ("running_mean", running_mean),
        ("running_var", running_var),
    ];
    let defined = || params.iter().filter_map(|&(n, t)| t.map(|t| (n, t)));
    check_same_device(std::iter::once(input).chain(defined().map(|(_, t)| t)))?;
    let param_dtype = check_params(dtype, channels, defined())?;
    if !training {
        for (name, t) in [("running_mean", running_mean), ("running_var", running_var)] {
            if t.is_none() {
                return Err(Error::runtime(format!(
                    "{name} must be defined in evaluation mode"
                )));
            }
        }
    } else if input.numel() == 0 {
        return Err(Error::runtime(format!(
            "input tensor must have at least one element, but got input_sizes = {}",
            fmt_list(&sizes)
        )));
    }
    // The output keeps the input's dense format when every operand is
    // dense, and takes its suggested format otherwise.
    let params_contiguous = defined().all(|(_, t)| t.is_contiguous());
    let format = match is_dense_format(input) {
        Some(format) if params_contiguous => format,
        _ => MemoryFormat::suggest(&sizes, &input.strides()),
    };
    let device = input.device();
    let output = ops::empty_strided_with(
        &sizes,
        &strides_for(&sizes, format)?,
        ops::EmptyStridedOptions {
            dtype: Some(dtype),
            device,
            ..Default::default()
        },
    )?;
    let stat_len = if training { channels } else { 0 };
    let stat = || {
        ops::empty_memory_format_with(
            &[stat_len],
            ops::EmptyMemoryFormatOptions {
                dtype: Some(param_dtype),
                device,
                ..Default::default()
            },
        )
    };
    Ok(BatchNormOutputs {
        output,
        save_mean: stat()?,
        save_invstd: stat()?,
        channels,
    })
}

/// The dtype of batch norm's parameters (`params`, those defined, by
/// name), each checked to have it and `channels` elements: the input's
/// dtype, or float32 for a reduced-precision input with float32
/// parameters (a mixed call).
fn check_params<'t>(
    dtype: ScalarType,
    channels: i64,
    params: impl Iterator<Item = (&'static str, &'t Tensor)> + Clone,
) -> Result<ScalarType> {
    // A parameter dtype other than the input's makes a mixed call, which
    // only reduced-precision inputs with float32 parameters may make.
    let first = params.clone().next().and_then(|(_, t)| t.dtype());
    let mixed = first.is_some_and(|p| p != dtype);
    let param_dtype = if mixed {
        if !matches!(dtype, ScalarType::Half | ScalarType::BFloat16) {
            return Err(Error::runtime(
                "mixed dtype (CPU): all inputs must share same datatype.",
            ));
        }
        ScalarType::Float
    } else {
        dtype
    };
    for (name, t) in params {
        let d = t
            .dtype()
            .ok_or_else(|| Error::runtime("undefined tensor"))?;
        if d != param_dtype {
            return Err(Error::runtime(if mixed {
                "mixed dtype (CPU): expect parameter to have scalar type of Float".to_string()
            } else {
                format!("expected scalar type {param_dtype} but found {d}")
            }));
        }
        if t.numel() != channels {
            return Err(Error::runtime(format!(
                "{name} should contain {channels} elements not {}",
                t.numel()
            )));
        }
    }
    Ok(param_dtype)
}

/// `_native_batch_norm_legit_no_training` (CompositeExplicitAutograd):
/// `_native_batch_norm_legit` with `training=False`, which leaves the
/// running statistics as they are.
pub fn batch_norm_legit_no_training(
    input: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    running_mean: &Tensor,
    running_var: &Tensor,
    momentum: f64,
    eps: f64,
) -> Result<(Tensor, Tensor, Tensor)> {
    ops::_native_batch_norm_legit(
        input,
        weight,
        bias,
        running_mean,
        running_var,
        false,
        momentum,
        eps,
    )
}

#[cfg(test)]
mod tests {
    use super::is_contiguous_as;
    use c10_core::MemoryFormat;

    #[test]
    fn dense_formats_ignore_size_one_dimensions() {
        let cl = MemoryFormat::ChannelsLast;
        assert!(is_contiguous_as(&[2, 3, 4, 5], &[60, 1, 15, 3], cl));
        assert!(!is_contiguous_as(&[2, 3, 4, 5], &[60, 20, 5, 1], cl));
        assert!(is_contiguous_as(&[2, 1, 4, 5], &[20, 7, 5, 1], cl));
        assert!(!is_contiguous_as(&[2, 3, 4], &[12, 1, 3], cl));
    }
}
