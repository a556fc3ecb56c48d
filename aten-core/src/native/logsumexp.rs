//! `logsumexp` as PyTorch composes it. The out variant
//! (CompositeExplicitAutogradNonFunctional) subtracts the maxima before
//! exponentiating, sums, takes the log and adds the maxima back (infinite
//! maxima are replaced by 0 so that `inf - inf` never appears); the
//! functional form (CompositeExplicitAutograd) hands it a fresh output of
//! the input's floating dtype (the default dtype for integral inputs).

use c10_core::{Error, Result, Scalar};

use super::factories::{empty_with, DEFAULT_DTYPE};
use crate::ops::{self, AmaxOptions, SumDimIntlistOptions, ToCopyOptions};
use crate::Tensor;

/// `logsumexp(self, dim, keepdim)`.
pub fn logsumexp(self_: &Tensor, dim: &[i64], keepdim: bool) -> Result<Tensor> {
    let dtype = match self_.dtype() {
        Some(d) if d.is_integral(true) => DEFAULT_DTYPE,
        other => other.ok_or_else(|| Error::runtime("logsumexp: undefined tensor"))?,
    };
    let out = empty_with(&[0], Some(dtype), None, self_.device(), None)?;
    logsumexp_out(self_, dim, keepdim, &out)
}

/// `logsumexp.out(self, dim, keepdim, *, out)`.
pub fn logsumexp_out(self_: &Tensor, dim: &[i64], keepdim: bool, out: &Tensor) -> Result<Tensor> {
    let out_dtype = out
        .dtype()
        .ok_or_else(|| Error::runtime("logsumexp: undefined out tensor"))?;
    if !out_dtype.is_floating_point() {
        return Err(Error::runtime(format!(
            "logsumexp(): Expected floating point type for result tensor, but got: {out_dtype}"
        )));
    }
    let input = match self_.dtype() {
        Some(d) if d.is_integral(true) => ops::_to_copy_with(
            self_,
            ToCopyOptions {
                dtype: Some(DEFAULT_DTYPE),
                ..Default::default()
            },
        )?,
        _ => self_.clone(),
    };
    let sum = |t: &Tensor| {
        ops::sum_dim_intlist_with(
            t,
            Some(dim),
            SumDimIntlistOptions {
                keepdim,
                dtype: None,
            },
        )
    };
    let result = if input.numel() != 0 {
        let maxes = ops::amax_with(&input, AmaxOptions { dim, keepdim: true })?;
        let maxes_squeezed = if keepdim {
            maxes.clone()
        } else {
            ops::squeeze_dims(&maxes, dim)?
        };
        let infinite = ops::eq_scalar(&ops::abs(&maxes_squeezed)?, Scalar::Double(f64::INFINITY))?;
        ops::masked_fill_scalar_(&maxes_squeezed, &infinite, Scalar::Int(0))?;
        let shifted = ops::exp(&ops::sub_tensor(&input, &maxes)?)?;
        ops::add_tensor(&ops::log(&sum(&shifted)?)?, &maxes_squeezed)?
    } else {
        ops::log(&sum(&ops::exp(&input)?)?)?
    };
    out.base().resize_(&result.sizes())?;
    ops::copy_(out, &result)?;
    Ok(out.clone())
}
