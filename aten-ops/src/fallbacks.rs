//! The backend fallbacks a `torch.ops` root registers on its dispatcher,
//! from one list ([`ROOT_FALLBACKS`]); each is defined beside the code it
//! runs, as a [`RootFallback`].

use crate::call_lookup::RootFallback;
use crate::{functionalize, pre_dispatch, python_dispatcher, python_key};

/// Every fallback a root registers, in order: `PythonDispatcher` (host
/// kernels) first, so that a second root for one dispatcher fails at once
/// with the dispatcher's duplicate-fallback error; then `Python` (dispatch
/// modes), `PythonTLSSnapshot` (a fallthrough), `Functionalize` and
/// `PreDispatch` (pre-dispatch modes).
pub(crate) const ROOT_FALLBACKS: [&RootFallback; 5] = [
    &python_dispatcher::FALLBACK,
    &python_key::FALLBACK,
    &python_key::TLS_SNAPSHOT_FALLBACK,
    &functionalize::kernel::FALLBACK,
    &pre_dispatch::FALLBACK,
];
