//! Meta function of `max_pool2d_with_indices`: PyTorch's parameter and
//! shape checks, the pooled shape (`pooling_output_shape`), and the values
//! and int64 indices outputs in the input's suggested memory format.
//! [`Pool2d`] is the checked geometry a backend's impl reads back.

use c10_core::{Error, MemoryFormat, Result, ScalarType};

use super::{dtype_and_device, new_strided};
use crate::native::{dims::fmt_list, factories::strides_for};
use crate::structured::{MetaOutput, SetOutput};
use crate::Tensor;

/// A one- or two-element int list as a pair (`expand_param_if_needed`);
/// `op` and `name` start the error.
pub fn pair(v: &[i64], name: &str, op: &str) -> Result<(i64, i64)> {
    match *v {
        [a] => Ok((a, a)),
        [a, b] => Ok((a, b)),
        _ => Err(Error::runtime(format!(
            "{op}: {name} must either be a single int, or a tuple of two ints"
        ))),
    }
}

/// The checked parameters of a 2-d max pooling: `(height, width)` pairs.
#[derive(Copy, Clone, Debug)]
pub struct Pool2d {
    /// The window.
    pub kernel: (i64, i64),
    /// The step (the window, when none is given).
    pub stride: (i64, i64),
    /// The implicit negative-infinity padding.
    pub padding: (i64, i64),
    /// The spacing of the window's elements.
    pub dilation: (i64, i64),
}

impl Pool2d {
    /// The parameters of `max_pool2d`, checked as PyTorch checks them.
    pub fn new(
        kernel_size: &[i64],
        stride: &[i64],
        padding: &[i64],
        dilation: &[i64],
    ) -> Result<Pool2d> {
        Pool2d::checked("max_pool2d", kernel_size, stride, padding, dilation)
    }

    /// The parameters of pooling operator `op`, checked as PyTorch checks
    /// them.
    pub fn checked(
        op: &str,
        kernel_size: &[i64],
        stride: &[i64],
        padding: &[i64],
        dilation: &[i64],
    ) -> Result<Pool2d> {
        let kernel = pair(kernel_size, "kernel_size", op)?;
        let stride = if stride.is_empty() {
            kernel
        } else {
            pair(stride, "stride", op)?
        };
        let padding = pair(padding, "padding", op)?;
        let dilation = pair(dilation, "dilation", op)?;
        let ((kh, kw), (sh, sw), (dh, dw)) = (kernel, stride, dilation);
        if kh <= 0 || kw <= 0 {
            return Err(Error::runtime(format!(
                "kernel size should be greater than zero, but got kH: {kh} kW: {kw}"
            )));
        }
        if sh <= 0 || sw <= 0 {
            return Err(Error::runtime(format!(
                "stride should be greater than zero, but got dH: {sh} dW: {sw}"
            )));
        }
        if dh <= 0 || dw <= 0 {
            return Err(Error::runtime(format!(
                "dilation should be greater than zero, but got dilationH: {dh} dilationW: {dw}"
            )));
        }
        Ok(Pool2d {
            kernel,
            stride,
            padding,
            dilation,
        })
    }
}

/// PyTorch's `pooling_output_shape`, in `i128` (the arguments are any
/// `i64`).
fn pooling_output_shape(
    input: i64,
    kernel: i64,
    pad: i64,
    stride: i64,
    dilation: i64,
    ceil_mode: bool,
) -> Result<i64> {
    let (input, kernel, pad, stride, dilation) = (
        i128::from(input),
        i128::from(kernel),
        i128::from(pad),
        i128::from(stride),
        i128::from(dilation),
    );
    let numerator =
        input + 2 * pad - dilation * (kernel - 1) - 1 + if ceil_mode { stride - 1 } else { 0 };
    let mut out = numerator.div_euclid(stride) + 1;
    if ceil_mode && (out - 1) * stride >= input + pad {
        out -= 1;
    }
    i64::try_from(out).map_err(|_| Error::runtime("max_pool2d: the output size overflows"))
}

