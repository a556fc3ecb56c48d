//! Advanced indexing on the CPU: `index.Tensor`'s impl, `_index_put_impl_`,
//! `masked_scatter_` and `nonzero`.
//!
//! Both indexing directions turn the normalized index
//! ([`AdvancedIndex`]) into the storage offsets of the picked elements,
//! in the result's row-major order, from one snapshot of the indexed
//! tensor's layout: `index` copies them out (`gather_offsets`),
//! `index_put_` writes or adds values there (`update_offsets`).

use aten_core::meta::advanced_indexing::IndexState;
use aten_core::native::advanced_index::AdvancedIndex;
use aten_core::native::resize::resize_output;
use aten_core::native::{
    index_put::check_index_put_values, index_put::index_put_prologue,
    masked_scatter::masked_scatter_checks,
};
use aten_core::tensor_iterator::convert::copy_into;
use aten_core::{ops, Tensor};
use c10_core::tensor_impl::for_each_offset;
use c10_core::{
    dispatch_dtype, Error, Numeric, Result, Scalar, ScalarType, TensorBase, TensorLayout,
};

use super::arith::Arith;
use super::gather_offsets::gather_offsets;
use super::scatter_offsets::update_offsets;
use super::util::{dtype_of, layout_of, not_implemented, try_vec_filled, try_vec_with_capacity};

/// The storage offsets, in the result's row-major order, of the elements
/// of `info.src` (laid out as `src`, a snapshot of its layout) that
/// `info` picks; empty when the result is. Index values are checked
/// (negative ones count from the end) only when there is a result, as
/// PyTorch's kernel checks the elements it visits.
fn indexed_offsets(info: &AdvancedIndex, src: &TensorLayout) -> Result<Vec<i64>> {
    let (sizes, strides) = (src.sizes(), src.strides());
    let nidx = info.indices.len();
    let (before, after) = (info.dims_before, info.dims_after);
    if sizes.len() != before + nidx + after
        || sizes[before..before + nidx] != info.indexed_sizes[..]
    {
        return Err(Error::runtime(
            "index: the indexed tensor was resized while it was indexed",
        ));
    }
    let shape = info.result_shape();
    let numel = c10_core::tensor_layout::checked_numel(&shape)?;
    if numel == 0 {
        return Ok(Vec::new());
    }
    let index_numel = c10_core::tensor_layout::checked_numel(&info.index_shape)? as usize;
    // The offset each index position adds.
    let mut index_offsets = try_vec_filled(0i64, index_numel)?;
    for (j, index) in info.indices.iter().enumerate() {
        let values = index.to_vec::<i64>()?;
        if values.len() != index_numel {
            return Err(Error::runtime("index: an index changed while it was read"));
        }
        let (size, stride) = (sizes[before + j], strides[before + j]);
        for (acc, &v) in index_offsets.iter_mut().zip(&values) {
            if v < -size || v >= size {
                return Err(Error::index_error(format!(
                    "index {v} is out of bounds for dimension {j} with size {size}"
                )));
            }
            let wrapped = if v < 0 { v + size } else { v };
            *acc += wrapped * stride;
        }
    }
    let mut offsets = try_vec_with_capacity(numel as usize)?;
    let tail = before + nidx;
    for_each_offset(
        &sizes[..before],
        &strides[..before],
        src.storage_offset(),
        |b| {
            for &io in &index_offsets {
                for_each_offset(&sizes[tail..], &strides[tail..], b + io, |o| {
                    offsets.push(o)
                });
            }
        },
    );
    Ok(offsets)
}

/// Copies the elements of `src` (of `dtype`) at `offsets` into `out` in
/// row-major order: directly into a fresh contiguous output of that
/// dtype, else through a temporary (converted on the copy).
fn gather_into(
    src: &TensorLayout,
    dtype: ScalarType,
    out: &Tensor,
    fresh: bool,
    offsets: &[i64],
) -> Result<()> {
    if fresh && out.is_contiguous() && out.dtype() == Some(dtype) {
        return gather_offsets(src, out.base(), offsets);
    }
    let device = out.device().unwrap_or(c10_core::Device::CPU);
    let tmp = TensorBase::empty(&out.sizes(), dtype, device)?;
    gather_offsets(src, &tmp, offsets)?;
    copy_into(&tmp, out.base())
}

/// `index.Tensor_out`'s impl: the picked elements into the output the
/// meta function laid out.
pub fn index_out(meta: &mut IndexState, _self: &Tensor, _indices: &[Option<Tensor>]) -> Result<()> {
    let src = layout_of(&meta.info.src)?;
    let offsets = indexed_offsets(&meta.info, &src)?;
    if offsets.is_empty() {
        return Ok(());
    }
    let dtype = dtype_of(&meta.info.src)?;
    gather_into(&src, dtype, meta.output(), meta.is_fresh(), &offsets)
}

/// The value of a one-element tensor (`Tensor.item()`).
fn item(t: &Tensor) -> Result<Scalar> {
    let dtype = dtype_of(t)?;
    dispatch_dtype!(dtype, T => {
        let v = t.to_vec::<T>()?;
        let x = *v.first().ok_or_else(|| Error::runtime("a Tensor with 0 elements cannot be converted to Scalar"))?;
        Ok(if dtype == ScalarType::Bool {
            Scalar::Bool(x.to_i64() != 0)
        } else if T::IS_FLOAT {
            Scalar::Double(x.to_f64())
        } else {
            Scalar::Int(x.to_i64())
        })
    }, _ => Err(not_implemented("item", dtype)))
}

