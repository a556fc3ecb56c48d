//! View and shape kernels shared by every backend with strided storage:
//! each result shares its input's storage, with sizes, strides and offset
//! as PyTorch's (`as_strided`, `view`, `t`, `transpose`, `permute`,
//! `unsqueeze`, `squeeze`, `select`, `slice`, `expand`, `alias`, `detach`,
//! `diagonal`) and the composites built on them (`reshape`, `flatten`,
//! `narrow`, `split`, `split_with_sizes`).

use c10_core::tensor_impl::DimVector;
use c10_core::{Error, MemoryFormat, Result};

use super::dims::{compute_stride, fmt_list, infer_size, wrap_dim};
use crate::generated::ops;
use crate::Tensor;

/// The sizes, strides and offset of one snapshot of `self_`'s layout.
fn geometry(self_: &Tensor) -> Result<(DimVector, DimVector, i64)> {
    let l = self_
        .layout()
        .ok_or_else(|| Error::runtime("Tensor is undefined"))?;
    Ok((
        DimVector::from_slice(l.sizes()),
        DimVector::from_slice(l.strides()),
        l.storage_offset(),
    ))
}

/// A view of `self_` with other geometry (same storage, same version
/// counter).
fn restride(self_: &Tensor, sizes: &[i64], strides: &[i64], offset: i64) -> Result<Tensor> {
    self_
        .base()
        .as_strided(sizes, strides, Some(offset))
        .map(Tensor::from)
}

/// `as_strided` (CPU and Meta): a view of the same storage.
pub fn as_strided_tensorimpl(
    self_: &Tensor,
    size: &[i64],
    stride: &[i64],
    storage_offset: Option<i64>,
) -> Result<Tensor> {
    self_
        .base()
        .as_strided(size, stride, storage_offset)
        .map(Tensor::from)
}

/// `view(size)` (CPU and Meta).
pub fn view(self_: &Tensor, size: &[i64]) -> Result<Tensor> {
    // One snapshot of the geometry: a resize on another thread cannot
    // make the checks below disagree with the sizes they index.
    let (g_sizes, g_strides, g_offset) = geometry(self_)?;
    let shape = infer_size(size, self_.numel())?;
    let stride = compute_stride(&g_sizes, &g_strides, &shape).ok_or_else(|| {
        Error::runtime(
            "view size is not compatible with input tensor's size and stride (at least one \
             dimension spans across two contiguous subspaces). Use .reshape(...) instead.",
        )
    })?;
    restride(self_, &shape, &stride, g_offset)
}

/// `reshape(shape)` (CompositeImplicitAutograd): a view when the storage
/// allows one, otherwise a contiguous copy.
pub fn reshape(self_: &Tensor, shape: &[i64]) -> Result<Tensor> {
    // One snapshot of the geometry: a resize on another thread cannot
    // make the checks below disagree with the sizes they index.
    let (g_sizes, g_strides, _) = geometry(self_)?;
    let inferred = infer_size(shape, self_.numel())?;
    if compute_stride(&g_sizes, &g_strides, &inferred).is_some() {
        return ops::view(self_, &inferred);
    }
    let copy = ops::clone_with(
        self_,
        ops::CloneOptions {
            memory_format: Some(MemoryFormat::Contiguous),
        },
    )?;
    ops::view(&copy, &inferred)
}

/// `alias` (CompositeExplicitAutograd): the same geometry, a new handle.
pub fn alias(self_: &Tensor) -> Result<Tensor> {
    // One snapshot of the geometry: a resize on another thread cannot
    // make the checks below disagree with the sizes they index.
    let (g_sizes, g_strides, g_offset) = geometry(self_)?;
    restride(self_, &g_sizes, &g_strides, g_offset)
}

/// `detach` (CompositeExplicitAutograd): a new handle on the same data
/// and version counter, without autograd state.
pub fn detach(self_: &Tensor) -> Result<Tensor> {
    self_.shallow_copy_and_detach().map(Tensor::from_base)
}

/// `detach_` (CompositeExplicitAutograd): `self` itself; the Autograd
/// kernel is what takes it out of the graph.
pub fn detach_(self_: &Tensor) -> Result<Tensor> {
    Ok(self_.clone())
}

