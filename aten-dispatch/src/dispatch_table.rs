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

use std::sync::Arc;

use c10_core::dispatch_key_set::{
    get_backend_key_set_from_autograd, get_runtime_dispatch_key_set, is_included_in_alias,
    AUTOGRADOTHER_BACKENDS,
};
use c10_core::{BackendComponent, DispatchKey, DispatchKeySet, NUM_BACKENDS, NUM_RUNTIME_ENTRIES};

use crate::annotated_kernel::AnnotatedKernel;

/// The kernels registered at each key of one operator, newest last.
#[derive(Clone, Default)]
pub(crate) struct KernelLists {
    lists: Vec<Vec<Arc<AnnotatedKernel>>>,
    /// Keys with at least one kernel, in enum order.
    keys: Vec<DispatchKey>,
}

impl KernelLists {
    pub(crate) fn new() -> KernelLists {
        KernelLists {
            lists: vec![Vec::new(); DispatchKey::NUM_VALUES],
            keys: Vec::new(),
        }
    }

    /// The active (newest) kernel at `k`.
    #[inline]
    pub(crate) fn front(&self, k: DispatchKey) -> Option<&Arc<AnnotatedKernel>> {
        self.lists[k.as_u8() as usize].last()
    }

    /// Every kernel at `k`, newest first.
    pub(crate) fn at(&self, k: DispatchKey) -> impl Iterator<Item = &Arc<AnnotatedKernel>> {
        self.lists[k.as_u8() as usize].iter().rev()
    }

