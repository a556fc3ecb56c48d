//! `DispatchKeySet`: a 64-bit set of dispatch keys, and the named sets and
//! alias-key mappings PyTorch defines on it.
//!
//! # Layout
//!
//! The low [`NUM_BACKENDS`] bits are backend bits (`BackendComponent` `b` is bit
//! `b - 1`); the bits above are functionality bits (functionality key `f` is
//! bit `NUM_BACKENDS + f - 1`). A per-backend runtime key such as `CPU` sets
//! its functionality bit (`Dense`) *and* its backend bit (`CPUBit`). A set is
//! therefore a cross product: `{AutogradCUDA, CPU}` also holds `CUDA` and
//! `AutogradCPU`, and "only AutogradCUDA and CPU" cannot be represented.
//!
//! Removing a key ([`DispatchKeySet::remove`], and set difference) clears only
//! functionality bits: backend bits may be shared with other keys of the set,
//! so they stay.
//!
//! # Priority and table index
//!
//! Higher bits have higher priority. [`DispatchKeySet::highest_priority_type_id`]
//! is the highest functionality crossed with the highest backend.
//! Every runtime key has one slot in an operator's flat dispatch table;
//! [`DispatchKeySet::get_dispatch_table_index_for_dispatch_key_set`] maps the
//! set's highest runtime key to that slot in a handful of instructions:
//! per-backend functionalities take [`NUM_BACKENDS`] consecutive slots each,
//! the other functionalities one, and `Undefined` is slot 0.

use std::fmt;

use crate::dispatch_key::{BackendComponent, DispatchKey, NUM_BACKENDS, NUM_FUNCTIONALITY_KEYS};

/// The mask of all backend bits (`full_backend_mask`).
pub const FULL_BACKEND_MASK: u64 = (1u64 << NUM_BACKENDS) - 1;

/// A set of dispatch keys (`c10::DispatchKeySet`).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Default)]
#[repr(transparent)]
pub struct DispatchKeySet {
    repr: u64,
}

/// `(offset, backend mask)` per functionality bit: where a functionality's
/// slots start in the runtime table, and whether a backend index is added.
#[derive(Copy, Clone)]
struct OffsetAndMask {
    offset: u16,
    mask: u64,
}

const fn compute_offsets_and_masks() -> [OffsetAndMask; NUM_FUNCTIONALITY_KEYS as usize] {
    let mut table = [OffsetAndMask { offset: 0, mask: 0 }; NUM_FUNCTIONALITY_KEYS as usize];
    let mut f = 1;
    while f < NUM_FUNCTIONALITY_KEYS as usize {
        let prev = table[f - 1];
        let offset = prev.offset
            + if prev.mask == 0 {
                1
            } else {
                NUM_BACKENDS as u16
            };
        let mask = if DispatchKey::from_u8(f as u8)
            .unwrap()
            .is_per_backend_functionality()
        {
            FULL_BACKEND_MASK
        } else {
            0
        };
        table[f] = OffsetAndMask { offset, mask };
        f += 1;
    }
    table
}

const OFFSETS_AND_MASKS: [OffsetAndMask; NUM_FUNCTIONALITY_KEYS as usize] =
    compute_offsets_and_masks();

/// Number of slots in an operator's runtime dispatch table
/// (`num_runtime_entries`): one per runtime key, `Undefined` included.
pub const NUM_RUNTIME_ENTRIES: usize = {
    let last = OFFSETS_AND_MASKS[NUM_FUNCTIONALITY_KEYS as usize - 1];
    last.offset as usize
        + if last.mask == 0 {
            1
        } else {
            NUM_BACKENDS as usize
        }
};

/// Index of the highest set bit plus one; 0 for no bits (`indexOfHighestBit`).
#[inline(always)]
const fn index_of_highest_bit(x: u64) -> u32 {
    64 - x.leading_zeros()
}

impl DispatchKeySet {
    /// The empty set.
    pub const EMPTY: DispatchKeySet = DispatchKeySet { repr: 0 };

