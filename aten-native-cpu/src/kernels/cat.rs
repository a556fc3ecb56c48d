//! `cat`: tensors joined along a dimension, in their promoted dtype.

use aten_core::native::wrap_dim;
use aten_core::tensor_iterator::convert::copy_into;
use aten_core::Tensor;
use c10_core::{Error, Result, TensorBase};

use super::util::{check_same_device, device_of, dtype_of, is_meta};

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
