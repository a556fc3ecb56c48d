//! `aten-core`: `Tensor` and the generated typed operator API, schema
//! registrations for every operator of the project's `native_functions.yaml`,
//! `TensorIterator` (backend-neutral shapes, broadcasting, type promotion and
//! output allocation), structured meta functions, composite and BackendSelect
//! kernels.
//!
//! Filled by issues #5 (generated API) and #6 (tensors, TensorIterator).