    /// Every functionality key with every backend (`DispatchKeySet(FULL)`).
    pub const FULL: DispatchKeySet = DispatchKeySet {
        repr: (1u64 << (NUM_BACKENDS + NUM_FUNCTIONALITY_KEYS - 1)) - 1,
    };

    /// The empty set.
    #[inline]
    pub const fn empty_set() -> DispatchKeySet {
        DispatchKeySet::EMPTY
    }

    /// A set from raw bits (`DispatchKeySet(RAW, bits)`).
    #[inline]
    pub const fn from_raw_repr(repr: u64) -> DispatchKeySet {
        DispatchKeySet { repr }
    }

    /// `DispatchKeySet(FULL)`.
    #[inline]
    pub const fn full() -> DispatchKeySet {
        DispatchKeySet::FULL
    }

    /// `DispatchKeySet(FULL_AFTER, k)`: every backend bit, every functionality
    /// strictly below `k`'s functionality, and `PythonDispatcher`.
    pub const fn full_after(k: DispatchKey) -> DispatchKeySet {
        let f = k.to_functionality_key().as_u8();
        let repr = if f == 0 {
            0
        } else {
            (1u64 << (NUM_BACKENDS + f - 1)) - 1
        };
        DispatchKeySet { repr }.add(DispatchKey::PythonDispatcher)
    }

    /// The set holding one key. `Undefined`, the markers past the runtime keys
    /// and alias keys give the empty set (as in PyTorch); a `StartOf*Backends`
    /// marker gives its bare functionality bit.
    #[inline]
    pub const fn from_key(k: DispatchKey) -> DispatchKeySet {
        let v = k.as_u8();
        if v == 0 {
            DispatchKeySet::EMPTY
        } else if v <= NUM_FUNCTIONALITY_KEYS {
            DispatchKeySet {
                repr: 1u64 << (NUM_BACKENDS + v - 1),
            }
        } else if v <= DispatchKey::EndOfRuntimeBackendKeys.as_u8() {
            let f = k.to_functionality_key().as_u8();
            let functionality_bit = 1u64 << (NUM_BACKENDS + f - 1);
            DispatchKeySet {
                repr: functionality_bit
                    | DispatchKeySet::from_backend(k.to_backend_component()).repr,
            }
        } else {
            DispatchKeySet::EMPTY
        }
    }

    /// The set holding one backend bit (`InvalidBit` gives the empty set).
    #[inline]
    pub const fn from_backend(b: BackendComponent) -> DispatchKeySet {
        let v = b as u8;
        DispatchKeySet {
            repr: if v == 0 { 0 } else { 1u64 << (v - 1) },
        }
    }

    /// The union of the given keys' sets.
    pub const fn from_keys(keys: &[DispatchKey]) -> DispatchKeySet {
        let mut repr = 0;
        let mut i = 0;
        while i < keys.len() {
            repr |= DispatchKeySet::from_key(keys[i]).repr;
            i += 1;
        }
        DispatchKeySet { repr }
    }

    /// The union of the given backends' bits.
    pub const fn from_backends(backends: &[BackendComponent]) -> DispatchKeySet {
        let mut repr = 0;
        let mut i = 0;
        while i < backends.len() {
            repr |= DispatchKeySet::from_backend(backends[i]).repr;
            i += 1;
        }
        DispatchKeySet { repr }
    }

    /// The raw bits.
    #[inline]
    pub const fn raw_repr(self) -> u64 {
        self.repr
    }

    /// Whether no bit is set.
    #[inline]
    pub const fn is_empty(self) -> bool {
        self.repr == 0
    }

    /// `has(k)`: every bit of `DispatchKeySet(k)` is set.
    #[inline]
    pub const fn has(self, k: DispatchKey) -> bool {
        self.has_all(DispatchKeySet::from_key(k))
    }

    /// `has_backend(b)`.
    #[inline]
    pub const fn has_backend(self, b: BackendComponent) -> bool {
        self.has_all(DispatchKeySet::from_backend(b))
    }

