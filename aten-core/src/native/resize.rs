//! `resize_`: new sizes for a tensor in place, with contiguous strides (or
//! those of a memory format), over its storage, which grows when it is too
//! small (c10-core's `TensorBase::resize_`); and `resize_output`, how out
//! arguments are resized. The same kernel serves CPU and
//! Meta tensors: a Meta tensor's storage has no data to grow.

use c10_core::warning::{warn, Warning};
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

/// PyTorch's `resize_output`: resizes `out` to `shape` (laid out with
/// `strides`, or contiguous) when it has another shape, warning when it
/// had elements (a deprecated behaviour); whether it was resized.
pub fn resize_output(out: &Tensor, shape: &[i64], strides: Option<&[i64]>) -> Result<bool> {
    let current = out.sizes();
    if current == shape {
        return Ok(false);
    }
    if current.iter().product::<i64>() != 0 {
        warn(Warning::user(
            c10_core::source_location!(),
            format!(
                "An output with one or more elements was resized since it had shape {current:?}, which does not match the required output shape {shape:?}. This behavior is deprecated, and in a future PyTorch release outputs will not be resized unless they have zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero elements with t.resize_(0)."
            ),
        ));
    }
    match strides {
        Some(s) => out.resize_strided_(shape, s)?,
        None => out.base().resize_(shape)?,
    }
    Ok(true)
}
