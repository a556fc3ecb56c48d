//! The `Dispatcher`: the registry of operators, their kernels and the
//! backend fallbacks, and the entry point of every call.
//!
//! `Dispatcher::global()` is the process-wide instance, filled by the static
//! registrations (`torch_library!` and friends) the first time it is used;
//! `Dispatcher::new()` gives an isolated one for tests and conformance runs.
//!
//! All writes take the dispatcher's mutex: they validate first (a refused
//! registration leaves no trace), then change the registry, then republish
//! the affected operators' tables. Every write returns a
//! [`RegistrationHandle`] whose drop undoes exactly that registration.
//!
//! Registration listeners are never called with the mutex held, so a
//! listener may look operators up, or register and deregister, on the same
//! dispatcher. Each change queues its event while it still holds the mutex,
//! which fixes the order of the events to the order of the changes; once the
//! mutex is released, one thread at a time delivers the queue in that order.
//! A registration returns after its own event has been delivered, except
//! when it was made by a listener, during a delivery on the same thread: its
//! event is then delivered right after the one being delivered.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::thread::ThreadId;

use aten_boxing::schema::{FunctionSchema, OperatorName};
use aten_boxing::KernelFunction;
use c10_core::dispatch_key_set::get_runtime_dispatch_key_set;
use c10_core::warning::{warn, SourceLocation, Warning, WarningHandlerGuard};
use c10_core::{DispatchKey, Error, Result, NUM_RUNTIME_ENTRIES};

use crate::annotated_kernel::AnnotatedKernel;
use crate::dispatch_key_extractor::DispatchKeyExtractor;
use crate::dispatch_table::{DispatchTable, KernelLists};
use crate::library::StaticRegistrationError;
use crate::operator_entry::{
    AliasAnalysisKind, EntryState, OperatorEntry, SchemaRegistration, SignatureRecord,
};
use crate::operator_handle::OperatorHandle;
use crate::registration_handle::RegistrationHandle;

/// What a registration listener hears about.
#[derive(Clone, Debug, PartialEq, Eq)]
#[doc(alias = "OpRegistrationListener")]
pub enum RegistrationEvent {
    /// An operator got its def (`onOperatorRegistered`).
    #[doc(alias = "onOperatorRegistered")]
    OperatorRegistered(OperatorName),
    /// An operator lost its def (`onOperatorDeregistered`).
    #[doc(alias = "onOperatorDeregistered")]
    OperatorDeregistered(OperatorName),
}

/// A registered listener (`OpRegistrationListener`).
struct ListenerEntry {
    id: u64,
    /// Set when its handle is dropped: events queued before then are not
    /// delivered to it any more.
    removed: AtomicBool,
    on_event: Box<dyn Fn(&RegistrationEvent) + Send + Sync>,
}

type Listener = Arc<ListenerEntry>;

/// An event waiting for delivery, with the listeners registered when the
/// change happened.
struct PendingEvent {
    seq: u64,
    event: RegistrationEvent,
    listeners: Vec<Listener>,
}

/// The events of changes made but not yet told to the listeners.
#[derive(Default)]
struct NotificationQueue {
    pending: VecDeque<PendingEvent>,
    /// The number the next queued event gets (numbers start at 1).
    next_seq: u64,
    /// Every event numbered up to this one has been delivered.
    done_through: u64,
    /// The event being delivered now (0: none).
    in_progress: u64,
    /// The thread delivering events, if any.
    deliverer: Option<ThreadId>,
}

pub(crate) struct DispatcherState {
    pub(crate) operators: HashMap<OperatorName, Arc<OperatorEntry>>,
    /// The keys of `operators` by their qualified name (`ns::name`), for
    /// `torch.ops`' overload lookups; kept with `operators`.
    by_qualified_name: HashMap<String, Vec<OperatorName>>,
    /// Backend fallbacks by runtime-table slot.
    pub(crate) fallbacks: Vec<Option<Arc<AnnotatedKernel>>>,
    /// The table of an operator without kernels (fallbacks only), the start
    /// of every new operator's table; `None` after the fallbacks change.
    fallback_table: Option<DispatchTable>,
    /// Namespaces with a `TORCH_LIBRARY` (DEF) block, and its debug string.
    libraries: HashMap<String, (u64, Arc<str>)>,
    listeners: Vec<Listener>,
    /// The static registration blocks that failed on this dispatcher.
    static_errors: Vec<StaticRegistrationError>,
}

