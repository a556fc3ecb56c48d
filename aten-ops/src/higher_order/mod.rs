//! Higher-order operators (PyTorch's `HigherOrderOperator`): operators
//! without a registered schema whose arguments include functions. They live
//! in the `higher_order` namespace, each with its own non-fallthrough key
//! set and per-key kernels registered like `py_impl`, and dispatch as
//! PyTorch's `HigherOrderOperator.dispatch` does: the key set of the
//! arguments' tensors plus the thread's included keys, minus its excluded
//! keys, masked by the operator's non-fallthrough keys; its highest key;
//! the kernel registered there or at the alias key `resolve_key` picks.
//!
//! Shipped: [`cond`], [`while_loop`] and [`map`] (operators `cond`,
//! `while_loop` and `map_impl`), and `wrap_with_set_grad_enabled` (a
//! function run with grad mode set, as exported programs call it).

mod cond;
mod functionalize;
mod map;
mod while_loop;
mod wrap;

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use aten_boxing::IValue;
use aten_dispatch::{ivalue_key_set, Dispatcher};
use c10_core::local_dispatch_key_set::tls_local_dispatch_key_set;
use c10_core::{DispatchKey, DispatchKeySet, Error, Result};

use crate::modes::{self, TorchDispatchMode};
use crate::overload::check_new_py_impl;
use crate::resolve_key::{resolve_key, KernelTable};

pub use cond::cond;
pub use map::map;
pub use while_loop::while_loop;

/// A function passed to a higher-order operator: values in, values out
/// (a Python callable or a traced subgraph in PyTorch).
pub type GraphFn = Arc<dyn Fn(&[IValue]) -> Result<Vec<IValue>> + Send + Sync>;

/// One argument of a higher-order operator.
#[derive(Clone)]
pub enum HopArg {
    /// A value (tensors inside it, also in lists and tuples, contribute
    /// their keys to dispatch).
    Value(IValue),
    /// A function.
    Fn(GraphFn),
}

impl HopArg {
    /// The value, or an error naming `what` when this is a function.
    pub fn value(&self, what: &str) -> Result<&IValue> {
        match self {
            HopArg::Value(v) => Ok(v),
            HopArg::Fn(_) => Err(Error::runtime(format!(
                "expected a value for {what} but got a function"
            ))),
        }
    }

    /// The function, or an error naming `what` when this is a value.
    pub fn function(&self, what: &str) -> Result<&GraphFn> {
        match self {
            HopArg::Fn(f) => Ok(f),
            HopArg::Value(v) => Err(Error::runtime(format!(
                "expected a function for {what} but got {}",
                v.type_name()
            ))),
        }
    }
}

impl std::fmt::Debug for HopArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HopArg::Value(v) => write!(f, "{v:?}"),
            HopArg::Fn(_) => f.write_str("<function>"),
        }
    }
}

/// A kernel of a higher-order operator: the operator, the key set it was
/// dispatched with, the arguments; the returns.
pub type HopKernel = Arc<
    dyn Fn(&HigherOrderOperator, DispatchKeySet, &[HopArg]) -> Result<Vec<IValue>> + Send + Sync,
>;

/// Keys a higher-order operator skips unless a kernel is registered there
/// (`_HIGHER_ORDER_OP_DEFAULT_FALLTHROUGH_DISPATCH_KEYS`).
const DEFAULT_FALLTHROUGH_KEYS: [DispatchKey; 7] = [
    DispatchKey::PythonDispatcher,
    DispatchKey::PythonTLSSnapshot,
    DispatchKey::ADInplaceOrView,
    DispatchKey::BackendSelect,
    DispatchKey::AutocastCPU,
    DispatchKey::AutocastCUDA,
    DispatchKey::AutocastXPU,
];

/// An operator taking functions (`torch._ops.HigherOrderOperator`).
pub struct HigherOrderOperator {
    name: String,
    non_fallthrough_keys: RwLock<DispatchKeySet>,
    kernels: RwLock<HashMap<DispatchKey, HopKernel>>,
    dispatch_cache: Mutex<HashMap<DispatchKey, HopKernel>>,
    /// Rules for dispatch modes, by the mode's type (`python_key_table`).
    mode_rules: RwLock<HashMap<TypeId, ModeRule>>,
}

/// A higher-order operator's rule for one type of dispatch mode.
type ModeRule = Arc<
    dyn Fn(&dyn TorchDispatchMode, &HigherOrderOperator, &[HopArg]) -> Result<Vec<IValue>>
        + Send
        + Sync,
>;

