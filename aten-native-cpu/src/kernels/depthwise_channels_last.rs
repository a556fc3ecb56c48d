//! Depthwise 2-d convolution with the channels innermost: the way for
//! small output planes (a network's last stages: 8x8 down to 1x1 with
//! hundreds of channels), where a plane at a time leaves the vectors
//! mostly empty and the per-plane set-up dominates.
//!
//! The input is transposed once into a zero-padded `[N, H + 2ph, W + 2pw,
//! C]` copy, and the filters into `[kh * kw, C]`; an output position is
//! then its `C` sums, each tap one multiply-add of two contiguous runs of
//! `C` values (no tests for the edges: the padding is in the copy). The sums
//! start at zero, take every tap in the filter's order (padding taps
//! included, as the plane path and PyTorch's unfolding do: a zero times an
//! infinite weight is NaN there too), then the bias. The `[N, OH, OW, C]`
//! result is transposed back into the contiguous output. Rows of output
//! positions are split over threads.

use aten_core::parallel::{parallel_chunks_mut, GRAIN_SIZE};
use c10_core::{Error, Result};

use super::depthwise_conv::Elem;
use super::nn::ConvGeometry;
use super::util::try_vec_filled;

/// One depthwise convolution: `images` of the geometry `conv` (its
/// `channels` both in and out; the sizes checked by the caller, the output
/// extents following from the others and fitting).
pub(crate) struct Geometry {
    pub(crate) images: usize,
    pub(crate) conv: ConvGeometry,
}

impl Geometry {
    fn padded(&self) -> Option<(usize, usize)> {
        let g = &self.conv;
        Some((
            g.height.checked_add(g.padding.0.checked_mul(2)?)?,
            g.width.checked_add(g.padding.1.checked_mul(2)?)?,
        ))
    }

    /// The elements of the padded channels-last copy of the input.
    fn padded_len(&self) -> Option<usize> {
        let (ph, pw) = self.padded()?;
        self.images
            .checked_mul(ph)?
            .checked_mul(pw)?
            .checked_mul(self.conv.channels)
    }

    /// The scratch [`convolve`] takes, in elements, or `None` when it does
    /// not fit.
    pub(crate) fn scratch_len(&self) -> Option<usize> {
        let g = &self.conv;
        let out = self
            .images
            .checked_mul(g.out_h)?
            .checked_mul(g.out_w)?
            .checked_mul(g.channels)?;
        self.padded_len()?.checked_add(out)
    }
}

/// `y` (`[N, C, OH, OW]`) from `x` (`[N, C, H, W]`), the filters `w`
/// (`[C, kh * kw]`) and one bias per channel.
pub(crate) fn convolve<T: Elem>(
    geometry: &Geometry,
    x: &[T],
    w: &[T],
    bias: Option<&[T]>,
    y: &mut [T],
) -> Result<()> {
    let (g, images) = (&geometry.conv, geometry.images);
    let c = g.channels;
    let taps = g.kernel.0 * g.kernel.1;
    let (in_plane, out_plane) = (g.height * g.width, g.out_h * g.out_w);
    let (Some((ph, pw)), Some(padded_len)) = (geometry.padded(), geometry.padded_len()) else {
        return Err(Error::runtime("convolution: the sizes overflow"));
    };
    if c == 0
        || x.len() != images * c * in_plane
        || y.len() != images * c * out_plane
        || w.len() != c * taps
        || bias.is_some_and(|b| b.len() != c)
    {
        return Err(Error::internal("depthwise conv2d: operands disagree"));
    }
    let zero = T::from_f64(0.0);
    let mut padded = try_vec_filled(zero, padded_len)?;
    let mut sums = try_vec_filled(zero, y.len())?;
    // The filters tap-major: tap `t`'s weights for every channel in a row.
    let mut wt = try_vec_filled(zero, w.len())?;
    transpose(w, c, taps, &mut wt);
    // The input, each image's row `r` to padded row `r + ph`, column
    // `col` to `col + pw`, the channels innermost.
    let padded_image = ph * pw * c;
    for (image, out) in x
        .chunks_exact(c * in_plane)
        .zip(padded.chunks_exact_mut(padded_image))
    {
        let rows = &mut out[g.padding.0 * pw * c..][..g.height * pw * c];
        let grain = (GRAIN_SIZE as usize).div_ceil(pw * c);
        parallel_chunks_mut(rows, pw * c, grain, |first, part| {
            for (i, row) in part.chunks_exact_mut(pw * c).enumerate() {
                let r = first + i;
                let row = &mut row[g.padding.1 * c..][..g.width * c];
                transpose_rows(&image[r * g.width..], c, g.width, in_plane, row);
            }
        });
    }
    // Where each tap reads, from a position's window: the first channel.
    let mut offsets = Vec::with_capacity(taps);
    for ki in 0..g.kernel.0 {
        for kj in 0..g.kernel.1 {
            offsets.push((ki * g.dilation.0 * pw + kj * g.dilation.1) * c);
        }
    }
    let window = Window {
        geometry: g,
        pitch: pw,
        offsets: &offsets,
        weights: &wt,
        bias,
    };
    // The sums, a row of output positions at a time.
    let row_len = g.out_w * c;
    let grain = (GRAIN_SIZE as usize).div_ceil(row_len.saturating_mul(taps).max(1));
    parallel_chunks_mut(&mut sums, row_len, grain, |first, part| {
        for (i, row) in part.chunks_exact_mut(row_len).enumerate() {
            let (image, oy) = ((first + i) / g.out_h, (first + i) % g.out_h);
            let src = &padded[image * padded_image..][..padded_image];
            T::run_row(&window, oy, src, row);
        }
    });
    // Back to one plane per channel.
    for (image, out) in sums
        .chunks_exact(out_plane * c)
        .zip(y.chunks_exact_mut(c * out_plane))
    {
        transpose(image, out_plane, c, out);
    }
    Ok(())
}

