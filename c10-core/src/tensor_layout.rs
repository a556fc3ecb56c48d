//! `TensorLayout`: where a tensor's elements are (a storage, an offset,
//! sizes and strides), checked when it is built; `LayoutRef`, a snapshot of
//! a tensor's current layout; and `LayoutCell`, how a tensor holds its
//! layout while `resize_` replaces it from any thread.
//!
//! # Invariant
//!
//! Every `TensorLayout` has non-negative sizes whose product (`numel`)
//! fits in `i64`, non-negative strides, a non-negative offset, and, when it
//! has elements, every element it reaches lies inside its storage. So a
//! kernel that computes addresses from one layout's offset, sizes and
//! strides stays inside that layout's storage. A kernel must take one
//! snapshot ([`LayoutRef`]) and use it for everything: sizes, strides and
//! the data pointer read from two snapshots may describe two layouts.
//!
//! # Replacing layouts
//!
//! A tensor's first layout lives inline in its `TensorImpl` for as long as
//! the tensor does: reading it is one atomic load and a reference. Layouts
//! published by `resize_` (and `out=` arguments resized by a kernel) are
//! `Arc`s in an [`ArcSwap`]: a snapshot of one holds its `Arc` (so its
//! storage stays alive while a kernel uses it), and a replaced layout is
//! freed, with its storage, when the last snapshot of it is dropped.

use std::marker::PhantomData;
use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::{Arc, OnceLock};

use arc_swap::ArcSwap;

use crate::error::{Error, Result};
use crate::small_vec::SmallVec;
use crate::storage::Storage;

/// Dimensions a [`DimVector`] keeps inline.
const INLINE_DIMS: usize = 6;

/// Sizes or strides: inline up to 6 dimensions, on the heap beyond.
pub type DimVector = SmallVec<i64, INLINE_DIMS>;

/// Where a tensor's elements are: a storage, an offset, sizes and strides
/// (see the module docs for what every value satisfies).
#[derive(Debug)]
pub struct TensorLayout {
    storage: Storage,
    storage_offset: i64,
    sizes: DimVector,
    strides: DimVector,
    numel: i64,
    /// Bytes per element.
    itemsize: usize,
    /// `is_contiguous`, computed once (PyTorch's `is_contiguous_` flag).
    contiguous: bool,
}

impl TensorLayout {
    /// A layout over `storage` for elements of `itemsize` bytes, checked:
    /// PyTorch's errors for mismatched lengths, negative sizes, strides or
    /// offset, sizes whose element count or extent overflows, and elements
    /// outside the storage.
    pub fn new(
        storage: Storage,
        storage_offset: i64,
        sizes: &[i64],
        strides: &[i64],
        itemsize: usize,
    ) -> Result<TensorLayout> {
        check_rank(sizes, strides)?;
        let numel = checked_numel(sizes)?;
        if strides.iter().any(|&s| s < 0) {
            return Err(Error::runtime(format!(
                "as_strided: Negative strides are not supported at the moment, got strides: {strides:?}"
            )));
        }
        if storage_offset < 0 {
            return Err(Error::runtime(format!(
                "Tensor: invalid storage offset {storage_offset}"
            )));
        }
        if numel > 0 {
            let needed = storage_nbytes(sizes, strides, storage_offset, itemsize)?;
            if needed > storage.nbytes() {
                return Err(Error::runtime(format!(
                    "setStorage: sizes {sizes:?}, strides {strides:?}, storage offset {storage_offset}, and itemsize {itemsize} requiring a storage size of {needed} are out of bounds for storage of size {}",
                    storage.nbytes()
                )));
            }
        }
        Ok(TensorLayout {
            contiguous: compute_contiguous(sizes, strides, numel),
            storage,
            storage_offset,
            sizes: DimVector::from_slice(sizes),
            strides: DimVector::from_slice(strides),
            numel,
            itemsize,
        })
    }

    /// A contiguous layout of `sizes` at offset 0 over a storage made for
    /// it: `numel` is the checked product of `sizes` (all non-negative) and
    /// the storage holds at least `numel * itemsize` bytes (what
    /// [`contiguous_extent`] computed when the storage was allocated).
    #[inline(always)]
    pub(crate) fn contiguous_over_fresh(
        storage: Storage,
        sizes: &[i64],
        numel: i64,
        itemsize: usize,
    ) -> TensorLayout {
        debug_assert!(numel as usize * itemsize <= storage.nbytes());
        TensorLayout {
            storage,
            storage_offset: 0,
            sizes: DimVector::from_fn(sizes.len(), |d| sizes[d]),
            strides: contiguous_strides(sizes),
            numel,
            itemsize,
            contiguous: true,
        }
    }

