//! Meta function of `cat`: the joined shape, the promoted dtype (a given
//! output's, when the inputs can be cast to it), and PyTorch's shape
//! checks. One-dimensional empty inputs are skipped, as in PyTorch.

use c10_core::{Error, Result};

use super::{check_same_device, dtype_and_device};
use crate::native::wrap_dim;
use crate::structured::{MetaOutput, SetOutput};
use crate::tensor_iterator::can_cast;
use crate::Tensor;

/// Whether `cat` skips `t`: a legacy empty tensor of shape `[0]`.
pub fn cat_should_skip_tensor(t: &Tensor) -> bool {
    t.dim() == 1 && t.numel() == 0
}

/// `cat(tensors, dim)`.
pub fn cat(out: SetOutput<'_>, tensors: &[Tensor], dim: i64) -> Result<MetaOutput> {
    for (i, t) in tensors.iter().enumerate() {
        if t.dim() == 0 {
            return Err(Error::runtime(format!(
                "zero-dimensional tensor (at position {i}) cannot be concatenated"
            )));
        }
    }
    let Some(first) = tensors.first() else {
        return Err(Error::value_error(
            "torch.cat(): expected a non-empty list of Tensors",
        ));
    };
    check_same_device(tensors)?;
    let device = dtype_and_device(first)?.1;
    let mut dtype = dtype_and_device(first)?.0;
    for t in &tensors[1..] {
        dtype = c10_core::type_promotion::promote_types(dtype, dtype_and_device(t)?.0)?;
    }
    if let Some(given) = out.maybe_get_output().and_then(|t| t.dtype()) {
        if !can_cast(dtype, given) {
            return Err(Error::type_error(format!(
                "torch.cat(): input types can't be cast to the desired output type {given}"
            )));
        }
        dtype = given;
    }
    let Some(reference) = tensors.iter().find(|t| !cat_should_skip_tensor(t)) else {
        return out.set_output(&[0], dtype, device);
    };
    let ndim = reference.dim();
    let d = wrap_dim(dim, ndim)?;
    let mut sizes = reference.sizes().to_vec();
    sizes[d] = 0;
    for (i, t) in tensors.iter().enumerate() {
        if cat_should_skip_tensor(t) {
            continue;
        }
        if t.dim() != ndim {
            return Err(Error::runtime(format!(
                "Tensors must have same number of dimensions: got {ndim} and {}",
                t.dim()
            )));
        }
        let own = t.sizes();
        for k in 0..ndim {
            if k != d && own[k] != reference.sizes()[k] {
                return Err(Error::runtime(format!(
                    "Sizes of tensors must match except in dimension {d}. Expected size {} but got size {} for tensor number {i} in the list.",
                    reference.sizes()[k],
                    own[k]
                )));
            }
        }
        sizes[d] = sizes[d]
            .checked_add(own[d])
            .ok_or_else(|| Error::runtime("cat: the result's size overflows"))?;
    }
    out.set_output(&sizes, dtype, device)
}
