//! Set-up shared by the benchmarks: for the dispatch-level ones
//! (`dispatch`, `ops`, `modes`) the two-tensor no-op kernel, data-less
//! tensors with given keys, registration blocks on a fresh dispatcher, and
//! a dispatcher holding `bench::noop` with the fallthroughs every call
//! passes; for the kernel, model and autograd ones, `rayon` pools of a
//! given size ([`pool_of`]).

// Each benchmark target compiles this module and uses part of it.
#![allow(dead_code)]

use aten::c10::{Device, ScalarType, TensorBase, TensorImpl};
use aten::dispatch::{CppFunction, Dispatcher, Library, LibraryKind};
use aten::{DispatchKey, DispatchKeySet, Result};

/// The kernel of `bench::noop(Tensor a, Tensor b) -> Tensor`.
pub fn noop(a: &TensorBase, _b: &TensorBase) -> Result<TensorBase> {
    Ok(a.clone())
}

/// A one-element float tensor with exactly `keys`.
pub fn tensor(keys: &[DispatchKey]) -> TensorBase {
    TensorBase::from_impl(
        TensorImpl::new(
            DispatchKeySet::from_keys(keys),
            ScalarType::Float,
            Device::CPU,
            vec![1],
        )
        .expect("valid sizes"),
    )
}

/// A FRAGMENT block for `ns` (no key) or an IMPL block for `key`.
pub fn block(d: &Dispatcher, ns: &str, key: Option<DispatchKey>) -> Library {
    let kind = if key.is_some() {
        LibraryKind::Impl
    } else {
        LibraryKind::Fragment
    };
    Library::with_dispatcher(d, kind, ns, key, "bench.rs", 1).unwrap()
}

/// Fallthrough backend fallbacks for the keys every thread includes
/// (BackendSelect, ADInplaceOrView).
pub fn default_fallthroughs(d: &Dispatcher) -> Vec<Library> {
    [DispatchKey::BackendSelect, DispatchKey::ADInplaceOrView]
        .into_iter()
        .map(|key| {
            let mut f = block(d, "_", Some(key));
            f.fallback(CppFunction::fallthrough()).unwrap();
            f
        })
        .collect()
}

/// `bench::noop` with its CPU kernel on `d`, and the default fallthroughs;
/// the registrations live as long as the returned blocks.
pub fn define_noop(d: &Dispatcher) -> Vec<Library> {
    let mut def = block(d, "bench", None);
    def.def("noop(Tensor a, Tensor b) -> Tensor").unwrap();
    let mut cpu = block(d, "bench", Some(DispatchKey::CPU));
    cpu.impl_("noop", CppFunction::from_unboxed(noop)).unwrap();
    let mut libs = vec![def, cpu];
    libs.extend(default_fallthroughs(d));
    libs
}

/// A `rayon` pool of `threads` threads (the `/t1` and `/t2` variants).
pub fn pool_of(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool")
}
