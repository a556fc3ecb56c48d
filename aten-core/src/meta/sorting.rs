//! Meta functions of `sort.stable` and `topk` (values and int64 indices).
//!
//! `sort`'s outputs keep `self`'s strides when they are non-overlapping
//! and dense, else dense strides in `self`'s dimension order (so a sort
//! never allocates more than `self` holds); `topk`'s are contiguous, with
//! `k` elements along `dim`.

use c10_core::{Error, Result, ScalarType};

use super::dtype_and_device;
use crate::memory_overlap::is_non_overlapping_and_dense;
use crate::native::{dims::infer_dense_strides, dims::wrap_dim};
use crate::structured::{MetaOutput, SetOutput};
use crate::Tensor;

/// `sort.stable(self, *, stable, dim, descending)`.
pub fn sort_stable(
    out: SetOutput<'_>,
    self_: &Tensor,
    _stable: Option<bool>,
    dim: i64,
    _descending: bool,
) -> Result<MetaOutput<2>> {
    let (dtype, device) = dtype_and_device(self_)?;
    let layout = self_
        .layout()
        .ok_or_else(|| Error::runtime("undefined tensor"))?;
    wrap_dim(dim, layout.sizes().len())?;
    let (sizes, strides) = (layout.sizes(), layout.strides());
    let dense = if is_non_overlapping_and_dense(sizes, strides) {
        strides.to_vec()
    } else {
        infer_dense_strides(sizes, strides)
    };
    out.set_outputs(
        [
            (sizes, Some(&dense[..]), dtype),
            (sizes, Some(&dense[..]), ScalarType::Long),
        ],
        device,
    )
}

/// `topk(self, k, dim, largest, sorted)`.
pub fn topk(
    out: SetOutput<'_>,
    self_: &Tensor,
    k: i64,
    dim: i64,
    _largest: bool,
    _sorted: bool,
) -> Result<MetaOutput<2>> {
    let (dtype, device) = dtype_and_device(self_)?;
    let mut sizes = self_.sizes().to_vec();
    let d = wrap_dim(dim, sizes.len())?;
    let slice = sizes.get(d).copied().unwrap_or(1);
    if k < 0 || k > slice {
        return Err(Error::runtime("selected index k out of range"));
    }
    if let Some(s) = sizes.get_mut(d) {
        *s = k;
    }
    out.set_outputs(
        [
            (&sizes[..], None, dtype),
            (&sizes[..], None, ScalarType::Long),
        ],
        device,
    )
}