/// `transpose.int(dim0, dim1)` (CompositeExplicitAutograd).
pub fn transpose(self_: &Tensor, dim0: i64, dim1: i64) -> Result<Tensor> {
    // One snapshot of the geometry: a resize on another thread cannot
    // make the checks below disagree with the sizes they index.
    let (g_sizes, g_strides, g_offset) = geometry(self_)?;
    let ndim = g_sizes.len();
    let (a, b) = (wrap_dim(dim0, ndim)?, wrap_dim(dim1, ndim)?);
    let mut sizes = g_sizes.to_vec();
    let mut strides = g_strides.to_vec();
    if ndim > 0 {
        sizes.swap(a, b);
        strides.swap(a, b);
    }
    restride(self_, &sizes, &strides, g_offset)
}

/// `t()` (CompositeExplicitAutograd): transposes a matrix; vectors and
/// scalars come back as they are.
pub fn t(self_: &Tensor) -> Result<Tensor> {
    // One snapshot of the geometry: a resize on another thread cannot
    // make the checks below disagree with the sizes they index.
    let (g_sizes, _, _) = geometry(self_)?;
    let ndim = g_sizes.len();
    if ndim > 2 {
        return Err(Error::runtime(format!(
            "t() expects a tensor with <= 2 dimensions, but self is {ndim}D"
        )));
    }
    transpose(self_, 0, if ndim < 2 { 0 } else { 1 })
}

/// `permute(dims)` (CompositeExplicitAutograd).
pub fn permute(self_: &Tensor, dims: &[i64]) -> Result<Tensor> {
    // One snapshot of the geometry: a resize on another thread cannot
    // make the checks below disagree with the sizes they index.
    let (g_sizes, g_strides, g_offset) = geometry(self_)?;
    let ndim = g_sizes.len();
    if dims.len() != ndim {
        return Err(Error::runtime(format!(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the \
             length of the desired ordering of dimensions i.e. input.dim() = {ndim} is not equal \
             to len(dims) = {}",
            dims.len()
        )));
    }
    let mut seen = vec![false; ndim];
    let mut sizes = Vec::with_capacity(ndim);
    let mut strides = Vec::with_capacity(ndim);
    for &d in dims {
        let w = wrap_dim(d, ndim)?;
        if std::mem::replace(&mut seen[w], true) {
            return Err(Error::runtime("permute(): duplicate dims are not allowed."));
        }
        sizes.push(g_sizes[w]);
        strides.push(g_strides[w]);
    }
    restride(self_, &sizes, &strides, g_offset)
}

/// `unsqueeze(dim)` (CompositeExplicitAutograd).
pub fn unsqueeze(self_: &Tensor, dim: i64) -> Result<Tensor> {
    // One snapshot of the geometry: a resize on another thread cannot
    // make the checks below disagree with the sizes they index.
    let (g_sizes, g_strides, g_offset) = geometry(self_)?;
    let ndim = g_sizes.len();
    let d = wrap_dim(dim, ndim + 1)?;
    let mut sizes = g_sizes.to_vec();
    let mut strides = g_strides.to_vec();
    let stride = if d >= ndim { 1 } else { sizes[d] * strides[d] };
    sizes.insert(d, 1);
    strides.insert(d, stride);
    restride(self_, &sizes, &strides, g_offset)
}

/// Drops the size-1 dimensions of `self_` that `squeezed` marks.
fn squeeze_marked(self_: &Tensor, squeezed: &[bool]) -> Result<Tensor> {
    // One snapshot of the geometry: a resize on another thread cannot
    // make the checks below disagree with the sizes they index.
    let (g_sizes, g_strides, g_offset) = geometry(self_)?;
    let (mut sizes, mut strides) = (Vec::new(), Vec::new());
    let (old_sizes, old_strides) = (g_sizes, g_strides);
    for (d, (&size, &stride)) in old_sizes.iter().zip(&old_strides).enumerate() {
        if !(squeezed[d] && size == 1) {
            sizes.push(size);
            strides.push(stride);
        }
    }
    restride(self_, &sizes, &strides, g_offset)
}

/// `squeeze()` (CompositeExplicitAutograd): drops every size-1 dimension.
pub fn squeeze(self_: &Tensor) -> Result<Tensor> {
    // One snapshot of the geometry: a resize on another thread cannot
    // make the checks below disagree with the sizes they index.
    let (g_sizes, _, _) = geometry(self_)?;
    squeeze_marked(self_, &vec![true; g_sizes.len()])
}

/// `squeeze.dim(dim)` (CompositeExplicitAutograd).
pub fn squeeze_dim(self_: &Tensor, dim: i64) -> Result<Tensor> {
    squeeze_dims(self_, &[dim])
}

