//! Meta functions of the losses: `nll_loss_forward` (the loss and the
//! total weight, through `set_output`) and `mse_loss` (a `TensorIterator`
//! family whose reduced forms have a 0-dim output).

use c10_core::{Error, Result};

use super::dtype_and_device;
use crate::native::dims::fmt_list;
use crate::structured::{MetaOutput, SetOutput};
use crate::tensor_iterator::{TensorIterator, TensorIteratorConfig};
use crate::Tensor;

/// PyTorch's `Reduction::None` (`Mean` is 1, `Sum` 2).
pub const REDUCTION_NONE: i64 = 0;

/// `nll_loss_forward(self, target, weight, reduction, ignore_index)`: a
/// per-sample loss for an unreduced batch, else a 0-dim one; a 0-dim
/// total weight.
pub fn nll_loss_forward(
    out: SetOutput<'_>,
    self_: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    reduction: i64,
    _ignore_index: i64,
) -> Result<MetaOutput<2>> {
    let (dtype, device) = dtype_and_device(self_)?;
    let ndim = self_.dim();
    if !(1..=2).contains(&ndim) {
        return Err(Error::runtime("input tensor should be 1D or 2D"));
    }
    if target.dim() > 1 {
        return Err(Error::runtime(
            "0D or 1D target tensor expected, multi-target not supported",
        ));
    }
    let no_batch = ndim == 1 && target.dim() == 0;
    let sizes = self_.sizes();
    if !(no_batch || target.sizes().first() == sizes.first()) {
        return Err(Error::runtime(format!(
            "size mismatch (got input: {}, target: {})",
            fmt_list(&sizes),
            fmt_list(&target.sizes())
        )));
    }
    let classes = sizes[ndim - 1];
    if let Some(w) = weight {
        if !(w.dim() == 1 && w.numel() == classes) {
            return Err(Error::runtime(format!(
                "weight tensor should be defined either for all {classes} classes or no classes but got weight tensor of shape: {}",
                fmt_list(&w.sizes())
            )));
        }
    }
    let batch = [sizes[0]];
    let output: &[i64] = if reduction == REDUCTION_NONE && ndim == 2 {
        &batch
    } else {
        &[]
    };
    out.set_outputs([(output, None, dtype), (&[], None, dtype)], device)
}

/// `mse_loss(self, target, reduction)`: the broadcast squared difference,
/// whose output a reduction makes 0-dim.
pub fn mse_loss<'a>(
    out: SetOutput<'a>,
    self_: &'a Tensor,
    target: &'a Tensor,
    reduction: i64,
) -> Result<TensorIterator<'a>> {
    let iter = out.build(TensorIteratorConfig::binary_op(
        out.maybe_get_output(),
        self_,
        target,
    ))?;
    if reduction != REDUCTION_NONE {
        iter.output(0).base().resize_(&[])?;
    }
    Ok(iter)
}
