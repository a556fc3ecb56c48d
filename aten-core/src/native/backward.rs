//! Backward computations written over the typed operator API: the kernels
//! of the backward operators (`convolution_backward`,
//! `native_layer_norm_backward`, `max_pool2d_with_indices_backward`,
//! `embedding_dense_backward`, ...) on every backend, and what the
//! autograd formulas of the forward operators call. Being compositions of
//! differentiable operators, they are differentiated again by autograd
//! when a backward pass records its own graph (`create_graph`).
//!
//! Scatter-adds are written as products with one-hot matrices (exact: every
//! product is a gradient times 0 or 1), which keeps them differentiable
//! without scatter kernels.

use c10_core::{Error, MemoryFormat, Result, Scalar, ScalarType};

use crate::meta::pooling::avg_pool2d_geometry;
use crate::{ops, Tensor};

fn dtype_of(t: &Tensor) -> ScalarType {
    t.dtype().unwrap_or(ScalarType::Float)
}

/// Zeros of `sizes` with `like`'s dtype and device.
pub fn zeros_as(sizes: &[i64], like: &Tensor) -> Result<Tensor> {
    ops::zeros_with(
        sizes,
        ops::ZerosOptions {
            dtype: like.dtype(),
            device: like.device(),
            ..Default::default()
        },
    )
}

/// `0, 1, ..., n - 1` as int64 on `like`'s device (positions for one-hot
/// masks).
pub fn arange_as(n: i64, like: &Tensor) -> Result<Tensor> {
    ops::arange_with(
        Scalar::Int(n),
        ops::ArangeOptions {
            dtype: Some(ScalarType::Long),
            device: like.device(),
            ..Default::default()
        },
    )
}

/// `t` in `dtype` through the dispatcher (`_to_copy`, so a recorded
/// backward pass differentiates it), a copy only when the dtype differs.
pub fn cast_to(t: &Tensor, dtype: ScalarType) -> Result<Tensor> {
    if t.dtype() == Some(dtype) {
        return Ok(t.clone());
    }
    ops::_to_copy_with(
        t,
        ops::ToCopyOptions {
            dtype: Some(dtype),
            ..Default::default()
        },
    )
}

fn keep() -> ops::SumDimIntlistOptions {
    ops::SumDimIntlistOptions {
        keepdim: true,
        dtype: None,
    }
}

/// Whether output `i` of a backward operator is asked for (its
/// `bool[3] output_mask`; missing entries are not).
fn wanted(output_mask: &[bool], i: usize) -> bool {
    output_mask.get(i).copied().unwrap_or(false)
}

/// `[S, L]` one-hot matrix in `dtype`: row `s` has ones where `index == s`.
fn one_hot_rows(index: &Tensor, s: i64, dtype: ScalarType) -> Result<Tensor> {
    let rows = ops::unsqueeze(&arange_as(s, index)?, 1)?;
    let cols = ops::unsqueeze(&ops::reshape(index, &[-1])?, 0)?;
    cast_to(&ops::eq_tensor(&rows, &cols)?, dtype)
}

/// `out[index[l]] += src[l]` along dim 0 of `src` (`[L, ...]`), giving
/// `[s, ...]` (`index_add` of zeros).
fn index_add_rows(src: &Tensor, index: &Tensor, s: i64) -> Result<Tensor> {
    let sizes = src.sizes();
    let l = sizes.first().copied().unwrap_or(1);
    let rest: Vec<i64> = sizes.iter().skip(1).copied().collect();
    let flat = ops::reshape(src, &[l, -1])?;
    let m = one_hot_rows(index, s, dtype_of(src))?;
    let out = ops::mm(&m, &flat)?;
    let mut shape = vec![s];
    shape.extend(rest);
    ops::reshape(&out, &shape)
}

/// `index_select_backward`: the gradient of `index_select(self, dim,
/// index)` for `self`, `grad`'s slices added at their indices.
pub fn index_select_backward(
    grad: &Tensor,
    self_sizes: &[i64],
    dim: i64,
    index: &Tensor,
) -> Result<Tensor> {
    if self_sizes.is_empty() {
        return ops::reshape(grad, &[]);
    }
    let d = crate::native::dims::wrap_dim(dim, self_sizes.len())? as i64;
    let moved = ops::transpose_int(grad, 0, d)?;
    let summed = index_add_rows(&moved, index, self_sizes[d as usize])?;
    let back = ops::transpose_int(&summed, 0, d)?;
    ops::contiguous(&back)
}

