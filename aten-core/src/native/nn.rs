//! Composite neural-network operators, decomposed as PyTorch decomposes
//! them: `max_pool2d` -> `max_pool2d_with_indices`, `layer_norm` ->
//! `native_layer_norm` (whose default-backend kernel decomposes further), `embedding` -> `index_select`, `cross_entropy_loss`
//! -> `log_softmax` + `nll_loss_nd` -> `nll_loss_forward`.

use c10_core::{Error, Result, Scalar, ScalarType};

use super::dims::fmt_list;
use crate::generated::ops;
use crate::meta::check_scalar_types;
use crate::Tensor;

/// Reductions (`at::Reduction`).
const REDUCTION_NONE: i64 = 0;
const REDUCTION_MEAN: i64 = 1;
const REDUCTION_SUM: i64 = 2;

/// `max_pool2d(...)` (CompositeImplicitAutograd): the values of
/// `max_pool2d_with_indices`.
pub fn max_pool2d(
    self_: &Tensor,
    kernel_size: &[i64],
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    ceil_mode: bool,
) -> Result<Tensor> {
    ops::max_pool2d_with_indices_with(
        self_,
        kernel_size,
        ops::MaxPool2dWithIndicesOptions {
            stride,
            padding,
            dilation,
            ceil_mode,
        },
    )
    .map(|(values, _)| values)
}

/// `layer_norm(...)` (CompositeImplicitAutograd).
pub fn layer_norm(
    input: &Tensor,
    normalized_shape: &[i64],
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
    _cudnn_enable: bool,
) -> Result<Tensor> {
    ops::native_layer_norm(input, normalized_shape, weight, bias, eps).map(|(out, _, _)| out)
}

/// `native_layer_norm`'s argument checks (`_check_layer_norm_inputs`);
/// the shape of its mean and rstd outputs: the input's leading
/// dimensions, then a 1 per normalized one.
pub fn check_layer_norm_inputs(
    input: &Tensor,
    normalized_shape: &[i64],
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
) -> Result<Vec<i64>> {
    let nd = normalized_shape.len();
    if nd == 0 {
        return Err(Error::runtime(format!(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, but got normalized_shape = {}",
            fmt_list(normalized_shape)
        )));
    }
    for (t, what) in [(weight, "weight"), (bias, "bias")] {
        if let Some(t) = t {
            if t.sizes() != normalized_shape {
                return Err(Error::runtime(format!(
                    "Expected {what} to be of same shape as normalized_shape, but got {what} of shape {} and normalized_shape = {}",
                    fmt_list(&t.sizes()),
                    fmt_list(normalized_shape)
                )));
            }
        }
    }
    let sizes = input.sizes();
    let ndim = sizes.len();
    if ndim < nd || sizes[ndim - nd..] != *normalized_shape {
        let shape = crate::native::dims::join_list(normalized_shape);
        return Err(Error::runtime(format!(
            "Given normalized_shape={}, expected input with shape [*, {shape}], but got input of size{}",
            fmt_list(normalized_shape),
            fmt_list(&sizes)
        )));
    }
    let mut stat_shape = sizes[..ndim - nd].to_vec();
    stat_shape.extend(std::iter::repeat_n(1, nd));
    Ok(stat_shape)
}

/// `native_layer_norm` (CompositeExplicitAutograd, PyTorch's
/// `math_native_layer_norm`): the same result from `mean`, `rsqrt` and
/// pointwise operators, on any backend.
pub fn math_native_layer_norm(
    input: &Tensor,
    normalized_shape: &[i64],
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
) -> Result<(Tensor, Tensor, Tensor)> {
    check_layer_norm_inputs(input, normalized_shape, weight, bias)?;
    let ndim = input.dim() as i64;
    let axes: Vec<i64> = (ndim - normalized_shape.len() as i64..ndim).collect();
    let keep = || ops::MeanDimOptions {
        keepdim: true,
        dtype: None,
    };
    let mean = ops::mean_dim_with(input, Some(&axes), keep())?;
    let centered = ops::sub_tensor(input, &mean)?;
    let squares = ops::mul_tensor(&centered, &centered)?;
    let var = ops::mean_dim_with(&squares, Some(&axes), keep())?;
    let rstd = ops::rsqrt(&ops::add_scalar(&var, Scalar::Double(eps))?)?;
    let mut out = ops::mul_tensor(&centered, &rstd)?;
    if let Some(w) = weight {
        out = ops::mul_tensor(&out, w)?;
    }
    if let Some(b) = bias {
        out = ops::add_tensor(&out, b)?;
    }
    Ok((out, mean, rstd))
}

