//! Batch normalization on the CPU (`_native_batch_norm_legit` and its
//! `no_stats` overload; PyTorch's `batch_norm_cpu`).
//!
//! Per channel `c` the output is `x * alpha[c] + beta[c]` with
//! `alpha = invstd * weight` and `beta = bias - mean * alpha`, computed in
//! `f64` and rounded once to the output's dtype. When training, the mean
//! and the biased variance come from the batch (sums in `f64`, as
//! PyTorch's CPU accumulate type for float), are returned as `save_mean`
//! and `save_invstd`, and update the running statistics with `momentum`
//! (the running variance with the unbiased variance).

use aten_core::native::batch_norm::batch_norm_outputs;
use aten_core::tensor_iterator::convert::copy_into;
use aten_core::{ops, Tensor};
use c10_core::{Error, Numeric, Result, ScalarType, TensorBase};

use super::util::dtype_of;
use crate::dispatch_floating;

/// The values of a (small) parameter tensor as `f64`, in logical order.
fn values_f64(t: &Tensor) -> Result<Vec<f64>> {
    // Numeric elements convert to `f64` one by one exactly as `_to_copy`
    // converts them: read them in place rather than through a dispatched
    // copy (four per call, on every inference call of a model).
    if let Some(dtype) = t.dtype() {
        if let Some(values) = c10_core::dispatch_dtype!(numeric: dtype, P => {
            Some(t.with_values::<P, _>(|v| v.iter().map(|x| x.to_f64()).collect()))
        }, _ => None)
        {
            return values;
        }
    }
    let t = ops::_to_copy_with(
        t,
        ops::ToCopyOptions {
            dtype: Some(ScalarType::Double),
            ..Default::default()
        },
    )?;
    t.to_vec::<f64>()
}

/// Writes `values` (logical order) into `dst`, converting to its dtype.
fn write_f64(dst: &Tensor, values: Vec<f64>) -> Result<()> {
    let len = i64::try_from(values.len()).map_err(|_| Error::runtime("too many values"))?;
    copy_into(&TensorBase::from_vec(values, &[len])?, dst.base())
}

/// `values` rounded to `dtype` (a floating dtype) and back.
fn round_to(dtype: ScalarType, values: Vec<f64>) -> Result<Vec<f64>> {
    dispatch_floating!(dtype, "batch_norm", P => {
        Ok(values.into_iter().map(|v| P::from_f64(v).to_f64()).collect())
    })
}

/// PyTorch's `InvStd`: `1 / sqrt(var + eps)`, or 0 when both are 0.
fn inv_std(var: f64, eps: f64) -> f64 {
    if var == 0.0 && eps == 0.0 {
        0.0
    } else {
        1.0 / (var + eps).sqrt()
    }
}

/// The per-channel mean and sum of squared deviations of `x`, laid out as
/// `[batch, channels, inner]` in logical order.
fn channel_stats<T: Numeric>(x: &[T], channels: usize, inner: usize) -> (Vec<f64>, Vec<f64>) {
    let plane = channels * inner;
    let count = (x.len() / channels.max(1)) as f64;
    let mut sums = vec![0.0f64; channels];
    for batch in x.chunks_exact(plane) {
        for (c, row) in batch.chunks_exact(inner).enumerate() {
            sums[c] += row.iter().map(|v| v.to_f64()).sum::<f64>();
        }
    }
    let means: Vec<f64> = sums.iter().map(|s| s / count).collect();
    let mut squares = vec![0.0f64; channels];
    for batch in x.chunks_exact(plane) {
        for (c, row) in batch.chunks_exact(inner).enumerate() {
            let m = means[c];
            squares[c] += row.iter().map(|v| (v.to_f64() - m).powi(2)).sum::<f64>();
        }
    }
    (means, squares)
}

/// `y = x * alpha[c] + beta[c]` over `[batch, channels, inner]`.
fn normalize<T: Numeric>(x: &[T], y: &mut [T], inner: usize, alpha: &[f64], beta: &[f64]) {
    let plane = alpha.len() * inner;
    for (xb, yb) in x.chunks_exact(plane).zip(y.chunks_exact_mut(plane)) {
        for (c, (xr, yr)) in xb
            .chunks_exact(inner)
            .zip(yb.chunks_exact_mut(inner))
            .enumerate()
        {
            let (a, b) = (alpha[c], beta[c]);
            for (o, v) in yr.iter_mut().zip(xr) {
                *o = T::from_f64(v.to_f64() * a + b);
            }
        }
    }
}

