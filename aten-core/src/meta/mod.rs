//! Meta functions of the structured families (PyTorch's `TORCH_META_FUNC`):
//! each checks its arguments and describes its output through a
//! [`SetOutput`](crate::structured::SetOutput), backend-neutrally. The
//! generated wrappers of every backend call them (see
//! [`crate::structured`]); the Meta backend's kernels are these functions
//! alone.
//!
//! A function is named after the family's functional operator
//! (`add.Tensor`: [`add_tensor`]) and takes its arguments.
//!
//! - [`pointwise`]: the families built on `TensorIterator`
//!   (`structured_inherits: TensorIteratorBase`): binary arithmetic,
//!   bitwise operations, comparisons and unary functions;
//! - [`linear_algebra`]: matrix products, whose output is described through
//!   `set_output` ([`MetaOutput`](crate::structured::MetaOutput));
//! - [`reduction`]: reductions and the operations along one dimension
//!   (`cumsum`, softmax);
//! - [`triangular`]: `tril`, `triu`.

pub mod linear_algebra;
pub mod pointwise;
pub mod reduction;
pub mod triangular;

pub use linear_algebra::{addmm, bmm, mm};
pub use pointwise::*;
pub use reduction::{
    _log_softmax, _softmax, all_dim, amax, amin, any_dim, argmax, cumsum, max_dim, mean_dim,
    sum_dim_intlist,
};
pub use triangular::{tril, triu};

use c10_core::{Device, Error, Result, ScalarType};

use crate::Tensor;

/// The dtype and device of a defined tensor argument.
fn dtype_and_device(t: &Tensor) -> Result<(ScalarType, Device)> {
    t.dtype()
        .zip(t.device())
        .ok_or_else(|| Error::runtime("undefined tensor"))
}
