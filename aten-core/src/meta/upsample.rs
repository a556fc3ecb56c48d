//! Meta functions of the 2-d upsampling families (`upsample_nearest2d`,
//! `upsample_bilinear2d`, `upsample_bicubic2d`): PyTorch's `upsample_2d_common_check`, the
//! non-empty check, and the output in the input's suggested memory
//! format. Also the source-index arithmetic the backends share
//! ([`compute_scales_value`], [`area_pixel_compute_scale`],
//! [`area_pixel_compute_source_index`], [`nearest_idx`]), in the precision
//! PyTorch computes it.

use c10_core::{Error, MemoryFormat, Result};

use super::dtype_and_device;
use crate::native::{dims::fmt_list, factories::strides_for};
use crate::structured::{MetaOutput, SetOutput};
use crate::Tensor;

/// `[n, c, out_h, out_w]` after PyTorch's `upsample_2d_common_check`.
pub fn upsample_2d_common_check(input_size: &[i64], output_size: &[i64]) -> Result<[i64; 4]> {
    if output_size.len() != 2 {
        return Err(Error::runtime(format!(
            "It is expected output_size equals to 2, but got size {}",
            output_size.len()
        )));
    }
    if input_size.len() != 4 {
        return Err(Error::runtime(format!(
            "It is expected input_size equals to 4, but got size {}",
            input_size.len()
        )));
    }
    let (oh, ow) = (output_size[0], output_size[1]);
    let (ih, iw) = (input_size[2], input_size[3]);
    if !(ih > 0 && iw > 0 && oh > 0 && ow > 0) {
        return Err(Error::runtime(format!(
            "Input and output sizes should be greater than 0, but got input (H: {ih}, W: {iw}) output (H: {oh}, W: {ow})"
        )));
    }
    Ok([input_size[0], input_size[1], oh, ow])
}

/// The meta function both 2-d upsampling families share.
fn upsample_2d(out: SetOutput<'_>, input: &Tensor, output_size: &[i64]) -> Result<MetaOutput> {
    let sizes = input.sizes();
    let shape = upsample_2d_common_check(&sizes, output_size)?;
    // An empty batch is allowed, no other empty dimension.
    if sizes[1..].contains(&0) {
        return Err(Error::runtime(format!(
            "Non-empty 4D data tensor expected but got a tensor with sizes {}",
            fmt_list(&sizes)
        )));
    }
    let (dtype, device) = dtype_and_device(input)?;
    let format = MemoryFormat::suggest(&sizes, &input.strides());
    let strides = strides_for(&shape, format)?;
    out.set_outputs([(&shape, Some(&strides), dtype)], device)
}

/// `upsample_nearest2d(self, output_size, scales_h, scales_w)`.
pub fn upsample_nearest2d(
    out: SetOutput<'_>,
    self_: &Tensor,
    output_size: &[i64],
    _scales_h: Option<f64>,
    _scales_w: Option<f64>,
) -> Result<MetaOutput> {
    upsample_2d(out, self_, output_size)
}

/// `upsample_bilinear2d(self, output_size, align_corners, scales_h,
/// scales_w)`.
pub fn upsample_bilinear2d(
    out: SetOutput<'_>,
    self_: &Tensor,
    output_size: &[i64],
    _align_corners: bool,
    _scales_h: Option<f64>,
    _scales_w: Option<f64>,
) -> Result<MetaOutput> {
    upsample_2d(out, self_, output_size)
}

/// `upsample_bicubic2d(self, output_size, align_corners, scales_h,
/// scales_w)`.
pub fn upsample_bicubic2d(
    out: SetOutput<'_>,
    self_: &Tensor,
    output_size: &[i64],
    _align_corners: bool,
    _scales_h: Option<f64>,
    _scales_w: Option<f64>,
) -> Result<MetaOutput> {
    upsample_2d(out, self_, output_size)
}

