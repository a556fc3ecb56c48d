//! Depthwise 2-d convolution on CPU (a group per channel, one filter
//! each: MobileNet's, EfficientNet's, ShuffleNet's and ConvNeXt's), direct.
//!
//! The general path convolves each channel apart (PyTorch's slow CPU path)
//! or unfolds every window (im2col) for a one-row product per channel;
//! both move `kh * kw` times the input through memory for `kh * kw`
//! multiply-adds per output. Here a plane's input is first copied, zero
//! padded, into one sub-plane per stride phase (the rows `r * sh + qr` and
//! columns `c * sw + qc` of the padded plane in sub-plane `(qr, qc)`), all
//! with one row pitch a little wider than the output. A tap then reads one
//! sub-plane at a fixed offset from each output, so the whole plane's sums
//! take that tap in one flat loop over `out_h * pitch` values (the columns
//! past the output's width are computed and dropped), a loop the compiler
//! vectorises whatever the stride, and long even for the small planes of
//! a network's last stages. The sums start at zero and take the taps in
//! the filter's order, then the bias. Planes (an image's channel) are
//! split over threads. Output planes of at most
//! [`CHANNELS_LAST_MAX_PLANE`] positions take the channels-innermost
//! kernel of [`depthwise_channels_last`](super::depthwise_channels_last)
//! instead. A window so dilated that the padded copy would be far larger
//! than the planes is declined (the general path serves it).

use std::ops::{Add, Mul};

use aten_core::native::convolution::{DepthwiseConv2dKernel, DEPTHWISE_CONV2D_STUB};
use aten_core::parallel::{parallel_chunks_mut, GRAIN_SIZE};
use aten_core::{ops, Tensor};
use c10_core::{Error, Numeric, Result, ScalarType, TensorBase};

use super::depthwise_channels_last as channels_last;
use super::nn::ConvGeometry;
use super::util::{device_of, try_vec_filled};

/// The geometry of one plane's convolution.
pub(crate) struct Plane {
    height: usize,
    width: usize,
    out_h: usize,
    out_w: usize,
    stride: (usize, usize),
    padding: (usize, usize),
    /// The sub-planes' row pitch: the output's width plus the farthest
    /// column offset of a tap.
    pitch: usize,
    /// The sub-planes' rows: the output's height plus the farthest row
    /// offset of a tap, plus one for the dropped columns' reads.
    rows: usize,
    /// Per tap, in the filter's order, where its reads start in the
    /// sub-planes: its sub-plane's start plus its row and column offset.
    offsets: Vec<usize>,
}

/// Sums computed together, in registers.
const LANES: usize = 32;

/// The largest output plane (`out_h * out_w`) convolved with the channels
/// innermost: below it, a plane at a time is mostly set-up.
const CHANNELS_LAST_MAX_PLANE: usize = 64;

/// Element types the direct kernel computes in (their own arithmetic, as
/// the general path's float32 and float64 products do).
pub(crate) trait Elem:
    Numeric + Copy + Add<Output = Self> + Mul<Output = Self> + Send + Sync
{
    /// [`Plane::run`] on the widest vectors the processor has for `Self`.
    fn run_plane(
        plane: &Plane,
        x: &[Self],
        w: &[Self],
        bias: Option<Self>,
        y: &mut [Self],
        scratch: &mut [Self],
    ) {
        plane.run(x, w, bias, y, scratch)
    }

    /// [`channels_last::run_row`] on the widest vectors the processor has
    /// for `Self`.
    fn run_row(w: &channels_last::Window<'_, Self>, oy: usize, src: &[Self], row: &mut [Self]) {
        channels_last::run_row(w, oy, src, row)
    }
}

impl Elem for f64 {}

impl Elem for f32 {
    fn run_plane(
        plane: &Plane,
        x: &[f32],
        w: &[f32],
        bias: Option<f32>,
        y: &mut [f32],
        scratch: &mut [f32],
    ) {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx512f") {
            // SAFETY: AVX-512F is present (just detected).
            return unsafe { run_avx512(plane, x, w, bias, y, scratch) };
        }
        plane.run(x, w, bias, y, scratch)
    }

    fn run_row(w: &channels_last::Window<'_, f32>, oy: usize, src: &[f32], row: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx512f") {
            // SAFETY: AVX-512F is present (just detected).
            return unsafe { run_row_avx512(w, oy, src, row) };
        }
        channels_last::run_row(w, oy, src, row)
    }
}

/// [`channels_last::run_row`] for float32 compiled for AVX-512.
///
/// # Safety
///
/// The processor has AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn run_row_avx512(
    w: &channels_last::Window<'_, f32>,
    oy: usize,
    src: &[f32],
    row: &mut [f32],
) {
    channels_last::run_row(w, oy, src, row)
}

