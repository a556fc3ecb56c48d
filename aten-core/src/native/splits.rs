//! Splitting, unflattening, broadcasting and joining, as PyTorch's
//! `TensorShape.cpp` writes them over views and `cat`
//! (CompositeImplicitAutograd, `unbind` CompositeExplicitAutograd):
//! `chunk`, `tensor_split` (sections, indices, or a tensor of either),
//! `split.sizes`, `unbind`, `unflatten`, `meshgrid`, `broadcast_to`,
//! `broadcast_tensors`, `hstack`, `vstack`, `concat`, `concatenate`.

use std::sync::atomic::{AtomicBool, Ordering};

use c10_core::{Device, Error, Result, ScalarType};

use super::dims::{fmt_list, infer_size, wrap_dim};
use crate::generated::ops;
use crate::Tensor;

/// `self.sym_size(dim)` with the dimension wrapped.
fn size_at(self_: &Tensor, dim: i64) -> Result<(usize, i64)> {
    let d = wrap_dim(dim, self_.dim())?;
    Ok((d, self_.sizes()[d]))
}

/// `slice(self, dim, start, end)`.
fn slice(self_: &Tensor, dim: usize, start: i64, end: i64) -> Result<Tensor> {
    ops::slice_tensor_with(
        self_,
        ops::SliceTensorOptions {
            dim: dim as i64,
            start: Some(start),
            end: Some(end),
            step: 1,
        },
    )
}

/// `chunk(self, chunks, dim)`: `split` into pieces of
/// `ceil(size / chunks)`.
pub fn chunk(self_: &Tensor, chunks: i64, dim: i64) -> Result<Vec<Tensor>> {
    if self_.dim() == 0 {
        return Err(Error::runtime(
            "chunk expects at least a 1-dimensional tensor",
        ));
    }
    if chunks <= 0 {
        return Err(Error::runtime(format!(
            "chunk expects `chunks` to be greater than 0, got: {chunks}"
        )));
    }
    let (_, dim_size) = size_at(self_, dim)?;
    let split_size = (dim_size + chunks - 1) / chunks;
    // `split` would lose the number of empty chunks.
    if split_size == 0 && dim_size == 0 {
        let mut sizes = vec![split_size; chunks as usize];
        if let Some(last) = sizes.last_mut() {
            *last = split_size - (split_size * chunks - dim_size);
        }
        return ops::split_with_sizes_with(self_, &sizes, ops::SplitWithSizesOptions { dim });
    }
    ops::split_tensor_with(self_, split_size, ops::SplitTensorOptions { dim })
}

fn check_splittable(self_: &Tensor) -> Result<()> {
    if self_.dim() == 0 {
        return Err(Error::runtime(format!(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with {} dims",
            self_.dim()
        )));
    }
    Ok(())
}

/// `tensor_split.sections(self, sections, dim)`: `sections` pieces, the
/// first `size % sections` one longer.
pub fn tensor_split_sections(self_: &Tensor, sections: i64, dim: i64) -> Result<Vec<Tensor>> {
    check_splittable(self_)?;
    let (d, dim_size) = size_at(self_, dim)?;
    if sections <= 0 {
        return Err(Error::runtime(format!(
            "number of sections must be larger than 0, got {sections}"
        )));
    }
    let (min_size, extra) = (dim_size / sections, dim_size % sections);
    let mut start = 0;
    (0..sections)
        .map(|i| {
            let size = if extra > i { min_size + 1 } else { min_size };
            let piece = slice(self_, d, start, start + size);
            start += size;
            piece
        })
        .collect()
}

/// `tensor_split.indices(self, indices, dim)`: pieces between the indices.
pub fn tensor_split_indices(self_: &Tensor, indices: &[i64], dim: i64) -> Result<Vec<Tensor>> {
    check_splittable(self_)?;
    let (d, dim_size) = size_at(self_, dim)?;
    let mut start = 0;
    let mut pieces = Vec::with_capacity(indices.len() + 1);
    for &end in indices {
        pieces.push(slice(self_, d, start, end)?);
        start = end;
    }
    pieces.push(slice(self_, d, start, dim_size)?);
    Ok(pieces)
}

