//! `map(f, xs, args)`: applies `f` to each slice of `xs` along the first
//! dimension and stacks the results (operator `map_impl`).

use std::sync::Arc;

use aten_boxing::IValue;
use aten_core::{ops, Tensor};
use c10_core::{DispatchKeySet, Error, Result};

use super::{items_of, shipped, show, tensor_of, GraphFn, HigherOrderOperator, HopArg};

/// `torch._higher_order_ops.map`: validates `xs` as PyTorch does and calls
/// `map_impl` with `[f, [xs...], [args...]]`; one stacked value per
/// output of `f`.
pub fn map(f: GraphFn, xs: &[IValue], args: &[IValue]) -> Result<Vec<IValue>> {
    let tensors: Vec<Tensor> = xs.iter().filter_map(tensor_of).collect();
    if tensors.len() != xs.len() {
        return Err(Error::runtime(format!(
            "Mapped xs can only consist of tensors. Got xs {}.",
            show(xs)
        )));
    }
    let shapes: Vec<Vec<i64>> = tensors.iter().map(|t| t.sizes().to_vec()).collect();
    let Some(&leading) = shapes.first().and_then(|s| s.first()) else {
        return Err(Error::index_error("tuple index out of range"));
    };
    if leading == 0 {
        return Err(Error::runtime(
            "Leading dimensions of mapped xs cannot be 0.",
        ));
    }
    if shapes.iter().any(|s| s.first() != Some(&leading)) {
        let shown: Vec<String> = shapes
            .iter()
            .map(|s| {
                let dims: Vec<String> = s.iter().map(i64::to_string).collect();
                format!("torch.Size([{}])", dims.join(", "))
            })
            .collect();
        return Err(Error::runtime(format!(
            "Leading dimensions of mapped xs must be consistent. Got shapes [{}].",
            shown.join(", ")
        )));
    }
    shipped("map_impl")?.call(&[
        HopArg::Fn(f),
        HopArg::Value(IValue::GenericList(Arc::new(xs.to_vec()))),
        HopArg::Value(IValue::GenericList(Arc::new(args.to_vec()))),
    ])
}

/// `map_dense`: `f` on each slice, outputs stacked.
fn map_dense(_: &HigherOrderOperator, _: DispatchKeySet, args: &[HopArg]) -> Result<Vec<IValue>> {
    let [f, xs, pos_args] = args else {
        return Err(Error::runtime(format!(
            "map_impl expects 3 arguments (f, xs, pos_args) but got {}",
            args.len()
        )));
    };
    let f = f.function("f")?;
    let xs = items_of(xs.value("xs")?)?;
    let pos_args = items_of(pos_args.value("pos_args")?)?;
    let tensors: Vec<Tensor> = xs.iter().filter_map(tensor_of).collect();
    if tensors.len() != xs.len() {
        return Err(Error::runtime(format!(
            "Leaves of xs must be Tensor {}",
            show(&xs)
        )));
    }
    let lengths: Vec<Option<i64>> = tensors.iter().map(|t| t.sizes().first().copied()).collect();
    let n = match lengths.first() {
        Some(Some(n)) if lengths.iter().all(|l| *l == Some(*n)) => *n,
        _ => {
            return Err(Error::runtime(format!(
                "Leaves of xs must have same leading dimension size {lengths:?}"
            )))
        }
    };
    let mut outputs: Vec<Vec<IValue>> = Vec::new();
    for i in 0..n {
        let mut inputs = Vec::with_capacity(tensors.len() + pos_args.len());
        for t in &tensors {
            inputs.push(IValue::Tensor(ops::select_int(t, 0, i)?.base().clone()));
        }
        inputs.extend(pos_args.iter().cloned());
        outputs.push(f(&inputs)?);
    }
    let width = outputs.first().map_or(0, Vec::len);
    if outputs.iter().any(|o| o.len() != width) {
        return Err(Error::runtime(
            "map: f returned a different number of outputs for different slices",
        ));
    }
    (0..width)
        .map(|j| {
            let leaves: Vec<&IValue> = outputs.iter().map(|o| &o[j]).collect();
            if leaves.iter().all(|v| v.is_none()) {
                return Ok(IValue::None);
            }
            let tensors: Vec<Tensor> = leaves.iter().filter_map(|v| tensor_of(v)).collect();
            if tensors.len() != leaves.len() {
                let shown: Vec<IValue> = leaves.into_iter().cloned().collect();
                return Err(Error::runtime(format!("Cannot stack {}.", show(&shown))));
            }
            Ok(IValue::Tensor(ops::stack(&tensors)?.base().clone()))
        })
        .collect()
}

pub(super) fn make() -> Arc<HigherOrderOperator> {
    let op = HigherOrderOperator::new("map_impl");
    super::ship(&op, Arc::new(map_dense));
    op
}
