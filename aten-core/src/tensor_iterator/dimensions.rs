//! The dimension phases of a build: the broadcast shape
//! (`compute_shape`), per-operand byte strides (`compute_strides`), the
//! loop order (`reorder_dimensions`, fastest-varying first), the strides
//! of outputs that follow it, and `coalesce_dimensions`.

use c10_core::tensor_impl::DimVector;
use c10_core::{Error, LayoutRef, Result, SmallVec, TensorLayout};

use super::{convert, infer_size, Operand, TensorRef};

/// Whether two shapes are equal, compared element by element: a slice
/// comparison of integers calls `memcmp`, a call for the one or two
/// dimensions of an eager operand.
#[inline]
pub(super) fn same_dims(a: &[i64], b: &[i64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// Byte strides of `layout` for the broadcast `shape`, in the operands' own
/// dimension order: leading missing dims and size-1 dims broadcast with
/// stride 0. Fails unless the layout's sizes broadcast to `shape` (a
/// tensor resized since the shape was computed), so the loops never step
/// past the layout's elements.
pub(super) fn byte_strides(layout: &TensorLayout, shape: &[i64]) -> Result<DimVector> {
    let elem = layout.itemsize() as i64;
    let (sizes, strides) = (layout.sizes(), layout.strides());
    let mismatch = || {
        Error::runtime(format!(
            "operand with shape {sizes:?} doesn't match the broadcast shape {shape:?} (was it resized meanwhile?)"
        ))
    };
    let offset = shape.len().checked_sub(sizes.len()).ok_or_else(mismatch)?;
    (0..shape.len())
        .map(|i| {
            if i < offset {
                return Ok(0);
            }
            let d = i - offset;
            if sizes[d] == shape[i] {
                // With more than one element along `d`, the step is inside
                // the storage, whose size fits in `isize`. A size-1
                // dimension is never stepped along, but its stride still
                // orders dimensions as PyTorch's does (any value is valid
                // there, so it saturates).
                Ok(if shape[i] == 1 {
                    strides[d].saturating_mul(elem)
                } else {
                    strides[d] * elem
                })
            } else if sizes[d] == 1 {
                Ok(0)
            } else {
                Err(mismatch())
            }
        })
        .collect()
}

/// The broadcast shape of the inputs.
pub(super) fn broadcast_shape(inputs: &[TensorRef<'_>]) -> Result<DimVector> {
    let sizes: SmallVec<DimVector, 4> = inputs.iter().map(|t| t.sizes()).collect();
    if let Some((first, rest)) = sizes.split_first() {
        if rest.iter().all(|s| s == first) {
            return Ok(first.clone());
        }
    }
    let mut shape: Vec<i64> = Vec::new();
    for s in &sizes {
        shape = infer_size(&shape, s)?;
    }
    Ok(DimVector::from_slice(&shape))
}

/// `compute_fast_setup_type`: the output strides when every input has the
/// broadcast shape and all are contiguous (contiguous strides) or all share
/// one dense, non-overlapping layout (that layout).
pub(super) fn fast_setup_strides(inputs: &[TensorRef<'_>], shape: &[i64]) -> Option<Vec<i64>> {
    let layouts: Vec<LayoutRef<'_>> = inputs.iter().map(|t| t.layout()).collect::<Option<_>>()?;
    if layouts.is_empty() || layouts.iter().any(|l| l.sizes() != shape) {
        return None;
    }
    if layouts.iter().all(|l| l.is_contiguous()) {
        return Some(c10_core::tensor_impl::contiguous_strides(shape).to_vec());
    }
    let first = layouts[0].strides();
    let dense = convert::preserved_strides(&layouts[0]);
    if dense == first && layouts.iter().all(|l| l.strides() == first) {
        return Some(first.to_vec());
    }
    None
}

/// Strides (in elements) of a new tensor of `shape` whose dimensions,
/// fastest first, are `perm`. As PyTorch's `allocate_or_resize_outputs`:
/// the natural order gives contiguous strides; any other order gives
/// `compatible_stride`'s running products, which are 0 past an empty
/// dimension.
pub(super) fn strides_following(shape: &[i64], perm: &[usize]) -> Vec<i64> {
    if perm.iter().rev().enumerate().all(|(i, &d)| i == d) {
        return c10_core::tensor_impl::contiguous_strides(shape).to_vec();
    }
    let mut strides = vec![0i64; shape.len()];
    let mut acc = 1i64;
    for &d in perm {
        strides[d] = acc;
        acc = acc.saturating_mul(shape[d]);
    }
    strides
}

/// `reorder_dimensions`: the dimension order, fastest first. Starts from the
/// reversed order and insertion-sorts by the operands' strides (ties broken
/// by size), ignoring zero strides.
pub(super) fn reorder_dimensions(shape: &[i64], strides: &[DimVector]) -> Vec<usize> {
    let ndim = shape.len();
    let mut perm: Vec<usize> = (0..ndim).rev().collect();
    if ndim <= 1 {
        return perm;
    }
    let should_swap = |dim0: usize, dim1: usize| -> i32 {
        for s in strides {
            let (s0, s1) = (s[dim0], s[dim1]);
            if s0 == 0 || s1 == 0 {
                continue;
            }
            if s0 < s1 {
                return -1;
            }
            if s0 > s1 {
                return 1;
            }
            if shape[dim0] > shape[dim1] {
                return 1;
            }
        }
        0
    };
    for i in 1..ndim {
        let mut dim1 = i;
        for dim0 in (0..i).rev() {
            let c = should_swap(perm[dim0], perm[dim1]);
            if c > 0 {
                perm.swap(dim0, dim1);
                dim1 = dim0;
            } else if c < 0 {
                break;
            }
        }
    }
    perm
}

/// `coalesce_dimensions`: merges adjacent dimensions that every operand
/// walks contiguously.
pub(super) fn coalesce(shape: &mut DimVector, operands: &mut [Operand<'_>]) {
    let ndim = shape.len();
    if ndim <= 1 {
        return;
    }
    let can_coalesce = |shape: &[i64], ops: &[Operand], d0: usize, d1: usize| {
        let (s0, s1) = (shape[d0], shape[d1]);
        if s0 == 1 || s1 == 1 {
            return true;
        }
        ops.iter().all(|op| s0 * op.strides[d0] == op.strides[d1])
    };
    let mut prev = 0;
    for dim in 1..ndim {
        if can_coalesce(shape, operands, prev, dim) {
            if shape[prev] == 1 {
                for op in operands.iter_mut() {
                    op.strides[prev] = op.strides[dim];
                }
            }
            shape[prev] *= shape[dim];
        } else {
            prev += 1;
            if prev != dim {
                for op in operands.iter_mut() {
                    op.strides[prev] = op.strides[dim];
                }
                shape[prev] = shape[dim];
            }
        }
    }
    shape.truncate(prev + 1);
    for op in operands.iter_mut() {
        op.strides.truncate(prev + 1);
    }
}
