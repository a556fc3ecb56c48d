//! Meta function of `cat`: the joined shape, the promoted dtype (a given
//! output's, when the inputs can be cast to it), the inputs' common memory
//! format, and PyTorch's shape checks. One-dimensional empty inputs are
//! skipped, as in PyTorch.

use c10_core::{Error, MemoryFormat, Result};

use super::{check_same_device, dtype_and_device};
use crate::native::{dims::wrap_dim, factories::strides_for};
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
    let format = output_memory_format(tensors);
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
    let strides = match format {
        MemoryFormat::Contiguous => None,
        _ => Some(strides_for(&sizes, format)?),
    };
    out.set_outputs([(&sizes, strides.as_deref(), dtype)], device)
}

/// The inputs' common suggested memory format, or contiguous when they
/// differ (`cat_compute_output_memory_format`; skipped inputs count).
fn output_memory_format(tensors: &[Tensor]) -> MemoryFormat {
    let mut common = None;
    for t in tensors {
        let f = MemoryFormat::suggest(&t.sizes(), &t.strides());
        if f == MemoryFormat::Contiguous || common.is_some_and(|c| c != f) {
            return MemoryFormat::Contiguous;
        }
        common = Some(f);
    }
    common.unwrap_or(MemoryFormat::Contiguous)
}
