//! Meta kernels of the factories and fills: `empty`, `empty_strided`,
//! `fill_`, `zero_` and the out forms of `arange`, `linspace` and `eye`.
//! Each checks its arguments and returns or resizes its output without
//! touching data.

use c10_core::{Device, Error, Layout, MemoryFormat, Result, Scalar, ScalarType};

use super::dtype_and_device;
use crate::native::factories::{empty_generic, empty_strided_generic};
use crate::Tensor;

/// `fill_.Scalar(self, value)`.
pub fn fill_meta_(self_: &Tensor, _value: Scalar) -> Result<Tensor> {
    Ok(self_.clone())
}

/// `zero_(self)`.
pub fn zero_meta_(self_: &Tensor) -> Result<Tensor> {
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

/// Meta kernel of `empty.memory_format`.
pub fn empty_meta(
    size: &[i64],
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    _device: Option<Device>,
    _pin_memory: Option<bool>,
    memory_format: Option<MemoryFormat>,
) -> Result<Tensor> {
    empty_generic(size, dtype, layout, Device::META, memory_format)
}

/// Meta kernel of `empty_strided`.
pub fn empty_strided_meta(
    size: &[i64],
    stride: &[i64],
    dtype: Option<ScalarType>,
    layout: Option<Layout>,
    _device: Option<Device>,
    _pin_memory: Option<bool>,
) -> Result<Tensor> {
    empty_strided_generic(size, stride, dtype, layout, Device::META)
}