/// `max_pool2d_with_indices(self, kernel_size, stride, padding, dilation,
/// ceil_mode)`: the pooled values (`self`'s dtype) and their int64
/// positions in the input plane.
pub fn max_pool2d_with_indices(
    out: SetOutput<'_>,
    self_: &Tensor,
    kernel_size: &[i64],
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    ceil_mode: bool,
) -> Result<MetaOutput<2>> {
    let (dtype, device) = dtype_and_device(self_)?;
    let p = Pool2d::new(kernel_size, stride, padding, dilation)?;
    let sizes = self_.sizes();
    let ndim = sizes.len();
    // The outputs take the input's suggested memory format.
    let format = MemoryFormat::suggest(&sizes, &self_.strides());
    match format {
        MemoryFormat::ChannelsLast if ndim != 4 => {
            return Err(Error::runtime(
                "non-empty 4D (batch mode) tensor expected for input with channels_last layout",
            ))
        }
        MemoryFormat::ChannelsLast | MemoryFormat::Contiguous => {}
        _ => {
            return Err(Error::runtime(
                "Unsupported memory format. Supports only ChannelsLast, Contiguous",
            ))
        }
    }
    if !(ndim == 3 || ndim == 4) || sizes[ndim - 3..].contains(&0) {
        return Err(Error::runtime(format!(
            "non-empty 3D or 4D (batch mode) tensor expected for input, but got: {}",
            fmt_list(&sizes)
        )));
    }
    let (ph, pw) = p.padding;
    if ph < 0 || pw < 0 {
        return Err(Error::runtime(format!(
            "pad must be non-negative, but got pad: {}",
            if ph < 0 { ph } else { pw }
        )));
    }
    let half_kernel = |k: i64, d: i64| ((i128::from(k) - 1) * i128::from(d) + 1) / 2;
    for (pad, k, d) in [
        (ph, p.kernel.0, p.dilation.0),
        (pw, p.kernel.1, p.dilation.1),
    ] {
        if i128::from(pad) > half_kernel(k, d) {
            return Err(Error::runtime(format!(
                "pad should be at most half of effective kernel size, but got pad={pad}, kernel_size={k} and dilation={d}"
            )));
        }
    }
    let (c, h, w) = (sizes[ndim - 3], sizes[ndim - 2], sizes[ndim - 1]);
    let oh = pooling_output_shape(h, p.kernel.0, ph, p.stride.0, p.dilation.0, ceil_mode)?;
    let ow = pooling_output_shape(w, p.kernel.1, pw, p.stride.1, p.dilation.1, ceil_mode)?;
    if oh < 1 || ow < 1 {
        return Err(Error::runtime(format!(
            "Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{oh}x{ow}). Output size is too small"
        )));
    }
    let mut shape = sizes[..ndim - 2].to_vec();
    shape.extend([oh, ow]);
    let strides = strides_for(&shape, format)?;
    out.set_outputs(
        [
            (&shape, Some(&strides), dtype),
            (&shape, Some(&strides), ScalarType::Long),
        ],
        device,
    )
}

/// The checked geometry of `avg_pool2d(self, kernel_size, stride, padding,
/// ceil_mode)` (PyTorch's `TORCH_META_FUNC(avg_pool2d)` checks).
pub fn avg_pool2d_geometry(
    self_: &Tensor,
    kernel_size: &[i64],
    stride: &[i64],
    padding: &[i64],
    ceil_mode: bool,
) -> Result<crate::native::backward::AvgPool2dGeometry> {
    let p = Pool2d::checked("avg_pool2d", kernel_size, stride, padding, &[1])?;
    let (kernel, stride, padding) = (p.kernel, p.stride, p.padding);
    let ((kh, kw), (sh, sw), (ph, pw)) = (kernel, stride, padding);
    if ph < 0 || pw < 0 {
        return Err(Error::runtime(format!(
            "pad must be non-negative, but got pad: {}",
            if ph < 0 { ph } else { pw }
        )));
    }
    if ph > kh / 2 || pw > kw / 2 {
        return Err(Error::runtime(format!(
            "pad should be at most half of effective kernel size, but got pad={}, kernel_size={} and dilation=1",
            if ph > kh / 2 { ph } else { pw },
            if ph > kh / 2 { kh } else { kw }
        )));
    }
    let sizes = self_.sizes();
    let ndim = sizes.len();
    if !(ndim == 3 || ndim == 4) || sizes[ndim - 3..].contains(&0) {
        return Err(Error::runtime(format!(
            "non-empty 3D or 4D (batch mode) tensor expected for input, but got: {}",
            fmt_list(&sizes)
        )));
    }
    let (c, h, w) = (sizes[ndim - 3], sizes[ndim - 2], sizes[ndim - 1]);
    let oh = pooling_output_shape(h, kh, ph, sh, 1, ceil_mode)?;
    let ow = pooling_output_shape(w, kw, pw, sw, 1, ceil_mode)?;
    if oh < 1 || ow < 1 {
        return Err(Error::runtime(format!(
            "Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{oh}x{ow}). Output size is too small"
        )));
    }
    Ok(crate::native::backward::AvgPool2dGeometry {
        kernel,
        stride,
        padding,
        out: (oh, ow),
    })
}

