//! `aten-native-cuda`: CUDA kernels through `cudarc`, behind the `cuda`
//! feature. Builds on machines without CUDA and reports "not available" at run
//! time (PyTorch's `ATen/native/cuda`).
//!
//! Filled by the CUDA issue, after the CPU backend.
