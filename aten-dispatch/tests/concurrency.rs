//! Calls race registrations: threads call an operator in a loop while
//! another thread registers and drops kernels and fallbacks for several
//! seconds. During a stable window every call returns exactly the result of
//! the kernels registered then; across a change it returns the result of a
//! kernel of the old or the new state (or, while a fallback is being
//! swapped, the clean missing-kernel error). Nothing deadlocks, and the final
//! tables equal a full recomputation.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use aten_dispatch::{CppFunction, Dispatcher, Library, LibraryKind};
use c10_core::{
    Device, DispatchKey, DispatchKeySet, ExcludeDispatchKeyGuard, ScalarType, TensorBase,
    TensorImpl,
};

/// A registration is changing.
const CHANGING: i64 = -1;

fn block(d: &Dispatcher, ns: &str, key: DispatchKey) -> Library {
    Library::with_dispatcher(d, LibraryKind::Impl, ns, Some(key), "race.rs", 1).unwrap()
}

#[test]
fn calls_race_registrations() {
    let d = Dispatcher::new();
    let mut def =
        Library::with_dispatcher(&d, LibraryKind::Fragment, "race", None, "race.rs", 1).unwrap();
    def.def("op(Tensor x) -> int").unwrap();
    // Always present: CompositeExplicitAutograd returns 0.
    let mut base = block(&d, "race", DispatchKey::CompositeExplicitAutograd);
    base.impl_("op", CppFunction::from_unboxed(|_: &TensorBase| Ok(0i64)))
        .unwrap();

    let op = d.find_schema_or_throw("race::op", "").unwrap();
    let typed = op.typed::<(&TensorBase,), i64>().unwrap();
    let keys = DispatchKeySet::from_keys(&[DispatchKey::CPU, DispatchKey::AutogradCPU]);
    let t = TensorBase::from_impl(
        TensorImpl::new(keys, ScalarType::Float, Device::CPU, vec![1]).unwrap(),
    );

    // `cpu`: generation of the CPU kernel (1000 + g), 0 for none.
    // `autograd`: generation of the AutogradCPU fallback (2000 + g); 0 or
    // -1 - g for the fallthrough fallback. CHANGING while a registration
    // changes.
    let cpu = Arc::new(AtomicI64::new(0));
    let autograd = Arc::new(AtomicI64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let (strict, loose) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));

    let mut fallthrough = Some(block(&d, "_", DispatchKey::AutogradCPU));
    if let Some(f) = fallthrough.as_mut() {
        f.fallback(CppFunction::fallthrough()).unwrap();
    }

    let mut callers = Vec::new();
    for _ in 0..2 {
        let (typed, t, stop) = (typed.clone(), t.clone(), Arc::clone(&stop));
        let (cpu, autograd) = (Arc::clone(&cpu), Arc::clone(&autograd));
        let (strict, loose) = (Arc::clone(&strict), Arc::clone(&loose));
        callers.push(std::thread::spawn(move || {
            let _g = ExcludeDispatchKeyGuard::new(DispatchKeySet::from_keys(&[
                DispatchKey::BackendSelect,
                DispatchKey::ADInplaceOrView,
            ]));
            let expected = |cpu: i64, autograd: i64| {
                if autograd > 0 {
                    2000 + autograd
                } else if cpu > 0 {
                    1000 + cpu
                } else {
                    0
                }
            };
            while !stop.load(Ordering::Relaxed) {
                let before = (cpu.load(Ordering::SeqCst), autograd.load(Ordering::SeqCst));
                let r = typed.call((&t,));
                let after = (cpu.load(Ordering::SeqCst), autograd.load(Ordering::SeqCst));
                let stable = before == after && before.0 != CHANGING && before.1 != CHANGING;
                if stable {
                    assert_eq!(r.unwrap(), expected(before.0, before.1), "state {before:?}");
                    strict.fetch_add(1, Ordering::Relaxed);
                } else {
                    match r {
                        Ok(v) => assert!(
                            v == 0 || (1001..=1999).contains(&v) || (2001..=2999).contains(&v),
                            "garbage result {v}"
                        ),
                        Err(e) => assert!(
                            e.message().starts_with(
                                "Could not run 'race::op' with arguments from the 'AutogradCPU' backend."
                            ),
                            "{e}"
                        ),
                    }
                    loose.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }

    let deadline = Instant::now() + Duration::from_secs(3);
    let mut generation = 0i64;
    while Instant::now() < deadline {
        generation = generation % 999 + 1;
        let g = generation;
        cpu.store(CHANGING, Ordering::SeqCst);
        let mut cpu_kernel = block(&d, "race", DispatchKey::CPU);
        cpu_kernel
            .impl_(
                "op",
                CppFunction::from_unboxed(move |_: &TensorBase| Ok(1000 + g)),
            )
            .unwrap();
        cpu.store(g, Ordering::SeqCst);
        std::thread::yield_now();

        autograd.store(CHANGING, Ordering::SeqCst);
        drop(fallthrough.take());
        let mut fallback = block(&d, "_", DispatchKey::AutogradCPU);
        fallback
            .fallback(CppFunction::from_boxed(move |_, _, stack| {
                stack.pop();
                stack.push(aten_boxing::IValue::Int(2000 + g));
                Ok(())
            }))
            .unwrap();
        autograd.store(g, Ordering::SeqCst);
        std::thread::yield_now();

        autograd.store(CHANGING, Ordering::SeqCst);
        drop(fallback);
        let mut f = block(&d, "_", DispatchKey::AutogradCPU);
        f.fallback(CppFunction::fallthrough()).unwrap();
        fallthrough = Some(f);
        // A value of this generation: were the fallthrough phase always 0, a
        // caller could read 0 before a swap and 0 again after the next one
        // and take a call made in between for a stable one.
        autograd.store(-1 - g, Ordering::SeqCst);
        std::thread::yield_now();

        cpu.store(CHANGING, Ordering::SeqCst);
        drop(cpu_kernel);
        cpu.store(0, Ordering::SeqCst);
    }
    stop.store(true, Ordering::Relaxed);
    for c in callers {
        c.join().unwrap();
    }
    assert!(strict.load(Ordering::Relaxed) > 100, "too few stable calls");
    d.check_all_invariants().unwrap();
    let _g = ExcludeDispatchKeyGuard::new(DispatchKeySet::from_keys(&[
        DispatchKey::BackendSelect,
        DispatchKey::ADInplaceOrView,
    ]));
    assert_eq!(typed.call((&t,)).unwrap(), 0);
    drop(fallthrough);
}