pub(crate) struct DispatcherInner {
    state: Mutex<DispatcherState>,
    next_id: AtomicU64,
    /// Taken after `state` (never the other way round) and never held while
    /// a listener runs.
    notifications: Mutex<NotificationQueue>,
    /// Signalled when a delivery round ends.
    delivered: Condvar,
}

impl DispatcherInner {
    pub(crate) fn lock(&self) -> MutexGuard<'_, DispatcherState> {
        // Writers validate before mutating, so a poisoned lock holds a valid state.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn fresh_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    fn lock_notifications(&self) -> MutexGuard<'_, NotificationQueue> {
        // The queue is only changed by whole-field updates; a panic cannot
        // leave it half-written.
        self.notifications.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues `event` for `listeners` (the caller holds the dispatcher's
    /// mutex, which orders the events like the changes). Returns the event's
    /// number, or `None` when nobody listens.
    fn enqueue(&self, listeners: Vec<Listener>, event: RegistrationEvent) -> Option<u64> {
        if listeners.is_empty() {
            return None;
        }
        let mut queue = self.lock_notifications();
        queue.next_seq += 1;
        let seq = queue.next_seq;
        queue.pending.push_back(PendingEvent {
            seq,
            event,
            listeners,
        });
        Some(seq)
    }

    /// Delivers the queued events up to `seq` (with the dispatcher's mutex
    /// released). Returns at once when this thread is already delivering (a
    /// listener registered something): the running delivery delivers the
    /// new event next. Waits while another thread delivers.
    fn deliver_through(&self, seq: Option<u64>) {
        let Some(seq) = seq else { return };
        let me = std::thread::current().id();
        let mut queue = self.lock_notifications();
        loop {
            if queue.done_through >= seq {
                return;
            }
            match queue.deliverer {
                Some(t) if t == me => return,
                Some(_) => {
                    queue = self
                        .delivered
                        .wait(queue)
                        .unwrap_or_else(|p| p.into_inner());
                }
                None => break,
            }
        }
        queue.deliverer = Some(me);
        // Ends the round even when a listener panics, so that other threads
        // do not wait for ever.
        let round = DeliveryRound(self);
        while let Some(item) = queue.pending.pop_front() {
            queue.in_progress = item.seq;
            drop(queue);
            for listener in &item.listeners {
                if !listener.removed.load(Ordering::Acquire) {
                    (listener.on_event)(&item.event);
                }
            }
            queue = self.lock_notifications();
            queue.done_through = item.seq;
            queue.in_progress = 0;
        }
        drop(queue);
        drop(round);
    }
}

/// One thread's turn at delivering events; see
/// [`DispatcherInner::deliver_through`].
struct DeliveryRound<'a>(&'a DispatcherInner);

impl Drop for DeliveryRound<'_> {
    fn drop(&mut self) {
        let mut queue = self.0.lock_notifications();
        // A listener that panicked had its event delivered as far as it went.
        queue.done_through = queue.done_through.max(queue.in_progress);
        queue.in_progress = 0;
        queue.deliverer = None;
        drop(queue);
        self.0.delivered.notify_all();
    }
}

/// The operator registry (`c10::Dispatcher`). Cheap to clone: clones share
/// one registry.
#[derive(Clone)]
pub struct Dispatcher {
    pub(crate) inner: Arc<DispatcherInner>,
}

impl Default for Dispatcher {
    fn default() -> Self {
        Dispatcher::new()
    }
}

static GLOBAL: OnceLock<Dispatcher> = OnceLock::new();

