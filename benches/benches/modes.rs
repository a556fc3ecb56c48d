//! Dispatch modes, against the boxed call they wrap (same run):
//!
//! - `modes/boxed_noop`: `call_boxed` of a two-tensor no-op with a reused
//!   stack, no mode (the project's `dispatch/boxed_noop`);
//! - `modes/forwarding_mode_noop`: the same call with a pushed mode that
//!   forwards every operator back to it (`op.call(args, kwargs)`).

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

criterion_group!(benches, calls);
criterion_main!(benches);
