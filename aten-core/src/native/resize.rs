//! `resize_`: new sizes for a tensor in place, with contiguous strides (or
//! those of a memory format), over its storage, which grows when it is too
//! small (c10-core's `TensorBase::resize_`). The same kernel serves CPU and
//! Meta tensors: a Meta tensor's storage has no data to grow.

use c10_core::{Error, MemoryFormat, Result};

use super::factories::strides_for;
use crate::Tensor;

/// `resize_(self, size, *, memory_format)`: the same sizes leave the
/// strides alone unless a memory format asks for its own
/// (`empty_tensor_restride`); `preserve_format` is refused after the
/// resize, as PyTorch does.
pub fn resize_(
    self_: &Tensor,
    size: &[i64],
    memory_format: Option<MemoryFormat>,
) -> Result<Tensor> {
    let t = self_.base();
    t.resize_(size)?;
    if let Some(format) = memory_format {
        if format == MemoryFormat::Preserve {
            return Err(Error::runtime(format!("Unsupported memory format{format}")));
        }
        t.resize_strided_(size, &strides_for(size, format)?)?;
    }
    Ok(self_.clone())
}