/// `avg_pool2d(self, kernel_size, stride, padding, ceil_mode,
/// count_include_pad, divisor_override)`: the pooled shape, in the input's
/// suggested memory format.
#[allow(clippy::too_many_arguments)]
pub fn avg_pool2d(
    out: SetOutput<'_>,
    self_: &Tensor,
    kernel_size: &[i64],
    stride: &[i64],
    padding: &[i64],
    ceil_mode: bool,
    _count_include_pad: bool,
    divisor_override: Option<i64>,
) -> Result<MetaOutput> {
    if divisor_override == Some(0) {
        return Err(Error::runtime("divisor must be not zero"));
    }
    let g = avg_pool2d_geometry(self_, kernel_size, stride, padding, ceil_mode)?;
    let (dtype, device) = dtype_and_device(self_)?;
    let sizes = self_.sizes();
    let mut shape = sizes[..sizes.len() - 2].to_vec();
    shape.extend([g.out.0, g.out.1]);
    let format = MemoryFormat::suggest(&sizes, &self_.strides());
    let strides = strides_for(&shape, format)?;
    out.set_outputs([(&shape, Some(&strides), dtype)], device)
}

/// The gradient of an input of a 2-d pooling: `self`'s shape, dtype and
/// suggested memory format, after checking `grad_output`'s shape.
fn pool_grad_input(
    out: SetOutput<'_>,
    grad_output: &Tensor,
    self_: &Tensor,
    expected: (i64, i64),
) -> Result<MetaOutput> {
    let (dtype, device) = dtype_and_device(self_)?;
    let sizes = self_.sizes();
    let gs = grad_output.sizes();
    let mut want = sizes[..sizes.len() - 2].to_vec();
    want.extend([expected.0, expected.1]);
    if gs.len() != want.len() || gs.iter().zip(&want).any(|(a, b)| a != b) {
        return Err(Error::runtime(format!(
            "Expected grad_output to have the shape {}, but got {}",
            fmt_list(&want),
            fmt_list(&gs)
        )));
    }
    let format = MemoryFormat::suggest(&sizes, &self_.strides());
    let strides = strides_for(&sizes, format)?;
    out.set_outputs([(&sizes, Some(&strides), dtype)], device)
}

/// `avg_pool2d_backward(grad_output, self, ...)`: the input's gradient.
#[allow(clippy::too_many_arguments)]
pub fn avg_pool2d_backward(
    out: SetOutput<'_>,
    grad_output: &Tensor,
    self_: &Tensor,
    kernel_size: &[i64],
    stride: &[i64],
    padding: &[i64],
    ceil_mode: bool,
    _count_include_pad: bool,
    divisor_override: Option<i64>,
) -> Result<MetaOutput> {
    if divisor_override == Some(0) {
        return Err(Error::runtime("divisor must be not zero"));
    }
    let g = avg_pool2d_geometry(self_, kernel_size, stride, padding, ceil_mode)?;
    pool_grad_input(out, grad_output, self_, g.out)
}