/// `embedding(weight, indices, ...)` (CompositeExplicitAutograd): rows of
/// `weight` picked by `indices`, shaped `indices.shape + [dim]`.
pub fn embedding(
    weight: &Tensor,
    indices: &Tensor,
    _padding_idx: i64,
    _scale_grad_by_freq: bool,
    _sparse: bool,
) -> Result<Tensor> {
    if weight.dim() != 2 {
        return Err(Error::runtime("'weight' must be 2-D"));
    }
    check_scalar_types(
        indices,
        (1, "indices"),
        &[ScalarType::Long, ScalarType::Int],
        "embedding",
    )?;
    if indices.dim() == 1 {
        return ops::index_select(weight, 0, indices);
    }
    let mut size = indices.sizes().to_vec();
    size.push(weight.size(1)?);
    let rows = ops::index_select(weight, 0, &ops::reshape(indices, &[-1])?)?;
    ops::view(&rows, &size)
}

/// `nll_loss_nd(...)` (CompositeImplicitAutograd): any number of spatial
/// dimensions, folded into the batch for `nll_loss_forward`.
pub fn nll_loss_nd(
    self_: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    reduction: i64,
    ignore_index: i64,
) -> Result<Tensor> {
    let dim = self_.dim();
    if dim < 1 {
        return Err(Error::value_error(format!(
            "Expected 1 or more dimensions (got {dim})"
        )));
    }
    if dim != 1 && self_.size(0)? != target.sizes().first().copied().unwrap_or(-1) {
        return Err(Error::value_error(format!(
            "Expected input batch_size ({}) to match target batch_size ({}).",
            self_.size(0)?,
            target.sizes().first().copied().unwrap_or(0)
        )));
    }
    if dim <= 2 {
        return ops::nll_loss_forward(self_, target, weight, reduction, ignore_index)
            .map(|(out, _)| out);
    }
    // (N, C, d1, ...) -> (N * d1 * ..., C).
    if target.sizes().get(1..) != self_.sizes().get(2..) {
        let mut expected = vec![self_.size(0)?];
        expected.extend_from_slice(self_.sizes().get(2..).unwrap_or_default());
        return Err(Error::runtime(format!(
            "Expected target size {}, got {}",
            fmt_list(&expected),
            fmt_list(&target.sizes())
        )));
    }
    let classes = self_.size(1)?;
    let moved = ops::transpose_int(
        &ops::flatten_using_ints_with(
            self_,
            ops::FlattenUsingIntsOptions {
                start_dim: 2,
                end_dim: -1,
            },
        )?,
        1,
        2,
    )?;
    let flat = ops::reshape(&moved, &[-1, classes])?;
    let flat_target = ops::reshape(target, &[-1])?;
    let out = ops::nll_loss_forward(&flat, &flat_target, weight, reduction, ignore_index)?.0;
    if reduction == REDUCTION_NONE {
        ops::reshape(&out, &target.sizes())
    } else {
        Ok(out)
    }
}

/// `nll_loss(...)` (CompositeImplicitAutograd).
pub fn nll_loss(
    self_: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    reduction: i64,
    ignore_index: i64,
) -> Result<Tensor> {
    ops::nll_loss_nd_with(
        self_,
        target,
        ops::NllLossNdOptions {
            weight,
            reduction,
            ignore_index,
        },
    )
}

/// Cross entropy against class probabilities: the log-probabilities over
/// `classes` classes along `class_dim`.
struct ProbabilityLoss<'a> {
    logp: &'a Tensor,
    class_dim: i64,
    classes: i64,
}