/// `gather_backward`: the gradient of `gather(self, dim, index)` for
/// `self`, `grad` added at the gathered positions.
pub fn gather_backward(
    grad: &Tensor,
    self_sizes: &[i64],
    dim: i64,
    index: &Tensor,
) -> Result<Tensor> {
    if index.numel() == 0 || self_sizes.is_empty() {
        if self_sizes.is_empty() {
            return ops::reshape(grad, &[]);
        }
        return zeros_as(self_sizes, grad);
    }
    let nd = self_sizes.len();
    let d = crate::native::dims::wrap_dim(dim, nd)?;
    let s = self_sizes[d];
    // mask[..., k, j, ...] = index[..., k, ...] == j (j a new axis after d).
    let idx = ops::unsqueeze(index, d as i64 + 1)?;
    let mut pos_shape = vec![1i64; nd + 1];
    pos_shape[d + 1] = s;
    let pos = ops::view(&arange_as(s, index)?, &pos_shape)?;
    let mask = ops::eq_tensor(&idx, &pos)?;
    let g = ops::unsqueeze(grad, d as i64 + 1)?;
    let picked = ops::where_self(&mask, &g, &zeros_as(&[], grad)?)?;
    let summed = ops::sum_dim_intlist(&picked, Some(&[d as i64]))?;
    // `summed` has index's sizes with `s` at `d`; pad to self's sizes.
    let ss = summed.sizes();
    if &ss[..] == self_sizes {
        return Ok(summed);
    }
    let out = zeros_as(self_sizes, grad)?;
    let mut region = out.clone();
    for (k, &len) in ss.iter().enumerate() {
        region = ops::narrow(&region, k as i64, 0, len)?;
    }
    ops::copy_(&region, &summed)?;
    Ok(out)
}

/// `embedding_dense_backward`: the rows of `grad` added into the rows of
/// the weight their indices name; the `padding_idx` row gets nothing, and
/// with `scale_grad_by_freq` each index's sum is divided by how often it
/// occurs.
pub fn embedding_dense_backward(
    grad: &Tensor,
    indices: &Tensor,
    num_weights: i64,
    padding_idx: i64,
    scale_grad_by_freq: bool,
) -> Result<Tensor> {
    let dim = grad.sizes().last().copied().unwrap_or(1);
    let flat_idx = ops::reshape(indices, &[-1])?;
    let g = ops::reshape(grad, &[-1, dim])?;
    let mut m = one_hot_rows(&flat_idx, num_weights, dtype_of(grad))?;
    if padding_idx >= 0 {
        let not_pad = ops::ne_scalar(&flat_idx, Scalar::Int(padding_idx))?;
        m = ops::mul_tensor(&m, &cast_to(&ops::unsqueeze(&not_pad, 0)?, dtype_of(grad))?)?;
    }
    if scale_grad_by_freq {
        let all = one_hot_rows(&flat_idx, num_weights, dtype_of(grad))?;
        let counts = ops::sum_dim_intlist_with(&all, Some(&[1]), keep())?;
        let counts = ops::clamp_with(
            &counts,
            ops::ClampOptions {
                min: Some(Scalar::Int(1)),
                max: None,
            },
        )?;
        m = ops::div_tensor(&m, &counts)?;
    }
    ops::mm(&m, &g)
}

/// `nll_loss_backward`: `-weight[target] * grad` at each target class
/// (divided by `total_weight` for reduction `mean`), nothing for ignored
/// targets.
pub fn nll_loss_backward(
    grad: &Tensor,
    self_: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    reduction: i64,
    ignore_index: i64,
    total_weight: &Tensor,
) -> Result<Tensor> {
    let nd = self_.dim();
    if nd == 0 || nd > 2 {
        return Err(Error::runtime("input tensor should be 1D or 2D"));
    }
    let c = self_.sizes()[nd - 1];
    let t = ops::unsqueeze(target, -1)?;
    let classes = arange_as(c, self_)?;
    let hit = ops::logical_and(
        &ops::eq_tensor(&t, &classes)?,
        &ops::ne_scalar(&t, Scalar::Int(ignore_index))?,
    )?;
    let mut g = if reduction == 0 && nd == 2 {
        ops::unsqueeze(grad, -1)?
    } else {
        grad.clone()
    };
    if reduction == 1 {
        g = ops::div_tensor(&g, total_weight)?;
    }
    let mut value = ops::neg(&g)?;
    if let Some(w) = weight {
        value = ops::mul_tensor(&value, w)?;
    }
    let value = ops::expand(&value, &self_.sizes())?;
    ops::where_self(&hit, &value, &zeros_as(&[], self_)?)
}

