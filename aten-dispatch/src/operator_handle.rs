//! `OperatorHandle` and `TypedOperatorHandle`: how callers reach an
//! operator's kernels.
//!
//! A call computes the dispatch key set (argument keys, plus the thread's
//! included keys, minus its excluded keys, masked by the operator's
//! non-fallthrough keys), picks the slot of the highest key in the published
//! table and runs its kernel. `redispatch` skips the first step: the caller
//! passes the key set to continue with (usually its own keys minus
//! everything at and above its key).

use std::marker::PhantomData;
use std::sync::Arc;

use aten_boxing::kernel_arg::KernelReturn;
use aten_boxing::schema::{FunctionSchema, OperatorName};
use aten_boxing::{ArgList, BoxedOperator, CppSignature, IValue, Stack};
use c10_core::{DispatchKey, DispatchKeySet, Error, Result};

use crate::dispatch_key_extractor::get_dispatch_key_set_unboxed;
use crate::dispatcher::DispatcherInner;
use crate::operator_entry::{OperatorEntry, SignatureRecord};
use crate::trace;

/// A handle to one operator (`c10::OperatorHandle`). Cheap to clone; stays
/// usable after the operator's registrations are gone (calls then report
/// missing kernels).
#[derive(Clone)]
pub struct OperatorHandle {
    entry: Arc<OperatorEntry>,
    dispatcher: Arc<DispatcherInner>,
}

impl OperatorHandle {
    pub(crate) fn new(entry: Arc<OperatorEntry>, dispatcher: Arc<DispatcherInner>) -> Self {
        OperatorHandle { entry, dispatcher }
    }

    /// `operator_name()`.
    pub fn operator_name(&self) -> &OperatorName {
        self.entry.operator_name()
    }

    /// A number identifying the operator's registry entry: handles with
    /// equal ids reach the same operator. Stable while any handle of the
    /// entry lives.
    pub fn entry_id(&self) -> usize {
        Arc::as_ptr(&self.entry) as usize
    }

    /// `schema()`: the def, if any.
    pub fn schema(&self) -> Option<Arc<FunctionSchema>> {
        self.entry.schema()
    }

    /// Whether the operator has a def.
    pub fn has_schema(&self) -> bool {
        self.entry.has_schema()
    }

    /// The def's tags.
    pub fn tags(&self) -> Vec<String> {
        self.entry.tags()
    }

    /// `hasKernelForDispatchKey(k)`: a kernel registered directly at `k`.
    #[doc(alias = "hasKernelForDispatchKey")]
    pub fn has_kernel_for_dispatch_key(&self, k: DispatchKey) -> bool {
        self.entry.lock().kernels.has(k)
    }

    /// `hasKernelForAnyDispatchKey(ks)`: a kernel at a non-alias key in `ks`.
    #[doc(alias = "hasKernelForAnyDispatchKey")]
    pub fn has_kernel_for_any_dispatch_key(&self, ks: DispatchKeySet) -> bool {
        self.entry.lock().kernels.has_any(ks)
    }

    /// `hasComputedKernelForDispatchKey(k)`: whether the computed table has a
    /// kernel in `k`'s slot (whatever rule put it there).
    #[doc(alias = "hasComputedKernelForDispatchKey")]
    pub fn has_computed_kernel_for_dispatch_key(&self, k: DispatchKey) -> bool {
        k.is_runtime()
            && self
                .entry
                .published()
                .table
                .slot(k.dispatch_table_index())
                .is_some()
    }

    /// Changes whenever the operator's def, kernels or the backend fallbacks
    /// its table uses change (for caches of dispatch decisions).
    pub fn table_version(&self) -> u64 {
        self.entry.table_version()
    }

    /// `dumpState()` (`torch._C._dispatch_dump`).
    #[doc(alias = "dumpState")]
    pub fn dump_state(&self) -> String {
        self.entry.dump_state()
    }

    /// `dumpComputedTable()` (`torch._C._dispatch_dump_table`).
    #[doc(alias = "dumpComputedTable")]
    pub fn dump_computed_table(&self) -> String {
        let state = self.dispatcher.lock();
        self.entry.dump_computed_table(&state.fallbacks)
    }

    /// `checkInvariants()`.
    #[doc(alias = "checkInvariants")]
    pub fn check_invariants(&self) -> Result<()> {
        let state = self.dispatcher.lock();
        self.entry.check_invariants(&state.fallbacks)
    }

