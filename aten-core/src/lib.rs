//! `aten-core`: `Tensor` and the generated typed operator API, schema
//! registrations for every operator of the project's `native_functions.yaml`,
//! `TensorIterator` (backend-neutral shapes, broadcasting, type promotion and
//! output allocation), structured meta functions, composite and BackendSelect
//! kernels.
//!
//! So far it holds the framework's backend fallbacks
//! ([`framework_fallbacks`]); the tensor API arrives with issues #5 (generated
//! API) and #6 (tensors, TensorIterator).

pub mod framework_fallbacks;

/// Makes sure this crate's static registrations are linked in.
#[doc(hidden)]
pub fn link() {
    framework_fallbacks::link();
}
