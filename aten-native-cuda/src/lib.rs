//! `aten-native-cuda`: the CUDA backend (PyTorch's `ATen/native/cuda` and
//! `c10/cuda`), linked in by the `aten` facade's `cuda` feature, built on
//! `cudarc` with dynamic loading: it builds, and the workspace runs, on
//! machines without CUDA.
//!
//! - [`availability`]: [`is_available`] and [`device_count`], probed
//!   without calling into a driver that is not there, and PyTorch's errors
//!   for tensors on CUDA when it is not usable;
//! - [`allocator`]: the registration through which `cuda:N` storages are
//!   made (`c10_core::device_allocator`).

pub mod allocator;
pub mod availability;

pub use availability::{device_count, is_available};

/// Referenced by the facade so that this crate's link-time registrations
/// (its allocator) are linked into every program that uses it.
#[doc(hidden)]
pub fn link() {}
