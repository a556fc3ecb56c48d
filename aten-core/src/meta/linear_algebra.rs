//! Meta functions of the matrix-product families (`mm`, `bmm`, `addmm`,
//! `baddbmm`):
//! PyTorch's shape and dtype checks, and the output through
//! [`SetOutput::set_output_raw_strided`] (contiguous).

use c10_core::{Error, Result, Scalar, ScalarType};

use super::{dtype_and_device, new_contiguous};
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

/// The shape of the batched product `batch1 @ batch2`
/// (`common_checks_baddbmm_bmm`).
fn batched_product(batch1: &Tensor, batch2: &Tensor) -> Result<[i64; 3]> {
    if batch1.dim() != 3 {
        return Err(Error::runtime("batch1 must be a 3D tensor"));
    }
    if batch2.dim() != 3 {
        return Err(Error::runtime("batch2 must be a 3D tensor"));
    }
    let (bs, m, k) = (batch1.size(0)?, batch1.size(1)?, batch1.size(2)?);
    let n = batch2.size(2)?;
    if batch2.size(0)? != bs || batch2.size(1)? != k {
        return Err(Error::runtime(format!(
            "Expected size for first two dimensions of batch2 tensor to be: [{bs}, {k}] but got: [{}, {}].",
            batch2.size(0)?,
            batch2.size(1)?
        )));
    }
    Ok([bs, m, n])
}

/// `bmm(self, mat2)`: batches of matrices.
pub fn bmm(out: SetOutput<'_>, self_: &Tensor, mat2: &Tensor) -> Result<MetaOutput> {
    let shape = batched_product(self_, mat2)?;
    let dtype = same_dtype(self_, mat2, "batch1 and batch2")?;
    out.set_output(&shape, dtype, dtype_and_device(self_)?.1)
}

/// `baddbmm(self, batch1, batch2, beta, alpha)`: `self` expands to the
/// batched product's shape and has the batches' dtype.
pub fn baddbmm(
    out: SetOutput<'_>,
    self_: &Tensor,
    batch1: &Tensor,
    batch2: &Tensor,
    _beta: Scalar,
    _alpha: Scalar,
) -> Result<MetaOutput> {
    let (d, d1, d2) = (
        dtype_and_device(self_)?.0,
        dtype_and_device(batch1)?.0,
        dtype_and_device(batch2)?.0,
    );
    let shape = [batch1.size(0)?, batch1.size(1)?, batch2.size(2)?];
    crate::ops::expand(self_, &shape)?;
    if d != d1 {
        return Err(Error::runtime(format!(
            "Input dtypes must be the same, got: input {}, batch1: {}, batch2: {}",
            d.type_meta_name(),
            d1.type_meta_name(),
            d2.type_meta_name()
        )));
    }
    let shape = batched_product(batch1, batch2)?;
    if d2 != d1 {
        return Err(Error::runtime(format!(
            "expected scalar type {d1} but found {d2}"
        )));
    }
    out.set_output(&shape, d1, dtype_and_device(batch1)?.1)
}

/// `dot(self, tensor)`: two vectors of one dtype and length.
pub fn dot_meta(self_: &Tensor, tensor: &Tensor) -> Result<Tensor> {
    if self_.dim() != 1 || tensor.dim() != 1 {
        return Err(Error::runtime(format!(
            "1D tensors expected, but got {}D and {}D tensors",
            self_.dim(),
            tensor.dim()
        )));
    }
    let (da, device) = dtype_and_device(self_)?;
    let db = dtype_and_device(tensor)?.0;
    if da != db {
        return Err(Error::runtime(format!(
            "dot : expected both vectors to have same dtype, but found {da} and {db}"
        )));
    }
    let (n, n2) = (self_.numel(), tensor.numel());
    if n != n2 {
        return Err(Error::runtime(format!(
            "inconsistent tensor size, expected tensor [{n}] and src [{n2}] to have the same number of elements, but got {n} and {n2} elements respectively"
        )));
    }
    new_contiguous(&[], da, device)
}
