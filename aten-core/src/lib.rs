//! `aten-core`: `Tensor` and the generated typed operator API, schema
//! registrations for every operator of the project's `native_functions.yaml`,
//! `TensorIterator` (backend-neutral shapes, broadcasting, type promotion and
//! output allocation), structured meta functions, composite and BackendSelect
//! kernels.
//!
//! So far it holds the [`Tensor`] handle and the framework's backend
//! fallbacks ([`framework_fallbacks`]); the generated API and the kernels
//! arrive with issues #5 and #6.

pub mod framework_fallbacks;
pub mod generated;
pub mod memory_overlap;
pub mod native;
pub mod tensor;
pub mod tensor_iterator;
pub mod typed_handle;

pub use generated::ops;
pub use tensor::Tensor;

/// Makes sure this crate's static registrations are linked in.
#[doc(hidden)]
pub fn link() {
    framework_fallbacks::link();
}
