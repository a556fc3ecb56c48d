//! Kernels that live in `aten-core`: Meta kernels (shapes without data),
//! composite kernels, and the backend-neutral helpers backends share.

mod factories;
mod views;

pub use factories::{
    empty_generic, empty_meta, empty_strided_generic, empty_strided_meta, zeros, DEFAULT_DTYPE,
};
pub use views::as_strided_tensorimpl;
