//! Kernels that live in `aten-core`: Meta kernels (shapes without data),
//! composite kernels, and the backend-neutral helpers backends share.

mod factories;
mod views;

pub use factories::{DEFAULT_DTYPE, empty_generic, empty_meta, empty_strided_generic, empty_strided_meta, zeros};
pub use views::as_strided_tensorimpl;
