//! The `Python` key's fallback: delivers an operator call to the innermost
//! dispatch mode (PyTorch's `pythonFallback` and
//! `handle_torch_function_no_python_arg_parser` for modes), and the
//! split of a boxed call into positional and keyword arguments that modes
//! see (`parseIValuesToPyArgsKwargs`).

use std::sync::Weak;

use aten_boxing::normalize::default_to_ivalue;
use aten_boxing::schema::FunctionSchema;
use aten_boxing::{BoxedOperator, IValue, Stack};
use aten_dispatch::OperatorHandle;
use c10_core::{DispatchKeySet, Error, Result};

use crate::modes::pop_mode_temporarily;
use crate::root::OpsInner;

/// `parseIValuesToPyArgsKwargs`: positional arguments up to the first
/// keyword-only one, without the trailing ones equal to their defaults;
/// keyword-only arguments that differ from their defaults.
pub fn split_args_kwargs<'s>(
    schema: &'s FunctionSchema,
    values: &[IValue],
) -> (Vec<IValue>, Vec<(&'s str, IValue)>) {
    let arguments = schema.arguments();
    let is_default = |i: usize| {
        arguments[i]
            .default_value()
            .and_then(|d| default_to_ivalue(d).ok())
            .is_some_and(|d| d == values[i])
    };
    let mut kwarg_only_start = arguments.len().min(values.len());
    while kwarg_only_start > 0 && arguments[kwarg_only_start - 1].kwarg_only() {
        kwarg_only_start -= 1;
    }
    let mut positional_end = kwarg_only_start;
    while positional_end > 0 && is_default(positional_end - 1) {
        positional_end -= 1;
    }
    let args = values[..positional_end].to_vec();
    let kwargs = (kwarg_only_start..arguments.len().min(values.len()))
        .filter(|&i| !is_default(i))
        .map(|i| (arguments[i].name(), values[i].clone()))
        .collect();
    (args, kwargs)
}

/// The boxed fallback a root registers at `Python`.
pub(crate) fn fallback_kernel(
    root: Weak<OpsInner>,
) -> impl Fn(&dyn BoxedOperator, DispatchKeySet, &mut Stack) -> Result<()> + Send + Sync + 'static {
    move |op, _keys, stack| {
        let Some(handle) = op.as_any().downcast_ref::<OperatorHandle>() else {
            return Err(Error::internal(format!(
                "the Python key was reached for {} without its operator handle",
                op.operator_name()
            )));
        };
        let Some(root) = root.upgrade() else {
            return Err(Error::internal(
                "Hit Python dispatch key but its torch.ops root is gone",
            ));
        };
        let overload = match root.known_overload(handle.operator_name()) {
            Some(o) => o,
            None => root.overload_for(handle.operator_name())?,
        };
        drop(root);
        let schema = overload.schema()?;
        let n = schema.arguments().len();
        let Some(base) = stack.len().checked_sub(n) else {
            return Err(Error::internal(format!(
                "{}: a boxed call needs {n} arguments on the stack but found {}",
                overload.name(),
                stack.len()
            )));
        };
        let popped = pop_mode_temporarily().map_err(|_| {
            Error::internal(
                "Hit Python dispatch key but no arguments had PyInterpreter (no tensor args?)",
            )
        })?;
        let (args, kwargs) = split_args_kwargs(&schema, &stack[base..]);
        let results = popped.mode().torch_dispatch(&overload, &args, &kwargs)?;
        drop(popped);
        let expected = schema.returns().len();
        if results.len() != expected && !schema.is_varret() {
            return Err(Error::runtime(format!(
                "{}: the dispatch mode returned {} values but the operator returns {expected}",
                overload.name(),
                results.len()
            )));
        }
        stack.truncate(base);
        stack.extend(results);
        Ok(())
    }
}
