//! `aten-native-cuda`: the CUDA backend (PyTorch's `ATen/native/cuda` and
//! `c10/cuda`), linked in by the `aten` facade's `cuda` feature, built on
//! `cudarc` with dynamic loading: it builds, and the workspace runs, on
//! machines without CUDA.
//!
//! It registers no operator kernels yet, so an operator called on CUDA
//! tensors reaches only what is registered for every backend (composite
//! kernels, fallbacks) and otherwise fails with the dispatcher's "Could not
//! run ... 'CUDA' backend" error.
//!
//! - [`availability`]: [`is_available`] and [`device_count`], probed
//!   without calling into a driver that is not there, and PyTorch's errors
//!   for tensors on CUDA when it is not usable;
//! - [`caching_allocator`]: PyTorch's CUDA caching allocator as
//!   device-independent logic over a small device trait, tested against a
//!   fake device;
//! - [`driver_memory`]: that trait over the CUDA driver (`cudarc`);
//! - [`allocator`]: the registration through which `cuda:N` storages are
//!   made (`c10_core::device_allocator`), one caching allocator per device;
//! - [`kernels`]: the CUDA C++ kernel templates (`kernels/cu/`) and the
//!   Rust that renders one source per instantiation (pointwise, reductions,
//!   scans, row kernels), with [`kernels::all_instantiations`], and the
//!   `#[repr(C)]` mirrors of the structs kernels take;
//! - [`nvrtc`]: compiling a source to PTX with NVRTC (probing for the
//!   library first, so a machine without CUDA gets an error, not a panic);
//! - [`kernel_cache`]: the in-process and on-disk cache of compiled PTX.

pub mod allocator;
pub mod availability;
pub mod caching_allocator;
pub mod driver_memory;
pub mod kernel_cache;
pub mod kernels;
pub mod nvrtc;

pub use availability::{device_count, is_available};

/// Referenced by the facade so that this crate's link-time registrations
/// (its allocator) are linked into every program that uses it.
#[doc(hidden)]
pub fn link() {}