/// The precision PyTorch computes source indices in: `f32` for every
/// dtype but `f64` (`opmath_type`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum IndexPrecision {
    /// Single precision.
    F32,
    /// Double precision.
    F64,
}

impl IndexPrecision {
    /// `v` rounded to this precision.
    pub fn round(self, v: f64) -> f64 {
        match self {
            IndexPrecision::F32 => f64::from(v as f32),
            IndexPrecision::F64 => v,
        }
    }

    /// `a * b + c` rounded once, in this precision: PyTorch's CPU kernels
    /// are compiled with floating-point contraction, which fuses such
    /// expressions.
    pub fn mul_add(self, a: f64, b: f64, c: f64) -> f64 {
        match self {
            IndexPrecision::F32 => f64::from((a as f32).mul_add(b as f32, c as f32)),
            IndexPrecision::F64 => a.mul_add(b, c),
        }
    }
}

/// PyTorch's `compute_scales_value`: `1 / scale` when a positive scale is
/// given, else `input_size / output_size`.
pub fn compute_scales_value(
    p: IndexPrecision,
    scale: Option<f64>,
    input_size: i64,
    output_size: i64,
) -> f64 {
    match scale {
        Some(s) if s > 0.0 => p.round(1.0 / s),
        _ => p.round(p.round(input_size as f64) / p.round(output_size as f64)),
    }
}

/// PyTorch's `area_pixel_compute_scale`.
pub fn area_pixel_compute_scale(
    p: IndexPrecision,
    input_size: i64,
    output_size: i64,
    align_corners: bool,
    scale: Option<f64>,
) -> f64 {
    if align_corners {
        if output_size > 1 {
            p.round(p.round((input_size - 1) as f64) / p.round((output_size - 1) as f64))
        } else {
            0.0
        }
    } else {
        compute_scales_value(p, scale, input_size, output_size)
    }
}

/// PyTorch's `area_pixel_compute_source_index` (`cubic`: no clamping at
/// zero).
pub fn area_pixel_compute_source_index(
    p: IndexPrecision,
    scale: f64,
    dst_index: i64,
    align_corners: bool,
    cubic: bool,
) -> f64 {
    let dst = p.round(dst_index as f64);
    if align_corners {
        p.round(scale * dst)
    } else {
        // `scale * (dst + 0.5) - 0.5`, fused.
        let src = p.mul_add(scale, p.round(dst + 0.5), -0.5);
        if !cubic && src < 0.0 {
            0.0
        } else {
            src
        }
    }
}

/// PyTorch's `nearest_idx`: the input index output index `o` of
/// `upsample_nearest` reads (single-precision arithmetic, as PyTorch's).
pub fn nearest_idx(o: i64, input_size: i64, output_size: i64, scale: Option<f64>) -> i64 {
    if output_size == input_size {
        o
    } else if output_size / 2 == input_size && output_size % 2 == 0 {
        o >> 1
    } else {
        let scale =
            compute_scales_value(IndexPrecision::F32, scale, input_size, output_size) as f32;
        ((o as f32 * scale).floor() as i64).min(input_size - 1)
    }
}

/// The two input indices and their weights output index `o` of a linear
/// interpolation reads (PyTorch's `compute_source_index_and_lambda`).
pub fn linear_source(
    p: IndexPrecision,
    scale: f64,
    o: i64,
    input_size: i64,
    output_size: i64,
    align_corners: bool,
) -> (i64, i64, f64, f64) {
    if output_size == input_size {
        return (o, o, 1.0, 0.0);
    }
    let real = area_pixel_compute_source_index(p, scale, o, align_corners, false);
    let i0 = (real.floor() as i64).min(input_size - 1);
    let lambda1 = p.round(real - i0 as f64).clamp(0.0, 1.0);
    let i1 = i0 + i64::from(i0 < input_size - 1);
    (i0, i1, 1.0 - lambda1, lambda1)
}