    /// `typed<Sig>()`: a handle for typed calls with arguments `Args` and
    /// returns `R`. Fails when a registered unboxed kernel has another
    /// signature.
    ///
    /// The handle is keyed by the arguments' `'static` twins, so one handle
    /// serves calls with borrows of any lifetime.
    pub fn typed<Args: ArgList, R: KernelReturn>(
        &self,
    ) -> Result<TypedOperatorHandle<Args::Static, R>> {
        let mut state = self.entry.lock();
        // A call with SymInts reaches SymInt kernels with its own
        // signature and plain ones with its concrete twin's
        // (`assertSignatureIsCorrect`); one without reaches plain kernels.
        let mut checks = vec![(false, CppSignature::of::<Args::Concrete, R>())];
        if Args::HAS_SYMINT {
            checks.push((true, CppSignature::of::<Args, R>()));
        }
        for &(sym, expected) in &checks {
            let record = if sym {
                &state.sym_signature
            } else {
                &state.signature
            };
            if let Some(record) = record {
                if record.signature != expected {
                    let (schema, debug) = match &state.schema {
                        Some(def) => (def.schema.to_string(), def.debug.to_string()),
                        None => (
                            self.operator_name().to_string(),
                            "unknown debug info".into(),
                        ),
                    };
                    return Err(Error::runtime(format!(
                        "\nTried to access or call an operator with a wrong signature.\n  operator: {schema}\n    {debug}\n  correct signature:  {}\n    {}\n  accessed/called as: {}\nThis likely happened in a call to OperatorHandle::typed<Return (Args...)>(). Please make sure that the function signature matches the signature in the operator registration call.",
                        record.signature.name(),
                        record.debug,
                        CppSignature::of::<Args, R>().name()
                    )));
                }
            }
        }
        // Pin the signatures: from now on every unboxed kernel of this
        // operator has them, which is what lets typed calls skip the check.
        for (sym, signature) in checks {
            let record = if sym {
                &mut state.sym_signature
            } else {
                &mut state.signature
            };
            if record.is_none() {
                *record = Some(SignatureRecord {
                    signature,
                    key: None,
                    debug: "typed operator handle".into(),
                });
            }
        }
        state.signature_pinned = true;
        drop(state);
        Ok(TypedOperatorHandle {
            op: self.clone(),
            _sig: PhantomData,
        })
    }

    fn missing(&self, k: DispatchKey) -> Error {
        let state = self.dispatcher.lock();
        self.entry.report_error(k, &state.fallbacks)
    }

    /// `callBoxed`: the arguments are on `stack`; the returns replace them.
    #[doc(alias = "callBoxed")]
    pub fn call_boxed(&self, stack: &mut Stack) -> Result<()> {
        let published = self.entry.published();
        let keys = published.extractor.get_dispatch_key_set_boxed(
            stack,
            self.operator_name(),
            &published.table,
        )?;
        let Some(kernel) = published.table.lookup(keys) else {
            return Err(self.missing(keys.highest_priority_type_id()));
        };
        let _trace = trace::enter("callBoxed", self.operator_name(), keys);
        kernel.call_boxed(self, keys, stack)
    }

    /// The key set a boxed call with these arguments (on top of `stack`)
    /// dispatches on (`getDispatchKeySetBoxed`), thread-local state and the
    /// fallthrough mask applied.
    #[doc(alias = "getDispatchKeySetBoxed")]
    pub fn dispatch_key_set_boxed(&self, stack: &[IValue]) -> Result<DispatchKeySet> {
        let published = self.entry.published();
        published.extractor.get_dispatch_key_set_boxed(
            stack,
            self.operator_name(),
            &published.table,
        )
    }

    /// `callBoxedForDispatchKey(k)`: runs the kernel registered at `k`
    /// itself (an alias key included), else the backend fallback of `k`,
    /// bypassing the computed table. The kernel gets the key set the call
    /// would have dispatched on. PyTorch's `_dispatch_call` / `OpOverload`'s
    /// call at a key.
    #[doc(alias = "callBoxedForDispatchKey")]
    pub fn call_boxed_for_dispatch_key(&self, k: DispatchKey, stack: &mut Stack) -> Result<()> {
        let keys = self.dispatch_key_set_boxed(stack)?;
        let registered = self.entry.lock().kernels.front(k).cloned();
        let kernel = match registered {
            Some(kernel) => kernel,
            None => {
                let fallback = k
                    .is_runtime()
                    .then(|| self.dispatcher.lock().fallbacks[k.dispatch_table_index()].clone());
                match fallback.flatten() {
                    Some(kernel) => kernel,
                    None => return Err(self.missing(k)),
                }
            }
        };
        let _trace = trace::enter("callBoxedForDispatchKey", self.operator_name(), keys);
        kernel.kernel.call_boxed(self, keys, stack)
    }

