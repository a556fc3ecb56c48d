//! Kernels that live in `aten-core`: Meta kernels (shapes without data),
//! composite kernels, and the backend-neutral helpers backends share.

pub mod backward;
pub mod conv_shape;
mod convolution;
mod copy;
mod dims;
mod factories;
mod functional_variants;
mod linear_algebra;
mod logsumexp;
pub mod meta_kernels;
mod nn;
pub mod nn_meta_kernels;
mod out_forms;
mod pooling;
mod scalar_ops;
mod shape_ops;
mod upsample;
mod view_copies;
mod views;

pub use backward::{convolution_backward, math_group_norm};
pub use convolution::{check_shape_forward, conv_memory_format, convolution, restride, ConvParams};
pub use copy::*;
pub use dims::{compute_stride, fmt_list, infer_size, make_dim_mask, wrap_dim};
pub use factories::*;
pub use functional_variants::*;
pub use linear_algebra::*;
pub use logsumexp::{logsumexp, logsumexp_out};
pub use meta_kernels::*;
pub use nn::*;
pub use nn_meta_kernels::*;
pub use out_forms::*;
pub use pooling::*;
pub use scalar_ops::*;
pub use shape_ops::*;
pub use upsample::*;
pub use view_copies::*;
pub use views::*;