    /// `has_all(ks)`: `ks` is a subset.
    #[inline]
    pub const fn has_all(self, ks: DispatchKeySet) -> bool {
        self.repr & ks.repr == ks.repr
    }

    /// `has_any(ks)`: the sets share a bit.
    #[inline]
    pub const fn has_any(self, ks: DispatchKeySet) -> bool {
        self.repr & ks.repr != 0
    }

    /// `isSupersetOf(ks)`.
    #[inline]
    pub const fn is_superset_of(self, ks: DispatchKeySet) -> bool {
        self.has_all(ks)
    }

    /// Union (`|`).
    #[inline]
    pub const fn union(self, other: DispatchKeySet) -> DispatchKeySet {
        DispatchKeySet {
            repr: self.repr | other.repr,
        }
    }

    /// Intersection (`&`).
    #[inline]
    pub const fn intersection(self, other: DispatchKeySet) -> DispatchKeySet {
        DispatchKeySet {
            repr: self.repr & other.repr,
        }
    }

    /// Difference (`-`): removes `other`'s functionality bits; backend bits stay.
    #[inline]
    pub const fn difference(self, other: DispatchKeySet) -> DispatchKeySet {
        DispatchKeySet {
            repr: self.repr & (FULL_BACKEND_MASK | !other.repr),
        }
    }

    /// `add(k)`.
    #[inline]
    #[must_use]
    pub const fn add(self, k: DispatchKey) -> DispatchKeySet {
        self.union(DispatchKeySet::from_key(k))
    }

    /// `remove(k)`: clears `k`'s functionality bit only.
    #[inline]
    #[must_use]
    pub const fn remove(self, k: DispatchKey) -> DispatchKeySet {
        DispatchKeySet {
            repr: self.repr & !(DispatchKeySet::from_key(k).repr & !FULL_BACKEND_MASK),
        }
    }

    /// `add(BackendComponent)`.
    #[inline]
    #[must_use]
    pub const fn add_backend(self, b: BackendComponent) -> DispatchKeySet {
        self.union(DispatchKeySet::from_backend(b))
    }

    /// `remove_backend(b)`: clears one backend bit.
    #[inline]
    #[must_use]
    pub const fn remove_backend(self, b: BackendComponent) -> DispatchKeySet {
        DispatchKeySet {
            repr: self.repr & !DispatchKeySet::from_backend(b).repr,
        }
    }

    /// `highestFunctionalityKey()`: the functionality of the highest bit, or
    /// `Undefined` when only backend bits (or none) are set.
    #[inline]
    pub const fn highest_functionality_key(self) -> DispatchKey {
        let idx = index_of_highest_bit(self.repr);
        if idx <= NUM_BACKENDS as u32 {
            return DispatchKey::Undefined;
        }
        match DispatchKey::from_u8((idx - NUM_BACKENDS as u32) as u8) {
            Some(k) => k,
            None => DispatchKey::Undefined,
        }
    }

    /// `highestBackendKey()`: the highest backend bit, or `InvalidBit`.
    #[inline]
    pub const fn highest_backend_key(self) -> BackendComponent {
        BackendComponent::from_index(index_of_highest_bit(self.repr & FULL_BACKEND_MASK) as u8)
    }

    /// `highestPriorityTypeId()`: the highest-priority runtime key.
    #[inline]
    pub const fn highest_priority_type_id(self) -> DispatchKey {
        let f = self.highest_functionality_key();
        if f.is_per_backend_functionality() {
            DispatchKey::to_runtime_per_backend_functionality_key(f, self.highest_backend_key())
        } else {
            f
        }
    }