/// `max_pool2d_with_indices_backward(grad_output, self, ..., indices)`:
/// the input's gradient.
#[allow(clippy::too_many_arguments)]
pub fn max_pool2d_with_indices_backward(
    out: SetOutput<'_>,
    grad_output: &Tensor,
    self_: &Tensor,
    kernel_size: &[i64],
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    ceil_mode: bool,
    indices: &Tensor,
) -> Result<MetaOutput> {
    let p = Pool2d::new(kernel_size, stride, padding, dilation)?;
    let sizes = self_.sizes();
    if sizes.len() < 3 {
        return Err(Error::runtime(format!(
            "non-empty 3D or 4D (batch mode) tensor expected for input, but got: {}",
            fmt_list(&sizes)
        )));
    }
    let (h, w) = (sizes[sizes.len() - 2], sizes[sizes.len() - 1]);
    let oh = pooling_output_shape(
        h,
        p.kernel.0,
        p.padding.0,
        p.stride.0,
        p.dilation.0,
        ceil_mode,
    )?;
    let ow = pooling_output_shape(
        w,
        p.kernel.1,
        p.padding.1,
        p.stride.1,
        p.dilation.1,
        ceil_mode,
    )?;
    if indices.sizes() != grad_output.sizes() {
        return Err(Error::runtime(
            "max_pool2d_with_indices_backward: indices must have grad_output's shape",
        ));
    }
    pool_grad_input(out, grad_output, self_, (oh, ow))
}

/// An `N`-element int list of a pooling parameter: one int repeated, or
/// `N` ints (`kernel_size`, `padding`, ...); `message` is PyTorch's error
/// for any other length. Each value must fit an `int`, as PyTorch's
/// `safe_downcast` requires.
pub fn expand_param<const N: usize>(v: &[i64], message: &str) -> Result<[i64; N]> {
    let out = match v.len() {
        1 => [v[0]; N],
        n if n == N => std::array::from_fn(|i| v[i]),
        _ => return Err(Error::runtime(message)),
    };
    if out.iter().any(|&x| i32::try_from(x).is_err()) {
        return Err(Error::runtime("integer out of range"));
    }
    Ok(out)
}

/// The checked window of a 3-d pooling (`(depth, height, width)`
/// triples), as the 3-d pooling operators parse their parameters.
#[derive(Copy, Clone, Debug)]
pub struct Pool3d {
    /// The window.
    pub kernel: [i64; 3],
    /// The step (the window, when none is given).
    pub stride: [i64; 3],
    /// The implicit padding on each side.
    pub padding: [i64; 3],
    /// The spacing of the window's elements.
    pub dilation: [i64; 3],
}

impl Pool3d {
    /// The parameters of `max_pool3d_with_indices` (`op` `"max_pool3d"`)
    /// or `avg_pool3d` (`"avg_pool3d"`, no dilation), with PyTorch's
    /// messages for lists of the wrong length.
    pub fn parse(
        op: &str,
        kernel_size: &[i64],
        stride: &[i64],
        padding: &[i64],
        dilation: Option<&[i64]>,
    ) -> Result<Pool3d> {
        let avg = op == "avg_pool3d";
        let either = if avg { "" } else { "either " };
        let kernel = expand_param(
            kernel_size,
            &format!("{op}: kernel_size must {either}be a single int, or a tuple of three ints"),
        )?;
        let stride = if stride.is_empty() {
            kernel
        } else {
            expand_param(
                stride,
                &format!(
                    "{op}: stride must {either}be omitted, a single int, or a tuple of three ints"
                ),
            )?
        };
        let padding = expand_param(
            padding,
            &format!("{op}: padding must {either}be a single int, or a tuple of three ints"),
        )?;
        let dilation = match dilation {
            Some(d) => expand_param(
                d,
                &format!("{op}: dilation must be either a single int, or a tuple of three ints"),
            )?,
            None => [1; 3],
        };
        Ok(Pool3d {
            kernel,
            stride,
            padding,
            dilation,
        })
    }

