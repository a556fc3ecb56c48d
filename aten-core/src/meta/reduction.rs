//! Meta functions of the reductions (`sum`, `mean`, `prod.dim_int`,
//! `amax`, `amin`, `argmax`, `argmin`, `max.dim`, `min.dim`, `all`, `any`,
//! `any.dims`, `linalg_vector_norm`, `norm`) and of the operations along one
//! dimension (`cumsum`, `_softmax`, `_log_softmax`): PyTorch's dtype rules
//! and checks, and a contiguous output through `set_output` (PyTorch's
//! `resize_reduction`).

use c10_core::type_promotion::promote_types;
use c10_core::{Device, Error, Result, Scalar, ScalarType};

use super::{dtype_and_device, new_contiguous};
use crate::native::dims::make_dim_mask;
use crate::native::{dims::make_dim_mask_with, dims::wrap_dim};
use crate::structured::{DeferredOutput, MetaOutput, SetOutput};
use crate::Tensor;

/// The shape of reducing `sizes` over the dimensions in `mask`: those
/// dimensions dropped, or kept with size 1 (`get_reduction_shape`).
pub fn reduction_shape(sizes: &[i64], mask: &[bool], keepdim: bool) -> Vec<i64> {
    sizes
        .iter()
        .zip(mask)
        .filter_map(|(&s, &reduced)| match (reduced, keepdim) {
            (false, _) => Some(s),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect()
}

/// The output of a reduction of `self_` over `dims` (all for `None` or an
/// empty list) with `dtype` (`resize_reduction`).
fn resize_reduction(
    out: SetOutput<'_>,
    self_: &Tensor,
    dims: Option<&[i64]>,
    keepdim: bool,
    dtype: ScalarType,
) -> Result<MetaOutput> {
    resize_reduction_with(out, self_, dims, keepdim, dtype, false)
}

/// [`resize_reduction`] with PyTorch's `allow_empty_dims` (an empty list
/// then reduces nothing).
fn resize_reduction_with(
    out: SetOutput<'_>,
    self_: &Tensor,
    dims: Option<&[i64]>,
    keepdim: bool,
    dtype: ScalarType,
    allow_empty_dims: bool,
) -> Result<MetaOutput> {
    let device = dtype_and_device(self_)?.1;
    let shape = shape_of(self_, dims, keepdim, allow_empty_dims)?;
    out.set_output(&shape, dtype, device)
}

fn shape_of(
    self_: &Tensor,
    dims: Option<&[i64]>,
    keepdim: bool,
    allow_empty_dims: bool,
) -> Result<Vec<i64>> {
    let sizes = self_.sizes();
    let mask = make_dim_mask_with(dims, sizes.len(), allow_empty_dims)?;
    Ok(reduction_shape(&sizes, &mask, keepdim))
}

/// The requested dtype, else `own` with integers (and bool) widened to
/// int64 when `promote_integers` (`get_dtype_from_self`).
pub fn get_dtype_from_self(
    own: ScalarType,
    dtype: Option<ScalarType>,
    promote_integers: bool,
) -> ScalarType {
    match dtype {
        Some(d) => d,
        None if promote_integers && own.is_integral(true) => ScalarType::Long,
        None => own,
    }
}

/// The dtype `sum` and `cumsum` compute in: the requested one, else the
/// given output's, else [`get_dtype_from_self`] widening integers
/// (`infer_dtype_from_optional`).
fn accumulating_dtype(
    self_: &Tensor,
    dtype: Option<ScalarType>,
    given: Option<&Tensor>,
) -> Result<ScalarType> {
    let given = given.and_then(|t| t.dtype());
    let own = dtype_and_device(self_)?.0;
    Ok(get_dtype_from_self(own, dtype.or(given), true))
}

/// A reduction of an empty tensor needs reduced dimensions, each of
/// non-zero size (`zero_numel_check_dims`; the error names each dimension
/// as given); `name` starts the error.
fn zero_numel_check_dims(self_: &Tensor, dims: &[i64], name: &str) -> Result<()> {
    if dims.is_empty() {
        return Err(Error::runtime(format!(
            "{name}: Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument."
        )));
    }
    for &d in dims {
        if self_.dim() == 0 {
            if d != 0 && d != -1 {
                return Err(Error::index_error(format!(
                    "{name}: Expected reduction dim -1 or 0 for scalar but got {d}"
                )));
            }
        } else if self_.size(d)? == 0 {
            return Err(Error::index_error(format!(
                "{name}: Expected reduction dim {d} to have non-zero size."
            )));
        }
    }
    Ok(())
}

/// `sum.dim_IntList(self, dim, keepdim, *, dtype)`.
pub fn sum_dim_intlist(
    out: SetOutput<'_>,
    self_: &Tensor,
    dim: Option<&[i64]>,
    keepdim: bool,
    dtype: Option<ScalarType>,
) -> Result<MetaOutput> {
    let dtype = accumulating_dtype(self_, dtype, out.maybe_get_output())?;
    resize_reduction(out, self_, dim, keepdim, dtype)
}

/// `prod.dim_int(self, dim, keepdim, *, dtype)`: the dtype rules of `sum`.
pub fn prod_dim_int(
    out: SetOutput<'_>,
    self_: &Tensor,
    dim: i64,
    keepdim: bool,
    dtype: Option<ScalarType>,
) -> Result<MetaOutput> {
    let dtype = accumulating_dtype(self_, dtype, out.maybe_get_output())?;
    resize_reduction(out, self_, Some(&[dim]), keepdim, dtype)
}

/// `mean.dim(self, dim, keepdim, *, dtype)`: a floating or complex dtype.
pub fn mean_dim(
    out: SetOutput<'_>,
    self_: &Tensor,
    dim: Option<&[i64]>,
    keepdim: bool,
    dtype: Option<ScalarType>,
) -> Result<MetaOutput> {
    let own = dtype_and_device(self_)?.0;
    let computed = get_dtype_from_self(own, dtype, true);
    if !(computed.is_floating_point() || computed.is_complex()) {
        let (what, shown) = match dtype {
            Some(d) => ("Optional", d),
            None => ("Input", own),
        };
        return Err(Error::runtime(format!(
            "mean(): could not infer output dtype. {what} dtype must be either a floating point or complex dtype. Got: {shown}"
        )));
    }
    let dtype = accumulating_dtype(self_, dtype, out.maybe_get_output())?;
    resize_reduction(out, self_, dim, keepdim, dtype)
}

/// `amax` and `amin`: the input's dtype, which a given output must have.
fn extreme(
    out: SetOutput<'_>,
    self_: &Tensor,
    dim: &[i64],
    keepdim: bool,
    name: &str,
) -> Result<MetaOutput> {
    let own = dtype_and_device(self_)?.0;
    if let Some(given) = out.maybe_get_output().and_then(|t| t.dtype()) {
        if given != own {
            return Err(Error::runtime(format!(
                "Expected the dtype for input and out to match, but got {own} for input's dtype and {given} for out's dtype."
            )));
        }
    }
    if self_.numel() == 0 {
        zero_numel_check_dims(self_, dim, name)?;
    }
    resize_reduction(out, self_, Some(dim), keepdim, own)
}

/// `amax(self, dim, keepdim)`.
pub fn amax(out: SetOutput<'_>, self_: &Tensor, dim: &[i64], keepdim: bool) -> Result<MetaOutput> {
    extreme(out, self_, dim, keepdim, "amax()")
}

/// `amin(self, dim, keepdim)`.
pub fn amin(out: SetOutput<'_>, self_: &Tensor, dim: &[i64], keepdim: bool) -> Result<MetaOutput> {
    extreme(out, self_, dim, keepdim, "amin()")
}

/// `argmax` and `argmin`: int64 indices; without `dim`, over the flattened
/// input (`keepdim` then keeps every dimension with size 1);
/// `check_argmax_argmin` with `name` starting the errors.
fn arg_extreme(
    out: SetOutput<'_>,
    self_: &Tensor,
    dim: Option<i64>,
    keepdim: bool,
    name: &str,
) -> Result<MetaOutput> {
    match dim {
        Some(d) => {
            let w = wrap_dim(d, self_.dim())? as i64;
            zero_numel_check_dims(self_, &[w], name)?;
        }
        None if self_.numel() == 0 => {
            return Err(Error::index_error(format!(
                "{name}: Expected reduction dim to be specified for input.numel() == 0."
            )))
        }
        None => {}
    }
    let dims = dim.as_ref().map(std::slice::from_ref);
    resize_reduction(out, self_, dims, keepdim, ScalarType::Long)
}

/// `argmax(self, dim, keepdim)`.
pub fn argmax(
    out: SetOutput<'_>,
    self_: &Tensor,
    dim: Option<i64>,
    keepdim: bool,
) -> Result<MetaOutput> {
    arg_extreme(out, self_, dim, keepdim, "argmax()")
}

/// `argmin(self, dim, keepdim)`.
pub fn argmin(
    out: SetOutput<'_>,
    self_: &Tensor,
    dim: Option<i64>,
    keepdim: bool,
) -> Result<MetaOutput> {
    arg_extreme(out, self_, dim, keepdim, "argmin()")
}

/// `max.dim` and `min.dim`: the values (the input's dtype) and their int64
/// indices (`resize_reduction_with_indices`); `name` starts the errors.
fn extreme_dim(
    out: SetOutput<'_>,
    self_: &Tensor,
    dim: i64,
    keepdim: bool,
    name: &str,
) -> Result<MetaOutput<2>> {
    let (dtype, device) = dtype_and_device(self_)?;
    let w = wrap_dim(dim, self_.dim())? as i64;
    zero_numel_check_dims(self_, &[w], name)?;
    if dtype.is_complex() {
        return Err(Error::type_error(format!(
            "{name}: does not support complex input"
        )));
    }
    let shape = shape_of(self_, Some(&[dim]), keepdim, false)?;
    out.set_outputs(
        [(&shape, None, dtype), (&shape, None, ScalarType::Long)],
        device,
    )
}

/// `max.dim(self, dim, keepdim)`.
pub fn max_dim(
    out: SetOutput<'_>,
    self_: &Tensor,
    dim: i64,
    keepdim: bool,
) -> Result<MetaOutput<2>> {
    extreme_dim(out, self_, dim, keepdim, "max()")
}

/// `min.dim(self, dim, keepdim)`.
pub fn min_dim(
    out: SetOutput<'_>,
    self_: &Tensor,
    dim: i64,
    keepdim: bool,
) -> Result<MetaOutput<2>> {
    extreme_dim(out, self_, dim, keepdim, "min()")
}

/// `all` and `any` over `dims` (every one for `None`, none for an empty
/// list): bool, or uint8 for a uint8 input; a given output must be one of
/// the two (`allany_meta`).
fn all_any(
    out: SetOutput<'_>,
    self_: &Tensor,
    dims: Option<&[i64]>,
    keepdim: bool,
    name: &str,
) -> Result<MetaOutput> {
    let own = dtype_and_device(self_)?.0;
    let dtype = match out.maybe_get_output().and_then(|t| t.dtype()) {
        Some(d @ (ScalarType::Bool | ScalarType::Byte)) => d,
        Some(d) => {
            return Err(Error::runtime(format!(
                "{name} only supports bool tensor for result, got: {d}"
            )))
        }
        None if own == ScalarType::Byte => ScalarType::Byte,
        None => ScalarType::Bool,
    };
    resize_reduction_with(out, self_, dims, keepdim, dtype, true)
}

/// `all.dim(self, dim, keepdim)`.
pub fn all_dim(out: SetOutput<'_>, self_: &Tensor, dim: i64, keepdim: bool) -> Result<MetaOutput> {
    all_any(out, self_, Some(&[dim]), keepdim, "all")
}

/// `any.dim(self, dim, keepdim)`.
pub fn any_dim(out: SetOutput<'_>, self_: &Tensor, dim: i64, keepdim: bool) -> Result<MetaOutput> {
    all_any(out, self_, Some(&[dim]), keepdim, "any")
}

/// `any(self)`: over every dimension.
pub fn any(out: SetOutput<'_>, self_: &Tensor) -> Result<MetaOutput> {
    all_any(out, self_, None, false, "any")
}

/// `any.dims(self, dim, keepdim)`: over `dim` (every dimension for `None`,
/// none for an empty list).
pub fn any_dims(
    out: SetOutput<'_>,
    self_: &Tensor,
    dim: Option<&[i64]>,
    keepdim: bool,
) -> Result<MetaOutput> {
    all_any(out, self_, dim, keepdim, "any")
}

/// `cumsum(self, dim, *, dtype)`: `self`'s shape, in the accumulating
/// dtype (a given output's when none is requested).
pub fn cumsum(
    out: SetOutput<'_>,
    self_: &Tensor,
    dim: i64,
    dtype: Option<ScalarType>,
) -> Result<MetaOutput> {
    let device = dtype_and_device(self_)?.1;
    wrap_dim(dim, self_.dim())?;
    let dtype = accumulating_dtype(self_, dtype, out.maybe_get_output())?;
    out.set_output(&self_.sizes(), dtype, device)
}

/// `_softmax` and `_log_softmax`: `self`'s shape and dtype (float with
/// `half_to_float`); a functional output is the impl's to allocate.
fn softmax_like(
    out: SetOutput<'_>,
    self_: &Tensor,
    dim: i64,
    half_to_float: bool,
) -> Result<DeferredOutput> {
    let (own, device): (ScalarType, Device) = dtype_and_device(self_)?;
    let w = wrap_dim(dim, self_.dim())?;
    if w >= self_.dim().max(1) {
        return Err(Error::runtime(
            "dim must be non-negative and less than input dimensions",
        ));
    }
    let dtype = if half_to_float {
        ScalarType::Float
    } else {
        own
    };
    out.defer_output(&self_.sizes(), dtype, device)
}

/// `_softmax(self, dim, half_to_float)`.
pub fn _softmax(
    out: SetOutput<'_>,
    self_: &Tensor,
    dim: i64,
    half_to_float: bool,
) -> Result<DeferredOutput> {
    softmax_like(out, self_, dim, half_to_float)
}

/// `_log_softmax(self, dim, half_to_float)`.
pub fn _log_softmax(
    out: SetOutput<'_>,
    self_: &Tensor,
    dim: i64,
    half_to_float: bool,
) -> Result<DeferredOutput> {
    softmax_like(out, self_, dim, half_to_float)
}

/// `linalg_vector_norm(self, ord, dim, keepdim, *, dtype)`: a floating or
/// complex input; the real type of `dtype` (else of the input); an empty
/// input has no identity for negative and infinite orders
/// (`checkFloatingOrComplex`, `check_linalg_norm_dtype`).
pub fn linalg_vector_norm(
    out: SetOutput<'_>,
    self_: &Tensor,
    ord: Scalar,
    dim: Option<&[i64]>,
    keepdim: bool,
    dtype: Option<ScalarType>,
) -> Result<MetaOutput> {
    const NAME: &str = "linalg.vector_norm";
    let own = dtype_and_device(self_)?.0;
    if !(own.is_floating_point() || own.is_complex()) {
        return Err(Error::runtime(format!(
            "{NAME}: Expected a floating point or complex tensor as input. Got {own}"
        )));
    }
    let dims = dim.unwrap_or(&[]);
    let p = ord.to_f64();
    if self_.numel() == 0 && (p < 0.0 || p == f64::INFINITY) {
        if dims.is_empty() {
            return Err(Error::runtime(format!(
                "{NAME} cannot compute the {ord} norm on an empty tensor because the operation does not have an identity"
            )));
        }
        for &d in dims {
            if self_.size(d)? == 0 {
                return Err(Error::runtime(format!(
                    "{NAME} cannot compute the {ord} norm on the dimension {d}because this dimension is empty and the operation does not have an identity"
                )));
            }
        }
    }
    if let Some(d) = dtype {
        let kind = |t: ScalarType| if t.is_complex() { "complex" } else { "real" };
        if !(d.is_floating_point() || d.is_complex()) {
            return Err(Error::runtime(format!(
                "{NAME}: dtype should be floating point or complex, but got {d}"
            )));
        }
        if own.is_complex() != d.is_complex() {
            return Err(Error::runtime(format!(
                "{NAME}: dtype should be {k} for {k} inputs, but got {d}",
                k = kind(own)
            )));
        }
        if promote_types(own, d)? != d {
            return Err(Error::runtime(format!(
                "{NAME}: the dtype of the input ({own}) should be convertible without narrowing to the specified dtype ({d})"
            )));
        }
    }
    let result = dtype.unwrap_or(own).to_real_value_type();
    resize_reduction(out, self_, Some(dims), keepdim, result)
}

/// `norm.ScalarOpt_dim(self, p, dim, keepdim)`: a floating or complex
/// input; the given output's dtype, else the input's.
pub fn norm_scalaropt_dim(
    out: SetOutput<'_>,
    self_: &Tensor,
    _p: Option<Scalar>,
    dim: &[i64],
    keepdim: bool,
) -> Result<MetaOutput> {
    let own = dtype_and_device(self_)?.0;
    if !(own.is_floating_point() || own.is_complex()) {
        return Err(Error::runtime(format!(
            "norm(): input dtype should be either floating point or complex. Got {own} instead."
        )));
    }
    let dtype = out
        .maybe_get_output()
        .and_then(|t| t.dtype())
        .unwrap_or(own);
    resize_reduction(out, self_, Some(dim), keepdim, dtype)
}

/// `norm.ScalarOpt_dim_dtype(self, p, dim, keepdim, *, dtype)`: a floating
/// or complex `dtype`; the given output's dtype, else `dtype`.
pub fn norm_scalaropt_dim_dtype(
    out: SetOutput<'_>,
    self_: &Tensor,
    _p: Option<Scalar>,
    dim: &[i64],
    keepdim: bool,
    dtype: ScalarType,
) -> Result<MetaOutput> {
    if !(dtype.is_floating_point() || dtype.is_complex()) {
        return Err(Error::runtime(format!(
            "norm(): the desired output dtype should be either floating point or complex. Got {dtype} instead."
        )));
    }
    let dtype = out
        .maybe_get_output()
        .and_then(|t| t.dtype())
        .unwrap_or(dtype);
    resize_reduction(out, self_, Some(dim), keepdim, dtype)
}

/// `prod(self, *, dtype)`: a 0-dim result, integers widened to int64.
pub fn prod_meta(self_: &Tensor, dtype: Option<ScalarType>) -> Result<Tensor> {
    let (own, device) = dtype_and_device(self_)?;
    new_contiguous(&[], get_dtype_from_self(own, dtype, true), device)
}

/// `var.correction(self, dim, *, correction, keepdim)`: floating inputs.
pub fn var_correction_meta(
    self_: &Tensor,
    dim: Option<&[i64]>,
    _correction: Option<Scalar>,
    keepdim: bool,
) -> Result<Tensor> {
    let (dtype, device) = dtype_and_device(self_)?;
    if !dtype.is_floating_point() {
        return Err(Error::runtime(format!(
            "std and var only support floating point and complex dtypes, got: {dtype}"
        )));
    }
    let sizes = self_.sizes();
    let mask = make_dim_mask(dim, sizes.len())?;
    new_contiguous(&reduction_shape(&sizes, &mask, keepdim), dtype, device)
}
