//! Depthwise 2-d convolution on CPU (a group per channel, one filter
//! each: MobileNet's, EfficientNet's, ShuffleNet's and ConvNeXt's), direct.
//!
//! The general path convolves each channel apart (PyTorch's slow CPU path)
//! or unfolds every window (im2col) for a one-row product per channel;
//! both move `kh * kw` times the input through memory for `kh * kw`
//! multiply-adds per output. Here each output row is the sum over the
//! filter's taps of one input row scaled by the tap: per tap a run of
//! outputs (those whose input lies inside the plane, from
//! [`window_columns`]) gets `tap * input` added, a loop the compiler
//! vectorises at stride 1. The sums start at zero and take the taps in
//! the filter's order, then the bias. Planes (an image's channel) are
//! split over threads.

use std::ops::{Add, Mul};

use aten_core::native::convolution::{DepthwiseConv2dKernel, DEPTHWISE_CONV2D_STUB};
use aten_core::parallel::{parallel_chunks_mut, GRAIN_SIZE};
use aten_core::{ops, Tensor};
use c10_core::{Error, Numeric, Result, ScalarType, TensorBase};

use super::util::{device_of, window_columns, WindowColumn};

/// The geometry of one plane's convolution.
struct Plane {
    height: usize,
    width: usize,
    out_h: usize,
    out_w: usize,
    kernel: (usize, usize),
    stride: (usize, usize),
    /// The input row of output row 0 for each kernel row (`ki * dh - ph`).
    row_first: Vec<i64>,
    /// The window's columns along the width.
    columns: Vec<WindowColumn>,
}

/// Element types the direct kernel computes in (their own arithmetic, as
/// the general path's float32 and float64 products do).
trait Elem: Numeric + Copy + Add<Output = Self> + Mul<Output = Self> + Send + Sync {
    /// [`Plane::run`] on the widest vectors the processor has for `Self`.
    fn run_plane(plane: &Plane, x: &[Self], w: &[Self], bias: Option<Self>, y: &mut [Self]) {
        plane.run(x, w, bias, y)
    }
}

impl Elem for f64 {}

impl Elem for f32 {
    fn run_plane(plane: &Plane, x: &[f32], w: &[f32], bias: Option<f32>, y: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx512f") {
            // SAFETY: AVX-512F is present (just detected).
            return unsafe { run_avx512(plane, x, w, bias, y) };
        }
        plane.run(x, w, bias, y)
    }
}

impl Plane {
    /// One plane: `x` (`height x width`) with the `kh * kw` taps `w`, into
    /// `y` (`out_h x out_w`), plus `bias`.
    #[inline(always)]
    fn run<T: Elem>(&self, x: &[T], w: &[T], bias: Option<T>, y: &mut [T]) {
        let zero = T::from_f64(0.0);
        let (sh, sw) = self.stride;
        for (oy, row) in y.chunks_exact_mut(self.out_w).take(self.out_h).enumerate() {
            row.fill(zero);
            for (ki, &first) in self.row_first.iter().enumerate() {
                let iy = first + (oy * sh) as i64;
                if iy < 0 || iy as usize >= self.height {
                    continue;
                }
                let src = &x[iy as usize * self.width..][..self.width];
                let taps = &w[ki * self.kernel.1..][..self.kernel.1];
                for c in &self.columns {
                    let tap = taps[c.tap];
                    let (lo, hi) = (c.outputs.start, c.outputs.end);
                    // `first + o * sw` lies in `[0, width)` for these `o`.
                    let start = (c.first + (lo * sw) as i64) as usize;
                    if sw == 1 {
                        let line = &src[start..][..hi - lo];
                        for (d, &v) in row[lo..hi].iter_mut().zip(line) {
                            *d = *d + tap * v;
                        }
                    } else {
                        for (i, d) in row[lo..hi].iter_mut().enumerate() {
                            *d = *d + tap * src[start + i * sw];
                        }
                    }
                }
            }
            if let Some(b) = bias {
                for d in row.iter_mut() {
                    *d = *d + b;
                }
            }
        }
    }
}

/// [`Plane::run`] for float32 compiled for AVX-512 (16 lanes where the
/// default target's loops have 4).
///
/// # Safety
///
/// The processor has AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn run_avx512(plane: &Plane, x: &[f32], w: &[f32], bias: Option<f32>, y: &mut [f32]) {
    plane.run(x, w, bias, y)
}

