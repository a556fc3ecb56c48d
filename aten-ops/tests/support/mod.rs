//! What the `torch.ops` tests share (aten-fx's tests too): the dispatcher
//! with the autograd registrations and the CPU backend's kernels linked in,
//! and `torch.ops` over it (what the `aten` facade's `dispatcher()` and
//! `ops_root()` do for a program).

/// The process-wide dispatcher, with aten-core's, aten-autograd's and
/// the CPU backend's static registrations linked into the test binary.
#[allow(dead_code)] // Each test binary uses what it needs.
pub fn dispatcher() -> &'static aten_dispatch::Dispatcher {
    aten_dispatch::Dispatcher::global()
}

/// The registering crates, referenced from a kept static: the linker then
/// keeps their static registration blocks in every test binary that
/// declares this module, whether or not it calls [`dispatcher()`].
#[used]
static LINKED: [fn(); 3] = [aten_core::link, aten_autograd::link, aten_native_cpu::link];

/// `torch.ops` over [`dispatcher()`].
#[allow(dead_code)] // Each test binary uses what it needs.
pub fn ops_root() -> &'static aten_ops::Ops {
    dispatcher();
    aten_ops::ops()
}
