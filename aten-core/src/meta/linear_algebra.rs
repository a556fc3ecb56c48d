//! Meta functions of the matrix-product families (`mm`, `bmm`, `addmm`):
//! PyTorch's shape and dtype checks, and the output through
//! [`SetOutput::set_output_raw_strided`] (contiguous).

use c10_core::{Error, Result, Scalar, ScalarType};

use super::dtype_and_device;
use crate::structured::{MetaOutput, SetOutput};
use crate::Tensor;

/// `a` and `b` of one dtype (PyTorch's message).
fn same_dtype(a: &Tensor, b: &Tensor, what: &str) -> Result<ScalarType> {
    let (da, db) = (dtype_and_device(a)?.0, dtype_and_device(b)?.0);
    if da != db {
        return Err(Error::runtime(format!(
            "expected {what} to have the same dtype, but got: {} != {}",
            da.type_meta_name(),
            db.type_meta_name()
        )));
    }
    Ok(da)
}

fn check_matrix(t: &Tensor, name: &str) -> Result<()> {
    if t.dim() != 2 {
        return Err(Error::runtime(format!("{name} must be a matrix")));
    }
    Ok(())
}

/// The `(m, n)` of `mat1 @ mat2` and its dtype; `prefix` starts the
/// shape error (`mm: `).
fn matrix_product(
    mat1: &Tensor,
    mat2: &Tensor,
    names: (&str, &str),
    prefix: &str,
) -> Result<([i64; 2], ScalarType)> {
    check_matrix(mat1, names.0)?;
    check_matrix(mat2, names.1)?;
    let (m, k, k2, n) = (mat1.size(0)?, mat1.size(1)?, mat2.size(0)?, mat2.size(1)?);
    if k != k2 {
        return Err(Error::runtime(format!(
            "{prefix}mat1 and mat2 shapes cannot be multiplied ({m}x{k} and {k2}x{n})"
        )));
    }
    Ok(([m, n], same_dtype(mat1, mat2, "mat1 and mat2")?))
}

/// `mm(self, mat2)`.
pub fn mm(out: SetOutput<'_>, self_: &Tensor, mat2: &Tensor) -> Result<MetaOutput> {
    let (shape, dtype) = matrix_product(self_, mat2, ("self", "mat2"), "mm: ")?;
    out.set_output(&shape, dtype, dtype_and_device(self_)?.1)
}

/// `addmm(self, mat1, mat2, beta, alpha)`: `self` broadcasts to the
/// product's shape and has its dtype.
pub fn addmm(
    out: SetOutput<'_>,
    self_: &Tensor,
    mat1: &Tensor,
    mat2: &Tensor,
    _beta: Scalar,
    _alpha: Scalar,
) -> Result<MetaOutput> {
    let (shape, dtype) = matrix_product(mat1, mat2, ("mat1", "mat2"), "")?;
    let d = dtype_and_device(self_)?.0;
    if d != dtype {
        return Err(Error::runtime(format!(
            "self and mat2 must have the same dtype, but got {d} and {dtype}"
        )));
    }
    let sizes = self_.sizes();
    let expands = crate::tensor_iterator::infer_size(&sizes, &shape).is_ok_and(|s| s == shape);
    if !expands {
        return Err(Error::runtime(format!(
            "The size of tensor a ({}) must match the size of tensor b ({}) at non-singleton dimension 1",
            sizes.last().copied().unwrap_or(1),
            shape[1]
        )));
    }
    out.set_output(&shape, dtype, dtype_and_device(mat1)?.1)
}

/// `bmm(self, mat2)`: batches of matrices.
pub fn bmm(out: SetOutput<'_>, self_: &Tensor, mat2: &Tensor) -> Result<MetaOutput> {
    if self_.dim() != 3 {
        return Err(Error::runtime("batch1 must be a 3D tensor"));
    }
    if mat2.dim() != 3 {
        return Err(Error::runtime("batch2 must be a 3D tensor"));
    }
    let (bs, m, k) = (self_.size(0)?, self_.size(1)?, self_.size(2)?);
    let n = mat2.size(2)?;
    if mat2.size(0)? != bs || mat2.size(1)? != k {
        return Err(Error::runtime(format!(
            "Expected size for first two dimensions of batch2 tensor to be: [{bs}, {k}] but got: [{}, {}].",
            mat2.size(0)?,
            mat2.size(1)?
        )));
    }
    let dtype = same_dtype(self_, mat2, "batch1 and batch2")?;
    out.set_output(&[bs, m, n], dtype, dtype_and_device(self_)?.1)
}
