//! The computed dispatch table of one operator and the rule that fills each
//! slot (PyTorch's `computeDispatchTableEntryWithDebug`).
//!
//! For a runtime key `k` the first rule that yields a kernel wins:
//!
//! 1. a kernel registered at `k` itself (`kernel`);
//! 2. `CompositeExplicitAutogradNonFunctional`, then `CompositeExplicitAutograd`,
//!    for the backend keys they cover and for `Undefined` (`default backend kernel`);
//! 3. `CompositeImplicitAutogradNestedTensor` for the nested keys (`nested kernel`);
//! 4. `CompositeImplicitAutograd` for its keys and `Undefined`: at
//!    `AutogradOther` it is *ambiguous* when a backend served by AutogradOther
//!    also has a kernel; elsewhere it applies only when the key's backend has no
//!    kernel of its own and there is no `CompositeExplicitAutograd` kernel
//!    (`math kernel`);
//! 5. `Autograd` for the autograd keys (`autograd kernel`);
//! 6. `FuncTorchBatchedDecomposition` for `FuncTorchBatched` (`batched kernel`);
//! 7. the backend fallback registered for `k` (`backend fallback`);
//! 8. nothing: calling it reports the missing kernel.
//!
//! The table also carries the operator's *non-fallthrough masks*: every key
//! whose slot holds a fallthrough kernel is removed from the key set before
//! the slot is chosen, so dispatch skips it. Per-backend functionalities can
//! fall through for some backends only, so the masks are kept per backend
//! when they differ.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use c10_core::dispatch_key_set::{
    get_backend_key_set_from_autograd, get_runtime_dispatch_key_set, is_included_in_alias,
    AUTOGRADOTHER_BACKENDS,
};
use c10_core::{BackendComponent, DispatchKey, DispatchKeySet, NUM_BACKENDS, NUM_RUNTIME_ENTRIES};

use aten_boxing::{ArgList, BoxedOperator, KernelEntries, KernelReturn, Stack};
use c10_core::Result;

use crate::annotated_kernel::AnnotatedKernel;

/// The kernels registered at each key of one operator, newest last, for the
/// few keys that have any, in enum order.
#[derive(Clone, Default)]
pub(crate) struct KernelLists {
    lists: Vec<(DispatchKey, Vec<Arc<AnnotatedKernel>>)>,
}

impl KernelLists {
    pub(crate) fn new() -> KernelLists {
        KernelLists::default()
    }

    fn list(&self, k: DispatchKey) -> Option<&Vec<Arc<AnnotatedKernel>>> {
        self.lists.iter().find(|(key, _)| *key == k).map(|(_, l)| l)
    }

    /// The active (newest) kernel at `k`.
    #[inline]
    pub(crate) fn front(&self, k: DispatchKey) -> Option<&Arc<AnnotatedKernel>> {
        self.list(k).and_then(|l| l.last())
    }

    /// Every kernel at `k`, newest first.
    pub(crate) fn at(&self, k: DispatchKey) -> impl Iterator<Item = &Arc<AnnotatedKernel>> {
        self.list(k).into_iter().flat_map(|l| l.iter().rev())
    }

    /// Keys with at least one kernel, in enum order.
    pub(crate) fn keys(&self) -> impl Iterator<Item = DispatchKey> + '_ {
        self.lists.iter().map(|(k, _)| *k)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.lists.is_empty()
    }

    pub(crate) fn push(&mut self, k: DispatchKey, kernel: Arc<AnnotatedKernel>) {
        match self.lists.binary_search_by_key(&k, |(key, _)| *key) {
            Ok(i) => self.lists[i].1.push(kernel),
            Err(i) => self.lists.insert(i, (k, vec![kernel])),
        }
    }

    /// Removes the kernel with this id from `k`; whether it was there.
    pub(crate) fn remove(&mut self, k: DispatchKey, id: u64) -> bool {
        let Ok(i) = self.lists.binary_search_by_key(&k, |(key, _)| *key) else {
            return false;
        };
        let list = &mut self.lists[i].1;
        let Some(at) = list.iter().position(|x| x.id == id) else {
            return false;
        };
        list.remove(at);
        if list.is_empty() {
            self.lists.remove(i);
        }
        true
    }

    /// `hasKernelForDispatchKey`.
    #[doc(alias = "hasKernelForDispatchKey")]
    pub(crate) fn has(&self, k: DispatchKey) -> bool {
        self.list(k).is_some()
    }

    /// `hasKernelForAnyDispatchKey`: a kernel at a non-alias key in `ks`.
    #[doc(alias = "hasKernelForAnyDispatchKey")]
    pub(crate) fn has_any(&self, ks: DispatchKeySet) -> bool {
        self.keys().any(|k| !k.is_alias() && ks.has(k))
    }
}

