//! Meta kernels of the operators that are not structured (PyTorch's
//! `fill_meta_`, `zero_meta_`, `uniform_meta_`, `normal_meta_`, and the
//! Meta kernels this project has where PyTorch registers Python meta
//! functions instead): each checks its arguments and returns its output
//! on the input's device, without touching data. The CPU kernels of the
//! same operators begin with these functions and fill what they return,
//! so the two cannot disagree on a shape or an error.

use c10_core::{Device, Error, Generator, Result, Scalar, ScalarType, TensorBase};

use super::conv_shape::conv2d_shape;
use super::dims::{make_dim_mask, wrap_dim};
use crate::meta::reduction::{get_dtype_from_self, reduction_shape};
use crate::meta::{check_same_device, dtype_and_device};
use crate::Tensor;

/// A new tensor (contiguous) on `device`.
fn new_output(sizes: &[i64], dtype: ScalarType, device: Device) -> Result<Tensor> {
    Ok(Tensor::from(TensorBase::empty(sizes, dtype, device)?))
}

/// `prod(self, *, dtype)`: a 0-dim result, integers widened to int64.
pub fn prod_meta(self_: &Tensor, dtype: Option<ScalarType>) -> Result<Tensor> {
    let (own, device) = dtype_and_device(self_)?;
    new_output(&[], get_dtype_from_self(own, dtype, true), device)
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
    new_output(&reduction_shape(&sizes, &mask, keepdim), dtype, device)
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
    new_output(&[], da, device)
}

/// `flip(self, dims)`: no repeated dimension; `self`'s shape.
pub fn flip_meta(self_: &Tensor, dims: &[i64]) -> Result<Tensor> {
    let (dtype, device) = dtype_and_device(self_)?;
    let ndim = self_.dim();
    let mut flipped = vec![false; ndim];
    for &d in dims {
        let w = wrap_dim(d, ndim)?;
        if ndim > 0 && std::mem::replace(&mut flipped[w], true) {
            return Err(Error::runtime(format!(
                "dims has duplicates, original flip dims size={}, but unique flip dims size={}",
                dims.len(),
                dims.len() - 1
            )));
        }
    }
    new_output(&self_.sizes(), dtype, device)
}

/// `index_select(self, dim, index)`: a vector index; `self`'s shape with
/// the index's length at `dim` (the index values are the kernel's to
/// check).
pub fn index_select_meta(self_: &Tensor, dim: i64, index: &Tensor) -> Result<Tensor> {
    let (dtype, device) = dtype_and_device(self_)?;
    if index.dim() > 1 {
        return Err(Error::index_error(
            "index_select(): Index is supposed to be a vector",
        ));
    }
    let ndim = self_.dim();
    let d = wrap_dim(dim, ndim)?;
    check_same_device([self_, index])?;
    if ndim == 0 && index.numel() != 1 {
        return Err(Error::index_error(format!(
            "index_select(): Index to scalar can have only 1 value, got {} value(s)",
            index.numel()
        )));
    }
    let mut sizes = self_.sizes().to_vec();
    if ndim > 0 {
        sizes[d] = index.numel();
    }
    new_output(&sizes, dtype, device)
}

/// `native_dropout(input, p, train)`: the output (`input`'s shape and
/// dtype) and the bool keep mask; for an empty input, two tensors laid out
/// like it, both of its dtype (PyTorch returns before drawing).
pub fn native_dropout_meta(
    input: &Tensor,
    p: f64,
    _train: Option<bool>,
) -> Result<(Tensor, Tensor)> {
    if input.numel() == 0 {
        let like = || crate::native::empty_like(input, None, None, None, None, None);
        return Ok((like()?, like()?));
    }
    if !(0.0..=1.0).contains(&p) {
        return Err(Error::runtime(format!(
            "dropout probability has to be between 0 and 1, but got {p}"
        )));
    }
    let (dtype, device) = dtype_and_device(input)?;
    let sizes = input.sizes();
    Ok((
        new_output(&sizes, dtype, device)?,
        new_output(&sizes, ScalarType::Bool, device)?,
    ))
}

/// `fill_.Scalar(self, value)`.
pub fn fill_meta_(self_: &Tensor, _value: Scalar) -> Result<Tensor> {
    Ok(self_.clone())
}

/// `zero_(self)`.
pub fn zero_meta_(self_: &Tensor) -> Result<Tensor> {
    Ok(self_.clone())
}

/// `uniform_`'s checks: a floating tensor and `from <= to`.
pub fn check_uniform_args(self_: &Tensor, from: f64, to: f64) -> Result<()> {
    if from > to {
        return Err(Error::runtime(format!(
            "uniform_ expects to return a [from, to) range, but found from={from} > to={to}"
        )));
    }
    let dtype = dtype_and_device(self_)?.0;
    // An empty tensor returns before the dtype is looked at.
    if !dtype.is_floating_point() && self_.numel() != 0 {
        return Err(Error::not_implemented_for("check_uniform_bounds", dtype));
    }
    Ok(())
}

