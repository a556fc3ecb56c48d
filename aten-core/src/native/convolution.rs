//! `convolution` (CompositeExplicitAutograd) for 1-, 2- and 3-d inputs,
//! plain and transposed, after PyTorch's `check_shape_forward`:
//!
//! - 1-d convolutions run as 2-d ones over a height of one (PyTorch's
//!   `view1d_as_2d`);
//! - 2-d ones run the backend kernels (`_slow_conv2d_forward`,
//!   `slow_conv_dilated2d`) per group, but depthwise ones (a group per
//!   channel, one filter each), which run the backend's direct kernel
//!   ([`DEPTHWISE_CONV2D_STUB`]) where it has one; transposed 2-d ones are
//!   a matrix product with the weight followed by `col2im`;
//! - 3-d ones are sums of 2-d ones over the kernel's depth slices.
//!
//! The output takes the channels-last format when a 4-d input or weight
//! suggests it (PyTorch's CPU backends' `*_use_channels_last`).

use aten_dispatch::library::__linkme::distributed_slice;
use c10_core::{Device, Error, MemoryFormat, Result};

use super::dims::fmt_list;
use crate::dispatch_stub::{self, StubKernel};
use crate::generated::ops;
use crate::Tensor;

/// A backend's direct depthwise 2-d convolution: `x` (`[N, C, H, W]`) with
/// `weight` (`[C, 1, kh, kw]`), plus the optional `bias` (`[C]`), at the
/// given stride, padding and dilation (two values each, already checked
/// with the shapes by `check_shape_forward`). `Ok(None)` when the kernel
/// does not serve the operands' dtype.
pub type DepthwiseConv2dKernel = fn(
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
) -> Result<Option<Tensor>>;

/// The direct depthwise convolutions of the linked backends, by device
/// type.
#[distributed_slice]
#[linkme(crate = crate::dispatch_stub::__linkme)]
pub static DEPTHWISE_CONV2D_STUB: [StubKernel<DepthwiseConv2dKernel>];

/// A convolution's parameters, each with one value per spatial dimension.
#[derive(Clone, Debug)]
pub struct ConvParams {
    /// The step.
    pub stride: Vec<i64>,
    /// The implicit zero padding on each side.
    pub padding: Vec<i64>,
    /// The spacing of the kernel's elements.
    pub dilation: Vec<i64>,
    /// Whether the convolution is transposed.
    pub transposed: bool,
    /// The extra size on one side of a transposed convolution's output.
    pub output_padding: Vec<i64>,
    /// The channel groups.
    pub groups: i64,
}

/// `v` with one value per spatial dimension (`expand_param_if_needed`).
fn expand_param(v: &[i64], name: &str, dims: usize) -> Result<Vec<i64>> {
    match v.len() {
        1 => Ok(vec![v[0]; dims]),
        n if n == dims => Ok(v.to_vec()),
        _ => Err(Error::runtime(format!(
            "expected {name} to be a single integer value or a list of {dims} values to match the convolution dimensions, but got {name}={}",
            fmt_list(v)
        ))),
    }
}

impl ConvParams {
    /// The parameters of a convolution over `dims` spatial dimensions,
    /// checked as `_convolution` checks them.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        dims: usize,
        stride: &[i64],
        padding: &[i64],
        dilation: &[i64],
        transposed: bool,
        output_padding: &[i64],
        groups: i64,
    ) -> Result<ConvParams> {
        let p = ConvParams {
            stride: expand_param(stride, "stride", dims)?,
            padding: expand_param(padding, "padding", dims)?,
            dilation: expand_param(dilation, "dilation", dims)?,
            transposed,
            output_padding: expand_param(output_padding, "output_padding", dims)?,
            groups,
        };
        if p.padding.iter().any(|&v| v < 0) {
            return Err(Error::runtime("negative padding is not supported"));
        }
        if p.output_padding.iter().any(|&v| v < 0) {
            return Err(Error::runtime("negative output_padding is not supported"));
        }
        if p.stride.iter().any(|&v| v <= 0) {
            return Err(Error::runtime("non-positive stride is not supported"));
        }
        if p.dilation.iter().any(|&v| v <= 0) {
            return Err(Error::runtime("dilation should be greater than zero"));
        }
        if groups <= 0 {
            return Err(Error::runtime("non-positive groups is not supported"));
        }
        Ok(p)
    }

    /// The parameters with a leading height of one (`view1d_as_2d`).
    fn as_2d(&self) -> ConvParams {
        let lead = |v: &[i64], first: i64| [first, v[0]].to_vec();
        ConvParams {
            stride: lead(&self.stride, 1),
            padding: lead(&self.padding, 0),
            dilation: lead(&self.dilation, 1),
            transposed: self.transposed,
            output_padding: lead(&self.output_padding, 0),
            groups: self.groups,
        }
    }

    /// The parameters of the last two dimensions of a 3-d convolution.
    fn inner_2d(&self) -> ConvParams {
        ConvParams {
            stride: self.stride[1..].to_vec(),
            padding: self.padding[1..].to_vec(),
            dilation: self.dilation[1..].to_vec(),
            transposed: self.transposed,
            output_padding: self.output_padding[1..].to_vec(),
            groups: self.groups,
        }
    }
}

