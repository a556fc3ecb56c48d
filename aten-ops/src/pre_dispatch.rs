//! The `PreDispatch` key's fallback: delivers an operator call to the
//! innermost pre-dispatch mode, with that mode popped while it runs
//! (PyTorch's `OpOverload` handler for `PreDispatch`). The key sits above
//! autograd, so the mode sees each operator as the program called it,
//! before autograd records it and before a `CompositeImplicitAutograd`
//! kernel decomposes it. With no pre-dispatch mode on the thread the call
//! goes on below the key.

use aten_boxing::KernelFunction;
use aten_boxing::{BoxedOperator, Stack};
use c10_core::{DispatchKey, DispatchKeySet, Result};

use crate::call_lookup::{CallLookup, RootFallback};
use crate::modes::{self, pop_pre_dispatch_mode_temporarily};
use crate::python_key::call_with_args_kwargs;

/// The boxed fallback a root registers at `PreDispatch`.
pub(crate) fn fallback_kernel(
    lookup: CallLookup,
) -> impl Fn(&dyn BoxedOperator, DispatchKeySet, &mut Stack) -> Result<()> + Send + Sync + 'static {
    move |op, keys, stack| {
        if modes::pre_dispatch_stack_len() == 0 {
            return op.redispatch_boxed(keys.remove(DispatchKey::PreDispatch), stack);
        }
        lookup.with_overload(op, |_, overload| {
            call_with_args_kwargs(overload, stack, |_, args, kwargs| {
                let popped = pop_pre_dispatch_mode_temporarily()?;
                popped.mode().torch_dispatch(overload, args, kwargs)
            })
        })
    }
}

/// The root's fallback at `PreDispatch` (pre-dispatch modes).
pub(crate) const FALLBACK: RootFallback = RootFallback {
    key: DispatchKey::PreDispatch,
    kernel: |lookup| KernelFunction::make_from_boxed_function(fallback_kernel(lookup)),
    debug: "registered by aten_ops::Ops (pre-dispatch modes)",
};
