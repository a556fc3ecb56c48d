//! 2-d convolution with stride 1 as a sum of shifted products, without
//! im2col.
//!
//! With the input copied once into a zero-padded buffer (`PH x PW` per
//! channel), output position `(oy, ox)` reads, for kernel offset
//! `(ki, kj)`, the padded element at `(oy + ki * dh) * PW + ox + kj * dw`:
//! every kernel offset is one constant shift of the padded planes when the
//! output is computed `PW` positions wide (the last `PW - OW` of each row
//! are thrown away). So the convolution is `kh * kw` products
//! `weight[:, :, ki, kj] @ padded[shift..]`, accumulated, whose right-hand
//! side is read in place: the `C*kh*kw x positions` im2col matrix, written
//! and read once per image (a fifth of `conv2d_resnet`'s time), is never
//! made. The left-hand sides are read in place in the weight, each at a
//! stride of `kh * kw` (a copy regrouped by offset cost more than the
//! products on SqueezeNet's small planes). Each product is only `C` deep,
//! so the accumulators of a tile of
//! the output are stored and reloaded between shifts; with at least
//! [`MIN_CHANNELS`] channels that costs less than im2col does
//! (`kernels/conv2d_resnet`: 8-10% less time at one and two threads).

use aten_core::parallel::{parallel_chunks_mut, GRAIN_SIZE};

use c10_core::{Error, Result};

use super::nn::ConvGeometry;
use crate::gemm::{Gemm, MatMut, MatPtr};

/// Input channels from which the shifted products beat im2col (each
/// product is this deep at least). Measured on the CNN model: its 16- and
/// 32-channel layers took 12% less time this way, its 3-channel first
/// layer (each product 3 deep, the accumulators reloaded every 3 steps)
/// 3% more.
const MIN_CHANNELS: usize = 16;

/// Output positions per block: a block's output (64 channels: 64 KiB of
/// float32) and the padded rows it reads stay in the core's L2 across the
/// `kh * kw` products. On `conv2d_resnet` 512 ran as fast, 1024 5% slower
/// and 128 (blocks of two rows: a partial tile in every third of them)
/// 20% slower.
const BLOCK_POSITIONS: usize = 256;

/// The padded planes of every image, channel after channel, and the
/// geometry of one plane.
struct Padded<T> {
    data: Vec<T>,
    /// Padded height and width.
    height: usize,
    width: usize,
}

impl<T> Padded<T> {
    fn plane(&self) -> usize {
        self.height * self.width
    }
}

/// Whether [`conv2d_shifted`] computes this convolution: stride 1, not
/// pointwise, at least [`MIN_CHANNELS`] input channels, and a padded
/// input at most twice the input's size (wide padding is cheaper to
/// skip, as im2col does, than to store). Not for element types whose sums
/// are kept wider than themselves: the shifts' partial sums would be
/// rounded to the element type between products, where PyTorch rounds a
/// float sum once.
pub(super) fn applies<T: Gemm>(g: &ConvGeometry) -> bool {
    if T::SUMS_WIDER || g.stride != (1, 1) || g.is_pointwise() || g.channels < MIN_CHANNELS {
        return false;
    }
    let padded = (g.height + 2 * g.padding.0).checked_mul(g.width + 2 * g.padding.1);
    matches!(padded, Some(p) if p <= 2 * g.height * g.width + 64)
}

