//! `aten-native-cpu`: the CPU kernels and their generated registrations
//! (PyTorch's `ATen/native/cpu`).
//!
//! - [`kernels`]: the kernels named by `dispatch: CPU:` entries;
//! - [`generated`]: their registrations (`cargo xtask codegen`);
//! - [`loops`]: elementwise loops over a `TensorIterator`;
//! - [`prefetch`]: page-ahead prefetching for long sequential reads;
//! - [`softmax_rows`]: the vectorized `float32` softmax rows.

pub mod gemm;
pub mod generated;
pub mod kernels;
pub mod loops;
pub mod prefetch;
pub mod softmax_rows;

/// Referenced by the facade so that this crate's static registrations are
/// linked into every program that uses it.
#[doc(hidden)]
pub fn link() {}
