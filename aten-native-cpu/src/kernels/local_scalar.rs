//! `_local_scalar_dense` (what `item()` runs): the one element of a
//! tensor as a `Scalar` of its dtype's kind.

use aten_core::Tensor;
use c10_core::{dispatch_dtype, Error, Numeric, Result, Scalar, ScalarType};

use super::util::{dtype_of, not_implemented};

/// `_local_scalar_dense(self)`: a bool, an integer or a float by `self`'s
/// dtype; `self` must hold exactly one element (`item()`'s check: PyTorch's
/// kernel would read past an empty tensor).
pub fn _local_scalar_dense_cpu(self_: &Tensor) -> Result<Scalar> {
    let numel = self_.numel();
    if numel != 1 {
        return Err(Error::runtime(format!(
            "a Tensor with {numel} elements cannot be converted to Scalar"
        )));
    }
    let dtype = dtype_of(self_)?;
    dispatch_dtype!(dtype, T => {
        // `to_vec` reads the element of one snapshot of the layout; a
        // resize since the check above shows as a different length.
        let values = self_.base().to_vec::<T>()?;
        let [value] = values.as_slice() else {
            return Err(Error::runtime("_local_scalar_dense: the tensor was resized meanwhile"));
        };
        Ok(match dtype {
            ScalarType::Bool => Scalar::Bool(value.to_i64() != 0),
            _ if T::IS_FLOAT => Scalar::Double(value.to_f64()),
            _ => Scalar::Int(value.to_i64()),
        })
    }, _ => Err(not_implemented("_local_scalar_dense_cpu", dtype)))
}
