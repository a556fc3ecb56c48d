//! `flip`: a copy with some dimensions reversed.

use aten_core::meta::flip_meta;
use aten_core::native::dims::wrap_dim;
use aten_core::Tensor;
use c10_core::tensor_impl::for_each_offset;
use c10_core::{Error, Result};

use super::gather_offsets::gather_offsets;
use super::util::layout_of;

/// `flip(dims)`: a copy with the listed dimensions reversed.
pub fn flip(self_: &Tensor, dims: &[i64]) -> Result<Tensor> {
    let out = flip_meta(self_, dims)?;
    let sl = layout_of(self_)?;
    let ndim = sl.sizes().len();
    if sl.sizes() != &out.sizes()[..] {
        return Err(Error::runtime("flip: the input changed while it ran"));
    }
    let mut flipped = vec![false; ndim];
    for &d in dims {
        if ndim > 0 {
            flipped[wrap_dim(d, ndim)?] = true;
        }
    }
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
    Ok(out)
}
