//! The thread-local autograd switches (`c10/core/GradMode.h`,
//! `c10/core/InferenceMode.h`): whether operators record a graph
//! (`GradMode`), and inference mode, which also stops version counting and
//! makes new tensors inference tensors (no autograd or ADInplaceOrView keys).
//!
//! The guards are RAII values that restore the previous state when dropped,
//! as PyTorch's `AutoGradMode`, `NoGradGuard` and `c10::InferenceMode` do;
//! they are not `Send` (the state they restore is this thread's).

use std::cell::Cell;
use std::marker::PhantomData;

use crate::dispatch_key::DispatchKey;
use crate::dispatch_key_set::AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW;
use crate::local_dispatch_key_set::{
    force_tls_local_dispatch_key_set, tls_local_dispatch_key_set, LocalDispatchKeySet,
};

thread_local! {
    static GRAD_ENABLED: Cell<bool> = const { Cell::new(true) };
    static INFERENCE: Cell<bool> = const { Cell::new(false) };
}

/// `GradMode`: whether autograd records operations on this thread.
#[derive(Debug)]
pub struct GradMode;

impl GradMode {
    /// `GradMode::is_enabled`.
    #[inline]
    pub fn is_enabled() -> bool {
        GRAD_ENABLED.with(Cell::get)
    }

    /// `GradMode::set_enabled`.
    #[inline]
    pub fn set_enabled(enabled: bool) {
        GRAD_ENABLED.with(|c| c.set(enabled));
    }
}

/// `AutoGradMode`: sets grad mode for the guard's lifetime
/// (`torch.set_grad_enabled`).
#[must_use = "grad mode is set only while the guard lives"]
#[derive(Debug)]
pub struct AutoGradMode {
    prev: bool,
    _not_send: PhantomData<*const ()>,
}

impl AutoGradMode {
    /// Sets grad mode to `enabled` until the guard drops.
    pub fn new(enabled: bool) -> AutoGradMode {
        let prev = GradMode::is_enabled();
        GradMode::set_enabled(enabled);
        AutoGradMode {
            prev,
            _not_send: PhantomData,
        }
    }
}

impl Drop for AutoGradMode {
    fn drop(&mut self) {
        GradMode::set_enabled(self.prev);
    }
}

/// `torch.no_grad()` (`NoGradGuard`).
#[doc(alias = "NoGradGuard")]
pub fn no_grad() -> AutoGradMode {
    AutoGradMode::new(false)
}

/// `torch.enable_grad()`.
pub fn enable_grad() -> AutoGradMode {
    AutoGradMode::new(true)
}

/// `c10::InferenceMode`: while enabled, grad mode is off, the autograd and
/// ADInplaceOrView keys are excluded, and new tensors are inference
/// tensors. Guards nest; `InferenceMode::new(false)` inside an enabled one
/// switches it off for its scope (PyTorch's `inference_mode(mode=False)`).
#[must_use = "inference mode is set only while the guard lives"]
#[derive(Debug)]
pub struct InferenceMode {
    prev_inference: bool,
    prev_grad: bool,
    prev_keys: LocalDispatchKeySet,
    _not_send: PhantomData<*const ()>,
}

impl InferenceMode {
    /// Enters (`enabled`) or leaves inference mode until the guard drops.
    pub fn new(enabled: bool) -> InferenceMode {
        let guard = InferenceMode {
            prev_inference: InferenceMode::is_enabled(),
            prev_grad: GradMode::is_enabled(),
            prev_keys: tls_local_dispatch_key_set(),
            _not_send: PhantomData,
        };
        INFERENCE.with(|c| c.set(enabled));
        GradMode::set_enabled(!enabled);
        let mut keys = guard.prev_keys;
        if enabled {
            keys.excluded = keys
                .excluded
                .union(AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW);
            keys.included = keys.included.remove(DispatchKey::ADInplaceOrView);
        } else {
            keys.excluded = keys
                .excluded
                .difference(AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW);
            keys.included = keys.included.add(DispatchKey::ADInplaceOrView);
        }
        force_tls_local_dispatch_key_set(keys);
        guard
    }

    /// `InferenceMode::is_enabled`.
    #[inline]
    pub fn is_enabled() -> bool {
        INFERENCE.with(Cell::get)
    }
}

impl Drop for InferenceMode {
    fn drop(&mut self) {
        INFERENCE.with(|c| c.set(self.prev_inference));
        GradMode::set_enabled(self.prev_grad);
        force_tls_local_dispatch_key_set(self.prev_keys);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::local_dispatch_key_set::{tls_excluded, tls_is_dispatch_key_excluded};

    /// Whether the thread excludes the autograd keys.
    fn autograd_excluded() -> bool {
        tls_excluded().has_all(AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW)
    }

    #[test]
    fn guards_nest_and_restore() {
        assert!(GradMode::is_enabled());
        {
            let _g = no_grad();
            assert!(!GradMode::is_enabled());
            {
                let _e = enable_grad();
                assert!(GradMode::is_enabled());
            }
            assert!(!GradMode::is_enabled());
        }
        assert!(GradMode::is_enabled());
        {
            let _i = InferenceMode::new(true);
            assert!(InferenceMode::is_enabled() && !GradMode::is_enabled());
            assert!(autograd_excluded());
            assert!(tls_is_dispatch_key_excluded(DispatchKey::ADInplaceOrView));
            {
                let _o = InferenceMode::new(false);
                assert!(!InferenceMode::is_enabled() && GradMode::is_enabled());
                assert!(!autograd_excluded());
            }
            assert!(autograd_excluded());
        }
        assert!(!InferenceMode::is_enabled() && GradMode::is_enabled());
        assert!(!autograd_excluded());
    }
}