/// Which rule filled a slot (the bracketed tag of `_dispatch_dump_table`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Provenance {
    /// A kernel at the key itself.
    Kernel,
    /// CompositeExplicitAutograd(NonFunctional).
    DefaultBackendKernel,
    /// CompositeImplicitAutogradNestedTensor.
    NestedKernel,
    /// CompositeImplicitAutograd.
    MathKernel,
    /// The ambiguous-AutogradOther kernel.
    AmbiguousAutogradOther,
    /// Autograd.
    AutogradKernel,
    /// FuncTorchBatchedDecomposition.
    BatchedKernel,
    /// A backend fallback.
    BackendFallback,
    /// Nothing.
    Missing,
}

impl Provenance {
    /// PyTorch's tag text.
    pub fn as_str(self) -> &'static str {
        match self {
            Provenance::Kernel => "kernel",
            Provenance::DefaultBackendKernel => "default backend kernel",
            Provenance::NestedKernel => "nested kernel",
            Provenance::MathKernel => "math kernel",
            Provenance::AmbiguousAutogradOther => "ambiguous autogradother",
            Provenance::AutogradKernel => "autograd kernel",
            Provenance::BatchedKernel => "batched kernel",
            Provenance::BackendFallback => "backend fallback",
            Provenance::Missing => "missing",
        }
    }
}

/// Backend fallbacks by runtime-table slot.
pub(crate) type Fallbacks = [Option<Arc<AnnotatedKernel>>];

/// What the slot rules need to know about one runtime key, computed once
/// for every key (the alias tests are the bulk of a table computation).
#[derive(Copy, Clone)]
struct KeyFacts {
    key: DispatchKey,
    in_ceanf: bool,
    in_cea: bool,
    in_nested: bool,
    in_cia: bool,
    in_autograd: bool,
    in_batched: bool,
    backends_from_autograd: DispatchKeySet,
}

fn key_facts(k: DispatchKey) -> KeyFacts {
    let undefined = k == DispatchKey::Undefined;
    KeyFacts {
        key: k,
        in_ceanf: undefined
            || is_included_in_alias(k, DispatchKey::CompositeExplicitAutogradNonFunctional),
        in_cea: undefined || is_included_in_alias(k, DispatchKey::CompositeExplicitAutograd),
        in_nested: is_included_in_alias(k, DispatchKey::CompositeImplicitAutogradNestedTensor),
        in_cia: undefined || is_included_in_alias(k, DispatchKey::CompositeImplicitAutograd),
        in_autograd: is_included_in_alias(k, DispatchKey::Autograd),
        in_batched: is_included_in_alias(k, DispatchKey::FuncTorchBatchedDecomposition),
        backends_from_autograd: get_backend_key_set_from_autograd(k),
    }
}

/// `KeyFacts` by runtime-table slot.
fn facts_by_slot() -> &'static [KeyFacts; NUM_RUNTIME_ENTRIES] {
    static FACTS: OnceLock<[KeyFacts; NUM_RUNTIME_ENTRIES]> = OnceLock::new();
    FACTS.get_or_init(|| {
        let mut facts = [key_facts(DispatchKey::Undefined); NUM_RUNTIME_ENTRIES];
        for k in DispatchKeySet::FULL {
            facts[k.dispatch_table_index()] = key_facts(k);
        }
        facts
    })
}

