//! `OperatorEntry`: everything the dispatcher knows about one operator: its
//! schema (if defined), the kernels registered at each key, and the computed
//! table that calls read.
//!
//! Writers (registration and deregistration) run under the dispatcher's
//! mutex, change the entry's state, recompute the affected slots and publish
//! a new table ([`PublishedCell`]). Readers load the
//! published table with one atomic load, without locking.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use aten_boxing::schema::{FunctionSchema, OperatorName};
use aten_boxing::CppSignature;
use c10_core::{DispatchKey, DispatchKeySet, Error, Result};

use crate::annotated_kernel::AnnotatedKernel;
use crate::dispatch_key_extractor::DispatchKeyExtractor;
use crate::dispatch_table::{
    compute_entry, keys_affected_by, DispatchTable, Fallbacks, KernelLists,
};
use crate::schema_check::find_schema_differences;
use c10_core::published_cell::PublishedCell;

/// How the JIT's alias analysis treats an operator (`c10::AliasAnalysisKind`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AliasAnalysisKind {
    /// Assume the worst.
    Conservative,
    /// Trust the schema's alias annotations.
    FromSchema,
    /// No side effects, no aliasing.
    PureFunction,
    /// Handled specially by the JIT.
    InternalSpecialCase,
}

impl AliasAnalysisKind {
    /// PyTorch's name.
    pub fn name(self) -> &'static str {
        match self {
            AliasAnalysisKind::Conservative => "CONSERVATIVE",
            AliasAnalysisKind::FromSchema => "FROM_SCHEMA",
            AliasAnalysisKind::PureFunction => "PURE_FUNCTION",
            AliasAnalysisKind::InternalSpecialCase => "INTERNAL_SPECIAL_CASE",
        }
    }
}

/// A registered definition.
pub(crate) struct SchemaRegistration {
    pub(crate) schema: Arc<FunctionSchema>,
    pub(crate) debug: Arc<str>,
    /// `None`: never set explicitly (CONSERVATIVE, printed `(default)`).
    pub(crate) alias_analysis: Option<AliasAnalysisKind>,
    pub(crate) tags: Vec<String>,
    pub(crate) id: u64,
    /// Where the schema's tensor arguments are (published with each table).
    pub(crate) extractor: DispatchKeyExtractor,
}

/// The first unboxed kernel's Rust signature, which later ones must match.
#[derive(Clone)]
pub(crate) struct SignatureRecord {
    pub(crate) signature: CppSignature,
    pub(crate) key: Option<DispatchKey>,
    pub(crate) debug: Arc<str>,
}

pub(crate) struct EntryState {
    pub(crate) schema: Option<SchemaRegistration>,
    pub(crate) kernels: KernelLists,
    pub(crate) signature: Option<SignatureRecord>,
    /// The same for kernels whose signature holds SymInts
    /// (`sym_cpp_signature_`).
    pub(crate) sym_signature: Option<SignatureRecord>,
    /// A typed handle exists: the signature stays fixed for good, so that
    /// typed calls need not check it.
    pub(crate) signature_pinned: bool,
    /// A long-lived handle (the ops layer's) refers to this entry: it stays
    /// in the registry, empty or not, so the handle never goes stale.
    pub(crate) kept: bool,
}

/// The state of one operator.
pub struct OperatorEntry {
    name: OperatorName,
    pub(crate) state: Mutex<EntryState>,
    table: PublishedCell<PublishedTable>,
    /// Counts publications: it changes whenever a def, a kernel or a backend
    /// fallback the table depends on changes.
    version: AtomicU64,
}

/// What a call reads: the table and how to find the dispatch keys.
pub(crate) struct PublishedTable {
    pub(crate) table: DispatchTable,
    pub(crate) extractor: DispatchKeyExtractor,
}

impl OperatorEntry {
    /// A new operator without kernels; `table` is the fallbacks-only table.
    pub(crate) fn new(name: OperatorName, table: DispatchTable) -> OperatorEntry {
        OperatorEntry {
            name,
            state: Mutex::new(EntryState {
                schema: None,
                kernels: KernelLists::new(),
                signature: None,
                sym_signature: None,
                signature_pinned: false,
                kept: false,
            }),
            table: PublishedCell::new(PublishedTable {
                table,
                extractor: DispatchKeyExtractor::none(),
            }),
            version: AtomicU64::new(0),
        }
    }

