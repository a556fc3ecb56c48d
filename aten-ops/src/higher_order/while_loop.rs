//! `while_loop(cond_fn, body_fn, carried_inputs)`: runs `body_fn` on a
//! carried state while `cond_fn` says so.

use std::sync::Arc;

use aten_boxing::IValue;
use aten_core::ops;
use c10_core::{DispatchKeySet, Error, Result, ScalarType};

use super::{items_of, shipped, show, tensor_of, GraphFn, HigherOrderOperator, HopArg};

/// `torch._higher_order_ops.while_loop`: validates the carried inputs as
/// PyTorch does and calls the `while_loop` operator with `[cond_fn,
/// body_fn, (carried...), ()]`; the final carried values.
pub fn while_loop(
    cond_fn: GraphFn,
    body_fn: GraphFn,
    carried_inputs: &[IValue],
) -> Result<Vec<IValue>> {
    if carried_inputs
        .iter()
        .any(|v| !matches!(v, IValue::Tensor(_) | IValue::Int(_)))
    {
        return Err(Error::runtime(format!(
            "Expect carried_inputs to be a tuple of possibly nested dict/list/tuple that onlyconsists of tensor or int leaves, but got {}.",
            show(carried_inputs)
        )));
    }
    shipped("while_loop")?.call(&[
        HopArg::Fn(cond_fn),
        HopArg::Fn(body_fn),
        HopArg::Value(IValue::Tuple(Arc::new(carried_inputs.to_vec()))),
        HopArg::Value(IValue::Tuple(Arc::new(Vec::new()))),
    ])
}

/// Checks `cond_fn`'s first result: a 0-dim bool tensor or a bool.
fn check_cond_output(out: &[IValue]) -> Result<bool> {
    let bad = |shown: String| {
        Error::runtime(format!(
            "cond_fn must return a boolean scalar tensor or a boolean but got {shown}"
        ))
    };
    match out {
        [IValue::Bool(b)] => Ok(b.get()),
        [v @ IValue::Tensor(t)] => {
            if t.dim() == 0 && t.dtype() == Some(ScalarType::Bool) {
                super::cond::truth(v)
            } else {
                Err(bad(v.to_string()))
            }
        }
        [v] => Err(bad(v.to_string())),
        many => Err(bad(show(many))),
    }
}

/// `while_loop_dense`.
fn while_loop_dense(
    _: &HigherOrderOperator,
    _: DispatchKeySet,
    args: &[HopArg],
) -> Result<Vec<IValue>> {
    let [cond_fn, body_fn, carried, additional] = args else {
        return Err(Error::runtime(format!(
            "while_loop expects 4 arguments (cond_fn, body_fn, carried_inputs, additional_inputs) but got {}",
            args.len()
        )));
    };
    let (cond_fn, body_fn) = (cond_fn.function("cond_fn")?, body_fn.function("body_fn")?);
    let carried_value = carried.value("carried_inputs")?;
    let mut carried = items_of(carried_value).map_err(|_| {
        Error::runtime(format!(
            "carried_inputs must be a tuple or list but got {}",
            carried_value.type_name()
        ))
    })?;
    let additional = items_of(additional.value("additional_inputs")?)?;
    let with_additional = |carried: &[IValue]| -> Vec<IValue> {
        carried.iter().chain(&additional).cloned().collect()
    };
    if !check_cond_output(&cond_fn(&with_additional(&carried))?)? {
        return carried
            .iter()
            .map(|v| match tensor_of(v) {
                Some(t) => Ok(IValue::Tensor(ops::clone(&t)?.base().clone())),
                None => Ok(v.clone()),
            })
            .collect();
    }
    loop {
        let out = body_fn(&with_additional(&carried))?;
        if out.len() != carried.len() {
            return Err(Error::runtime(
                "body_fn should return the same number of elements as carried_inputs",
            ));
        }
        carried = out;
        if !check_cond_output(&cond_fn(&with_additional(&carried))?)? {
            return Ok(carried);
        }
    }
}

pub(super) fn make() -> Arc<HigherOrderOperator> {
    let op = HigherOrderOperator::new("while_loop");
    super::ship(&op, Arc::new(while_loop_dense));
    op
}
