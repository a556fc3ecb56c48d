//! The thread-local include/exclude guards: nesting, restoration on every
//! exit path (including panics), and isolation between threads.

use c10_core::local_dispatch_key_set::{tls_excluded, tls_included, tls_local_dispatch_key_set};
use c10_core::{
    AutoDispatchBelowADInplaceOrView, AutoDispatchBelowAutograd, DispatchKey, DispatchKeySet,
    ExcludeDispatchKeyGuard, IncludeDispatchKeyGuard,
};

#[test]
fn guards_nest_and_restore() {
    let start = tls_local_dispatch_key_set();
    {
        let _a = IncludeDispatchKeyGuard::new(DispatchKey::Python);
        assert!(tls_included().has(DispatchKey::Python));
        {
            // Already included: the inner guard must not remove it on drop.
            let _b = IncludeDispatchKeyGuard::new(DispatchKeySet::from_keys(&[
                DispatchKey::Python,
                DispatchKey::Tracer,
            ]));
            assert!(tls_included().has(DispatchKey::Tracer));
        }
        assert!(tls_included().has(DispatchKey::Python));
        assert!(!tls_included().has(DispatchKey::Tracer));
        let _c = AutoDispatchBelowAutograd::new();
        // The excluded set holds autograd functionalities without backend
        // bits; subtracting it from a tensor's keys drops AutogradCPU.
        assert!(tls_excluded().has(DispatchKey::AutogradFunctionality));
        let tensor_keys = DispatchKeySet::from_keys(&[DispatchKey::CPU, DispatchKey::AutogradCPU]);
        assert_eq!(
            (tensor_keys - tls_excluded()).highest_priority_type_id(),
            DispatchKey::CPU
        );
        assert!(tls_excluded().has(DispatchKey::AutogradOther));
        assert!(!tls_excluded().has(DispatchKey::ADInplaceOrView));
        let _d = AutoDispatchBelowADInplaceOrView::new();
        assert!(tls_excluded().has(DispatchKey::ADInplaceOrView));
    }
    assert_eq!(tls_local_dispatch_key_set(), start);
}

#[test]
fn guards_restore_with_backend_bits_and_out_of_order_drops() {
    let start = tls_local_dispatch_key_set();
    let a = ExcludeDispatchKeyGuard::new(DispatchKey::CPU);
    let b = ExcludeDispatchKeyGuard::new(DispatchKey::AutogradCUDA);
    drop(a);
    assert!(tls_excluded().has(DispatchKey::AutogradCUDA));
    drop(b);
    assert_eq!(tls_local_dispatch_key_set(), start);
}

fn fails_inside_guard() -> Result<(), String> {
    let _g = ExcludeDispatchKeyGuard::new(DispatchKey::Functionalize);
    Err("early return".into())
}

#[test]
fn guards_restore_on_early_return_and_panic() {
    let start = tls_local_dispatch_key_set();
    assert!(fails_inside_guard().is_err());
    assert_eq!(tls_local_dispatch_key_set(), start);

    let r = std::panic::catch_unwind(|| {
        let _g = IncludeDispatchKeyGuard::new(DispatchKey::FuncTorchBatched);
        let _h = AutoDispatchBelowAutograd::new();
        panic!("inside guards");
    });
    assert!(r.is_err());
    assert_eq!(tls_local_dispatch_key_set(), start);
}

#[test]
fn guards_do_not_leak_into_other_threads() {
    let start = tls_local_dispatch_key_set();
    let _g = ExcludeDispatchKeyGuard::new(DispatchKey::AutogradFunctionality);
    let _h = IncludeDispatchKeyGuard::new(DispatchKey::Python);
    let other = std::thread::spawn(tls_local_dispatch_key_set)
        .join()
        .unwrap();
    assert_eq!(other, start);
    // And another thread's guards do not reach this one.
    let mine = tls_local_dispatch_key_set();
    std::thread::spawn(|| {
        let _g = IncludeDispatchKeyGuard::new(DispatchKey::Tracer);
    })
    .join()
    .unwrap();
    assert_eq!(tls_local_dispatch_key_set(), mine);
}
