//! `aten-core`: `Tensor` and the generated typed operator API, schema
//! registrations for every operator of the project's `native_functions.yaml`,
//! `TensorIterator` (backend-neutral shapes, broadcasting, type promotion and
//! output allocation), structured meta functions, composite and BackendSelect
//! kernels.
//!
//! - [`tensor`]: the [`Tensor`] handle over `TensorBase`;
//! - [`generated`]: the typed API ([`ops`]), `Tensor`'s methods and the
//!   registrations written by `cargo xtask codegen`;
//! - [`typed_handle`]: the statically typed operator handles the generated
//!   functions call through;
//! - [`tensor_iterator`]: shapes, broadcasting, type promotion and output
//!   allocation for pointwise and reduction kernels;
//! - [`structured`]: structured kernels at run time (what a member's
//!   `set_output` does); [`meta`]: the structured families' meta
//!   functions;
//! - [`native`]: views, factories, composite and BackendSelect kernels;
//! - [`dispatch_stub`]: per-device kernels of backend-neutral operations
//!   (the copy loop);
//! - [`framework_fallbacks`]: the framework's backend fallbacks;
//! - [`testing`]: device-generic kernel tests.

pub mod dispatch_stub;
pub mod framework_fallbacks;
pub mod generated;
pub mod memory_overlap;
pub mod meta;
pub mod native;
pub mod parallel;
pub mod structured;
pub mod tensor;
pub mod tensor_iterator;
pub mod testing;
pub mod typed_handle;

pub use generated::ops;
pub use tensor::Tensor;

/// Makes sure this crate's static registrations are linked in.
#[doc(hidden)]
pub fn link() {
    framework_fallbacks::link();
}
