//! `tril` and `triu`: copies with the elements above (or below) a diagonal
//! of each matrix set to zero.

use aten_core::Tensor;
use c10_core::tensor_impl::for_each_offset;
use c10_core::{Error, Result, StorageBorrow, TensorBase};

use super::gather_offsets::gather_offsets;
use super::util::{device_of, dtype_of, is_meta, layout_of};

/// Shared by `tril` and `triu`: a contiguous copy with the elements of
/// each matrix for which `zero(row, col)` holds set to zero.
fn triangle(self_: &Tensor, name: &str, zero: impl Fn(i64, i64) -> bool) -> Result<Tensor> {
    let sl = layout_of(self_)?;
    if sl.sizes().len() < 2 {
        return Err(Error::runtime(format!(
            "{name}: input tensor must have at least 2 dimensions"
        )));
    }
    let out = TensorBase::empty(sl.sizes(), dtype_of(self_)?, device_of(self_))?;
    if is_meta(self_) || out.numel() == 0 {
        return Ok(Tensor::from(out));
    }
    let n = sl.sizes().len();
    let (rows, cols) = (sl.sizes()[n - 2], sl.sizes()[n - 1]);
    let mut offsets = Vec::with_capacity(out.numel() as usize);
    for_each_offset(sl.sizes(), sl.strides(), sl.storage_offset(), |o| {
        offsets.push(o)
    });
    gather_offsets(&sl, &out, &offsets)?;
    let ol = layout_of(&out)?;
    let width = ol.itemsize();
    let base = ol
        .data_ptr()
        .ok_or_else(|| Error::runtime("tensor has no data"))?;
    StorageBorrow::hold([(ol.storage(), true)], || {
        for e in 0..ol.numel() {
            let (r, c) = ((e / cols) % rows, e % cols);
            if zero(r, c) {
                // SAFETY: `e` indexes the fresh contiguous output (exclusive
                // borrow held); all-zero bytes are zero in every dtype.
                unsafe { std::ptr::write_bytes(base.add(e as usize * width), 0, width) };
            }
        }
    })?;
    drop(ol);
    Ok(Tensor::from(out))
}

/// `tril(diagonal)`: the lower triangle of each matrix.
pub fn tril(self_: &Tensor, diagonal: i64) -> Result<Tensor> {
    triangle(self_, "tril", |r, c| c - r > diagonal)
}

/// `triu(diagonal)`: the upper triangle of each matrix.
pub fn triu(self_: &Tensor, diagonal: i64) -> Result<Tensor> {
    triangle(self_, "triu", |r, c| c - r < diagonal)
}
