//! `DispatchKeyExtractor`: which arguments of a boxed call carry dispatch
//! keys, and the key computation every call makes (`computeDispatchKeySet`).
//!
//! This module is the one place that turns a call's arguments into the key
//! set the call dispatches on: [`DispatchKeyExtractor::get_dispatch_key_set_boxed`]
//! for a stack, [`get_dispatch_key_set_unboxed`] for typed arguments, both
//! through [`compute_dispatch_key_set`]. A typed call knows at compile time
//! which arguments are tensors (each [`KernelArg`](aten_boxing::KernelArg)
//! reports its keys, and [`ArgList::dispatch_key_set`] ORs them, PyTorch's
//! `multi_dispatch_key_set`); a boxed call walks the arguments on the stack,
//! guided by the positions the schema marks as `Tensor`, `Tensor?`,
//! `Tensor[]` or `Tensor?[]`.

use std::sync::Arc;

use aten_boxing::schema::{FunctionSchema, OperatorName};
use aten_boxing::{ArgList, IValue};
use c10_core::local_dispatch_key_set::tls_local_dispatch_key_set;
use c10_core::{DispatchKeySet, Error, Result};

use crate::dispatch_table::DispatchTable;
use crate::schema_check::is_tensor_like_argument;

/// Where the dispatch-relevant arguments of an operator are.
#[derive(Clone, Debug)]
pub(crate) struct DispatchKeyExtractor {
    /// Number of arguments; `None` when the operator has no schema.
    num_args: Option<usize>,
    /// The positions below 64 of the arguments that may hold tensors, one
    /// bit each (PyTorch's `dispatch_arg_indices_reverse_`): read in the
    /// extractor itself, without following a pointer on every call.
    tensor_arg_bits: u64,
    /// The positions from 64 on (shared by every table the operator
    /// publishes; almost always empty).
    later_tensor_args: Arc<[u32]>,
}

/// Positions below this are kept as bits.
const BITS: u32 = u64::BITS;

impl DispatchKeyExtractor {
    /// `makeUninitialized`: an operator without a schema (boxed calls fail).
    #[doc(alias = "makeUninitialized")]
    pub(crate) fn none() -> DispatchKeyExtractor {
        DispatchKeyExtractor {
            num_args: None,
            tensor_arg_bits: 0,
            later_tensor_args: Arc::from([]),
        }
    }

    /// `make(schema)`: the tensor-like argument positions of `schema`.
    #[doc(alias = "make")]
    pub(crate) fn from_schema(schema: &FunctionSchema) -> DispatchKeyExtractor {
        let arguments = schema.arguments();
        let positions = (0u32..)
            .zip(arguments)
            .filter(|(_, a)| is_tensor_like_argument(a))
            .map(|(i, _)| i);
        let tensor_arg_bits = positions
            .clone()
            .filter(|&i| i < BITS)
            .fold(0u64, |bits, i| bits | 1 << i);
        DispatchKeyExtractor {
            num_args: Some(arguments.len()),
            tensor_arg_bits,
            later_tensor_args: positions.filter(|&i| i >= BITS).collect(),
        }
    }

    /// `getDispatchKeySetBoxed`: the key set a boxed call with its arguments
    /// on top of `stack` dispatches on, for an operator whose table is
    /// `table`.
    #[doc(alias = "getDispatchKeySetBoxed")]
    #[inline(always)]
    pub(crate) fn get_dispatch_key_set_boxed(
        &self,
        stack: &[IValue],
        op: &OperatorName,
        table: &DispatchTable,
    ) -> Result<DispatchKeySet> {
        let keys = self.keys_from_stack(stack, op)?;
        Ok(compute_dispatch_key_set(keys, table))
    }

    /// The union of the key sets of the tensors among the top arguments of
    /// `stack`.
    #[inline(always)]
    fn keys_from_stack(&self, stack: &[IValue], op: &OperatorName) -> Result<DispatchKeySet> {
        let Some(args) = self
            .num_args
            .and_then(|n| stack.len().checked_sub(n))
            .map(|base| &stack[base..])
        else {
            return Err(self.stack_error(stack, op));
        };
        let mut ks = DispatchKeySet::EMPTY;
        let mut bits = self.tensor_arg_bits;
        while bits != 0 {
            let i = bits.trailing_zeros();
            bits &= bits - 1;
            if let Some(value) = args.get(i as usize) {
                ks |= ivalue_key_set(value);
            }
        }
        for &i in self.later_tensor_args.iter() {
            if let Some(value) = args.get(i as usize) {
                ks |= ivalue_key_set(value);
            }
        }
        Ok(ks)
    }

