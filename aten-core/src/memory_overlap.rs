//! PyTorch's `MemoryOverlap`: whether a tensor's elements share memory
//! with each other or with another tensor's, answered cheaply and
//! conservatively (`TooHard` where a full answer would need a search).

use c10_core::{Error, LayoutRef, Result, TensorBase};

/// Whether some elements of one tensor share memory (`MemOverlap`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MemOverlap {
    /// No two elements share memory.
    No,
    /// Some elements share memory.
    Yes,
    /// Not known cheaply.
    TooHard,
}

/// How two tensors' memory relates (`MemOverlapStatus`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MemOverlapStatus {
    /// The same elements in the same order.
    Full,
    /// Some memory shared, not element for element.
    Partial,
    /// Disjoint.
    No,
    /// Not known cheaply.
    TooHard,
}

/// PyTorch's `compute_non_overlapping_and_dense`: the elements fill a
/// block of memory exactly, in some order of the dimensions.
pub fn is_non_overlapping_and_dense(sizes: &[i64], strides: &[i64]) -> bool {
    if sizes.len() == 1 {
        return sizes[0] < 2 || strides[0] == 1;
    }
    // Dimensions of size 0 or 1 last, the others by increasing stride.
    let mut perm: Vec<usize> = (0..sizes.len()).collect();
    perm.sort_by_key(|&d| (sizes[d] < 2, strides[d]));
    let mut require = 1i64;
    for d in perm {
        if sizes[d] < 2 {
            return true;
        }
        if strides[d] != require {
            return false;
        }
        match require.checked_mul(sizes[d]) {
            Some(r) => require = r,
            None => return false,
        }
    }
    true
}

fn dense(l: &LayoutRef<'_>) -> bool {
    is_non_overlapping_and_dense(l.sizes(), l.strides())
}

/// `has_internal_overlap`: `No` for a non-overlapping and dense layout,
/// `Yes` when a dimension of more than one element has stride 0.
pub fn has_internal_overlap(l: &LayoutRef<'_>) -> MemOverlap {
    if dense(l) {
        return MemOverlap::No;
    }
    if l.sizes()
        .iter()
        .zip(l.strides())
        .any(|(&s, &st)| st == 0 && s > 1)
    {
        return MemOverlap::Yes;
    }
    MemOverlap::TooHard
}

/// `get_overlap_status(a, b)`.
pub fn get_overlap_status(a: &TensorBase, b: &TensorBase) -> MemOverlapStatus {
    if a.is_same(b) {
        return MemOverlapStatus::Full;
    }
    let (Some(la), Some(lb)) = (a.layout(), b.layout()) else {
        return MemOverlapStatus::No;
    };
    if la.numel() == 0 || lb.numel() == 0 {
        return MemOverlapStatus::No;
    }
    if !dense(&la) || !dense(&lb) {
        return MemOverlapStatus::TooHard;
    }
    if !la.storage().is_same(lb.storage()) {
        return MemOverlapStatus::No;
    }
    // Byte extents in the shared storage (in i128: no overflow).
    let extent = |l: &LayoutRef<'_>| {
        let item = l.itemsize() as i128;
        let begin = i128::from(l.storage_offset()) * item;
        (begin, begin + i128::from(l.numel()) * item)
    };
    let ((a_begin, a_end), (b_begin, b_end)) = (extent(&la), extent(&lb));
    if a_begin == b_begin && a_end == b_end {
        return if la.strides() == lb.strides() {
            MemOverlapStatus::Full
        } else {
            MemOverlapStatus::Partial
        };
    }
    if a_begin < b_end && b_begin < a_end {
        return MemOverlapStatus::Partial;
    }
    MemOverlapStatus::No
}

/// `assert_no_internal_overlap`: PyTorch's error for a written-to tensor
/// whose elements share memory.
pub fn assert_no_internal_overlap(t: &TensorBase) -> Result<()> {
    match t.layout() {
        Some(l) if has_internal_overlap(&l) == MemOverlap::Yes => Err(Error::runtime(
            "unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation.",
        )),
        _ => Ok(()),
    }
}

/// `assert_no_overlap`: PyTorch's error for an input that shares any of
/// a written-to tensor's memory (all of it included).
pub fn assert_no_overlap(a: &TensorBase, b: &TensorBase) -> Result<()> {
    if matches!(
        get_overlap_status(a, b),
        MemOverlapStatus::Partial | MemOverlapStatus::Full
    ) {
        return Err(Error::runtime(
            "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please clone() the tensor before performing the operation.",
        ));
    }
    Ok(())
}

/// `assert_no_partial_overlap`: PyTorch's error for an input that shares
/// some, but not all, of a written-to tensor's memory.
pub fn assert_no_partial_overlap(a: &TensorBase, b: &TensorBase) -> Result<()> {
    if get_overlap_status(a, b) == MemOverlapStatus::Partial {
        return Err(Error::runtime(
            "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please clone() the tensor before performing the operation.",
        ));
    }
    Ok(())
}
