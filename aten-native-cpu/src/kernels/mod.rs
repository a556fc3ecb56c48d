//! The CPU kernels named by the project's `native_functions.yaml`.

mod factories;

pub use factories::{empty_cpu, empty_strided_cpu};

/// Views are backend-neutral: the CPU registers the shared kernels.
pub use aten_core::native::as_strided_tensorimpl;
