//! `OpOverload` (`torch.ops.aten.add.Tensor`): one operator of the
//! dispatcher, with PyTorch's Python-side API: calls, redispatch, a call
//! straight to the kernel at a key, `decompose`, and host kernels
//! (`py_impl`) that the Python dispatcher runs in place of the table's
//! kernel for their key.
//!
//! Host kernels and the per-key dispatch cache are read only on the Python
//! dispatcher's path; a plain call is the dispatcher's boxed call and
//! nothing else.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};

use aten_boxing::schema::{FunctionSchema, OperatorName, Type};
use aten_boxing::{IValue, Stack};
use aten_dispatch::OperatorHandle;
use c10_core::published_cell::PublishedCell;
use c10_core::{DispatchKey, DispatchKeySet, Error, Result};

use crate::arguments::{bind_arguments, Kwargs};
use crate::packet::OpOverloadPacket;
use crate::resolve_key::{resolve_key, KernelTable};
use crate::state::Shared;

/// A host-language kernel on an overload (a `py_impl` function): it gets the
/// overload, the key set the call was dispatching on (without
/// `PythonDispatcher`) and the stack. To run what lies below its key `k`,
/// it redispatches with `keys & DispatchKeySet::full_after(k)`.
pub type HostKernel =
    Arc<dyn Fn(&OpOverload, DispatchKeySet, &mut Stack) -> Result<()> + Send + Sync>;

/// Which Python class an overload is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OverloadKind {
    /// `OpOverload`.
    OpOverload,
    /// `TorchBindOpOverload`: an argument is a custom-class object.
    #[doc(alias = "TorchBindOpOverload")]
    TorchBind,
}

/// What the Python dispatcher runs for a key (`_get_dispatch`'s result):
/// a host kernel, or the dispatcher's kernel at a key.
#[derive(Clone)]
pub(crate) enum Handler {
    Host(HostKernel),
    Key(DispatchKey),
}

/// Handlers by dispatch key, valid for one version of the operator's table.
struct DispatchCache {
    table_version: u64,
    handlers: HashMap<DispatchKey, Handler>,
}

/// One overload of an operator (PyTorch's `OpOverload`).
pub struct OpOverload {
    packet: Weak<OpOverloadPacket>,
    handle: OperatorHandle,
    shared: Arc<Shared>,
    /// The def, checked against the dispatcher at count of def changes
    /// `schema_checked` (republished only when it changed: a cell keeps
    /// every value it held).
    schema: PublishedCell<Option<Arc<FunctionSchema>>>,
    schema_checked: AtomicU64,
    schema_refresh: Mutex<()>,
    host_kernels: RwLock<HashMap<DispatchKey, HostKernel>>,
    dispatch_cache: Mutex<DispatchCache>,
    /// The functional variant functionalization found for this operator,
    /// with the count of def changes it was found at.
    functional_variant: Mutex<Option<(u64, Arc<OpOverload>)>>,
}

impl OpOverload {
    pub(crate) fn new(
        packet: Weak<OpOverloadPacket>,
        handle: OperatorHandle,
        shared: Arc<Shared>,
    ) -> OpOverload {
        OpOverload {
            packet,
            handle,
            shared,
            schema: PublishedCell::new(None),
            schema_checked: AtomicU64::new(u64::MAX),
            schema_refresh: Mutex::new(()),
            host_kernels: RwLock::new(HashMap::new()),
            dispatch_cache: Mutex::new(DispatchCache {
                table_version: u64::MAX,
                handlers: HashMap::new(),
            }),
            functional_variant: Mutex::new(None),
        }
    }

    /// The functional variant of this operator, found by `find` once per
    /// count of def changes (a def change may add or remove one).
    pub(crate) fn functional_variant_with(
        &self,
        find: impl FnOnce() -> Result<Arc<OpOverload>>,
    ) -> Result<Arc<OpOverload>> {
        let generation = self.shared.generation();
        let cached = self
            .functional_variant
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .filter(|(g, _)| *g == generation)
            .map(|(_, v)| Arc::clone(v));
        if let Some(v) = cached {
            return Ok(v);
        }
        // Found without the lock held: finding looks overloads up.
        let found = find()?;
        *self
            .functional_variant
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some((generation, Arc::clone(&found)));
        Ok(found)
    }

