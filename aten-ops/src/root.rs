//! The root of the `torch.ops` tree: [`ops()`] for the global dispatcher,
//! [`Ops::new`] for an isolated one.
//!
//! A root owns its namespaces (created on first use, as `torch.ops.<ns>`
//! is), the registry of every [`OpOverload`] made (so the Python dispatcher
//! finds the host kernels of the operator a call is for), the set of
//! operator/key pairs runtime libraries implemented (`torch.library`'s
//! `_impls`), and its registrations on the dispatcher: the backend
//! fallbacks of `PythonDispatcher` (host kernels), `Python` (dispatch modes),
//! `PythonTLSSnapshot`, `Functionalize` and `PreDispatch`, and a listener that counts changes of defs,
//! which tells packets when to refresh their overload lists.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};

use aten_boxing::schema::OperatorName;
use aten_boxing::{BoxedOperator, KernelFunction};
use aten_dispatch::{Dispatcher, OperatorHandle, RegistrationEvent, RegistrationHandle};
use c10_core::{DispatchKey, Error, Result};

use crate::higher_order::HigherOrderNamespace;
use crate::namespace::OpNamespace;
use crate::overload::OpOverload;
use crate::{functionalize, pre_dispatch, python_dispatcher, python_key};

/// What every object of a root shares: the dispatcher and the count of def
/// changes seen so far.
pub(crate) struct Shared {
    pub(crate) dispatcher: Dispatcher,
    pub(crate) generation: Arc<AtomicU64>,
}

impl Shared {
    /// The current count of def changes.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }
}

pub(crate) struct OpsInner {
    pub(crate) shared: Arc<Shared>,
    namespaces: Mutex<HashMap<String, Arc<OpNamespace>>>,
    /// Every overload made, by its handle's entry id (the fallbacks look
    /// calls up here).
    overloads: RwLock<HashMap<usize, Arc<OpOverload>, BuildHasherDefault<EntryIdHasher>>>,
    /// `ns/name/key` for every kernel a runtime library registered
    /// (`torch.library._impls`).
    library_impls: Mutex<HashSet<String>>,
    registrations: Mutex<Vec<RegistrationHandle>>,
}

impl OpsInner {
    pub(crate) fn namespace(self: &Arc<Self>, name: &str) -> Arc<OpNamespace> {
        let mut namespaces = self.namespaces.lock().unwrap_or_else(|p| p.into_inner());
        Arc::clone(
            namespaces
                .entry(name.to_string())
                .or_insert_with(|| Arc::new(OpNamespace::new(name, Arc::downgrade(self)))),
        )
    }