    #[cold]
    #[inline(never)]
    fn stack_error(&self, stack: &[IValue], op: &OperatorName) -> Error {
        match self.num_args {
            None => Error::runtime(format!(
                "Tried to access the schema for {op} which doesn't have a schema registered yet"
            )),
            Some(n) => Error::runtime(format!(
                "{op}: a boxed call needs {n} arguments on the stack but found {}",
                stack.len()
            )),
        }
    }
}

/// The keys carried by the tensors in a value: a tensor, a list of
/// tensors, or a generic list or tuple of such values.
#[inline]
pub fn ivalue_key_set(value: &IValue) -> DispatchKeySet {
    match value {
        IValue::Tensor(t) => t.key_set(),
        _ => list_key_set(value),
    }
}

/// The keys carried by a list of tensors (or anything else: none).
fn list_key_set(value: &IValue) -> DispatchKeySet {
    match value {
        IValue::Tensor(t) => t.key_set(),
        IValue::TensorList(ts) => ts
            .iter()
            .fold(DispatchKeySet::EMPTY, |ks, t| ks | t.key_set()),
        IValue::OptionalTensorList(ts) => ts
            .iter()
            .flatten()
            .fold(DispatchKeySet::EMPTY, |ks, t| ks | t.key_set()),
        IValue::GenericList(items) | IValue::Tuple(items) => items
            .iter()
            .fold(DispatchKeySet::EMPTY, |ks, v| ks | ivalue_key_set(v)),
        _ => DispatchKeySet::EMPTY,
    }
}

/// `getDispatchKeySetUnboxed`: the key set a typed call with `args`
/// dispatches on, for an operator whose table is `table`.
#[doc(alias = "getDispatchKeySetUnboxed")]
#[inline(always)]
pub(crate) fn get_dispatch_key_set_unboxed<Args: ArgList>(
    args: &Args,
    table: &DispatchTable,
) -> DispatchKeySet {
    compute_dispatch_key_set(args.dispatch_key_set(), table)
}

/// `computeDispatchKeySet`: the argument keys plus the thread's included
/// set, minus its excluded set, masked by the operator's non-fallthrough
/// keys (per backend where the table needs it).
#[inline(always)]
fn compute_dispatch_key_set(arg_keys: DispatchKeySet, table: &DispatchTable) -> DispatchKeySet {
    let tls = tls_local_dispatch_key_set();
    let keys = (arg_keys | tls.included) - tls.excluded;
    keys & table.mask_for(keys)
}

#[cfg(test)]
mod tests {
    use super::*;
    use c10_core::{Device, DispatchKey, ScalarType, TensorBase, TensorImpl};

    fn tensor(key: DispatchKey) -> IValue {
        let t = TensorImpl::new(
            DispatchKeySet::from_key(key),
            ScalarType::Float,
            Device::CPU,
            vec![1],
        )
        .unwrap();
        IValue::Tensor(TensorBase::from_impl(t))
    }

    #[test]
    fn tensor_arguments_past_the_first_64_are_read_too() {
        // 70 arguments: tensors at positions 0, 63 and 66, ints elsewhere.
        let is_tensor = |i: usize| matches!(i, 0 | 63 | 66);
        let args: Vec<String> = (0..70)
            .map(|i| format!("{} a{i}", if is_tensor(i) { "Tensor" } else { "int" }))
            .collect();
        let schema = FunctionSchema::parse(&format!("t::many({}) -> ()", args.join(", "))).unwrap();
        let extractor = DispatchKeyExtractor::from_schema(&schema);
        let keys = [DispatchKey::CPU, DispatchKey::Meta, DispatchKey::CUDA];
        let mut stack: Vec<IValue> = vec![IValue::Int(7)];
        let mut next = keys.iter();
        for i in 0..70 {
            stack.push(if is_tensor(i) {
                tensor(*next.next().unwrap())
            } else {
                IValue::Int(i as i64)
            });
        }
        let op = OperatorName::parse("t::many").unwrap();
        let got = extractor.keys_from_stack(&stack, &op).unwrap();
        let expected = keys.iter().fold(DispatchKeySet::EMPTY, |ks, &k| {
            ks | DispatchKeySet::from_key(k)
        });
        assert_eq!(got, expected);
    }
}
