//! Static registration: `torch_library!`, `torch_library_fragment!` and
//! `torch_library_impl!` blocks linked into the program run once, defs
//! before impls, when the global dispatcher is first used.

use aten_dispatch::{
    torch_library, torch_library_fragment, torch_library_impl, CppFunction, Dispatcher,
};
use c10_core::{DispatchKey, TensorBase};

// The impl block comes first in the file: order of appearance must not matter.
torch_library_impl!(statictest, CPU, |m| {
    m.impl_("twice", CppFunction::from_unboxed(|x: i64| Ok(2 * x)))?;
    Ok(())
});

torch_library!(statictest, |m| {
    m.def("twice(int x) -> int")?;
    Ok(())
});

torch_library_fragment!(statictest, |m| {
    m.def("more(Tensor x) -> Tensor")?;
    Ok(())
});

torch_library_impl!(_, Meta, |m| {
    m.fallback(CppFunction::fallthrough())?;
    Ok(())
});

#[test]
fn static_blocks_register_on_first_use() {
    let d = Dispatcher::global();
    assert!(d.static_registration_errors().is_empty());
    d.check_static_registrations().unwrap();
    let op = d.find_schema_or_throw("statictest::twice", "").unwrap();
    assert!(op.has_kernel_for_dispatch_key(DispatchKey::CPU));
    assert!(d.find_schema_or_throw("statictest::more", "").is_ok());
    assert!(d.has_backend_fallback_for_dispatch_key(DispatchKey::Meta));
    assert!(op
        .dump_state()
        .contains("CPU: registered at aten-dispatch/tests/static_registration.rs:"));
    // Running the registrations again would fail (a second TORCH_LIBRARY):
    // the global dispatcher ran them exactly once.
    assert!(Dispatcher::global().is_same(d));
    let _ = TensorBase::undefined();
}
