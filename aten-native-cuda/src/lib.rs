//! `aten-native-cuda`: the home of the CUDA kernels (PyTorch's
//! `ATen/native/cuda`), linked in by the `aten` facade's `cuda` feature.
//!
//! It registers no kernels yet, so an operator called on CUDA tensors
//! reaches only what is registered for every backend (composite kernels,
//! fallbacks) and otherwise fails with the dispatcher's "Could not run ...
//! 'CUDA' backend" error. What exists is the kernel source side:
//!
//! - [`kernels`]: the CUDA C++ kernel templates (`kernels/cu/`) and the
//!   Rust that renders one source per instantiation (pointwise, reductions,
//!   scans, row kernels), with [`kernels::all_instantiations`], and the
//!   `#[repr(C)]` mirrors of the structs kernels take;
//! - [`nvrtc`]: compiling a source to PTX with NVRTC (probing for the
//!   library first, so a machine without CUDA gets an error, not a panic);
//! - [`kernel_cache`]: the in-process and on-disk cache of compiled PTX.

pub mod kernel_cache;
pub mod kernels;
pub mod nvrtc;
