//! `cat`'s impl: each input copied (converting its dtype) into its slot
//! of the meta function's output along the joined dimension.

use aten_core::meta::cat::cat_should_skip_tensor;
use aten_core::native::dims::wrap_dim;
use aten_core::structured::MetaOutput;
use aten_core::tensor_iterator::convert::copy_into;
use aten_core::Tensor;
use c10_core::Result;

use super::util::with_fresh_output;

/// `cat.out`.
pub fn cat_out_cpu(meta: &mut MetaOutput, tensors: &[Tensor], dim: i64) -> Result<()> {
    let Some(reference) = tensors.iter().find(|t| !cat_should_skip_tensor(t)) else {
        return Ok(());
    };
    let d = wrap_dim(dim, reference.dim())?;
    with_fresh_output(meta, |out| {
        let sizes = out.sizes();
        let strides = out.strides();
        let mut at = 0i64;
        for t in tensors.iter().filter(|t| !cat_should_skip_tensor(t)) {
            let len = t.size(d as i64)?;
            if len > 0 {
                let mut slot_sizes = sizes.to_vec();
                slot_sizes[d] = len;
                let offset = out.storage_offset() + at * strides[d];
                let slot = out.as_strided(&slot_sizes, &strides, Some(offset))?;
                copy_into(t, &slot)?;
            }
            at += len;
        }
        Ok(())
    })
}
