//! Meta kernels of the embeddings: `embedding_dense_backward` and
//! `_embedding_bag`.

use c10_core::{Error, MemoryFormat, Result, ScalarType};

use super::{check_scalar_types, dtype_and_device, new_output};
use crate::native::embedding_bag::embedding_bag_setup;
use crate::Tensor;

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

/// `_embedding_bag(...)` on Meta: the checks and the four outputs.
#[allow(clippy::too_many_arguments)]
pub fn _embedding_bag_meta(
    weight: &Tensor,
    indices: &Tensor,
    offsets: &Tensor,
    _scale_grad_by_freq: bool,
    mode: i64,
    _sparse: bool,
    per_sample_weights: Option<&Tensor>,
    include_last_offset: bool,
    padding_idx: i64,
) -> Result<(Tensor, Tensor, Tensor, Tensor)> {
    let setup = embedding_bag_setup(
        weight,
        indices,
        offsets,
        mode,
        per_sample_weights,
        include_last_offset,
        padding_idx,
    )?;
    let [output, offset2bag, bag_size, max_indices] = setup.outputs;
    Ok((output, offset2bag, bag_size, max_indices))
}
