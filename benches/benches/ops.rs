//! The `torch.ops` layer:
//!
//! - `ops/overload_call_noop`: `OpOverload::call_boxed` of a two-tensor
//!   no-op (overload already resolved, a reused stack, tensors without
//!   autograd keys): compare with libtorch's `dispatch.boxed.inference_mode`;
//! - `ops/refcount_floor`: what any boxed call with that contract does
//!   besides dispatching: two tensor copies pushed, one copy returned, all
//!   three dropped (six reference-count updates), no dispatch at all;
//! - `ops/overload_call_noop_args`: `OpOverload::call` with positional
//!   arguments (binding to the schema, a fresh stack);
//! - `ops/overload_call_add` and `ops/packet_call_add`: `aten.add.Tensor`
//!   called directly, and `aten.add` choosing the overload from the
//!   arguments (one-element float tensors);
//! - `ops/overload_call_add_scalar` and `ops/packet_call_add_scalar`: the
//!   same with a Python number for `other`, which the packet resolves to
//!   `add.Scalar` after trying the overloads defined before it.

// criterion_group! generates undocumented items.
#![allow(missing_docs)]

mod support;

use aten::boxing::{IValue, Stack};
use aten::dispatch::Dispatcher;
use aten::torch_ops::Ops;
use aten::{DispatchKey, Tensor};
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use support::{define_noop, tensor};

fn calls(c: &mut Criterion) {
    let d = Dispatcher::new();
    let root = Ops::new(&d).unwrap();
    let _noop = define_noop(&d);
    let overload = root.overload("bench::noop").unwrap();
    let plain = tensor(&[DispatchKey::CPU]);
    let mut stack: Stack = Vec::with_capacity(2);
    c.bench_function("ops/overload_call_noop", |b| {
        b.iter(|| {
            stack.push(IValue::Tensor(plain.clone()));
            stack.push(IValue::Tensor(plain.clone()));
            overload.call_boxed(&mut stack).unwrap();
            stack.pop()
        })
    });
    c.bench_function("ops/refcount_floor", |b| {
        b.iter(|| {
            stack.push(IValue::Tensor(plain.clone()));
            stack.push(IValue::Tensor(plain.clone()));
            let result = black_box(&plain).clone();
            stack.clear();
            result
        })
    });
    let args = [IValue::Tensor(plain.clone()), IValue::Tensor(plain.clone())];
    c.bench_function("ops/overload_call_noop_args", |b| {
        b.iter(|| overload.call(black_box(&args), &[]).unwrap())
    });

    let ops = aten::ops_root();
    let a = Tensor::from_slice(&[1.0f32], &[1]).unwrap();
    let args = [
        IValue::Tensor(a.base().clone()),
        IValue::Tensor(a.base().clone()),
    ];
    let add = ops.aten().op("add").unwrap();
    let add_tensor = add.overload("Tensor").unwrap();
    c.bench_function("ops/overload_call_add", |b| {
        b.iter(|| add_tensor.call(black_box(&args), &[]).unwrap())
    });
    c.bench_function("ops/packet_call_add", |b| {
        b.iter(|| add.call(black_box(&args), &[]).unwrap())
    });
    let scalar_args = [IValue::Tensor(a.base().clone()), IValue::Int(2)];
    let add_scalar = add.overload("Scalar").unwrap();
    c.bench_function("ops/overload_call_add_scalar", |b| {
        b.iter(|| add_scalar.call(black_box(&scalar_args), &[]).unwrap())
    });
    c.bench_function("ops/packet_call_add_scalar", |b| {
        b.iter(|| add.call(black_box(&scalar_args), &[]).unwrap())
    });
}

criterion_group!(benches, calls);
criterion_main!(benches);
