//! `index_select` and `gather`'s impl: copies of the elements an index
//! tensor picks.

use aten_core::meta::index_select_meta;
use aten_core::native::dims::wrap_dim;
use aten_core::structured::MetaOutput;
use aten_core::Tensor;
use c10_core::tensor_impl::for_each_offset;
use c10_core::{Error, Result, ScalarType, TensorBase};

use super::gather_offsets::gather_offsets;
use super::util::{dtype_of, layout_of, with_fresh_output};

/// The values of an int64 or int32 index tensor, in row-major order.
pub(crate) fn index_values(index: &TensorBase, what: &str) -> Result<Vec<i64>> {
    match dtype_of(index)? {
        ScalarType::Long => index.to_vec::<i64>(),
        ScalarType::Int => Ok(index.to_vec::<i32>()?.into_iter().map(i64::from).collect()),
        other => Err(Error::runtime(format!(
            "{what}(): Expected dtype int32/int64 for index but got: {other}"
        ))),
    }
}

/// `index_select(dim, index)`: the slices of `self` at `index` along `dim`.
pub fn index_select(self_: &Tensor, dim: i64, index: &Tensor) -> Result<Tensor> {
    let out = index_select_meta(self_, dim, index)?;
    let sl = layout_of(self_)?;
    let ndim = sl.sizes().len();
    let d = wrap_dim(dim, ndim)?;
    let idx = index_values(index, "index_select")?;
    let size = if ndim == 0 { 1 } else { sl.sizes()[d] };
    for &i in &idx {
        if i < 0 || i >= size {
            return Err(Error::index_error("index out of range in self"));
        }
    }
    if out.numel() == 0 {
        return Ok(out);
    }
    let (ss, st) = (sl.sizes(), sl.strides());
    let stride = if ndim == 0 { 0 } else { st[d] };
    let (outer_s, outer_t) = if ndim == 0 {
        (&[][..], &[][..])
    } else {
        (&ss[..d], &st[..d])
    };
    let (inner_s, inner_t) = if ndim == 0 {
        (&[][..], &[][..])
    } else {
        (&ss[d + 1..], &st[d + 1..])
    };
    let mut offsets = Vec::with_capacity(out.numel() as usize);
    for_each_offset(outer_s, outer_t, sl.storage_offset(), |base| {
        for &i in &idx {
            for_each_offset(inner_s, inner_t, base + i * stride, |o| offsets.push(o));
        }
    });
    gather_offsets(&sl, &out, &offsets)?;
    Ok(out)
}

/// `gather.out`: `out[p] = self[p with index[p] at dim]`.
pub fn gather_out(
    meta: &mut MetaOutput,
    self_: &Tensor,
    dim: i64,
    index: &Tensor,
    _sparse_grad: bool,
) -> Result<()> {
    let sl = layout_of(self_)?;
    let ndim = sl.sizes().len();
    let d = wrap_dim(dim, ndim)?;
    let idx = index_values(index, "gather")?;
    if idx.is_empty() {
        return Ok(());
    }
    let size = if ndim == 0 { 1 } else { sl.sizes()[d] };
    let stride = if ndim == 0 { 0 } else { sl.strides()[d] };
    // A 0-dim tensor counts as one of shape [1].
    let index_sizes = if index.dim() == 0 {
        vec![1]
    } else {
        index.sizes().to_vec()
    };
    let mut strides: Vec<i64> = if ndim == 0 {
        vec![0; index_sizes.len()]
    } else {
        sl.strides().to_vec()
    };
    if ndim > 0 {
        strides[d] = 0;
    }
    if strides.len() != index_sizes.len() || idx.len() as i64 != meta.output().numel() {
        return Err(Error::runtime("gather: the tensors changed while it ran"));
    }
    let mut offsets = Vec::with_capacity(idx.len());
    let mut bad = None;
    let mut k = 0;
    for_each_offset(&index_sizes, &strides, sl.storage_offset(), |base| {
        let i = idx[k];
        k += 1;
        if i < 0 || i >= size {
            bad.get_or_insert(i);
            offsets.push(base);
        } else {
            offsets.push(base + i * stride);
        }
    });
    if let Some(i) = bad {
        return Err(Error::runtime(format!(
            "index {i} is out of bounds for dimension {d} with size {size}"
        )));
    }
    with_fresh_output(meta, |out| gather_offsets(&sl, out, &offsets))
}