impl ProbabilityLoss<'_> {
    /// PyTorch's checks of a probability target: floating point, without
    /// `ignore_index` or (in this build) class weights.
    fn check_target(target: &Tensor, weight: Option<&Tensor>, ignore_index: i64) -> Result<()> {
        match target.dtype() {
            Some(d) if d.is_floating_point() => {}
            other => {
                return Err(Error::runtime(format!(
                    "Expected floating point type for target with class probabilities, got {}",
                    other.map_or("undefined".to_string(), |d| d.to_string())
                )))
            }
        }
        if ignore_index >= 0 {
            return Err(Error::runtime(
                "ignore_index is not supported for floating point target",
            ));
        }
        if weight.is_some() {
            return Err(Error::not_implemented(
                "cross_entropy_loss: class weights with probability targets are not supported by this build",
            ));
        }
        Ok(())
    }

    /// The loss of `target`, smoothed by `label_smoothing` and reduced by
    /// `reduction` (the batch is `self_`'s).
    fn apply(
        &self,
        self_: &Tensor,
        target: &Tensor,
        reduction: i64,
        label_smoothing: f64,
    ) -> Result<Tensor> {
        let target = if label_smoothing > 0.0 {
            ops::add_scalar(
                &ops::mul_scalar(target, Scalar::Double(1.0 - label_smoothing))?,
                Scalar::Double(label_smoothing / self.classes as f64),
            )?
        } else {
            target.clone()
        };
        let per_sample = ops::neg(&ops::sum_dim_intlist(
            &ops::mul_tensor(self.logp, &target)?,
            Some(&[self.class_dim]),
        )?)?;
        let batch = if self_.dim() == 1 {
            1
        } else {
            self_.numel() / self.classes.max(1)
        };
        match reduction {
            REDUCTION_NONE => Ok(per_sample),
            REDUCTION_SUM => ops::sum(&per_sample),
            REDUCTION_MEAN => ops::div_scalar(&ops::sum(&per_sample)?, Scalar::Int(batch)),
            other => Err(Error::value_error(format!(
                "{other} is not a valid value for reduction"
            ))),
        }
    }
}

/// `cross_entropy_loss(...)` (CompositeImplicitAutograd): class-index
/// targets go through `log_softmax` and `nll_loss_nd` (with label
/// smoothing mixed in as PyTorch does); floating targets are class
/// probabilities.
pub fn cross_entropy_loss(
    self_: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    reduction: i64,
    ignore_index: i64,
    label_smoothing: f64,
) -> Result<Tensor> {
    if !(0.0..=1.0).contains(&label_smoothing) {
        return Err(Error::runtime(format!(
            "label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}"
        )));
    }
    let class_dim = if self_.dim() == 1 { 0 } else { 1 };
    let logp = ops::log_softmax_int(self_, class_dim)?;
    let classes = self_.sizes().get(class_dim as usize).copied().unwrap_or(1);
    // Same shapes: class probabilities (PyTorch's rule).
    if self_.sizes() == target.sizes() {
        let loss = ProbabilityLoss {
            logp: &logp,
            class_dim,
            classes,
        };
        ProbabilityLoss::check_target(target, weight, ignore_index)?;
        return loss.apply(self_, target, reduction, label_smoothing);
    }
    let nll = ops::nll_loss_nd_with(
        &logp,
        target,
        ops::NllLossNdOptions {
            weight,
            reduction,
            ignore_index,
        },
    )?;
    if label_smoothing == 0.0 {
        return Ok(nll);
    }
    if weight.is_some() {
        return Err(Error::not_implemented(
            "cross_entropy_loss: class weights with label smoothing are not supported by this build",
        ));
    }
    let ignored = ops::eq_scalar(target, Scalar::Int(ignore_index))?;
    let smooth = ops::masked_fill_scalar(
        &ops::neg(&ops::sum_dim_intlist(&logp, Some(&[class_dim]))?)?,
        &ignored,
        Scalar::Double(0.0),
    )?;
    let smooth = match reduction {
        REDUCTION_NONE => smooth,
        REDUCTION_SUM => ops::sum(&smooth)?,
        REDUCTION_MEAN => {
            let counted = ops::sum(&ops::logical_not(&ignored)?)?;
            ops::div_tensor(&ops::sum(&smooth)?, &counted)?
        }
        other => {
            return Err(Error::value_error(format!(
                "{other} is not a valid value for reduction"
            )))
        }
    };
    ops::add_tensor(
        &ops::mul_scalar(&nll, Scalar::Double(1.0 - label_smoothing))?,
        &ops::mul_scalar(&smooth, Scalar::Double(label_smoothing / classes as f64))?,
    )
}