    /// The storage.
    #[inline]
    pub fn storage(&self) -> &Storage {
        &self.storage
    }
    /// Offset into the storage, in elements.
    #[inline]
    pub fn storage_offset(&self) -> i64 {
        self.storage_offset
    }
    /// Sizes.
    #[inline]
    pub fn sizes(&self) -> &[i64] {
        &self.sizes
    }
    /// Strides, in elements.
    #[inline]
    pub fn strides(&self) -> &[i64] {
        &self.strides
    }
    /// Number of elements.
    #[inline]
    pub fn numel(&self) -> i64 {
        self.numel
    }
    /// Bytes per element.
    #[inline]
    pub fn itemsize(&self) -> usize {
        self.itemsize
    }
    /// Whether the elements are contiguous in row-major order.
    #[inline]
    pub fn is_contiguous(&self) -> bool {
        self.contiguous
    }

    /// The address of the first element (the storage's data plus the
    /// offset; the storage's data itself for a layout without elements,
    /// whose offset may lie anywhere), or `None` for a storage without
    /// data. Every element this layout reaches from it lies inside the
    /// storage. Reading or writing through it requires a
    /// [`StorageBorrow`](crate::StorageBorrow) of the storage.
    #[inline]
    pub fn data_ptr(&self) -> Option<*mut u8> {
        let base = self.storage.data_ptr()?.as_ptr();
        if self.numel == 0 {
            return Some(base);
        }
        // SAFETY: the layout has elements, so `new` (or
        // `contiguous_over_fresh`) checked that its first element, at
        // `storage_offset * itemsize` bytes, lies inside the storage's
        // allocation.
        Some(unsafe { base.add(self.storage_offset as usize * self.itemsize) })
    }
}

/// PyTorch's error unless `sizes` and `strides` have one entry per
/// dimension each.
pub fn check_rank(sizes: &[i64], strides: &[i64]) -> Result<()> {
    check_max_rank(sizes.len())?;
    if sizes.len() != strides.len() {
        return Err(Error::runtime(format!(
            "mismatch in length of strides and shape: {} vs {}",
            strides.len(),
            sizes.len()
        )));
    }
    Ok(())
}

/// The most dimensions a tensor may have. PyTorch sets no limit on the CPU,
/// but its kernels' set-up grows with the rank (dimension reordering and
/// coalescing are quadratic in it); a bound keeps a shape read from a file
/// from costing minutes before its first error. Real programs stay far
/// below it.
pub const MAX_RANK: usize = 1024;