    /// The pooled `(depth, height, width)` of `input` (its last three
    /// sizes), after PyTorch's `pooling_output_shape` and
    /// `pool3d_shape_check` (`fn_name` starts its messages; `avg` adds
    /// the average pooling's window-fits-input check).
    pub fn output_size(
        &self,
        input: &Tensor,
        ceil_mode: bool,
        fn_name: &str,
        avg: bool,
    ) -> Result<[i64; 3]> {
        let sizes = input.sizes();
        let ndim = sizes.len();
        let (k, s, p, d) = (self.kernel, self.stride, self.padding, self.dilation);
        let spatial: [i64; 3] = std::array::from_fn(|i| sizes[ndim - 3 + i]);
        let mut out = [0i64; 3];
        for i in 0..3 {
            if s[i] == 0 {
                return Err(Error::runtime("stride should not be zero"));
            }
            if p[i] < 0 {
                return Err(Error::runtime(format!(
                    "pad must be non-negative, but got pad: {}",
                    p[i]
                )));
            }
            let effective = (i128::from(k[i]) - 1) * i128::from(d[i]) + 1;
            if i128::from(p[i]) > effective / 2 {
                return Err(Error::runtime(format!(
                    "pad should be at most half of effective kernel size, but got pad={}, kernel_size={} and dilation={}",
                    p[i], k[i], d[i]
                )));
            }
            out[i] = pooling_output_shape(spatial[i], k[i], p[i], s[i], d[i], ceil_mode)?;
        }
        if k.iter().any(|&v| v <= 0) {
            return Err(Error::runtime(format!(
                "kernel size should be greater than zero, but got kT: {} kH: {} kW: {}",
                k[0], k[1], k[2]
            )));
        }
        if s.iter().any(|&v| v <= 0) {
            return Err(Error::runtime(format!(
                "stride should be greater than zero, but got dT: {} dH: {} dW: {}",
                s[0], s[1], s[2]
            )));
        }
        if d.iter().any(|&v| v <= 0) {
            return Err(Error::runtime(format!(
                "dilation should be greater than zero, but got dilationT: {} dilationH: {} dilationW: {}",
                d[0], d[1], d[2]
            )));
        }
        if ndim != 4 && ndim != 5 {
            return Err(Error::runtime(format!(
                "{fn_name}: Expected 4D or 5D tensor for input, but got: {}",
                fmt_list(&sizes)
            )));
        }
        for (i, &size) in sizes.iter().enumerate() {
            if !(ndim == 5 && i == 0) && size <= 0 {
                return Err(Error::runtime(format!(
                    "{fn_name}: Expected input's non-batch dimensions to have positive length, but input has a shape of {} and non-batch dimension {size} has length zero!",
                    fmt_list(&sizes)
                )));
            }
        }
        if avg && (spatial[0] < k[0] || spatial[1] < k[1] || spatial[2] < k[2]) {
            return Err(Error::runtime(format!(
                "input image (T: {} H: {} W: {}) smaller than kernel size (kT: {} kH: {} kW: {})",
                spatial[0], spatial[1], spatial[2], k[0], k[1], k[2]
            )));
        }
        if (0..3).any(|i| k[i] / 2 < p[i]) {
            let eff = |i: usize| (k[i] - 1) * d[i] + 1;
            return Err(Error::runtime(format!(
                "pad should be smaller than or equal to half of effective kernel size, but got padT: {} padW: {} padH: {} effectiveKT: {} effectiveKW: {} effectiveKH: {}",
                p[0], p[2], p[1], eff(0), eff(2), eff(1)
            )));
        }
        if out.iter().any(|&o| o < 1) {
            return Err(Error::runtime(format!(
                "Given input size: ({}x{}x{}x{}). Calculated output size: ({}x{}x{}x{}). Output size is too small",
                sizes[ndim - 4], spatial[0], spatial[1], spatial[2],
                sizes[ndim - 4], out[0], out[1], out[2]
            )));
        }
        Ok(out)
    }
}

/// The memory format of a 3-d pooling's output: the input's suggested
/// one, with PyTorch's rank checks (`op`'s messages).
pub fn pool3d_memory_format(input: &Tensor) -> Result<MemoryFormat> {
    let format = MemoryFormat::suggest(&input.sizes(), &input.strides());
    let ndim = input.dim();
    match format {
        MemoryFormat::ChannelsLast3d if ndim != 5 => Err(Error::runtime(
            "non-empty 5D (batch mode) tensor expected for input with channels_last_3d layout",
        )),
        MemoryFormat::ChannelsLast3d => Ok(format),
        _ if ndim != 4 && ndim != 5 => Err(Error::runtime(
            "non-empty 4D or 5D (batch mode) tensor expected for input",
        )),
        _ => Ok(MemoryFormat::Contiguous),
    }
}

