//! View kernels shared by every backend with strided storage.

use c10_core::Result;

use crate::Tensor;

/// `as_strided` (CPU and Meta): a view of the same storage.
pub fn as_strided_tensorimpl(
    self_: &Tensor,
    size: &[i64],
    stride: &[i64],
    storage_offset: Option<i64>,
) -> Result<Tensor> {
    self_
        .base()
        .as_strided(size, stride, storage_offset)
        .map(Tensor::from)
}
