//! The queries of a tensor's geometry as operators (PyTorch's
//! CompositeImplicitAutograd `sym_size.int`, `sym_stride.int`,
//! `sym_numel`, `sym_storage_offset`, `sym_is_contiguous`): plain values
//! here, as every size is concrete.

use c10_core::tensor_impl::maybe_wrap_dim;
use c10_core::{Error, MemoryFormat, Result};

use crate::Tensor;

/// The sizes, strides and offset of one snapshot of `self_`'s layout.
fn geometry(self_: &Tensor) -> Result<(Vec<i64>, Vec<i64>, i64)> {
    let l = self_
        .layout()
        .ok_or_else(|| Error::runtime("Tensor is undefined"))?;
    Ok((l.sizes().to_vec(), l.strides().to_vec(), l.storage_offset()))
}

/// `sym_size.int(self, dim)`: the size of dimension `dim` (a 0-dim tensor
/// has none).
pub fn sym_size_int(self_: &Tensor, dim: i64) -> Result<i64> {
    let (sizes, _, _) = geometry(self_)?;
    Ok(sizes[maybe_wrap_dim(dim, sizes.len(), false)?])
}

/// `sym_stride.int(self, dim)`: the stride of dimension `dim`.
pub fn sym_stride_int(self_: &Tensor, dim: i64) -> Result<i64> {
    let (_, strides, _) = geometry(self_)?;
    Ok(strides[maybe_wrap_dim(dim, strides.len(), false)?])
}

/// `sym_numel(self)`: the number of elements.
pub fn sym_numel(self_: &Tensor) -> Result<i64> {
    let l = self_
        .layout()
        .ok_or_else(|| Error::runtime("Tensor is undefined"))?;
    Ok(l.numel())
}

/// `sym_storage_offset(self)`: the offset of the first element in the
/// storage, in elements.
pub fn sym_storage_offset(self_: &Tensor) -> Result<i64> {
    Ok(geometry(self_)?.2)
}

/// `sym_is_contiguous(self, memory_format)`: whether the elements are
/// dense in `memory_format`'s order (`is_contiguous(memory_format)`;
/// `preserve_format` asks for row-major order, as `contiguous_format`).
pub fn sym_is_contiguous(self_: &Tensor, memory_format: MemoryFormat) -> Result<bool> {
    let l = self_
        .layout()
        .ok_or_else(|| Error::runtime("Tensor is undefined"))?;
    Ok(match memory_format {
        MemoryFormat::ChannelsLast | MemoryFormat::ChannelsLast3d => {
            memory_format.is_channels_last_contiguous(l.sizes(), l.strides())
        }
        MemoryFormat::Contiguous | MemoryFormat::Preserve => l.is_contiguous(),
    })
}
