//! Code generated from the project's `native_functions.yaml` by
//! `cargo xtask codegen` (never edited by hand; `cargo xtask codegen --check`
//! fails when it is stale).

pub mod ops;
pub mod registrations;
pub mod tensor_methods;
