//! Meta kernels of the masked and indexed writes (`masked_fill_.Tensor`,
//! `masked_scatter_`, `_index_put_impl_`): every check that needs no data.

use c10_core::{Result, Scalar};

use crate::native::index_put::index_put_checks_without_data;
use crate::native::masked_scatter::masked_scatter_checks;
use crate::native::scalar_ops::check_fill_value;
use crate::{ops, Tensor};

/// `masked_scatter_(self, mask, source)` on Meta: the checks alone.
pub fn masked_scatter_meta_(self_: &Tensor, mask: &Tensor, source: &Tensor) -> Result<Tensor> {
    masked_scatter_checks(self_, mask, source)?;
    Ok(self_.clone())
}

/// `masked_fill_.Tensor` of Meta tensors: `value`'s number cannot be read,
/// so `masked_fill_.Scalar`'s checks and result with a stand-in for it.
pub fn masked_fill_tensor_meta_(self_: &Tensor, mask: &Tensor, value: &Tensor) -> Result<Tensor> {
    check_fill_value(value)?;
    ops::masked_fill_scalar_(self_, mask, Scalar::Int(0))
}

/// `_index_put_impl_` on Meta: every check that needs no data. Masks
/// select a number of elements only their data knows, so with a mask
/// the index broadcast and the value shape are not checked.
pub fn _index_put_impl_meta_(
    self_: &Tensor,
    indices: Vec<Option<Tensor>>,
    values: &Tensor,
    accumulate: bool,
    _unsafe: bool,
) -> Result<Tensor> {
    index_put_checks_without_data(self_, &indices, values, accumulate)?;
    Ok(self_.clone())
}