    /// `getDispatchTableIndexForDispatchKeySet()`: the runtime-table slot of
    /// [`highest_priority_type_id`](Self::highest_priority_type_id). The empty
    /// set gives 0 (`Undefined`).
    #[inline(always)]
    pub const fn get_dispatch_table_index_for_dispatch_key_set(self) -> usize {
        let functionality_idx = index_of_highest_bit(self.repr >> NUM_BACKENDS) as usize;
        // A valid set has no bit past PythonDispatcher; clamp so a raw set with
        // stray high bits can never index out of the table.
        let functionality_idx = if functionality_idx < NUM_FUNCTIONALITY_KEYS as usize {
            functionality_idx
        } else {
            NUM_FUNCTIONALITY_KEYS as usize - 1
        };
        let entry = OFFSETS_AND_MASKS[functionality_idx];
        let backend_idx = index_of_highest_bit((self.repr & entry.mask) >> 1) as usize;
        entry.offset as usize + backend_idx
    }

    /// Iterates the runtime keys of the set from lowest to highest priority;
    /// within one per-backend functionality, backends go in bit order.
    /// Building blocks (a per-backend functionality without a backend, or
    /// backend bits alone) yield nothing.
    #[inline]
    pub fn iter(self) -> DispatchKeySetIter {
        DispatchKeySetIter {
            functionality_bits: self.repr & !FULL_BACKEND_MASK & DispatchKeySet::FULL.repr,
            backend_bits: self.repr & FULL_BACKEND_MASK,
            current: DispatchKey::Undefined,
            pending_backends: 0,
        }
    }
}

/// Iterator over the runtime keys of a [`DispatchKeySet`].
#[derive(Clone)]
pub struct DispatchKeySetIter {
    functionality_bits: u64,
    backend_bits: u64,
    current: DispatchKey,
    pending_backends: u64,
}

impl Iterator for DispatchKeySetIter {
    type Item = DispatchKey;

    fn next(&mut self) -> Option<DispatchKey> {
        loop {
            if self.pending_backends != 0 {
                let bit = self.pending_backends.trailing_zeros();
                self.pending_backends &= self.pending_backends - 1;
                let backend = BackendComponent::from_index(bit as u8 + 1);
                return Some(DispatchKey::to_runtime_per_backend_functionality_key(
                    self.current,
                    backend,
                ));
            }
            if self.functionality_bits == 0 {
                return None;
            }
            let bit = self.functionality_bits.trailing_zeros();
            self.functionality_bits &= self.functionality_bits - 1;
            let key = DispatchKey::from_u8((bit + 1 - NUM_BACKENDS as u32) as u8)?;
            if key.is_per_backend_functionality() {
                self.current = key;
                self.pending_backends = self.backend_bits;
            } else {
                return Some(key);
            }
        }
    }
}

impl IntoIterator for DispatchKeySet {
    type Item = DispatchKey;
    type IntoIter = DispatchKeySetIter;
    fn into_iter(self) -> DispatchKeySetIter {
        self.iter()
    }
}

impl FromIterator<DispatchKey> for DispatchKeySet {
    fn from_iter<I: IntoIterator<Item = DispatchKey>>(iter: I) -> Self {
        iter.into_iter()
            .fold(DispatchKeySet::EMPTY, DispatchKeySet::add)
    }
}

impl From<DispatchKey> for DispatchKeySet {
    fn from(k: DispatchKey) -> Self {
        DispatchKeySet::from_key(k)
    }
}

impl From<BackendComponent> for DispatchKeySet {
    fn from(b: BackendComponent) -> Self {
        DispatchKeySet::from_backend(b)
    }
}

impl std::ops::BitOr for DispatchKeySet {
    type Output = DispatchKeySet;
    #[inline]
    fn bitor(self, rhs: DispatchKeySet) -> DispatchKeySet {
        self.union(rhs)
    }
}

impl std::ops::BitOrAssign for DispatchKeySet {
    #[inline]
    fn bitor_assign(&mut self, rhs: DispatchKeySet) {
        *self = self.union(rhs);
    }
}

impl std::ops::BitAnd for DispatchKeySet {
    type Output = DispatchKeySet;
    #[inline]
    fn bitand(self, rhs: DispatchKeySet) -> DispatchKeySet {
        self.intersection(rhs)
    }
}