impl Dispatcher {
    /// An empty, isolated dispatcher: no operators, no fallbacks.
    pub fn new() -> Dispatcher {
        Dispatcher {
            inner: Arc::new(DispatcherInner {
                state: Mutex::new(DispatcherState {
                    operators: HashMap::new(),
                    by_qualified_name: HashMap::new(),
                    fallback_table: None,
                    fallbacks: vec![None; NUM_RUNTIME_ENTRIES],
                    libraries: HashMap::new(),
                    listeners: Vec::new(),
                    static_errors: Vec::new(),
                }),
                next_id: AtomicU64::new(1),
                notifications: Mutex::new(NotificationQueue::default()),
                delivered: Condvar::new(),
            }),
        }
    }

    /// The process-wide dispatcher. The first call runs every static
    /// registration linked into the program (fallbacks, then defs, then
    /// impls). Blocks that fail are kept
    /// ([`static_registration_errors`](Self::static_registration_errors))
    /// and reported through [`c10_core::warning`], after the dispatcher is
    /// in place (so a warning handler may use it).
    pub fn global() -> &'static Dispatcher {
        let mut raised = None;
        let dispatcher = GLOBAL.get_or_init(|| {
            let dispatcher = Dispatcher::new();
            // Hold back the warnings raised while registering until the
            // global dispatcher exists.
            let held = Arc::new(Mutex::new(Vec::new()));
            let sink = Arc::clone(&held);
            let guard = WarningHandlerGuard::new(move |w: &Warning| {
                sink.lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(w.clone());
            });
            let errors = crate::library::run_static_registrations(&dispatcher);
            drop(guard);
            let mut held = std::mem::take(&mut *held.lock().unwrap_or_else(|p| p.into_inner()));
            held.extend(errors.iter().map(static_error_warning));
            dispatcher.inner.lock().static_errors = errors;
            raised = Some(held);
            dispatcher
        });
        for warning in raised.into_iter().flatten() {
            warn(warning);
        }
        dispatcher
    }

    /// Runs every static registration block linked into the program on this
    /// dispatcher, as [`global`](Self::global) does on first use, and
    /// returns the blocks that failed (also kept, see
    /// [`static_registration_errors`](Self::static_registration_errors)).
    /// For isolated dispatchers in tests; the failures are not warned about.
    pub fn run_static_registrations(&self) -> Vec<StaticRegistrationError> {
        let errors = crate::library::run_static_registrations(self);
        self.inner
            .lock()
            .static_errors
            .extend(errors.iter().cloned());
        errors
    }

    /// The static registration blocks that failed on this dispatcher
    /// (PyTorch aborts the process at the first one; here each failed block
    /// registers nothing and the others go on).
    pub fn static_registration_errors(&self) -> Vec<StaticRegistrationError> {
        self.inner.lock().static_errors.clone()
    }

    /// `Ok` when every static registration block ran; otherwise an error
    /// listing the blocks that failed, one entry each (continuation lines
    /// indented).
    pub fn check_static_registrations(&self) -> Result<()> {
        let errors = self.static_registration_errors();
        if errors.is_empty() {
            return Ok(());
        }
        let mut report = format!(
            "{} static registration block{} failed:",
            errors.len(),
            if errors.len() == 1 { "" } else { "s" }
        );
        for e in &errors {
            // Multi-line messages (a schema error's caret) stay indented
            // under their block.
            report.push_str("\n  ");
            report.push_str(&e.to_string().replace('\n', "\n    "));
        }
        Err(Error::runtime(report))
    }

    /// Whether both handles share one registry.
    pub fn is_same(&self, other: &Dispatcher) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    fn handle(&self, entry: Arc<OperatorEntry>) -> OperatorHandle {
        OperatorHandle::new(entry, Arc::clone(&self.inner))
    }

    /// `findOp`: the operator, if anything is registered for it.
    #[doc(alias = "findOp")]
    pub fn find_op(&self, name: &OperatorName) -> Option<OperatorHandle> {
        let entry = self.inner.lock().operators.get(name).cloned()?;
        if OperatorEntry::is_empty(&entry.lock()) {
            return None;
        }
        Some(self.handle(entry))
    }

    /// `findSchema`: the operator, if it has a def.
    #[doc(alias = "findSchema")]
    pub fn find_schema(&self, name: &OperatorName) -> Option<OperatorHandle> {
        self.find_op(name).filter(|op| op.has_schema())
    }

    /// `findSchemaOrThrow("ns::name", "overload")`.
    #[doc(alias = "findSchemaOrThrow")]
    pub fn find_schema_or_throw(&self, name: &str, overload: &str) -> Result<OperatorHandle> {
        let full = if overload.is_empty() {
            name.to_string()
        } else {
            format!("{name}.{overload}")
        };
        let op_name = OperatorName::parse(&full)?;
        match self.find_op(&op_name) {
            Some(op) if op.has_schema() => Ok(op),
            Some(_) => Err(Error::runtime(format!(
                "Could not find schema for {name}.{overload} but we found an implementation; did you forget to def() the operator?"
            ))),
            None => Err(Error::runtime(format!(
                "Could not find schema for {name}.{overload}"
            ))),
        }
    }

    /// Every registered operator name (with a def or a kernel), sorted.
    #[doc(alias = "getAllOpNames")]
    pub fn all_op_names(&self) -> Vec<OperatorName> {
        let mut names: Vec<OperatorName> = self
            .inner
            .lock()
            .operators
            .values()
            .filter(|e| !OperatorEntry::is_empty(&e.lock()))
            .map(|e| e.operator_name().clone())
            .collect();
        names.sort_by_key(ToString::to_string);
        names
    }

    /// The operators named `ns::name` that have a def, whatever their
    /// overload name, in the order their defs were registered (the order
    /// `torch.ops` tries overloads in), with their schemas.
    pub fn find_overloads(
        &self,
        qualified_name: &str,
    ) -> Vec<(OperatorHandle, Arc<FunctionSchema>)> {
        self.overloads_of(qualified_name, false)
    }

    /// [`find_overloads`](Self::find_overloads), for a caller that keeps
    /// the handles for good (the `torch.ops` layer): their entries stay
    /// registered even when every registration is gone, so a handle sees a
    /// later re-registration.
    pub fn find_overloads_kept(
        &self,
        qualified_name: &str,
    ) -> Vec<(OperatorHandle, Arc<FunctionSchema>)> {
        self.overloads_of(qualified_name, true)
    }

    fn overloads_of(
        &self,
        qualified_name: &str,
        keep: bool,
    ) -> Vec<(OperatorHandle, Arc<FunctionSchema>)> {
        let state = self.inner.lock();
        let mut found: Vec<(u64, Arc<FunctionSchema>, Arc<OperatorEntry>)> = state
            .by_qualified_name
            .get(qualified_name)
            .into_iter()
            .flatten()
            .filter_map(|name| state.operators.get(name))
            .filter_map(|e| {
                let mut es = e.lock();
                let def = es.schema.as_ref()?;
                let found = (def.id, Arc::clone(&def.schema), Arc::clone(e));
                es.kept |= keep;
                Some(found)
            })
            .collect();
        drop(state);
        found.sort_by_key(|(id, _, _)| *id);
        found
            .into_iter()
            .map(|(_, schema, e)| (self.handle(e), schema))
            .collect()
    }

    /// `findDanglingImpls`: operators with kernels but no def.
    #[doc(alias = "findDanglingImpls")]
    pub fn find_dangling_impls(&self) -> Vec<OperatorHandle> {
        let entries: Vec<Arc<OperatorEntry>> =
            self.inner.lock().operators.values().cloned().collect();
        entries
            .into_iter()
            .filter(|e| {
                let es = e.lock();
                es.schema.is_none() && !es.kernels.is_empty()
            })
            .map(|e| self.handle(e))
            .collect()
    }

    fn entry_or_new(&self, state: &mut DispatcherState, name: &OperatorName) -> Arc<OperatorEntry> {
        if let Some(e) = state.operators.get(name) {
            return Arc::clone(e);
        }
        let fallbacks = &state.fallbacks;
        let table = state
            .fallback_table
            .get_or_insert_with(|| DispatchTable::compute(&KernelLists::new(), fallbacks))
            .clone();
        let entry = Arc::new(OperatorEntry::new(name.clone(), table));
        state.operators.insert(name.clone(), Arc::clone(&entry));
        state
            .by_qualified_name
            .entry(name.name().to_string())
            .or_default()
            .push(name.clone());
        entry
    }

    fn drop_entry_if_unused(
        state: &mut DispatcherState,
        entry: &Arc<OperatorEntry>,
        es: &EntryState,
    ) {
        if OperatorEntry::is_unused(es) {
            let name = entry.operator_name();
            if state
                .operators
                .get(name)
                .is_some_and(|e| Arc::ptr_eq(e, entry))
            {
                state.operators.remove(name);
                if let Some(names) = state.by_qualified_name.get_mut(name.name()) {
                    names.retain(|n| n != name);
                    if names.is_empty() {
                        state.by_qualified_name.remove(name.name());
                    }
                }
            }
        }
    }

    /// Queues `event` for every current listener; the caller holds the
    /// mutex and passes the result to `deliver_through` after releasing it.
    fn notify(
        inner: &DispatcherInner,
        state: &DispatcherState,
        event: RegistrationEvent,
    ) -> Option<u64> {
        inner.enqueue(state.listeners.clone(), event)
    }

    /// `registerDef`: defines an operator.
    #[doc(alias = "registerDef")]
    pub fn register_def(
        &self,
        schema: FunctionSchema,
        debug: impl Into<Arc<str>>,
        alias_analysis: Option<AliasAnalysisKind>,
        tags: Vec<String>,
    ) -> Result<RegistrationHandle> {
        let debug = debug.into();
        let name = schema.operator_name().clone();
        let mut state = self.inner.lock();
        let entry = self.entry_or_new(&mut state, &name);
        let mut es = entry.lock();
        let registration = SchemaRegistration {
            extractor: DispatchKeyExtractor::from_schema(&schema),
            schema: Arc::new(schema),
            debug,
            alias_analysis,
            tags,
            id: self.inner.fresh_id(),
        };
        let check = (|| {
            if let Some(old) = &es.schema {
                return Err(Error::runtime(format!(
                    "Tried to register an operator ({}) with the same name and overload name multiple times. Each overload's schema should only be registered with a single call to def(). Duplicate registration: {}. Original registration: {}",
                    registration.schema, registration.debug, old.debug
                )));
            }
            for k in es.kernels.keys() {
                for kernel in es.kernels.at(k) {
                    entry.check_kernel_schema(&registration, kernel)?;
                }
            }
            Ok(())
        })();
        if let Err(e) = check {
            Self::drop_entry_if_unused(&mut state, &entry, &es);
            return Err(e);
        }
        let id = registration.id;
        es.schema = Some(registration);
        entry.republish(&es);
        drop(es);
        let event = Self::notify(
            &self.inner,
            &state,
            RegistrationEvent::OperatorRegistered(name),
        );
        drop(state);
        let inner = Arc::downgrade(&self.inner);
        let handle = RegistrationHandle::new(move || {
            let Some(inner) = inner.upgrade() else { return };
            let mut state = inner.lock();
            let mut es = entry.lock();
            if es.schema.as_ref().is_some_and(|s| s.id == id) {
                es.schema = None;
                entry.republish(&es);
                Self::drop_entry_if_unused(&mut state, &entry, &es);
                drop(es);
                let event = Self::notify(
                    &inner,
                    &state,
                    RegistrationEvent::OperatorDeregistered(entry.operator_name().clone()),
                );
                drop(state);
                inner.deliver_through(event);
            }
        });
        self.inner.deliver_through(event);
        Ok(handle)
    }

    /// `registerImpl`: a kernel for `name` at `key` (`None`: catch-all,
    /// which is CompositeImplicitAutograd).
    #[doc(alias = "registerImpl")]
    pub fn register_impl(
        &self,
        name: OperatorName,
        key: Option<DispatchKey>,
        kernel: KernelFunction,
        debug: impl Into<Arc<str>>,
    ) -> Result<RegistrationHandle> {
        let key = match key {
            None | Some(DispatchKey::Undefined) => DispatchKey::CompositeImplicitAutograd,
            Some(k) if k.is_runtime() || k.is_alias() => k,
            Some(k) => {
                return Err(Error::runtime(format!(
                    "Cannot register a kernel to {k}: it is neither a runtime nor an alias dispatch key"
                )))
            }
        };
        let annotated = AnnotatedKernel::new(kernel, debug);
        let mut state = self.inner.lock();
        let entry = self.entry_or_new(&mut state, &name);
        let mut es = entry.lock();
        let check = (|| {
            if let Some(def) = &es.schema {
                entry.check_kernel_schema(def, &annotated)?;
            }
            // A SymInt kernel's signature is checked against the SymInt
            // kernels' (`sym_cpp_signature_`), a plain one's against the
            // plain kernels'.
            let (sig, record) = match annotated.kernel.sym_cpp_signature() {
                Some(sig) => (Some(sig), &es.sym_signature),
                None => (annotated.kernel.cpp_signature(), &es.signature),
            };
            if let (Some(sig), Some(record)) = (sig, record) {
                if sig != record.signature {
                    let (schema, schema_debug) = match &es.schema {
                        Some(def) => (def.schema.to_string(), def.debug.to_string()),
                        None => (name.to_string(), "no debug info".to_string()),
                    };
                    let key_name = |k: Option<DispatchKey>| {
                        k.map_or("(catch all)".to_string(), |k| k.to_string())
                    };
                    return Err(Error::runtime(format!(
                        "\nMismatch in kernel C++ signatures\n  operator: {schema}\n    {schema_debug}\n  kernel 1: {}\n    dispatch key: {}\n    {}\n  kernel 2: {}\n    dispatch key: {}\n    {}\n",
                        record.signature.name(),
                        key_name(record.key),
                        record.debug,
                        sig.name(),
                        key_name(Some(key)),
                        annotated.debug
                    )));
                }
            }
            Ok(())
        })();
        if let Err(e) = check {
            Self::drop_entry_if_unused(&mut state, &entry, &es);
            return Err(e);
        }
        // Raised once the locks are released: a warning handler may use the
        // dispatcher.
        let warning = if es.kernels.has(key) && key != DispatchKey::Meta {
            override_warning_once(&es, &name, key, &annotated.debug)
        } else {
            None
        };
        let (signature, record) = match annotated.kernel.sym_cpp_signature() {
            Some(sig) => (Some(sig), &mut es.sym_signature),
            None => (annotated.kernel.cpp_signature(), &mut es.signature),
        };
        if let (Some(signature), None) = (signature, &record) {
            *record = Some(SignatureRecord {
                signature,
                key: Some(key),
                debug: Arc::clone(&annotated.debug),
            });
        }
        let id = annotated.id;
        es.kernels.push(key, annotated);
        entry.update_after_change(&es, &state.fallbacks, Some(key));
        drop(es);
        drop(state);
        if let Some(warning) = warning {
            warn(warning);
        }
        let inner = Arc::downgrade(&self.inner);
        Ok(RegistrationHandle::new(move || {
            let Some(inner) = inner.upgrade() else { return };
            let mut state = inner.lock();
            let mut es = entry.lock();
            if es.kernels.remove(key, id) {
                let any = |sym: bool| {
                    es.kernels.keys().any(|k| {
                        es.kernels.at(k).any(|a| {
                            a.kernel.has_unboxed() && a.kernel.is_valid_sym_unboxed() == sym
                        })
                    })
                };
                let (plain, sym) = (any(false), any(true));
                if !es.signature_pinned {
                    if !plain {
                        es.signature = None;
                    }
                    if !sym {
                        es.sym_signature = None;
                    }
                }
                entry.update_after_change(&es, &state.fallbacks, Some(key));
                Self::drop_entry_if_unused(&mut state, &entry, &es);
            }
        }))
    }

    /// `registerFallback`: a kernel for every operator at `key` (an alias
    /// key fans out to its runtime keys).
    #[doc(alias = "registerFallback")]
    pub fn register_fallback(
        &self,
        key: DispatchKey,
        kernel: KernelFunction,
        debug: impl Into<Arc<str>>,
    ) -> Result<RegistrationHandle> {
        let mut handles = self.register_fallbacks(vec![(key, kernel, debug.into())])?;
        Ok(handles.remove(0))
    }

    /// Several [`register_fallback`](Self::register_fallback)s at once:
    /// every operator's table is recomputed and published once for all of
    /// them, rather than once per fallback. All or none are registered: a
    /// key without runtime keys, or one that has a fallback already (or is
    /// named twice), fails the whole call. One handle per fallback, in the
    /// given order.
    pub fn register_fallbacks(
        &self,
        fallbacks: Vec<(DispatchKey, KernelFunction, Arc<str>)>,
    ) -> Result<Vec<RegistrationHandle>> {
        let mut planned = Vec::with_capacity(fallbacks.len());
        for (key, kernel, debug) in fallbacks {
            let keys: Vec<DispatchKey> = get_runtime_dispatch_key_set(key).iter().collect();
            if keys.is_empty() {
                return Err(Error::runtime(format!(
                    "Cannot register a backend fallback for {key}: it names no runtime dispatch key"
                )));
            }
            // A fallback serves operators of every signature: it is only
            // ever called boxed.
            planned.push((keys, AnnotatedKernel::new(kernel.boxed_only(), debug)));
        }
        let mut state = self.inner.lock();
        let mut taken = vec![None::<&Arc<AnnotatedKernel>>; NUM_RUNTIME_ENTRIES];
        for (keys, annotated) in &planned {
            for k in keys {
                let index = k.dispatch_table_index();
                if let Some(old) = state.fallbacks[index].as_ref().or(taken[index]) {
                    return Err(Error::runtime(format!(
                        "Tried to register multiple backend fallbacks for the same dispatch key {k}; previous registration {}, new registration {}",
                        old.debug, annotated.debug
                    )));
                }
                taken[index] = Some(annotated);
            }
        }
        for (keys, annotated) in &planned {
            for k in keys {
                state.fallbacks[k.dispatch_table_index()] = Some(Arc::clone(annotated));
            }
        }
        state.fallback_table = None;
        let all: Vec<DispatchKey> = planned.iter().flat_map(|(keys, _)| keys.clone()).collect();
        Self::refresh_all(&state, &all);
        drop(state);
        Ok(planned
            .into_iter()
            .map(|(keys, annotated)| {
                let id = annotated.id;
                let inner = Arc::downgrade(&self.inner);
                RegistrationHandle::new(move || {
                    let Some(inner) = inner.upgrade() else { return };
                    let mut state = inner.lock();
                    for k in &keys {
                        let slot = &mut state.fallbacks[k.dispatch_table_index()];
                        if slot.as_ref().is_some_and(|a| a.id == id) {
                            *slot = None;
                        }
                    }
                    state.fallback_table = None;
                    Self::refresh_all(&state, &keys);
                })
            })
            .collect())
    }

    fn refresh_all(state: &DispatcherState, keys: &[DispatchKey]) {
        for entry in state.operators.values() {
            let es = entry.lock();
            entry.update_after_fallback_change(&es, &state.fallbacks, keys);
        }
    }

    /// Claims `ns` for a `TORCH_LIBRARY` (DEF) block.
    pub(crate) fn register_library(&self, ns: &str, debug: Arc<str>) -> Result<RegistrationHandle> {
        let mut state = self.inner.lock();
        if let Some((_, old)) = state.libraries.get(ns) {
            return Err(Error::runtime(format!(
                "Only a single TORCH_LIBRARY can be used to register the namespace {ns}; please put all of your definitions in a single TORCH_LIBRARY block.  If you were trying to specify implementations, consider using TORCH_LIBRARY_IMPL (which can be duplicated).  If you really intended to define operators for a single namespace in a distributed way, you can use TORCH_LIBRARY_FRAGMENT to explicitly indicate this.  Previous registration of TORCH_LIBRARY was {old}; latest registration was {debug}"
            )));
        }
        let id = self.inner.fresh_id();
        state.libraries.insert(ns.to_string(), (id, debug));
        let ns = ns.to_string();
        let inner = Arc::downgrade(&self.inner);
        Ok(RegistrationHandle::new(move || {
            let Some(inner) = inner.upgrade() else { return };
            let mut state = inner.lock();
            if state.libraries.get(&ns).is_some_and(|(i, _)| *i == id) {
                state.libraries.remove(&ns);
            }
        }))
    }

    /// `addRegistrationListener`: `listener` hears of every def added or
    /// removed from now on, and at once of every operator already defined
    /// (in the order of their defs).
    ///
    /// The listener runs without the dispatcher's lock held: it may look
    /// operators up and register or deregister on this dispatcher. It hears
    /// the events of one dispatcher one at a time, in the order the changes
    /// happened. After its handle is dropped it hears nothing more.
    #[doc(alias = "addRegistrationListener")]
    pub fn add_registration_listener(
        &self,
        listener: impl Fn(&RegistrationEvent) + Send + Sync + 'static,
    ) -> RegistrationHandle {
        let id = self.inner.fresh_id();
        let listener: Listener = Arc::new(ListenerEntry {
            id,
            removed: AtomicBool::new(false),
            on_event: Box::new(listener),
        });
        let mut state = self.inner.lock();
        let mut defined: Vec<(u64, OperatorName)> = state
            .operators
            .iter()
            .filter_map(|(name, entry)| {
                let def_id = entry.lock().schema.as_ref().map(|s| s.id)?;
                Some((def_id, name.clone()))
            })
            .collect();
        defined.sort_unstable_by_key(|(def_id, _)| *def_id);
        // Queued under the mutex: later changes queue their events after
        // these, and none of these changes is queued again for this listener.
        let mut last = None;
        for (_, name) in defined {
            last = self.inner.enqueue(
                vec![Arc::clone(&listener)],
                RegistrationEvent::OperatorRegistered(name),
            );
        }
        state.listeners.push(Arc::clone(&listener));
        drop(state);
        self.inner.deliver_through(last);
        let inner = Arc::downgrade(&self.inner);
        RegistrationHandle::new(move || {
            listener.removed.store(true, Ordering::Release);
            if let Some(inner) = inner.upgrade() {
                inner.lock().listeners.retain(|l| l.id != id);
            }
        })
    }

    /// Whether a backend fallback is registered for runtime key `k`.
    pub fn has_backend_fallback_for_dispatch_key(&self, k: DispatchKey) -> bool {
        k.is_runtime() && self.inner.lock().fallbacks[k.dispatch_table_index()].is_some()
    }

    /// `checkInvariants` for every operator.
    #[doc(alias = "checkInvariants")]
    pub fn check_all_invariants(&self) -> Result<()> {
        let state = self.inner.lock();
        for entry in state.operators.values() {
            entry.check_invariants(&state.fallbacks)?;
        }
        Ok(())
    }
}