/// A plain convolution's padded input per channel against its dilated
/// kernel: no smaller (PyTorch's message), and an extent the kernels can
/// index (PyTorch computes it in int64 and would wrap).
fn check_padded_input(is: &[i64], ws: &[i64], p: &ConvParams) -> Result<()> {
    let k = is.len();
    let wide = i128::from;
    let padded: Vec<i128> = (2..k)
        .map(|i| wide(is[i]) + 2 * wide(p.padding[i - 2]))
        .collect();
    let kernel: Vec<i128> = (2..k)
        .map(|i| wide(p.dilation[i - 2]) * (wide(ws[i]) - 1) + 1)
        .collect();
    let join = |v: &[i128]| {
        v.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(" x ")
    };
    if padded.iter().zip(&kernel).any(|(a, b)| a < b) {
        return Err(Error::runtime(format!(
            "Calculated padded input size per channel: ({}). Kernel size: ({}). Kernel size can't be greater than actual input size",
            join(&padded),
            join(&kernel)
        )));
    }
    if padded.iter().any(|&x| x > i128::from(i64::MAX)) {
        return Err(Error::runtime(format!(
            "convolution: the padded input size ({}) overflows",
            join(&padded)
        )));
    }
    Ok(())
}

/// PyTorch's `check_shape_forward`.
pub fn check_shape_forward(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    p: &ConvParams,
) -> Result<()> {
    let ws = weight.sizes();
    let is = input.sizes();
    let k = is.len();
    let groups = p.groups;
    if ws.len() != k {
        return Err(Error::runtime(format!(
            "Expected {}-dimensional input for {}-dimensional weight {}, but got {k}-dimensional input of size {} instead",
            ws.len(),
            ws.len(),
            fmt_list(&ws),
            fmt_list(&is)
        )));
    }
    if ws[0] < groups {
        return Err(Error::runtime(format!(
            "Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got weight of size {} instead",
            fmt_list(&ws)
        )));
    }
    if ws[0] % groups != 0 {
        return Err(Error::runtime(format!(
            "Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but got weight of size [{}] instead",
            fmt_list(&ws)
        )));
    }
    let bias_sizes = bias.map(|b| b.sizes());
    if !p.transposed {
        let channels = ws[1].checked_mul(groups);
        if channels != Some(is[1]) {
            return Err(Error::runtime(format!(
                "Given groups={groups}, weight of size {}, expected input{} to have {} channels, but got {} channels instead",
                fmt_list(&ws),
                fmt_list(&is),
                ws[1].saturating_mul(groups),
                is[1]
            )));
        }
        if let Some(bs) = &bias_sizes {
            if bs.len() != 1 || bs[0] != ws[0] {
                return Err(Error::runtime(format!(
                    "Given weight of size {}, expected bias to be 1-dimensional with {} elements, but got bias of size {} instead",
                    fmt_list(&ws),
                    ws[0],
                    fmt_list(bs)
                )));
            }
        }
        check_padded_input(&is, &ws, p)?;
    } else {
        if is[1] != ws[0] {
            return Err(Error::runtime(format!(
                "Given transposed=1, weight of size {}, expected input{} to have {} channels, but got {} channels instead",
                fmt_list(&ws),
                fmt_list(&is),
                ws[0],
                is[1]
            )));
        }
        let out_channels = ws[1].saturating_mul(groups);
        if let Some(bs) = &bias_sizes {
            if bs.len() != 1 || bs[0] != out_channels {
                return Err(Error::runtime(format!(
                    "Given transposed=1, weight of size {}, expected bias to be 1-dimensional with {out_channels} elements, but got bias of size {} instead",
                    fmt_list(&ws),
                    fmt_list(bs)
                )));
            }
        }
    }
    Ok(())
}

