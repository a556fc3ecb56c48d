//! `flip`: a copy with some dimensions reversed.

use aten_core::native::wrap_dim;
use aten_core::Tensor;
use c10_core::tensor_impl::for_each_offset;
use c10_core::{Error, Result, TensorBase};

use super::gather_offsets::gather_offsets;
use super::util::{device_of, dtype_of, layout_of};

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