/// The direct kernel (registered for CPU as [`DEPTHWISE_CONV2D_STUB`]'s):
/// float32 and float64; `Ok(None)` for other dtypes, which take the
/// general path.
fn depthwise_conv2d_cpu(
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
) -> Result<Option<Tensor>> {
    match x.dtype() {
        Some(ScalarType::Float) => convolve::<f32>(x, weight, bias, stride, padding, dilation),
        Some(ScalarType::Double) => convolve::<f64>(x, weight, bias, stride, padding, dilation),
        _ => Ok(None),
    }
}

aten_core::register_dispatch!(
    DEPTHWISE_CONV2D_STUB,
    DepthwiseConv2dKernel,
    CPU,
    depthwise_conv2d_cpu
);

/// The convolution in `T`.
fn convolve<T: Elem>(
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
) -> Result<Option<Tensor>> {
    let (is, ws) = (x.sizes(), weight.sizes());
    let pairs = [stride, padding, dilation];
    if is.len() != 4
        || ws.len() != 4
        || ws[1] != 1
        || ws[0] != is[1]
        || pairs.iter().any(|p| p.len() != 2)
    {
        return Err(Error::internal("depthwise conv2d: operands disagree"));
    }
    if weight.dtype() != x.dtype() || bias.is_some_and(|b| b.dtype() != x.dtype()) {
        return Ok(None);
    }
    // Checked by `check_shape_forward`: every size is non-negative, the
    // padded input covers the dilated kernel and the extents fit an i64.
    let extent = |i: usize| {
        let wide = i128::from;
        let o = (wide(is[2 + i]) + 2 * wide(padding[i])
            - wide(dilation[i]) * (wide(ws[2 + i]) - 1)
            - 1)
            / wide(stride[i])
            + 1;
        usize::try_from(o).map_err(|_| Error::runtime("convolution: the sizes overflow"))
    };
    let (out_h, out_w) = (extent(0)?, extent(1)?);
    let size =
        |v: i64| usize::try_from(v).map_err(|_| Error::runtime("convolution: negative size"));
    let (n, c, height, width) = (size(is[0])?, size(is[1])?, size(is[2])?, size(is[3])?);
    let kernel = (size(ws[2])?, size(ws[3])?);
    let planes = n
        .checked_mul(c)
        .ok_or_else(|| Error::runtime("convolution: the sizes overflow"))?;
    let out_plane = out_h
        .checked_mul(out_w)
        .ok_or_else(|| Error::runtime("convolution: the sizes overflow"))?;
    let out_len = planes
        .checked_mul(out_plane)
        .ok_or_else(|| Error::runtime("convolution: the sizes overflow"))?;
    let out_sizes = [is[0], is[1], out_h as i64, out_w as i64];
    let dtype = T::DTYPE;
    let out = TensorBase::empty(&out_sizes, dtype, device_of(x))?;
    if out_len == 0 {
        return Ok(Some(Tensor::from(out)));
    }
    let plane = Plane {
        height,
        width,
        out_h,
        out_w,
        kernel,
        stride: (size(stride[0])?, size(stride[1])?),
        row_first: (0..ws[2])
            .map(|ki| {
                // Inside `[-padding, height + padding)`: an i64.
                let at = i128::from(ki) * i128::from(dilation[0]) - i128::from(padding[0]);
                i64::try_from(at).map_err(|_| Error::runtime("convolution: the sizes overflow"))
            })
            .collect::<Result<_>>()?,
        columns: window_columns(
            ws[3],
            stride[1],
            padding[1],
            dilation[1],
            is[3],
            out_w as i64,
        ),
    };
    let x = ops::contiguous(x)?;
    let w = weight.to_vec::<T>()?;
    let b: Option<Vec<T>> = bias.map(|b| b.to_vec::<T>()).transpose()?;
    let in_plane = height * width;
    let taps = kernel.0 * kernel.1;
    // Planes per task: about a grain's worth of multiply-adds.
    let work = out_plane.saturating_mul(taps).max(1);
    let grain = (GRAIN_SIZE as usize).div_ceil(work);
    x.with_data::<T, _>(|xs| {
        out.with_data_mut::<T, _>(|ys| {
            if xs.len() != planes * in_plane || ys.len() != out_len || w.len() != c * taps {
                return Err(Error::runtime(
                    "convolution: an operand was resized while the convolution ran",
                ));
            }
            parallel_chunks_mut(ys, out_plane, grain, |first, part| {
                for (i, y) in part.chunks_exact_mut(out_plane).enumerate() {
                    let p = first + i;
                    let ch = p % c;
                    let image = &xs[p * in_plane..][..in_plane];
                    let filter = &w[ch * taps..][..taps];
                    T::run_plane(&plane, image, filter, b.as_ref().map(|b| b[ch]), y);
                }
            });
            Ok(())
        })?
    })??;
    Ok(Some(Tensor::from(out)))
}