/// The convolution of `batch` contiguous images `x` (`C x H x W` each) with
/// the contiguous `w` (`oc x C x kh x kw`) into `y` (`oc x OH x OW` each),
/// plus `bias`; only where [`applies`] says so. `threads` workers: one
/// image each when there are enough images, else each image's output
/// channels split among them.
#[allow(clippy::too_many_arguments)]
pub(super) fn conv2d_shifted<T: Gemm + Copy>(
    x: &[T],
    w: &[T],
    bias: Option<&[T]>,
    y: &mut [T],
    g: &ConvGeometry,
    batch: usize,
    oc: usize,
    threads: usize,
) -> Result<()> {
    let (kh, kw) = g.kernel;
    let (dh, dw) = g.dilation;
    let plane = g.out_h * g.out_w;
    // The products read the padded buffer at the offsets these extents
    // give (see `image_channels`): they must hold exactly.
    let consistent = g.stride == (1, 1)
        && g.out_h + (kh - 1) * dh == g.height + 2 * g.padding.0
        && g.out_w + (kw - 1) * dw == g.width + 2 * g.padding.1
        && x.len() == batch * g.channels * g.height * g.width
        && w.len() == oc * g.channels * kh * kw
        && y.len() == batch * oc * plane
        && bias.is_none_or(|b| b.len() == oc);
    if !consistent || plane == 0 {
        return Err(Error::internal(
            "conv2d: operands disagree with the geometry",
        ));
    }
    let zero = T::from_f64(0.0);
    let padded = pad(x, g, batch, zero);
    // Output channels per task: all of them, or a share of them.
    let group = if batch >= threads || threads <= 1 {
        oc
    } else {
        oc.div_ceil(threads).max(1)
    };
    // One unit per output channel plane of an image; a part of units is
    // cut at image boundaries.
    parallel_chunks_mut(y, plane, group, |first, part| {
        let mut scratch = Vec::new();
        let (mut unit, mut rest) = (first, part);
        while !rest.is_empty() {
            let (n, o0) = (unit / oc, unit % oc);
            let count = (oc - o0).min(rest.len() / plane);
            let (y_t, tail) = rest.split_at_mut(count * plane);
            image_channels(&padded, w, bias, y_t, g, n, o0, oc, &mut scratch);
            (unit, rest) = (unit + count, tail);
        }
    });
    Ok(())
}

/// The padded copy of `x`: zeros around each channel, and after the last
/// image the `(kw - 1) * dw` elements the last row's discarded positions
/// read past its end.
fn pad<T: Copy + Send + Sync>(x: &[T], g: &ConvGeometry, batch: usize, zero: T) -> Padded<T> {
    let (height, width) = (g.height + 2 * g.padding.0, g.width + 2 * g.padding.1);
    let plane = height * width;
    let slack = (g.kernel.1 - 1) * g.dilation.1;
    let mut data = vec![zero; batch * g.channels * plane + slack];
    let (h, w) = (g.height, g.width);
    let grain = (GRAIN_SIZE as usize).div_ceil(plane.max(1));
    parallel_chunks_mut(
        &mut data[..batch * g.channels * plane],
        plane,
        grain,
        |first, part| {
            for (i, dst) in part.chunks_mut(plane.max(1)).enumerate() {
                let src = &x[(first + i) * h * w..][..h * w];
                for (row, line) in src.chunks(w.max(1)).enumerate() {
                    let at = (row + g.padding.0) * width + g.padding.1;
                    dst[at..at + w].copy_from_slice(line);
                }
            }
        },
    );
    Padded {
        data,
        height,
        width,
    }
}

