//! Copies, registered as PyTorch registers them: `copy_`
//! (CompositeExplicitAutograd, over `TensorIterator`'s converting copy),
//! `clone` and `_to_copy` (CompositeExplicitAutograd: `empty_like` +
//! `copy_`), and `contiguous` (CompositeImplicitAutograd: `self` when
//! already laid out as asked, else `clone`).

use c10_core::{Device, Error, Layout, MemoryFormat, Result, ScalarType};

use crate::generated::ops;
use crate::tensor_iterator::convert::copy_into;
use crate::Tensor;

/// `copy_(self, src, non_blocking)`: `src` broadcast and converted into
/// `self`.
pub fn copy_(self_: &Tensor, src: &Tensor, _non_blocking: bool) -> Result<Tensor> {
    copy_into(src, self_)?;
    Ok(self_.clone())
}

/// `clone(self, memory_format)`: a copy with `self`'s layout
/// (`preserve_format`) or the one asked for.
pub fn clone(self_: &Tensor, memory_format: Option<MemoryFormat>) -> Result<Tensor> {
    let out = ops::empty_like_with(
        self_,
        ops::EmptyLikeOptions {
            memory_format,
            ..Default::default()
        },
    )?;
    ops::copy_(&out, self_)
}

/// `_to_copy(self, dtype, layout, device, ...)`: a copy converted to
/// `dtype` on `device`.
pub fn _to_copy(
    self_: &Tensor,
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
    _non_blocking: bool,
    memory_format: Option<MemoryFormat>,
) -> Result<Tensor> {
    if layout.is_some_and(|l| l != Layout::Strided) {
        return Err(Error::runtime(
            "_to_copy: only strided tensors are supported",
        ));
    }
    let out = ops::empty_like_with(
        self_,
        ops::EmptyLikeOptions {
            dtype,
            layout,
            device,
            pin_memory,
            memory_format,
        },
    )?;
    ops::copy_(&out, self_)
}

/// `contiguous(self, memory_format)`: `self` when already contiguous,
/// else a contiguous copy.
pub fn contiguous(self_: &Tensor, memory_format: MemoryFormat) -> Result<Tensor> {
    if memory_format == MemoryFormat::Contiguous && self_.is_contiguous() {
        return Ok(self_.clone());
    }
    ops::clone_with(
        self_,
        ops::CloneOptions {
            memory_format: Some(memory_format),
        },
    )
}
