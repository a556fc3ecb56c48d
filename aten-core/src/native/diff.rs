//! `diff` (CompositeImplicitAutograd, PyTorch's `ReduceOps.cpp`): the
//! `n`-th forward difference along a dimension (`logical_xor` for bools),
//! with the optional `prepend` and `append` joined first.

use c10_core::{Error, Result, ScalarType};

use super::dims::wrap_dim;
use crate::generated::ops;
use crate::Tensor;

/// `diff_check_compatible_shape`.
fn check_compatible(self_: &Tensor, other: Option<&Tensor>, dim: usize) -> Result<()> {
    let Some(other) = other else { return Ok(()) };
    if other.dim() != self_.dim() {
        return Err(Error::runtime(
            "diff expects prepend or append to be the same dimension as input",
        ));
    }
    let (a, b) = (self_.sizes(), other.sizes());
    for i in (0..b.len()).filter(|&i| i != dim) {
        if a[i] != b[i] {
            return Err(Error::runtime(format!(
                "diff expects the shape of tensor to prepend or append to match that of input except along the differencing dimension; input.size({i}) = {}, but got tensor.size({i}) = {}",
                a[i], b[i]
            )));
        }
    }
    Ok(())
}

/// `diff(self, n, dim, prepend, append)`.
pub fn diff(
    self_: &Tensor,
    n: i64,
    dim: i64,
    prepend: Option<&Tensor>,
    append: Option<&Tensor>,
) -> Result<Tensor> {
    if self_.dim() < 1 {
        return Err(Error::runtime(
            "diff expects input to be at least one-dimensional",
        ));
    }
    if n < 0 {
        return Err(Error::runtime(format!(
            "order must be non-negative but got {n}"
        )));
    }
    let d = wrap_dim(dim, self_.dim())?;
    check_compatible(self_, prepend, d)?;
    check_compatible(self_, append, d)?;
    if n == 0 {
        let result = ops::zeros_like(self_)?;
        ops::copy_(&result, self_)?;
        return Ok(result);
    }
    let mut result = match (prepend, append) {
        (None, None) => self_.clone(),
        _ => {
            let parts: Vec<Tensor> = prepend
                .into_iter()
                .cloned()
                .chain(std::iter::once(self_.clone()))
                .chain(append.cloned())
                .collect();
            ops::cat_with(&parts, ops::CatOptions { dim })?
        }
    };
    let mut out_len = result.sizes()[d] - 1;
    let n = n.min(result.sizes()[d]);
    let is_bool = self_.dtype() == Some(ScalarType::Bool);
    for _ in 0..n {
        let upper = ops::narrow(&result, d as i64, 1, out_len)?;
        let lower = ops::narrow(&result, d as i64, 0, out_len)?;
        result = if is_bool {
            ops::logical_xor(&upper, &lower)?
        } else {
            ops::sub_tensor(&upper, &lower)?
        };
        out_len -= 1;
    }
    Ok(result)
}