impl HigherOrderOperator {
    /// A new operator named `name`, with every key but the default
    /// fallthrough keys live. [`register`](Self::register) makes it
    /// reachable from the `higher_order` namespace.
    pub fn new(name: &str) -> Arc<HigherOrderOperator> {
        let keys = DEFAULT_FALLTHROUGH_KEYS
            .iter()
            .fold(DispatchKeySet::full(), |ks, k| ks.remove(*k));
        Arc::new(HigherOrderOperator {
            name: name.to_string(),
            non_fallthrough_keys: RwLock::new(keys),
            kernels: RwLock::new(HashMap::new()),
            dispatch_cache: Mutex::new(HashMap::new()),
            mode_rules: RwLock::new(HashMap::new()),
        })
    }

    /// Adds the operator to the `higher_order` namespace (replacing one of
    /// the same name, as PyTorch does).
    pub fn register(self: &Arc<Self>) {
        registry()
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(self.name.clone(), Arc::clone(self));
    }

    /// The operator's name (`name()`, also its `str`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `higher_order`.
    pub fn namespace(&self) -> &'static str {
        "higher_order"
    }

    /// The keys that are not skipped.
    pub fn non_fallthrough_keys(&self) -> DispatchKeySet {
        *self
            .non_fallthrough_keys
            .read()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// `fallthrough(k)`: calls skip `k`.
    pub fn fallthrough(&self, k: DispatchKey) {
        let mut keys = self
            .non_fallthrough_keys
            .write()
            .unwrap_or_else(|p| p.into_inner());
        *keys = keys.remove(k);
    }

    /// `py_impl(k)(f)`: the kernel for `k` (which stops being skipped).
    pub fn py_impl(
        &self,
        k: DispatchKey,
        f: impl Fn(&HigherOrderOperator, DispatchKeySet, &[HopArg]) -> Result<Vec<IValue>>
            + Send
            + Sync
            + 'static,
    ) -> Result<()> {
        let mut kernels = self.kernels.write().unwrap_or_else(|p| p.into_inner());
        check_new_py_impl(k, kernels.contains_key(&k), &self.name)?;
        self.install(&mut kernels, &[k], Arc::new(f));
        drop(kernels);
        self.clear_dispatch_cache();
        Ok(())
    }

    /// Installs `kernel` at `keys` (no checks: for the shipped operators).
    fn set_kernels(&self, keys: &[DispatchKey], kernel: HopKernel) {
        let mut kernels = self.kernels.write().unwrap_or_else(|p| p.into_inner());
        self.install(&mut kernels, keys, kernel);
        drop(kernels);
        self.clear_dispatch_cache();
    }

    /// Empties the dispatch cache. Called after the kernels' lock is
    /// released: a dispatch resolves under the cache's lock and then reads
    /// the kernels, so the two are never taken in the other order.
    fn clear_dispatch_cache(&self) {
        self.dispatch_cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }

    /// Adds `kernel` at `keys` under the kernels' write lock and marks the
    /// keys live; the caller empties the dispatch cache after releasing the
    /// lock.
    fn install(
        &self,
        kernels: &mut HashMap<DispatchKey, HopKernel>,
        keys: &[DispatchKey],
        kernel: HopKernel,
    ) {
        let mut live = self
            .non_fallthrough_keys
            .write()
            .unwrap_or_else(|p| p.into_inner());
        for &k in keys {
            if !k.is_alias() {
                *live = live.add(k);
            }
            kernels.insert(k, Arc::clone(&kernel));
        }
    }

    /// `py_impl(ModeType)(rule)`: what the operator does under a dispatch
    /// mode of type `M` (the mode is popped while the rule runs).
    pub fn py_impl_mode<M: TorchDispatchMode>(
        &self,
        rule: impl Fn(&M, &HigherOrderOperator, &[HopArg]) -> Result<Vec<IValue>>
            + Send
            + Sync
            + 'static,
    ) -> Result<()> {
        let mut rules = self.mode_rules.write().unwrap_or_else(|p| p.into_inner());
        let id = TypeId::of::<M>();
        if rules.contains_key(&id) {
            return Err(Error::runtime(format!(
                "Trying to override a python impl for {} on operator {}",
                std::any::type_name::<M>(),
                self.name
            )));
        }
        rules.insert(
            id,
            Arc::new(
                move |mode, op, args| match mode.as_any().downcast_ref::<M>() {
                    Some(mode) => rule(mode, op, args),
                    None => Err(Error::internal("a mode rule was called with another mode")),
                },
            ),
        );
        Ok(())
    }

    /// The `Python` key: the innermost mode's rule, run with the mode
    /// popped; PyTorch's error when the operator has no rule for it.
    fn dispatch_python(&self, args: &[HopArg]) -> Result<Vec<IValue>> {
        self.dispatch_to_mode(modes::current_mode(), modes::pop_mode_temporarily, args)
    }

    /// The `PreDispatch` key: the innermost pre-dispatch mode's rule, run
    /// with that mode popped; with none, the call goes on below the key.
    fn dispatch_pre_dispatch(&self, keys: DispatchKeySet, args: &[HopArg]) -> Result<Vec<IValue>> {
        match modes::current_pre_dispatch_mode() {
            None => self.redispatch(keys.remove(DispatchKey::PreDispatch), args),
            mode => self.dispatch_to_mode(mode, modes::pop_pre_dispatch_mode_temporarily, args),
        }
    }

    fn dispatch_to_mode(
        &self,
        mode: Option<Arc<dyn TorchDispatchMode>>,
        pop: fn() -> Result<modes::PoppedMode>,
        args: &[HopArg],
    ) -> Result<Vec<IValue>> {
        let Some(mode) = mode else {
            return Err(Error::type_error(format!(
                "Multiple dispatch failed for {}. There was no registered that did not return NotImplemented.",
                self.name
            )));
        };
        let rule = self
            .mode_rules
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&mode.as_any().type_id())
            .cloned();
        let Some(rule) = rule else {
            let m = mode.name();
            return Err(Error::not_implemented(format!(
                "There was no rule registered for HigherOrderOperator {0} and mode {m}.Hint: set {m}'s supports_higher_order_operators to True. This causes all higher order operators to pass through {{curr_mode}}'s __torch_dispatch__, so handle them accordingly by adding support for HigerOrderOperators (in this case, {0}) in {m}.__torch_dispatch__ or returning NotImplemented when not supported.",
                self.name
            )));
        };
        let popped = pop()?;
        rule(popped.mode().as_ref(), self, args)
    }

    /// The key set a call with `args` dispatches on (`_compute_keyset`).
    pub fn compute_keyset(&self, args: &[HopArg]) -> DispatchKeySet {
        let tls = tls_local_dispatch_key_set();
        let mut keys = tls.included;
        for arg in args {
            if let HopArg::Value(v) = arg {
                keys |= ivalue_key_set(v);
            }
        }
        (keys - tls.excluded) & self.non_fallthrough_keys()
    }

    /// `__call__`: dispatches on the arguments.
    pub fn call(&self, args: &[HopArg]) -> Result<Vec<IValue>> {
        let keys = self.compute_keyset(args);
        self.dispatch_with(keys.highest_priority_type_id(), keys, args)
    }

    /// Continues a call with `keys` (a kernel passes its keys minus its
    /// own).
    pub fn redispatch(&self, keys: DispatchKeySet, args: &[HopArg]) -> Result<Vec<IValue>> {
        let keys = keys & self.non_fallthrough_keys();
        self.dispatch_with(keys.highest_priority_type_id(), keys, args)
    }

    /// `dispatch(k, ...)`: runs the kernel for `k`.
    pub fn dispatch(&self, k: DispatchKey, args: &[HopArg]) -> Result<Vec<IValue>> {
        self.dispatch_with(k, DispatchKeySet::from_key(k), args)
    }

    fn dispatch_with(
        &self,
        k: DispatchKey,
        keys: DispatchKeySet,
        args: &[HopArg],
    ) -> Result<Vec<IValue>> {
        if k == DispatchKey::Python {
            return self.dispatch_python(args);
        }
        if k == DispatchKey::PreDispatch {
            return self.dispatch_pre_dispatch(keys, args);
        }
        let kernel = {
            // Resolved under the cache's lock, so a concurrent `py_impl`
            // (which empties the cache after installing) is never undone.
            let mut cache = self
                .dispatch_cache
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            match cache.get(&k) {
                Some(kernel) => Arc::clone(kernel),
                None => {
                    let resolved = resolve_key(self, k)?;
                    let Some(kernel) = self.kernel(resolved) else {
                        return Err(Error::not_implemented(format!(
                            "could not find kernel for HigherOrderOperator {} at dispatch key DispatchKey.{resolved} (resolved from DispatchKey.{k})",
                            self.name
                        )));
                    };
                    cache.insert(k, Arc::clone(&kernel));
                    kernel
                }
            }
        };
        kernel(self, keys, args)
    }

    fn kernel(&self, k: DispatchKey) -> Option<HopKernel> {
        self.kernels
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&k)
            .cloned()
    }
}