    /// The address of the root's shared state (identifies the root).
    pub(crate) fn shared_addr(&self) -> usize {
        Arc::as_ptr(&self.shared) as usize
    }

    /// The dispatcher's handle of this operator.
    pub fn handle(&self) -> &OperatorHandle {
        &self.handle
    }

    /// The packet this overload belongs to (`overloadpacket`).
    pub fn overload_packet(&self) -> Option<Arc<OpOverloadPacket>> {
        self.packet.upgrade()
    }

    /// The root this overload was looked up in (`None` once it is gone).
    pub fn root(&self) -> Option<crate::Ops> {
        self.packet.upgrade()?.root()
    }

    /// `ns::name.overload`.
    pub fn operator_name(&self) -> &OperatorName {
        self.handle.operator_name()
    }

    /// `name()`: `ns::name` or `ns::name.overload`.
    pub fn name(&self) -> String {
        self.operator_name().to_string()
    }

    /// The overload name, `"default"` for the unnamed one.
    pub fn overload_name(&self) -> &str {
        match self.operator_name().overload_name() {
            "" => "default",
            name => name,
        }
    }

    /// The namespace.
    pub fn namespace(&self) -> &str {
        self.operator_name().namespace().unwrap_or("")
    }

    /// The operator's name without namespace and overload (`_opname`).
    pub fn op_name(&self) -> &str {
        self.operator_name().base_name()
    }

    /// The def's schema; an error once the def is gone.
    pub fn schema(&self) -> Result<Arc<FunctionSchema>> {
        self.current_schema()
            .cloned()
            .ok_or_else(|| self.no_schema())
    }

    pub(crate) fn no_schema(&self) -> Error {
        Error::runtime(format!(
            "Tried to access the schema for {} which doesn't have a schema registered yet",
            self.operator_name()
        ))
    }

    pub(crate) fn current_schema(&self) -> Option<&Arc<FunctionSchema>> {
        let generation = self.shared.generation();
        if self.schema_checked.load(Ordering::Acquire) == generation {
            return self.schema.load().as_ref();
        }
        let _refresh = self
            .schema_refresh
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let fresh = self.handle.schema();
        let same = match (self.schema.load(), &fresh) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        if !same {
            self.schema.store(fresh);
        }
        self.schema_checked.store(generation, Ordering::Release);
        self.schema.load().as_ref()
    }

    /// The def's tags.
    pub fn tags(&self) -> Vec<String> {
        self.handle.tags()
    }

    /// `is_view`: an argument is aliased without being written.
    pub fn is_view(&self) -> bool {
        self.current_schema().is_some_and(|s| {
            s.arguments()
                .iter()
                .any(|a| a.alias_info().is_some_and(|i| !i.is_write()))
        })
    }

    /// `OpOverload` or `TorchBindOpOverload`.
    pub fn kind(&self) -> OverloadKind {
        let takes_object = self.current_schema().is_some_and(|s| {
            s.arguments()
                .iter()
                .any(|a| matches!(a.ty(), Type::Class(_)))
        });
        if takes_object {
            OverloadKind::TorchBind
        } else {
            OverloadKind::OpOverload
        }
    }

    /// A call with the whole argument list on `stack` (returns replace it):
    /// the dispatcher's `callBoxed`.
    #[inline]
    pub fn call_boxed(&self, stack: &mut Stack) -> Result<()> {
        self.handle.call_boxed(stack)
    }