impl std::ops::Sub for DispatchKeySet {
    type Output = DispatchKeySet;
    #[inline]
    fn sub(self, rhs: DispatchKeySet) -> DispatchKeySet {
        self.difference(rhs)
    }
}

/// PyTorch's `toString(DispatchKeySet)`: `DispatchKeySet()` or
/// `DispatchKeySet(K1, K2, ...)` in iteration order.
impl fmt::Display for DispatchKeySet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DispatchKeySet(")?;
        for (i, k) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(k.name())?;
        }
        f.write_str(")")
    }
}

impl fmt::Debug for DispatchKeySet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl DispatchKey {
    /// `getDispatchTableIndexForDispatchKey(k)`: this key's runtime-table slot.
    #[inline]
    pub const fn dispatch_table_index(self) -> usize {
        DispatchKeySet::from_key(self).get_dispatch_table_index_for_dispatch_key_set()
    }
}

// ---------------------------------------------------------------------------
// Named sets (DispatchKeySet.h / DispatchKeySet.cpp).
// ---------------------------------------------------------------------------

/// `autograd_dispatch_keyset`: the autograd functionalities, without backend
/// bits, so that subtracting it never clears a backend bit.
pub const AUTOGRAD_DISPATCH_KEYSET: DispatchKeySet = DispatchKeySet::from_keys(&[
    DispatchKey::AutogradFunctionality,
    DispatchKey::AutogradOther,
    DispatchKey::AutogradNestedTensor,
]);

/// `autocast_dispatch_keyset`.
pub const AUTOCAST_DISPATCH_KEYSET: DispatchKeySet = DispatchKeySet::from_keys(&[
    DispatchKey::AutocastCPU,
    DispatchKey::AutocastMPS,
    DispatchKey::AutocastCUDA,
    DispatchKey::AutocastXPU,
    DispatchKey::AutocastIPU,
    DispatchKey::AutocastHPU,
    DispatchKey::AutocastXLA,
    DispatchKey::AutocastPrivateUse1,
    DispatchKey::AutocastMTIA,
    DispatchKey::AutocastMAIA,
]);

/// `default_included_set`: the thread-local included set of a new thread.
pub const DEFAULT_INCLUDED_SET: DispatchKeySet =
    DispatchKeySet::from_keys(&[DispatchKey::BackendSelect, DispatchKey::ADInplaceOrView]);

/// `default_excluded_set`: the thread-local excluded set of a new thread
/// (autocast is off by default).
pub const DEFAULT_EXCLUDED_SET: DispatchKeySet = AUTOCAST_DISPATCH_KEYSET;

/// `autograd_dispatch_keyset_with_ADInplaceOrView`.
pub const AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW: DispatchKeySet =
    AUTOGRAD_DISPATCH_KEYSET.add(DispatchKey::ADInplaceOrView);

/// `python_ks`.
pub const PYTHON_KS: DispatchKeySet =
    DispatchKeySet::from_keys(&[DispatchKey::Python, DispatchKey::PythonTLSSnapshot]);

/// `autogradother_backends`: the backends served by `AutogradOther` (they have
/// no autograd key of their own), with all backend bits so that registration
/// can walk their runtime keys.
pub const AUTOGRADOTHER_BACKENDS: DispatchKeySet = DispatchKeySet::from_keys(&[
    DispatchKey::FPGA,
    DispatchKey::Vulkan,
    DispatchKey::Metal,
    DispatchKey::CustomRNGKeyId,
    DispatchKey::MkldnnCPU,
    DispatchKey::Sparse,
    DispatchKey::SparseCsr,
    DispatchKey::Quantized,
])
.union(DispatchKeySet::from_raw_repr(FULL_BACKEND_MASK));

/// `after_autograd_keyset`: every key below autograd.
pub const AFTER_AUTOGRAD_KEYSET: DispatchKeySet =
    DispatchKeySet::full_after(DispatchKey::AutogradOther);

