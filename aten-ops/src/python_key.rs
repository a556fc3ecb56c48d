//! The `Python` key's fallback: delivers an operator call to the innermost
//! dispatch mode, or with no mode to the tensor subclasses among its
//! arguments (PyTorch's `pythonFallback` and
//! `handle_torch_function_no_python_arg_parser`), and the
//! split of a boxed call into positional and keyword arguments that modes
//! see (`parseIValuesToPyArgsKwargs`).

use aten_boxing::normalize::default_to_ivalue;
use aten_boxing::schema::FunctionSchema;
use aten_boxing::KernelFunction;
use aten_boxing::{BoxedOperator, IValue, Stack};
use c10_core::{DispatchKey, DispatchKeySet, Error, Result};

use crate::call_lookup::{CallLookup, RootFallback};
use crate::modes;
use crate::overload::OpOverload;
use crate::subclass::dispatch_to_subclasses;

/// `parseIValuesToPyArgsKwargs`: how many of `values` are passed
/// positionally (up to the first keyword-only argument, without the trailing
/// ones equal to their defaults), and the keyword-only arguments that differ
/// from their defaults.
pub fn split_args_kwargs<'s>(
    schema: &'s FunctionSchema,
    values: &[IValue],
) -> (usize, Vec<(&'s str, IValue)>) {
    let arguments = schema.arguments();
    let n = arguments.len().min(values.len());
    let is_default = |i: usize| {
        arguments[i]
            .default_value()
            .and_then(|d| default_to_ivalue(d).ok())
            .is_some_and(|d| d == values[i])
    };
    let mut kwarg_only_start = n;
    while kwarg_only_start > 0 && arguments[kwarg_only_start - 1].kwarg_only() {
        kwarg_only_start -= 1;
    }
    let mut positional_end = kwarg_only_start;
    while positional_end > 0 && is_default(positional_end - 1) {
        positional_end -= 1;
    }
    let kwargs = (kwarg_only_start..n)
        .filter(|&i| !is_default(i))
        .map(|i| (arguments[i].name(), values[i].clone()))
        .collect();
    (positional_end, kwargs)
}

/// The boxed fallback a root registers at `Python`.
pub(crate) fn fallback_kernel(
    lookup: CallLookup,
) -> impl Fn(&dyn BoxedOperator, DispatchKeySet, &mut Stack) -> Result<()> + Send + Sync + 'static {
    move |op, _keys, stack| {
        lookup.with_overload(op, |_, overload| {
            // The positional arguments are lent from the stack as they are.
            call_with_args_kwargs(overload, stack, |all, args, kwargs| {
                if modes::stack_len() > 0 {
                    // The mode is back on the stack before the returns are
                    // checked.
                    let popped = modes::pop_mode_temporarily()?;
                    popped.mode().torch_dispatch(overload, args, kwargs)
                } else {
                    dispatch_to_subclasses(overload, all, args, kwargs)
                }
            })
        })
    }
}

/// The root's fallback at `Python` (dispatch modes).
pub(crate) const FALLBACK: RootFallback = RootFallback {
    key: DispatchKey::Python,
    kernel: |lookup| KernelFunction::make_from_boxed_function(fallback_kernel(lookup)),
    debug: "registered by aten_ops::Ops (dispatch modes)",
};

/// The root's fallback at `PythonTLSSnapshot`: a fallthrough (the modes'
/// state needs no snapshot here).
pub(crate) const TLS_SNAPSHOT_FALLBACK: RootFallback = RootFallback {
    key: DispatchKey::PythonTLSSnapshot,
    kernel: |_| KernelFunction::make_fallthrough(),
    debug: "registered by aten_ops::Ops (dispatch modes)",
};

/// PyTorch's check that a handler returned as many values as the schema.
#[inline]
fn check_returns(overload: &OpOverload, schema: &FunctionSchema, results: &[IValue]) -> Result<()> {
    let expected = schema.returns().len();
    if results.len() != expected && !schema.is_varret() {
        return Err(Error::runtime(format!(
            "{}: the dispatch mode returned {} values but the operator returns {expected}",
            overload.name(),
            results.len()
        )));
    }
    Ok(())
}

/// Hands the boxed call on `stack` to `handler` as a mode sees it: the
/// whole argument list, the positional arguments (lent from the stack) and
/// the keyword ones; its results replace the arguments, checked against
/// the schema's returns.
pub(crate) fn call_with_args_kwargs(
    overload: &OpOverload,
    stack: &mut Stack,
    handler: impl FnOnce(&[IValue], &[IValue], &[(&str, IValue)]) -> Result<Vec<IValue>>,
) -> Result<()> {
    let Some(schema) = overload.current_schema() else {
        return Err(overload.no_schema());
    };
    let n = schema.arguments().len();
    let Some(base) = stack.len().checked_sub(n) else {
        return Err(Error::internal(format!(
            "{}: a boxed call needs {n} arguments on the stack but found {}",
            overload.name(),
            stack.len()
        )));
    };
    let (positional, kwargs) = split_args_kwargs(schema, &stack[base..]);
    let results = handler(&stack[base..], &stack[base..base + positional], &kwargs)?;
    check_returns(overload, schema, &results)?;
    stack.truncate(base);
    stack.extend(results);
    Ok(())
}
