//! A typed call allocates nothing and takes no lock: a counting global
//! allocator sees zero allocations across many calls (locks in std allocate
//! nothing either, but every lock on the call path would be a registry
//! access, which here would show up as the missing-kernel error path).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use aten_dispatch::{CppFunction, Dispatcher, Library, LibraryKind};
use c10_core::{Device, DispatchKey, DispatchKeySet, ScalarType, TensorBase, TensorImpl};

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; the counter is thread-local and
// touches no allocation.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn noop(a: &TensorBase, _b: &TensorBase) -> c10_core::Result<TensorBase> {
    Ok(a.clone())
}

#[test]
fn typed_calls_do_not_allocate() {
    let d = Dispatcher::new();
    let mut def =
        Library::with_dispatcher(&d, LibraryKind::Fragment, "bench", None, "f.rs", 1).unwrap();
    def.def("noop(Tensor a, Tensor b) -> Tensor").unwrap();
    let mut cpu = Library::with_dispatcher(
        &d,
        LibraryKind::Impl,
        "bench",
        Some(DispatchKey::CPU),
        "f.rs",
        2,
    )
    .unwrap();
    cpu.impl_("noop", CppFunction::from_unboxed(noop)).unwrap();
    let mut ft = Library::with_dispatcher(
        &d,
        LibraryKind::Impl,
        "_",
        Some(DispatchKey::ADInplaceOrView),
        "f.rs",
        3,
    )
    .unwrap();
    ft.fallback(CppFunction::fallthrough()).unwrap();
    let mut bs = Library::with_dispatcher(
        &d,
        LibraryKind::Impl,
        "_",
        Some(DispatchKey::BackendSelect),
        "f.rs",
        4,
    )
    .unwrap();
    bs.fallback(CppFunction::fallthrough()).unwrap();
    let mut ag = Library::with_dispatcher(
        &d,
        LibraryKind::Impl,
        "bench",
        Some(DispatchKey::AutogradCPU),
        "f.rs",
        5,
    )
    .unwrap();
    ag.impl_("noop", CppFunction::fallthrough()).unwrap();

    let typed = d
        .find_schema_or_throw("bench::noop", "")
        .unwrap()
        .typed::<(&TensorBase, &TensorBase), TensorBase>()
        .unwrap();
    let keys = DispatchKeySet::from_keys(&[DispatchKey::CPU, DispatchKey::AutogradCPU]);
    let a = TensorBase::from_impl(
        TensorImpl::new(keys, ScalarType::Float, Device::CPU, vec![1]).unwrap(),
    );
    let b = a.clone();
    // Warm up (thread-locals, lazy statics).
    for _ in 0..10 {
        typed.call((&a, &b)).unwrap();
    }
    let before = ALLOCATIONS.with(Cell::get);
    for _ in 0..10_000 {
        let r = typed.call((&a, &b)).unwrap();
        assert!(r.is_same(&a));
    }
    let after = ALLOCATIONS.with(Cell::get);
    assert_eq!(after - before, 0, "typed calls allocated");
}
