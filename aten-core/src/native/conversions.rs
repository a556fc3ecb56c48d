//! The conversions of `Tensor.to` and friends (CompositeImplicitAutograd,
//! PyTorch's `TensorConversions.cpp`): `to.dtype`, `to.device`,
//! `to.dtype_layout` and `to.other` return `self` when nothing would
//! change (the result aliases the input) and `_to_copy` otherwise;
//! `type_as` converts to another tensor's options; `item` reads a
//! one-element tensor (`_local_scalar_dense`).

use c10_core::{Device, Error, Layout, MemoryFormat, Result, Scalar, ScalarType};

use crate::generated::ops;
use crate::Tensor;

/// `to_will_alias`: whether `self` already is what was asked for.
fn will_alias(
    self_: &Tensor,
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Option<Device>,
    copy: bool,
    memory_format: Option<MemoryFormat>,
) -> bool {
    let format = memory_format.unwrap_or(MemoryFormat::Preserve);
    dtype.is_none_or(|d| self_.dtype() == Some(d))
        && layout.is_none_or(|l| l == Layout::Strided)
        && device.is_none_or(|d| self_.device() == Some(d))
        && !copy
        && (format == MemoryFormat::Preserve
            || MemoryFormat::suggest(&self_.sizes(), &self_.strides()) == format)
}

/// `to.dtype_layout(self, *, dtype, layout, device, pin_memory,
/// non_blocking, copy, memory_format)` (PyTorch's `to_impl`, the body of
/// every overload).
#[allow(clippy::too_many_arguments)]
#[doc(alias = "to_impl")]
pub fn to_dtype_layout(
    self_: &Tensor,
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    device: Option<Device>,
    pin_memory: Option<bool>,
    non_blocking: bool,
    copy: bool,
    memory_format: Option<MemoryFormat>,
) -> Result<Tensor> {
    if will_alias(self_, dtype, layout, device, copy, memory_format) {
        return Ok(self_.clone());
    }
    ops::_to_copy_with(
        self_,
        ops::ToCopyOptions {
            dtype,
            layout,
            device,
            pin_memory,
            non_blocking,
            memory_format,
        },
    )
}

/// `to.device(self, device, dtype, non_blocking, copy, memory_format)`.
pub fn to_device(
    self_: &Tensor,
    device: Device,
    dtype: ScalarType,
    non_blocking: bool,
    copy: bool,
    memory_format: Option<MemoryFormat>,
) -> Result<Tensor> {
    to_dtype_layout(
        self_,
        Some(dtype),
        None,
        Some(device),
        None,
        non_blocking,
        copy,
        memory_format,
    )
}

/// `to.dtype(self, dtype, non_blocking, copy, memory_format)`.
pub fn to_dtype(
    self_: &Tensor,
    dtype: ScalarType,
    non_blocking: bool,
    copy: bool,
    memory_format: Option<MemoryFormat>,
) -> Result<Tensor> {
    to_dtype_layout(
        self_,
        Some(dtype),
        None,
        None,
        None,
        non_blocking,
        copy,
        memory_format,
    )
}

/// `to.other(self, other, non_blocking, copy, memory_format)`: to
/// `other`'s dtype, layout and device.
pub fn to_other(
    self_: &Tensor,
    other: &Tensor,
    non_blocking: bool,
    copy: bool,
    memory_format: Option<MemoryFormat>,
) -> Result<Tensor> {
    to_dtype_layout(
        self_,
        other.dtype(),
        Some(Layout::Strided),
        other.device(),
        Some(false),
        non_blocking,
        copy,
        memory_format,
    )
}

/// `type_as(self, other)`: `self.to(other.options())`.
pub fn type_as(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
    to_dtype_layout(
        self_,
        other.dtype(),
        Some(Layout::Strided),
        other.device(),
        Some(false),
        false,
        false,
        None,
    )
}

/// `item(self)`: the value of a one-element tensor.
pub fn item(self_: &Tensor) -> Result<Scalar> {
    let numel = self_.numel();
    if numel != 1 {
        return Err(Error::runtime(format!(
            "a Tensor with {numel} elements cannot be converted to Scalar"
        )));
    }
    ops::_local_scalar_dense(self_)
}
