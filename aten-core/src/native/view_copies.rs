//! The functional forms of views (CompositeExplicitAutogradNonFunctional,
//! as PyTorch generates them): each `*_copy` is its view materialised in a
//! fresh contiguous tensor, and each `*_scatter` writes a new value of a
//! view into a copy of the view's base (`as_strided_scatter` into one that
//! keeps the base's layout, `clone_preserve_strides`). Functionalization replays views and
//! their inverses with them.

use c10_core::{Error, MemoryFormat, Result};

use super::dims::fmt_list;
use crate::generated::ops;
use crate::memory_overlap::{has_internal_overlap, MemOverlap};
use crate::Tensor;

/// A view materialised: `clone(memory_format=contiguous)`.
fn materialise(view: Result<Tensor>) -> Result<Tensor> {
    ops::clone_op()?.call((&view?, Some(MemoryFormat::Contiguous)))
}

/// `view_copy(size)`.
pub fn view_copy(self_: &Tensor, size: &[i64]) -> Result<Tensor> {
    // A view PyTorch cannot express as a view of this layout is a reshape.
    match ops::view(self_, size) {
        Ok(v) => materialise(Ok(v)),
        Err(_) => materialise(ops::reshape(self_, size)),
    }
}

/// `alias_copy()`.
pub fn alias_copy(self_: &Tensor) -> Result<Tensor> {
    materialise(ops::alias(self_))
}

/// `t_copy()`.
pub fn t_copy(self_: &Tensor) -> Result<Tensor> {
    materialise(ops::t(self_))
}

/// `transpose_copy.int(dim0, dim1)`.
pub fn transpose_copy_int(self_: &Tensor, dim0: i64, dim1: i64) -> Result<Tensor> {
    materialise(ops::transpose_int(self_, dim0, dim1))
}

/// `permute_copy(dims)`.
pub fn permute_copy(self_: &Tensor, dims: &[i64]) -> Result<Tensor> {
    materialise(ops::permute(self_, dims))
}

/// `unsqueeze_copy(dim)`.
pub fn unsqueeze_copy(self_: &Tensor, dim: i64) -> Result<Tensor> {
    materialise(ops::unsqueeze(self_, dim))
}

/// `squeeze_copy()`.
pub fn squeeze_copy(self_: &Tensor) -> Result<Tensor> {
    materialise(ops::squeeze(self_))
}

/// `squeeze_copy.dim(dim)`.
pub fn squeeze_copy_dim(self_: &Tensor, dim: i64) -> Result<Tensor> {
    materialise(ops::squeeze_dim(self_, dim))
}

/// `squeeze_copy.dims(dim)`.
pub fn squeeze_copy_dims(self_: &Tensor, dim: &[i64]) -> Result<Tensor> {
    materialise(ops::squeeze_dims(self_, dim))
}

/// `select_copy.int(dim, index)`.
pub fn select_copy_int(self_: &Tensor, dim: i64, index: i64) -> Result<Tensor> {
    materialise(ops::select_int(self_, dim, index))
}

/// `slice_copy.Tensor(dim, start, end, step)`.
pub fn slice_copy_tensor(
    self_: &Tensor,
    dim: i64,
    start: Option<i64>,
    end: Option<i64>,
    step: i64,
) -> Result<Tensor> {
    materialise(ops::slice_tensor_op()?.call((self_, dim, start, end, step)))
}

/// `expand_copy(size, implicit)`.
pub fn expand_copy(self_: &Tensor, size: &[i64], implicit: bool) -> Result<Tensor> {
    materialise(ops::expand_op()?.call((self_, size, implicit)))
}

/// `as_strided_copy(size, stride, storage_offset)`.
pub fn as_strided_copy(
    self_: &Tensor,
    size: &[i64],
    stride: &[i64],
    storage_offset: Option<i64>,
) -> Result<Tensor> {
    materialise(ops::as_strided_op()?.call((self_, size, stride, storage_offset)))
}

/// `split_copy.Tensor(split_size, dim)`.
pub fn split_copy_tensor(self_: &Tensor, split_size: i64, dim: i64) -> Result<Vec<Tensor>> {
    ops::split_tensor_op()?
        .call((self_, split_size, dim))?
        .into_iter()
        .map(|v| materialise(Ok(v)))
        .collect()
}

/// `clone_preserve_strides`: a copy of `self_`'s whole storage, viewed with
/// `self_`'s sizes, strides and offset, so that offsets and strides given
/// for `self_` mean the same elements in the copy (a plain clone when
/// `self_` overlaps itself).
pub fn clone_preserve_strides(self_: &Tensor) -> Result<Tensor> {
    let l = self_
        .layout()
        .ok_or_else(|| Error::runtime("Tensor is undefined"))?;
    if has_internal_overlap(&l) == MemOverlap::Yes {
        drop(l);
        return ops::clone(self_);
    }
    let numel = i64::try_from(l.storage().nbytes() / l.itemsize().max(1))
        .map_err(|_| Error::runtime("clone_preserve_strides: storage too large"))?;
    let (sizes, strides, offset) = (l.sizes().to_vec(), l.strides().to_vec(), l.storage_offset());
    drop(l);
    let whole = ops::as_strided_op()?.call((self_, &[numel][..], &[1][..], Some(0)))?;
    let copy = ops::clone(&whole)?;
    ops::as_strided_op()?.call((&copy, &sizes[..], &strides[..], Some(offset)))
}

/// A copy of `self_` with `src` written into the view `view_of` takes of
/// it (PyTorch's `*_scatter` kernels: a clone, the view, a size check,
/// `copy_`).
fn scatter(
    self_: &Tensor,
    src: &Tensor,
    view_of: impl FnOnce(&Tensor) -> Result<Tensor>,
) -> Result<Tensor> {
    scatter_into(ops::clone(self_)?, src, view_of)
}

fn scatter_into(
    output: Tensor,
    src: &Tensor,
    view_of: impl FnOnce(&Tensor) -> Result<Tensor>,
) -> Result<Tensor> {
    let slice = view_of(&output)?;
    let (slice_sizes, src_sizes) = (slice.sizes(), src.sizes());
    if slice_sizes != src_sizes {
        return Err(Error::runtime(format!(
            "expected src to have a size equal to the slice of self. src size = {}, slice size = {}",
            fmt_list(&src_sizes),
            fmt_list(&slice_sizes)
        )));
    }
    ops::copy_(&slice, src)?;
    Ok(output)
}

/// `slice_scatter(src, dim, start, end, step)`.
pub fn slice_scatter(
    self_: &Tensor,
    src: &Tensor,
    dim: i64,
    start: Option<i64>,
    end: Option<i64>,
    step: i64,
) -> Result<Tensor> {
    scatter(self_, src, |o| {
        ops::slice_tensor_op()?.call((o, dim, start, end, step))
    })
}

/// `select_scatter(src, dim, index)`.
pub fn select_scatter(self_: &Tensor, src: &Tensor, dim: i64, index: i64) -> Result<Tensor> {
    scatter(self_, src, |o| ops::select_int(o, dim, index))
}

/// `as_strided_scatter(src, size, stride, storage_offset)`.
pub fn as_strided_scatter(
    self_: &Tensor,
    src: &Tensor,
    size: &[i64],
    stride: &[i64],
    storage_offset: Option<i64>,
) -> Result<Tensor> {
    // Offsets and strides are absolute: the copy keeps self's layout.
    scatter_into(clone_preserve_strides(self_)?, src, |o| {
        ops::as_strided_op()?.call((o, size, stride, storage_offset))
    })
}
