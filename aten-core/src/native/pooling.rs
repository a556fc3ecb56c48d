//! Composite pooling operators (CompositeImplicitAutograd), decomposed as
//! PyTorch decomposes them: `avg_pool1d` -> `avg_pool2d`,
//! `max_pool1d(_with_indices)` -> `max_pool2d_with_indices` and
//! `adaptive_avg_pool1d` -> `adaptive_avg_pool2d` over a height of one,
//! `max_pool3d` -> `max_pool3d_with_indices`, `adaptive_avg_pool2d` and
//! `adaptive_avg_pool3d` -> a mean (a 1x1 output) or
//! `_adaptive_avg_pool2d` / `_adaptive_avg_pool3d`.

use c10_core::{Error, MemoryFormat, Result};

use super::dims::fmt_list;
use crate::generated::ops;
use crate::Tensor;

/// A 1-d pooling's checked input and its window, step and padding (the
/// step defaults to the window).
fn pool1d_args(
    name: &str,
    self_: &Tensor,
    kernel_size: &[i64],
    stride: &[i64],
    padding: &[i64],
) -> Result<(i64, i64, i64)> {
    let stride = if stride.is_empty() {
        kernel_size
    } else {
        stride
    };
    check_1d_input(self_, name)?;
    Ok((
        check_1d(name, "kernel_size", kernel_size)?,
        check_1d(name, "stride", stride)?,
        check_1d(name, "padding", padding)?,
    ))
}

/// PyTorch's `checkDimRange(name, self, 2, 4)`: a 2-d or 3-d `self`.
fn check_1d_input(self_: &Tensor, name: &str) -> Result<()> {
    let dim = self_.dim();
    if !(2..4).contains(&dim) {
        return Err(Error::runtime(format!(
            "Expected 2D to 3D tensor, but got {dim}D tensor for argument #1 'self' (while checking arguments for {name})"
        )));
    }
    Ok(())
}

/// PyTorch's `check1d`: a one-element list.
fn check_1d(name: &str, arg: &str, v: &[i64]) -> Result<i64> {
    match v {
        [x] => Ok(*x),
        _ => Err(Error::runtime(format!(
            "{name}() argument '{arg}' should contain one int (got {})",
            v.len()
        ))),
    }
}

/// `avg_pool1d(self, kernel_size, stride, padding, ceil_mode,
/// count_include_pad)`: `avg_pool2d` over `self.unsqueeze(-2)`.
pub fn avg_pool1d(
    self_: &Tensor,
    kernel_size: &[i64],
    stride: &[i64],
    padding: &[i64],
    ceil_mode: bool,
    count_include_pad: bool,
) -> Result<Tensor> {
    let (k, s, p) = pool1d_args("avg_pool1d", self_, kernel_size, stride, padding)?;
    let out = ops::avg_pool2d_with(
        &ops::unsqueeze(self_, -2)?,
        &[1, k],
        ops::AvgPool2dOptions {
            stride: &[1, s],
            padding: &[0, p],
            ceil_mode,
            count_include_pad,
            divisor_override: None,
        },
    )?;
    ops::squeeze_dim(&out, -2)
}

/// `adaptive_avg_pool1d(self, output_size)`: `adaptive_avg_pool2d` over
/// `self.unsqueeze(-2)`.
pub fn adaptive_avg_pool1d(self_: &Tensor, output_size: &[i64]) -> Result<Tensor> {
    check_1d_input(self_, "adaptive_avg_pool1d")?;
    let o = check_1d("adaptive_avg_pool1d", "output_size", output_size)?;
    let out = ops::adaptive_avg_pool2d(&ops::unsqueeze(self_, -2)?, &[1, o])?;
    ops::squeeze_dim(&out, -2)
}

/// `adaptive_avg_pool2d(self, output_size)`: a mean over the last two
/// dimensions for a 1x1 output (kept channels-last for a channels-last
/// input), else `_adaptive_avg_pool2d`.
pub fn adaptive_avg_pool2d(self_: &Tensor, output_size: &[i64]) -> Result<Tensor> {
    let [oh, ow] = *output_size else {
        return Err(Error::runtime("adaptive_avg_pool2d: output_size must be 2"));
    };
    if oh < 0 || ow < 0 {
        return Err(Error::runtime(format!(
            "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but received {{{oh}, {ow}}}"
        )));
    }
    if (oh, ow) != (1, 1) {
        return ops::_adaptive_avg_pool2d(self_, output_size);
    }
    let out = ops::mean_dim_with(
        self_,
        Some(&[-1, -2]),
        ops::MeanDimOptions {
            keepdim: true,
            dtype: None,
        },
    )?;
    let sizes = self_.sizes();
    if MemoryFormat::suggest(&sizes, &self_.strides()) == MemoryFormat::ChannelsLast {
        let (n, c) = (sizes[0], sizes[1]);
        return ops::as_strided(&out, &[n, c, 1, 1], &[c, 1, c, c]);
    }
    Ok(out)
}

