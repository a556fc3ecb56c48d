//! `cond(pred, true_fn, false_fn, operands)`: runs one of two functions on
//! the operands, chosen by a boolean or a single-element tensor.

use std::sync::Arc;

use aten_boxing::IValue;
use aten_core::ops;
use c10_core::{DispatchKeySet, Error, Result, ScalarType};

use super::{items_of, shipped, show, tensor_of, GraphFn, HigherOrderOperator, HopArg};

/// `torch.cond`: validates the arguments as PyTorch does, runs the branch
/// directly for a `bool` predicate, and otherwise calls the `cond`
/// operator with `[pred, true_fn, false_fn, (operands...)]`.
pub fn cond(
    pred: &IValue,
    true_fn: GraphFn,
    false_fn: GraphFn,
    operands: &[IValue],
) -> Result<Vec<IValue>> {
    // A Python constant (bool, int, float): the eager case runs the branch.
    let constant = match pred {
        IValue::Bool(b) => Some(b.get()),
        IValue::Int(i) => Some(*i != 0),
        IValue::Double(d) => Some(d.get() != 0.0),
        _ => None,
    };
    if let Some(flag) = constant {
        return if flag {
            true_fn(operands)
        } else {
            false_fn(operands)
        };
    }
    let IValue::Tensor(t) = pred else {
        return Err(Error::runtime(format!(
            "Expected pred to be bool or tensor, but got {pred}."
        )));
    };
    if t.numel() != 1 {
        return Err(Error::runtime(format!(
            "Expected pred to be bool or single-element tensor, but got {pred}."
        )));
    }
    if operands.iter().any(|o| !matches!(o, IValue::Tensor(_))) {
        return Err(Error::runtime(format!(
            "Expect operands to be a tuple of possibly nested dict/list/tuple that only consists of tensor leaves, but got {}.",
            show(operands)
        )));
    }
    shipped("cond")?.call(&[
        HopArg::Value(pred.clone()),
        HopArg::Fn(true_fn),
        HopArg::Fn(false_fn),
        HopArg::Value(IValue::Tuple(Arc::new(operands.to_vec()))),
    ])
}

/// Whether a predicate value is true (`bool(pred)`).
pub(super) fn truth(pred: &IValue) -> Result<bool> {
    match pred {
        IValue::Bool(b) => Ok(b.get()),
        IValue::Int(i) => Ok(*i != 0),
        IValue::Tensor(_) => {
            let t = tensor_of(pred).ok_or_else(|| Error::internal("not a tensor"))?;
            if t.numel() != 1 {
                return Err(Error::runtime(
                    "Boolean value of Tensor with more than one value is ambiguous",
                ));
            }
            let nonzero = if t.dtype() == Some(ScalarType::Bool) {
                t
            } else {
                ops::ne_scalar(&t, 0.into())?
            };
            Ok(nonzero.base().to_vec::<bool>()?[0])
        }
        other => Err(Error::runtime(format!(
            "Expected pred to be bool or tensor, but got {other}."
        ))),
    }
}

/// `cond_op_dense`: runs the chosen branch on the operands. The autograd
/// kernel is the same: the branch's own operators record the graph.
fn cond_dense(_: &HigherOrderOperator, _: DispatchKeySet, args: &[HopArg]) -> Result<Vec<IValue>> {
    let [pred, true_fn, false_fn, operands] = args else {
        return Err(Error::runtime(format!(
            "cond expects 4 arguments (pred, true_fn, false_fn, operands) but got {}",
            args.len()
        )));
    };
    let operands = items_of(operands.value("operands")?)?;
    if operands
        .iter()
        .any(|o| !matches!(o, IValue::Tensor(_) | IValue::Int(_)))
    {
        return Err(Error::runtime(format!(
            "Dense implementation operands must be a list of tensors and ints {}",
            show(&operands)
        )));
    }
    let branch = if truth(pred.value("pred")?)? {
        true_fn.function("true_fn")?
    } else {
        false_fn.function("false_fn")?
    };
    branch(&operands)
}

pub(super) fn make() -> Arc<HigherOrderOperator> {
    let op = HigherOrderOperator::new("cond");
    super::ship(&op, Arc::new(cond_dense));
    op
}
