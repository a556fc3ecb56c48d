//! What the autograd tests share (and, through aten-ops' set-up, the
//! `torch.ops` and graph tests): the dispatcher with aten-core's,
//! aten-autograd's and the CPU backend's registrations linked in (what the
//! `aten` facade's `dispatcher()` does for a program).

/// The process-wide dispatcher, with the registrations of [`LINKED`].
#[allow(dead_code)] // Each test binary uses what it needs.
pub fn dispatcher() -> &'static aten_dispatch::Dispatcher {
    aten_dispatch::Dispatcher::global()
}

/// The registering crates, referenced from a kept static: the linker then
/// keeps their static registration blocks in every test binary that
/// declares this module, whether or not it calls [`dispatcher()`].
#[used]
static LINKED: [fn(); 3] = [aten_core::link, aten_autograd::link, aten_native_cpu::link];
