//! `resolve_key`: which registration serves dispatch key `k` for an
//! operator whose kernels include host kernels (PyTorch's Python-side copy
//! of `computeDispatchTableEntryWithDebug`, used by the Python dispatcher
//! and by higher-order operators).

use c10_core::dispatch_key_set::{
    get_backend_key_set_from_autograd, is_included_in_alias, AUTOGRADOTHER_BACKENDS,
};
use c10_core::{DispatchKey, DispatchKeySet, Error, Result};

/// What `resolve_key` asks of an operator.
pub trait KernelTable: std::fmt::Display {
    /// A kernel registered at `k` itself (host or dispatcher kernel).
    fn has_kernel_for_dispatch_key(&self, k: DispatchKey) -> bool;
    /// A kernel at a non-alias key in `ks`.
    fn has_kernel_for_any_dispatch_key(&self, ks: DispatchKeySet) -> bool;
    /// Whether the dispatcher has a backend fallback for `k`.
    fn has_backend_fallback(&self, k: DispatchKey) -> bool;
}

/// `resolve_key(op, k)`: `k` itself when something is registered there;
/// else the alias key whose kernel serves `k`, by PyTorch's precedence;
/// else `k` when a backend fallback serves it; else PyTorch's error.
pub fn resolve_key(op: &dyn KernelTable, k: DispatchKey) -> Result<DispatchKey> {
    use DispatchKey as K;
    if op.has_kernel_for_dispatch_key(k) {
        return Ok(k);
    }
    let serves = |alias: DispatchKey| is_included_in_alias(k, alias);
    for cand in [
        K::CompositeExplicitAutogradNonFunctional,
        K::CompositeExplicitAutograd,
    ] {
        if (k == K::Undefined || serves(cand)) && op.has_kernel_for_dispatch_key(cand) {
            return Ok(cand);
        }
    }
    let has_backend_kernel = op
        .has_kernel_for_any_dispatch_key(get_backend_key_set_from_autograd(k))
        || op.has_kernel_for_dispatch_key(K::CompositeExplicitAutograd);
    let cand = K::CompositeImplicitAutogradNestedTensor;
    if k != K::Undefined
        && serves(cand)
        && op.has_kernel_for_dispatch_key(cand)
        && !has_backend_kernel
    {
        return Ok(cand);
    }
    let cand = K::CompositeImplicitAutograd;
    if (k == K::Undefined || serves(cand)) && op.has_kernel_for_dispatch_key(cand) {
        if k == K::AutogradOther && op.has_kernel_for_any_dispatch_key(AUTOGRADOTHER_BACKENDS) {
            return Err(Error::runtime("ambiguous autogradother kernel"));
        }
        if !has_backend_kernel {
            return Ok(cand);
        }
    }
    for cand in [K::Autograd, K::FuncTorchBatchedDecomposition] {
        if serves(cand) && op.has_kernel_for_dispatch_key(cand) {
            return Ok(cand);
        }
    }
    if op.has_backend_fallback(k) {
        return Ok(k);
    }
    Err(Error::not_implemented(format!(
        "could not find kernel for {op} at dispatch key DispatchKey.{k}"
    )))
}
