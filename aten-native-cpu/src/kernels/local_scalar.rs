//! `_local_scalar_dense` (what `item()` runs): the one element of a
//! tensor as a `Scalar` of its dtype's kind (bool, integer, float or
//! complex).

use aten_core::Tensor;
use c10_core::{dispatch_dtype, Complex, Complex64, Error, Numeric, Result, Scalar, ScalarType};

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
    let one = |values: Vec<Complex64>| match values.as_slice() {
        [value] => Ok(Scalar::ComplexDouble(*value)),
        _ => Err(resized()),
    };
    match dtype {
        ScalarType::ComplexFloat => {
            let values = self_.base().to_vec::<Complex<f32>>()?;
            return one(values
                .into_iter()
                .map(|c| Complex64::new(f64::from(c.re), f64::from(c.im)))
                .collect());
        }
        ScalarType::ComplexDouble => return one(self_.base().to_vec::<Complex64>()?),
        _ => {}
    }
    dispatch_dtype!(dtype, T => {
        // `to_vec` reads the element of one snapshot of the layout; a
        // resize since the check above shows as a different length.
        let values = self_.base().to_vec::<T>()?;
        let [value] = values.as_slice() else {
            return Err(resized());
        };
        Ok(match dtype {
            ScalarType::Bool => Scalar::Bool(value.to_i64() != 0),
            _ if T::IS_FLOAT => Scalar::Double(value.to_f64()),
            _ => Scalar::Int(value.to_i64()),
        })
    }, _ => Err(not_implemented("_local_scalar_dense_cpu", dtype)))
}

/// The error for a tensor resized between the element-count check and the
/// read.
fn resized() -> Error {
    Error::runtime("_local_scalar_dense: the tensor was resized meanwhile")
}
