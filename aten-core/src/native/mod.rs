//! Kernels that live in `aten-core`: Meta kernels (shapes without data),
//! composite kernels, and the backend-neutral helpers backends share.

mod activations;
pub mod advanced_index;
mod attention;
pub mod backward;
mod backward_meta;
mod batch_norm;
mod conv_nd;
pub mod conv_shape;
mod conversions;
mod convolution;
mod copy;
mod diff;
mod dims;
mod dropout;
mod dunders;
mod einsum;
pub mod embedding_bag;
mod factories;
mod fft;
mod float_classes;
mod functional_variants;
mod index_encodings;
mod index_put;
mod linear_algebra;
mod logsumexp;
mod masked_scatter;
pub mod meta_kernels;
mod nn;
pub mod nn_meta_kernels;
mod normalization;
mod out_forms;
mod pad;
mod pooling;
mod reductions;
mod resize;
mod runtime_asserts;
mod scalar_ops;
mod selections;
mod shape_ops;
mod sorting;
mod splits;
mod tensor_queries;
mod upsample;
mod view_aliases;
mod view_copies;
mod views;

pub use activations::*;
pub use attention::*;
pub use backward::{convolution_backward, math_group_norm};
pub use backward_meta::*;
pub use batch_norm::*;
pub use conv_nd::*;
pub use conversions::*;
pub use convolution::{check_shape_forward, conv_memory_format, convolution, restride, ConvParams};
pub use copy::*;
pub use diff::*;
pub use dims::{
    compute_stride, fmt_list, infer_dense_strides, infer_size, make_dim_mask, make_dim_mask_with,
    wrap_dim,
};
pub use dropout::*;
pub use dunders::*;
pub use einsum::*;
pub use embedding_bag::_embedding_bag_meta;
pub use factories::*;
pub use fft::{
    _fft_c2r_meta, _fft_r2c_meta, fft_c2r_geometry, fft_r2c_geometry, FftGeometry, FftNorm,
};
pub use float_classes::*;
pub use functional_variants::*;
pub use index_encodings::*;
pub use index_put::*;
pub use linear_algebra::*;
pub use logsumexp::{logsumexp, logsumexp_out};
pub use masked_scatter::*;
pub use meta_kernels::*;
pub use nn::*;
pub use nn_meta_kernels::*;
pub use normalization::*;
pub use out_forms::*;
pub use pad::*;
pub use pooling::*;
pub use reductions::*;
pub use resize::resize_;
pub use runtime_asserts::*;
pub use scalar_ops::*;
pub use selections::*;
pub use shape_ops::*;
pub use sorting::*;
pub use splits::*;
pub use tensor_queries::*;
pub use upsample::*;
pub use view_aliases::*;
pub use view_copies::*;
pub use views::*;