/// `normal_`'s checks: a floating tensor and `std >= 0`.
pub fn check_normal_args(self_: &Tensor, std: f64) -> Result<()> {
    if std < 0.0 {
        return Err(Error::runtime(format!(
            "normal expects std >= 0.0, but found std {std}"
        )));
    }
    let dtype = dtype_and_device(self_)?.0;
    // An empty tensor returns before the dtype is looked at.
    if !dtype.is_floating_point() && self_.numel() != 0 {
        return Err(Error::not_implemented_for("normal_kernel_cpu", dtype));
    }
    Ok(())
}

/// `uniform_(self, from, to, *, generator)`.
pub fn uniform_meta_(
    self_: &Tensor,
    from: f64,
    to: f64,
    _generator: Option<Generator>,
) -> Result<Tensor> {
    check_uniform_args(self_, from, to)?;
    Ok(self_.clone())
}

/// `normal_(self, mean, std, *, generator)`.
pub fn normal_meta_(
    self_: &Tensor,
    _mean: f64,
    std: f64,
    _generator: Option<Generator>,
) -> Result<Tensor> {
    check_normal_args(self_, std)?;
    Ok(self_.clone())
}

/// `arange.start_out(start, end, step, *, out)`: `out` resized to the
/// range's length (PyTorch's `compute_arange_size`).
pub fn arange_out_meta(start: Scalar, end: Scalar, step: Scalar, out: &Tensor) -> Result<Tensor> {
    let dtype = dtype_and_device(out)?.0;
    let (xs, xe, xstep) = (start.to_f64(), end.to_f64(), step.to_f64());
    if xstep == 0.0 {
        return Err(Error::runtime("step must be nonzero"));
    }
    if !(xs.is_finite() && xe.is_finite()) {
        return Err(Error::runtime(format!("unsupported range: {xs} -> {xe}")));
    }
    if !((xstep > 0.0 && xe >= xs) || (xstep < 0.0 && xe <= xs)) {
        return Err(Error::runtime(
            "upper bound and larger bound inconsistent with step sign",
        ));
    }
    // In int64 for an int64 output from integral Scalars (here in i128,
    // which cannot overflow), else in double from the Scalars as given.
    let all_integral = [start, end, step].iter().all(|s| s.is_integral(false));
    let size_d = if dtype == ScalarType::Long && all_integral {
        let (s, e, st) = (
            i128::from(start.to_i64()),
            i128::from(end.to_i64()),
            i128::from(step.to_i64()),
        );
        ((e - s + st - st.signum()) / st) as f64
    } else {
        ((xe - xs) / xstep).ceil()
    };
    if !(size_d >= 0.0 && size_d <= i64::MAX as f64) {
        return Err(Error::runtime(format!(
            "invalid size, possible overflow? size = {size_d}"
        )));
    }
    let size = size_d as i64;
    if out.numel() != size {
        out.base().resize_(&[size])?;
    }
    Ok(out.clone())
}

/// `linspace.out(start, end, steps, *, out)`: `out` resized to `steps`.
pub fn linspace_out_meta(_start: Scalar, _end: Scalar, steps: i64, out: &Tensor) -> Result<Tensor> {
    if steps < 0 {
        return Err(Error::runtime("number of steps must be non-negative"));
    }
    if out.numel() != steps {
        out.base().resize_(&[steps])?;
    }
    Ok(out.clone())
}

/// `eye.m_out(n, m, *, out)`: `out` resized to `[n, m]`.
pub fn eye_out_meta(n: i64, m: i64, out: &Tensor) -> Result<Tensor> {
    if n < 0 {
        return Err(Error::runtime(format!(
            "n must be greater or equal to 0, got {n}"
        )));
    }
    if m < 0 {
        return Err(Error::runtime(format!(
            "m must be greater or equal to 0, got {m}"
        )));
    }
    out.base().resize_(&[n, m])?;
    Ok(out.clone())
}

/// The output of a 2-d convolution kernel (`name` starts the errors).
#[allow(clippy::too_many_arguments)]
pub fn conv2d_output(
    self_: &Tensor,
    weight: &Tensor,
    kernel_size: &[i64],
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    name: &str,
) -> Result<(Tensor, super::conv_shape::Conv2dShape)> {
    let shape = conv2d_shape(
        self_,
        weight,
        kernel_size,
        bias,
        stride,
        padding,
        dilation,
        name,
    )?;
    let (dtype, device) = dtype_and_device(self_)?;
    Ok((new_output(&shape.output_sizes(), dtype, device)?, shape))
}

/// `_slow_conv2d_forward(self, weight, kernel_size, bias, stride,
/// padding)`.
pub fn slow_conv2d_forward_meta(
    self_: &Tensor,
    weight: &Tensor,
    kernel_size: &[i64],
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &[i64],
) -> Result<Tensor> {
    let name = "slow_conv2d_cpu";
    conv2d_output(
        self_,
        weight,
        kernel_size,
        bias,
        stride,
        padding,
        &[1, 1],
        name,
    )
    .map(|o| o.0)
}

/// `slow_conv_dilated2d(self, weight, kernel_size, bias, stride, padding,
/// dilation)`.
pub fn slow_conv_dilated2d_meta(
    self_: &Tensor,
    weight: &Tensor,
    kernel_size: &[i64],
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
) -> Result<Tensor> {
    let name = "slow_conv_dilated2d";
    conv2d_output(
        self_,
        weight,
        kernel_size,
        bias,
        stride,
        padding,
        dilation,
        name,
    )
    .map(|o| o.0)
}
