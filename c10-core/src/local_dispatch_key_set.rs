//! Thread-local dispatch state: the included and excluded key sets, and the
//! RAII guards that change them for a scope.
//!
//! Every dispatch ORs the thread's *included* set into the keys gathered from
//! the arguments and removes the *excluded* set (`computeDispatchKeySet`). A
//! new thread starts with [`DEFAULT_INCLUDED_SET`] (BackendSelect,
//! ADInplaceOrView) and [`DEFAULT_EXCLUDED_SET`] (the autocast keys).
//!
//! The guards record exactly which bits they changed and undo only those
//! bits when dropped, so they nest, tolerate being dropped out of order, and
//! restore the state when a scope is left by `?`, `return` or a panic. They
//! are `!Send`: a guard always restores the thread it was made on.

use std::cell::Cell;
use std::marker::PhantomData;

use crate::dispatch_key::DispatchKey;
use crate::dispatch_key_set::{
    DispatchKeySet, AUTOGRAD_DISPATCH_KEYSET, AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW,
    DEFAULT_EXCLUDED_SET, DEFAULT_INCLUDED_SET,
};

/// A snapshot of the thread's included and excluded sets
/// (`c10::impl::LocalDispatchKeySet`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LocalDispatchKeySet {
    /// Keys added to every dispatch on this thread.
    pub included: DispatchKeySet,
    /// Keys removed from every dispatch on this thread.
    pub excluded: DispatchKeySet,
}

thread_local! {
    static INCLUDED: Cell<u64> = const { Cell::new(DEFAULT_INCLUDED_SET.raw_repr()) };
    static EXCLUDED: Cell<u64> = const { Cell::new(DEFAULT_EXCLUDED_SET.raw_repr()) };
}

/// `tls_local_dispatch_key_set()`: the current thread's sets.
#[inline]
pub fn tls_local_dispatch_key_set() -> LocalDispatchKeySet {
    LocalDispatchKeySet {
        included: tls_included(),
        excluded: tls_excluded(),
    }
}

/// The current thread's included set.
#[inline]
pub fn tls_included() -> DispatchKeySet {
    DispatchKeySet::from_raw_repr(INCLUDED.with(Cell::get))
}

/// The current thread's excluded set.
#[inline]
pub fn tls_excluded() -> DispatchKeySet {
    DispatchKeySet::from_raw_repr(EXCLUDED.with(Cell::get))
}

/// `_force_tls_local_dispatch_key_set`: replace both sets (used to carry the
/// state into another thread, as PyTorch's `ThreadLocalState` does).
pub fn force_tls_local_dispatch_key_set(state: LocalDispatchKeySet) {
    INCLUDED.with(|c| c.set(state.included.raw_repr()));
    EXCLUDED.with(|c| c.set(state.excluded.raw_repr()));
}

/// `tls_is_dispatch_key_excluded(k)`.
pub fn tls_is_dispatch_key_excluded(k: DispatchKey) -> bool {
    tls_excluded().has(k)
}

/// `tls_is_dispatch_key_included(k)`.
pub fn tls_is_dispatch_key_included(k: DispatchKey) -> bool {
    tls_included().has(k)
}

/// `tls_is_dispatch_keyset_excluded(ks)`: every key of `ks` is excluded.
pub fn tls_is_dispatch_keyset_excluded(ks: DispatchKeySet) -> bool {
    tls_excluded().has_all(ks)
}

/// `tls_set_dispatch_key_excluded(k, desired)`.
pub fn tls_set_dispatch_key_excluded(k: DispatchKey, desired: bool) {
    set_key(&EXCLUDED, k, desired);
}

/// `tls_set_dispatch_key_included(k, desired)`.
pub fn tls_set_dispatch_key_included(k: DispatchKey, desired: bool) {
    set_key(&INCLUDED, k, desired);
}

/// `tls_set_dispatch_keyset_included(ks, desired)`: adds or removes every
/// key of `ks` at once.
pub fn tls_set_dispatch_keyset_included(ks: DispatchKeySet, desired: bool) {
    INCLUDED.with(|c| {
        let set = DispatchKeySet::from_raw_repr(c.get());
        let new = if desired { set | ks } else { set - ks };
        c.set(new.raw_repr());
    });
}

fn set_key(cell: &'static std::thread::LocalKey<Cell<u64>>, k: DispatchKey, desired: bool) {
    cell.with(|c| {
        let set = DispatchKeySet::from_raw_repr(c.get());
        let new = if desired { set.add(k) } else { set.remove(k) };
        c.set(new.raw_repr());
    });
}

/// Adds the bits of `keys` that the set lacks and returns them, so that the
/// caller can clear exactly those bits later.
fn add_bits(cell: &'static std::thread::LocalKey<Cell<u64>>, keys: DispatchKeySet) -> u64 {
    cell.with(|c| {
        let old = c.get();
        let added = keys.raw_repr() & !old;
        c.set(old | added);
        added
    })
}

