//! `DispatchKeyExtractor`: which arguments of a boxed call carry dispatch
//! keys, and the key computation every call makes (`computeDispatchKeySet`).
//!
//! A typed call knows at compile time which arguments are tensors (each
//! [`KernelArg`](aten_boxing::KernelArg) reports its keys); a boxed call walks
//! the arguments on the stack, guided by the positions the schema marks as
//! `Tensor`, `Tensor?`, `Tensor[]` or `Tensor?[]`.

use aten_boxing::schema::{FunctionSchema, OperatorName};
use aten_boxing::IValue;
use c10_core::local_dispatch_key_set::tls_local_dispatch_key_set;
use c10_core::{DispatchKeySet, Error, Result};

use crate::schema_check::is_tensor_like_argument;

/// Where the dispatch-relevant arguments of an operator are.
#[derive(Clone, Debug)]
pub(crate) struct DispatchKeyExtractor {
    /// Number of arguments; `None` when the operator has no schema.
    num_args: Option<usize>,
    /// Bit `i` set: argument `i` may hold tensors.
    tensor_args: Vec<bool>,
}

impl DispatchKeyExtractor {
    pub(crate) fn none() -> DispatchKeyExtractor {
        DispatchKeyExtractor {
            num_args: None,
            tensor_args: Vec::new(),
        }
    }

    pub(crate) fn from_schema(schema: &FunctionSchema) -> DispatchKeyExtractor {
        let tensor_args: Vec<bool> = schema
            .arguments()
            .iter()
            .map(is_tensor_like_argument)
            .collect();
        DispatchKeyExtractor {
            num_args: Some(tensor_args.len()),
            tensor_args,
        }
    }

    /// The union of the key sets of the tensors among the top arguments of
    /// `stack`.
    pub(crate) fn keys_from_stack(
        &self,
        stack: &[IValue],
        op: &OperatorName,
    ) -> Result<DispatchKeySet> {
        let Some(n) = self.num_args else {
            return Err(Error::runtime(format!(
                "Tried to access the schema for {op} which doesn't have a schema registered yet"
            )));
        };
        let args = stack
            .len()
            .checked_sub(n)
            .map(|base| &stack[base..])
            .ok_or_else(|| {
                Error::runtime(format!(
                    "{op}: a boxed call needs {n} arguments on the stack but found {}",
                    stack.len()
                ))
            })?;
        let mut ks = DispatchKeySet::EMPTY;
        for (value, is_tensor) in args.iter().zip(&self.tensor_args) {
            if *is_tensor {
                ks |= ivalue_key_set(value);
            }
        }
        Ok(ks)
    }
}

/// The keys carried by a tensor-like value.
pub(crate) fn ivalue_key_set(value: &IValue) -> DispatchKeySet {
    match value {
        IValue::Tensor(t) => t.key_set(),
        IValue::TensorList(ts) => ts
            .iter()
            .fold(DispatchKeySet::EMPTY, |ks, t| ks | t.key_set()),
        IValue::OptionalTensorList(ts) => ts
            .iter()
            .flatten()
            .fold(DispatchKeySet::EMPTY, |ks, t| ks | t.key_set()),
        IValue::GenericList(items) => items
            .iter()
            .fold(DispatchKeySet::EMPTY, |ks, v| ks | ivalue_key_set(v)),
        _ => DispatchKeySet::EMPTY,
    }
}

/// Applies the thread-local sets to the argument keys:
/// `(keys | included) - excluded`.
#[inline(always)]
pub(crate) fn apply_tls(keys: DispatchKeySet) -> DispatchKeySet {
    let tls = tls_local_dispatch_key_set();
    (keys | tls.included) - tls.excluded
}