/// `max_pool2d_with_indices_backward`: each output's gradient added at the
/// input position its index names (flat over the last two dims).
pub fn max_pool2d_with_indices_backward(
    grad: &Tensor,
    self_: &Tensor,
    indices: &Tensor,
) -> Result<Tensor> {
    let sizes = self_.sizes();
    let nd = sizes.len();
    if nd < 2 {
        return Err(Error::runtime(
            "max_pool2d_with_indices_backward: input must be 3-D or 4-D",
        ));
    }
    let hw = sizes[nd - 2] * sizes[nd - 1];
    let gs = grad.sizes();
    if gs.len() != nd {
        return Err(Error::runtime(
            "max_pool2d_with_indices_backward: grad_output must have the input's rank",
        ));
    }
    // Explicit sizes (not -1): an empty batch has no size to infer.
    let mut lead: Vec<i64> = sizes[..nd - 2].to_vec();
    lead.push(gs[nd - 2] * gs[nd - 1]);
    let idx = ops::unsqueeze(&ops::reshape(indices, &lead)?, -1)?;
    let g = ops::unsqueeze(&ops::reshape(grad, &lead)?, -1)?;
    let mask = ops::eq_tensor(&idx, &arange_as(hw, self_)?)?;
    let picked = ops::where_self(&mask, &g, &zeros_as(&[], grad)?)?;
    let summed = ops::sum_dim_intlist(&picked, Some(&[nd as i64 - 2]))?;
    ops::reshape(&summed, &sizes)
}

/// `native_layer_norm_backward`: the gradients of input, weight and bias
/// (each when `output_mask` asks for it and the argument exists).
#[allow(clippy::too_many_arguments)]
pub fn native_layer_norm_backward(
    grad_out: &Tensor,
    input: &Tensor,
    normalized_shape: &[i64],
    mean: &Tensor,
    rstd: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    output_mask: &[bool],
) -> Result<(Tensor, Tensor, Tensor)> {
    let nd = input.dim() as i64;
    let k = normalized_shape.len() as i64;
    let axes: Vec<i64> = (nd - k..nd).collect();
    let batch: Vec<i64> = (0..nd - k).collect();
    let x_hat = ops::mul_tensor(&ops::sub_tensor(input, mean)?, rstd)?;
    let mut gi = Tensor::undefined();
    if wanted(output_mask, 0) {
        let g = match weight {
            Some(w) => ops::mul_tensor(grad_out, w)?,
            None => grad_out.clone(),
        };
        let mean_opts = || ops::MeanDimOptions {
            keepdim: true,
            dtype: None,
        };
        let a = ops::mean_dim_with(&g, Some(&axes), mean_opts())?;
        let b = ops::mean_dim_with(&ops::mul_tensor(&g, &x_hat)?, Some(&axes), mean_opts())?;
        let inner = ops::sub_tensor(&ops::sub_tensor(&g, &a)?, &ops::mul_tensor(&x_hat, &b)?)?;
        gi = ops::mul_tensor(rstd, &inner)?;
    }
    let reduce_batch = |t: &Tensor| -> Result<Tensor> {
        if batch.is_empty() {
            Ok(t.clone())
        } else {
            ops::sum_dim_intlist(t, Some(&batch))
        }
    };
    let gw = match weight {
        Some(w) if wanted(output_mask, 1) => {
            let s = reduce_batch(&ops::mul_tensor(grad_out, &x_hat)?)?;
            ops::reshape(&s, &w.sizes())?
        }
        _ => Tensor::undefined(),
    };
    let gb = match bias {
        Some(b) if wanted(output_mask, 2) => ops::reshape(&reduce_batch(grad_out)?, &b.sizes())?,
        _ => Tensor::undefined(),
    };
    Ok((gi, gw, gb))
}

