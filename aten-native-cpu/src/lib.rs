//! `aten-native-cpu`: the CPU kernels and their generated registrations
//! (PyTorch's `ATen/native/cpu`).
//!
//! Filled by issues #6 (pointwise and reductions) and #7 (views, factories,
//! matrix products, convolution, nn).
