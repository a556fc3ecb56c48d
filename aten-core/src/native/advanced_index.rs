//! Advanced indexing's set-up, shared by `index.Tensor` and
//! `_index_put_impl_` (PyTorch's `make_info` and `AdvancedIndex`).
//!
//! `self[indices]` takes a list with one entry per leading dimension of
//! `self`: `None` keeps the dimension, an integer tensor indexes it, and a
//! boolean (or deprecated uint8) mask of `k` dimensions indexes the next
//! `k` dimensions by the coordinates of its true elements. The index
//! tensors broadcast together to one *index shape*, and the result is
//! `self`'s shape with the indexed dimensions replaced by it:
//!
//! ```text
//! result[b.., i.., a..] = self[b.., idx_0[i..], idx_1[i..], .., a..]
//! ```
//!
//! When the indexed dimensions are not adjacent (`x[[0, 1], :, [2, 3]]`),
//! NumPy's rule puts the index shape first: `self` is permuted so that the
//! indexed dimensions lead (in their order), then indexed as above.

use c10_core::warning::{warn, Warning};
use c10_core::{source_location, Error, Result, ScalarType};

use super::dims::fmt_list;
use crate::generated::ops;
use crate::tensor_iterator::infer_size;
use crate::Tensor;

/// The index of `self` by a list of optional index tensors, normalized:
/// masks replaced by their coordinates, indices broadcast to one shape,
/// converted to int64 and moved to `self`'s device, and the indexed
/// dimensions made adjacent.
#[derive(Clone, Debug)]
pub struct AdvancedIndex {
    /// `self`, or its permutation that puts the indexed dimensions first
    /// when they were not adjacent.
    pub src: Tensor,
    /// The permutation `src` is of `self` (`None`: `src` is `self`).
    pub permutation: Option<Vec<i64>>,
    /// The int64 index of each indexed dimension, in order, all of
    /// [`index_shape`](Self::index_shape) (broadcast views).
    pub indices: Vec<Tensor>,
    /// The broadcast shape of the indices.
    pub index_shape: Vec<i64>,
    /// Dimensions of `src` before the indexed ones.
    pub dims_before: usize,
    /// Dimensions of `src` after the indexed ones.
    pub dims_after: usize,
    /// The sizes of `src`'s indexed dimensions.
    pub indexed_sizes: Vec<i64>,
    /// `src`'s sizes, strides and storage offset, read once.
    src_sizes: Vec<i64>,
    src_strides: Vec<i64>,
    src_offset: i64,
}

/// `TORCH_CHECK_INDEX(indices.size() <= self.dim(), ...)`: the error of
/// an index list longer than `self` has dimensions.
pub fn check_index_count(self_: &Tensor, count: usize) -> Result<()> {
    let ndim = self_.dim();
    if count > ndim {
        return Err(Error::index_error(format!(
            "too many indices for tensor of dimension {ndim} (got {count})"
        )));
    }
    Ok(())
}

/// `checkIndexTensorTypes(indices, allow_int=true)`: every index is int64,
/// int32, uint8 or bool.
pub fn check_index_tensor_types(indices: &[Option<Tensor>]) -> Result<()> {
    for t in indices.iter().flatten().filter(|t| t.defined()) {
        if !matches!(
            t.dtype(),
            Some(ScalarType::Long | ScalarType::Int | ScalarType::Byte | ScalarType::Bool)
        ) {
            return Err(Error::index_error(
                "tensors used as indices must be long, int, byte or bool tensors",
            ));
        }
    }
    Ok(())
}

/// Whether `t` is a mask (a bool or uint8 index).
pub fn is_mask(t: &Tensor) -> bool {
    matches!(t.dtype(), Some(ScalarType::Bool | ScalarType::Byte))
}

