//! The checks and output geometry of the 2-d convolution kernels
//! (`_slow_conv2d_forward`, `slow_conv_dilated2d`), shared by their Meta
//! kernels and the CPU kernels, which compute from the geometry.

use c10_core::{Error, Result};

use super::dims::fmt_list;
use crate::meta::dtype_and_device;
use crate::meta::pooling::pair;
use crate::Tensor;

/// A checked 2-d convolution: input `[n, c, h, w]`, weight
/// `[out_channels, c, kernel.0, kernel.1]`, output `[n, out_channels,
/// out_h, out_w]`; pairs are `(height, width)`.
#[derive(Copy, Clone, Debug)]
pub struct Conv2dShape {
    /// Batch size.
    pub n: i64,
    /// Input channels.
    pub channels: i64,
    /// Input height.
    pub height: i64,
    /// Input width.
    pub width: i64,
    /// Output channels.
    pub out_channels: i64,
    /// The kernel's extent.
    pub kernel: (i64, i64),
    /// The step.
    pub stride: (i64, i64),
    /// The zero padding.
    pub padding: (i64, i64),
    /// The spacing of the kernel's elements.
    pub dilation: (i64, i64),
    /// Output height.
    pub out_h: i64,
    /// Output width.
    pub out_w: i64,
}

impl Conv2dShape {
    /// The output's sizes.
    pub fn output_sizes(&self) -> [i64; 4] {
        [self.n, self.out_channels, self.out_h, self.out_w]
    }
}

/// Checks a 2-d convolution's arguments (`name` starts the errors) and
/// computes its geometry.
#[allow(clippy::too_many_arguments)]
pub fn conv2d_shape(
    self_: &Tensor,
    weight: &Tensor,
    kernel_size: &[i64],
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    name: &str,
) -> Result<Conv2dShape> {
    let (kh, kw) = pair(kernel_size, "kernel_size", name)?;
    let (sh, sw) = pair(stride, "stride", name)?;
    let (ph, pw) = pair(padding, "padding", name)?;
    let (dh, dw) = pair(dilation, "dilation", name)?;
    if self_.dim() != 4 || weight.dim() != 4 {
        return Err(Error::runtime(format!(
            "{name}: expected 4-d input and weight, got {}-d and {}-d",
            self_.dim(),
            weight.dim()
        )));
    }
    if kh <= 0 || kw <= 0 {
        return Err(Error::runtime(format!(
            "kernel size should be greater than zero, but got kH: {kh} kW: {kw}"
        )));
    }
    if sh <= 0 || sw <= 0 {
        return Err(Error::runtime("non-positive stride is not supported"));
    }
    if ph < 0 || pw < 0 {
        return Err(Error::runtime("negative padding is not supported"));
    }
    if dh <= 0 || dw <= 0 {
        return Err(Error::runtime("dilation should be greater than zero"));
    }
    let sizes = self_.sizes();
    let (n, c, h, w) = (sizes[0], sizes[1], sizes[2], sizes[3]);
    let oc = weight.size(0)?;
    if weight.sizes() != [oc, c, kh, kw] {
        return Err(Error::runtime(format!(
            "{name}: expected weight of size [{oc}, {c}, {kh}, {kw}] for input {} and kernel_size [{kh}, {kw}], but got {}",
            fmt_list(&sizes),
            fmt_list(&weight.sizes())
        )));
    }
    if let Some(b) = bias {
        if b.dim() != 1 || b.numel() != oc {
            return Err(Error::runtime(format!(
                "{name}: expected bias of size [{oc}], but got {}",
                fmt_list(&b.sizes())
            )));
        }
    }
    let dtype = dtype_and_device(self_)?.0;
    if dtype_and_device(weight)?.0 != dtype || bias.is_some_and(|b| b.dtype() != Some(dtype)) {
        return Err(Error::runtime(format!(
            "{name}: expected input, weight and bias to have the same dtype, but got {}, {} and {}",
            dtype,
            dtype_and_device(weight)?.0,
            bias.and_then(|b| b.dtype())
                .map_or("none".to_string(), |d| d.to_string())
        )));
    }
    // In i128: sizes, paddings and dilations are any i64.
    let wide = i128::from;
    let (padded_h, padded_w) = (wide(h) + 2 * wide(ph), wide(w) + 2 * wide(pw));
    let (span_h, span_w) = (wide(dh) * (wide(kh) - 1) + 1, wide(dw) * (wide(kw) - 1) + 1);
    if padded_h < span_h || padded_w < span_w {
        return Err(Error::runtime(format!(
            "Calculated padded input size per channel: ({padded_h} x {padded_w}). Kernel size: ({span_h} x {span_w}). Kernel size can't be greater than actual input size"
        )));
    }
    // The kernels index the padded input in isize: its extent must fit.
    if padded_h > i128::from(i64::MAX) || padded_w > i128::from(i64::MAX) {
        return Err(Error::runtime(format!(
            "{name}: the padded input size ({padded_h} x {padded_w}) overflows"
        )));
    }
    let out_size = |padded: i128, span: i128, stride: i64| {
        i64::try_from((padded - span) / wide(stride) + 1)
            .map_err(|_| Error::runtime("convolution: the output size overflows"))
    };
    Ok(Conv2dShape {
        n,
        channels: c,
        height: h,
        width: w,
        out_channels: oc,
        kernel: (kh, kw),
        stride: (sh, sw),
        padding: (ph, pw),
        dilation: (dh, dw),
        out_h: out_size(padded_h, span_h, sh)?,
        out_w: out_size(padded_w, span_w, sw)?,
    })
}