/// `computeDispatchTableEntryWithDebug`: the kernel for runtime key `k`.
#[doc(alias = "computeDispatchTableEntryWithDebug")]
pub(crate) fn compute_entry(
    kernels: &KernelLists,
    fallbacks: &Fallbacks,
    k: DispatchKey,
) -> (Option<Arc<AnnotatedKernel>>, Provenance) {
    let (entry, provenance) = compute_entry_at(kernels, fallbacks, k.dispatch_table_index());
    (entry.map(Cow::into_owned), provenance)
}

/// A computed entry: usually a kernel of the operator's lists or a fallback
/// (borrowed, so refreshing a table touches no reference count), sometimes
/// a kernel made for the slot (the ambiguous AutogradOther marker).
type Entry<'a> = Option<Cow<'a, Arc<AnnotatedKernel>>>;

/// What every slot's computation asks of an operator's kernels, looked up
/// once per table refresh rather than once per slot.
struct KernelView<'a> {
    kernels: &'a KernelLists,
    ceanf: Option<&'a Arc<AnnotatedKernel>>,
    cea: Option<&'a Arc<AnnotatedKernel>>,
    nested: Option<&'a Arc<AnnotatedKernel>>,
    cia: Option<&'a Arc<AnnotatedKernel>>,
    autograd: Option<&'a Arc<AnnotatedKernel>>,
    batched: Option<&'a Arc<AnnotatedKernel>>,
    /// A kernel at a backend that AutogradOther serves.
    has_autogradother_backend: bool,
}

impl<'a> KernelView<'a> {
    fn new(kernels: &'a KernelLists) -> KernelView<'a> {
        KernelView {
            kernels,
            ceanf: kernels.front(DispatchKey::CompositeExplicitAutogradNonFunctional),
            cea: kernels.front(DispatchKey::CompositeExplicitAutograd),
            nested: kernels.front(DispatchKey::CompositeImplicitAutogradNestedTensor),
            cia: kernels.front(DispatchKey::CompositeImplicitAutograd),
            autograd: kernels.front(DispatchKey::Autograd),
            batched: kernels.front(DispatchKey::FuncTorchBatchedDecomposition),
            has_autogradother_backend: kernels.has_any(AUTOGRADOTHER_BACKENDS),
        }
    }
}

fn compute_entry_at<'a>(
    kernels: &'a KernelLists,
    fallbacks: &'a Fallbacks,
    slot: usize,
) -> (Entry<'a>, Provenance) {
    compute_entry_in(&KernelView::new(kernels), fallbacks, slot)
}

fn compute_entry_in<'a>(
    view: &KernelView<'a>,
    fallbacks: &'a Fallbacks,
    slot: usize,
) -> (Entry<'a>, Provenance) {
    let f = &facts_by_slot()[slot];
    let k = f.key;
    let hit = |kernel: Option<&'a Arc<AnnotatedKernel>>, provenance: Provenance| {
        kernel.map(|kernel| (Some(Cow::Borrowed(kernel)), provenance))
    };
    if let Some(kernel) = view.kernels.front(k) {
        return (Some(Cow::Borrowed(kernel)), Provenance::Kernel);
    }
    if f.in_ceanf {
        if let Some(r) = hit(view.ceanf, Provenance::DefaultBackendKernel) {
            return r;
        }
    }
    if f.in_cea {
        if let Some(r) = hit(view.cea, Provenance::DefaultBackendKernel) {
            return r;
        }
    }
    if f.in_nested {
        if let Some(r) = hit(view.nested, Provenance::NestedKernel) {
            return r;
        }
    }
    if f.in_cia {
        if let Some(kernel) = view.cia {
            if k == DispatchKey::AutogradOther && view.has_autogradother_backend {
                let debug = fallbacks[slot].as_ref().map_or_else(
                    || Arc::from("ambiguous_autogradother"),
                    |f| Arc::clone(&f.debug),
                );
                return (
                    Some(Cow::Owned(AnnotatedKernel::ambiguous_autograd_other(debug))),
                    Provenance::AmbiguousAutogradOther,
                );
            }
            let has_backend_kernel =
                view.cea.is_some() || view.kernels.has_any(f.backends_from_autograd);
            if !has_backend_kernel {
                return (Some(Cow::Borrowed(kernel)), Provenance::MathKernel);
            }
        }
    }
    if f.in_autograd {
        if let Some(r) = hit(view.autograd, Provenance::AutogradKernel) {
            return r;
        }
    }
    if f.in_batched {
        if let Some(r) = hit(view.batched, Provenance::BatchedKernel) {
            return r;
        }
    }
    if let Some(fallback) = &fallbacks[slot] {
        return (Some(Cow::Borrowed(fallback)), Provenance::BackendFallback);
    }
    (None, Provenance::Missing)
}

