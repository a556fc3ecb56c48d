//! Composite reductions: `var`, `var.dim`, `std`, `std.dim` and
//! `std.correction` (over `var.correction`) and the
//! `CompositeExplicitAutograd` kernels of `any.dims` and `any.dims_out`
//! (over `any` and `any.dim`), and of `norm.Scalar` and
//! `norm.ScalarOpt_dtype` (over `norm.ScalarOpt_dim`), as PyTorch writes
//! them.

use c10_core::{Error, Result, Scalar, ScalarType};

use crate::generated::ops;
use crate::structured::copy_to_out;
use crate::Tensor;

/// `var.dim(self, dim, unbiased, keepdim)`: `var.correction` with a
/// correction of 1 (`unbiased`) or 0.
pub fn var_dim(
    self_: &Tensor,
    dim: Option<&[i64]>,
    unbiased: bool,
    keepdim: bool,
) -> Result<Tensor> {
    ops::var_correction_with(
        self_,
        ops::VarCorrectionOptions {
            dim,
            correction: Some(Scalar::Int(i64::from(unbiased))),
            keepdim,
        },
    )
}

/// `var(self, unbiased)`: `var.correction` over every dimension.
pub fn var(self_: &Tensor, unbiased: bool) -> Result<Tensor> {
    var_dim(self_, None, unbiased, false)
}

/// `std.correction(self, dim, *, correction, keepdim)`: the square root
/// of `var.correction`.
pub fn std_correction(
    self_: &Tensor,
    dim: Option<&[i64]>,
    correction: Option<Scalar>,
    keepdim: bool,
) -> Result<Tensor> {
    let var = ops::var_correction_with(
        self_,
        ops::VarCorrectionOptions {
            dim,
            correction,
            keepdim,
        },
    )?;
    ops::sqrt(&var)
}

/// `std.dim(self, dim, unbiased, keepdim)`: `std.correction` with a
/// correction of 1 (`unbiased`) or 0.
pub fn std_dim(
    self_: &Tensor,
    dim: Option<&[i64]>,
    unbiased: bool,
    keepdim: bool,
) -> Result<Tensor> {
    ops::std_correction_with(
        self_,
        ops::StdCorrectionOptions {
            dim,
            correction: Some(Scalar::Int(i64::from(unbiased))),
            keepdim,
        },
    )
}

/// `std(self, unbiased)`: `std.correction` over every dimension.
pub fn std(self_: &Tensor, unbiased: bool) -> Result<Tensor> {
    std_dim(self_, None, unbiased, false)
}

/// `any.dims` in terms of `any` and `any.dim` (`allany_dims_default`):
/// every dimension for `None`; none for an empty list (a bool copy, or a
/// 0/1 uint8 mask of a uint8 input); else one dimension after the other,
/// kept, then squeezed unless `keepdim`.
pub fn any_dims_default(self_: &Tensor, dim: Option<&[i64]>, keepdim: bool) -> Result<Tensor> {
    let Some(dims) = dim else {
        let out = ops::any(self_)?;
        if keepdim {
            return ops::expand(&out, &vec![1; self_.dim()]);
        }
        return Ok(out);
    };
    if dims.is_empty() {
        if self_.dtype() == Some(ScalarType::Byte) {
            let out = ops::empty_like(self_)?;
            return ops::ne_scalar_out(self_, Scalar::Int(0), &out);
        }
        return ops::_to_copy_with(
            self_,
            ops::ToCopyOptions {
                dtype: Some(ScalarType::Bool),
                ..Default::default()
            },
        );
    }
    let mut out = self_.clone();
    for &d in dims {
        out = ops::any_dim_with(&out, d, ops::AnyDimOptions { keepdim: true })?;
    }
    if keepdim {
        Ok(out)
    } else {
        ops::squeeze_dims(&out, dims)
    }
}

/// `any.dims_out`'s `CompositeExplicitAutograd` kernel
/// (`any_dims_out_default`): [`any_dims_default`] copied into `out`.
pub fn any_dims_out_default(
    self_: &Tensor,
    dim: Option<&[i64]>,
    keepdim: bool,
    out: &Tensor,
) -> Result<Tensor> {
    if self_.device() != out.device() {
        return Err(Error::runtime(
            "any.dims: output must be on the same device as input",
        ));
    }
    let tmp = any_dims_default(self_, dim, keepdim)?;
    copy_to_out(&tmp, out)?;
    Ok(out.clone())
}

/// `norm.Scalar(self, p)` (CompositeExplicitAutograd): over every
/// dimension.
pub fn norm_scalar(self_: &Tensor, p: Scalar) -> Result<Tensor> {
    ops::norm_scalaropt_dim(self_, Some(p), &[])
}

/// `norm.ScalarOpt_dtype(self, p, *, dtype)` (CompositeExplicitAutograd):
/// over every dimension, in `dtype`.
pub fn norm_scalaropt_dtype(
    self_: &Tensor,
    p: Option<Scalar>,
    dtype: ScalarType,
) -> Result<Tensor> {
    ops::norm_scalaropt_dim_dtype(self_, p, &[], false, dtype)
}