/// The spatial output sizes of a transposed convolution of `input` with
/// `weight`, after the transposed kernels' checks.
fn transposed_output_size(input: &[i64], weight: &[i64], p: &ConvParams) -> Result<Vec<i64>> {
    let dims = input.len() - 2;
    for i in 0..dims {
        let (op, s, d) = (p.output_padding[i], p.stride[i], p.dilation[i]);
        if !(op < s || op < d) {
            let all = |v: &[i64]| fmt_list(v);
            return Err(Error::runtime(format!(
                "output padding must be smaller than either stride or dilation, but got output_padding: {}, stride: {}, dilation: {}",
                all(&p.output_padding),
                all(&p.stride),
                all(&p.dilation)
            )));
        }
    }
    let out: Vec<i128> = (0..dims)
        .map(|i| {
            let wide = i128::from;
            (wide(input[i + 2]) - 1) * wide(p.stride[i]) - 2 * wide(p.padding[i])
                + wide(p.dilation[i]) * (wide(weight[i + 2]) - 1)
                + wide(p.output_padding[i])
                + 1
        })
        .collect();
    if out.iter().any(|&o| o < 1) {
        let join = |v: &mut dyn Iterator<Item = String>| v.collect::<Vec<_>>().join(" x ");
        return Err(Error::runtime(format!(
            "Given input size per channel: ({}). Calculated output size per channel: ({}). Output size is too small",
            join(&mut input[2..].iter().map(|v| v.to_string())),
            join(&mut out.iter().map(|v| v.to_string()))
        )));
    }
    out.into_iter()
        .map(|o| {
            i64::try_from(o).map_err(|_| Error::runtime("convolution: the output size overflows"))
        })
        .collect()
}

/// The memory format of a 2-d convolution's result (and gradients): the
/// channels-last format when the input or the weight suggests it.
pub fn conv_memory_format(input: &Tensor, weight: &Tensor) -> MemoryFormat {
    let cl = |t: &Tensor| {
        t.dim() == 4
            && MemoryFormat::suggest(&t.sizes(), &t.strides()) == MemoryFormat::ChannelsLast
    };
    if cl(input) || cl(weight) {
        MemoryFormat::ChannelsLast
    } else {
        MemoryFormat::Contiguous
    }
}

/// `t` with exactly the strides a fresh tensor of `format` has (a copy
/// only when its strides differ), as PyTorch's kernels allocate their
/// results.
pub fn restride(t: Tensor, format: MemoryFormat) -> Result<Tensor> {
    let sizes = t.sizes();
    let strides = super::factories::strides_for(&sizes, format)?;
    if t.strides()[..] == strides[..] {
        return Ok(t);
    }
    let out = ops::empty_strided_with(
        &sizes,
        &strides,
        ops::EmptyStridedOptions {
            dtype: t.dtype(),
            device: t.device(),
            ..Default::default()
        },
    )?;
    ops::copy_(&out, &t)?;
    Ok(out)
}

/// A plain 2-d convolution: the backend kernels, one call per group.
fn conv2d_plain(x: &Tensor, w: &Tensor, bias: Option<&Tensor>, p: &ConvParams) -> Result<Tensor> {
    let ws = w.sizes();
    let kernel = [ws[2], ws[3]];
    let dilated = p.dilation.iter().any(|&d| d != 1);
    let one = |x: &Tensor, w: &Tensor, b: Option<&Tensor>| {
        if dilated {
            ops::slow_conv_dilated2d_with(
                x,
                w,
                &kernel,
                ops::SlowConvDilated2dOptions {
                    bias: b,
                    stride: &p.stride,
                    padding: &p.padding,
                    dilation: &p.dilation,
                },
            )
        } else {
            ops::_slow_conv2d_forward(x, w, &kernel, b, &p.stride, &p.padding)
        }
    };
    let groups = p.groups;
    if groups == 1 {
        return one(x, w, bias);
    }
    if ws[1] == 1 && ws[0] == groups && x.dim() == 4 && x.device() == Some(Device::CPU) {
        return conv2d_depthwise(x, w, bias, p);
    }
    let (cin, cout) = (ws[1], ws[0] / groups);
    let parts = (0..groups)
        .map(|g| {
            let xg = ops::narrow(x, 1, g * cin, cin)?;
            let wg = ops::narrow(w, 0, g * cout, cout)?;
            let bg = bias
                .map(|b| ops::narrow(b, 0, g * cout, cout))
                .transpose()?;
            one(&xg, &wg, bg.as_ref())
        })
        .collect::<Result<Vec<_>>>()?;
    ops::cat_with(&parts, ops::CatOptions { dim: 1 })
}

