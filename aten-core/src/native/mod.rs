//! Kernels that live in `aten-core` besides the Meta kernels (in
//! [`crate::meta`]): composite kernels, and the backend-neutral helpers
//! backends share, one module per family. Code names a kernel by its
//! module (`native::factories::zeros`); the generated registrations do too
//! (the codegen finds each kernel's module in these files).

pub mod activations;
pub mod advanced_index;
pub mod aliases;
pub mod attention;
pub mod backward;
pub mod batch_norm;
pub mod conv_nd;
pub mod conv_shape;
pub mod conversions;
pub mod convolution;
pub mod copy;
pub mod diff;
pub mod dims;
pub mod dropout;
pub mod dunders;
pub mod einsum;
pub mod embedding_bag;
pub mod factories;
pub mod fft;
pub mod float_classes;
pub mod floor_divide;
pub mod functional_variants;
pub mod grouped_mm;
pub mod index_encodings;
pub mod index_put;
pub mod linear_algebra;
pub mod logsumexp;
pub mod masked_scatter;
pub mod nn;
pub mod normalization;
pub mod out_forms;
pub mod pad;
pub mod pointwise_program;
pub mod pooling;
pub mod reductions;
pub mod resize;
pub mod runtime_asserts;
pub mod scalar_ops;
pub mod selections;
pub mod shape_ops;
pub mod sorting;
pub mod splits;
pub mod tensor_queries;
pub mod upsample;
pub mod view_aliases;
pub mod view_copies;
pub mod views;
pub mod weight_norm;