    pub(crate) fn keys(&self) -> &[DispatchKey] {
        &self.keys
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    pub(crate) fn push(&mut self, k: DispatchKey, kernel: Arc<AnnotatedKernel>) {
        let list = &mut self.lists[k.as_u8() as usize];
        if list.is_empty() {
            let at = self.keys.partition_point(|x| *x < k);
            self.keys.insert(at, k);
        }
        list.push(kernel);
    }

    /// Removes the kernel with this id from `k`; whether it was there.
    pub(crate) fn remove(&mut self, k: DispatchKey, id: u64) -> bool {
        let list = &mut self.lists[k.as_u8() as usize];
        let Some(at) = list.iter().position(|x| x.id == id) else {
            return false;
        };
        list.remove(at);
        if list.is_empty() {
            self.keys.retain(|x| *x != k);
        }
        true
    }

    /// `hasKernelForDispatchKey`.
    pub(crate) fn has(&self, k: DispatchKey) -> bool {
        !self.lists[k.as_u8() as usize].is_empty()
    }

    /// `hasKernelForAnyDispatchKey`: a kernel at a non-alias key in `ks`.
    pub(crate) fn has_any(&self, ks: DispatchKeySet) -> bool {
        self.keys.iter().any(|k| !k.is_alias() && ks.has(*k))
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

/// `computeDispatchTableEntryWithDebug`: the kernel for runtime key `k`.
pub(crate) fn compute_entry(
    kernels: &KernelLists,
    fallbacks: &Fallbacks,
    k: DispatchKey,
) -> (Option<Arc<AnnotatedKernel>>, Provenance) {
    let undefined = k == DispatchKey::Undefined;
    if let Some(kernel) = kernels.front(k) {
        return (Some(Arc::clone(kernel)), Provenance::Kernel);
    }
    for alias in [
        DispatchKey::CompositeExplicitAutogradNonFunctional,
        DispatchKey::CompositeExplicitAutograd,
    ] {
        if undefined || is_included_in_alias(k, alias) {
            if let Some(kernel) = kernels.front(alias) {
                return (Some(Arc::clone(kernel)), Provenance::DefaultBackendKernel);
            }
        }
    }
    let has_backend_kernel = kernels.has_any(get_backend_key_set_from_autograd(k))
        || kernels.has(DispatchKey::CompositeExplicitAutograd);
    if !undefined && is_included_in_alias(k, DispatchKey::CompositeImplicitAutogradNestedTensor) {
        if let Some(kernel) = kernels.front(DispatchKey::CompositeImplicitAutogradNestedTensor) {
            return (Some(Arc::clone(kernel)), Provenance::NestedKernel);
        }
    }
    if undefined || is_included_in_alias(k, DispatchKey::CompositeImplicitAutograd) {
        if let Some(kernel) = kernels.front(DispatchKey::CompositeImplicitAutograd) {
            if k == DispatchKey::AutogradOther && kernels.has_any(AUTOGRADOTHER_BACKENDS) {
                let debug = fallbacks[k.dispatch_table_index()]
                    .as_ref()
                    .map_or_else(|| Arc::from("ambiguous_autogradother"), |f| Arc::clone(&f.debug));
                return (
                    Some(AnnotatedKernel::ambiguous_autograd_other(debug)),
                    Provenance::AmbiguousAutogradOther,
                );
            }
            if !has_backend_kernel {
                return (Some(Arc::clone(kernel)), Provenance::MathKernel);
            }
        }
    }
    for (alias, provenance) in [
        (DispatchKey::Autograd, Provenance::AutogradKernel),
        (DispatchKey::FuncTorchBatchedDecomposition, Provenance::BatchedKernel),
    ] {
        if is_included_in_alias(k, alias) {
            if let Some(kernel) = kernels.front(alias) {
                return (Some(Arc::clone(kernel)), provenance);
            }
        }
    }
    if let Some(fallback) = &fallbacks[k.dispatch_table_index()] {
        return (Some(Arc::clone(fallback)), Provenance::BackendFallback);
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

/// One operator's published table: a slot per runtime key and the
/// non-fallthrough masks.
#[derive(Clone)]
pub struct DispatchTable {
    pub(crate) slots: Vec<Option<Arc<AnnotatedKernel>>>,
    non_fallthrough: DispatchKeySet,
    non_fallthrough_per_backend: [DispatchKeySet; NUM_BACKENDS as usize],
    requires_per_backend: bool,
}

impl DispatchTable {
    /// A table with every slot missing.
    pub(crate) fn empty() -> DispatchTable {
        DispatchTable {
            slots: vec![None; NUM_RUNTIME_ENTRIES],
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

    /// Recomputes the slots of `keys` (and of `Undefined` if asked), then the masks.
    pub(crate) fn update(
        &mut self,
        kernels: &KernelLists,
        fallbacks: &Fallbacks,
        keys: DispatchKeySet,
        undefined: bool,
    ) {
        if undefined {
            self.slots[0] = compute_entry(kernels, fallbacks, DispatchKey::Undefined).0;
        }
        for k in keys {
            self.slots[k.dispatch_table_index()] = compute_entry(kernels, fallbacks, k).0;
        }
        self.compute_masks();
    }

    fn compute_masks(&mut self) {
        let mut non_fallthrough = DispatchKeySet::FULL;
        let mut per_backend = [DispatchKeySet::FULL; NUM_BACKENDS as usize];
        for k in DispatchKeySet::FULL {
            let fallthrough = self.slots[k.dispatch_table_index()]
                .as_ref()
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
    pub(crate) fn lookup(&self, ks: DispatchKeySet) -> Option<&Arc<AnnotatedKernel>> {
        // The index is below NUM_RUNTIME_ENTRIES for every key set.
        self.slots
            .get(ks.get_dispatch_table_index_for_dispatch_key_set())
            .and_then(Option::as_ref)
    }

    /// Whether both tables hold the same kernels in every slot.
    pub(crate) fn same_kernels(&self, other: &DispatchTable) -> bool {
        self.slots.iter().zip(&other.slots).all(|(a, b)| match (a, b) {
            (Some(a), Some(b)) => a.same_as(b),
            (None, None) => true,
            _ => false,
        }) && self.non_fallthrough == other.non_fallthrough
            && self.requires_per_backend == other.requires_per_backend
            && (!self.requires_per_backend
                || self.non_fallthrough_per_backend == other.non_fallthrough_per_backend)
    }
}