/// `after_ADInplaceOrView_keyset`.
pub const AFTER_AD_INPLACE_OR_VIEW_KEYSET: DispatchKeySet =
    DispatchKeySet::full_after(DispatchKey::ADInplaceOrView);

/// `after_func_keyset`: below Functionalize, without ADInplaceOrView.
pub const AFTER_FUNC_KEYSET: DispatchKeySet =
    DispatchKeySet::full_after(DispatchKey::Functionalize).remove(DispatchKey::ADInplaceOrView);

/// `backend_bitset_mask`: all backend bits.
pub const BACKEND_BITSET_MASK: DispatchKeySet = DispatchKeySet::from_raw_repr(FULL_BACKEND_MASK);

/// `functorch_transforms_ks`.
pub const FUNCTORCH_TRANSFORMS_KS: DispatchKeySet = DispatchKeySet::from_keys(&[
    DispatchKey::FuncTorchBatched,
    DispatchKey::FuncTorchVmapMode,
    DispatchKey::Batched,
    DispatchKey::VmapMode,
    DispatchKey::FuncTorchGradWrapper,
]);

/// `functorch_batched_ks`: what `FuncTorchBatchedDecomposition` maps to.
pub const FUNCTORCH_BATCHED_KS: DispatchKeySet =
    DispatchKeySet::from_key(DispatchKey::FuncTorchBatched);

/// `backend_functionality_keys`: the backend functionalities (dense, quantized,
/// sparse, sparse CSR) with all backend bits.
pub const BACKEND_FUNCTIONALITY_KEYS: DispatchKeySet = DispatchKeySet::from_keys(&[
    DispatchKey::Dense,
    DispatchKey::Quantized,
    DispatchKey::Sparse,
    DispatchKey::SparseCsr,
])
.union(BACKEND_BITSET_MASK);

/// `backend_dispatch_keyset`: what `CompositeExplicitAutograd` maps to.
pub const BACKEND_DISPATCH_KEYSET: DispatchKeySet = AUTOGRADOTHER_BACKENDS.add(DispatchKey::Dense);

/// `non_functional_backend_dispatch_keyset`: what
/// `CompositeExplicitAutogradNonFunctional` maps to: the backend keys minus
/// sparse and the functional backends XLA and Lazy.
pub const NON_FUNCTIONAL_BACKEND_DISPATCH_KEYSET: DispatchKeySet = BACKEND_DISPATCH_KEYSET
    .remove(DispatchKey::Sparse)
    .remove_backend(BackendComponent::XLABit)
    .remove_backend(BackendComponent::LazyBit);

/// `math_dispatch_keyset`: what `CompositeImplicitAutograd` maps to: backend
/// and autograd keys, plus the nested-tensor backends.
pub const MATH_DISPATCH_KEYSET: DispatchKeySet = BACKEND_DISPATCH_KEYSET
    .union(AUTOGRAD_DISPATCH_KEYSET)
    .add(DispatchKey::NestedTensor);

/// `nested_dispatch_keyset`: what `CompositeImplicitAutogradNestedTensor` maps to.
pub const NESTED_DISPATCH_KEYSET: DispatchKeySet =
    DispatchKeySet::from_keys(&[DispatchKey::AutogradNestedTensor, DispatchKey::NestedTensor])
        .union(BACKEND_BITSET_MASK);

/// `isBackendDispatchKey`: a non-alias key in `backend_dispatch_keyset`
/// (the bare `NestedTensor` functionality excluded).
pub fn is_backend_dispatch_key(k: DispatchKey) -> bool {
    k != DispatchKey::Undefined
        && !k.is_alias()
        && k != DispatchKey::NestedTensor
        && BACKEND_DISPATCH_KEYSET.has(k)
}

