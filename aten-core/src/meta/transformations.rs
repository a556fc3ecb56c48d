//! Meta kernel of `flip` (PyTorch's tensor transformations).

use c10_core::{Error, Result};

use super::{dtype_and_device, new_contiguous};
use crate::native::dims::wrap_dim;
use crate::Tensor;

/// `flip(self, dims)`: no repeated dimension; `self`'s shape.
pub fn flip_meta(self_: &Tensor, dims: &[i64]) -> Result<Tensor> {
    let (dtype, device) = dtype_and_device(self_)?;
    let ndim = self_.dim();
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
    new_contiguous(&self_.sizes(), dtype, device)
}
