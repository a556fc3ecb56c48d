//! `tril` and `triu` (structured: the meta functions are in
//! `aten_core::meta`): copies with the elements above (or below) a
//! diagonal of each matrix set to zero.

use aten_core::structured::MetaOutput;
use aten_core::Tensor;
use c10_core::tensor_impl::for_each_offset;
use c10_core::{Error, Result, StorageBorrow, TensorBase};

use super::gather_offsets::gather_offsets;
use super::util::{layout_of, with_fresh_output};

/// Shared by `tril` and `triu`: writes into the fresh contiguous `out` a
/// copy of `self_` with the elements of each matrix for which
/// `zero(row, col)` holds set to zero.
fn triangle(out: &TensorBase, self_: &Tensor, zero: impl Fn(i64, i64) -> bool) -> Result<()> {
    let sl = layout_of(self_)?;
    let n = sl.sizes().len();
    if n < 2 || out.sizes() != sl.sizes() {
        return Err(Error::runtime(
            "triangle: the input changed shape while the operation ran",
        ));
    }
    if out.numel() == 0 {
        return Ok(());
    }
    let (rows, cols) = (sl.sizes()[n - 2], sl.sizes()[n - 1]);
    let mut offsets = Vec::with_capacity(out.numel() as usize);
    for_each_offset(sl.sizes(), sl.strides(), sl.storage_offset(), |o| {
        offsets.push(o)
    });
    gather_offsets(&sl, out, &offsets)?;
    let ol = layout_of(out)?;
    let width = ol.itemsize();
    StorageBorrow::hold([(ol.storage(), true)], || {
        let base = ol
            .data_ptr()
            .ok_or_else(|| Error::runtime("tensor has no data"))?;
        for e in 0..ol.numel() {
            let (r, c) = ((e / cols) % rows, e % cols);
            if zero(r, c) {
                // SAFETY: `e` indexes the fresh contiguous output (exclusive
                // borrow held); all-zero bytes are zero in every dtype.
                unsafe { std::ptr::write_bytes(base.add(e as usize * width), 0, width) };
            }
        }
        Ok(())
    })?
}

/// `tril.out`: the lower triangle of each matrix.
pub fn tril_out(meta: &mut MetaOutput, self_: &Tensor, diagonal: i64) -> Result<()> {
    with_fresh_output(meta, |out| triangle(out, self_, |r, c| c - r > diagonal))
}

/// `triu.out`: the upper triangle of each matrix.
pub fn triu_out(meta: &mut MetaOutput, self_: &Tensor, diagonal: i64) -> Result<()> {
    with_fresh_output(meta, |out| triangle(out, self_, |r, c| c - r < diagonal))
}
