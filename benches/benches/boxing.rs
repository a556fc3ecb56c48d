//! `boxing/*`: the cost of the calling-convention bridges for a 3-argument
//! kernel `(Tensor, Tensor, Scalar) -> Tensor`:
//! - `boxing/typed_unboxed_3`: a typed call of an unboxed kernel (no stack);
//! - `boxing/boxed_call_of_unboxed_3`: a boxed call through the generated
//!   wrapper (pop, unbox, call, box the result);
//! - `boxing/box_call_unbox_3`: a typed call of a boxed kernel (box the
//!   arguments, call, unbox the result: PyTorch's `BoxedKernelWrapper`).

// criterion_group! generates undocumented items.
#![allow(missing_docs)]

use aten::boxing::{BoxedOperator, IValue, KernelFunction, Stack, StackExt};
use aten::c10::{Device, ScalarType, TensorBase, TensorImpl};
use aten::{DispatchKey, DispatchKeySet, Result};
use criterion::{black_box, criterion_group, criterion_main, Criterion};

struct Op;

impl BoxedOperator for Op {
    fn operator_name(&self) -> String {
        "bench::add3".into()
    }
    fn redispatch_boxed(&self, _: DispatchKeySet, _: &mut Stack) -> Result<()> {
        Ok(())
    }
    fn dump_state(&self) -> String {
        String::new()
    }
    fn schema(&self) -> Option<std::sync::Arc<aten::boxing::schema::FunctionSchema>> {
        None
    }
    fn tags(&self) -> Vec<String> {
        Vec::new()
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

fn add3(a: &TensorBase, _b: &TensorBase, _alpha: aten::c10::Scalar) -> Result<TensorBase> {
    Ok(a.clone())
}

fn bench(c: &mut Criterion) {
    let keys = DispatchKeySet::from_key(DispatchKey::CPU);
    let t = TensorBase::from_impl(
        TensorImpl::new(keys, ScalarType::Float, Device::CPU, vec![1]).expect("valid sizes"),
    );
    let alpha = aten::c10::Scalar::Int(1);
    let unboxed = KernelFunction::make_from_unboxed_function(add3);
    let boxed = KernelFunction::make_from_boxed_function(|_, _, stack| {
        let _alpha = stack.pop_value()?;
        let _b = stack.pop_value()?;
        let a = stack.pop_value()?;
        stack.push(a);
        Ok(())
    });

    c.bench_function("boxing/typed_unboxed_3", |b| {
        b.iter(|| {
            let r: TensorBase = unboxed
                .call(&Op, keys, (black_box(&t), black_box(&t), alpha))
                .unwrap();
            r
        })
    });
    let mut stack: Stack = Vec::with_capacity(4);
    c.bench_function("boxing/boxed_call_of_unboxed_3", |b| {
        b.iter(|| {
            stack.push(IValue::Tensor(t.clone()));
            stack.push(IValue::Tensor(t.clone()));
            stack.push(IValue::Int(1));
            unboxed.call_boxed(&Op, keys, &mut stack).unwrap();
            stack.pop()
        })
    });
    c.bench_function("boxing/box_call_unbox_3", |b| {
        b.iter(|| {
            let r: TensorBase = boxed
                .call(&Op, keys, (black_box(&t), black_box(&t), alpha))
                .unwrap();
            r
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
