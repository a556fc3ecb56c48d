//! Copies: `_to_copy`, `clone`, `contiguous` and `copy_`.

use aten_core::tensor_iterator::convert::copy_into;
use aten_core::Tensor;
use c10_core::{Device, Error, Layout, MemoryFormat, Result, ScalarType, TensorBase};

/// Strides for a copy of `t` that keeps its layout (see
/// [`aten_core::tensor_iterator::convert::preserved_strides`]).
pub fn preserved_strides(t: &Tensor) -> Vec<i64> {
    aten_core::tensor_iterator::convert::preserved_strides(t)
}

fn copy_with(
    t: &Tensor,
    dtype: ScalarType,
    device: Device,
    memory_format: Option<MemoryFormat>,
) -> Result<Tensor> {
    let strides = match memory_format {
        None | Some(MemoryFormat::Preserve) => preserved_strides(t),
        Some(MemoryFormat::Contiguous) => {
            c10_core::tensor_impl::contiguous_strides(t.sizes()).to_vec()
        }
        Some(other) => {
            let e = aten_core::native::empty_generic(
                t.sizes(),
                Some(dtype),
                None,
                device,
                Some(other),
            )?;
            e.strides().to_vec()
        }
    };
    let out = TensorBase::empty_strided(t.sizes(), &strides, dtype, device)?;
    copy_into(t, &out)?;
    Ok(Tensor::from(out))
}

/// `_to_copy`.
pub fn to_copy(
    self_: &Tensor,
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Option<Device>,
    _pin_memory: Option<bool>,
    _non_blocking: bool,
    memory_format: Option<MemoryFormat>,
) -> Result<Tensor> {
    if layout.is_some_and(|l| l != Layout::Strided) {
        return Err(Error::runtime(
            "_to_copy: only strided tensors are supported",
        ));
    }
    let dtype = dtype
        .or(self_.dtype())
        .ok_or_else(|| Error::runtime("undefined tensor"))?;
    let device = device.or(self_.device()).unwrap_or(Device::CPU);
    copy_with(self_, dtype, device, memory_format)
}

/// `clone`.
pub fn clone(self_: &Tensor, memory_format: Option<MemoryFormat>) -> Result<Tensor> {
    let dtype = self_
        .dtype()
        .ok_or_else(|| Error::runtime("undefined tensor"))?;
    copy_with(
        self_,
        dtype,
        self_.device().unwrap_or(Device::CPU),
        memory_format,
    )
}

/// `contiguous`: `self` when already contiguous, else a contiguous copy.
pub fn contiguous(self_: &Tensor, memory_format: MemoryFormat) -> Result<Tensor> {
    if memory_format == MemoryFormat::Contiguous && self_.is_contiguous() {
        return Ok(self_.clone());
    }
    clone(self_, Some(memory_format))
}

/// `copy_`: copies `src` (broadcast and converted) into `self`.
pub fn copy_(self_: &Tensor, src: &Tensor, _non_blocking: bool) -> Result<Tensor> {
    copy_into(src, self_)?;
    self_.bump_version();
    Ok(self_.clone())
}
