//! Kernels that copy elements to new places: `flip`, `index_select`,
//! `gather`, `cat`, `tril` and `triu`. Elements move as raw values of
//! their width, so one loop serves every dtype.

use aten_core::native::{fmt_list, wrap_dim};
use aten_core::tensor_iterator::convert::copy_into;
use aten_core::Tensor;
use c10_core::tensor_impl::for_each_offset;
use c10_core::{Error, Result, ScalarType, StorageBorrow, TensorBase, TensorLayout};

use super::util::{check_same_device, device_of, dtype_of, is_meta, layout_of};

/// Writes element `offsets[i]` of `src`'s storage (a snapshot of the
/// layout the offsets were computed from) to element `i` of the fresh
/// contiguous `out`. Every offset is checked against the storage, so no
/// offset can read outside it.
fn gather_offsets(src: &TensorLayout, out: &TensorBase, offsets: &[i64]) -> Result<()> {
    if is_meta(out) || offsets.is_empty() {
        return Ok(());
    }
    let ol = layout_of(out)?;
    let width = src.itemsize();
    let available = (src.storage().nbytes() / width) as i64;
    if ol.numel() != offsets.len() as i64 || ol.itemsize() != width || !ol.is_contiguous() {
        return Err(Error::internal(
            "gather_offsets: output does not match the offsets",
        ));
    }
    if offsets.iter().any(|&o| o < 0 || o >= available) {
        return Err(Error::internal(
            "gather_offsets: offset outside the storage",
        ));
    }
    let src_base = src
        .storage()
        .data_ptr()
        .ok_or_else(|| Error::runtime("tensor has no data"))?
        .as_ptr();
    let dst = ol
        .data_ptr()
        .ok_or_else(|| Error::runtime("tensor has no data"))?;
    StorageBorrow::hold([(src.storage(), false), (ol.storage(), true)], || {
        macro_rules! copy_as {
            ($t:ty) => {{
                let (s, d) = (src_base as *const $t, dst as *mut $t);
                for (i, &off) in offsets.iter().enumerate() {
                    // SAFETY: every offset was checked to index an element
                    // of `src`'s storage (which `src` keeps alive); `out` is
                    // contiguous with `offsets.len()` elements of the same
                    // width; borrows are held (exclusive for `out`).
                    unsafe { *d.add(i) = *s.add(off as usize) };
                }
            }};
        }
        match width {
            1 => copy_as!(u8),
            2 => copy_as!(u16),
            4 => copy_as!(u32),
            8 => copy_as!(u64),
            16 => copy_as!(u128),
            w => return Err(Error::runtime(format!("unsupported element size {w}"))),
        }
        Ok(())
    })?
}

/// `flip(dims)`: a copy with the listed dimensions reversed.
pub fn flip(self_: &Tensor, dims: &[i64]) -> Result<Tensor> {
    let sl = layout_of(self_)?;
    let ndim = sl.sizes().len();
    let mut flipped = vec![false; ndim];
    for &d in dims {
        let w = wrap_dim(d, ndim)?;
        if ndim > 0 && std::mem::replace(&mut flipped[w], true) {
            return Err(Error::runtime(format!(
                "dims has duplicates, original flip dims size={}, but unique flip dims size={}",
                dims.len(),
                dims.len() - 1
            )));
        }
    }
    let out = TensorBase::empty(sl.sizes(), dtype_of(self_)?, device_of(self_))?;
    let mut strides = sl.strides().to_vec();
    let mut offset = sl.storage_offset();
    for d in 0..ndim {
        if flipped[d] && sl.sizes()[d] > 0 {
            offset += (sl.sizes()[d] - 1) * strides[d];
            strides[d] = -strides[d];
        }
    }
    let mut offsets = Vec::with_capacity(sl.numel() as usize);
    for_each_offset(sl.sizes(), &strides, offset, |o| offsets.push(o));
    gather_offsets(&sl, &out, &offsets)?;
    Ok(Tensor::from(out))
}

