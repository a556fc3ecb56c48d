//! Meta kernels of the unstructured pooling, padding, sampling and
//! distance operators (where PyTorch serves Meta tensors from Python meta
//! functions): each checks its arguments as PyTorch's CPU kernel does and
//! returns its output on the input's device. The CPU kernels begin with
//! these functions and fill what they return.

use c10_core::{Device, Error, MemoryFormat, Result, ScalarType, TensorBase};

use super::dims::fmt_list;
use super::factories::strides_for;
use crate::meta::dtype_and_device;
use crate::meta::padding::{pad_output_shape, pad_output_strides, PadLayout, PadMode};
use crate::meta::pooling::{pool3d_memory_format, pool3d_output_layout, Pool3d};
use crate::Tensor;

/// A new tensor of `sizes` and `strides` on `device`.
fn new_strided(
    sizes: &[i64],
    strides: &[i64],
    dtype: ScalarType,
    device: Device,
) -> Result<Tensor> {
    Ok(Tensor::from(TensorBase::empty_strided(
        sizes, strides, dtype, device,
    )?))
}

/// `reflection_pad2d(self, padding)`: a batched input's suggested memory
/// format.
pub fn reflection_pad2d_meta(self_: &Tensor, padding: &[i64]) -> Result<Tensor> {
    let (dtype, device) = dtype_and_device(self_)?;
    let shape = pad_output_shape(self_, padding, 2, PadMode::Reflect)?;
    let strides = pad_output_strides(self_, &shape, PadLayout::SuggestedWhenBatched)?;
    new_strided(&shape, &strides, dtype, device)
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

/// `grid_sampler_2d(input, grid, interpolation_mode, padding_mode,
/// align_corners)`: `[N, C, H_out, W_out]` after PyTorch's
/// `check_grid_sampler_common` and `check_grid_sampler_2d`.
pub fn grid_sampler_2d_meta(
    input: &Tensor,
    grid: &Tensor,
    interpolation_mode: i64,
    padding_mode: i64,
    _align_corners: bool,
) -> Result<Tensor> {
    let (dtype, device) = dtype_and_device(input)?;
    let (gdtype, gdevice) = dtype_and_device(grid)?;
    if device != gdevice {
        return Err(Error::runtime(format!(
            "grid_sampler(): expected input and grid to be on same device, but input is on {device} and grid is on {gdevice}"
        )));
    }
    if dtype != gdtype {
        return Err(Error::runtime(format!(
            "grid_sampler(): expected input and grid to have same dtype, but input has {dtype} and grid has {gdtype}"
        )));
    }
    let (is, gs) = (input.sizes(), grid.sizes());
    if is.len() != gs.len() {
        return Err(Error::runtime(format!(
            "grid_sampler(): expected input and grid to have same number of dimensions, but got input with sizes {} and grid with sizes {}",
            fmt_list(&is),
            fmt_list(&gs)
        )));
    }
    if is.len() < 2 {
        return Err(Error::runtime(format!(
            "grid_sampler(): expected 4D input and grid with same number of dimensions, but got input with sizes {} and grid with sizes {}",
            fmt_list(&is),
            fmt_list(&gs)
        )));
    }
    if is[0] != gs[0] {
        return Err(Error::runtime(format!(
            "grid_sampler(): expected grid and input to have same batch size, but got input with sizes {} and grid with sizes {}",
            fmt_list(&is),
            fmt_list(&gs)
        )));
    }
    if gs[gs.len() - 1] != is.len() as i64 - 2 {
        return Err(Error::runtime(format!(
            "grid_sampler(): expected grid to have size {} in last dimension, but got grid with sizes {}",
            is.len() - 2,
            fmt_list(&gs)
        )));
    }
    for (d, &size) in is.iter().enumerate().skip(2) {
        if size <= 0 {
            return Err(Error::runtime(format!(
                "grid_sampler(): expected input to have non-empty spatial dimensions, but input has sizes {} with dimension {d} being empty",
                fmt_list(&is)
            )));
        }
    }
    if is.len() != 4 {
        return Err(Error::runtime(format!(
            "grid_sampler(): expected 4D input and grid with same number of dimensions, but got input with sizes {} and grid with sizes {}",
            fmt_list(&is),
            fmt_list(&gs)
        )));
    }
    if !(0..=2).contains(&interpolation_mode) {
        return Err(Error::runtime(format!(
            "grid_sampler(): invalid interpolation mode {interpolation_mode}"
        )));
    }
    if !(0..=2).contains(&padding_mode) {
        return Err(Error::runtime(format!(
            "grid_sampler(): invalid padding mode {padding_mode}"
        )));
    }
    let shape = [is[0], is[1], gs[1], gs[2]];
    new_strided(
        &shape,
        &strides_for(&shape, MemoryFormat::Contiguous)?,
        dtype,
        device,
    )
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
    for (v, name) in [
        (output_size, "output_size"),
        (kernel_size, "kernel_size"),
        (dilation, "dilation"),
        (padding, "padding"),
        (stride, "stride"),
    ] {
        if v.len() != 2 {
            return Err(Error::runtime(format!(
                "It is expected {name} equals to 2, but got size {}",
                v.len()
            )));
        }
    }
    let (oh, ow) = (output_size[0], output_size[1]);
    let (kh, kw) = (kernel_size[0], kernel_size[1]);
    let (dh, dw) = (dilation[0], dilation[1]);
    let (ph, pw) = (padding[0], padding[1]);
    let (sh, sw) = (stride[0], stride[1]);
    if kw <= 0 || kh <= 0 {
        return Err(Error::runtime(format!(
            "kernel size should be greater than zero, but got kernel_height: {kh} kernel_width: {kw}"
        )));
    }
    if sw <= 0 || sh <= 0 {
        return Err(Error::runtime(format!(
            "stride should be greater than zero, but got stride_height: {sh} stride_width: {sw}"
        )));
    }
    if dw <= 0 || dh <= 0 {
        return Err(Error::runtime(format!(
            "dilation should be greater than zero, but got dilation_height: {dh} dilation_width: {dw}"
        )));
    }
    if pw < 0 || ph < 0 {
        return Err(Error::runtime(format!(
            "padding should be non-negative, but got pad_height: {ph} pad_width: {pw}"
        )));
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

/// `_cdist_forward(x1, x2, p, compute_mode)`: `[*batch, r1, r2]`, the
/// batch dimensions broadcast.
pub fn cdist_forward_meta(
    x1: &Tensor,
    x2: &Tensor,
    p: f64,
    compute_mode: Option<i64>,
) -> Result<Tensor> {
    if x1.dim() < 2 {
        return Err(Error::runtime(format!(
            "cdist only supports at least 2D tensors, X1 got: {}D",
            x1.dim()
        )));
    }
    if x2.dim() < 2 {
        return Err(Error::runtime(format!(
            "cdist only supports at least 2D tensors, X2 got: {}D",
            x2.dim()
        )));
    }
    let (s1, s2) = (x1.sizes(), x2.sizes());
    let (c1, c2) = (s1[s1.len() - 1], s2[s2.len() - 1]);
    if c1 != c2 {
        return Err(Error::runtime(format!(
            "X1 and X2 must have the same number of columns. X1: {c1} X2: {c2}"
        )));
    }
    let (d1, device) = dtype_and_device(x1)?;
    let (d2, device2) = dtype_and_device(x2)?;
    if !d1.is_floating_point() {
        return Err(Error::runtime(format!(
            "cdist only supports floating-point dtypes, X1 got: {d1}"
        )));
    }
    if !d2.is_floating_point() {
        return Err(Error::runtime(format!(
            "cdist only supports floating-point dtypes, X2 got: {d2}"
        )));
    }
    if p.is_nan() || p < 0.0 {
        return Err(Error::runtime("cdist only supports non-negative p values"));
    }
    if device != device2 {
        return Err(Error::runtime(format!(
            "X1 and X2 must have the same device type. X1: {device} X2: {device2}"
        )));
    }
    let mode = compute_mode.unwrap_or(0);
    if !(0..=2).contains(&mode) {
        return Err(Error::runtime(format!(
            "possible modes: 0, 1, 2, but was: {mode}"
        )));
    }
    let batch =
        crate::tensor_iterator::broadcast::infer_size(&s1[..s1.len() - 2], &s2[..s2.len() - 2])?;
    let mut shape = batch;
    shape.extend([s1[s1.len() - 2], s2[s2.len() - 2]]);
    new_strided(
        &shape,
        &strides_for(&shape, MemoryFormat::Contiguous)?,
        d1,
        device,
    )
}

/// `_pdist_forward(self, p)`: the `n * (n - 1) / 2` distances between the
/// rows of a contiguous `[n, m]` input.
pub fn pdist_forward_meta(self_: &Tensor, _p: f64) -> Result<Tensor> {
    if !self_.is_contiguous() {
        return Err(Error::runtime("_pdist_forward requires contiguous input"));
    }
    let (dtype, device) = dtype_and_device(self_)?;
    let sizes = self_.sizes();
    let n = self_.size(0)?;
    let pairs = if n <= 1 {
        0
    } else {
        self_.size(1)?;
        if sizes.len() != 2 {
            return Err(Error::runtime(format!(
                "pdist only supports 2D tensors, got: {}D",
                sizes.len()
            )));
        }
        n.checked_mul(n - 1)
            .map(|v| v / 2)
            .ok_or_else(|| Error::runtime("_pdist_forward: the output size overflows"))?
    };
    new_strided(&[pairs], &[1], dtype, device)
}