/// `getRuntimeDispatchKeySet(alias)`: the runtime keys an alias key stands
/// for; a non-alias key maps to its own set.
pub const fn get_runtime_dispatch_key_set(k: DispatchKey) -> DispatchKeySet {
    match k {
        DispatchKey::Autograd => AUTOGRAD_DISPATCH_KEYSET.union(BACKEND_BITSET_MASK),
        DispatchKey::CompositeImplicitAutograd => MATH_DISPATCH_KEYSET,
        DispatchKey::CompositeImplicitAutogradNestedTensor => NESTED_DISPATCH_KEYSET,
        DispatchKey::CompositeExplicitAutograd => BACKEND_DISPATCH_KEYSET,
        DispatchKey::CompositeExplicitAutogradNonFunctional => {
            NON_FUNCTIONAL_BACKEND_DISPATCH_KEYSET
        }
        DispatchKey::FuncTorchBatchedDecomposition => FUNCTORCH_BATCHED_KS,
        _ => DispatchKeySet::from_key(k),
    }
}

/// `runtimeDispatchKeySetHas(alias, k)`: whether the runtime key `k` is one of
/// the keys `alias` stands for (for a non-alias `t`, whether `k == t`).
pub const fn runtime_dispatch_key_set_has(t: DispatchKey, k: DispatchKey) -> bool {
    match t {
        DispatchKey::Autograd => AUTOGRAD_DISPATCH_KEYSET.has(k.to_functionality_key()),
        DispatchKey::CompositeImplicitAutograd => MATH_DISPATCH_KEYSET.has(k),
        DispatchKey::CompositeImplicitAutogradNestedTensor => NESTED_DISPATCH_KEYSET.has(k),
        DispatchKey::CompositeExplicitAutograd => {
            k.as_u8() != DispatchKey::NestedTensor.as_u8() && BACKEND_DISPATCH_KEYSET.has(k)
        }
        DispatchKey::CompositeExplicitAutogradNonFunctional => {
            k.as_u8() != DispatchKey::NestedTensor.as_u8()
                && NON_FUNCTIONAL_BACKEND_DISPATCH_KEYSET.has(k)
        }
        DispatchKey::FuncTorchBatchedDecomposition => FUNCTORCH_BATCHED_KS.has(k),
        _ => t.as_u8() == k.as_u8(),
    }
}

/// `isIncludedInAlias(k, alias)`.
pub const fn is_included_in_alias(k: DispatchKey, alias: DispatchKey) -> bool {
    k.as_u8() != DispatchKey::Undefined.as_u8() && runtime_dispatch_key_set_has(alias, k)
}

/// `getBackendKeySetFromAutograd(k)`: the backend keys an autograd key serves;
/// empty for other keys and for autograd keys of backends without one.
pub const fn get_backend_key_set_from_autograd(k: DispatchKey) -> DispatchKeySet {
    match k {
        DispatchKey::AutogradOther => AUTOGRADOTHER_BACKENDS,
        DispatchKey::AutogradNestedTensor => {
            DispatchKeySet::from_key(DispatchKey::NestedTensor).union(BACKEND_BITSET_MASK)
        }
        DispatchKey::AutogradHIP | DispatchKey::AutogradVE | DispatchKey::AutogradMTIA => {
            DispatchKeySet::EMPTY
        }
        _ if k.to_functionality_key().as_u8() == DispatchKey::AutogradFunctionality.as_u8()
            && k.is_per_backend_runtime() =>
        {
            DispatchKeySet::from_key(k.to_backend_component().dense_key())
        }
        _ => DispatchKeySet::EMPTY,
    }
}

/// `getAutogradRelatedKeySetFromBackend(b)`: `{ADInplaceOrView, <autograd key of b>}`.
pub const fn get_autograd_related_key_set_from_backend(b: BackendComponent) -> DispatchKeySet {
    DispatchKeySet::from_keys(&[DispatchKey::ADInplaceOrView, b.autograd_key()])
}