/// `tensor_split.tensor_indices_or_sections(self, tensor, dim)`: a 0-dim
/// int64 CPU tensor of sections, or a 1-dim one of indices.
pub fn tensor_split_tensor_indices_or_sections(
    self_: &Tensor,
    tensor_indices_or_sections: &Tensor,
    dim: i64,
) -> Result<Vec<Tensor>> {
    check_splittable(self_)?;
    let t = tensor_indices_or_sections;
    let device = t.device().unwrap_or(Device::CPU);
    if device != Device::CPU {
        return Err(Error::runtime(format!(
            "tensor_split expected tensor_indices_or_sections to be on cpu, but it's on {device}"
        )));
    }
    if t.dtype() != Some(ScalarType::Long) {
        return Err(Error::runtime(format!(
            "tensor_split expected tensor_indices_or_sections to have dtype of long, but got {}",
            t.dtype().map_or("?", |d| d.name())
        )));
    }
    match t.dim() {
        0 => tensor_split_sections(self_, t.to_vec::<i64>()?[0], dim),
        1 => tensor_split_indices(self_, &t.to_vec::<i64>()?, dim),
        n => Err(Error::runtime(format!(
            "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or one-dimensional tensor, but got a tensor with {n} dims"
        ))),
    }
}

/// `split.sizes(self, split_size, dim)`: `split_with_sizes`.
pub fn split_sizes(self_: &Tensor, split_size: &[i64], dim: i64) -> Result<Vec<Tensor>> {
    ops::split_with_sizes_with(self_, split_size, ops::SplitWithSizesOptions { dim })
}

/// `unbind.int(self, dim)` (CompositeExplicitAutograd): the selections
/// along `dim`.
pub fn unbind_int(self_: &Tensor, dim: i64) -> Result<Vec<Tensor>> {
    if self_.dim() == 0 {
        return Err(Error::index_error(
            "Dimension specified as 0 but tensor has no dimensions",
        ));
    }
    let (d, size) = size_at(self_, dim)?;
    (0..size)
        .map(|i| ops::select_int(self_, d as i64, i))
        .collect()
}

/// `unflatten.int(self, dim, sizes)`: `dim` viewed as `sizes` (one may be
/// `-1`).
pub fn unflatten_int(self_: &Tensor, dim: i64, sizes: &[i64]) -> Result<Tensor> {
    let d = wrap_dim(dim, self_.dim())?;
    if sizes.is_empty() {
        return Err(Error::runtime("unflatten: sizes must be non-empty"));
    }
    let shape = self_.sizes();
    let inferred = infer_size(sizes, shape[d]).map_err(|_| {
        Error::runtime(format!(
            "unflatten: Provided sizes {} don't multiply up to the size of dim {dim} ({}) in the input tensor",
            fmt_list(sizes),
            shape[d]
        ))
    })?;
    let mut out: Vec<i64> = shape[..d].to_vec();
    out.extend_from_slice(&inferred);
    out.extend_from_slice(&shape[d + 1..]);
    ops::view(self_, &out)
}

/// Warned once per process, as `TORCH_WARN_ONCE`.
static WARNED_MESHGRID: AtomicBool = AtomicBool::new(false);

/// `meshgrid(tensors)`: `ij` indexing, with PyTorch's warning.
pub fn meshgrid(tensors: &[Tensor]) -> Result<Vec<Tensor>> {
    if !WARNED_MESHGRID.swap(true, Ordering::Relaxed) {
        c10_core::torch_warn!(
            "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument."
        );
    }
    meshgrid_indexing(tensors, "ij")
}

