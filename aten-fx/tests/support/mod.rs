//! What the graph tests share: aten-ops' test set-up (the dispatcher with
//! the autograd and CPU registrations linked in, and `torch.ops` over it).

#[path = "../../../aten-ops/tests/support/mod.rs"]
mod ops_support;

#[allow(unused_imports)] // Each test binary uses what it needs.
pub use ops_support::*;
