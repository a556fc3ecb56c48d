//! The backends' static registrations are linked in even when a program
//! never names the backend crates.

#[test]
fn framework_fallbacks_are_registered_without_naming_aten_core() {
    let d = aten::dispatch::Dispatcher::global();
    assert!(d.has_backend_fallback_for_dispatch_key(aten::DispatchKey::BackendSelect));
    assert!(d.has_backend_fallback_for_dispatch_key(aten::DispatchKey::AutogradCPU));
}