/// The warning that reports a failed static registration block.
fn static_error_warning(error: &StaticRegistrationError) -> Warning {
    Warning::user(
        SourceLocation {
            function: "static registration",
            file: error.file,
            line: error.line,
        },
        error.to_string(),
    )
}

static OVERRIDE_WARNED: AtomicBool = AtomicBool::new(false);

/// PyTorch's `TORCH_WARN_ONCE` when a kernel replaces another at the same
/// operator and key, the first time only (for [`c10_core::warning::warn`]).
fn override_warning_once(
    es: &EntryState,
    name: &OperatorName,
    key: DispatchKey,
    debug: &str,
) -> Option<Warning> {
    if OVERRIDE_WARNED.swap(true, Ordering::Relaxed) {
        return None;
    }
    let (operator, operator_debug) = match &es.schema {
        Some(def) => (def.schema.to_string(), def.debug.to_string()),
        None => (name.to_string(), "no debug info".to_string()),
    };
    let previous = es
        .signature
        .as_ref()
        .map_or("no debug info".to_string(), |s| s.debug.to_string());
    Some(Warning::user(
        SourceLocation {
            function: "registerKernel",
            file: file!(),
            line: line!(),
        },
        format!(
            "Warning only once for all operators,  other operators may also be overridden.\n  Overriding a previously registered kernel for the same operator and the same dispatch key\n  operator: {operator}\n    {operator_debug}\n  dispatch key: {key}\n  previous kernel: {previous}\n       new kernel: {debug}"
        ),
    ))
}
