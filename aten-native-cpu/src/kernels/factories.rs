//! CPU factory kernels.

use aten_core::native::{factories::empty_generic, factories::empty_strided_generic};
use aten_core::Tensor;
use c10_core::{Device, Layout, MemoryFormat, Result, ScalarType};

/// CPU kernel of `empty.memory_format`.
pub fn empty_cpu(
    size: &[i64],
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    _device: Option<Device>,
    _pin_memory: Option<bool>,
    memory_format: Option<MemoryFormat>,
) -> Result<Tensor> {
    empty_generic(size, dtype, layout, Device::CPU, memory_format)
}

/// CPU kernel of `empty_strided`.
pub fn empty_strided_cpu(
    size: &[i64],
    stride: &[i64],
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    _device: Option<Device>,
    _pin_memory: Option<bool>,
) -> Result<Tensor> {
    empty_strided_generic(size, stride, dtype, layout, Device::CPU)
}
