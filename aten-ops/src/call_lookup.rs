//! A root's backend fallbacks ([`RootFallback`]) and how they find the
//! [`OpOverload`] of the call they serve: a small per-thread cache in front
//! of the root's registry.

use std::cell::RefCell;
use std::sync::{Arc, Weak};

use aten_boxing::{BoxedOperator, KernelFunction};
use aten_dispatch::OperatorHandle;
use c10_core::{DispatchKey, Error, Result};

use crate::overload::OpOverload;
use crate::state::OpsInner;

/// How a fallback finds the overload object of the call it serves: a
/// small per-thread cache in front of the root's registry (no lock and no
/// upgrade of the root when it hits). A cached overload keeps its root's
/// shared state alive until the slot is reused or the thread ends.
pub(crate) struct CallLookup {
    root: Weak<OpsInner>,
    /// The address of the root's [`Shared`]: a cached overload holds its
    /// root's `Shared` alive, so equal addresses mean the same root.
    shared_addr: usize,
}

const CALL_CACHE_SLOTS: usize = 16;

thread_local! {
    static CALL_CACHE: RefCell<[Option<Arc<OpOverload>>; CALL_CACHE_SLOTS]> =
        const { RefCell::new([const { None }; CALL_CACHE_SLOTS]) };
}

impl CallLookup {
    pub(crate) fn new(root: &Arc<OpsInner>) -> CallLookup {
        CallLookup {
            root: Arc::downgrade(root),
            shared_addr: Arc::as_ptr(&root.shared) as usize,
        }
    }

    /// Runs `f` on the dispatcher's handle of the operator a fallback runs
    /// for, and its overload object.
    /// On a cache hit the object is lent from the cache (no reference
    /// count is taken); the cache stays readable by nested calls, and a
    /// nested miss simply does not cache.
    pub(crate) fn with_overload<R>(
        &self,
        op: &dyn BoxedOperator,
        f: impl FnOnce(&OperatorHandle, &OpOverload) -> Result<R>,
    ) -> Result<R> {
        let Some(handle) = op.as_any().downcast_ref::<OperatorHandle>() else {
            return Err(Error::internal(format!(
                "a torch.ops fallback was called for {} without its operator handle",
                op.operator_name()
            )));
        };
        let id = handle.entry_id();
        let slot = (id >> 4) % CALL_CACHE_SLOTS;
        let mut f = Some(f);
        let hit = CALL_CACHE.try_with(|c| {
            let cache = c.borrow();
            match cache[slot].as_deref() {
                Some(o) if o.handle().entry_id() == id && o.shared_addr() == self.shared_addr => {
                    f.take().map(|f| f(handle, o))
                }
                _ => None,
            }
        });
        if let Ok(Some(result)) = hit {
            return result;
        }
        let overload = self.lookup(handle)?;
        let _ = CALL_CACHE.try_with(|c| {
            if let Ok(mut cache) = c.try_borrow_mut() {
                cache[slot] = Some(Arc::clone(&overload));
            }
        });
        match f.take() {
            Some(f) => f(handle, &overload),
            None => Err(Error::internal("a call's overload was looked up twice")),
        }
    }

    fn lookup(&self, handle: &OperatorHandle) -> Result<Arc<OpOverload>> {
        let Some(root) = self.root.upgrade() else {
            return Err(Error::internal(format!(
                "{}: the torch.ops root of this dispatcher is gone",
                handle.operator_name()
            )));
        };
        match root.known_overload(handle) {
            Some(o) => Ok(o),
            None => root.overload_for(handle.operator_name()),
        }
    }
}

/// A backend fallback of a root: its key, its kernel (given the lookup of
/// the root's overloads), and who registered it, as dumps show.
pub(crate) struct RootFallback {
    pub(crate) key: DispatchKey,
    pub(crate) kernel: fn(CallLookup) -> KernelFunction,
    pub(crate) debug: &'static str,
}
