//! `masked_scatter` (CompositeExplicitAutograd: `self` and `mask`
//! broadcast together, a contiguous clone of `self`, then
//! `masked_scatter_`), the checks `masked_scatter_` makes on every backend,
//! and its Meta kernel.
//!
//! `self.masked_scatter_(mask, source)` writes the elements of `source`, in
//! its logical order, to the positions of `self` where the mask (expanded
//! to `self`'s shape) is true, in `self`'s logical order.

use c10_core::{Error, MemoryFormat, Result, ScalarType};

use crate::generated::ops;
use crate::memory_overlap::assert_no_internal_overlap;
use crate::tensor_iterator::infer_size;
use crate::Tensor;

/// `masked_scatter(self, mask, source)`.
pub fn masked_scatter(self_: &Tensor, mask: &Tensor, source: &Tensor) -> Result<Tensor> {
    let shape = infer_size(&mask.sizes(), &self_.sizes())?;
    let expanded_mask = ops::expand(mask, &shape)?;
    let result = ops::clone_with(
        &ops::expand(self_, &shape)?,
        ops::CloneOptions {
            memory_format: Some(MemoryFormat::Contiguous),
        },
    )?;
    ops::masked_scatter_(&result, &expanded_mask, source)
}

/// The checks of `masked_scatter_` before it writes: `self` has no
/// overlapping elements, `source` has its dtype, and the mask, expanded
/// to `self`'s shape (returned), is boolean.
pub fn masked_scatter_checks(self_: &Tensor, mask: &Tensor, source: &Tensor) -> Result<Tensor> {
    assert_no_internal_overlap(self_)?;
    let (dtype, source_dtype) = (self_.dtype(), source.dtype());
    if dtype != source_dtype {
        let name = |d: Option<ScalarType>| d.map_or("undefined".into(), |d| d.to_string());
        return Err(Error::runtime(format!(
            "masked_scatter: expected self and source to have same dtypes but got{} and {}",
            name(dtype),
            name(source_dtype)
        )));
    }
    let expanded = ops::expand(mask, &self_.sizes())?;
    match mask.dtype() {
        Some(ScalarType::Bool) => Ok(expanded),
        other => Err(Error::runtime(format!(
            "masked_scatter_ only supports boolean masks, but got mask with dtype {}",
            other.map_or("undefined".into(), |d| d.to_string())
        ))),
    }
}
