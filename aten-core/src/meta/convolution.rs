//! Meta kernels of the convolution operators without a structured
//! family (`_slow_conv2d_forward`, `slow_conv_dilated2d`, `col2im`) and
//! the output geometry their CPU kernels share.

use c10_core::{Error, MemoryFormat, Result};

use super::{dtype_and_device, new_contiguous, new_strided};
use crate::native::conv_shape::conv2d_shape;
use crate::native::dims::fmt_list;
use crate::native::factories::strides_for;
use crate::Tensor;

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
) -> Result<(Tensor, crate::native::conv_shape::Conv2dShape)> {
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
    Ok((new_contiguous(&shape.output_sizes(), dtype, device)?, shape))
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

/// Each named list has two values (PyTorch's "It is expected ... equals
/// to 2" of `col2im` and `im2col`).
pub fn check_pairs(lists: &[(&[i64], &str)]) -> Result<()> {
    for (v, name) in lists {
        if v.len() != 2 {
            return Err(Error::runtime(format!(
                "It is expected {name} equals to 2, but got size {}",
                v.len()
            )));
        }
    }
    Ok(())
}

/// A parameter of a 2-d sliding window (`col2im`, `im2col`), checked with
/// PyTorch's message; each shape check takes them in its own order.
#[derive(Copy, Clone, Debug)]
pub enum WindowParam {
    /// The window, positive.
    Kernel,
    /// The spacing of its elements, positive.
    Dilation,
    /// The zero padding, non-negative.
    Padding,
    /// The step, positive.
    Stride,
}

impl WindowParam {
    /// Checks the `(height, width)` pair of this parameter.
    pub fn check(self, (h, w): (i64, i64)) -> Result<()> {
        let (ok, what, names) = match self {
            WindowParam::Kernel => (
                h > 0 && w > 0,
                "kernel size should be greater than zero",
                ("kernel_height", "kernel_width"),
            ),
            WindowParam::Dilation => (
                h > 0 && w > 0,
                "dilation should be greater than zero",
                ("dilation_height", "dilation_width"),
            ),
            WindowParam::Padding => (
                h >= 0 && w >= 0,
                "padding should be non-negative",
                ("pad_height", "pad_width"),
            ),
            WindowParam::Stride => (
                h > 0 && w > 0,
                "stride should be greater than zero",
                ("stride_height", "stride_width"),
            ),
        };
        if ok {
            return Ok(());
        }
        Err(Error::runtime(format!(
            "{what}, but got {}: {h} {}: {w}",
            names.0, names.1
        )))
    }
}

/// `col2im(self, output_size, kernel_size, dilation, padding, stride)`:
/// `[N, C, H, W]` (`[C, H, W]` for a 2-d input) after PyTorch's
/// `col2im_shape_check`.
pub fn col2im_meta(
    self_: &Tensor,
    output_size: &[i64],
    kernel_size: &[i64],
    dilation: &[i64],
    padding: &[i64],
    stride: &[i64],
) -> Result<Tensor> {
    check_pairs(&[
        (output_size, "output_size"),
        (kernel_size, "kernel_size"),
        (dilation, "dilation"),
        (padding, "padding"),
        (stride, "stride"),
    ])?;
    let (oh, ow) = (output_size[0], output_size[1]);
    let (kh, kw) = (kernel_size[0], kernel_size[1]);
    let (dh, dw) = (dilation[0], dilation[1]);
    let (ph, pw) = (padding[0], padding[1]);
    let (sh, sw) = (stride[0], stride[1]);
    // `col2im_shape_check`'s order.
    for (param, pair) in [
        (WindowParam::Kernel, (kh, kw)),
        (WindowParam::Stride, (sh, sw)),
        (WindowParam::Dilation, (dh, dw)),
        (WindowParam::Padding, (ph, pw)),
    ] {
        param.check(pair)?;
    }
    let sizes = self_.sizes();
    let ndim = sizes.len();
    let valid = (ndim == 2 && sizes[0] != 0 && sizes[1] != 0)
        || (ndim == 3 && sizes[1] != 0 && sizes[2] != 0);
    if !valid {
        return Err(Error::runtime(format!(
            "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions for input, but got: {}",
            fmt_list(&sizes)
        )));
    }
    let batched = ndim == 3;
    let planes = sizes[ndim - 2];
    let kernel = kw.checked_mul(kh).ok_or_else(|| {
        Error::runtime(format!(
            "Given kernel_width = {kw} and kernel_height = {kh} the product of kernel_width and kernel_height overflowed."
        ))
    })?;
    if planes % kernel != 0 {
        return Err(Error::runtime(format!(
            "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got input.size(1)={planes} and kernel_size=({kh}, {kw})."
        )));
    }
    let blocks = |o: i64, k: i64, d: i64, p: i64, s: i64| -> i128 {
        let num = i128::from(o) + 2 * i128::from(p) - i128::from(d) * (i128::from(k) - 1) - 1;
        num.div_euclid(i128::from(s)) + 1
    };
    let (bh, bw) = (blocks(oh, kh, dh, ph, sh), blocks(ow, kw, dw, pw, sw));
    let length = sizes[ndim - 1];
    let params = format!(
        "Given output_size=({oh}, {ow}), kernel_size=({kh}, {kw}), dilation=({dh}, {dw}), padding=({ph}, {pw}), stride=({sh}, {sw}), "
    );
    if i128::from(length) != bh * bw {
        return Err(Error::runtime(format!(
            "{params}expected size of input's dimension 2 to match the calculated number of sliding blocks {bh} * {bw} = {}, but got input.size(2)={length}.",
            bh * bw
        )));
    }
    if bh < 1 || bw < 1 {
        return Err(Error::runtime(format!(
            "{params}calculated shape of the array of sliding blocks as ({bh}, {bw}), which is too small (non-positive)"
        )));
    }
    if ow < 1 || oh < 1 {
        return Err(Error::runtime(format!(
            "Expected output spatial size to be positive, but got: output_size=({oh}, {ow})."
        )));
    }
    let (dtype, device) = dtype_and_device(self_)?;
    let mut shape = if batched { vec![sizes[0]] } else { vec![] };
    shape.extend([planes / kernel, oh, ow]);
    new_strided(
        &shape,
        &strides_for(&shape, MemoryFormat::Contiguous)?,
        dtype,
        device,
    )
}