/// `grad` spread out by `stride` (zeros between its elements) along the
/// last two dims.
fn dilate2d(grad: &Tensor, stride: &[i64]) -> Result<Tensor> {
    if stride.iter().all(|&s| s == 1) {
        return Ok(grad.clone());
    }
    let s = grad.sizes();
    let n = s.len();
    let mut shape = s.to_vec();
    shape[n - 2] = (s[n - 2] - 1).max(0) * stride[0] + 1;
    shape[n - 1] = (s[n - 1] - 1).max(0) * stride[1] + 1;
    let out = zeros_as(&shape, grad)?;
    let rows = ops::slice_tensor_with(
        &out,
        ops::SliceTensorOptions {
            dim: n as i64 - 2,
            start: None,
            end: None,
            step: stride[0],
        },
    )?;
    let cells = ops::slice_tensor_with(
        &rows,
        ops::SliceTensorOptions {
            dim: n as i64 - 1,
            start: None,
            end: None,
            step: stride[1],
        },
    )?;
    ops::copy_(&cells, grad)?;
    Ok(out)
}

/// `convolution_backward` (CompositeExplicitAutograd) of a 1-, 2- or
/// 3-d convolution, plain or transposed: the gradients of input, weight
/// and bias, each when `output_mask` asks, written as convolutions
/// (`convolution`): the input's gradient is the convolution's adjoint
/// (transposed for a plain one, plain for a transposed one), the weight's
/// a convolution of the input with the gradient per group (strides and
/// dilations swapped). 2-d (and 1-d) gradients take the format the input
/// and weight suggest.
#[allow(clippy::too_many_arguments)]
pub fn convolution_backward(
    grad: &Tensor,
    input: &Tensor,
    weight: &Tensor,
    bias_sizes: Option<&[i64]>,
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    transposed: bool,
    output_padding: &[i64],
    groups: i64,
    output_mask: &[bool],
) -> Result<(Tensor, Tensor, Tensor)> {
    let k = weight.dim();
    if k < 3 || input.dim() != k || grad.dim() != k {
        return Err(Error::runtime(format!(
            "convolution_backward: expected input, weight and grad_output of one rank (3, 4 or 5), but got {}, {} and {}",
            input.dim(),
            k,
            grad.dim()
        )));
    }
    let dims = k - 2;
    let params = crate::native::convolution::ConvParams::new(
        dims,
        stride,
        padding,
        dilation,
        transposed,
        output_padding,
        groups,
    )?;
    let conv = ConvBackward {
        grad,
        input,
        weight,
        params,
        dims,
        format: conv_grad_format(input, weight, dims)?,
    };
    let gi = if wanted(output_mask, 0) {
        conv.grad_input()?
    } else {
        Tensor::undefined()
    };
    // PyTorch's transposed kernels compute the weight's gradient along
    // with the bias's.
    let weight_wanted =
        wanted(output_mask, 1) || (transposed && bias_sizes.is_some() && wanted(output_mask, 2));
    let gw = if weight_wanted {
        conv.grad_weight()?
    } else {
        Tensor::undefined()
    };
    let gb = match bias_sizes {
        Some(_) if wanted(output_mask, 2) => {
            let axes: Vec<i64> = std::iter::once(0).chain(2..k as i64).collect();
            ops::sum_dim_intlist(grad, Some(&axes))?
        }
        _ => Tensor::undefined(),
    };
    Ok((gi, gw, gb))
}

/// The memory format of a convolution's gradients: the one input and
/// weight suggest for 2-d (and 1-d, through its 2-d view), contiguous
/// for 3-d.
fn conv_grad_format(input: &Tensor, weight: &Tensor, dims: usize) -> Result<MemoryFormat> {
    if dims > 2 {
        return Ok(MemoryFormat::Contiguous);
    }
    let view = |t: &Tensor| {
        if dims == 1 {
            ops::unsqueeze(t, 2)
        } else {
            Ok(t.clone())
        }
    };
    Ok(crate::native::convolution::conv_memory_format(
        &view(input)?,
        &view(weight)?,
    ))
}

