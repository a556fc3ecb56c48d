//! Meta functions of the structured families (PyTorch's `TORCH_META_FUNC`):
//! each checks its arguments and describes its output through a
//! [`SetOutput`](crate::structured::SetOutput), backend-neutrally. The
//! generated wrappers of every backend call them (see
//! [`crate::structured`]); the Meta backend's kernels are these functions
//! alone.
//!
//! A function is named after the family's functional operator
//! (`add.Tensor`: [`add_tensor`]) and takes its arguments.
//!
//! - [`pointwise`] holds the families built on `TensorIterator`
//!   (`structured_inherits: TensorIteratorBase`): binary arithmetic,
//!   bitwise operations, comparisons and unary functions;
//! - [`reduction`] holds the reductions and the operations along one
//!   dimension (`cumsum`, softmax);
//! - [`linear_algebra`] holds the matrix products, whose output is
//!   described through `set_output`
//!   ([`MetaOutput`](crate::structured::MetaOutput));
//! - [`cat`](mod@cat) joins tensors along a dimension, [`indexing`] holds `gather`,
//!   [`triangular`] `tril` and `triu`;
//! - [`advanced_indexing`] holds `index.Tensor`, [`scatter`] the scatter
//!   families, [`sorting`] `sort.stable` and `topk`;
//! - [`loss`] holds `nll_loss_forward` and `mse_loss`, [`pooling`]
//!   `max_pool2d_with_indices`, [`padding`] the reflection and
//!   replication paddings, [`upsample`] the 2-d upsamplings.

pub mod advanced_indexing;
pub mod cat;
pub mod indexing;
pub mod linear_algebra;
pub mod loss;
pub mod padding;
pub mod pointwise;
pub mod pooling;
pub mod reduction;
pub mod scatter;
pub mod sorting;
pub mod triangular;
pub mod upsample;

pub use advanced_indexing::index_tensor;
pub use cat::cat;
pub use indexing::gather;
pub use linear_algebra::{addmm, baddbmm, bmm, mm};
pub use loss::{mse_loss, nll_loss_forward};
pub use padding::{
    reflection_pad1d, reflection_pad3d, replication_pad1d, replication_pad2d, replication_pad3d,
};
pub use pointwise::*;
pub use pooling::{
    avg_pool2d, avg_pool2d_backward, avg_pool3d, max_pool2d_with_indices,
    max_pool2d_with_indices_backward,
};
pub use reduction::{
    _log_softmax, _softmax, all_dim, amax, amin, any, any_dim, any_dims, argmax, argmin, cumsum,
    linalg_vector_norm, max_dim, mean_dim, min_dim, norm_scalaropt_dim, norm_scalaropt_dim_dtype,
    prod_dim_int, sum_dim_intlist,
};
pub use scatter::{scatter_add, scatter_reduce_two, scatter_src, scatter_value};
pub use sorting::{sort_stable, topk};
pub use triangular::{tril, triu};
pub use upsample::{upsample_bicubic2d, upsample_bilinear2d, upsample_nearest2d};

use c10_core::{Device, Error, Result, ScalarType};

use crate::Tensor;

/// Every tensor must be on one device (PyTorch's check of operators
/// without `device_check: NoCheck`).
pub fn check_same_device<'t>(tensors: impl IntoIterator<Item = &'t Tensor>) -> Result<()> {
    let mut first: Option<Device> = None;
    for t in tensors {
        let Some(d) = t.device() else { continue };
        match first {
            None => first = Some(d),
            Some(f) if f != d => {
                return Err(Error::runtime(format!(
                    "Expected all tensors to be on the same device, but found at least two devices, {f} and {d}!"
                )))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// The dtype and device of a defined tensor argument.
pub(crate) fn dtype_and_device(t: &Tensor) -> Result<(ScalarType, Device)> {
    t.dtype()
        .zip(t.device())
        .ok_or_else(|| Error::runtime("undefined tensor"))
}

/// `torch.<Dtype>Tensor`, as PyTorch's `TensorArg` messages name a
/// tensor's type.
pub(crate) fn tensor_type_name(t: &Tensor) -> String {
    t.dtype()
        .map_or("undefined".to_string(), |d| format!("torch.{d}Tensor"))
}

/// PyTorch's `checkScalarTypes(checked_from, TensorArg(t, name, pos),
/// allowed)`: `t`'s dtype is one of `allowed`.
pub(crate) fn check_scalar_types(
    t: &Tensor,
    (pos, name): (usize, &str),
    allowed: &[ScalarType],
    checked_from: &str,
) -> Result<()> {
    if t.dtype().is_some_and(|d| allowed.contains(&d)) {
        return Ok(());
    }
    let names: Vec<String> = allowed.iter().map(|d| d.to_string()).collect();
    Err(Error::runtime(format!(
        "Expected tensor for argument #{pos} '{name}' to have one of the following scalar types: {}; but got {} instead (while checking arguments for {checked_from})",
        names.join(", "),
        tensor_type_name(t)
    )))
}

/// PyTorch's message of a bare `TORCH_CHECK(cond)` whose condition reads
/// `text`.
pub(crate) fn torch_check(cond: bool, text: &str) -> Result<()> {
    if cond {
        return Ok(());
    }
    Err(Error::runtime(format!(
        "Expected {text} to be true, but got false.  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)"
    )))
}