/// The runtime keys whose slots a change at `k` (a kernel or a fallback)
/// can affect, and whether `Undefined`'s can.
///
/// A kernel at an alias key can reach any slot (directly, or through the
/// "has a backend kernel" and ambiguity tests of the autograd slots), so it
/// refreshes the whole table. A kernel at a runtime key fills its own slot
/// and can change the choice at every autograd slot (PyTorch refreshes only
/// the backend's own autograd key, which leaves AutogradOther and
/// AutogradNestedTensor stale when a sparse or nested kernel arrives).
pub(crate) fn keys_affected_by(k: DispatchKey) -> (DispatchKeySet, bool) {
    if k == DispatchKey::Undefined {
        (DispatchKeySet::EMPTY, true)
    } else if k.is_alias() {
        (DispatchKeySet::FULL, true)
    } else {
        (
            DispatchKeySet::from_key(k) | get_runtime_dispatch_key_set(DispatchKey::Autograd),
            false,
        )
    }
}

/// A kernel of a table with its entry points copied beside it, so a call
/// reaches the function it runs with one dependent load less.
#[derive(Clone)]
pub(crate) struct TableKernel {
    pub(crate) kernel: Arc<AnnotatedKernel>,
    /// `kernel`'s entries, valid because `kernel` is held here.
    entries: KernelEntries,
}

impl TableKernel {
    fn new(kernel: Arc<AnnotatedKernel>) -> TableKernel {
        let entries = kernel.kernel.entries();
        TableKernel { kernel, entries }
    }

    /// `callBoxed`.
    #[doc(alias = "callBoxed")]
    #[inline(always)]
    pub(crate) fn call_boxed(
        &self,
        op: &dyn BoxedOperator,
        keys: DispatchKeySet,
        stack: &mut Stack,
    ) -> Result<()> {
        // SAFETY: the entries point into `self.kernel`, alive while `self` is.
        unsafe { self.entries.call_boxed(op, keys, stack) }
    }

    /// A typed call without the signature check.
    ///
    /// # Safety
    ///
    /// The kernel's unboxed entries must have the signatures
    /// [`KernelEntries::call_unchecked`] asks for.
    #[inline(always)]
    pub(crate) unsafe fn call_unchecked<Args: ArgList, R: KernelReturn>(
        &self,
        op: &dyn BoxedOperator,
        keys: DispatchKeySet,
        args: Args,
    ) -> Result<R> {
        // SAFETY: the entries point into `self.kernel`, alive while `self`
        // is; the caller guarantees the signature.
        unsafe { self.entries.call_unchecked(op, keys, args) }
    }
}

/// The runtime slots whose kernels a table also keeps inline: the dense CPU
/// kernel and the CPU autograd kernel, where eager CPU calls go.
const HOT_SLOTS: [usize; 2] = [
    DispatchKey::CPU.dispatch_table_index(),
    DispatchKey::AutogradCPU.dispatch_table_index(),
];

