//! Code generated from the project's `derivatives.yaml` and
//! `native_functions.yaml` by `cargo xtask codegen` (never edited by hand):
//! the backward nodes, the Autograd kernels and the ADInplaceOrView kernels.

pub mod functions;
pub mod inplace_or_view;
pub mod variable_type;