/// The mask-shape check of `expandTensors`: mask dimension `j` of entry
/// at `first` (counting dimensions of `self` consumed by earlier entries)
/// must have the size of `self`'s dimension `first + j`. Returns how many
/// dimensions the mask indexes.
pub fn check_mask_shape(self_: &Tensor, mask: &Tensor, first: usize) -> Result<usize> {
    let self_sizes = self_.sizes();
    let mask_sizes = mask.sizes();
    for (j, &m) in mask_sizes.iter().enumerate() {
        let idx = first + j;
        // `self.size(idx)`: PyTorch's dimension error past the end.
        let s = self_.size(idx as i64)?;
        if m != s {
            return Err(Error::index_error(format!(
                "The shape of the mask {} at index {j} does not match the shape of the indexed tensor {} at index {idx}",
                fmt_list(&mask_sizes),
                fmt_list(&self_sizes)
            )));
        }
    }
    Ok(mask_sizes.len())
}

/// `expandTensors`: each mask becomes one int64 index per mask dimension
/// (the coordinates of its true elements, `mask.nonzero()`'s columns).
fn expand_tensors(self_: &Tensor, indices: &[Option<Tensor>]) -> Result<Vec<Option<Tensor>>> {
    let mut result: Vec<Option<Tensor>> = Vec::with_capacity(indices.len());
    for index in indices {
        match index.as_ref().filter(|t| t.defined()) {
            None => result.push(None),
            Some(t) if is_mask(t) => {
                if t.dtype() == Some(ScalarType::Byte) {
                    warn(Warning::user(
                        source_location!(),
                        "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead.",
                    ));
                }
                let k = check_mask_shape(self_, t, result.len())?;
                let nonzero = ops::nonzero(t)?;
                for j in 0..k {
                    result.push(Some(ops::select_int(&nonzero, 1, j as i64)?));
                }
            }
            Some(t) => result.push(Some(t.clone())),
        }
    }
    Ok(result)
}

/// `expand_outplace` of the defined indices, with indexing's error.
fn broadcast_indices(indices: &mut [Option<Tensor>]) -> Result<Vec<i64>> {
    let mut shape: Option<Vec<i64>> = None;
    for t in indices.iter().flatten() {
        let sizes = t.sizes();
        shape = Some(match shape {
            None => sizes.to_vec(),
            Some(s) => infer_size(&s, &sizes).map_err(|_| {
                let shapes: Vec<String> = indices
                    .iter()
                    .flatten()
                    .map(|t| fmt_list(&t.sizes()))
                    .collect();
                Error::index_error(format!(
                    "shape mismatch: indexing tensors could not be broadcast together with shapes {}",
                    shapes.join(", ")
                ))
            })?,
        });
    }
    let shape = shape.unwrap_or_default();
    for t in indices.iter_mut().flatten() {
        if t.sizes()[..] != shape[..] {
            *t = ops::expand(t, &shape)?;
        }
    }
    Ok(shape)
}

/// `hasContiguousSubspace`: whether the defined entries are adjacent.
fn has_contiguous_subspace(indices: &[Option<Tensor>]) -> bool {
    let first = indices.iter().position(Option::is_some);
    let last = indices.iter().rposition(Option::is_some);
    match (first, last) {
        (Some(a), Some(b)) => indices[a..=b].iter().all(Option::is_some),
        _ => true,
    }
}