/// `squeeze.dims(dim)` (CompositeExplicitAutograd).
pub fn squeeze_dims(self_: &Tensor, dim: &[i64]) -> Result<Tensor> {
    // One snapshot of the geometry: a resize on another thread cannot
    // make the checks below disagree with the sizes they index.
    let (g_sizes, _, _) = geometry(self_)?;
    let ndim = g_sizes.len();
    let mut marked = vec![false; ndim];
    let mut seen = vec![false; ndim.max(1)];
    for &d in dim {
        let w = wrap_dim(d, ndim)?;
        if std::mem::replace(&mut seen[w], true) {
            return Err(Error::runtime(format!(
                "dim {w} appears multiple times in the list of dims"
            )));
        }
        if ndim > 0 {
            marked[w] = true;
        }
    }
    squeeze_marked(self_, &marked)
}

/// `select.int(dim, index)` (CompositeExplicitAutograd).
pub fn select_int(self_: &Tensor, dim: i64, index: i64) -> Result<Tensor> {
    // One snapshot of the geometry: a resize on another thread cannot
    // make the checks below disagree with the sizes they index.
    let (g_sizes, g_strides, g_offset) = geometry(self_)?;
    let ndim = g_sizes.len();
    if ndim == 0 {
        return Err(Error::index_error(
            "select() cannot be applied to a 0-dim tensor.",
        ));
    }
    let d = wrap_dim(dim, ndim)?;
    let size = g_sizes[d];
    if index < -size || index >= size {
        return Err(Error::index_error(format!(
            "select(): index {index} out of range for tensor of size {} at dimension {dim}",
            fmt_list(&g_sizes)
        )));
    }
    let index = if index < 0 { index + size } else { index };
    let mut sizes = g_sizes.to_vec();
    let mut strides = g_strides.to_vec();
    let offset = g_offset + index * strides[d];
    sizes.remove(d);
    strides.remove(d);
    restride(self_, &sizes, &strides, offset)
}

/// `slice.Tensor(dim, start, end, step)` (CompositeExplicitAutograd):
/// bounds are clamped to the dimension as Python slices are.
pub fn slice_tensor(
    self_: &Tensor,
    dim: i64,
    start: Option<i64>,
    end: Option<i64>,
    step: i64,
) -> Result<Tensor> {
    // One snapshot of the geometry: a resize on another thread cannot
    // make the checks below disagree with the sizes they index.
    let (g_sizes, g_strides, g_offset) = geometry(self_)?;
    let ndim = g_sizes.len();
    if ndim == 0 {
        return Err(Error::index_error(
            "slice() cannot be applied to a 0-dim tensor.",
        ));
    }
    if step <= 0 {
        return Err(Error::runtime("slice step must be positive"));
    }
    let d = wrap_dim(dim, ndim)?;
    let size = g_sizes[d];
    let clamp = |v: i64| {
        let v = if v < 0 { v.saturating_add(size) } else { v };
        v.clamp(0, size)
    };
    let start = clamp(start.unwrap_or(0));
    let end = clamp(end.unwrap_or(i64::MAX)).max(start);
    let mut sizes = g_sizes.to_vec();
    let mut strides = g_strides.to_vec();
    let offset = g_offset + start * strides[d];
    sizes[d] = if end == start {
        0
    } else {
        (end - start - 1) / step + 1
    };
    strides[d] = match strides[d].checked_mul(step) {
        Some(s) => s,
        // One element (or none): its stride is never used.
        None if sizes[d] <= 1 => strides[d],
        None => return Err(Error::runtime("slice: the result's stride overflows")),
    };
    restride(self_, &sizes, &strides, offset)
}

/// `narrow(dim, start, length)` (CompositeImplicitAutograd).
pub fn narrow(self_: &Tensor, dim: i64, start: i64, length: i64) -> Result<Tensor> {
    // One snapshot of the geometry: a resize on another thread cannot
    // make the checks below disagree with the sizes they index.
    let (g_sizes, _, _) = geometry(self_)?;
    if g_sizes.is_empty() {
        return Err(Error::runtime(
            "narrow() cannot be applied to a 0-dim tensor.",
        ));
    }
    if length < 0 {
        return Err(Error::runtime("narrow(): length must be non-negative."));
    }
    let d = wrap_dim(dim, g_sizes.len())?;
    let size = g_sizes[d];
    if start < -size || start > size {
        return Err(Error::index_error(format!(
            "start out of range (expected to be in range of [{}, {size}], but got {start})",
            -size
        )));
    }
    let start = if start < 0 { start + size } else { start };
    if length > size - start {
        return Err(Error::runtime(format!(
            "start ({start}) + length ({length}) exceeds dimension size ({size})."
        )));
    }
    ops::slice_tensor_with(
        self_,
        ops::SliceTensorOptions {
            dim: d as i64,
            start: Some(start),
            end: Some(start + length),
            step: 1,
        },
    )
}

