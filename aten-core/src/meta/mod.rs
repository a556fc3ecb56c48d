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
//!
//! The Meta kernels of the operators that are not structured live here
//! too, one file per family, named as the yaml names them (`fill_meta_`,
//! `empty_meta`; the codegen looks for a kernel named `*_meta` in this
//! module): each checks its arguments as PyTorch's CPU kernel does and
//! returns its output on the input's device without touching data, and
//! the CPU kernels of the same operators begin with them, so the two
//! cannot disagree on a shape or an error. PyTorch serves most of these
//! from Python meta functions. [`factories`], [`random`],
//! [`convolution`], [`distance`], [`embedding`], [`fft`],
//! [`grid_sampler`], [`masked`], [`normalization`] and
//! [`transformations`] hold only such kernels; [`reduction`],
//! [`linear_algebra`], [`indexing`], [`padding`] and [`pooling`] hold
//! them beside their families' meta functions.

pub mod advanced_indexing;
pub mod cat;
pub mod convolution;
pub mod distance;
pub mod embedding;
pub mod factories;
pub mod fft;
pub mod grid_sampler;
pub mod indexing;
pub mod linear_algebra;
pub mod loss;
pub mod masked;
pub mod normalization;
pub mod padding;
pub mod pointwise;
pub mod pooling;
pub mod random;
pub mod reduction;
pub mod scatter;
pub mod sorting;
pub mod transformations;
pub mod triangular;
pub mod upsample;

// The Meta kernels of the operators without a structured family, by the
// names the yaml gives them (`fill_meta_`).
pub use advanced_indexing::index_tensor;
pub use cat::cat;
pub use convolution::{col2im_meta, slow_conv2d_forward_meta, slow_conv_dilated2d_meta};
pub use distance::{cdist_forward_meta, pdist_forward_meta};
pub use embedding::{_embedding_bag_meta, embedding_dense_backward_meta};
pub use factories::{
    arange_out_meta, empty_meta, empty_strided_meta, eye_out_meta, fill_meta_, linspace_out_meta,
    zero_meta_,
};
pub use fft::{_fft_c2r_meta, _fft_r2c_meta};
pub use grid_sampler::grid_sampler_2d_meta;
pub use indexing::gather;
pub use indexing::index_select_meta;
pub use linear_algebra::dot_meta;
pub use linear_algebra::{addmm, baddbmm, bmm, mm};
pub use loss::{mse_loss, nll_loss_forward};
pub use masked::{_index_put_impl_meta_, masked_fill_tensor_meta_, masked_scatter_meta_};
pub use normalization::{
    batch_norm_legit_meta, batch_norm_legit_no_stats_meta, native_batch_norm_meta,
    native_group_norm_backward_meta, native_layer_norm_backward_meta,
};
pub use padding::reflection_pad2d_meta;
pub use padding::{
    reflection_pad1d, reflection_pad3d, replication_pad1d, replication_pad2d, replication_pad3d,
};
pub use pointwise::*;
pub use pooling::{
    adaptive_avg_pool2d_backward_meta, adaptive_avg_pool2d_meta, adaptive_avg_pool3d_meta,
    max_pool3d_with_indices_meta,
};
pub use pooling::{
    avg_pool2d, avg_pool2d_backward, avg_pool3d, max_pool2d_with_indices,
    max_pool2d_with_indices_backward,
};
pub use random::{native_dropout_meta, normal_meta_, randperm_generator_out_meta, uniform_meta_};
pub use reduction::{
    _log_softmax, _softmax, all_dim, amax, amin, any, any_dim, any_dims, argmax, argmin, cumsum,
    linalg_vector_norm, max_dim, mean_dim, min_dim, norm_scalaropt_dim, norm_scalaropt_dim_dtype,
    prod_dim_int, sum_dim_intlist,
};
pub use reduction::{prod_meta, var_correction_meta};
pub use scatter::{scatter_add, scatter_reduce_two, scatter_src, scatter_value};
pub use sorting::{sort_stable, topk};
pub use transformations::flip_meta;
pub use triangular::{tril, triu};
pub use upsample::{upsample_bicubic2d, upsample_bilinear2d, upsample_nearest2d};

use c10_core::{Device, Error, MemoryFormat, Result, ScalarType, TensorBase};

use crate::native::factories::strides_for;

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

/// A new contiguous tensor of `sizes` on `device`: the output of a Meta
/// kernel that is not structured.
pub(crate) fn new_contiguous(sizes: &[i64], dtype: ScalarType, device: Device) -> Result<Tensor> {
    Ok(Tensor::from(TensorBase::empty(sizes, dtype, device)?))
}

/// A new tensor of `sizes` laid out in `format` on `device`.
pub(crate) fn new_output(
    sizes: &[i64],
    format: MemoryFormat,
    dtype: ScalarType,
    device: Device,
) -> Result<Tensor> {
    new_strided(sizes, &strides_for(sizes, format)?, dtype, device)
}

/// A new tensor of `sizes` and `strides` on `device`.
pub(crate) fn new_strided(
    sizes: &[i64],
    strides: &[i64],
    dtype: ScalarType,
    device: Device,
) -> Result<Tensor> {
    Ok(Tensor::from(TensorBase::empty_strided(
        sizes, strides, dtype, device,
    )?))
}