/// Fails for a tensor of more than [`MAX_RANK`] dimensions.
#[inline]
pub fn check_max_rank(rank: usize) -> Result<()> {
    if rank > MAX_RANK {
        return Err(too_many_dimensions(rank));
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn too_many_dimensions(rank: usize) -> Error {
    Error::runtime(format!(
        "a tensor has at most {MAX_RANK} dimensions, but this one would have {rank}"
    ))
}

/// Checked product of sizes (element count), PyTorch's errors for a
/// negative size and for an overflowing count.
pub fn checked_numel(sizes: &[i64]) -> Result<i64> {
    check_max_rank(sizes.len())?;
    // One pass; a negative size is reported before an overflow, wherever
    // each comes.
    let mut numel: i64 = 1;
    let mut overflowed = false;
    for &s in sizes {
        if s < 0 {
            return Err(negative_dimension(s, sizes));
        }
        match numel.checked_mul(s) {
            Some(n) => numel = n,
            None => overflowed = true,
        }
    }
    if overflowed {
        return Err(size_overflow(sizes));
    }
    Ok(numel)
}

#[cold]
#[inline(never)]
fn negative_dimension(s: i64, sizes: &[i64]) -> Error {
    Error::runtime(format!(
        "Trying to create tensor with negative dimension {s}: {sizes:?}"
    ))
}

#[cold]
#[inline(never)]
fn size_overflow(sizes: &[i64]) -> Error {
    Error::runtime(format!(
        "Storage size calculation overflowed with sizes={sizes:?}"
    ))
}

/// The element count of `sizes` and the bytes a contiguous tensor of them
/// takes at `itemsize` bytes each.
#[inline]
pub fn contiguous_extent(sizes: &[i64], itemsize: usize) -> Result<(i64, usize)> {
    let numel = checked_numel(sizes)?;
    // `numel` is not negative, so the cast keeps its value.
    match (numel as usize).checked_mul(itemsize) {
        Some(nbytes) if nbytes <= isize::MAX as usize => Ok((numel, nbytes)),
        _ => Err(size_overflow(sizes)),
    }
}

/// Bytes a storage needs so that every element of a layout with elements
/// (all sizes positive, strides and offset non-negative) lies inside it.
pub fn storage_nbytes(
    sizes: &[i64],
    strides: &[i64],
    storage_offset: i64,
    itemsize: usize,
) -> Result<usize> {
    let overflow = || {
        Error::runtime(format!(
            "Storage size calculation overflowed with sizes={sizes:?} and strides={strides:?}"
        ))
    };
    if sizes.contains(&0) {
        return Ok(0);
    }
    let mut last = storage_offset;
    for (&size, &stride) in sizes.iter().zip(strides) {
        if stride < 0 {
            return Err(overflow());
        }
        last = (size - 1)
            .checked_mul(stride)
            .and_then(|x| last.checked_add(x))
            .ok_or_else(overflow)?;
    }
    usize::try_from(last)
        .ok()
        .and_then(|l| l.checked_add(1))
        .and_then(|n| n.checked_mul(itemsize))
        .filter(|&n| n <= isize::MAX as usize)
        .ok_or_else(overflow)
}

/// Whether `sizes` and `strides` describe a row-major contiguous layout:
/// dimensions of size 1 may have any stride, a tensor without elements is
/// contiguous (PyTorch's `compute_contiguous`). `numel` is the checked
/// product of `sizes`, so the running product cannot overflow.
fn compute_contiguous(sizes: &[i64], strides: &[i64], numel: i64) -> bool {
    if numel == 0 {
        return true;
    }
    let mut expected = 1i64;
    for (&size, &stride) in sizes.iter().zip(strides).rev() {
        if size == 1 {
            continue;
        }
        if stride != expected {
            return false;
        }
        expected *= size;
    }
    true
}

/// Contiguous (row-major) strides for `sizes` (saturating, for sizes whose
/// extent overflows: such sizes have no valid layout anyway).
#[inline(always)]
pub fn contiguous_strides(sizes: &[i64]) -> DimVector {
    if sizes.len() <= INLINE_DIMS {
        // Each stride is the product of the sizes after it, written once
        // (a few multiplications more than a backward pass, and no store
        // read back: every eager result's layout is made here).
        return DimVector::from_fn(sizes.len(), |d| {
            sizes[d + 1..]
                .iter()
                .fold(1i64, |acc, &size| acc.saturating_mul(size.max(1)))
        });
    }
    // One backward pass: linear in the rank, whatever the rank.
    let mut strides = DimVector::from_fn(sizes.len(), |_| 1);
    let mut acc = 1i64;
    for (stride, &size) in strides.iter_mut().zip(sizes).rev() {
        *stride = acc;
        acc = acc.saturating_mul(size.max(1));
    }
    strides
}

/// A snapshot of a tensor's layout: the layout it had when the snapshot
/// was taken, kept alive (with its storage) while the snapshot is.
///
/// One word: the layout's address, with the low bit set when the snapshot
/// holds a strong count of a replaced layout's `Arc` (a tensor's first
/// layout lives as long as the tensor, which `'a` borrows). A two-word enum
/// here was written in pieces and copied as a block on the hot path, a
/// store-forwarding stall in every iterator operand.
pub struct LayoutRef<'a> {
    tagged: NonNull<TensorLayout>,
    _borrow: PhantomData<&'a TensorLayout>,
}

/// The tag bit of a [`LayoutRef`] that owns a strong count.
const OWNS_ARC: usize = 1;

// The tag lives in the low bit of a layout's address.
const _: () = assert!(std::mem::align_of::<TensorLayout>() > OWNS_ARC);

impl<'a> LayoutRef<'a> {
    /// A snapshot of a layout that outlives `'a`.
    #[inline(always)]
    fn borrowed(layout: &'a TensorLayout) -> LayoutRef<'a> {
        LayoutRef {
            tagged: NonNull::from(layout),
            _borrow: PhantomData,
        }
    }

    /// A snapshot owning one strong count of `layout`.
    #[inline]
    fn owned(layout: Arc<TensorLayout>) -> LayoutRef<'a> {
        let ptr = Arc::into_raw(layout);
        // `TensorLayout` is aligned to at least 8 bytes, so the low bit of
        // its address is free for the tag.
        let tagged = ptr.map_addr(|a| a | OWNS_ARC).cast_mut();
        LayoutRef {
            // SAFETY: `Arc::into_raw` is never null, and setting a low bit
            // keeps it non-null.
            tagged: unsafe { NonNull::new_unchecked(tagged) },
            _borrow: PhantomData,
        }
    }

    #[inline(always)]
    fn owns_arc(&self) -> bool {
        self.tagged.as_ptr().addr() & OWNS_ARC != 0
    }

    #[inline(always)]
    fn ptr(&self) -> *const TensorLayout {
        self.tagged
            .as_ptr()
            .map_addr(|a| a & !OWNS_ARC)
            .cast_const()
    }
}

impl Deref for LayoutRef<'_> {
    type Target = TensorLayout;
    #[inline(always)]
    fn deref(&self) -> &TensorLayout {
        // SAFETY: untagged, the pointer is a `&'a TensorLayout`; tagged, it
        // came from `Arc::into_raw` and this snapshot holds a strong count
        // until it is dropped.
        unsafe { &*self.ptr() }
    }
}