/// `flatten.using_ints(start_dim, end_dim)` (CompositeImplicitAutograd).
pub fn flatten_using_ints(self_: &Tensor, start_dim: i64, end_dim: i64) -> Result<Tensor> {
    // One snapshot of the geometry: a resize on another thread cannot
    // make the checks below disagree with the sizes they index.
    let (g_sizes, _, _) = geometry(self_)?;
    let ndim = g_sizes.len();
    let (start, end) = (wrap_dim(start_dim, ndim)?, wrap_dim(end_dim, ndim)?);
    if start > end {
        return Err(Error::runtime(
            "flatten() has invalid args: start_dim cannot come after end_dim",
        ));
    }
    if ndim == 0 {
        return ops::reshape(self_, &[1]);
    }
    if start == end {
        return Ok(self_.clone());
    }
    let sizes = g_sizes;
    let mut shape: Vec<i64> = sizes[..start].to_vec();
    // Checked: with a zero size elsewhere, the flattened sizes may have
    // any product.
    let flat = if sizes[start..=end].contains(&0) {
        Some(0)
    } else {
        sizes[start..=end]
            .iter()
            .try_fold(1i64, |n, &s| n.checked_mul(s))
    };
    shape.push(flat.ok_or_else(|| Error::runtime("flatten(): the flattened size overflows"))?);
    shape.extend_from_slice(&sizes[end + 1..]);
    ops::reshape(self_, &shape)
}

/// `expand(size, implicit)` (CompositeExplicitAutograd): size-1
/// dimensions broadcast with stride 0 (`inferExpandGeometry`).
pub fn expand(self_: &Tensor, size: &[i64], _implicit: bool) -> Result<Tensor> {
    // One snapshot of the geometry: a resize on another thread cannot
    // make the checks below disagree with the sizes they index.
    let (g_sizes, g_strides, g_offset) = geometry(self_)?;
    let (t_sizes, t_strides) = (g_sizes, g_strides);
    if size.len() < t_sizes.len() {
        return Err(Error::runtime(format!(
            "expand({}{{{}}}, size={}): the number of sizes provided ({}) must be greater or \
             equal to the number of dimensions in the tensor ({})",
            self_
                .dtype()
                .map(|d| format!("torch.{d}"))
                .unwrap_or_default(),
            fmt_list(&t_sizes),
            fmt_list(size),
            size.len(),
            t_sizes.len()
        )));
    }
    let ndim = size.len();
    let lead = ndim - t_sizes.len();
    let mut sizes = vec![0i64; ndim];
    let mut strides = vec![0i64; ndim];
    for i in (0..ndim).rev() {
        let existing = i >= lead;
        let (mut s, mut st) = if existing {
            (t_sizes[i - lead], t_strides[i - lead])
        } else if i + 1 < ndim {
            (1, sizes[i + 1] * strides[i + 1])
        } else {
            // Only a 0-dim tensor lacks its last dimension: PyTorch gives
            // every expanded dimension of a scalar stride 0.
            (1, 0)
        };
        let mut target = size[i];
        if target == -1 {
            if !existing {
                return Err(Error::runtime(format!(
                    "The expanded size of the tensor (-1) isn't allowed in a leading, \
                     non-existing dimension {i}"
                )));
            }
            target = s;
        }
        if target < 0 {
            return Err(Error::runtime(format!(
                "Trying to create tensor with negative dimension {target}: {}",
                fmt_list(size)
            )));
        }
        if s != target {
            if s != 1 {
                return Err(Error::runtime(format!(
                    "The expanded size of the tensor ({target}) must match the existing size \
                     ({s}) at non-singleton dimension {i}.  Target sizes: {}.  Tensor sizes: {}",
                    fmt_list(size),
                    fmt_list(&t_sizes)
                )));
            }
            s = target;
            st = 0;
        }
        sizes[i] = s;
        strides[i] = st;
    }
    restride(self_, &sizes, &strides, g_offset)
}

