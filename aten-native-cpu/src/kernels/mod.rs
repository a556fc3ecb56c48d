//! The CPU kernels named by the project's `native_functions.yaml`.
//!
//! - [`binary`], [`unary`], [`compare`]: pointwise loops and the impls of
//!   the structured pointwise families; [`pointwise_ops`]: the other
//!   registered pointwise kernels (on those loops and [`ternary`]);
//! - [`activation`]: `elu`, `leaky_relu`, `softplus`;
//! - [`arith`]: element arithmetic per dtype; [`util`]: shared helpers;
//! - [`copy`](mod@copy): the copy kernel behind `copy_` and dtype conversions;
//! - factories; [`fill`]: `fill_`, `zero_`, range and random fills;
//! - [`indexing`]: `index_select`, `gather`; [`flip`](mod@flip); [`cat`](mod@cat);
//!   [`triangular`]: `tril`, `triu` (all through [`gather_offsets`] but
//!   `cat`);
//! - [`advanced_indexing`]: `index.Tensor`, `_index_put_impl_`,
//!   `masked_scatter_`, `nonzero`; [`scatter`]: the scatter families
//!   (both writing through [`scatter_offsets`]); [`sorting`]: `sort`,
//!   `topk`; [`embedding_bag`]: `_embedding_bag`; [`repeat_interleave`]: the
//!   indices of `repeat_interleave.Tensor`;
//! - [`linear_algebra`]: `mm`, `bmm`, `addmm`, `baddbmm`, `dot` (on
//!   [`crate::gemm`]);
//! - [`local_scalar`]: `_local_scalar_dense` (`item()`);
//! - [`nn`]: convolution, layer norm, losses, dropout; [`pooling`]: max,
//!   average and adaptive pooling;
//!   [`padding`]: reflection and replication padding; [`col2im`];
//!   [`grid_sampler`]: `grid_sampler_2d`; [`distance`]: `cdist`, `pdist`;
//!   [`batch_norm`](mod@batch_norm): batch normalization;
//! - [`reduce`]: reductions, scans and softmax; [`histogram`]: `histc`;
//! - [`upsample`]: nearest, bilinear and bicubic 2-d upsampling;
//! - [`fft`](mod@fft): `_fft_r2c`, `_fft_c2r` (on `rustfft`).

// Kernels are generic over element types, bool included, where an order
// comparison is meant as written.
#![allow(clippy::bool_comparison)]

pub mod activation;
pub mod advanced_indexing;
pub mod arith;
pub mod backward;
pub mod batch_norm;
pub mod binary;
pub mod cat;
pub mod col2im;
pub mod compare;
mod conv_shifted;
pub mod copy;
mod depthwise_channels_last;
mod depthwise_conv;
pub mod distance;
pub mod embedding_bag;
mod factories;
pub mod fft;
pub mod fill;
pub mod flip;
pub mod gather_offsets;
pub mod grid_sampler;
pub mod histogram;
pub mod indexing;
pub mod linear_algebra;
pub mod local_scalar;
pub mod nn;
pub mod padding;
pub mod pointwise_ops;
mod pointwise_program;
pub mod pooling;
pub mod reduce;
pub mod repeat_interleave;
pub mod scatter;
pub mod scatter_offsets;
pub mod sorting;
pub mod ternary;
pub mod triangular;
pub mod unary;
pub mod upsample;
pub mod util;
mod vector_math;