/// A depthwise 2-d convolution (a group per input channel, one output
/// channel each: MobileNet's and EfficientNet's): the backend's direct
/// kernel where it has one for the dtype; else the input unfolded once
/// (`im2col`, `[N, C * kh * kw, positions]`) and each channel's taps times
/// its unfolded windows in one batched product, where the general path
/// makes a convolution per channel and joins them (measured faster than
/// elementwise products summed over the taps). On CPU, where `im2col`
/// has its kernel.
fn conv2d_depthwise(
    x: &Tensor,
    w: &Tensor,
    bias: Option<&Tensor>,
    p: &ConvParams,
) -> Result<Tensor> {
    let direct = x
        .device()
        .and_then(|d| dispatch_stub::find(&DEPTHWISE_CONV2D_STUB, d.device_type()));
    if let Some(kernel) = direct {
        if let Some(y) = kernel(x, w, bias, &p.stride, &p.padding, &p.dilation)? {
            return Ok(y);
        }
    }
    let (is, ws) = (x.sizes(), w.sizes());
    let (n, c, h, wd) = (is[0], is[1], is[2], is[3]);
    let (kh, kw) = (ws[2], ws[3]);
    let cols = ops::im2col(x, &[kh, kw], &p.dilation, &p.padding, &p.stride)?;
    // `im2col` checked the geometry: the output extent is positive and fits.
    let extent = |size: i64, k: i64, i: usize| {
        let wide = i128::from;
        let o = (wide(size) + 2 * wide(p.padding[i]) - wide(p.dilation[i]) * (wide(k) - 1) - 1)
            / wide(p.stride[i])
            + 1;
        i64::try_from(o).map_err(|_| Error::runtime("convolution: the sizes overflow"))
    };
    let (oh, ow) = (extent(h, kh, 0)?, extent(wd, kw, 1)?);
    let taps = kh * kw;
    let cols = ops::reshape(&cols, &[n, c, taps, oh * ow])?;
    let y = ops::matmul(&ops::reshape(w, &[c, 1, taps])?, &cols)?;
    with_channel_bias(ops::reshape(&y, &[n, c, oh, ow])?, bias)
}

/// `y` (`[N, C, H, W]`) plus one bias per channel, when given.
fn with_channel_bias(y: Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
    match bias {
        Some(b) => ops::add_tensor(&y, &ops::reshape(b, &[1, -1, 1, 1])?),
        None => Ok(y),
    }
}

/// A transposed 2-d convolution: each input position's channels times
/// the weight give the columns `col2im` sums into the output.
fn conv2d_transposed(
    x: &Tensor,
    w: &Tensor,
    bias: Option<&Tensor>,
    p: &ConvParams,
) -> Result<Tensor> {
    let (is, ws) = (x.sizes(), w.sizes());
    let out = transposed_output_size(&is, &ws, p)?;
    let (n, cin, h, wd) = (is[0], is[1], is[2], is[3]);
    let g = p.groups;
    let (cin_g, cout_g, kh, kw) = (cin / g, ws[1], ws[2], ws[3]);
    let too_large = || Error::runtime("convolution: the sizes overflow");
    let positions = h.checked_mul(wd).ok_or_else(too_large)?;
    let taps = cout_g
        .checked_mul(kh)
        .and_then(|v| v.checked_mul(kw))
        .ok_or_else(too_large)?;
    let xr = ops::reshape(x, &[n, g, cin_g, positions])?;
    let wr = ops::transpose_int(&ops::reshape(w, &[g, cin_g, taps])?, 1, 2)?;
    let cols = ops::matmul(&wr, &xr)?;
    let channels = g.checked_mul(taps).ok_or_else(too_large)?;
    let cols = ops::reshape(&cols, &[n, channels, positions])?;
    let y = ops::col2im(&cols, &out, &[kh, kw], &p.dilation, &p.padding, &p.stride)?;
    with_channel_bias(y, bias)
}