    /// The `ns/name/key` set of runtime libraries' kernels.
    pub(crate) fn library_impls(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.library_impls.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The overload object of `name`, through its namespace and packet (so
    /// an operator without a def is the namespace's error).
    pub(crate) fn overload_for(self: &Arc<Self>, name: &OperatorName) -> Result<Arc<OpOverload>> {
        let (ns, base) = split_qualified(name.name())?;
        let overload = if name.overload_name().is_empty() {
            "default"
        } else {
            name.overload_name()
        };
        self.namespace(ns).op(base)?.overload(overload)
    }

    /// Registers a new overload object, or returns the one registered
    /// first (two threads may make one at once).
    pub(crate) fn remember_overload(&self, overload: Arc<OpOverload>) -> Arc<OpOverload> {
        let mut map = self.overloads.write().unwrap_or_else(|p| p.into_inner());
        Arc::clone(map.entry(overload.handle().entry_id()).or_insert(overload))
    }

    /// The overload object of the operator `handle` reaches, if made.
    pub(crate) fn known_overload(&self, handle: &OperatorHandle) -> Option<Arc<OpOverload>> {
        self.overloads
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&handle.entry_id())
            .cloned()
    }

    /// The overload object of the operator named `name`, if made (a scan:
    /// for deregistrations, which are rare).
    pub(crate) fn known_overload_named(&self, name: &OperatorName) -> Option<Arc<OpOverload>> {
        self.overloads
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .find(|o| o.operator_name() == name)
            .cloned()
    }
}

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

/// Hashes an entry id (an address): its bits are already spread, so one
/// multiplication mixes them.
#[derive(Default)]
pub(crate) struct EntryIdHasher(u64);

impl std::hash::Hasher for EntryIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_usize(&mut self, id: usize) {
        self.0 = (id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// `ns::name` split at the namespace.
pub(crate) fn split_qualified(name: &str) -> Result<(&str, &str)> {
    name.split_once("::")
        .ok_or_else(|| Error::runtime(format!("operator name {name} has no namespace")))
}

/// The root of an operator tree (`torch.ops`). Cheap to clone.
#[derive(Clone)]
pub struct Ops {
    pub(crate) inner: Arc<OpsInner>,
}

impl Ops {
    /// A root for `dispatcher`. It registers the backend fallbacks of
    /// `PythonDispatcher` (host kernels), `Python` (dispatch modes),
    /// `PythonTLSSnapshot` (a fallthrough), `Functionalize` and
    /// `PreDispatch` (pre-dispatch modes) there, so a dispatcher has at
    /// most one root: a second fails with the dispatcher's duplicate-fallback
    /// error.
    pub fn new(dispatcher: &Dispatcher) -> Result<Ops> {
        let (ops, fallback) = Ops::build(dispatcher);
        fallback.map(|()| ops)
    }

    /// A root, and whether its `PythonDispatcher` fallback could be
    /// registered (without it, host kernels never run).
    fn build(dispatcher: &Dispatcher) -> (Ops, Result<()>) {
        let generation = Arc::new(AtomicU64::new(0));
        let inner = Arc::new(OpsInner {
            shared: Arc::new(Shared {
                dispatcher: dispatcher.clone(),
                generation: Arc::clone(&generation),
            }),
            namespaces: Mutex::new(HashMap::new()),
            overloads: RwLock::new(HashMap::default()),
            library_impls: Mutex::new(HashSet::new()),
            registrations: Mutex::new(Vec::new()),
        });
        let weak = Arc::downgrade(&inner);
        let listener = dispatcher.add_registration_listener(move |event| {
            generation.fetch_add(1, Ordering::AcqRel);
            // A def that goes away takes its host kernels along: a later
            // def of the name starts clean, as a fresh `OpOverload` would.
            if let RegistrationEvent::OperatorDeregistered(name) = event {
                if let Some(overload) = weak.upgrade().and_then(|r| r.known_overload_named(name)) {
                    overload.forget_host_kernels();
                }
            }
        });
        let fallback = dispatcher.register_fallback(
            DispatchKey::PythonDispatcher,
            KernelFunction::make_from_boxed_function(python_dispatcher::fallback_kernel(
                CallLookup::new(&inner),
            )),
            "registered by aten_ops::Ops (the Python dispatcher)",
        );
        let mode_fallbacks = dispatcher
            .register_fallback(
                DispatchKey::Python,
                KernelFunction::make_from_boxed_function(python_key::fallback_kernel(
                    CallLookup::new(&inner),
                )),
                "registered by aten_ops::Ops (dispatch modes)",
            )
            .and_then(|python| {
                let snapshot = dispatcher.register_fallback(
                    DispatchKey::PythonTLSSnapshot,
                    KernelFunction::make_fallthrough(),
                    "registered by aten_ops::Ops (dispatch modes)",
                )?;
                let functionalize = dispatcher.register_fallback(
                    DispatchKey::Functionalize,
                    KernelFunction::make_from_boxed_function(
                        functionalize::kernel::fallback_kernel(CallLookup::new(&inner)),
                    ),
                    "registered by aten_ops::Ops (functionalization)",
                )?;
                let pre_dispatch = dispatcher.register_fallback(
                    DispatchKey::PreDispatch,
                    KernelFunction::make_from_boxed_function(pre_dispatch::fallback_kernel(
                        CallLookup::new(&inner),
                    )),
                    "registered by aten_ops::Ops (pre-dispatch modes)",
                )?;
                Ok([python, snapshot, functionalize, pre_dispatch])
            });
        let mut registrations = inner
            .registrations
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        registrations.push(listener);
        let fallback = fallback.and_then(|handle| {
            registrations.push(handle);
            registrations.extend(mode_fallbacks?);
            Ok(())
        });
        drop(registrations);
        (Ops { inner }, fallback)
    }

    /// The dispatcher this root reads.
    pub fn dispatcher(&self) -> &Dispatcher {
        &self.inner.shared.dispatcher
    }

    /// `torch.ops.<name>`: the namespace (any name; its operators are
    /// resolved when looked up).
    pub fn namespace(&self, name: &str) -> Arc<OpNamespace> {
        self.inner.namespace(name)
    }

    /// `torch.ops.aten`.
    pub fn aten(&self) -> Arc<OpNamespace> {
        self.namespace("aten")
    }

    /// `torch.ops.higher_order`: the process-wide higher-order operators.
    pub fn higher_order(&self) -> HigherOrderNamespace {
        HigherOrderNamespace
    }

    /// The overload named `ns::name.overload` (`ns::name` for the default
    /// overload).
    pub fn overload(&self, qualified: &str) -> Result<Arc<OpOverload>> {
        let name = OperatorName::parse(qualified)?;
        self.inner.overload_for(&name)
    }

    /// Whether both are the same root.
    pub fn is_same(&self, other: &Ops) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl std::fmt::Debug for Ops {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("torch.ops")
    }
}

/// `torch.ops`: the root over [`Dispatcher::global`], made on first use.
pub fn ops() -> &'static Ops {
    static GLOBAL: OnceLock<Ops> = OnceLock::new();
    GLOBAL.get_or_init(|| {
        let (ops, fallback) = Ops::build(Dispatcher::global());
        if let Err(e) = fallback {
            c10_core::torch_warn!(
                "torch.ops could not install the Python dispatcher: {}",
                e.message()
            );
        }
        ops
    })
}