impl AdvancedIndex {
    /// `make_info(self, indices)`: checks the index dtypes, expands masks
    /// (which reads their data: a Meta mask fails in `nonzero`),
    /// broadcasts the indices, permutes the indexed dimensions to the
    /// front when they are not adjacent, converts int32 indices to int64
    /// on `self`'s device, and checks that an empty indexed dimension is
    /// indexed by an empty index.
    pub fn new(self_: &Tensor, indices: &[Option<Tensor>]) -> Result<AdvancedIndex> {
        check_index_tensor_types(indices)?;
        let mut entries = expand_tensors(self_, indices)?;
        let index_shape = broadcast_indices(&mut entries)?;
        let ndim = self_.dim();
        while entries.len() < ndim {
            entries.push(None);
        }
        let (src, permutation) = if has_contiguous_subspace(&entries) {
            (self_.clone(), None)
        } else {
            // `transposeToFront`: the indexed dimensions first, in order.
            let n = entries.len().min(ndim);
            let dims: Vec<i64> = (0..n)
                .filter(|&i| entries[i].is_some())
                .chain((0..n).filter(|&i| entries[i].is_none()))
                .map(|i| i as i64)
                .collect();
            let reordered: Vec<Option<Tensor>> =
                dims.iter().map(|&i| entries[i as usize].take()).collect();
            entries = reordered;
            (ops::permute(self_, &dims)?, Some(dims))
        };
        let layout = src
            .layout()
            .ok_or_else(|| Error::runtime("undefined tensor"))?;
        let (src_sizes, src_strides) = (layout.sizes().to_vec(), layout.strides().to_vec());
        let src_offset = layout.storage_offset();
        drop(layout);
        let device = self_.device();
        let mut dims_before = 0;
        let mut dims_after = 0;
        let mut index_tensors = Vec::new();
        let mut indexed_sizes = Vec::new();
        for (dim, entry) in entries.into_iter().enumerate() {
            match entry {
                None if index_tensors.is_empty() => dims_before += 1,
                None => dims_after += 1,
                Some(t) => {
                    // `src.size(dim)`: PyTorch's dimension error past the end.
                    let d =
                        c10_core::tensor_impl::maybe_wrap_dim(dim as i64, src_sizes.len(), false)?;
                    indexed_sizes.push(src_sizes[d]);
                    index_tensors.push(to_long_on(&t, device)?);
                }
            }
        }
        if indexed_sizes.contains(&0) && !index_shape.contains(&0) {
            return Err(Error::index_error(
                "index is out of bounds for dimension with size 0",
            ));
        }
        Ok(AdvancedIndex {
            src,
            permutation,
            indices: index_tensors,
            index_shape,
            dims_before,
            dims_after,
            indexed_sizes,
            src_sizes,
            src_strides,
            src_offset,
        })
    }

    /// The result's shape: `src`'s with the indexed dimensions replaced by
    /// the index shape.
    pub fn result_shape(&self) -> Vec<i64> {
        self.replace_indexed(&self.src_sizes, &self.index_shape)
    }

    /// `values` (one per dimension of `src`) with the indexed dimensions'
    /// replaced by `replacement`.
    fn replace_indexed(&self, values: &[i64], replacement: &[i64]) -> Vec<i64> {
        let after = values.len().saturating_sub(self.dims_after);
        let before = self.dims_before.min(after);
        values[..before]
            .iter()
            .chain(replacement)
            .chain(&values[after..])
            .copied()
            .collect()
    }

    /// `restride_src`: `src` seen with the result's shape, the index
    /// dimensions at stride 0 (what a `TensorIterator` over the result
    /// reads `src` through).
    pub fn restrided_src(&self) -> Result<Tensor> {
        let zeros = vec![0; self.index_shape.len()];
        ops::as_strided_with(
            &self.src,
            &self.result_shape(),
            &self.replace_indexed(&self.src_strides, &zeros),
            ops::AsStridedOptions {
                storage_offset: Some(self.src_offset),
            },
        )
    }

    /// `reshape_indexer`: each index with size-1 dimensions for the
    /// dimensions before and after the indexed ones, so that it
    /// broadcasts against the result.
    pub fn reshaped_indices(&self) -> Result<Vec<Tensor>> {
        self.indices
            .iter()
            .map(|t| {
                let shape: Vec<i64> = std::iter::repeat_n(1, self.dims_before)
                    .chain(t.sizes().iter().copied())
                    .chain(std::iter::repeat_n(1, self.dims_after))
                    .collect();
                ops::reshape(t, &shape)
            })
            .collect()
    }
}

/// An index as int64 on `device` (PyTorch converts int32 indices and
/// moves CPU indices to the indexed tensor's device).
fn to_long_on(t: &Tensor, device: Option<c10_core::Device>) -> Result<Tensor> {
    let same_device = t.device() == device;
    if t.dtype() == Some(ScalarType::Long) && same_device {
        return Ok(t.clone());
    }
    ops::_to_copy_with(
        t,
        ops::ToCopyOptions {
            dtype: Some(ScalarType::Long),
            device: if same_device { None } else { device },
            ..Default::default()
        },
    )
}