/// One `convolution_backward` call: its operands and geometry.
struct ConvBackward<'a> {
    grad: &'a Tensor,
    input: &'a Tensor,
    weight: &'a Tensor,
    params: crate::native::convolution::ConvParams,
    /// Spatial dimensions (1, 2 or 3).
    dims: usize,
    /// The gradients' memory format.
    format: MemoryFormat,
}

impl ConvBackward<'_> {
    /// `t` in the gradients' format: a 1-d one's through its 2-d view.
    fn in_format(&self, t: Tensor) -> Result<Tensor> {
        if self.dims == 1 {
            let t4 = crate::native::convolution::restride(ops::unsqueeze(&t, 2)?, self.format)?;
            return ops::squeeze_dim(&t4, 2);
        }
        crate::native::convolution::restride(t, self.format)
    }

    /// The input's gradient: the convolution's adjoint (transposed for a
    /// plain one, plain for a transposed one).
    fn grad_input(&self) -> Result<Tensor> {
        let p = &self.params;
        // The adjoint of a transposed convolution is a plain one; of a
        // plain one, the transposed one that gives back the input's size.
        let output_padding = if p.transposed {
            vec![0]
        } else {
            self.input_output_padding()?
        };
        let r = ops::convolution(
            self.grad,
            self.weight,
            None,
            &p.stride,
            &p.padding,
            &p.dilation,
            !p.transposed,
            &output_padding,
            p.groups,
        )?;
        self.in_format(r)
    }

    /// The output padding under which the transposed convolution of the
    /// gradient gives back the input's size.
    fn input_output_padding(&self) -> Result<Vec<i64>> {
        let p = &self.params;
        let (gs, is, ws) = (self.grad.sizes(), self.input.sizes(), self.weight.sizes());
        let wide = i128::from;
        (0..self.dims)
            .map(|i| {
                let full = (wide(gs[i + 2]) - 1) * wide(p.stride[i]) - 2 * wide(p.padding[i])
                    + wide(p.dilation[i]) * (wide(ws[i + 2]) - 1)
                    + 1;
                i64::try_from(wide(is[i + 2]) - full).map_err(|_| {
                    Error::runtime("convolution_backward: grad_output does not match the input")
                })
            })
            .collect()
    }

    /// The weight's gradient, per group: the "input" (channels as batch)
    /// convolved with the "gradient" (channels as filters), strides and
    /// dilations swapped; for a transposed convolution the two trade
    /// places.
    fn grad_weight(&self) -> Result<Tensor> {
        let p = &self.params;
        let groups = p.groups;
        let (x, dy) = if p.transposed {
            (self.grad, self.input)
        } else {
            (self.input, self.grad)
        };
        let ws = self.weight.sizes();
        let cx = x.sizes()[1] / groups;
        let cy = dy.sizes()[1] / groups;
        let mut parts = Vec::with_capacity(groups as usize);
        for g in 0..groups {
            let xg = ops::transpose_int(&ops::narrow(x, 1, g * cx, cx)?, 0, 1)?;
            let dyg = ops::transpose_int(&ops::narrow(dy, 1, g * cy, cy)?, 0, 1)?;
            let mut r = ops::convolution(
                &xg,
                &dyg,
                None,
                &p.dilation,
                &p.padding,
                &p.stride,
                false,
                &[0],
                1,
            )?;
            for i in 0..self.dims {
                r = ops::narrow(&r, i as i64 + 2, 0, ws[i + 2])?;
            }
            // `[cx, cy, k...]`: a plain weight is `[cy, cx, ...]`, a
            // transposed one `[cy (in), cx (out), ...]` once grad and input
            // traded places.
            parts.push(ops::transpose_int(&r, 0, 1)?);
        }
        let gw = if parts.len() == 1 {
            parts.pop().unwrap_or_default()
        } else {
            ops::cat(&parts)?
        };
        self.in_format(ops::contiguous(&gw)?)
    }
}

/// The geometry of a 2-d average pooling: window, step, padding and the
/// pooled size.
#[derive(Copy, Clone, Debug)]
pub struct AvgPool2dGeometry {
    /// The window.
    pub kernel: (i64, i64),
    /// The step.
    pub stride: (i64, i64),
    /// The padding on each side.
    pub padding: (i64, i64),
    /// The pooled height and width.
    pub out: (i64, i64),
}