/// `split.Tensor(split_size, dim)` (CompositeExplicitAutograd): views of
/// `split_size` along `dim`, the last one shorter.
pub fn split_tensor(self_: &Tensor, split_size: i64, dim: i64) -> Result<Vec<Tensor>> {
    // One snapshot of the geometry: a resize on another thread cannot
    // make the checks below disagree with the sizes they index.
    let (g_sizes, _, _) = geometry(self_)?;
    if g_sizes.is_empty() {
        return Err(Error::runtime(
            "split expects at least a 1-dimensional tensor",
        ));
    }
    if split_size < 0 {
        return Err(Error::runtime(format!(
            "split expects split_size be non-negative, but got split_size={split_size}"
        )));
    }
    let d = wrap_dim(dim, g_sizes.len())?;
    let dim_size = g_sizes[d];
    if split_size == 0 && dim_size != 0 {
        return Err(Error::runtime(format!(
            "split_size can only be 0 if dimension size is 0, but got dimension size of {dim_size}"
        )));
    }
    let num_splits = if split_size == 0 || dim_size == 0 {
        1
    } else {
        (dim_size - 1) / split_size + 1
    };
    // `split_size * (num_splits - 1) < dim_size`: no overflow.
    let last = dim_size - split_size * (num_splits - 1);
    (0..num_splits)
        .map(|i| {
            let length = if i == num_splits - 1 {
                last
            } else {
                split_size
            };
            ops::narrow(self_, d as i64, i * split_size, length)
        })
        .collect()
}

/// `split_with_sizes(split_sizes, dim)` (CompositeExplicitAutograd): views
/// of consecutive lengths `split_sizes` along `dim`, which they must cover
/// exactly.
pub fn split_with_sizes(self_: &Tensor, split_sizes: &[i64], dim: i64) -> Result<Vec<Tensor>> {
    // One snapshot of the geometry: a resize on another thread cannot
    // make the checks below disagree with the sizes they index.
    let (g_sizes, _, _) = geometry(self_)?;
    if g_sizes.is_empty() {
        return Err(Error::runtime(
            "split expects at least a 1-dimensional tensor",
        ));
    }
    let d = wrap_dim(dim, g_sizes.len())?;
    let dim_size = g_sizes[d];
    let mut splits = Vec::with_capacity(split_sizes.len());
    let mut start = 0i64;
    for &length in split_sizes {
        if length < 0 {
            return Err(Error::runtime(format!(
                "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes={}",
                fmt_list(split_sizes)
            )));
        }
        // A start past the dimension (too long a split) is clamped by
        // `slice`, and the sum check below reports it.
        let end = start.saturating_add(length);
        splits.push(slice_tensor(self_, d as i64, Some(start), Some(end), 1)?);
        start = end;
    }
    if start != dim_size {
        return Err(Error::runtime(format!(
            "split_with_sizes expects split_sizes to sum exactly to {dim_size} (input tensor's size at dimension {dim}), but got split_sizes={}",
            fmt_list(split_sizes)
        )));
    }
    Ok(splits)
}

/// `diagonal(offset, dim1, dim2)` (CompositeExplicitAutograd): the
/// diagonal of the `dim1` x `dim2` planes as a view, appended as the last
/// dimension; a positive `offset` moves above the main diagonal (along
/// `dim2`), a negative one below it. An offset past the end gives an empty
/// diagonal.
pub fn diagonal(self_: &Tensor, offset: i64, dim1: i64, dim2: i64) -> Result<Tensor> {
    // One snapshot of the geometry: a resize on another thread cannot
    // make the checks below disagree with the sizes they index.
    let (g_sizes, g_strides, g_offset) = geometry(self_)?;
    let ndim = g_sizes.len();
    let (d1, d2) = (wrap_dim(dim1, ndim)?, wrap_dim(dim2, ndim)?);
    if d1 == d2 {
        return Err(Error::runtime(format!(
            "diagonal dimensions cannot be identical {dim1}, {dim2}"
        )));
    }
    // Wide arithmetic: `offset` may be any i64.
    let (size1, size2, off) = (g_sizes[d1] as i128, g_sizes[d2] as i128, offset as i128);
    let diag_size = if off >= 0 {
        size1.min(size2 - off)
    } else {
        (size1 + off).min(size2)
    }
    .max(0) as i64;
    let mut storage_offset = g_offset;
    if diag_size > 0 {
        // The first diagonal element lies inside the tensor, so its
        // offset fits.
        storage_offset += if offset >= 0 {
            offset * g_strides[d2]
        } else {
            -offset * g_strides[d1]
        };
    }
    let stride = match g_strides[d1].checked_add(g_strides[d2]) {
        Some(s) => s,
        // One element (or none): its stride is never used.
        None if diag_size <= 1 => g_strides[d1],
        None => return Err(Error::runtime("diagonal: the result's stride overflows")),
    };
    let mut sizes = g_sizes.to_vec();
    let mut strides = g_strides.to_vec();
    for d in [d1.max(d2), d1.min(d2)] {
        sizes.remove(d);
        strides.remove(d);
    }
    sizes.push(diag_size);
    strides.push(stride);
    restride(self_, &sizes, &strides, storage_offset)
}