    /// `redispatchBoxed`: continues a boxed call with `keys`.
    #[doc(alias = "redispatchBoxed")]
    pub fn redispatch_boxed(&self, keys: DispatchKeySet, stack: &mut Stack) -> Result<()> {
        let published = self.entry.published();
        let Some(kernel) = published.table.lookup(keys) else {
            return Err(self.missing(keys.highest_priority_type_id()));
        };
        let _trace = trace::enter("redispatchBoxed", self.operator_name(), keys);
        kernel.call_boxed(self, keys, stack)
    }
}

impl BoxedOperator for OperatorHandle {
    fn operator_name(&self) -> String {
        self.entry.operator_name().to_string()
    }

    fn redispatch_boxed(&self, keys: DispatchKeySet, stack: &mut Stack) -> Result<()> {
        OperatorHandle::redispatch_boxed(self, keys, stack)
    }

    fn dump_state(&self) -> String {
        self.entry.dump_state()
    }

    fn schema(&self) -> Option<Arc<FunctionSchema>> {
        self.entry.schema()
    }

    fn tags(&self) -> Vec<String> {
        self.entry.tags()
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl std::fmt::Debug for OperatorHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OperatorHandle({})", self.operator_name())
    }
}

/// An operator handle for typed calls (`TypedOperatorHandle<R(Args...)>`).
/// `S` is the tuple of the argument types with `'static` lifetimes (what
/// [`OperatorHandle::typed`] produces); calls take the same types with any
/// lifetimes.
pub struct TypedOperatorHandle<S: 'static, R> {
    op: OperatorHandle,
    _sig: PhantomData<fn(S) -> R>,
}

impl<S: 'static, R> Clone for TypedOperatorHandle<S, R> {
    fn clone(&self) -> Self {
        TypedOperatorHandle {
            op: self.op.clone(),
            _sig: PhantomData,
        }
    }
}

impl<S: 'static, R> std::fmt::Debug for TypedOperatorHandle<S, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TypedOperatorHandle({})", self.op.operator_name())
    }
}

impl<S: 'static, R: KernelReturn> TypedOperatorHandle<S, R> {
    /// The untyped handle.
    pub fn handle(&self) -> &OperatorHandle {
        &self.op
    }

    /// `call(args...)`: dispatches on the arguments' keys and the thread's
    /// state. Allocation-free and lock-free unless the kernel itself is
    /// boxed or missing.
    #[inline]
    pub fn call<Args: ArgList<Static = S>>(&self, args: Args) -> Result<R> {
        let published = self.op.entry.published();
        let keys = get_dispatch_key_set_unboxed(&args, &published.table);
        let Some(kernel) = published.table.lookup(keys) else {
            return Err(self.op.missing(keys.highest_priority_type_id()));
        };
        if trace::enabled() {
            let _trace = trace::enter("call", self.op.operator_name(), keys);
            // SAFETY: as below.
            return unsafe { kernel.call_unchecked(&self.op, keys, args) };
        }
        // SAFETY: `typed()` pinned this operator's plain signature to
        // `(Args::Concrete, R)` and, for arguments holding SymInts, its
        // SymInt signature to `(Args, R)`; the dispatcher refuses unboxed
        // kernels of any other signature for it, and its table holds no
        // other unboxed kernels (fallbacks are stored boxed-only).
        unsafe { kernel.call_unchecked(&self.op, keys, args) }
    }

    /// `redispatch(keys, args...)`: continues a call with `keys` (no
    /// thread-local state, no mask: the keys were computed by the first call).
    #[inline]
    pub fn redispatch<Args: ArgList<Static = S>>(
        &self,
        keys: DispatchKeySet,
        args: Args,
    ) -> Result<R> {
        let published = self.op.entry.published();
        let Some(kernel) = published.table.lookup(keys) else {
            return Err(self.op.missing(keys.highest_priority_type_id()));
        };
        if trace::enabled() {
            let _trace = trace::enter("redispatch", self.op.operator_name(), keys);
            // SAFETY: as in `call`.
            return unsafe { kernel.call_unchecked(&self.op, keys, args) };
        }
        // SAFETY: as in `call`.
        unsafe { kernel.call_unchecked(&self.op, keys, args) }
    }
}