/// `[lead, 1, h, w]`: the planes of a 3-d or 4-d input, one channel each.
fn planes(t: &Tensor) -> Result<(Tensor, Vec<i64>, i64, i64)> {
    let sizes = t.sizes();
    let nd = sizes.len();
    if nd < 3 {
        return Err(Error::runtime("expected a 3D or 4D input"));
    }
    let (h, w) = (sizes[nd - 2], sizes[nd - 1]);
    let lead: Vec<i64> = sizes[..nd - 2].to_vec();
    let l: i64 = lead.iter().product();
    Ok((ops::reshape(t, &[l, 1, h, w])?, lead, h, w))
}

fn ones_kernel(kh: i64, kw: i64, like: &Tensor) -> Result<Tensor> {
    ops::ones_with(
        &[1, 1, kh, kw],
        ops::OnesOptions {
            dtype: like.dtype(),
            device: like.device(),
            ..Default::default()
        },
    )
}

/// How many elements each window averages over, `[1, 1, oh, ow]`, or the
/// override.
fn avg_pool_divisors(
    g: &AvgPool2dGeometry,
    h: i64,
    w: i64,
    count_include_pad: bool,
    like: &Tensor,
) -> Result<Tensor> {
    let (ph, pw) = g.padding;
    let (hp, wp) = padded_extent(g, h, w);
    let mask = zeros_as(&[1, 1, hp, wp], like)?;
    let counted = if count_include_pad {
        ops::narrow(&ops::narrow(&mask, 2, 0, h + 2 * ph)?, 3, 0, w + 2 * pw)?
    } else {
        ops::narrow(&ops::narrow(&mask, 2, ph, h)?, 3, pw, w)?
    };
    ops::fill_scalar_(&counted, Scalar::Int(1))?;
    window_sums(&mask, g, like)
}

/// The extent of the zero-padded planes a pooling's windows cover: the
/// input and its padding, or more where the last window of `ceil_mode`
/// runs past them.
fn padded_extent(g: &AvgPool2dGeometry, h: i64, w: i64) -> (i64, i64) {
    let ((kh, kw), (sh, sw), (ph, pw), (oh, ow)) = (g.kernel, g.stride, g.padding, g.out);
    (
        (h + 2 * ph).max((oh - 1) * sh + kh),
        (w + 2 * pw).max((ow - 1) * sw + kw),
    )
}

/// Each window's sum over padded planes `planes` (`[l, 1, hp, wp]`), at
/// the pooled size.
fn window_sums(planes: &Tensor, g: &AvgPool2dGeometry, like: &Tensor) -> Result<Tensor> {
    let ((kh, kw), (sh, sw), _, (oh, ow)) = (g.kernel, g.stride, g.padding, g.out);
    let sums = ops::convolution(
        planes,
        &ones_kernel(kh, kw, like)?,
        None,
        &[sh, sw],
        &[0, 0],
        &[1, 1],
        false,
        &[0, 0],
        1,
    )?;
    ops::narrow(&ops::narrow(&sums, 2, 0, oh)?, 3, 0, ow)
}

/// `avg_pool2d(self, kernel_size, stride, padding, ceil_mode,
/// count_include_pad, divisor_override)`: each window's sum over the input
/// zero-padded by `padding`, divided by the window's element count
/// (padding included or not) or by `divisor_override`; windows of
/// `ceil_mode` that run past the padding count only what they cover.
#[allow(clippy::too_many_arguments)]
pub fn avg_pool2d(
    self_: &Tensor,
    kernel_size: &[i64],
    stride: &[i64],
    padding: &[i64],
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: Option<i64>,
) -> Result<Tensor> {
    let g = &avg_pool2d_geometry(self_, kernel_size, stride, padding, ceil_mode)?;
    let (x, lead, h, w) = planes(self_)?;
    let ((ph, pw), (oh, ow)) = (g.padding, g.out);
    let (hp, wp) = padded_extent(g, h, w);
    let l = lead.iter().product::<i64>();
    let buf = zeros_as(&[l, 1, hp, wp], self_)?;
    ops::copy_(&ops::narrow(&ops::narrow(&buf, 2, ph, h)?, 3, pw, w)?, &x)?;
    let sums = window_sums(&buf, g, self_)?;
    let avg = match divisor_override {
        Some(d) => ops::div_scalar(&sums, Scalar::Int(d))?,
        None => ops::div_tensor(
            &sums,
            &avg_pool_divisors(g, h, w, count_include_pad, self_)?,
        )?,
    };
    let mut shape = lead;
    shape.extend([oh, ow]);
    ops::reshape(&avg, &shape)
}

