//! What the `torch.ops` tests share (aten-fx's tests too): aten-autograd's
//! test set-up (the dispatcher with the autograd registrations and the CPU
//! backend's kernels linked in), and `torch.ops` over it (what the `aten`
//! facade's `ops_root()` does for a program).

#[path = "../../../aten-autograd/tests/support/mod.rs"]
mod linked;

#[allow(unused_imports)] // Each test binary uses what it needs.
pub use linked::dispatcher;

/// `torch.ops` over [`dispatcher()`].
#[allow(dead_code)] // Each test binary uses what it needs.
pub fn ops_root() -> &'static aten_ops::Ops {
    dispatcher();
    aten_ops::ops()
}