    /// `__call__`: binds positional and keyword arguments to the schema
    /// (defaults filled in, types checked) and calls; the returns.
    pub fn call(&self, args: &[IValue], kwargs: Kwargs<'_>) -> Result<Vec<IValue>> {
        let mut stack = Stack::with_capacity(8);
        self.bind(args, kwargs, &mut stack)?;
        self.call_boxed(&mut stack)?;
        Ok(stack)
    }

    fn bind(&self, args: &[IValue], kwargs: Kwargs<'_>, stack: &mut Stack) -> Result<()> {
        let schema = self
            .current_schema()
            .ok_or_else(|| self.schema().unwrap_err())?;
        bind_arguments(schema, args, kwargs, stack)
    }

    /// `redispatch(keyset, ...)`: continues a call with `keys`.
    pub fn redispatch(&self, keys: DispatchKeySet, stack: &mut Stack) -> Result<()> {
        self.handle.redispatch_boxed(keys, stack)
    }

    /// `_op_dk(k, ...)` / `callWithDispatchKey`: runs the kernel registered
    /// at `k` (an alias key included), else `k`'s backend fallback, without
    /// consulting the computed table.
    #[doc(alias = "callBoxedForDispatchKey", alias = "_dispatch_call")]
    pub fn call_with_dispatch_key(&self, k: DispatchKey, stack: &mut Stack) -> Result<()> {
        self.handle.call_boxed_for_dispatch_key(k, stack)
    }

    /// `decompose(...)`: runs the CompositeImplicitAutograd kernel (a host
    /// kernel registered there first); `None` when there is none (PyTorch
    /// returns `NotImplemented`).
    pub fn decompose(&self, args: &[IValue], kwargs: Kwargs<'_>) -> Result<Option<Vec<IValue>>> {
        let cia = DispatchKey::CompositeImplicitAutograd;
        let host = self.host_kernel(cia);
        if host.is_none() && !self.handle.has_kernel_for_dispatch_key(cia) {
            return Ok(None);
        }
        let mut stack = Stack::with_capacity(8);
        self.bind(args, kwargs, &mut stack)?;
        match host {
            Some(f) => {
                let keys = self.handle.dispatch_key_set_boxed(&stack)?;
                f(self, keys, &mut stack)?
            }
            None => self.call_with_dispatch_key(cia, &mut stack)?,
        }
        Ok(Some(stack))
    }

    /// `has_kernel_for_dispatch_key(k)`: a host kernel at `k`, or a
    /// dispatcher kernel registered at `k`.
    pub fn has_kernel_for_dispatch_key(&self, k: DispatchKey) -> bool {
        self.host_kernel(k).is_some() || self.handle.has_kernel_for_dispatch_key(k)
    }

    /// `has_kernel_for_any_dispatch_key(ks)`: a dispatcher kernel, or a
    /// host kernel, at a non-alias key in `ks`.
    pub fn has_kernel_for_any_dispatch_key(&self, ks: DispatchKeySet) -> bool {
        self.handle.has_kernel_for_any_dispatch_key(ks)
            || self
                .read_host_kernels()
                .keys()
                .any(|k| !k.is_alias() && ks.has(*k))
    }

    /// `py_impl(k)(f)`: `f` runs in place of the dispatcher's kernel for
    /// `k` when a call reaches `k` through the Python dispatcher. PyTorch's
    /// errors for the `Python` key and for a second kernel at one key.
    pub fn py_impl(
        &self,
        k: DispatchKey,
        f: impl Fn(&OpOverload, DispatchKeySet, &mut Stack) -> Result<()> + Send + Sync + 'static,
    ) -> Result<()> {
        let mut kernels = self.host_kernels.write().unwrap_or_else(|p| p.into_inner());
        check_new_py_impl(k, kernels.contains_key(&k), &self.name())?;
        kernels.insert(k, Arc::new(f));
        drop(kernels);
        self.clear_dispatch_cache();
        Ok(())
    }