impl KernelTable for HigherOrderOperator {
    fn has_kernel_for_dispatch_key(&self, k: DispatchKey) -> bool {
        self.kernels
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .contains_key(&k)
    }

    fn has_kernel_for_any_dispatch_key(&self, ks: DispatchKeySet) -> bool {
        self.kernels
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .keys()
            .any(|k| !k.is_alias() && ks.has(*k))
    }

    fn has_backend_fallback(&self, k: DispatchKey) -> bool {
        Dispatcher::global().has_backend_fallback_for_dispatch_key(k)
    }
}

impl std::fmt::Display for HigherOrderOperator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)
    }
}

impl std::fmt::Debug for HigherOrderOperator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HigherOrderOperator({})", self.name)
    }
}

fn registry() -> &'static RwLock<HashMap<String, Arc<HigherOrderOperator>>> {
    static REGISTRY: OnceLock<RwLock<HashMap<String, Arc<HigherOrderOperator>>>> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let shipped = [cond::make(), while_loop::make(), map::make(), wrap::make()];
        RwLock::new(
            shipped
                .into_iter()
                .map(|op| (op.name().to_string(), op))
                .collect(),
        )
    })
}

/// `torch.ops.higher_order`.
#[derive(Copy, Clone, Debug)]
pub struct HigherOrderNamespace;

