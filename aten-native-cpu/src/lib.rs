//! `aten-native-cpu`: the CPU kernels and their generated registrations
//! (PyTorch's `ATen/native/cpu`).
//!
//! - [`kernels`]: the kernels named by `dispatch: CPU:` entries;
//! - [`generated`]: their registrations (`cargo xtask codegen`).

pub mod generated;
pub mod kernels;
pub mod loops;

/// Referenced by the facade so that this crate's static registrations are
/// linked into every program that uses it.
#[doc(hidden)]
pub fn link() {}
