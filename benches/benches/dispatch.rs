//! `dispatch/*`: dispatcher overhead, mirroring libtorch's `bench_dispatch`:
//! a two-tensor operator whose CPU kernel returns its first argument.
//!
//! - `dispatch/typed_noop`: typed call, tensors without autograd keys (like
//!   libtorch's `dispatch.typed.inference_mode`);
//! - `dispatch/fallthrough_noop`: typed call, tensors with AutogradCPU and an
//!   AutogradCPU fallthrough kernel in the way (`typed.autogradcpu_fallthrough`);
//! - `dispatch/boxed_noop`: `call_boxed` with a reused stack;
//! - `dispatch/redispatch_noop`: `redispatch` with `DispatchKeySet(CPU)`;
//! - `dispatch/direct_fnptr_call`: the floor, an opaque function-pointer call;
//! - `dispatch/refcount_pair`: one clone and drop of a tensor handle (two
//!   atomic read-modify-writes, what each argument or result handle costs);
//! - `dispatch/register_ops`: define 3,500 operators with 5 kernels each in a
//!   fresh dispatcher, then drop them.

// criterion_group! generates undocumented items.
#![allow(missing_docs)]

mod support;

use aten::boxing::{IValue, Stack};
use aten::c10::TensorBase;
use aten::dispatch::{CppFunction, Dispatcher, Library};
use aten::{DispatchKey, DispatchKeySet, Result};
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use support::{block, define_noop, noop, tensor};

fn calls(c: &mut Criterion) {
    let d = Dispatcher::new();
    let _noop = define_noop(&d);
    let mut def = block(&d, "bench", None);
    def.def("noop_ft(Tensor a, Tensor b) -> Tensor").unwrap();
    let mut cpu = block(&d, "bench", Some(DispatchKey::CPU));
    cpu.impl_("noop_ft", CppFunction::from_unboxed(noop))
        .unwrap();
    let mut ag = block(&d, "bench", Some(DispatchKey::AutogradCPU));
    ag.impl_("noop_ft", CppFunction::fallthrough()).unwrap();

    let op = d.find_schema_or_throw("bench::noop", "").unwrap();
    let typed = op
        .typed::<(&TensorBase, &TensorBase), TensorBase>()
        .unwrap();
    let typed_ft = d
        .find_schema_or_throw("bench::noop_ft", "")
        .unwrap()
        .typed::<(&TensorBase, &TensorBase), TensorBase>()
        .unwrap();
    let plain = tensor(&[DispatchKey::CPU]);
    let grad = tensor(&[
        DispatchKey::CPU,
        DispatchKey::AutogradCPU,
        DispatchKey::ADInplaceOrView,
    ]);

    c.bench_function("dispatch/typed_noop", |b| {
        b.iter(|| typed.call((black_box(&plain), black_box(&plain))).unwrap())
    });
    c.bench_function("dispatch/fallthrough_noop", |b| {
        b.iter(|| typed_ft.call((black_box(&grad), black_box(&grad))).unwrap())
    });
    let cpu_keys = DispatchKeySet::from_key(DispatchKey::CPU);
    c.bench_function("dispatch/redispatch_noop", |b| {
        b.iter(|| {
            typed
                .redispatch(black_box(cpu_keys), (black_box(&plain), black_box(&plain)))
                .unwrap()
        })
    });
    let mut stack: Stack = Vec::with_capacity(2);
    c.bench_function("dispatch/boxed_noop", |b| {
        b.iter(|| {
            stack.push(IValue::Tensor(plain.clone()));
            stack.push(IValue::Tensor(plain.clone()));
            op.call_boxed(&mut stack).unwrap();
            stack.pop()
        })
    });
    let f: fn(&TensorBase, &TensorBase) -> Result<TensorBase> = noop;
    c.bench_function("dispatch/direct_fnptr_call", |b| {
        b.iter(|| black_box(f)(black_box(&plain), black_box(&plain)).unwrap())
    });
}

fn registration(c: &mut Criterion) {
    let mut group = c.benchmark_group("dispatch");
    group.sample_size(10);
    // Registration only: the dispatcher and its libraries are dropped outside
    // the timed region (`dispatch/deregister_ops` times the teardown).
    group.bench_function("register_ops", |b| {
        b.iter_with_large_drop(|| {
            let d = Dispatcher::new();
            let mut def = block(&d, "reg", None);
            let mut impls: Vec<Library> = [
                DispatchKey::CPU,
                DispatchKey::CUDA,
                DispatchKey::Meta,
                DispatchKey::AutogradCPU,
                DispatchKey::CompositeExplicitAutograd,
            ]
            .into_iter()
            .map(|k| block(&d, "reg", Some(k)))
            .collect();
            for i in 0..3500 {
                let name = format!("op{i}");
                def.def(&format!("{name}(Tensor a, Tensor b) -> Tensor"))
                    .unwrap();
                for m in &mut impls {
                    m.impl_(&name, CppFunction::from_unboxed(noop)).unwrap();
                }
            }
            (def, impls)
        })
    });
    group.finish();
}

criterion_group!(benches, calls, registration);
criterion_main!(benches, prims);

fn primitives(c: &mut Criterion) {
    let swap = arc_swap::ArcSwap::from_pointee(5u64);
    c.bench_function("dispatch/arcswap_load", |b| {
        b.iter(|| **black_box(&swap).load())
    });
    let tls = aten::c10::local_dispatch_key_set::tls_local_dispatch_key_set;
    c.bench_function("dispatch/tls_read", |b| b.iter(|| black_box(tls)()));
    // The machine's floor under every handle copy: one atomic increment
    // and one atomic decrement of a tensor's reference count. A boxed call
    // of `noop` makes three such copies (two pushed arguments and the
    // result), as libtorch's does.
    let t = tensor(&[DispatchKey::CPU]);
    c.bench_function("dispatch/refcount_pair", |b| {
        b.iter(|| drop(black_box(black_box(&t).clone())))
    });
}

criterion_group!(prims, primitives);