fn clear_bits(cell: &'static std::thread::LocalKey<Cell<u64>>, bits: u64) {
    if bits != 0 {
        // `try_with`: during thread teardown the TLS may already be gone;
        // there is then nothing left to restore.
        let _ = cell.try_with(|c| c.set(c.get() & !bits));
    }
}

/// `IncludeDispatchKeyGuard`: adds keys to the thread's included set for the
/// guard's lifetime.
#[must_use = "the keys are included only while the guard lives"]
pub struct IncludeDispatchKeyGuard {
    added: u64,
    _not_send: PhantomData<*const ()>,
}

impl IncludeDispatchKeyGuard {
    /// Includes `keys` until the guard is dropped.
    pub fn new(keys: impl Into<DispatchKeySet>) -> IncludeDispatchKeyGuard {
        IncludeDispatchKeyGuard {
            added: add_bits(&INCLUDED, keys.into()),
            _not_send: PhantomData,
        }
    }
}

impl Drop for IncludeDispatchKeyGuard {
    fn drop(&mut self) {
        clear_bits(&INCLUDED, self.added);
    }
}

/// `ExcludeDispatchKeyGuard`: adds keys to the thread's excluded set for the
/// guard's lifetime.
#[must_use = "the keys are excluded only while the guard lives"]
pub struct ExcludeDispatchKeyGuard {
    added: u64,
    _not_send: PhantomData<*const ()>,
}

impl ExcludeDispatchKeyGuard {
    /// Excludes `keys` until the guard is dropped.
    pub fn new(keys: impl Into<DispatchKeySet>) -> ExcludeDispatchKeyGuard {
        ExcludeDispatchKeyGuard {
            added: add_bits(&EXCLUDED, keys.into()),
            _not_send: PhantomData,
        }
    }
}

impl Drop for ExcludeDispatchKeyGuard {
    fn drop(&mut self) {
        clear_bits(&EXCLUDED, self.added);
    }
}

/// `AutoDispatchBelowAutograd`: excludes the autograd keys, so calls in the
/// scope go straight to the keys below autograd (what an autograd kernel
/// does before redispatching).
#[must_use = "autograd is skipped only while the guard lives"]
pub struct AutoDispatchBelowAutograd {
    _guard: ExcludeDispatchKeyGuard,
}

impl AutoDispatchBelowAutograd {
    /// Excludes the autograd keys until the guard is dropped.
    pub fn new() -> AutoDispatchBelowAutograd {
        AutoDispatchBelowAutograd {
            _guard: ExcludeDispatchKeyGuard::new(AUTOGRAD_DISPATCH_KEYSET),
        }
    }
}

impl Default for AutoDispatchBelowAutograd {
    fn default() -> Self {
        AutoDispatchBelowAutograd::new()
    }
}

/// `AutoDispatchBelowADInplaceOrView`: excludes the autograd keys and
/// ADInplaceOrView.
#[must_use = "autograd and ADInplaceOrView are skipped only while the guard lives"]
pub struct AutoDispatchBelowADInplaceOrView {
    _guard: ExcludeDispatchKeyGuard,
}

impl AutoDispatchBelowADInplaceOrView {
    /// Excludes the autograd keys and ADInplaceOrView until dropped.
    pub fn new() -> AutoDispatchBelowADInplaceOrView {
        AutoDispatchBelowADInplaceOrView {
            _guard: ExcludeDispatchKeyGuard::new(AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW),
        }
    }
}

impl Default for AutoDispatchBelowADInplaceOrView {
    fn default() -> Self {
        AutoDispatchBelowADInplaceOrView::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults() {
        let s = tls_local_dispatch_key_set();
        assert_eq!(s.included, DEFAULT_INCLUDED_SET);
        assert_eq!(s.excluded, DEFAULT_EXCLUDED_SET);
        assert!(tls_is_dispatch_key_included(DispatchKey::BackendSelect));
        assert!(tls_is_dispatch_key_excluded(DispatchKey::AutocastCPU));
    }

    #[test]
    fn set_and_unset_single_keys() {
        let before = tls_local_dispatch_key_set();
        tls_set_dispatch_key_excluded(DispatchKey::Python, true);
        assert!(tls_is_dispatch_key_excluded(DispatchKey::Python));
        tls_set_dispatch_key_excluded(DispatchKey::Python, false);
        tls_set_dispatch_key_included(DispatchKey::Tracer, true);
        assert!(tls_is_dispatch_key_included(DispatchKey::Tracer));
        tls_set_dispatch_key_included(DispatchKey::Tracer, false);
        assert_eq!(tls_local_dispatch_key_set(), before);
    }
}
