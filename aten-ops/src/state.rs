//! What the objects of one `torch.ops` root share: the dispatcher and the
//! count of def changes ([`Shared`]), and the root's own state
//! ([`OpsInner`]): its namespaces, the registry of every [`OpOverload`]
//! made (so the fallbacks find the overload a call is for), the operator
//! and key pairs runtime libraries implemented, and its registrations on
//! the dispatcher.

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use aten_boxing::schema::OperatorName;
use aten_dispatch::{Dispatcher, OperatorHandle, RegistrationHandle};
use c10_core::{Error, Result};

use crate::namespace::OpNamespace;
use crate::overload::OpOverload;

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
    /// A root's state over `dispatcher`, counting def changes in
    /// `generation`.
    pub(crate) fn new(dispatcher: &Dispatcher, generation: Arc<AtomicU64>) -> Arc<OpsInner> {
        Arc::new(OpsInner {
            shared: Arc::new(Shared {
                dispatcher: dispatcher.clone(),
                generation,
            }),
            namespaces: Mutex::new(HashMap::new()),
            overloads: RwLock::new(HashMap::default()),
            library_impls: Mutex::new(HashSet::new()),
            registrations: Mutex::new(Vec::new()),
        })
    }

    /// Keeps `handle` (a registration of the root's) for as long as the
    /// root lives.
    pub(crate) fn keep_registration(&self, handle: RegistrationHandle) {
        self.registrations
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(handle);
    }

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