    /// How many times the table was published: equal values mean nothing
    /// the operator's calls depend on has changed in between.
    pub fn table_version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    /// The operator's name.
    pub fn operator_name(&self) -> &OperatorName {
        &self.name
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, EntryState> {
        // Every mutation completes before the lock is released or reports an
        // error without changing anything, so a poisoned lock holds a valid state.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The published table (one atomic load).
    #[inline(always)]
    pub(crate) fn published(&self) -> &PublishedTable {
        self.table.load()
    }

    /// The registered schema, if any.
    pub fn schema(&self) -> Option<Arc<FunctionSchema>> {
        self.lock().schema.as_ref().map(|s| Arc::clone(&s.schema))
    }

    /// Whether the operator has a def.
    pub fn has_schema(&self) -> bool {
        self.lock().schema.is_some()
    }

    /// The tags of the def.
    pub fn tags(&self) -> Vec<String> {
        self.lock()
            .schema
            .as_ref()
            .map(|s| s.tags.clone())
            .unwrap_or_default()
    }

    /// Whether nothing is registered (the entry should disappear).
    pub(crate) fn is_unused(state: &EntryState) -> bool {
        !state.kept && Self::is_empty(state)
    }

    /// No def and no kernels.
    pub(crate) fn is_empty(state: &EntryState) -> bool {
        state.schema.is_none() && state.kernels.is_empty()
    }

    /// Recomputes the slots a change at `k` affects and publishes.
    pub(crate) fn update_after_change(
        &self,
        state: &EntryState,
        fallbacks: &Fallbacks,
        k: Option<DispatchKey>,
    ) {
        let old = self.table.load();
        let mut table = old.table.clone();
        let (keys, undefined) = k.map_or((DispatchKeySet::FULL, true), keys_affected_by);
        table.update(&state.kernels, fallbacks, keys, undefined);
        self.publish(state, table);
    }

    /// Recomputes the slots that changes of the backend fallbacks at `keys`
    /// affect, and publishes once if any slot now routes elsewhere (a
    /// fallback change touches every operator, and most keep their kernel
    /// there; every publication is kept for the cell's lifetime).
    pub(crate) fn update_after_fallback_change(
        &self,
        state: &EntryState,
        fallbacks: &Fallbacks,
        keys: &[DispatchKey],
    ) {
        let old = self.table.load();
        let (mut affected, mut undefined) = (DispatchKeySet::EMPTY, false);
        for &k in keys {
            let (ks, u) = keys_affected_by(k);
            affected |= ks;
            undefined |= u;
        }
        let mut table = old.table.clone();
        table.update(&state.kernels, fallbacks, affected, undefined);
        if !table.same_routing(&old.table) {
            self.publish(state, table);
        }
    }

    /// Republishes the same table (after a def changed, which changes how
    /// boxed calls find their keys but no slot).
    pub(crate) fn republish(&self, state: &EntryState) {
        self.publish(state, self.table.load().table.clone());
    }

    fn publish(&self, state: &EntryState, table: DispatchTable) {
        let extractor = state
            .schema
            .as_ref()
            .map_or_else(DispatchKeyExtractor::none, |s| s.extractor.clone());
        self.table.store(PublishedTable { table, extractor });
        self.version.fetch_add(1, Ordering::AcqRel);
    }

    /// Checks a kernel's inferred schema against the def (`checkSchema`).
    pub(crate) fn check_kernel_schema(
        &self,
        def: &SchemaRegistration,
        kernel: &AnnotatedKernel,
    ) -> Result<()> {
        let (Some(inferred), Some((args, rets))) = (
            kernel.kernel.inferred_schema(),
            kernel.kernel.inferred_types(),
        ) else {
            return Ok(());
        };
        let with_symint = kernel.kernel.is_valid_sym_unboxed();
        if let Some(reason) = find_schema_differences(&def.schema, args, rets, with_symint) {
            return Err(Error::runtime(format!(
                "Inferred operator schema for a C++ kernel function doesn't match the expected function schema.\n  operator: {}\n  expected schema: {}\n    {}\n  inferred schema: {}\n    {}\n  reason: {}",
                self.name, def.schema, def.debug, inferred, kernel.debug, reason
            )));
        }
        Ok(())
    }

    /// `dumpState()`: the registrations, in PyTorch's format.
    #[doc(alias = "dumpState")]
    pub fn dump_state(&self) -> String {
        let state = self.lock();
        Self::dump_state_of(&self.name, &state)
    }

    pub(crate) fn dump_state_of(name: &OperatorName, state: &EntryState) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "name: {name}");
        match &state.schema {
            Some(def) => {
                let _ = writeln!(out, "schema: {}", def.schema);
                let _ = writeln!(out, "debug: {}", def.debug);
                let (kind, default) = match def.alias_analysis {
                    Some(kind) => (kind, ""),
                    None => (AliasAnalysisKind::Conservative, " (default)"),
                };
                let _ = writeln!(out, "alias analysis kind: {}{default}", kind.name());
            }
            None => out.push_str("schema: (none)\n"),
        }
        for k in state.kernels.keys() {
            for (i, kernel) in state.kernels.at(k).enumerate() {
                let _ = writeln!(
                    out,
                    "{k}{}{}: {} :: {} [ {}]",
                    if k.is_alias() { "[alias]" } else { "" },
                    if i > 0 { " (inactive)" } else { "" },
                    kernel.debug,
                    kernel.kernel.inferred_schema().unwrap_or("(none)"),
                    kernel.kernel.dump_state()
                );
            }
        }
        out
    }

