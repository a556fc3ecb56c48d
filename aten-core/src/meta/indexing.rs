//! Meta function of `gather`: an output of the index's shape and `self`'s
//! dtype, then PyTorch's index dtype (int64 or int32) and shape checks for
//! a non-empty index (the index values are the impl's to check).

use c10_core::{Error, Result, ScalarType};

use super::{check_same_device, dtype_and_device, new_contiguous};
use crate::native::{dims::fmt_list, dims::wrap_dim};
use crate::structured::{MetaOutput, SetOutput};
use crate::Tensor;

/// `gather(self, dim, index, *, sparse_grad)`.
pub fn gather(
    out: SetOutput<'_>,
    self_: &Tensor,
    dim: i64,
    index: &Tensor,
    _sparse_grad: bool,
) -> Result<MetaOutput> {
    let (dtype, device) = dtype_and_device(self_)?;
    let ndim = self_.dim();
    let d = wrap_dim(dim, ndim)?;
    check_same_device([self_, index])?;
    let index_sizes = index.sizes();
    let output = out.set_output(&index_sizes, dtype, device)?;
    if index.numel() == 0 {
        return Ok(output);
    }
    if !matches!(
        dtype_and_device(index)?.0,
        ScalarType::Long | ScalarType::Int
    ) {
        return Err(Error::runtime(
            "gather(): Expected dtype int32/int64 for index",
        ));
    }
    if ndim.max(1) != index.dim().max(1) {
        return Err(Error::runtime(
            "Index tensor must have the same number of dimensions as input tensor",
        ));
    }
    let sizes = self_.sizes();
    // `ensure_nonempty_size`: a 0-dim tensor has size 1.
    let size_at = |s: &[i64], k: usize| s.get(k).copied().unwrap_or(1);
    for k in 0..ndim {
        if k != d && size_at(&index_sizes, k) > size_at(&sizes, k) {
            return Err(Error::runtime(format!(
                "Size does not match at dimension {k} expected index {} to be no larger than self {} apart from dimension {d}",
                fmt_list(&index_sizes),
                fmt_list(&sizes)
            )));
        }
    }
    Ok(output)
}

/// `index_select(self, dim, index)`: a vector index; `self`'s shape with
/// the index's length at `dim` (the index values are the kernel's to
/// check).
pub fn index_select_meta(self_: &Tensor, dim: i64, index: &Tensor) -> Result<Tensor> {
    let (dtype, device) = dtype_and_device(self_)?;
    if index.dim() > 1 {
        return Err(Error::index_error(
            "index_select(): Index is supposed to be a vector",
        ));
    }
    let ndim = self_.dim();
    let d = wrap_dim(dim, ndim)?;
    check_same_device([self_, index])?;
    if ndim == 0 && index.numel() != 1 {
        return Err(Error::index_error(format!(
            "index_select(): Index to scalar can have only 1 value, got {} value(s)",
            index.numel()
        )));
    }
    let mut sizes = self_.sizes().to_vec();
    if ndim > 0 {
        sizes[d] = index.numel();
    }
    new_contiguous(&sizes, dtype, device)
}
