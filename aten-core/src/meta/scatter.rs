//! Meta functions of the scatter families (`scatter.src`, `scatter.value`,
//! `scatter_add`, `scatter_reduce.two`; PyTorch's `scatter_meta_impl`): the
//! index and source dtypes, the shape rule (the index no larger than
//! `self` apart from `dim`, nor than `src`), the overlap checks of a given
//! output, and a contiguous output of `self`'s shape and dtype. The index
//! values are the impl's to check.

use c10_core::{Error, Result, ScalarType};

use super::dtype_and_device;
use crate::memory_overlap::{assert_no_internal_overlap, assert_no_overlap};
use crate::native::{dims::fmt_list, dims::wrap_dim};
use crate::structured::{MetaOutput, SetOutput};
use crate::Tensor;

/// The reductions of `scatter_reduce.two` (PyTorch's `ReductionType` as
/// `get_operator_enum(reduce, use_new_options=true)` names them).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ScatterReduce {
    /// `"sum"`.
    Sum,
    /// `"prod"`.
    Prod,
    /// `"mean"`.
    Mean,
    /// `"amax"`.
    Amax,
    /// `"amin"`.
    Amin,
}

impl ScatterReduce {
    /// The reduction named `reduce` (`get_reduction_enum`: `max` and
    /// `min` are accepted for `amax` and `amin`), or PyTorch's error.
    pub fn parse(reduce: &str) -> Result<ScatterReduce> {
        Ok(match reduce {
            "sum" => ScatterReduce::Sum,
            "prod" => ScatterReduce::Prod,
            "mean" => ScatterReduce::Mean,
            "amax" | "max" => ScatterReduce::Amax,
            "amin" | "min" => ScatterReduce::Amin,
            _ => {
                return Err(Error::runtime(format!(
                    "reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
                )))
            }
        })
    }
}

/// `ensure_nonempty_size`: a 0-dim tensor has one dimension of size 1.
fn nonempty_size(sizes: &[i64], d: usize) -> Result<i64> {
    if sizes.is_empty() {
        return Ok(1);
    }
    sizes.get(d).copied().ok_or_else(|| {
        let n = sizes.len() as i64;
        Error::index_error(format!(
            "Dimension out of range (expected to be in range of [{}, {}], but got {d})",
            -n,
            n - 1
        ))
    })
}

/// `scatter_gather_dtype_check("scatter", ...)` and
/// `scatter_shape_check`; returns the wrapped `dim`.
pub fn scatter_checks(
    self_: &Tensor,
    dim: i64,
    index: &Tensor,
    src: Option<&Tensor>,
) -> Result<usize> {
    let d = wrap_dim(dim, self_.dim())?;
    if index.numel() != 0 && !matches!(index.dtype(), Some(ScalarType::Long | ScalarType::Int)) {
        return Err(Error::runtime(
            "scatter(): Expected dtype int32/int64 for index",
        ));
    }
    if let Some(src) = src {
        if self_.dtype() != src.dtype() {
            return Err(Error::runtime(
                "scatter(): Expected self.dtype to be equal to src.dtype",
            ));
        }
    }
    if index.numel() == 0 {
        return Ok(d);
    }
    let (self_sizes, index_sizes) = (self_.sizes(), index.sizes());
    if self_sizes.len().max(1) != index_sizes.len().max(1) {
        return Err(Error::runtime(
            "Index tensor must have the same number of dimensions as self tensor",
        ));
    }
    let dims = self_sizes.len().max(1);
    let mut wrong = false;
    for k in 0..dims {
        if k != d && nonempty_size(&index_sizes, k)? > nonempty_size(&self_sizes, k)? {
            wrong = true;
            break;
        }
    }
    if let Some(src) = src {
        let src_sizes = src.sizes();
        if !wrong {
            for k in 0..dims {
                if nonempty_size(&index_sizes, k)? > nonempty_size(&src_sizes, k)? {
                    wrong = true;
                    break;
                }
            }
        }
        if wrong {
            return Err(Error::runtime(format!(
                "Expected index {} to be smaller than self {} apart from dimension {d} and to be smaller size than src {}",
                fmt_list(&index_sizes),
                fmt_list(&self_sizes),
                fmt_list(&src_sizes)
            )));
        }
    } else if wrong {
        return Err(Error::runtime(format!(
            "Expected index {} to be smaller than self {} apart from dimension {d}",
            fmt_list(&index_sizes),
            fmt_list(&self_sizes)
        )));
    }
    Ok(d)
}

/// `scatter_meta_impl`: the checks, then the output.
fn scatter_meta(
    out: SetOutput<'_>,
    self_: &Tensor,
    dim: i64,
    index: &Tensor,
    src: Option<&Tensor>,
) -> Result<MetaOutput> {
    let (dtype, device) = dtype_and_device(self_)?;
    scatter_checks(self_, dim, index, src)?;
    if let Some(output) = out.maybe_get_output() {
        assert_no_internal_overlap(output)?;
        assert_no_overlap(output, index)?;
        if let Some(src) = src {
            assert_no_overlap(output, src)?;
        }
    }
    out.set_output(&self_.sizes(), dtype, device)
}

/// `scatter.src(self, dim, index, src)`.
pub fn scatter_src(
    out: SetOutput<'_>,
    self_: &Tensor,
    dim: i64,
    index: &Tensor,
    src: &Tensor,
) -> Result<MetaOutput> {
    scatter_meta(out, self_, dim, index, Some(src))
}

/// `scatter.value(self, dim, index, value)`.
pub fn scatter_value(
    out: SetOutput<'_>,
    self_: &Tensor,
    dim: i64,
    index: &Tensor,
    _value: c10_core::Scalar,
) -> Result<MetaOutput> {
    scatter_meta(out, self_, dim, index, None)
}

/// `scatter_add(self, dim, index, src)`.
pub fn scatter_add(
    out: SetOutput<'_>,
    self_: &Tensor,
    dim: i64,
    index: &Tensor,
    src: &Tensor,
) -> Result<MetaOutput> {
    scatter_meta(out, self_, dim, index, Some(src))
}

/// `scatter_reduce.two(self, dim, index, src, reduce, *, include_self)`.
pub fn scatter_reduce_two(
    out: SetOutput<'_>,
    self_: &Tensor,
    dim: i64,
    index: &Tensor,
    src: &Tensor,
    reduce: &str,
    _include_self: bool,
) -> Result<MetaOutput> {
    let output = scatter_meta(out, self_, dim, index, Some(src))?;
    ScatterReduce::parse(reduce)?;
    Ok(output)
}