    /// Removes the host kernel at `k` (what dropping a library's `py_impl`
    /// registration does); whether there was one.
    pub fn remove_py_impl(&self, k: DispatchKey) -> bool {
        let removed = self
            .host_kernels
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&k)
            .is_some();
        self.clear_dispatch_cache();
        removed
    }

    fn host_kernel(&self, k: DispatchKey) -> Option<HostKernel> {
        self.read_host_kernels().get(&k).cloned()
    }

    fn read_host_kernels(
        &self,
    ) -> std::sync::RwLockReadGuard<'_, HashMap<DispatchKey, HostKernel>> {
        self.host_kernels.read().unwrap_or_else(|p| p.into_inner())
    }

    /// `_dispatch_cache.clear()`.
    pub fn clear_dispatch_cache(&self) {
        self.lock_cache().handlers.clear();
    }

    fn lock_cache(&self) -> std::sync::MutexGuard<'_, DispatchCache> {
        self.dispatch_cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// The keys with a cached handler, sorted (for tests and dumps).
    pub fn cached_dispatch_keys(&self) -> Vec<DispatchKey> {
        let mut keys: Vec<DispatchKey> = self.lock_cache().handlers.keys().copied().collect();
        keys.sort_by_key(|k| k.to_string());
        keys
    }

    /// `_get_dispatch(k)`: the handler for `k`, from the cache or resolved
    /// (`resolve_key`, then the host kernel at the resolved key if any).
    /// A change of the operator's table empties the cache first.
    pub(crate) fn get_dispatch(&self, k: DispatchKey) -> Result<Handler> {
        // Resolved under the cache's lock (order: cache, host kernels, the
        // dispatcher), so a `py_impl` that clears the cache cannot be
        // overtaken by a handler resolved before it.
        let version = self.handle.table_version();
        let mut cache = self.lock_cache();
        if cache.table_version != version {
            cache.handlers.clear();
            cache.table_version = version;
        }
        if let Some(handler) = cache.handlers.get(&k) {
            return Ok(handler.clone());
        }
        let resolved = resolve_key(self, k)?;
        let handler = match self.host_kernel(resolved) {
            Some(f) => Handler::Host(f),
            None => Handler::Key(resolved),
        };
        cache.handlers.insert(k, handler.clone());
        Ok(handler)
    }

    /// Forgets the host kernels (the operator's def went away: a new def
    /// starts without them, as a fresh `OpOverload` does in PyTorch).
    pub(crate) fn forget_host_kernels(&self) {
        self.host_kernels
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        self.clear_dispatch_cache();
    }
}

/// `OperatorBase.py_impl`'s checks, shared by overloads and higher-order
/// operators: no kernel at `Python` (a mode's job), and no second kernel at
/// one key (`taken`).
pub(crate) fn check_new_py_impl(k: DispatchKey, taken: bool, op_name: &str) -> Result<()> {
    if k == DispatchKey::Python {
        return Err(Error::runtime(
            "Please register a mode for the DispatchKey.Python key instead.",
        ));
    }
    if taken {
        return Err(Error::runtime(format!(
            "Trying to override a python impl for DispatchKey.{k} on operator {op_name}"
        )));
    }
    Ok(())
}

impl KernelTable for OpOverload {
    fn has_kernel_for_dispatch_key(&self, k: DispatchKey) -> bool {
        OpOverload::has_kernel_for_dispatch_key(self, k)
    }

    fn has_kernel_for_any_dispatch_key(&self, ks: DispatchKeySet) -> bool {
        OpOverload::has_kernel_for_any_dispatch_key(self, ks)
    }

    fn has_backend_fallback(&self, k: DispatchKey) -> bool {
        self.shared
            .dispatcher
            .has_backend_fallback_for_dispatch_key(k)
    }
}

impl std::fmt::Display for OpOverload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}.{}.{}",
            self.namespace(),
            self.op_name(),
            self.overload_name()
        )
    }
}

impl std::fmt::Debug for OpOverload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "<OpOverload(op='{}.{}', overload='{}')>",
            self.namespace(),
            self.op_name(),
            self.overload_name()
        )
    }
}
