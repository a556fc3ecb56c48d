//! Dispatch modes, against the boxed call they wrap (same run):
//!
//! - `modes/boxed_noop`: `call_boxed` of a two-tensor no-op with a reused
//!   stack, no mode (the project's `dispatch/boxed_noop`);
//! - `modes/forwarding_mode_noop`: the same call with a pushed mode that
//!   forwards every operator back to it (`op.call(args, kwargs)`);
//! - `modes/eager_add_` and `modes/functionalized_add_`: `add_` of 16
//!   floats on a plain tensor, and on a functional wrapper with
//!   functionalization on (the in-place Meta check, the functional `add`,
//!   the write and the sync), for the cost of the layer.

// criterion_group! generates undocumented items.
#![allow(missing_docs)]

use std::sync::Arc;

mod support;

use aten::boxing::{IValue, Stack};
use aten::dispatch::Dispatcher;
use aten::torch_ops::{push_mode, OpOverload, Ops, TorchDispatchMode};
use aten::{DispatchKey, Result};
use criterion::{criterion_group, criterion_main, Criterion};
use support::{define_noop, tensor};

struct Forwarding;

impl TorchDispatchMode for Forwarding {
    fn torch_dispatch(
        &self,
        op: &OpOverload,
        args: &[IValue],
        kwargs: &[(&str, IValue)],
    ) -> Result<Vec<IValue>> {
        op.call(args, kwargs)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

fn calls(c: &mut Criterion) {
    let d = Dispatcher::new();
    let root = Ops::new(&d).unwrap();
    let _noop = define_noop(&d);
    let op = d.find_schema_or_throw("bench::noop", "").unwrap();
    // Resolve the overload once, as a program that uses it would have.
    root.overload("bench::noop").unwrap();
    let plain = tensor(&[DispatchKey::CPU]);
    let mut stack: Stack = Vec::with_capacity(2);
    let run = |stack: &mut Stack| {
        stack.push(IValue::Tensor(plain.clone()));
        stack.push(IValue::Tensor(plain.clone()));
        op.call_boxed(stack).unwrap();
        stack.pop()
    };
    c.bench_function("modes/boxed_noop", |b| b.iter(|| run(&mut stack)));
    let _mode = push_mode(Arc::new(Forwarding));
    c.bench_function("modes/forwarding_mode_noop", |b| b.iter(|| run(&mut stack)));
}

fn functionalization(c: &mut Criterion) {
    use aten::torch_ops::functionalize::{enable_functionalization, to_functional_tensor};
    use aten::{ops, Tensor};
    aten::ops_root();
    let x = Tensor::from_slice(&[1.0f32; 16], &[16]).unwrap();
    let one = Tensor::from_slice(&[1.0f32], &[1]).unwrap();
    c.bench_function("modes/eager_add_", |b| {
        b.iter(|| ops::add_tensor_(&x, &one).unwrap())
    });
    let w = Tensor::from_base(to_functional_tensor(x.base()).unwrap());
    let _on = enable_functionalization(false);
    c.bench_function("modes/functionalized_add_", |b| {
        b.iter(|| ops::add_tensor_(&w, &one).unwrap())
    });
}

criterion_group!(benches, calls, functionalization);
criterion_main!(benches);