/// Output channels `o0 ..` (as many as `y_t` holds planes of) of image
/// `n`, block of output rows by block.
#[allow(clippy::too_many_arguments)]
fn image_channels<T: Gemm + Copy>(
    padded: &Padded<T>,
    weight: &[T],
    bias: Option<&[T]>,
    y_t: &mut [T],
    g: &ConvGeometry,
    n: usize,
    o0: usize,
    oc: usize,
    scratch: &mut Vec<T>,
) {
    let (c, pw, plane) = (g.channels, padded.width, g.out_h * g.out_w);
    let m = y_t.len() / plane;
    let rows_per_block = (BLOCK_POSITIONS / pw).max(1);
    let (zero, one) = (T::from_f64(0.0), T::from_f64(1.0));
    let image = n * c * padded.plane();
    // Every index the products read lies inside the buffer: the largest is
    // `image + (c - 1) * plane + shift + (OH * PW - 1)`, with `shift` at
    // most `(kh - 1) * dh * PW + (kw - 1) * dw` and `OH + (kh - 1) * dh`
    // the padded height (checked by `conv2d_shifted`), which `pad`'s slack
    // covers: `(n + 1) * c * plane - 1 + (kw - 1) * dw`.
    debug_assert!(
        image + c * padded.plane() + (g.kernel.1 - 1) * g.dilation.1 <= padded.data.len()
            && weight.len() == g.kernel.0 * g.kernel.1 * oc * c
            && o0 + m <= oc
    );
    let taps = g.kernel.0 * g.kernel.1;
    let mut oy0 = 0;
    while oy0 < g.out_h {
        let rows = rows_per_block.min(g.out_h - oy0);
        let len = rows * pw;
        // The sums start from the bias (every product adds into them).
        scratch.clear();
        for o in o0..o0 + m {
            let b = bias.map_or(zero, |b| b[o]);
            scratch.extend(std::iter::repeat_n(b, len));
        }
        for ki in 0..g.kernel.0 {
            for kj in 0..g.kernel.1 {
                let s = ki * g.kernel.1 + kj;
                let shift = (oy0 + ki * g.dilation.0) * pw + kj * g.dilation.1;
                // SAFETY: `A` is rows `o0 .. o0 + m` of offset `s`'s
                // `oc x c` matrix, read in place in the contiguous
                // `oc x c x kh x kw` weight (element `(o, ci)` at
                // `(o * c + ci) * taps + s`, inside it as the task's
                // channels end by `oc`); `B` is `c` rows (one per channel, `plane`
                // apart) of `len` contiguous elements from
                // `image + shift`, inside the padded buffer by the bound
                // above (`oy0 * pw + len <= OH * PW`); `C` is the
                // `m x len` row-major scratch, distinct from both.
                unsafe {
                    T::gemm(
                        m,
                        len,
                        c,
                        one,
                        MatPtr {
                            ptr: weight.as_ptr().add(o0 * c * taps + s),
                            rs: (c * taps) as isize,
                            cs: taps as isize,
                        },
                        MatPtr {
                            ptr: padded.data.as_ptr().add(image + shift),
                            rs: padded.plane() as isize,
                            cs: 1,
                        },
                        one,
                        MatMut {
                            ptr: scratch.as_mut_ptr(),
                            rs: len as isize,
                            cs: 1,
                        },
                        1,
                    )
                }
            }
        }
        // Keep the first `OW` positions of each padded row.
        for (out, sums) in y_t.chunks_mut(plane).zip(scratch.chunks(len)) {
            for r in 0..rows {
                out[(oy0 + r) * g.out_w..][..g.out_w].copy_from_slice(&sums[r * pw..][..g.out_w]);
            }
        }
        oy0 += rows;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The output element by element from the definition.
    fn reference(g: &ConvGeometry, x: &[f64], w: &[f64], bias: &[f64], batch: usize) -> Vec<f64> {
        let (kh, kw) = g.kernel;
        let oc = bias.len();
        let mut y = Vec::new();
        for n in 0..batch {
            for o in 0..oc {
                for oy in 0..g.out_h {
                    for ox in 0..g.out_w {
                        let mut sum = bias[o];
                        for c in 0..g.channels {
                            for ki in 0..kh {
                                for kj in 0..kw {
                                    let iy =
                                        (oy + ki * g.dilation.0) as isize - g.padding.0 as isize;
                                    let ix =
                                        (ox + kj * g.dilation.1) as isize - g.padding.1 as isize;
                                    if (0..g.height as isize).contains(&iy)
                                        && (0..g.width as isize).contains(&ix)
                                    {
                                        let at = ((n * g.channels + c) * g.height + iy as usize)
                                            * g.width
                                            + ix as usize;
                                        sum +=
                                            x[at] * w[((o * g.channels + c) * kh + ki) * kw + kj];
                                    }
                                }
                            }
                        }
                        y.push(sum);
                    }
                }
            }
        }
        y
    }

    #[test]
    fn shifted_products_match_the_definition() {
        // (size, kernel, padding, dilation): kernels wider than the image,
        // dilated and uneven ones, no padding, and a 1x1 kernel with
        // padding.
        let cases = [
            ((5, 7), (3, 3), (1, 1), (1, 1)),
            ((4, 4), (5, 5), (2, 2), (1, 1)),
            ((6, 5), (3, 3), (2, 2), (2, 2)),
            ((5, 6), (2, 3), (0, 1), (1, 1)),
            ((6, 6), (3, 3), (0, 0), (1, 1)),
            ((3, 4), (1, 1), (1, 1), (1, 1)),
            ((20, 30), (3, 3), (1, 1), (1, 1)),
        ];
        let (channels, oc) = (MIN_CHANNELS, 5);
        for ((height, width), kernel, padding, dilation) in cases {
            let out = |size: usize, k: usize, p: usize, d: usize| size + 2 * p - d * (k - 1);
            let g = ConvGeometry {
                channels,
                height,
                width,
                kernel,
                stride: (1, 1),
                padding,
                dilation,
                out_h: out(height, kernel.0, padding.0, dilation.0),
                out_w: out(width, kernel.1, padding.1, dilation.1),
            };
            assert!(applies::<f64>(&g));
            // Small integers: every sum is exact in any order.
            let values = |len: usize, seed: usize| -> Vec<f64> {
                (0..len)
                    .map(|i| ((i * 7 + seed) % 11) as f64 - 5.0)
                    .collect()
            };
            let w = values(oc * channels * kernel.0 * kernel.1, 3);
            let bias = values(oc, 1);
            for (batch, threads) in [(1, 1), (1, 2), (3, 2), (2, 3)] {
                let x = values(batch * channels * height * width, batch);
                let mut y = vec![f64::NAN; batch * oc * g.out_h * g.out_w];
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                pool.install(|| {
                    conv2d_shifted(&x, &w, Some(&bias), &mut y, &g, batch, oc, threads)
                })
                .unwrap();
                assert_eq!(
                    y,
                    reference(&g, &x, &w, &bias, batch),
                    "{g:?} batch {batch}"
                );
                let mut y = vec![f64::NAN; batch * oc * g.out_h * g.out_w];
                conv2d_shifted(&x, &w, None, &mut y, &g, batch, oc, 1).unwrap();
                let expected = reference(&g, &x, &w, &[0.0; 5], batch);
                assert_eq!(y, expected);
                // float32 takes the AVX-512 kernel where there is one.
                let narrow = |v: &[f64]| v.iter().map(|&v| v as f32).collect::<Vec<f32>>();
                let mut y = vec![f32::NAN; batch * oc * g.out_h * g.out_w];
                conv2d_shifted(&narrow(&x), &narrow(&w), None, &mut y, &g, batch, oc, 1).unwrap();
                assert_eq!(y, narrow(&expected));
            }
        }
    }

    #[test]
    fn other_geometries_are_left_to_im2col() {
        let g = ConvGeometry {
            channels: MIN_CHANNELS,
            height: 8,
            width: 8,
            kernel: (3, 3),
            stride: (1, 1),
            padding: (1, 1),
            dilation: (1, 1),
            out_h: 8,
            out_w: 8,
        };
        assert!(applies::<f64>(&g));
        assert!(!applies::<f64>(&ConvGeometry {
            stride: (2, 1),
            ..g
        }));
        assert!(!applies::<f64>(&ConvGeometry {
            channels: MIN_CHANNELS - 1,
            ..g
        }));
        assert!(!applies::<f64>(&ConvGeometry {
            padding: (9, 9),
            out_h: 24,
            out_w: 24,
            ..g
        }));
        let pointwise = ConvGeometry {
            kernel: (1, 1),
            padding: (0, 0),
            ..g
        };
        assert!(!applies::<f64>(&pointwise));
        // Reduced-precision sums stay in one product (im2col), rounded once.
        assert!(applies::<f32>(&g));
        assert!(!applies::<c10_core::half::bf16>(&g));
        assert!(!applies::<c10_core::half::f16>(&g));
        // A geometry whose extents disagree is an error, not a wild read.
        let wrong = ConvGeometry { out_h: 9, ..g };
        let (x, w) = (
            vec![0.0f32; MIN_CHANNELS * 64],
            vec![0.0f32; MIN_CHANNELS * 9],
        );
        let mut y = vec![0.0f32; 72];
        assert!(conv2d_shifted(&x, &w, None, &mut y, &wrong, 1, 1, 1).is_err());
    }
}