/// `max_pool1d_with_indices(self, kernel_size, stride, padding, dilation,
/// ceil_mode)`: `max_pool2d_with_indices` over `self.unsqueeze(-2)`.
pub fn max_pool1d_with_indices(
    self_: &Tensor,
    kernel_size: &[i64],
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    ceil_mode: bool,
) -> Result<(Tensor, Tensor)> {
    let (k, s, p) = pool1d_args("max_pool1d", self_, kernel_size, stride, padding)?;
    let d = check_1d("max_pool1d", "dilation", dilation)?;
    let (out, indices) = ops::max_pool2d_with_indices_with(
        &ops::unsqueeze(self_, -2)?,
        &[1, k],
        ops::MaxPool2dWithIndicesOptions {
            stride: &[1, s],
            padding: &[0, p],
            dilation: &[1, d],
            ceil_mode,
        },
    )?;
    Ok((ops::squeeze_dim(&out, -2)?, ops::squeeze_dim(&indices, -2)?))
}

/// `max_pool1d(self, kernel_size, stride, padding, dilation, ceil_mode)`:
/// the values of `max_pool1d_with_indices`.
pub fn max_pool1d(
    self_: &Tensor,
    kernel_size: &[i64],
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    ceil_mode: bool,
) -> Result<Tensor> {
    let sizes = self_.sizes();
    let ok = match sizes.len() {
        2 => sizes[0] != 0 && sizes[1] != 0,
        3 => sizes[1] != 0 && sizes[2] != 0,
        _ => false,
    };
    if !ok {
        return Err(Error::runtime(format!(
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got:{}",
            fmt_list(&sizes)
        )));
    }
    max_pool1d_with_indices(self_, kernel_size, stride, padding, dilation, ceil_mode)
        .map(|(o, _)| o)
}

/// `max_pool3d(self, kernel_size, stride, padding, dilation, ceil_mode)`:
/// the values of `max_pool3d_with_indices`.
pub fn max_pool3d(
    self_: &Tensor,
    kernel_size: &[i64],
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    ceil_mode: bool,
) -> Result<Tensor> {
    let (out, _) = ops::max_pool3d_with_indices_with(
        self_,
        kernel_size,
        ops::MaxPool3dWithIndicesOptions {
            stride,
            padding,
            dilation,
            ceil_mode,
        },
    )?;
    Ok(out)
}

/// `adaptive_avg_pool3d(self, output_size)`: a mean over the spatial
/// dimensions for a `1 x 1 x 1` output, else `_adaptive_avg_pool3d`.
pub fn adaptive_avg_pool3d(self_: &Tensor, output_size: &[i64]) -> Result<Tensor> {
    if output_size.len() != 3 {
        return Err(Error::runtime("adaptive_avg_pool3d: output_size must be 3"));
    }
    if output_size.iter().any(|&s| s < 0) {
        return Err(Error::runtime(format!(
            "adaptive_avg_pool3d: elements of output_size must be greater than or equal to 0 but received {{{}, {},{}}}",
            output_size[0], output_size[1], output_size[2]
        )));
    }
    if output_size == [1, 1, 1] {
        let out = ops::mean_dim_with(
            self_,
            Some(&[-1, -2, -3]),
            ops::MeanDimOptions {
                keepdim: true,
                dtype: None,
            },
        )?;
        if MemoryFormat::suggest(&self_.sizes(), &self_.strides()) == MemoryFormat::ChannelsLast3d {
            let (n, c) = (self_.sizes()[0], self_.sizes()[1]);
            return ops::as_strided(&out, &[n, c, 1, 1, 1], &[c, 1, c, c, c]);
        }
        return Ok(out);
    }
    ops::_adaptive_avg_pool3d(self_, output_size)
}