/// The values of an int64 or int32 index tensor, in row-major order.
fn index_values(index: &TensorBase, what: &str) -> Result<Vec<i64>> {
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
    let sl = layout_of(self_)?;
    if index.dim() > 1 {
        return Err(Error::index_error(
            "index_select(): Index is supposed to be a vector",
        ));
    }
    let ndim = sl.sizes().len();
    let d = wrap_dim(dim, ndim)?;
    check_same_device([&**self_, &**index])?;
    let idx = if is_meta(index) {
        Vec::new()
    } else {
        index_values(index, "index_select")?
    };
    if ndim == 0 && index.numel() != 1 {
        return Err(Error::index_error(format!(
            "index_select(): Index to scalar can have only 1 value, got {} value(s)",
            index.numel()
        )));
    }
    let mut sizes = sl.sizes().to_vec();
    let size = if ndim == 0 { 1 } else { sizes[d] };
    if ndim > 0 {
        sizes[d] = index.numel();
    }
    for &i in &idx {
        if i < 0 || i >= size {
            return Err(Error::index_error("index out of range in self"));
        }
    }
    let out = TensorBase::empty(&sizes, dtype_of(self_)?, device_of(self_))?;
    if is_meta(self_) || out.numel() == 0 {
        return Ok(Tensor::from(out));
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
    Ok(Tensor::from(out))
}

/// `gather(dim, index, sparse_grad)`: `out[p] = self[p with index[p] at dim]`.
pub fn gather(self_: &Tensor, dim: i64, index: &Tensor, _sparse_grad: bool) -> Result<Tensor> {
    let sl = layout_of(self_)?;
    let ndim = sl.sizes().len();
    let d = wrap_dim(dim, ndim)?;
    if dtype_of(index)? != ScalarType::Long {
        return Err(Error::runtime("gather(): Expected dtype int64 for index"));
    }
    if index.dim() != ndim && !(ndim == 0 && index.dim() <= 1) {
        return Err(Error::runtime(
            "Index tensor must have the same number of dimensions as input tensor",
        ));
    }
    for k in 0..index.dim() {
        if k != d && index.size((k) as i64)? > sl.sizes()[k] {
            return Err(Error::runtime(format!(
                "Size does not match at dimension {k} expected index {} to be no larger than self {} apart from dimension {d}",
                fmt_list(&index.sizes()),
                fmt_list(sl.sizes())
            )));
        }
    }
    let out = TensorBase::empty(&index.sizes(), dtype_of(self_)?, device_of(self_))?;
    if is_meta(self_) || out.numel() == 0 {
        return Ok(Tensor::from(out));
    }
    let idx = index.to_vec::<i64>()?;
    let size = if ndim == 0 { 1 } else { sl.sizes()[d] };
    let stride = if ndim == 0 { 0 } else { sl.strides()[d] };
    let mut strides: Vec<i64> = if ndim == 0 {
        vec![0; index.dim()]
    } else {
        sl.strides().to_vec()
    };
    if !strides.is_empty() {
        strides[d] = 0;
    }
    let mut offsets = Vec::with_capacity(idx.len());
    let mut bad = None;
    let mut k = 0;
    for_each_offset(&index.sizes(), &strides, sl.storage_offset(), |base| {
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
    gather_offsets(&sl, &out, &offsets)?;
    Ok(Tensor::from(out))
}

/// `cat(tensors, dim)`: the tensors joined along `dim`, in their promoted
/// dtype. 1-d empty tensors are skipped, as in PyTorch.
pub fn cat(tensors: &[Tensor], dim: i64) -> Result<Tensor> {
    if tensors.is_empty() {
        return Err(Error::runtime(
            "torch.cat(): expected a non-empty list of Tensors",
        ));
    }
    check_same_device(tensors.iter().map(|t| &**t))?;
    let skip = |t: &Tensor| t.dim() == 1 && t.numel() == 0;
    let mut dtype = dtype_of(&tensors[0])?;
    for t in &tensors[1..] {
        dtype = c10_core::type_promotion::promote_types(dtype, dtype_of(t)?)?;
    }
    let Some(reference) = tensors.iter().find(|t| !skip(t)) else {
        return Ok(Tensor::from(TensorBase::empty(
            &[0],
            dtype,
            device_of(&tensors[0]),
        )?));
    };
    if reference.dim() == 0 {
        return Err(Error::runtime(
            "zero-dimensional tensor (at position 0) cannot be concatenated",
        ));
    }
    let ndim = reference.dim();
    let d = wrap_dim(dim, ndim)?;
    let mut sizes = reference.sizes().to_vec();
    sizes[d] = 0;
    for (i, t) in tensors.iter().enumerate() {
        if skip(t) {
            continue;
        }
        if t.dim() != ndim {
            return Err(Error::runtime(format!(
                "Tensors must have same number of dimensions: got {} and {}",
                ndim,
                t.dim()
            )));
        }
        for k in 0..ndim {
            if k != d && t.size((k) as i64)? != reference.size((k) as i64)? {
                return Err(Error::runtime(format!(
                    "Sizes of tensors must match except in dimension {d}. Expected size {} but got size {} for tensor number {i} in the list.",
                    reference.size((k) as i64)?,
                    t.size((k) as i64)?
                )));
            }
        }
        sizes[d] = sizes[d]
            .checked_add(t.size((d) as i64)?)
            .ok_or_else(|| Error::runtime("cat: the result's size overflows"))?;
    }
    let out = TensorBase::empty(&sizes, dtype, device_of(reference))?;
    if is_meta(&out) {
        return Ok(Tensor::from(out));
    }
    let mut at = 0;
    for t in tensors.iter().filter(|t| !skip(t)) {
        let len = t.size((d) as i64)?;
        if len > 0 {
            let mut view_strides = out.strides().to_vec();
            let mut view_sizes = sizes.clone();
            view_sizes[d] = len;
            let offset = at * view_strides[d];
            view_strides.truncate(ndim);
            let slot = out.as_strided(&view_sizes, &view_strides, Some(offset))?;
            copy_into(t, &slot)?;
        }
        at += len;
    }
    Ok(Tensor::from(out))
}

/// Shared by `tril` and `triu`: a contiguous copy with the elements of
/// each matrix for which `zero(row, col)` holds set to zero.
fn triangle(self_: &Tensor, name: &str, zero: impl Fn(i64, i64) -> bool) -> Result<Tensor> {
    let sl = layout_of(self_)?;
    if sl.sizes().len() < 2 {
        return Err(Error::runtime(format!(
            "{name}: input tensor must have at least 2 dimensions"
        )));
    }
    let out = TensorBase::empty(sl.sizes(), dtype_of(self_)?, device_of(self_))?;
    if is_meta(self_) || out.numel() == 0 {
        return Ok(Tensor::from(out));
    }
    let n = sl.sizes().len();
    let (rows, cols) = (sl.sizes()[n - 2], sl.sizes()[n - 1]);
    let mut offsets = Vec::with_capacity(out.numel() as usize);
    for_each_offset(sl.sizes(), sl.strides(), sl.storage_offset(), |o| {
        offsets.push(o)
    });
    gather_offsets(&sl, &out, &offsets)?;
    let ol = layout_of(&out)?;
    let width = ol.itemsize();
    let base = ol
        .data_ptr()
        .ok_or_else(|| Error::runtime("tensor has no data"))?;
    StorageBorrow::hold([(ol.storage(), true)], || {
        for e in 0..ol.numel() {
            let (r, c) = ((e / cols) % rows, e % cols);
            if zero(r, c) {
                // SAFETY: `e` indexes the fresh contiguous output (exclusive
                // borrow held); all-zero bytes are zero in every dtype.
                unsafe { std::ptr::write_bytes(base.add(e as usize * width), 0, width) };
            }
        }
    })?;
    Ok(Tensor::from(out))
}

/// `tril(diagonal)`: the lower triangle of each matrix.
pub fn tril(self_: &Tensor, diagonal: i64) -> Result<Tensor> {
    triangle(self_, "tril", |r, c| c - r > diagonal)
}

/// `triu(diagonal)`: the upper triangle of each matrix.
pub fn triu(self_: &Tensor, diagonal: i64) -> Result<Tensor> {
    triangle(self_, "triu", |r, c| c - r < diagonal)
}