impl Plane {
    /// The elements of one sub-plane.
    fn phase_len(&self) -> usize {
        self.rows * self.pitch
    }

    /// The scratch one plane needs: every sub-plane, then the sums.
    fn scratch_len(&self) -> usize {
        self.stride.0 * self.stride.1 * self.phase_len() + self.out_h * self.pitch
    }

    /// One plane: `x` (`height x width`) with the `kh * kw` taps `w`, into
    /// `y` (`out_h x out_w`), plus `bias`; `scratch` has
    /// [`scratch_len`](Self::scratch_len) elements.
    #[inline(always)]
    fn run<T: Elem>(&self, x: &[T], w: &[T], bias: Option<T>, y: &mut [T], scratch: &mut [T]) {
        let zero = T::from_f64(0.0);
        let (sh, sw) = self.stride;
        let (pitch, phase_len) = (self.pitch, self.phase_len());
        let (phases, sums) = scratch.split_at_mut(sh * sw * phase_len);
        for qr in 0..sh {
            for qc in 0..sw {
                let sub = &mut phases[(qr * sw + qc) * phase_len..][..phase_len];
                sub.fill(zero);
                for (r, line) in sub.chunks_exact_mut(pitch).enumerate() {
                    let Some(iy) = (r * sh + qr).checked_sub(self.padding.0) else {
                        continue;
                    };
                    if iy >= self.height {
                        break;
                    }
                    let src = &x[iy * self.width..][..self.width];
                    // Columns `c` read input column `c * sw + qc - pw`:
                    // those from `lo` on are past the left padding, and
                    // `count` of them are inside the row.
                    let lo = self.padding.1.saturating_sub(qc).div_ceil(sw);
                    let first = lo * sw + qc - self.padding.1;
                    if lo >= line.len() || first >= self.width {
                        continue;
                    }
                    let count = ((self.width - 1 - first) / sw + 1).min(line.len() - lo);
                    let line = &mut line[lo..lo + count];
                    let src = &src[first..];
                    match sw {
                        1 => line.copy_from_slice(&src[..count]),
                        2 => {
                            // Pairs but the last, whose second may be past
                            // the row: a shuffle of whole vectors.
                            let (body, last) = line.split_at_mut(count - 1);
                            for (d, pair) in body.iter_mut().zip(src.chunks_exact(2)) {
                                *d = pair[0];
                            }
                            last[0] = src[(count - 1) * 2];
                        }
                        _ => {
                            for (d, &v) in line.iter_mut().zip(src.iter().step_by(sw)) {
                                *d = v;
                            }
                        }
                    }
                }
            }
        }
        let len = self.out_h * pitch;
        let sums = &mut sums[..len];
        // A run of sums at a time over every tap, the run held in
        // registers (a fixed length, so the loop unrolls into them): each
        // sum is written once. `offset + len` is within the sub-planes
        // (`rows` and `pitch` were sized for the farthest offsets).
        let mut at = 0;
        while at + LANES <= len {
            let mut acc = [zero; LANES];
            for (&offset, &tap) in self.offsets.iter().zip(w) {
                // Sliced to exactly `LANES` (out of range would be a sizing
                // bug, caught here), so the chunk is always there.
                if let Some(src) = phases[offset + at..][..LANES].first_chunk::<LANES>() {
                    for (a, &v) in acc.iter_mut().zip(src) {
                        *a = *a + tap * v;
                    }
                }
            }
            sums[at..at + LANES].copy_from_slice(&acc);
            at += LANES;
        }
        let tail = &mut sums[at..];
        tail.fill(zero);
        for (&offset, &tap) in self.offsets.iter().zip(w) {
            let src = &phases[offset + at..][..tail.len()];
            for (a, &v) in tail.iter_mut().zip(src) {
                *a = *a + tap * v;
            }
        }
        for (row, line) in y.chunks_exact_mut(self.out_w).zip(sums.chunks_exact(pitch)) {
            match bias {
                Some(b) => {
                    for (d, &v) in row.iter_mut().zip(line) {
                        *d = v + b;
                    }
                }
                None => row.copy_from_slice(&line[..self.out_w]),
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
unsafe fn run_avx512(
    plane: &Plane,
    x: &[f32],
    w: &[f32],
    bias: Option<f32>,
    y: &mut [f32],
    scratch: &mut [f32],
) {
    plane.run(x, w, bias, y, scratch)
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
    let (sh, sw) = (size(stride[0])?, size(stride[1])?);
    let (dh, dw) = (size(dilation[0])?, size(dilation[1])?);
    let overflow = || Error::runtime("convolution: the sizes overflow");
    // The farthest offsets of a tap in its sub-plane.
    let r0 = kernel
        .0
        .saturating_sub(1)
        .checked_mul(dh)
        .ok_or_else(overflow)?
        / sh;
    let c0 = kernel
        .1
        .saturating_sub(1)
        .checked_mul(dw)
        .ok_or_else(overflow)?
        / sw;
    let pitch = out_w.checked_add(c0).ok_or_else(overflow)?;
    let rows = out_h
        .checked_add(r0)
        .and_then(|r| r.checked_add(1))
        .ok_or_else(overflow)?;
    let in_plane = height * width;
    // Declined: a padded copy far larger than the planes (a window so
    // dilated, or a stride so long, that most of the copy is never read).
    let phase_len = rows.checked_mul(pitch);
    let scratch_len = sh
        .checked_mul(sw)
        .zip(phase_len)
        .and_then(|(p, l)| p.checked_mul(l))
        .and_then(|p| p.checked_add(out_h.checked_mul(pitch)?));
    let bound = in_plane
        .saturating_add(out_plane)
        .saturating_mul(4)
        .saturating_add(4096);
    let (Some(scratch_len), Some(phase_len)) = (scratch_len.filter(|&l| l <= bound), phase_len)
    else {
        return Ok(None);
    };
    // Every offset is below the scratch's length (checked above).
    let mut offsets = Vec::with_capacity(kernel.0 * kernel.1);
    for ki in 0..kernel.0 {
        let (qr, r) = ((ki * dh) % sh, (ki * dh) / sh);
        for kj in 0..kernel.1 {
            let (qc, c) = ((kj * dw) % sw, (kj * dw) / sw);
            offsets.push((qr * sw + qc) * phase_len + r * pitch + c);
        }
    }
    let plane = Plane {
        height,
        width,
        out_h,
        out_w,
        stride: (sh, sw),
        padding: (size(padding[0])?, size(padding[1])?),
        pitch,
        rows,
        offsets,
    };
    debug_assert_eq!(scratch_len, plane.scratch_len());
    let out_sizes = [is[0], is[1], out_h as i64, out_w as i64];
    let dtype = T::DTYPE;
    let out = TensorBase::empty(&out_sizes, dtype, device_of(x))?;
    if out_len == 0 {
        return Ok(Some(Tensor::from(out)));
    }
    let x = ops::contiguous(x)?;
    let b: Option<Vec<T>> = bias.map(|b| b.to_vec::<T>()).transpose()?;
    let geometry = channels_last::Geometry {
        images: n,
        conv: ConvGeometry {
            channels: c,
            height,
            width,
            kernel,
            stride: (sh, sw),
            padding: plane.padding,
            dilation: (dh, dw),
            out_h,
            out_w,
        },
    };
    // Small planes with the channels innermost (see the module), when
    // the padded copy stays within a few times the planes.
    let copies_fit = geometry
        .scratch_len()
        .is_some_and(|l| l <= bound.saturating_mul(planes));
    if out_plane <= CHANNELS_LAST_MAX_PLANE && copies_fit {
        // The filters read in place: this path transposes them anyway.
        weight.with_values::<T, _>(|w| {
            x.with_data::<T, _>(|xs| {
                out.with_data_mut::<T, _>(|ys| {
                    channels_last::convolve(&geometry, xs, w, b.as_deref(), ys)
                })?
            })?
        })??;
        return Ok(Some(Tensor::from(out)));
    }
    let w = weight.to_vec::<T>()?;
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
            let failed = std::sync::atomic::AtomicBool::new(false);
            parallel_chunks_mut(ys, out_plane, grain, |first, part| {
                let Ok(mut scratch) = try_vec_filled(T::from_f64(0.0), scratch_len) else {
                    failed.store(true, std::sync::atomic::Ordering::Relaxed);
                    return;
                };
                for (i, y) in part.chunks_exact_mut(out_plane).enumerate() {
                    let p = first + i;
                    let ch = p % c;
                    let image = &xs[p * in_plane..][..in_plane];
                    let filter = &w[ch * taps..][..taps];
                    let bias = b.as_ref().map(|b| b[ch]);
                    T::run_plane(&plane, image, filter, bias, y, &mut scratch);
                }
            });
            if failed.into_inner() {
                return Err(Error::runtime(format!(
                    "convolution: out of memory for a scratch of {scratch_len} elements"
                )));
            }
            Ok(())
        })?
    })??;
    Ok(Some(Tensor::from(out)))
}