/// `meshgrid.indexing(tensors, *, indexing)`: one grid per 0-d or 1-d
/// tensor, each a view of it expanded over all of their sizes; `xy`
/// swaps the first two.
pub fn meshgrid_indexing(tensors: &[Tensor], indexing: &str) -> Result<Vec<Tensor>> {
    if tensors.is_empty() {
        return Err(Error::runtime("meshgrid expects a non-empty TensorList"));
    }
    for pair in tensors.windows(2) {
        if pair[0].dtype() != pair[1].dtype() {
            return Err(Error::runtime(
                "meshgrid expects all tensors to have the same dtype",
            ));
        }
        if pair[0].device() != pair[1].device() {
            return Err(Error::runtime(
                "meshgrid expects all tensors to have the same device",
            ));
        }
    }
    let swap = match indexing {
        "xy" => tensors.len() >= 2,
        "ij" => false,
        other => {
            return Err(Error::runtime(format!(
                "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {other}"
            )))
        }
    };
    let mut order: Vec<&Tensor> = tensors.iter().collect();
    if swap {
        order.swap(0, 1);
    }
    let mut shape = Vec::with_capacity(order.len());
    for t in &order {
        if t.dim() > 1 {
            return Err(Error::runtime(format!(
                "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got a tensor of size {}",
                fmt_list(&t.sizes())
            )));
        }
        shape.push(t.numel());
    }
    let mut grids = Vec::with_capacity(order.len());
    let mut view_shape = vec![1i64; order.len()];
    for (i, t) in order.iter().enumerate() {
        view_shape[i] = -1;
        grids.push(ops::expand(&ops::view(t, &view_shape)?, &shape)?);
        view_shape[i] = 1;
    }
    if swap {
        grids.swap(0, 1);
    }
    Ok(grids)
}

/// `broadcast_to(self, size)`: `expand`.
pub fn broadcast_to(self_: &Tensor, size: &[i64]) -> Result<Tensor> {
    ops::expand(self_, size)
}

/// `broadcast_tensors(tensors)`: each expanded to their broadcast shape.
pub fn broadcast_tensors(tensors: &[Tensor]) -> Result<Vec<Tensor>> {
    let mut shape: Vec<i64> = Vec::new();
    for t in tensors {
        shape = crate::tensor_iterator::infer_size(&shape, &t.sizes())?;
    }
    tensors
        .iter()
        .map(|t| {
            if t.sizes()[..] == shape[..] {
                Ok(t.clone())
            } else {
                ops::expand(t, &shape)
            }
        })
        .collect()
}

/// `atleast_1d` of each tensor.
fn at_least_1d(tensors: &[Tensor]) -> Result<Vec<Tensor>> {
    tensors
        .iter()
        .map(|t| {
            if t.dim() == 0 {
                ops::reshape(t, &[1])
            } else {
                Ok(t.clone())
            }
        })
        .collect()
}

/// `atleast_2d` of each tensor.
fn at_least_2d(tensors: &[Tensor]) -> Result<Vec<Tensor>> {
    tensors
        .iter()
        .map(|t| match t.dim() {
            0 => ops::reshape(t, &[1, 1]),
            1 => ops::unsqueeze(t, 0),
            _ => Ok(t.clone()),
        })
        .collect()
}

/// `hstack(tensors)`: `cat` of the 1-d-or-more tensors along 0 when they
/// are 1-d, else along 1.
pub fn hstack(tensors: &[Tensor]) -> Result<Tensor> {
    if tensors.is_empty() {
        return Err(Error::runtime("hstack expects a non-empty TensorList"));
    }
    let rep = at_least_1d(tensors)?;
    let dim = if rep[0].dim() == 1 { 0 } else { 1 };
    ops::cat_with(&rep, ops::CatOptions { dim })
}

/// `vstack(tensors)`: `cat` of the 2-d-or-more tensors along 0.
pub fn vstack(tensors: &[Tensor]) -> Result<Tensor> {
    if tensors.is_empty() {
        return Err(Error::runtime("vstack expects a non-empty TensorList"));
    }
    let rep = at_least_2d(tensors)?;
    ops::cat(&rep)
}

/// `concat(tensors, dim)`: `cat`.
pub fn concat(tensors: &[Tensor], dim: i64) -> Result<Tensor> {
    ops::cat_with(tensors, ops::CatOptions { dim })
}

/// `concatenate(tensors, dim)`: `cat`.
pub fn concatenate(tensors: &[Tensor], dim: i64) -> Result<Tensor> {
    ops::cat_with(tensors, ops::CatOptions { dim })
}