/// The sizes and strides of a 3-d pooling's output: `input`'s leading
/// sizes with `spatial` last, in `format` for a batched (5-d) input.
pub fn pool3d_output_layout(
    input: &Tensor,
    spatial: [i64; 3],
    format: MemoryFormat,
) -> Result<(Vec<i64>, Vec<i64>)> {
    let sizes = input.sizes();
    let mut shape = sizes[..sizes.len() - 3].to_vec();
    shape.extend(spatial);
    let format = if shape.len() == 5 {
        format
    } else {
        MemoryFormat::Contiguous
    };
    let strides = strides_for(&shape, format)?;
    Ok((shape, strides))
}

/// `avg_pool3d(self, kernel_size, stride, padding, ceil_mode,
/// count_include_pad, divisor_override)`: the pooled shape, contiguous.
#[allow(clippy::too_many_arguments)]
pub fn avg_pool3d(
    out: SetOutput<'_>,
    self_: &Tensor,
    kernel_size: &[i64],
    stride: &[i64],
    padding: &[i64],
    ceil_mode: bool,
    _count_include_pad: bool,
    divisor_override: Option<i64>,
) -> Result<MetaOutput> {
    let p = Pool3d::parse("avg_pool3d", kernel_size, stride, padding, None)?;
    // Checks the rank; the output is contiguous whatever the input's
    // format (PyTorch's meta function sets no memory format).
    pool3d_memory_format(self_)?;
    if divisor_override == Some(0) {
        return Err(Error::runtime("divisor must be not zero"));
    }
    let spatial = p.output_size(self_, ceil_mode, "avg_pool3d()", true)?;
    let (dtype, device) = dtype_and_device(self_)?;
    let (shape, strides) = pool3d_output_layout(self_, spatial, MemoryFormat::Contiguous)?;
    out.set_outputs([(&shape, Some(&strides), dtype)], device)
}

/// `max_pool3d_with_indices(self, kernel_size, stride, padding, dilation,
/// ceil_mode)`: the pooled values and their int64 positions in each input
/// volume, a batched input's suggested memory format.
pub fn max_pool3d_with_indices_meta(
    self_: &Tensor,
    kernel_size: &[i64],
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    ceil_mode: bool,
) -> Result<(Tensor, Tensor)> {
    let p = Pool3d::parse("max_pool3d", kernel_size, stride, padding, Some(dilation))?;
    let format = pool3d_memory_format(self_)?;
    let spatial = p.output_size(
        self_,
        ceil_mode,
        "max_pool3d_with_indices_out_cpu_template()",
        false,
    )?;
    let (dtype, device) = dtype_and_device(self_)?;
    let (shape, strides) = pool3d_output_layout(self_, spatial, format)?;
    Ok((
        new_strided(&shape, &strides, dtype, device)?,
        new_strided(&shape, &strides, ScalarType::Long, device)?,
    ))
}

/// The checked output sizes of an adaptive pooling (no negative size).
fn adaptive_output_size(output_size: &[i64], n: usize, op: &str, sizes: &[i64]) -> Result<()> {
    if output_size.len() != n {
        return Err(Error::runtime(format!("{op}: output_size must be {n}")));
    }
    if let Some(&bad) = output_size.iter().find(|&&s| s < 0) {
        let mut shape = sizes[..sizes.len().saturating_sub(n)].to_vec();
        shape.extend(output_size);
        return Err(Error::runtime(format!(
            "Trying to create tensor with negative dimension {bad}: {}",
            fmt_list(&shape)
        )));
    }
    Ok(())
}

