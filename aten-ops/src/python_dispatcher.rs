//! The Python dispatcher: the `PythonDispatcher` key's backend fallback and
//! the guard that turns it on (PyTorch's `enable_python_dispatcher`).
//!
//! While the guard lives, every call on the thread dispatches to
//! `PythonDispatcher` first. The fallback takes the next key `k` of the
//! call, asks the operator's [`OpOverload`](crate::OpOverload) for its
//! handler (`_get_dispatch(k)`: a host kernel registered with `py_impl` at
//! the key `resolve_key` picks, or that key itself), and runs it: a host
//! kernel with the call's keys, otherwise the dispatcher's kernel at that
//! key (`callBoxedForDispatchKey`, not a redispatch, so the Python
//! dispatcher stays on below it).

use aten_boxing::KernelFunction;
use aten_boxing::{BoxedOperator, Stack};
use c10_core::local_dispatch_key_set::IncludeDispatchKeyGuard;
use c10_core::{DispatchKey, DispatchKeySet, Result};

use crate::call_lookup::{CallLookup, RootFallback};
use crate::overload::Handler;

/// Keeps the Python dispatcher on for this thread while it lives.
#[must_use = "the Python dispatcher is on only while the guard lives"]
pub struct EnablePythonDispatcher {
    _include: IncludeDispatchKeyGuard,
}

/// `enable_python_dispatcher()`: host kernels registered with `py_impl`
/// run while the returned guard lives.
pub fn enable_python_dispatcher() -> EnablePythonDispatcher {
    EnablePythonDispatcher {
        _include: IncludeDispatchKeyGuard::new(DispatchKey::PythonDispatcher),
    }
}

/// The boxed fallback a root registers at `PythonDispatcher`.
pub(crate) fn fallback_kernel(
    lookup: CallLookup,
) -> impl Fn(&dyn BoxedOperator, DispatchKeySet, &mut Stack) -> Result<()> + Send + Sync + 'static {
    move |op, keys, stack| {
        let keys = keys.remove(DispatchKey::PythonDispatcher);
        let k = keys.highest_priority_type_id();
        lookup.with_overload(op, |handle, overload| match overload.get_dispatch(k)? {
            Handler::Host(f) => f(overload, keys, stack),
            Handler::Key(key) => handle.call_boxed_for_dispatch_key(key, stack),
        })
    }
}

/// The root's fallback at `PythonDispatcher` (host kernels).
pub(crate) const FALLBACK: RootFallback = RootFallback {
    key: DispatchKey::PythonDispatcher,
    kernel: |lookup| KernelFunction::make_from_boxed_function(fallback_kernel(lookup)),
    debug: "registered by aten_ops::Ops (the Python dispatcher)",
};