/// `avg_pool2d_backward(grad_output, self, kernel_size, stride, padding,
/// ceil_mode, count_include_pad, divisor_override)`: each output's
/// gradient, divided as the forward divided, spread over its window (also
/// `avg_pool2d`'s derivative formula).
#[allow(clippy::too_many_arguments)]
pub fn avg_pool2d_backward(
    grad: &Tensor,
    self_: &Tensor,
    kernel_size: &[i64],
    stride: &[i64],
    padding: &[i64],
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: Option<i64>,
) -> Result<Tensor> {
    let g = &avg_pool2d_geometry(self_, kernel_size, stride, padding, ceil_mode)?;
    let (_, lead, h, w) = planes(self_)?;
    let ((kh, kw), (sh, sw), (ph, pw), (oh, ow)) = (g.kernel, g.stride, g.padding, g.out);
    let l = lead.iter().product::<i64>();
    let gp = ops::reshape(grad, &[l, 1, oh, ow])?;
    let gp = match divisor_override {
        Some(d) => ops::div_scalar(&gp, Scalar::Int(d))?,
        None => ops::div_tensor(&gp, &avg_pool_divisors(g, h, w, count_include_pad, grad)?)?,
    };
    // Spread: the stride-spread gradient convolved with the (symmetric)
    // window over its full padding.
    let spread = dilate2d(&gp, &[sh, sw])?;
    let full = ops::convolution(
        &spread,
        &ones_kernel(kh, kw, grad)?,
        None,
        &[1, 1],
        &[kh - 1, kw - 1],
        &[1, 1],
        false,
        &[0, 0],
        1,
    )?;
    let (fh, fw) = (full.sizes()[2], full.sizes()[3]);
    let (hp, wp) = ((h + 2 * ph).max(fh), (w + 2 * pw).max(fw));
    let buf = zeros_as(&[l, 1, hp, wp], grad)?;
    ops::copy_(
        &ops::narrow(&ops::narrow(&buf, 2, 0, fh)?, 3, 0, fw)?,
        &full,
    )?;
    let gi = ops::narrow(&ops::narrow(&buf, 2, ph, h)?, 3, pw, w)?;
    ops::reshape(&gi, &self_.sizes())
}

/// `[1, C, 1, ...]`: a per-channel tensor shaped to broadcast against an
/// `nd`-d input.
fn per_channel(t: &Tensor, nd: usize) -> Result<Tensor> {
    let mut shape = vec![1i64; nd.max(2)];
    shape[1] = -1;
    ops::reshape(t, &shape)
}

