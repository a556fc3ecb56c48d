//! Factory kernels: `empty`, `empty_strided` (Meta, and the shared logic
//! the CPU kernels call) and the composite `zeros`.

use c10_core::{Device, Error, Layout, MemoryFormat, Result, ScalarType, TensorBase};

use crate::generated::ops;
use crate::Tensor;

/// The default dtype (`torch.get_default_dtype()`).
pub const DEFAULT_DTYPE: ScalarType = ScalarType::Float;

fn check_layout(layout: Option<Layout>) -> Result<()> {
    match layout {
        None | Some(Layout::Strided) => Ok(()),
        Some(other) => Err(Error::runtime(format!(
            "empty: only strided tensors are supported, got layout {other}"
        ))),
    }
}

/// Strides of a tensor of `sizes` laid out in `memory_format`.
fn strides_for(sizes: &[i64], memory_format: MemoryFormat) -> Result<Vec<i64>> {
    let contiguous = || c10_core::tensor_impl::contiguous_strides(sizes).to_vec();
    Ok(match memory_format {
        MemoryFormat::Contiguous | MemoryFormat::Preserve => contiguous(),
        MemoryFormat::ChannelsLast => {
            if sizes.len() != 4 {
                return Err(Error::runtime(
                    "required rank 4 tensor to use channels_last format",
                ));
            }
            let (c, h, w) = (sizes[1].max(1), sizes[2].max(1), sizes[3].max(1));
            vec![c * h * w, 1, w * c, c]
        }
        MemoryFormat::ChannelsLast3d => {
            if sizes.len() != 5 {
                return Err(Error::runtime(
                    "required rank 5 tensor to use channels_last_3d format",
                ));
            }
            let (c, d, h, w) = (
                sizes[1].max(1),
                sizes[2].max(1),
                sizes[3].max(1),
                sizes[4].max(1),
            );
            vec![c * d * h * w, 1, h * w * c, w * c, c]
        }
    })
}

/// `empty` on `device`, shared by the CPU and Meta kernels.
pub fn empty_generic(
    size: &[i64],
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Device,
    memory_format: Option<MemoryFormat>,
) -> Result<Tensor> {
    check_layout(layout)?;
    if let Some(bad) = size.iter().find(|s| **s < 0) {
        return Err(Error::runtime(format!(
            "Trying to create tensor with negative dimension {bad}: {size:?}"
        )));
    }
    let strides = strides_for(size, memory_format.unwrap_or(MemoryFormat::Contiguous))?;
    TensorBase::empty_strided(size, &strides, dtype.unwrap_or(DEFAULT_DTYPE), device)
        .map(Tensor::from)
}

/// `empty_strided` on `device`, shared by the CPU and Meta kernels.
pub fn empty_strided_generic(
    size: &[i64],
    stride: &[i64],
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Device,
) -> Result<Tensor> {
    check_layout(layout)?;
    TensorBase::empty_strided(size, stride, dtype.unwrap_or(DEFAULT_DTYPE), device)
        .map(Tensor::from)
}

/// Meta kernel of `empty.memory_format`.
pub fn empty_meta(
    size: &[i64],
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    _device: Option<Device>,
    _pin_memory: Option<bool>,
    memory_format: Option<MemoryFormat>,
) -> Result<Tensor> {
    empty_generic(size, dtype, layout, Device::META, memory_format)
}

/// Meta kernel of `empty_strided`.
pub fn empty_strided_meta(
    size: &[i64],
    stride: &[i64],
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    _device: Option<Device>,
    _pin_memory: Option<bool>,
) -> Result<Tensor> {
    empty_strided_generic(size, stride, dtype, layout, Device::META)
}

/// CompositeExplicitAutograd kernel of `zeros`: storage is zero-filled at
/// allocation, so `zeros` is `empty` on the requested device.
pub fn zeros(
    size: &[i64],
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
) -> Result<Tensor> {
    ops::empty_memory_format_with(
        size,
        ops::EmptyMemoryFormatOptions {
            dtype,
            layout,
            device,
            pin_memory,
            memory_format: None,
        },
    )
}
