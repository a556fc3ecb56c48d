//! The root of the `torch.ops` tree: [`ops()`] for the global dispatcher,
//! [`Ops::new`] for an isolated one.
//!
//! A root owns its state (`state`: its namespaces, created on first use as
//! `torch.ops.<ns>` is, the registry of every [`OpOverload`] made, the
//! operator/key pairs runtime libraries implemented) and its registrations
//! on the dispatcher: the backend fallbacks `fallbacks` lists
//! (`PythonDispatcher`, `Python`, `PythonTLSSnapshot`, `Functionalize`,
//! `PreDispatch`), and a listener that counts changes of defs, which tells
//! packets when to refresh their overload lists.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use aten_boxing::schema::OperatorName;
use aten_dispatch::{Dispatcher, RegistrationEvent};
use c10_core::Result;

use crate::call_lookup::CallLookup;
use crate::fallbacks::ROOT_FALLBACKS;
use crate::higher_order::HigherOrderNamespace;
use crate::namespace::OpNamespace;
use crate::overload::OpOverload;
use crate::state::OpsInner;

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
        let inner = OpsInner::new(dispatcher, Arc::clone(&generation));
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
        inner.keep_registration(listener);
        let kernels = ROOT_FALLBACKS
            .iter()
            .map(|f| {
                (
                    f.key,
                    (f.kernel)(CallLookup::new(&inner)),
                    Arc::from(f.debug),
                )
            })
            .collect();
        // One registration for all: every operator's table is published
        // once for the five fallbacks.
        let registered = dispatcher.register_fallbacks(kernels).map(|handles| {
            for handle in handles {
                inner.keep_registration(handle);
            }
        });
        (Ops { inner }, registered)
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