/// A 3-d convolution as sums of 2-d ones over the kernel's depth.
fn conv3d(x: &Tensor, w: &Tensor, bias: Option<&Tensor>, p: &ConvParams) -> Result<Tensor> {
    let (is, ws) = (x.sizes(), w.sizes());
    let (depth, kd) = (is[2], ws[2]);
    let (s, pad, d) = (p.stride[0], p.padding[0], p.dilation[0]);
    let inner = p.inner_2d();
    let slice = |t: &Tensor, i: i64| ops::select_int(t, 2, i);
    let conv = |xs: &Tensor, wk: &Tensor| {
        if p.transposed {
            conv2d_transposed(xs, wk, None, &inner)
        } else {
            conv2d_plain(xs, wk, None, &inner)
        }
    };
    let out_depth = if p.transposed {
        transposed_output_size(&is, &ws, p)?[0]
    } else {
        // Checked: the padded depth covers the dilated kernel.
        let wide = i128::from;
        let o = (wide(depth) + 2 * wide(pad) - wide(d) * (wide(kd) - 1) - 1) / wide(s) + 1;
        i64::try_from(o).unwrap_or(i64::MAX)
    };
    if out_depth > i64::from(i32::MAX) {
        return Err(Error::runtime(format!(
            "convolution: the output depth {out_depth} is too large"
        )));
    }
    let mut planes: Vec<Option<Tensor>> = vec![None; out_depth.max(0) as usize];
    let mut add = |od: i128, term: Tensor| -> Result<()> {
        if od < 0 || od >= i128::from(out_depth) {
            return Ok(());
        }
        let slot = &mut planes[od as usize];
        *slot = Some(match slot.take() {
            Some(acc) => ops::add_tensor(&acc, &term)?,
            None => term,
        });
        Ok(())
    };
    // In i128: strides, paddings and dilations are any i64.
    let at = |i: i64, k: i64| {
        i128::from(i) * i128::from(s) - i128::from(pad) + i128::from(k) * i128::from(d)
    };
    for k in 0..kd {
        let wk = slice(w, k)?;
        if p.transposed {
            for i in 0..depth {
                add(at(i, k), conv(&slice(x, i)?, &wk)?)?;
            }
        } else {
            for od in 0..out_depth {
                let i = at(od, k);
                if (0..i128::from(depth)).contains(&i) {
                    add(i128::from(od), conv(&slice(x, i as i64)?, &wk)?)?;
                }
            }
        }
    }
    // A plane no kernel slice reaches is zero: shape it from a reached one
    // (or a zero convolution of the first slice).
    let template = match planes.iter().flatten().next() {
        Some(t) => t.clone(),
        None => ops::mul_scalar(
            &conv(&slice(x, 0)?, &slice(w, 0)?)?,
            c10_core::Scalar::Int(0),
        )?,
    };
    let planes = planes
        .into_iter()
        .map(|t| match t {
            Some(t) => Ok(t),
            None => ops::zeros_like(&template),
        })
        .collect::<Result<Vec<_>>>()?;
    let y = ops::stack_with(&planes, ops::StackOptions { dim: 2 })?;
    match bias {
        Some(b) => ops::add_tensor(&y, &ops::reshape(b, &[1, -1, 1, 1, 1])?),
        None => Ok(y),
    }
}

/// `convolution(input, weight, bias, stride, padding, dilation,
/// transposed, output_padding, groups)`.
#[allow(clippy::too_many_arguments)]
pub fn convolution(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    transposed: bool,
    output_padding: &[i64],
    groups: i64,
) -> Result<Tensor> {
    let k = weight.dim();
    if k < 3 {
        return Err(Error::runtime(
            "weight should have at least three dimensions",
        ));
    }
    let dims = k - 2;
    let p = ConvParams::new(
        dims,
        stride,
        padding,
        dilation,
        transposed,
        output_padding,
        groups,
    )?;
    check_shape_forward(input, weight, bias, &p)?;
    if let (Some(a), Some(b)) = (input.dtype(), weight.dtype()) {
        if a != b {
            return Err(Error::runtime(format!(
                "Input type ({a}) and weight type ({b}) should be the same"
            )));
        }
    }
    match k {
        3 => {
            let x = ops::unsqueeze(input, 2)?;
            let w = ops::unsqueeze(weight, 2)?;
            let y = conv_2d(&x, &w, bias, &p.as_2d())?;
            ops::squeeze_dim(&y, 2)
        }
        4 => conv_2d(input, weight, bias, &p),
        5 => conv3d(input, weight, bias, &p),
        _ => Err(Error::runtime(format!(
            "Expected 3D, 4D or 5D (batch mode) tensor for input, but got input of size {}",
            fmt_list(&input.sizes())
        ))),
    }
}

/// A 2-d convolution, plain or transposed, in the format the input and
/// weight suggest.
fn conv_2d(x: &Tensor, w: &Tensor, bias: Option<&Tensor>, p: &ConvParams) -> Result<Tensor> {
    let format = conv_memory_format(x, w);
    let y = if p.transposed {
        conv2d_transposed(x, w, bias, p)?
    } else {
        conv2d_plain(x, w, bias, p)?
    };
    restride(y, format)
}
