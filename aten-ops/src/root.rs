//! The root of the `torch.ops` tree: [`ops()`] for the global dispatcher,
//! [`Ops::new`] for an isolated one.
//!
//! A root owns its namespaces (created on first use, as `torch.ops.<ns>`
//! is), the registry of every [`OpOverload`] made (so the Python dispatcher
//! finds the host kernels of the operator a call is for), the set of
//! operator/key pairs runtime libraries implemented (`torch.library`'s
//! `_impls`), and its registrations on the dispatcher: the backend
//! fallbacks of `PythonDispatcher` (host kernels), `Python` (dispatch modes)
//! and `PythonTLSSnapshot`, and a listener that counts changes of defs,
//! which tells packets when to refresh their overload lists.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use aten_boxing::schema::OperatorName;
use aten_boxing::KernelFunction;
use aten_dispatch::{Dispatcher, RegistrationEvent, RegistrationHandle};
use c10_core::{DispatchKey, Error, Result};

use crate::higher_order::HigherOrderNamespace;
use crate::namespace::OpNamespace;
use crate::overload::OpOverload;
use crate::{python_dispatcher, python_key};

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
    overloads: RwLock<HashMap<OperatorName, Arc<OpOverload>>>,
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
        Arc::clone(
            map.entry(overload.operator_name().clone())
                .or_insert(overload),
        )
    }

    pub(crate) fn known_overload(&self, name: &OperatorName) -> Option<Arc<OpOverload>> {
        self.read_overloads().get(name).cloned()
    }

    fn read_overloads(
        &self,
    ) -> std::sync::RwLockReadGuard<'_, HashMap<OperatorName, Arc<OpOverload>>> {
        self.overloads.read().unwrap_or_else(|p| p.into_inner())
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
    /// `PythonDispatcher` (host kernels), `Python` (dispatch modes) and
    /// `PythonTLSSnapshot` (a fallthrough) there, so a dispatcher has at
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
            overloads: RwLock::new(HashMap::new()),
            library_impls: Mutex::new(HashSet::new()),
            registrations: Mutex::new(Vec::new()),
        });
        let weak = Arc::downgrade(&inner);
        let listener = dispatcher.add_registration_listener(move |event| {
            generation.fetch_add(1, Ordering::AcqRel);
            // A def that goes away takes its host kernels along: a later
            // def of the name starts clean, as a fresh `OpOverload` would.
            if let RegistrationEvent::OperatorDeregistered(name) = event {
                if let Some(overload) = weak.upgrade().and_then(|r| r.known_overload(name)) {
                    overload.forget_host_kernels();
                }
            }
        });
        let fallback = dispatcher.register_fallback(
            DispatchKey::PythonDispatcher,
            KernelFunction::make_from_boxed_function(python_dispatcher::fallback_kernel(
                Arc::downgrade(&inner),
            )),
            "registered by aten_ops::Ops (the Python dispatcher)",
        );
        let mode_fallbacks = dispatcher
            .register_fallback(
                DispatchKey::Python,
                KernelFunction::make_from_boxed_function(python_key::fallback_kernel(
                    Arc::downgrade(&inner),
                )),
                "registered by aten_ops::Ops (dispatch modes)",
            )
            .and_then(|python| {
                let snapshot = dispatcher.register_fallback(
                    DispatchKey::PythonTLSSnapshot,
                    KernelFunction::make_fallthrough(),
                    "registered by aten_ops::Ops (dispatch modes)",
                )?;
                Ok([python, snapshot])
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