/// `_adaptive_avg_pool2d(self, output_size)`: a batched input's suggested
/// memory format.
pub fn adaptive_avg_pool2d_meta(self_: &Tensor, output_size: &[i64]) -> Result<Tensor> {
    let sizes = self_.sizes();
    let ndim = sizes.len();
    if output_size.len() != 2 {
        return Err(Error::runtime("adaptive_avg_pool2d: output_size must be 2"));
    }
    if ndim != 3 && ndim != 4 {
        return Err(Error::runtime(format!(
            "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {}",
            fmt_list(&sizes)
        )));
    }
    for d in [ndim - 2, ndim - 1] {
        if sizes[d] <= 0 {
            return Err(Error::runtime(format!(
                "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, but input has sizes {} with dimension {d} being empty",
                fmt_list(&sizes)
            )));
        }
    }
    adaptive_output_size(output_size, 2, "adaptive_avg_pool2d", &sizes)?;
    let (dtype, device) = dtype_and_device(self_)?;
    let mut shape = sizes[..ndim - 2].to_vec();
    shape.extend(output_size);
    let format = if ndim == 4 {
        MemoryFormat::suggest(&sizes, &self_.strides())
    } else {
        MemoryFormat::Contiguous
    };
    new_strided(&shape, &strides_for(&shape, format)?, dtype, device)
}

/// `_adaptive_avg_pool2d_backward(grad_output, self)`: `self`'s shape in
/// its suggested memory format.
pub fn adaptive_avg_pool2d_backward_meta(grad_output: &Tensor, self_: &Tensor) -> Result<Tensor> {
    let gs = grad_output.sizes();
    let ndim = gs.len();
    for (d, &size) in gs.iter().enumerate().skip(1) {
        if size <= 0 {
            return Err(Error::runtime(format!(
                "adaptive_avg_pool2d_backward(): Expected grad_output to have non-zero size for non-batch dimensions, but grad_output has sizes {} with dimension {d} being empty",
                fmt_list(&gs)
            )));
        }
    }
    if ndim != 3 && ndim != 4 {
        return Err(Error::runtime(format!(
            "adaptive_avg_pool2d_backward(): Expected 3D or 4D tensor, but got {}",
            fmt_list(&self_.sizes())
        )));
    }
    let (dtype, device) = dtype_and_device(self_)?;
    let gdtype = dtype_and_device(grad_output)?.0;
    if dtype != gdtype {
        return Err(Error::runtime(format!(
            "expected dtype {dtype} for `grad_output` but got dtype {gdtype}"
        )));
    }
    let sizes = self_.sizes();
    if sizes.len() != ndim || sizes[..ndim - 2] != gs[..ndim - 2] {
        return Err(Error::runtime(format!(
            "adaptive_avg_pool2d_backward(): grad_output of sizes {} does not match the input of sizes {}",
            fmt_list(&gs),
            fmt_list(&sizes)
        )));
    }
    let format = MemoryFormat::suggest(&sizes, &self_.strides());
    new_strided(&sizes, &strides_for(&sizes, format)?, dtype, device)
}

/// `_adaptive_avg_pool3d(self, output_size)`: contiguous.
pub fn adaptive_avg_pool3d_meta(self_: &Tensor, output_size: &[i64]) -> Result<Tensor> {
    let sizes = self_.sizes();
    if output_size.len() != 3 {
        return Err(Error::runtime("adaptive_avg_pool3d: output_size must be 3"));
    }
    for (d, &size) in sizes.iter().enumerate().skip(1) {
        if size <= 0 {
            return Err(Error::runtime(format!(
                "adaptive_avg_pool3d(): Expected input to have non-zero size for non-batch dimensions, but input has sizes {} with dimension {d} being empty",
                fmt_list(&sizes)
            )));
        }
    }
    let ndim = sizes.len();
    if ndim != 4 && ndim != 5 {
        return Err(Error::runtime(format!(
            "adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got {}",
            fmt_list(&sizes)
        )));
    }
    adaptive_output_size(output_size, 3, "adaptive_avg_pool3d", &sizes)?;
    let (dtype, device) = dtype_and_device(self_)?;
    let mut shape = sizes[..ndim - 3].to_vec();
    shape.extend(output_size);
    new_strided(
        &shape,
        &strides_for(&shape, MemoryFormat::Contiguous)?,
        dtype,
        device,
    )
}