impl Clone for LayoutRef<'_> {
    #[inline]
    fn clone(&self) -> Self {
        if self.owns_arc() {
            // SAFETY: the pointer came from `Arc::into_raw` and this
            // snapshot's strong count keeps the allocation alive; the clone
            // takes a count of its own.
            unsafe { Arc::increment_strong_count(self.ptr()) };
        }
        LayoutRef {
            tagged: self.tagged,
            _borrow: PhantomData,
        }
    }
}

impl Drop for LayoutRef<'_> {
    #[inline]
    fn drop(&mut self) {
        if self.owns_arc() {
            // SAFETY: this snapshot holds one strong count of the `Arc`
            // the pointer came from, and gives it back exactly once.
            drop(unsafe { Arc::from_raw(self.ptr()) });
        }
    }
}

// SAFETY: a snapshot is a `&TensorLayout` or an `Arc<TensorLayout>`, both
// `Send` and `Sync` because `TensorLayout` is.
unsafe impl Send for LayoutRef<'_> {}
// SAFETY: as above.
unsafe impl Sync for LayoutRef<'_> {}

impl std::fmt::Debug for LayoutRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

/// A tensor's layout: the first one inline, later ones published through
/// an [`ArcSwap`] (see the module docs).
pub(crate) struct LayoutCell {
    first: TensorLayout,
    replaced: OnceLock<ArcSwap<TensorLayout>>,
}

impl LayoutCell {
    #[inline(always)]
    pub(crate) fn new(first: TensorLayout) -> LayoutCell {
        LayoutCell {
            first,
            replaced: OnceLock::new(),
        }
    }