    /// `dumpComputedTable()`: the slot of `Undefined` and of every runtime
    /// key that has a kernel, with the rule that placed it.
    #[doc(alias = "dumpComputedTable")]
    pub fn dump_computed_table(&self, fallbacks: &Fallbacks) -> String {
        let state = self.lock();
        Self::dump_computed_table_of(&state, fallbacks)
    }

    pub(crate) fn dump_computed_table_of(state: &EntryState, fallbacks: &Fallbacks) -> String {
        let mut out = String::new();
        for k in std::iter::once(DispatchKey::Undefined).chain(DispatchKeySet::FULL) {
            let (kernel, provenance) = compute_entry(&state.kernels, fallbacks, k);
            if let Some(kernel) = kernel {
                let _ = writeln!(
                    out,
                    "{k}: {}{} [{}]",
                    if kernel.kernel.is_fallthrough() {
                        "fallthrough "
                    } else {
                        ""
                    },
                    kernel.debug,
                    provenance.as_str()
                );
            }
        }
        out
    }

    /// `listAllDispatchKeys()`: the runtime keys with a valid slot.
    fn list_all_dispatch_keys(state: &EntryState, fallbacks: &Fallbacks) -> String {
        let keys: Vec<&str> = DispatchKeySet::FULL
            .iter()
            .filter(|k| compute_entry(&state.kernels, fallbacks, *k).0.is_some())
            .map(DispatchKey::name)
            .collect();
        format!("[{}]", keys.join(", "))
    }

    /// `reportError(k)`: the missing-kernel error for a call that landed on
    /// the empty slot of `k`.
    #[doc(alias = "reportError")]
    pub(crate) fn report_error(&self, k: DispatchKey, fallbacks: &Fallbacks) -> Error {
        let state = self.lock();
        let available = Self::list_all_dispatch_keys(&state, fallbacks);
        let table = Self::dump_computed_table_of(&state, fallbacks);
        let name = &self.name;
        if k == DispatchKey::Undefined {
            return Error::not_implemented(format!(
                "There were no tensor arguments to this function (e.g., you passed an empty list of Tensors), but no fallback function is registered for schema {name}.  This usually means that this function requires a non-empty list of Tensors, or that you (the operator writer) forgot to register a fallback function.  Available functions are {available}.\n\n{table}"
            ));
        }
        Error::not_implemented(format!(
            "Could not run '{name}' with arguments from the '{k}' backend. This could be because the operator doesn't exist for this backend, or was omitted during the selective/custom build process (if using custom build). If you are a Facebook employee using PyTorch on mobile, please visit https://fburl.com/ptmfixes for possible resolutions. '{name}' is only available for these backends: {available}.\n\n{table}"
        ))
    }

    /// `checkInvariants()`: the published table equals a recomputation.
    #[doc(alias = "checkInvariants")]
    pub fn check_invariants(&self, fallbacks: &Fallbacks) -> Result<()> {
        let state = self.lock();
        if let Some(def) = &state.schema {
            if def.schema.operator_name() != &self.name {
                return Err(Error::internal(format!(
                    "Tried to register operator {} with a schema named {}",
                    self.name,
                    def.schema.operator_name()
                )));
            }
        }
        if state.kernels.has(DispatchKey::Undefined) {
            return Err(Error::internal("kernels_ holds an Undefined entry"));
        }
        let expected = DispatchTable::compute(&state.kernels, fallbacks);
        let published = self.table.load();
        if !published.table.same_kernels(&expected) {
            return Err(Error::internal(format!(
                "Canonical state\n~~~~~~~~~~~\n{}\n\nComputed table:\n~~~~~~~~~~~\n{}",
                Self::dump_state_of(&self.name, &state),
                Self::dump_computed_table_of(&state, fallbacks)
            )));
        }
        Ok(())
    }
}
