//! Meta kernels of `_cdist_forward` and `_pdist_forward`.

use c10_core::{Error, MemoryFormat, Result};

use super::{dtype_and_device, new_strided};
use crate::native::factories::strides_for;
use crate::Tensor;

/// `_cdist_forward(x1, x2, p, compute_mode)`: `[*batch, r1, r2]`, the
/// batch dimensions broadcast.
pub fn cdist_forward_meta(
    x1: &Tensor,
    x2: &Tensor,
    p: f64,
    compute_mode: Option<i64>,
) -> Result<Tensor> {
    if x1.dim() < 2 {
        return Err(Error::runtime(format!(
            "cdist only supports at least 2D tensors, X1 got: {}D",
            x1.dim()
        )));
    }
    if x2.dim() < 2 {
        return Err(Error::runtime(format!(
            "cdist only supports at least 2D tensors, X2 got: {}D",
            x2.dim()
        )));
    }
    let (s1, s2) = (x1.sizes(), x2.sizes());
    let (c1, c2) = (s1[s1.len() - 1], s2[s2.len() - 1]);
    if c1 != c2 {
        return Err(Error::runtime(format!(
            "X1 and X2 must have the same number of columns. X1: {c1} X2: {c2}"
        )));
    }
    let (d1, device) = dtype_and_device(x1)?;
    let (d2, device2) = dtype_and_device(x2)?;
    if !d1.is_floating_point() {
        return Err(Error::runtime(format!(
            "cdist only supports floating-point dtypes, X1 got: {d1}"
        )));
    }
    if !d2.is_floating_point() {
        return Err(Error::runtime(format!(
            "cdist only supports floating-point dtypes, X2 got: {d2}"
        )));
    }
    if p.is_nan() || p < 0.0 {
        return Err(Error::runtime("cdist only supports non-negative p values"));
    }
    if device != device2 {
        return Err(Error::runtime(format!(
            "X1 and X2 must have the same device type. X1: {device} X2: {device2}"
        )));
    }
    let mode = compute_mode.unwrap_or(0);
    if !(0..=2).contains(&mode) {
        return Err(Error::runtime(format!(
            "possible modes: 0, 1, 2, but was: {mode}"
        )));
    }
    let batch =
        crate::tensor_iterator::broadcast::infer_size(&s1[..s1.len() - 2], &s2[..s2.len() - 2])?;
    let mut shape = batch;
    shape.extend([s1[s1.len() - 2], s2[s2.len() - 2]]);
    new_strided(
        &shape,
        &strides_for(&shape, MemoryFormat::Contiguous)?,
        d1,
        device,
    )
}

/// `_pdist_forward(self, p)`: the `n * (n - 1) / 2` distances between the
/// rows of a contiguous `[n, m]` input.
pub fn pdist_forward_meta(self_: &Tensor, _p: f64) -> Result<Tensor> {
    if !self_.is_contiguous() {
        return Err(Error::runtime("_pdist_forward requires contiguous input"));
    }
    let (dtype, device) = dtype_and_device(self_)?;
    let sizes = self_.sizes();
    let n = self_.size(0)?;
    let pairs = if n <= 1 {
        0
    } else {
        self_.size(1)?;
        if sizes.len() != 2 {
            return Err(Error::runtime(format!(
                "pdist only supports 2D tensors, got: {}D",
                sizes.len()
            )));
        }
        n.checked_mul(n - 1)
            .map(|v| v / 2)
            .ok_or_else(|| Error::runtime("_pdist_forward: the output size overflows"))?
    };
    new_strided(&[pairs], &[1], dtype, device)
}
