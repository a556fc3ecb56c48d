//! `aten-native-cuda`: the home of the CUDA kernels (PyTorch's
//! `ATen/native/cuda`), linked in by the `aten` facade's `cuda` feature.
//!
//! It holds no kernels and registers nothing yet, so an operator called on
//! CUDA tensors reaches only what is registered for every backend
//! (composite kernels, fallbacks) and otherwise fails with the dispatcher's
//! "Could not run ... 'CUDA' backend" error.
//!
//! - [`caching_allocator`]: PyTorch's CUDA caching allocator as
//!   device-independent logic over a small device trait, tested against a
//!   fake device.

pub mod caching_allocator;