    /// A snapshot of the current layout.
    #[inline(always)]
    pub(crate) fn load(&self) -> LayoutRef<'_> {
        match self.replaced.get() {
            None => LayoutRef::borrowed(&self.first),
            Some(cell) => LayoutRef::owned(cell.load_full()),
        }
    }

    /// The first layout, current or not.
    #[inline]
    pub(crate) fn first(&self) -> &TensorLayout {
        &self.first
    }

    /// Whether a resize ever published a layout (the first one is then no
    /// longer current, but still holds its storage).
    #[inline]
    pub(crate) fn was_replaced(&self) -> bool {
        self.replaced.get().is_some()
    }

    /// Publishes `layout`; later snapshots see it. The layout it replaces
    /// is freed when its last snapshot is dropped (the first one when the
    /// tensor is).
    pub(crate) fn store(&self, layout: TensorLayout) {
        let layout = Arc::new(layout);
        match self.replaced.get() {
            Some(cell) => cell.store(layout),
            None => {
                if let Err(lost) = self.replaced.set(ArcSwap::new(layout)) {
                    // Another thread published first; ours replaces it.
                    if let Some(cell) = self.replaced.get() {
                        cell.store(lost.into_inner());
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Device;

    fn storage(nbytes: usize) -> Storage {
        Storage::new(nbytes, Device::CPU).unwrap()
    }

    #[test]
    fn contiguous_strides_are_products_of_the_later_sizes() {
        assert_eq!(&*contiguous_strides(&[2, 3, 4]), [12, 4, 1]);
        // Empty dimensions count as 1; no dimensions, no strides.
        assert_eq!(&*contiguous_strides(&[2, 0, 5]), [5, 5, 1]);
        assert!(contiguous_strides(&[]).is_empty());
        // Past the inline dimensions.
        let sizes = [2i64; 8];
        let strides: Vec<i64> = (0..8).rev().map(|d| 1i64 << d).collect();
        assert_eq!(&*contiguous_strides(&sizes), &strides[..]);
        // Extents past i64 saturate.
        assert_eq!(contiguous_strides(&[2, i64::MAX, 2])[0], i64::MAX);
        let mut long = vec![3i64; 10];
        long[1] = i64::MAX;
        let strides = contiguous_strides(&long);
        assert_eq!(
            (strides[0], strides[2], strides[9]),
            (i64::MAX, 3i64.pow(7), 1)
        );
        // Linear in the rank: 300,000 dimensions take no time.
        let ones = vec![1i64; 300_000];
        let strides = contiguous_strides(&ones);
        assert!(strides.iter().all(|&s| s == 1));
    }

    #[test]
    fn the_rank_is_bounded_before_any_work() {
        let ones = vec![1i64; MAX_RANK + 1];
        let err = checked_numel(&ones).unwrap_err();
        assert!(err.message().contains("at most 1024 dimensions"), "{err}");
        assert!(err.message().len() < 100);
        let err = TensorLayout::new(storage(8), 0, &ones, &ones, 4).unwrap_err();
        assert!(err.message().contains("at most 1024 dimensions"), "{err}");
        assert_eq!(checked_numel(&ones[..MAX_RANK]).unwrap(), 1);
    }

    #[test]
    fn extents_are_checked_in_one_pass() {
        assert_eq!(contiguous_extent(&[], 4).unwrap(), (1, 4));
        assert_eq!(contiguous_extent(&[2, 0, 3], 4).unwrap(), (0, 0));
        assert_eq!(contiguous_extent(&[2, 3], 8).unwrap(), (6, 48));
        // A negative size is reported even after a product that overflowed.
        let err = checked_numel(&[i64::MAX, 2, -3]).unwrap_err();
        assert!(err.message().contains("negative dimension -3"), "{err}");
        let err = checked_numel(&[i64::MAX, 2]).unwrap_err();
        assert!(err.message().contains("overflowed"), "{err}");
        // The element count fits; its bytes do not.
        let err = contiguous_extent(&[i64::MAX / 2], 4).unwrap_err();
        assert!(err.message().contains("overflowed"), "{err}");
    }

    #[test]
    fn every_element_lies_inside_the_storage() {
        let ok = TensorLayout::new(storage(24), 1, &[2, 2], &[2, 1], 4).unwrap();
        assert_eq!(ok.numel(), 4);
        // Offset 1, last element at 1 + 2 + 1 = 4: needs 5 * 4 = 20 bytes.
        assert!(TensorLayout::new(storage(19), 1, &[2, 2], &[2, 1], 4).is_err());
        for (sizes, strides, offset) in [
            (&[2, 2][..], &[-(1i64 << 30), 1 << 30][..], 0),
            (&[4, 2], &[-16, 64], 0),
            (&[-1, -1], &[1, 1], 0),
            (&[2], &[1], -1),
            (&[i64::MAX, 2], &[1, 1], 0),
            (&[2, 2], &[i64::MAX, 1], 0),
            (&[3], &[1, 1], 0),
        ] {
            assert!(
                TensorLayout::new(storage(64), offset, sizes, strides, 4).is_err(),
                "{sizes:?} {strides:?} {offset}"
            );
        }
        // Without elements: any strides and offset, and no overflow.
        let empty =
            TensorLayout::new(storage(0), 1 << 40, &[0, i64::MAX], &[i64::MAX, 1], 8).unwrap();
        assert!(empty.is_contiguous());
        assert_eq!(
            empty.data_ptr(),
            empty.storage().data_ptr().map(|p| p.as_ptr())
        );
    }

    #[test]
    fn replaced_layouts_are_freed_with_their_storage() {
        let cell = LayoutCell::new(TensorLayout::new(storage(4), 0, &[1], &[1], 4).unwrap());
        let second = storage(8);
        cell.store(TensorLayout::new(second.clone(), 0, &[2], &[1], 4).unwrap());
        let snapshot = cell.load();
        assert_eq!(snapshot.sizes(), &[2]);
        cell.store(TensorLayout::new(storage(12), 0, &[3], &[1], 4).unwrap());
        // The snapshot keeps the replaced layout (and its storage) alive.
        assert_eq!(second.use_count(), 2);
        assert_eq!(snapshot.sizes(), &[2]);
        drop(snapshot);
        assert_eq!(second.use_count(), 1);
        assert_eq!(cell.load().sizes(), &[3]);
        assert!(cell.was_replaced());
    }
}