/// One operator's published table: a byte per runtime-table slot naming one
/// of the operator's distinct kernels, and the non-fallthrough masks. The
/// compact form keeps a table in a few cache lines and makes republishing
/// cheap (a 137-byte copy and a handful of reference counts).
#[derive(Clone)]
pub struct DispatchTable {
    /// `0`: missing; `i`: `kernels[i - 1]`.
    slots: [u8; NUM_RUNTIME_ENTRIES],
    kernels: Vec<TableKernel>,
    /// The kernels of [`HOT_SLOTS`], copied from `kernels` whenever the
    /// slots change. A call for one of these slots compares its computed
    /// index with a constant instead of loading the slot byte first; the
    /// processor predicts the comparison and loads the kernel's entry
    /// while the index is still being computed, so the call's target no
    /// longer waits for the key-set arithmetic and two dependent loads.
    hot: [Option<TableKernel>; HOT_SLOTS.len()],
    non_fallthrough: DispatchKeySet,
    non_fallthrough_per_backend: [DispatchKeySet; NUM_BACKENDS as usize],
    requires_per_backend: bool,
}

impl DispatchTable {
    /// A table with every slot missing.
    pub(crate) fn empty() -> DispatchTable {
        DispatchTable {
            slots: [0; NUM_RUNTIME_ENTRIES],
            kernels: Vec::new(),
            hot: [const { None }; HOT_SLOTS.len()],
            non_fallthrough: DispatchKeySet::FULL,
            non_fallthrough_per_backend: [DispatchKeySet::FULL; NUM_BACKENDS as usize],
            requires_per_backend: false,
        }
    }

    /// A table computed from scratch.
    pub(crate) fn compute(kernels: &KernelLists, fallbacks: &Fallbacks) -> DispatchTable {
        let mut table = DispatchTable::empty();
        table.update(kernels, fallbacks, DispatchKeySet::FULL, true);
        table
    }

    /// The kernel in slot `index`.
    #[inline(always)]
    pub(crate) fn slot(&self, index: usize) -> Option<&Arc<AnnotatedKernel>> {
        self.table_kernel(index).map(|k| &k.kernel)
    }

    #[inline(always)]
    fn table_kernel(&self, index: usize) -> Option<&TableKernel> {
        // Written out, CPU first: a loop over `HOT_SLOTS` compiled to the
        // comparisons in the other order, and boxed calls on CPU tensors
        // measured about 1 ns slower.
        if index == HOT_SLOTS[0] {
            return self.hot[0].as_ref();
        }
        if index == HOT_SLOTS[1] {
            return self.hot[1].as_ref();
        }
        self.compact_kernel(index)
    }

    /// The kernel in slot `index`, through the slot bytes.
    #[inline(always)]
    fn compact_kernel(&self, index: usize) -> Option<&TableKernel> {
        let i = *self.slots.get(index)? as usize;
        self.kernels.get(i.wrapping_sub(1))
    }

    /// Copies the kernels of [`HOT_SLOTS`] from the slots.
    fn refresh_hot(&mut self) {
        self.hot = HOT_SLOTS.map(|i| self.compact_kernel(i).cloned());
    }

    fn set_slot(&mut self, index: usize, kernel: Entry<'_>) {
        self.slots[index] = match kernel {
            None => 0,
            Some(k) => match self
                .kernels
                .iter()
                .position(|x| Arc::ptr_eq(&x.kernel, &k))
                .or_else(|| self.kernels.iter().position(|x| x.kernel.same_as(&k)))
            {
                Some(i) => i as u8 + 1,
                None => {
                    self.kernels.push(TableKernel::new(k.into_owned()));
                    self.kernels.len() as u8
                }
            },
        };
    }

    /// Drops kernels no slot refers to any more, renumbering the slots.
    fn compact(&mut self) {
        let mut used = [false; NUM_RUNTIME_ENTRIES + 1];
        for &s in &self.slots {
            used[s as usize] = true;
        }
        if (1..=self.kernels.len()).all(|i| used[i]) {
            return;
        }
        let mut renumber = [0u8; NUM_RUNTIME_ENTRIES + 1];
        let mut kept = Vec::new();
        for (i, k) in self.kernels.drain(..).enumerate() {
            if used[i + 1] {
                kept.push(k);
                renumber[i + 1] = kept.len() as u8;
            }
        }
        self.kernels = kept;
        for s in &mut self.slots {
            *s = renumber[*s as usize];
        }
    }

