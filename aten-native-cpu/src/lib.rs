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

/// A seeded xorshift generator for the kernels' randomized tests: `next(bound)`
/// is uniform enough in `0..bound` for picking sizes and layouts.
#[cfg(test)]
pub(crate) fn test_rng(mut seed: u64) -> impl FnMut(usize) -> usize {
    move |bound: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % bound as u64) as usize
    }
}