/// `highestPriorityBackendTypeId(ks)`: the highest backend runtime key of the
/// set (autograd and wrapper keys ignored).
pub const fn highest_priority_backend_type_id(ks: DispatchKeySet) -> DispatchKey {
    ks.intersection(BACKEND_FUNCTIONALITY_KEYS)
        .highest_priority_type_id()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_has_one_slot_per_runtime_key() {
        let mut seen = [false; NUM_RUNTIME_ENTRIES];
        seen[0] = true;
        for k in DispatchKeySet::FULL {
            let i = k.dispatch_table_index();
            assert!(!seen[i], "{k} collides at {i}");
            seen[i] = true;
        }
        assert!(seen.iter().all(|s| *s));
        assert_eq!(NUM_RUNTIME_ENTRIES, 137);
        assert_eq!(DispatchKeySet::FULL.iter().count(), NUM_RUNTIME_ENTRIES - 1);
        assert_eq!(DispatchKey::PythonDispatcher.dispatch_table_index(), 136);
    }

    #[test]
    fn backend_dispatch_keys_are_the_backends_of_kernels() {
        for k in [
            DispatchKey::CPU,
            DispatchKey::CUDA,
            DispatchKey::Meta,
            DispatchKey::SparseCPU,
            DispatchKey::QuantizedCPU,
            DispatchKey::FPGA,
            DispatchKey::MkldnnCPU,
        ] {
            assert!(is_backend_dispatch_key(k), "{k}");
        }
        for k in [
            DispatchKey::Undefined,
            DispatchKey::AutogradCPU,
            DispatchKey::NestedTensor,
            DispatchKey::NestedTensorCPU,
            DispatchKey::BackendSelect,
            DispatchKey::Python,
            DispatchKey::CompositeImplicitAutograd,
            DispatchKey::CompositeExplicitAutograd,
        ] {
            assert!(!is_backend_dispatch_key(k), "{k}");
        }
    }

    #[test]
    fn show_semantics() {
        let cpu = DispatchKeySet::from_key(DispatchKey::CPU);
        assert!(cpu.has(DispatchKey::Dense));
        assert!(cpu.has_backend(BackendComponent::CPUBit));
        assert_eq!(
            DispatchKeySet::from_key(DispatchKey::Dense)
                | DispatchKeySet::from_backend(BackendComponent::CPUBit),
            cpu
        );
        let s = DispatchKeySet::from_keys(&[
            DispatchKey::AutogradFunctionality,
            DispatchKey::Dense,
            DispatchKey::CUDA,
            DispatchKey::CPU,
        ]);
        assert_eq!(
            s,
            DispatchKeySet::from_keys(&[DispatchKey::AutogradCUDA, DispatchKey::CPU])
        );
        assert_eq!(
            s.iter().collect::<Vec<_>>(),
            vec![
                DispatchKey::CPU,
                DispatchKey::CUDA,
                DispatchKey::AutogradCPU,
                DispatchKey::AutogradCUDA
            ]
        );
        assert_eq!(
            cpu.remove(DispatchKey::CPU),
            BackendComponent::CPUBit.into()
        );
        assert_eq!(
            highest_priority_backend_type_id(DispatchKeySet::from_keys(&[
                DispatchKey::AutogradCPU,
                DispatchKey::CPU
            ])),
            DispatchKey::CPU
        );
        assert_eq!(
            highest_priority_backend_type_id(DispatchKeySet::from_keys(&[
                DispatchKey::CUDA,
                DispatchKey::QuantizedCUDA
            ])),
            DispatchKey::QuantizedCUDA
        );
        assert_eq!(DispatchKeySet::EMPTY.to_string(), "DispatchKeySet()");
    }

    #[test]
    fn runtime_key_set_agrees_with_has() {
        for alias in DispatchKey::all().filter(|k| k.is_alias()) {
            for k in DispatchKeySet::FULL {
                assert_eq!(
                    get_runtime_dispatch_key_set(alias).has(k),
                    runtime_dispatch_key_set_has(alias, k),
                    "{alias} {k}"
                );
            }
        }
        for dk1 in DispatchKeySet::FULL {
            for dk2 in DispatchKeySet::FULL {
                assert_eq!(
                    get_runtime_dispatch_key_set(dk1).has(dk2),
                    runtime_dispatch_key_set_has(dk1, dk2)
                );
            }
        }
    }
}