/// What every row of one convolution shares.
pub(crate) struct Window<'a, T> {
    geometry: &'a ConvGeometry,
    /// The padded copy's row pitch, in positions.
    pitch: usize,
    /// Per tap, in the filter's order, its reads' offset from the window's
    /// first element.
    offsets: &'a [usize],
    /// The filters tap-major (`[kh * kw, C]`).
    weights: &'a [T],
    bias: Option<&'a [T]>,
}

/// One row `oy` of output positions (`out_w * C` sums) from an image's
/// padded copy `src`.
#[inline(always)]
pub(crate) fn run_row<T: Elem>(w: &Window<'_, T>, oy: usize, src: &[T], row: &mut [T]) {
    let g = w.geometry;
    let c = g.channels;
    let zero = T::from_f64(0.0);
    let taps = w.offsets.iter().zip(w.weights.chunks_exact(c));
    for (ox, sums) in row.chunks_exact_mut(c).enumerate() {
        let window = &src[(oy * g.stride.0 * w.pitch + ox * g.stride.1) * c..];
        // 64 channels at a time, then 32, their sums in registers.
        let mut c0 = 0;
        while c0 + 64 <= c {
            sum_run::<T, 64>(window, taps.clone(), c0, &mut sums[c0..c0 + 64]);
            c0 += 64;
        }
        if c0 + 32 <= c {
            sum_run::<T, 32>(window, taps.clone(), c0, &mut sums[c0..c0 + 32]);
            c0 += 32;
        }
        let tail = &mut sums[c0..];
        tail.fill(zero);
        for (&offset, weights) in taps.clone() {
            let x = &window[offset + c0..][..tail.len()];
            for ((a, &x), &wv) in tail.iter_mut().zip(x).zip(&weights[c0..]) {
                *a = *a + wv * x;
            }
        }
        if let Some(b) = w.bias {
            for (s, &b) in sums.iter_mut().zip(b) {
                *s = *s + b;
            }
        }
    }
}

/// The `N` sums of channels `c0..c0 + N` at one position (`window` from
/// its first element), held in registers over every tap.
#[inline(always)]
fn sum_run<'a, T: Elem + 'a, const N: usize>(
    window: &[T],
    taps: impl Iterator<Item = (&'a usize, &'a [T])>,
    c0: usize,
    sums: &mut [T],
) {
    let mut acc = [T::from_f64(0.0); N];
    for (&offset, weights) in taps {
        let (Some(x), Some(wv)) = (
            window[offset + c0..].first_chunk::<N>(),
            weights[c0..].first_chunk::<N>(),
        ) else {
            continue;
        };
        for ((a, &x), &wv) in acc.iter_mut().zip(x).zip(wv) {
            *a = *a + wv * x;
        }
    }
    sums.copy_from_slice(&acc);
}

/// `dst` (`cols x rows`) = `src` (`rows x cols`) transposed, in tiles of
/// 16 rows so that both sides are read and written a cache line at a time;
/// columns split over threads.
fn transpose<T: Copy + Send + Sync>(src: &[T], rows: usize, cols: usize, dst: &mut [T]) {
    if rows == 0 || cols == 0 {
        return;
    }
    let grain = (GRAIN_SIZE as usize).div_ceil(rows);
    parallel_chunks_mut(dst, rows, grain, |first, part| {
        transpose_rows(&src[first..], rows, part.len() / rows, cols, part);
    });
}

/// `dst` (`cols x rows`, contiguous) = the `rows x cols` block of `src`
/// whose rows start `stride` apart, transposed, 8 rows at a time: 8 x 8
/// blocks read as 8 runs and written as 8 (the compiler shuffles them in
/// registers), the columns past the last whole block one at a time (8
/// reads, one run written), the last rows an element at a time.
fn transpose_rows<T: Copy>(src: &[T], rows: usize, cols: usize, stride: usize, dst: &mut [T]) {
    const B: usize = 8;
    let whole_rows = rows / B * B;
    let whole_cols = cols / B * B;
    for r0 in (0..whole_rows).step_by(B) {
        let runs: [&[T]; B] = std::array::from_fn(|i| &src[(r0 + i) * stride..][..cols]);
        for c0 in (0..whole_cols).step_by(B) {
            let block: [[T; B]; B] =
                std::array::from_fn(|i| std::array::from_fn(|j| runs[i][c0 + j]));
            for j in 0..B {
                let out = &mut dst[(c0 + j) * rows + r0..][..B];
                for (i, d) in out.iter_mut().enumerate() {
                    *d = block[i][j];
                }
            }
        }
        for col in whole_cols..cols {
            let run: [T; B] = std::array::from_fn(|i| runs[i][col]);
            dst[col * rows + r0..][..B].copy_from_slice(&run);
        }
    }
    for r in whole_rows..rows {
        for (col, &v) in src[r * stride..][..cols].iter().enumerate() {
            dst[col * rows + r] = v;
        }
    }
}