pub use activation::{elu_out, leaky_relu_out, softplus_out};
pub use advanced_indexing::{
    _index_put_impl_, index_out, masked_scatter_cpu_, nonzero_cpu, nonzero_out_cpu,
};
pub use backward::{
    avg_pool2d_backward_out_cpu, avg_pool2d_out_cpu, embedding_dense_backward_cpu,
    layer_norm_backward_cpu, max_pool2d_with_indices_backward_out_cpu, native_group_norm,
    native_group_norm_backward,
};
pub use batch_norm::{batch_norm_legit_cpu, batch_norm_legit_no_stats_cpu, native_batch_norm_cpu};
pub use binary::{
    add_out, atan2_out, div_out, div_out_mode, fmod_tensor_out, maximum_out, minimum_out, mul_out,
    pow_scalar_out, pow_tensor_scalar_out, pow_tensor_tensor_out, remainder_tensor_out, sub_out,
};
pub use cat::cat_out_cpu;
pub use col2im::{col2im_cpu, im2col_cpu, im2col_out_cpu};
pub use compare::{
    bitwise_and_tensor_out, bitwise_or_tensor_out, bitwise_xor_tensor_out, eq_scalar_out,
    eq_tensor_out, ge_scalar_out, ge_tensor_out, gt_scalar_out, gt_tensor_out, le_scalar_out,
    le_tensor_out, lt_scalar_out, lt_tensor_out, ne_scalar_out, ne_tensor_out,
};
pub use distance::{_cdist_forward, _pdist_forward};
pub use embedding_bag::_embedding_bag_cpu;
pub use factories::{empty_cpu, empty_strided_cpu};
pub use fft::{_fft_c2r_cpu, _fft_r2c_cpu};
pub use fill::{
    arange_out, eye_out, fill_, linspace_out, normal_, randperm_out_cpu, uniform_, zero_,
};
pub use flip::flip;
pub use grid_sampler::grid_sampler_2d_cpu;
pub use histogram::{histogram_histc, histogram_histc_out};
pub use indexing::{gather_out, index_select};
pub use linear_algebra::{addmm_out, baddbmm_out, bmm_out, dot, mm_out};
pub use local_scalar::_local_scalar_dense_cpu;
pub use nn::{
    layer_norm_cpu, mse_loss_out, native_dropout, nll_loss_forward_out_cpu, slow_conv2d_forward,
    slow_conv_dilated2d,
};
pub use padding::{
    reflection_pad1d_out_cpu, reflection_pad2d_cpu, reflection_pad2d_out_cpu,
    reflection_pad3d_out_cpu, replication_pad1d_out_cpu, replication_pad2d_out_cpu,
    replication_pad3d_out_cpu,
};
pub use pointwise_ops::*;
pub use pooling::{
    adaptive_avg_pool2d_backward_cpu, adaptive_avg_pool2d_cpu, adaptive_avg_pool3d_cpu,
    avg_pool3d_out_cpu, max_pool2d_with_indices_out_cpu, max_pool3d_with_indices_cpu,
    max_pool3d_with_indices_out_cpu,
};
pub use reduce::{
    _log_softmax_out, _softmax_out, all_out, amax_out, amin_out, any_all_out, any_dims_out,
    any_out, argmax_out, argmin_out, cumsum_out, linalg_vector_norm_out, max_dim_max, mean_out,
    min_dim_min, norm_dtype_out, norm_out, prod, prod_out, sum_intlist_out, var_correction,
};
pub use repeat_interleave::repeat_interleave_cpu;
pub use scatter::{scatter_add_out, scatter_reduce_two_out, scatter_src_out, scatter_value_out};
pub use sorting::{sort_stable_out, topk_out_cpu};
pub use ternary::{
    clamp_max_out, clamp_max_tensor_out, clamp_min_out, clamp_min_tensor_out, clamp_out,
    clamp_tensor_out, lerp_scalar_out,
};
pub use triangular::{tril_out, triu_out};
pub use unary::{
    acos_out, acosh_out, asin_out, asinh_out, atan_out, atanh_out, bitwise_not_out, ceil_out,
    cos_out, cosh_out, erf_out, exp_out, expm1_out, floor_out, gelu_out, hardsigmoid_out,
    log10_out, log1p_out, log2_out, log_out, neg_out, reciprocal_out, round_out, rsqrt_out,
    sigmoid_out, sign_out, silu_out, sin_out, sinh_out, sqrt_out, tan_out, tanh_out, trunc_out,
};
pub use upsample::{
    upsample_bicubic2d_out_cpu, upsample_bilinear2d_out_cpu, upsample_nearest2d_out_cpu,
};

/// Written over other operators: every backend registers the same code.
pub use aten_core::native::{
    activations::_prelu_kernel, attention::_scaled_dot_product_flash_attention_cpu,
    float_classes::hardtanh, float_classes::hardtanh_, float_classes::isnan,
    floor_divide::floor_divide, floor_divide::floor_divide_, floor_divide::floor_divide_out,
    reductions::std_correction, scalar_ops::masked_fill_tensor_, scalar_ops::rsub_tensor,
    shape_ops::roll, weight_norm::_weight_norm_interface,
};
/// Views are backend-neutral: the CPU registers the shared kernels.
pub use aten_core::native::{resize::resize_, views::as_strided_tensorimpl, views::view};