    /// Recomputes the slots of `keys` (and of `Undefined` if asked), then the masks.
    pub(crate) fn update(
        &mut self,
        kernels: &KernelLists,
        fallbacks: &Fallbacks,
        keys: DispatchKeySet,
        undefined: bool,
    ) {
        let view = KernelView::new(kernels);
        if undefined {
            let entry = compute_entry_in(&view, fallbacks, 0).0;
            self.set_slot(0, entry);
        }
        if keys == DispatchKeySet::FULL {
            for slot in 1..NUM_RUNTIME_ENTRIES {
                let entry = compute_entry_in(&view, fallbacks, slot).0;
                self.set_slot(slot, entry);
            }
        } else {
            for k in keys {
                let slot = k.dispatch_table_index();
                let entry = compute_entry_in(&view, fallbacks, slot).0;
                self.set_slot(slot, entry);
            }
        }
        self.compact();
        self.refresh_hot();
        self.compute_masks();
    }

    /// Whether both tables route every slot to the same kernel (the masks
    /// and hot copies follow from the slots and kernels).
    pub(crate) fn same_routing(&self, other: &DispatchTable) -> bool {
        self.slots == other.slots
            && self.kernels.len() == other.kernels.len()
            && self
                .kernels
                .iter()
                .zip(&other.kernels)
                .all(|(a, b)| Arc::ptr_eq(&a.kernel, &b.kernel))
    }

    fn compute_masks(&mut self) {
        let mut non_fallthrough = DispatchKeySet::FULL;
        let mut per_backend = [DispatchKeySet::FULL; NUM_BACKENDS as usize];
        if self
            .kernels
            .iter()
            .any(|k| k.kernel.kernel.is_fallthrough())
        {
            for k in DispatchKeySet::FULL {
                let fallthrough = self
                    .slot(k.dispatch_table_index())
                    .is_some_and(|a| a.kernel.is_fallthrough());
                if !fallthrough {
                    continue;
                }
                non_fallthrough = non_fallthrough.remove(k);
                if k.to_functionality_key().is_per_backend_functionality() {
                    let b = k.to_backend_component() as usize - 1;
                    per_backend[b] = per_backend[b].remove(k);
                } else {
                    for mask in &mut per_backend {
                        *mask = mask.remove(k);
                    }
                }
            }
        }
        self.requires_per_backend = per_backend.windows(2).any(|w| w[0] != w[1]);
        self.non_fallthrough = non_fallthrough;
        self.non_fallthrough_per_backend = per_backend;
    }

    /// The mask for a call whose keys are `ks` (`computeDispatchKeySet`'s
    /// last step).
    #[inline(always)]
    pub(crate) fn mask_for(&self, ks: DispatchKeySet) -> DispatchKeySet {
        if self.requires_per_backend {
            let backend = ks.highest_backend_key();
            if backend != BackendComponent::InvalidBit {
                return self.non_fallthrough_per_backend[backend as usize - 1];
            }
        }
        self.non_fallthrough
    }

    /// The slot for `ks` (already masked).
    #[inline(always)]
    pub(crate) fn lookup(&self, ks: DispatchKeySet) -> Option<&TableKernel> {
        self.table_kernel(ks.get_dispatch_table_index_for_dispatch_key_set())
    }

    /// Whether both tables hold the same kernels in every slot.
    pub(crate) fn same_kernels(&self, other: &DispatchTable) -> bool {
        (0..NUM_RUNTIME_ENTRIES).all(|i| match (self.slot(i), other.slot(i)) {
            (Some(a), Some(b)) => a.same_as(b),
            (None, None) => true,
            _ => false,
        }) && self.non_fallthrough == other.non_fallthrough
            && self.requires_per_backend == other.requires_per_backend
            && (!self.requires_per_backend
                || self.non_fallthrough_per_backend == other.non_fallthrough_per_backend)
    }
}