impl HigherOrderNamespace {
    /// The operator named `name`; PyTorch's `AttributeError` otherwise.
    pub fn op(&self, name: &str) -> Result<Arc<HigherOrderOperator>> {
        registry()
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
            .cloned()
            .ok_or_else(|| {
                Error::attribute_error(format!(
                    "'_HigherOrderNamespace' 'torch.ops.higher_order' object has no attribute '{name}'"
                ))
            })
    }

    /// The registered names, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = registry()
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .keys()
            .cloned()
            .collect();
        names.sort();
        names
    }
}

/// The shipped operator `name` (always registered).
fn shipped(name: &str) -> Result<Arc<HigherOrderOperator>> {
    HigherOrderNamespace.op(name)
}

/// The kernel shipped operators register at `Autograd`: when no tensor
/// argument requires grad, continue below autograd (where modes and the
/// backends are); otherwise run `dense`, whose functions' own operators
/// record the graph.
fn autograd_kernel(dense: HopKernel) -> HopKernel {
    Arc::new(move |op, keys, args| {
        let requires_grad = args.iter().any(|a| match a {
            HopArg::Value(v) => value_requires_grad(v),
            HopArg::Fn(_) => false,
        });
        if requires_grad {
            return dense(op, keys, args);
        }
        let _below = c10_core::AutoDispatchBelowAutograd::new();
        op.call(args)
    })
}

fn value_requires_grad(value: &IValue) -> bool {
    match value {
        IValue::Tensor(t) => t.requires_grad(),
        IValue::TensorList(ts) => ts.iter().any(|t| t.requires_grad()),
        IValue::GenericList(items) | IValue::Tuple(items) => items.iter().any(value_requires_grad),
        _ => false,
    }
}

/// Registers a shipped operator's dense kernel at CompositeExplicitAutograd
/// and its autograd kernel at Autograd.
fn ship(op: &HigherOrderOperator, dense: HopKernel) {
    op.set_kernels(
        &[DispatchKey::CompositeExplicitAutograd],
        Arc::clone(&dense),
    );
    op.set_kernels(&[DispatchKey::Autograd], autograd_kernel(dense));
    op.set_kernels(
        &[DispatchKey::Functionalize],
        Arc::new(functionalize::higher_order_kernel),
    );
}

/// The tensor in `value`, if it is one.
fn tensor_of(value: &IValue) -> Option<aten_core::Tensor> {
    match value {
        IValue::Tensor(t) => Some(aten_core::Tensor::from_base(t.clone())),
        _ => None,
    }
}

/// A list or tuple value's items.
fn items_of(value: &IValue) -> Result<Vec<IValue>> {
    match value {
        IValue::Tuple(items) | IValue::GenericList(items) => Ok(items.to_vec()),
        IValue::TensorList(ts) => Ok(ts.iter().cloned().map(IValue::Tensor).collect()),
        other => Err(Error::runtime(format!(
            "expected a tuple or list but got {}",
            other.type_name()
        ))),
    }
}

/// A value's items joined for a message, as Python prints a list.
fn show(values: &[IValue]) -> String {
    let items: Vec<String> = values.iter().map(|v| v.to_string()).collect();
    format!("[{}]", items.join(", "))
}