/// `_index_put_impl_(self, indices, values, accumulate, unsafe)`: writes
/// (or, with `accumulate`, adds, duplicates included) `values` broadcast
/// to the indexing result at the indexed elements of `self`.
pub fn _index_put_impl_(
    self_: &Tensor,
    indices: Vec<Option<Tensor>>,
    values: &Tensor,
    accumulate: bool,
    _unsafe: bool,
) -> Result<Tensor> {
    if let Some(mask) = index_put_prologue(self_, &indices, values, accumulate)? {
        ops::masked_fill_scalar_(self_, &mask, item(values)?)?;
        return Ok(self_.clone());
    }
    let info = AdvancedIndex::new(self_, &indices)?;
    check_index_put_values(&info, values)?;
    let dst = layout_of(&info.src)?;
    let offsets = indexed_offsets(&info, &dst)?;
    if offsets.is_empty() {
        return Ok(self_.clone());
    }
    let expanded = ops::expand(values, &info.result_shape())?;
    let dtype = dtype_of(self_)?;
    dispatch_dtype!(dtype, T => {
        let vals = expanded.to_vec::<T>()?;
        if vals.len() != offsets.len() {
            return Err(Error::runtime("index_put_: values changed while they were read"));
        }
        if accumulate {
            update_offsets(&dst, &offsets, |i| vals[i], |a: T, b: T| a.add(b))?;
        } else {
                update_offsets(&dst, &offsets, |i| vals[i], |_: T, b| b)?;
        }
    }, _ => return Err(not_implemented("index_put", dtype)));
    Ok(self_.clone())
}

/// `masked_scatter_(self, mask, source)`: the elements of `source`, in
/// its logical order, to the positions of `self` (in its logical order)
/// where the mask is true.
pub fn masked_scatter_cpu_(self_: &Tensor, mask: &Tensor, source: &Tensor) -> Result<Tensor> {
    let mask = masked_scatter_checks(self_, mask, source)?;
    let dst = layout_of(self_)?;
    let flags = mask.to_vec::<bool>()?;
    if flags.len() as i64 != dst.numel() {
        return Err(Error::runtime(
            "masked_scatter_: self was resized while it was written",
        ));
    }
    let count = flags.iter().filter(|&&f| f).count();
    let mut offsets = try_vec_with_capacity(count)?;
    let mut k = 0;
    for_each_offset(dst.sizes(), dst.strides(), dst.storage_offset(), |o| {
        if flags[k] {
            offsets.push(o);
        }
        k += 1;
    });
    if offsets.len() as i64 > source.numel() {
        return Err(Error::runtime(
            "Number of elements of source < number of ones in mask",
        ));
    }
    let dtype = dtype_of(self_)?;
    dispatch_dtype!(dtype, T => {
        let src = source.to_vec::<T>()?;
        if src.len() < offsets.len() {
            return Err(Error::runtime(
                "Number of elements of source < number of ones in mask",
            ));
        }
        update_offsets(&dst, &offsets, |i| src[i], |_: T, b| b)?;
    }, _ => return Err(not_implemented("masked_scatter", dtype)));
    Ok(self_.clone())
}

/// The coordinates of the nonzero elements of `self` (NaN counts as
/// nonzero), as PyTorch lays `nonzero`'s result out: `[n, ndim]` in
/// column-major order (strides `[1, n]`).
fn nonzero_result(self_: &Tensor) -> Result<Tensor> {
    let dtype = dtype_of(self_)?;
    let sizes = self_.sizes();
    let linear: Vec<usize> = dispatch_dtype!(dtype, T => {
        self_.to_vec::<T>()?
            .iter()
            .enumerate()
            .filter(|(_, x)| x.to_f64() != 0.0)
            .map(|(i, _)| i)
            .collect()
    }, _ => return Err(not_implemented("nonzero_cpu", dtype)));
    let (n, ndim) = (linear.len(), sizes.len());
    let mut data = try_vec_filled(0i64, n.saturating_mul(ndim))?;
    for (i, &l) in linear.iter().enumerate() {
        let mut rest = l as i64;
        for j in (0..ndim).rev() {
            let size = sizes[j].max(1);
            data[j * n + i] = rest % size;
            rest /= size;
        }
    }
    let columns = TensorBase::from_vec(data, &[ndim as i64, n as i64])?;
    let n = n as i64;
    Ok(Tensor::from(columns.as_strided(
        &[n, ndim as i64],
        &[1, n],
        Some(0),
    )?))
}

/// `nonzero(self)`.
pub fn nonzero_cpu(self_: &Tensor) -> Result<Tensor> {
    nonzero_result(self_)
}

/// `nonzero.out(self, out)`: `out` (int64) resized to `[n, ndim]`,
/// column-major when it is resized.
pub fn nonzero_out_cpu(self_: &Tensor, out: &Tensor) -> Result<Tensor> {
    let dtype = dtype_of(out)?;
    if dtype != ScalarType::Long {
        return Err(Error::runtime(format!(
            "nonzero: Expected out tensor to have scalar type Long but got scalar type{dtype}"
        )));
    }
    aten_core::memory_overlap::assert_no_internal_overlap(out)?;
    aten_core::memory_overlap::assert_no_overlap(out, self_)?;
    let result = nonzero_result(self_)?;
    let sizes = result.sizes();
    resize_output(out, &sizes, Some(&[1, sizes[0]]))?;
    copy_into(result.base(), out.base())?;
    Ok(out.clone())
}
