//! `index_put` and `index_put_` (CompositeExplicitAutograd: a clone of
//! `self`, then `_index_put_impl_`), the checks `_index_put_impl_` makes
//! on every backend, and its Meta kernel.
//!
//! `self[indices] = values` writes `values`, broadcast to the indexing
//! result's shape (see [`super::advanced_index`]), at the indexed
//! positions; with `accumulate` it adds instead, duplicates included. A
//! single mask and a one-element `values` without `accumulate` is
//! `masked_fill_` instead (PyTorch's `canDispatchToMaskedFill`), which
//! converts the value to `self`'s dtype.

use c10_core::warning::{warn, Warning};
use c10_core::{source_location, Error, MemoryFormat, Result};

use super::advanced_index::{
    check_index_count, check_index_tensor_types, check_mask_shape, is_mask, AdvancedIndex,
};
use super::dims::fmt_list;
use crate::generated::ops;
use crate::memory_overlap::{assert_no_overlap, has_internal_overlap, MemOverlap};
use crate::Tensor;

/// `index_put(self, indices, values, accumulate)`: `self` cloned (its
/// layout preserved), then written.
pub fn index_put(
    self_: &Tensor,
    indices: Vec<Option<Tensor>>,
    values: &Tensor,
    accumulate: bool,
) -> Result<Tensor> {
    let result = ops::clone_with(
        self_,
        ops::CloneOptions {
            memory_format: Some(MemoryFormat::Preserve),
        },
    )?;
    ops::index_put_with_(
        &result,
        indices,
        values,
        ops::IndexPutInplaceOptions { accumulate },
    )
}

/// `index_put_(self, indices, values, accumulate)`.
pub fn index_put_(
    self_: &Tensor,
    indices: Vec<Option<Tensor>>,
    values: &Tensor,
    accumulate: bool,
) -> Result<Tensor> {
    ops::_index_put_impl_with_(
        self_,
        indices,
        values,
        ops::IndexPutImplInplaceOptions {
            accumulate,
            unsafe_: false,
        },
    )
}

/// `canDispatchToMaskedFill`: for one mask (bool or uint8, on `self`'s
/// device, the other entries `None`) and a one-element `value`, the mask
/// unsqueezed to broadcast against `self`. (PyTorch asks for a CPU
/// `value`; a value on `self`'s device serves too, so that Meta tensors
/// follow the path CPU tensors take.)
pub fn masked_fill_mask(
    self_: &Tensor,
    indices: &[Option<Tensor>],
    value: &Tensor,
) -> Result<Option<Tensor>> {
    let value_device_ok = value
        .device()
        .is_some_and(|d| d == c10_core::Device::CPU || Some(d) == self_.device());
    if value.numel() != 1 || !value_device_ok {
        return Ok(None);
    }
    let mut consumed = 0;
    let mut mask: Option<&Tensor> = None;
    for entry in indices {
        match entry.as_ref().filter(|t| t.defined()) {
            None => consumed += 1,
            Some(t) => {
                if !is_mask(t) || t.device() != self_.device() || mask.is_some() {
                    return Ok(None);
                }
                mask = Some(t);
                consumed += check_mask_shape(self_, t, consumed)?;
            }
        }
    }
    let Some(mask) = mask else {
        return Ok(None);
    };
    let mut mask = mask.clone();
    for _ in consumed..self_.dim() {
        mask = ops::unsqueeze(&mask, -1)?;
    }
    Ok(Some(mask))
}

/// `is_expandable_to(shape, desired)`.
fn is_expandable_to(shape: &[i64], desired: &[i64]) -> bool {
    shape.len() <= desired.len()
        && shape
            .iter()
            .rev()
            .zip(desired.iter().rev())
            .all(|(&s, &d)| s == d || s == 1)
}

/// The checks of `make_index_put_iterator`: `values` broadcasts to the
/// indexing result's shape and has `self`'s dtype.
pub fn check_index_put_values(info: &AdvancedIndex, values: &Tensor) -> Result<()> {
    let shape = info.result_shape();
    let value_sizes = values.sizes();
    if !is_expandable_to(&value_sizes, &shape) {
        return Err(Error::runtime(format!(
            "shape mismatch: value tensor of shape {} cannot be broadcast to indexing result of shape {}",
            fmt_list(&value_sizes),
            fmt_list(&shape)
        )));
    }
    check_same_dtype(&info.src, values)
}

/// `Index put requires the source and destination dtypes match`.
fn check_same_dtype(self_: &Tensor, values: &Tensor) -> Result<()> {
    let (dst, src) = (self_.dtype(), values.dtype());
    if dst != src {
        let name =
            |d: Option<c10_core::ScalarType>| d.map_or("undefined".into(), |d| d.to_string());
        return Err(Error::runtime(format!(
            "Index put requires the source and destination dtypes match, got {} for the destination and {} for the source.",
            name(dst),
            name(src)
        )));
    }
    Ok(())
}

/// What `_index_put_impl_` does before it writes, on every backend: the
/// index count, the deprecation warning for an expanded `self`, the
/// masked-fill path (returned: the mask), and the overlap checks.
pub fn index_put_prologue(
    self_: &Tensor,
    indices: &[Option<Tensor>],
    values: &Tensor,
    accumulate: bool,
) -> Result<Option<Tensor>> {
    check_index_count(self_, indices.len())?;
    if let Some(layout) = self_.layout() {
        if has_internal_overlap(&layout) == MemOverlap::Yes {
            warn(Warning::user(
                source_location!(),
                "Use of index_put_ on expanded tensors is deprecated. Please clone() the tensor before performing this operation. This also applies to advanced indexing e.g. tensor[indices] = tensor",
            ));
        }
    }
    if !accumulate {
        if let Some(mask) = masked_fill_mask(self_, indices, values)? {
            return Ok(Some(mask));
        }
    }
    assert_no_overlap(self_, values)?;
    for index in indices.iter().flatten() {
        assert_no_overlap(self_, index)?;
    }
    Ok(None)
}

/// The checks of `_index_put_impl_` that need no data (its Meta kernel).
/// Masks select a number of elements only their data knows, so with a
/// mask the index broadcast and the value shape are not checked.
pub(crate) fn index_put_checks_without_data(
    self_: &Tensor,
    indices: &[Option<Tensor>],
    values: &Tensor,
    accumulate: bool,
) -> Result<()> {
    if let Some(mask) = index_put_prologue(self_, indices, values, accumulate)? {
        ops::masked_fill_scalar_(self_, &mask, c10_core::Scalar::Bool(false))?;
        return Ok(());
    }
    let has_mask = indices.iter().flatten().any(is_mask);
    if has_mask {
        check_index_tensor_types(indices)?;
        let mut consumed = 0;
        for entry in indices {
            match entry.as_ref().filter(|t| t.defined()) {
                Some(t) if is_mask(t) => consumed += check_mask_shape(self_, t, consumed)?,
                _ => consumed += 1,
            }
        }
        check_same_dtype(self_, values)?;
    } else {
        let info = AdvancedIndex::new(self_, indices)?;
        check_index_put_values(&info, values)?;
    }
    Ok(())
}