/// `native_group_norm` (PyTorch's `math_group_norm`): each group of
/// `C / group` channels normalized over its channels and positions, then
/// scaled and shifted per channel; with the means and reciprocal standard
/// deviations, `[N, group]`.
#[allow(clippy::too_many_arguments)]
pub fn math_group_norm(
    input: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    n: i64,
    c: i64,
    hxw: i64,
    group: i64,
    eps: f64,
) -> Result<(Tensor, Tensor, Tensor)> {
    if group <= 0 || c % group != 0 {
        return Err(Error::runtime(format!(
            "Expected number of channels in input to be divisible by num_groups, but got input of shape {} and num_groups={group}",
            crate::native::dims::fmt_list(&input.sizes())
        )));
    }
    if input.numel() != n * c * hxw {
        return Err(Error::runtime(format!(
            "Expected the input to have N * C * HxW = {} elements, but got {}",
            n * c * hxw,
            input.numel()
        )));
    }
    // Half-precision inputs are normalized in float32 and rounded once, as
    // PyTorch's kernel does; the statistics keep the parameters' dtype
    // (float32 for float32 parameters, else the input's).
    let dtype = input
        .dtype()
        .ok_or_else(|| Error::runtime("undefined tensor"))?;
    if matches!(dtype, ScalarType::Half | ScalarType::BFloat16) {
        let float = |t: &Tensor| cast_to(t, ScalarType::Float);
        let param_dtype = weight.or(bias).and_then(|t| t.dtype()).unwrap_or(dtype);
        let (w, b) = (weight.map(float).transpose()?, bias.map(float).transpose()?);
        let (y, mean, rstd) = math_group_norm(
            &float(input)?,
            w.as_ref(),
            b.as_ref(),
            n,
            c,
            hxw,
            group,
            eps,
        )?;
        return Ok((
            cast_to(&y, dtype)?,
            cast_to(&mean, param_dtype)?,
            cast_to(&rstd, param_dtype)?,
        ));
    }
    let x = ops::reshape(input, &[n, group, -1])?;
    let keep = || ops::MeanDimOptions {
        keepdim: true,
        dtype: None,
    };
    let mean = ops::mean_dim_with(&x, Some(&[2]), keep())?;
    let centered = ops::sub_tensor(&x, &mean)?;
    let var = ops::mean_dim_with(&ops::mul_tensor(&centered, &centered)?, Some(&[2]), keep())?;
    let rstd = ops::rsqrt(&ops::add_scalar(&var, Scalar::Double(eps))?)?;
    let mut y = ops::reshape(&ops::mul_tensor(&centered, &rstd)?, &input.sizes())?;
    let nd = input.dim();
    if let Some(w) = weight {
        y = ops::mul_tensor(&y, &per_channel(w, nd)?)?;
    }
    if let Some(b) = bias {
        y = ops::add_tensor(&y, &per_channel(b, nd)?)?;
    }
    Ok((
        y,
        ops::reshape(&mean, &[n, group])?,
        ops::reshape(&rstd, &[n, group])?,
    ))
}

/// `native_group_norm_backward`: the gradients of input, weight and bias,
/// each when `output_mask` asks for it.
#[allow(clippy::too_many_arguments)]
pub fn native_group_norm_backward(
    grad_out: &Tensor,
    input: &Tensor,
    mean: &Tensor,
    rstd: &Tensor,
    weight: Option<&Tensor>,
    n: i64,
    c: i64,
    group: i64,
    output_mask: &[bool],
) -> Result<(Tensor, Tensor, Tensor)> {
    let nd = input.dim();
    let x = ops::reshape(input, &[n, group, -1])?;
    let m = ops::reshape(mean, &[n, group, 1])?;
    let r = ops::reshape(rstd, &[n, group, 1])?;
    let x_hat = ops::mul_tensor(&ops::sub_tensor(&x, &m)?, &r)?;
    let mut gi = Tensor::undefined();
    if wanted(output_mask, 0) {
        let g = match weight {
            Some(w) => ops::mul_tensor(grad_out, &per_channel(w, nd)?)?,
            None => grad_out.clone(),
        };
        let g = ops::reshape(&g, &[n, group, -1])?;
        let keep = || ops::MeanDimOptions {
            keepdim: true,
            dtype: None,
        };
        let a = ops::mean_dim_with(&g, Some(&[2]), keep())?;
        let b = ops::mean_dim_with(&ops::mul_tensor(&g, &x_hat)?, Some(&[2]), keep())?;
        let inner = ops::sub_tensor(&ops::sub_tensor(&g, &a)?, &ops::mul_tensor(&x_hat, &b)?)?;
        gi = ops::reshape(&ops::mul_tensor(&r, &inner)?, &input.sizes())?;
    }
    let per_c = |t: &Tensor| -> Result<Tensor> {
        ops::sum_dim_intlist(&ops::reshape(t, &[n, c, -1])?, Some(&[0, 2]))
    };
    // The weight's gradient does not depend on the weight: PyTorch gives
    // it when asked for, without a weight too.
    let gw = if wanted(output_mask, 1) {
        per_c(&ops::mul_tensor(
            grad_out,
            &ops::reshape(&x_hat, &input.sizes())?,
        )?)?
    } else {
        Tensor::undefined()
    };
    let gb = if wanted(output_mask, 2) {
        per_c(grad_out)?
    } else {
        Tensor::undefined()
    };
    Ok((gi, gw, gb))
}