/// `native_batch_norm` (PyTorch's `batch_norm_cpu`, the body of every
/// overload): the running statistics are optional; with them, as
/// `_native_batch_norm_legit`.
#[allow(clippy::too_many_arguments)]
pub fn native_batch_norm_cpu(
    input: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    running_mean: Option<&Tensor>,
    running_var: Option<&Tensor>,
    training: bool,
    momentum: f64,
    eps: f64,
) -> Result<(Tensor, Tensor, Tensor)> {
    let outs = batch_norm_outputs(input, weight, bias, running_mean, running_var, training)?;
    let channels = usize::try_from(outs.channels).map_err(|_| Error::runtime("bad channels"))?;
    let numel = usize::try_from(input.numel()).map_err(|_| Error::runtime("bad numel"))?;
    if numel == 0 {
        return Ok(outs.into_results());
    }
    // Non-empty: every size is positive and their product is `numel`.
    let inner = input.sizes()[2..].iter().product::<i64>() as usize;
    let dtype = dtype_of(input)?;
    let output = &outs.output;
    dispatch_floating!(dtype, "batch_norm", T => {
        let check = |x: &[T]| {
            if x.len() != numel || numel % (channels * inner) != 0 {
                return Err(Error::runtime("batch_norm: the input changed while it ran"));
            }
            Ok(())
        };
        // Training reads the input twice (statistics, then the
        // normalization) from one copy; inference reads it once, in place
        // when it is contiguous (`with_values` below): copying it first was
        // most of this kernel's time in the CNN model.
        let gathered: Option<Vec<T>> = training.then(|| input.to_vec::<T>()).transpose()?;
        let (mean, invstd) = if let Some(x) = &gathered {
            check(x)?;
            // PyTorch keeps the sums of squares, then the statistics it
            // returns, in their dtype, and normalizes with those.
            let param_dtype = dtype_of(&outs.save_mean)?;
            let (means, squares) = channel_stats(x, channels, inner);
            let squares = round_to(param_dtype, squares)?;
            let count = (numel / channels) as f64;
            let invstd: Vec<f64> = squares.iter().map(|s| inv_std(s / count, eps)).collect();
            if let (Some(rm), Some(rv)) = (running_mean, running_var) {
                let old_mean = values_f64(rm)?;
                let old_var = values_f64(rv)?;
                let new_mean = old_mean
                    .iter()
                    .zip(&means)
                    .map(|(r, m)| momentum * m + (1.0 - momentum) * r)
                    .collect();
                let new_var = old_var
                    .iter()
                    .zip(&squares)
                    .map(|(r, s)| momentum * (s / (count - 1.0)) + (1.0 - momentum) * r)
                    .collect();
                write_f64(rm, new_mean)?;
                write_f64(rv, new_var)?;
            }
            let means = round_to(param_dtype, means)?;
            let invstd = round_to(param_dtype, invstd)?;
            write_f64(&outs.save_mean, means.clone())?;
            write_f64(&outs.save_invstd, invstd.clone())?;
            (means, invstd)
        } else {
            // The meta function checked that both are given.
            let rm = running_mean.ok_or_else(|| Error::internal("running_mean"))?;
            let rv = running_var.ok_or_else(|| Error::internal("running_var"))?;
            let var = values_f64(rv)?;
            (values_f64(rm)?, var.iter().map(|v| 1.0 / (v + eps).sqrt()).collect())
        };
        let w = weight.map(values_f64).transpose()?;
        let b = bias.map(values_f64).transpose()?;
        let alpha: Vec<f64> = (0..channels)
            .map(|c| invstd[c] * w.as_ref().map_or(1.0, |w| w[c]))
            .collect();
        let beta: Vec<f64> = (0..channels)
            .map(|c| b.as_ref().map_or(0.0, |b| b[c]) - mean[c] * alpha[c])
            .collect();
        let write = |x: &[T]| -> Result<()> {
            check(x)?;
            if output.is_contiguous() {
                output.with_data_mut::<T, _>(|y| normalize(x, y, inner, &alpha, &beta))?;
            } else {
                let tmp = TensorBase::empty(&input.sizes(), dtype, c10_core::Device::CPU)?;
                tmp.with_data_mut::<T, _>(|y| normalize(x, y, inner, &alpha, &beta))?;
                copy_into(&tmp, output.base())?;
            }
            Ok(())
        };
        match &gathered {
            Some(x) => write(x),
            None => input.with_values::<T, _>(|x| write(x))?,
        }
    })?;
    Ok(outs.into_results())
}

/// `_native_batch_norm_legit`: normalizes with the batch's statistics when
/// training (updating the running ones), else with the running ones.
#[allow(clippy::too_many_arguments)]
pub fn batch_norm_legit_cpu(
    input: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    running_mean: &Tensor,
    running_var: &Tensor,
    training: bool,
    momentum: f64,
    eps: f64,
) -> Result<(Tensor, Tensor, Tensor)> {
    native_batch_norm_cpu(
        input,
        weight,
        bias,
        Some(running_mean),
        Some(running_var),
        training,
        momentum,
        eps,
    )
}

/// `_native_batch_norm_legit.no_stats`: the batch's statistics only.
pub fn batch_norm_legit_no_stats_cpu(
    input: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    training: bool,
    momentum: f64,
    eps: f64,
) -> Result<(Tensor, Tensor, Tensor)> {
    native_batch_norm_cpu(input, weight, bias, None, None, training, momentum, eps)
}
