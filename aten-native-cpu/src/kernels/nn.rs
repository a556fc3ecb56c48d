//! Neural-network kernels: 2-d convolution (im2col + GEMM, or shifted
//! products: `conv_shifted`), layer
//! normalisation, the NLL and MSE losses and dropout.

use aten_core::meta::convolution::conv2d_output;
use aten_core::meta::loss::REDUCTION_NONE;
use aten_core::meta::native_dropout_meta;
use aten_core::native::nn::check_layer_norm_inputs;
use aten_core::parallel::parallel_chunks_mut;
use aten_core::structured::MetaOutput;
use aten_core::tensor_iterator::TensorIterator;
use aten_core::{ops, Tensor};
use c10_core::{Error, Generator, Numeric, Result, Scalar, ScalarType, TensorBase};

use super::conv_shifted;
use super::util::{device_of, dtype_of, try_vec_filled, write_output};
use crate::dispatch_floating;
use crate::gemm::{Gemm, MatMut, MatPtr};
use crate::loops::binary;

/// Geometry of one 2-d convolution.
#[derive(Copy, Clone, Debug)]
pub(super) struct ConvGeometry {
    pub(super) channels: usize,
    pub(super) height: usize,
    pub(super) width: usize,
    pub(super) kernel: (usize, usize),
    pub(super) stride: (usize, usize),
    pub(super) padding: (usize, usize),
    pub(super) dilation: (usize, usize),
    pub(super) out_h: usize,
    pub(super) out_w: usize,
}

impl ConvGeometry {
    pub(super) fn is_pointwise(&self) -> bool {
        self.kernel == (1, 1) && self.stride == (1, 1) && self.padding == (0, 0)
    }

    /// Unfolds the output positions `p0 .. p0 + len` of one image
    /// (`channels x height x width`, contiguous) into `cols`
    /// (`channels * kh * kw` rows of `len`).
    fn im2col<T: Copy>(&self, image: &[T], cols: &mut [T], p0: usize, len: usize, zero: T) {
        let (kh, kw) = self.kernel;
        for c in 0..self.channels {
            let src = &image[c * self.height * self.width..][..self.height * self.width];
            for ki in 0..kh {
                for kj in 0..kw {
                    let row = (c * kh + ki) * kw + kj;
                    let dst = &mut cols[row * len..][..len];
                    if self.stride == (1, 1) && self.out_w == self.width {
                        self.im2col_shifted(src, dst, p0, (ki, kj), zero);
                        continue;
                    }
                    let x0 = (kj * self.dilation.1) as isize - self.padding.1 as isize;
                    // Walk the block one output row (a run of `ox`) at a time.
                    let mut p = p0;
                    while p < p0 + len {
                        let (oy, ox_lo) = (p / self.out_w, p % self.out_w);
                        let ox_hi = self.out_w.min(ox_lo + (p0 + len - p));
                        let line = &mut dst[p - p0..][..ox_hi - ox_lo];
                        p += ox_hi - ox_lo;
                        let iy = (oy * self.stride.0 + ki * self.dilation.0) as isize
                            - self.padding.0 as isize;
                        if iy < 0 || iy >= self.height as isize {
                            line.fill(zero);
                            continue;
                        }
                        let src_row = &src[iy as usize * self.width..][..self.width];
                        if self.stride.1 == 1 {
                            // Contiguous run: copy the in-bounds span at once.
                            let start = x0 + ox_lo as isize;
                            let n = line.len() as isize;
                            let lo = (-start).clamp(0, n) as usize;
                            let hi = (self.width as isize - start).clamp(lo as isize, n) as usize;
                            line[..lo].fill(zero);
                            line[lo..hi].copy_from_slice(
                                &src_row[(lo as isize + start) as usize
                                    ..(hi as isize + start) as usize],
                            );
                            line[hi..].fill(zero);
                        } else {
                            for (d, v) in line.iter_mut().enumerate() {
                                let ix = x0 + ((ox_lo + d) * self.stride.1) as isize;
                                *v = if ix < 0 || ix >= self.width as isize {
                                    zero
                                } else {
                                    src_row[ix as usize]
                                };
                            }
                        }
                    }
                }
            }
        }
    }

    /// Row `(ki, kj)` of the columns of output positions `p0 ..` (as many
    /// as `dst` holds) for a stride-1 convolution whose output is as wide
    /// as its input (3x3 with padding 1 and the like). There, output
    /// position `p` reads the channel's element `p + shift` for one
    /// constant `shift`, so the row is one copy of the channel shifted,
    /// after which the positions whose input row or column lies in the
    /// padding are zeroed (their shifted index may land inside the channel,
    /// on a neighbouring row). The general walk copies each output row
    /// separately; a copy per 32-element row made im2col a fifth of the CNN
    /// model's time.
    fn im2col_shifted<T: Copy>(
        &self,
        src: &[T],
        dst: &mut [T],
        p0: usize,
        (ki, kj): (usize, usize),
        zero: T,
    ) {
        let len = dst.len();
        let dy = (ki * self.dilation.0) as isize - self.padding.0 as isize;
        let dx = (kj * self.dilation.1) as isize - self.padding.1 as isize;
        let width = self.width as isize;
        let start = p0 as isize + dy * width + dx;
        let lo = (-start).clamp(0, len as isize);
        let hi = (src.len() as isize - start).clamp(lo, len as isize);
        let (lo, hi) = (lo as usize, hi as usize);
        dst[..lo].fill(zero);
        if lo < hi {
            // Then `start + lo >= 0` and `start + hi <= src.len()`.
            dst[lo..hi].copy_from_slice(
                &src[(start + lo as isize) as usize..(start + hi as isize) as usize],
            );
        }
        dst[hi..].fill(zero);
        // Zero the output rows whose input row is padding, then, when the
        // kernel column reaches into the padding, each remaining row's
        // first or last columns: one division in all, where the general
        // walk divides once per output row.
        let (out_w, end) = (self.out_w, p0 + len);
        let rows = |lo: isize| lo.clamp(0, self.out_h as isize) as usize;
        let (valid_first, valid_end) = (rows(-dy), rows(self.height as isize - dy).max(rows(-dy)));
        let mut zero_span = |from: usize, to: usize| {
            let (from, to) = (from.clamp(p0, end), to.clamp(p0, end));
            if from < to {
                dst[from - p0..to - p0].fill(zero);
            }
        };
        zero_span(0, valid_first * out_w);
        zero_span(valid_end * out_w, end);
        if dx != 0 {
            // The columns `ox` with `ox + dx` inside the channel.
            let valid_lo = (-dx).clamp(0, width) as usize;
            let valid_hi = (width - dx).clamp(valid_lo as isize, width) as usize;
            for oy in valid_first.max(p0 / out_w)..valid_end.min(end.div_ceil(out_w)) {
                let row = oy * out_w;
                zero_span(row, row + valid_lo);
                zero_span(row + valid_hi, row + out_w);
            }
        }
    }
}

/// Output positions per im2col block: the block's columns (`k` rows of
/// this many) stay in cache between their unfolding and the GEMM.
fn conv_block(k: usize) -> usize {
    (CONV_BLOCK_ELEMENTS / k.max(1)).clamp(64, 4096)
}

/// Elements of one im2col block (float32: 512 KiB).
const CONV_BLOCK_ELEMENTS: usize = 256 * 1024;

/// The weight and geometry of one im2col convolution, for its images.
struct Im2colConv<'a, T> {
    /// The weight, `oc x k` row-major.
    w: &'a [T],
    bias: Option<&'a [T]>,
    g: &'a ConvGeometry,
    /// Output channels.
    oc: usize,
    /// Elements of one filter (`channels * kh * kw`).
    k: usize,
    /// Elements of one output channel (`out_h * out_w`).
    plane: usize,
}

impl<T: Gemm + Copy> Im2colConv<'_, T> {
    /// One image's output `y_n` (`oc x plane`): the bias, then the weight
    /// times the image unfolded block by block into `cols` (the image
    /// itself for a pointwise convolution), on `threads` threads.
    fn image(&self, image: &[T], y_n: &mut [T], threads: usize, cols: &mut Vec<T>) {
        let (oc, k, plane) = (self.oc, self.k, self.plane);
        let zero = T::from_f64(0.0);
        let one = T::from_f64(1.0);
        if let Some(b) = self.bias {
            for (o, row) in y_n.chunks_mut(plane).enumerate() {
                row.fill(b[o]);
            }
        }
        let beta = if self.bias.is_some() { one } else { zero };
        let gemm = |cols: MatPtr<T>, out: &mut [T], len: usize| {
            // SAFETY: `w` is `oc x k` row-major; `cols` is `k x len` at its
            // strides; `out` starts a block of `len` columns of the
            // `oc x plane` row-major `y_n`, distinct from both.
            unsafe {
                T::gemm(
                    oc,
                    len,
                    k,
                    one,
                    MatPtr {
                        ptr: self.w.as_ptr(),
                        rs: k as isize,
                        cs: 1,
                    },
                    cols,
                    beta,
                    MatMut {
                        ptr: out.as_mut_ptr(),
                        rs: plane as isize,
                        cs: 1,
                    },
                    threads,
                )
            }
        };
        if self.g.is_pointwise() {
            let cols = MatPtr {
                ptr: image.as_ptr(),
                rs: plane as isize,
                cs: 1,
            };
            gemm(cols, y_n, plane);
            return;
        }
        let block = conv_block(k);
        cols.resize(k * block.min(plane), zero);
        let mut p0 = 0;
        while p0 < plane {
            let len = block.min(plane - p0);
            self.g.im2col(image, cols, p0, len, zero);
            let m = MatPtr {
                ptr: cols.as_ptr(),
                rs: len as isize,
                cs: 1,
            };
            gemm(m, &mut y_n[p0..], len);
            p0 += len;
        }
    }
}

/// Output positions (over all images) up to which the images of a batch
/// are unfolded side by side into one product of dot products: each
/// image's product alone would be only a few columns wide and read the
/// whole weight again (ResNet's last stages on small images: 2x2 and 4x4
/// planes with 512 x 4608 weights), and a product only a few columns wide
/// fills a fraction of each vector of the row kernel, where a dot product
/// fills them all (EfficientNet's last 1x1 convolutions on a 2x2 plane of
/// one image: 8.8 GFLOP/s by rows).
const TOGETHER_MAX_COLUMNS: usize = 64;

impl<T: Gemm + Copy> Im2colConv<'_, T> {
    /// Whether [`images_together`](Self::images_together) computes a batch
    /// of `batch` images (one image included).
    fn together(&self, batch: usize) -> bool {
        batch.saturating_mul(self.plane) <= TOGETHER_MAX_COLUMNS
    }

    /// All `batch` images of `x` at once: their columns side by side
    /// (`k x (batch * plane)`, stored by columns: each column's `k`
    /// elements contiguous, as the weight's rows are, so the product is
    /// one of dot products that reads the weight once), and the result's
    /// blocks moved to their images' places in `y`.
    fn images_together(&self, x: &[T], y: &mut [T], batch: usize, threads: usize) -> Result<()> {
        let (oc, k, plane) = (self.oc, self.k, self.plane);
        let (zero, one) = (T::from_f64(0.0), T::from_f64(1.0));
        let image_len = x.len() / batch;
        let width = batch * plane;
        let mut one_image = try_vec_filled(zero, k * plane)?;
        let mut cols = try_vec_filled(zero, k * width)?;
        for n in 0..batch {
            let image = &x[n * image_len..][..image_len];
            let unfolded: &[T] = if self.g.is_pointwise() {
                image
            } else {
                self.g.im2col(image, &mut one_image, 0, plane, zero);
                &one_image
            };
            for (r, row) in unfolded.chunks_exact(plane).take(k).enumerate() {
                for (p, &v) in row.iter().enumerate() {
                    cols[(n * plane + p) * k + r] = v;
                }
            }
        }
        // The sums start from the bias when there is one.
        let mut sums = try_vec_filled(zero, oc * width)?;
        if let Some(b) = self.bias {
            for (row, &b) in sums.chunks_exact_mut(width).zip(b) {
                row.fill(b);
            }
        }
        let beta = if self.bias.is_some() { one } else { zero };
        // SAFETY: `w` is `oc x k` row-major, `cols` `k x width` stored by
        // columns and `sums` `oc x width` row-major, both allocated here
        // at those sizes.
        unsafe {
            T::gemm(
                oc,
                width,
                k,
                one,
                MatPtr {
                    ptr: self.w.as_ptr(),
                    rs: k as isize,
                    cs: 1,
                },
                MatPtr {
                    ptr: cols.as_ptr(),
                    rs: 1,
                    cs: k as isize,
                },
                beta,
                MatMut {
                    ptr: sums.as_mut_ptr(),
                    rs: width as isize,
                    cs: 1,
                },
                threads,
            )
        }
        for (i, out) in y.chunks_exact_mut(plane).enumerate() {
            let (n, o) = (i / oc, i % oc);
            out.copy_from_slice(&sums[o * width + n * plane..][..plane]);
        }
        Ok(())
    }
}

/// The convolution of contiguous `input` (N, C, H, W) with contiguous
/// `weight` (OC, C, kh, kw) into a fresh output (N, OC, OH, OW).
fn conv2d_im2col<T: Gemm + Copy>(
    input: &TensorBase,
    weight: &TensorBase,
    bias: Option<&TensorBase>,
    out: &TensorBase,
    g: ConvGeometry,
) -> Result<()> {
    let batch = input.size(0)? as usize;
    let oc = weight.size(0)? as usize;
    let k = g.channels * g.kernel.0 * g.kernel.1;
    let plane = g.out_h * g.out_w;
    let image_len = g.channels * g.height * g.width;
    let bias_values: Option<Vec<T>> = bias.map(|b| b.to_vec::<T>()).transpose()?;
    input.with_data::<T, _>(|x| {
        weight.with_data::<T, _>(|w| {
            out.with_data_mut::<T, _>(|y| {
                // The pointers below assume these extents: the tensors'
                // snapshots must have them (a resize from another thread
                // since the geometry was computed is an error).
                if x.len() != batch * image_len
                    || w.len() != oc * k
                    || y.len() != batch * oc * plane
                {
                    return Err(Error::runtime(
                        "conv2d: an operand was resized while the convolution ran",
                    ));
                }
                let threads = rayon::current_num_threads();
                let conv = Im2colConv {
                    w,
                    bias: bias_values.as_deref(),
                    g: &g,
                    oc,
                    k,
                    plane,
                };
                let run = |n: usize, y_n: &mut [T], threads: usize, cols: &mut Vec<T>| {
                    conv.image(&x[n * image_len..][..image_len], y_n, threads, cols)
                };
                if conv.together(batch) {
                    return conv.images_together(x, y, batch, threads);
                }
                if conv_shifted::applies::<T>(&g) {
                    let bias = bias_values.as_deref();
                    return conv_shifted::conv2d_shifted(x, w, bias, y, &g, batch, oc, threads);
                }
                let per_image = oc * plane;
                if batch >= threads && threads > 1 {
                    // Whole images per thread, each product on that thread.
                    parallel_chunks_mut(y, per_image, 1, |first, part| {
                        let mut cols = Vec::new();
                        for (i, y_n) in part.chunks_mut(per_image).enumerate() {
                            run(first + i, y_n, 1, &mut cols);
                        }
                    });
                } else {
                    let mut cols = Vec::new();
                    for (n, y_n) in y.chunks_mut(per_image).enumerate() {
                        run(n, y_n, threads, &mut cols);
                    }
                }
                Ok(())
            })
        })
    })????;
    Ok(())
}

/// A convolution kernel: the output the Meta kernel describes, computed.
#[allow(clippy::too_many_arguments)]
fn conv2d_forward(
    self_: &Tensor,
    weight: &Tensor,
    kernel_size: &[i64],
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    name: &str,
) -> Result<Tensor> {
    let (out, shape) = conv2d_output(
        self_,
        weight,
        kernel_size,
        bias,
        stride,
        padding,
        dilation,
        name,
    )?;
    if out.numel() == 0 {
        return Ok(out);
    }
    let dtype = dtype_of(self_)?;
    let input = ops::contiguous(self_)?;
    let weight = ops::contiguous(weight)?;
    let bias = bias.map(ops::contiguous).transpose()?;
    // Every size is positive and the padded extent fits an i64 (checked).
    let pair = |(a, b): (i64, i64)| (a as usize, b as usize);
    let g = ConvGeometry {
        channels: shape.channels as usize,
        height: shape.height as usize,
        width: shape.width as usize,
        kernel: pair(shape.kernel),
        stride: pair(shape.stride),
        padding: pair(shape.padding),
        dilation: pair(shape.dilation),
        out_h: shape.out_h as usize,
        out_w: shape.out_w as usize,
    };
    dispatch_floating!(dtype, name, T => conv2d_im2col::<T>(&input, &weight, bias.as_deref(), &out, g))?;
    Ok(out)
}

/// `_slow_conv2d_forward(self, weight, kernel_size, bias, stride, padding)`.
pub fn slow_conv2d_forward(
    self_: &Tensor,
    weight: &Tensor,
    kernel_size: &[i64],
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &[i64],
) -> Result<Tensor> {
    conv2d_forward(
        self_,
        weight,
        kernel_size,
        bias,
        stride,
        padding,
        &[1, 1],
        "slow_conv2d_cpu",
    )
}

/// `slow_conv_dilated2d(self, weight, kernel_size, bias, stride, padding,
/// dilation)`.
pub fn slow_conv_dilated2d(
    self_: &Tensor,
    weight: &Tensor,
    kernel_size: &[i64],
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
) -> Result<Tensor> {
    conv2d_forward(
        self_,
        weight,
        kernel_size,
        bias,
        stride,
        padding,
        dilation,
        "slow_conv_dilated2d",
    )
}

/// `native_layer_norm` on CPU: the normalised output and each row's mean
/// and reciprocal standard deviation.
pub fn layer_norm_cpu(
    input: &Tensor,
    normalized_shape: &[i64],
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
) -> Result<(Tensor, Tensor, Tensor)> {
    let stat_shape = check_layer_norm_inputs(input, normalized_shape, weight, bias)?;
    let sizes = input.sizes();
    let ndim = sizes.len();
    let nd = normalized_shape.len();
    let dtype = dtype_of(input)?;
    let device = device_of(input);
    // Checked: with a zero size, the others may have any product. The
    // input is then empty: no rows, or rows of nothing (mean and rstd NaN).
    let product = |s: &[i64]| {
        if s.contains(&0) {
            Some(0)
        } else {
            s.iter().try_fold(1i64, |n, &v| n.checked_mul(v))
        }
    };
    let overflow = || Error::runtime("layer_norm: the input's size overflows");
    let n = product(normalized_shape).ok_or_else(overflow)? as usize;
    let rows = product(&sizes[..ndim - nd]).ok_or_else(overflow)? as usize;
    if rows == 0 || n == 0 {
        let stat = TensorBase::empty(&stat_shape, dtype, device)?;
        let stat = Tensor::from(stat);
        ops::fill_scalar_(&stat, Scalar::Double(f64::NAN))?;
        return Ok((
            Tensor::from(TensorBase::empty(&sizes, dtype, device)?),
            stat.clone(),
            ops::clone(&stat)?,
        ));
    }
    dispatch_floating!(dtype, "LayerNormKernelImpl", T => {
        let w = weight.map(|t| t.to_vec::<T>()).transpose()?;
        let b = bias.map(|t| t.to_vec::<T>()).transpose()?;
        // The input is read in place when contiguous (no copy), and the
        // outputs are built from vectors the loop fills; the statistics
        // stay in `f64`, summed by `sum_f64`.
        let (y, means, rstds) = input.with_values::<T, _>(|x| {
            if x.len() != rows * n {
                return Err(Error::runtime("layer_norm: the input changed while it ran"));
            }
            let mut y = Vec::with_capacity(x.len());
            let mut means = Vec::with_capacity(rows);
            let mut rstds = Vec::with_capacity(rows);
            for row in x.chunks_exact(n) {
                let mean = sum_f64(row, |v| v) / n as f64;
                let var = sum_f64(row, |v| (v - mean) * (v - mean)) / n as f64;
                let rstd = 1.0 / (var + eps).sqrt();
                y.extend(row.iter().enumerate().map(|(j, v)| {
                    let mut o = (v.to_f64() - mean) * rstd;
                    if let Some(w) = &w {
                        o *= w[j].to_f64();
                    }
                    if let Some(b) = &b {
                        o += b[j].to_f64();
                    }
                    T::from_f64(o)
                }));
                means.push(T::from_f64(mean));
                rstds.push(T::from_f64(rstd));
            }
            Ok((y, means, rstds))
        })??;
        Ok((
            Tensor::from_vec(y, &sizes)?,
            Tensor::from_vec(means, &stat_shape)?,
            Tensor::from_vec(rstds, &stat_shape)?,
        ))
    })
}

/// The sum of `f(v)` over `row` in `f64`, on four independent
/// accumulators: one chain of dependent additions made the statistics of
/// `layer_norm_cpu` latency-bound. The order differs from a left-to-right
/// sum only in the last bits of an `f64`, far below the input dtype's
/// precision.
fn sum_f64<T: Numeric>(row: &[T], f: impl Fn(f64) -> f64) -> f64 {
    let mut acc = [0.0f64; 4];
    let mut chunks = row.chunks_exact(4);
    for c in &mut chunks {
        for (a, v) in acc.iter_mut().zip(c) {
            *a += f(v.to_f64());
        }
    }
    let tail: f64 = chunks.remainder().iter().map(|v| f(v.to_f64())).sum();
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// `nll_loss_forward.output`: the loss and the total weight of the
/// counted targets.
pub fn nll_loss_forward_out_cpu(
    meta: &mut MetaOutput<2>,
    self_: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    reduction: i64,
    ignore_index: i64,
) -> Result<()> {
    let ndim = self_.dim();
    let classes = self_.size(-1)?;
    let dtype = dtype_of(self_)?;
    if dtype_of(target)? != ScalarType::Long {
        return Err(Error::runtime(format!(
            "expected scalar type Long but found {}",
            dtype_of(target)?
        )));
    }
    let mut t = target.to_vec::<i64>()?;
    if ndim == 1 {
        // One sample: PyTorch reads the first target only.
        t.truncate(1);
    }
    let [output, total_weight_out] = meta.outputs();
    let fresh = meta.is_fresh();
    dispatch_floating!(dtype, "nll_loss_out_frame", T => {
        let x = self_.to_vec::<T>()?;
        let w: Option<Vec<T>> = weight.map(|w| w.to_vec::<T>()).transpose()?;
        if w.as_ref().is_some_and(|w| w.len() as i64 != classes)
            || x.len() as i64 != t.len() as i64 * classes
        {
            return Err(Error::runtime("nll_loss: the inputs changed while it ran"));
        }
        let mut losses = Vec::with_capacity(t.len());
        let (mut total, mut total_weight) = (0.0f64, 0.0f64);
        for (i, &cls) in t.iter().enumerate() {
            if cls == ignore_index {
                losses.push(T::from_f64(0.0));
                continue;
            }
            if cls < 0 || cls >= classes {
                return Err(Error::index_error(format!("Target {cls} is out of bounds.")));
            }
            let wc = w.as_ref().map_or(1.0, |w| w[cls as usize].to_f64());
            let l = -x[i * classes as usize + cls as usize].to_f64() * wc;
            losses.push(T::from_f64(l));
            total += l;
            total_weight += wc;
        }
        match reduction {
            0 if ndim == 2 => write_output(output, fresh, &losses)?,
            0 | 2 => write_output(output, fresh, &[T::from_f64(total)])?,
            1 => write_output(output, fresh, &[T::from_f64(total / total_weight)])?,
            other => {
                return Err(Error::value_error(format!(
                    "{other} is not a valid value for reduction"
                )))
            }
        }
        write_output(total_weight_out, fresh, &[T::from_f64(total_weight)])
    })
}

/// `mse_loss.out`: squared differences over the meta function's iteration,
/// or their mean or sum into its 0-dim output.
pub fn mse_loss_out(
    iter: &mut TensorIterator<'_>,
    self_: &Tensor,
    target: &Tensor,
    reduction: i64,
) -> Result<()> {
    if reduction == REDUCTION_NONE {
        return dispatch_floating!(iter.common_dtype(), "mse_cpu", T => {
            binary::<T, T, T>(iter, |x, y| {
                let d = x.to_f64() - y.to_f64();
                T::from_f64(d * d)
            })
        });
    }
    let diff = ops::sub_tensor(self_, target)?;
    let squared = ops::mul_tensor(&diff, &diff)?;
    let output = iter.output(0);
    match reduction {
        1 => ops::mean_out(&squared, Some(&[]), false, None, &output)?,
        2 => ops::sum_intlist_out(&squared, Some(&[]), false, None, &output)?,
        other => {
            return Err(Error::value_error(format!(
                "{other} is not a valid value for reduction"
            )))
        }
    };
    Ok(())
}

/// `native_dropout(input, p, train)`: in training, zeroes each element
/// with probability `p` and scales the rest by `1 / (1 - p)`; returns the
/// output and the keep mask.
pub fn native_dropout(input: &Tensor, p: f64, train: Option<bool>) -> Result<(Tensor, Tensor)> {
    let (output, mask) = native_dropout_meta(input, p, train)?;
    if input.numel() == 0 {
        return Ok((output, mask));
    }
    if train == Some(false) {
        ops::fill_scalar_(&mask, Scalar::Bool(true))?;
        return Ok((ops::clone(input)?, mask));
    }
    let g = Generator::default_cpu();
    let first = g.advance(input.numel() as u64);
    let seed = g.current_seed();
    let keep = 1.0 - p;
    let mask: Vec<bool> = (0..input.numel() as u64)
        .map(|i| Generator::uniform_at(seed, first.wrapping_add(i), 53) < keep)
        .collect();
    let mask = Tensor::from_vec(mask, &input.sizes())?;
    let scale = if keep == 0.0 { 0.0 } else { 1.0 / keep };
    let output = ops::mul_scalar(&ops::mul_tensor(input, &mask)?, Scalar::Double(scale))?;
    Ok((output, mask))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The columns of output positions `p0 .. p0 + len`, element by
    /// element from the definition.
    fn reference(g: &ConvGeometry, image: &[i32], p0: usize, len: usize) -> Vec<i32> {
        let (kh, kw) = g.kernel;
        let mut cols = Vec::new();
        for c in 0..g.channels {
            for ki in 0..kh {
                for kj in 0..kw {
                    for p in p0..p0 + len {
                        let (oy, ox) = (p / g.out_w, p % g.out_w);
                        let iy =
                            (oy * g.stride.0 + ki * g.dilation.0) as isize - g.padding.0 as isize;
                        let ix =
                            (ox * g.stride.1 + kj * g.dilation.1) as isize - g.padding.1 as isize;
                        let inside = (0..g.height as isize).contains(&iy)
                            && (0..g.width as isize).contains(&ix);
                        cols.push(if inside {
                            image[(c * g.height + iy as usize) * g.width + ix as usize]
                        } else {
                            0
                        });
                    }
                }
            }
        }
        cols
    }

    #[test]
    fn im2col_matches_the_definition_on_every_path() {
        // (size, kernel, stride, padding, dilation): same-width stride-1
        // ones take the shifted copy, the others the general walk; kernels
        // wider than the image and padding beyond it included.
        let cases = [
            ((5, 7), (3, 3), (1, 1), (1, 1), (1, 1)),
            ((4, 4), (5, 5), (1, 1), (2, 2), (1, 1)),
            ((6, 5), (3, 3), (1, 1), (2, 2), (2, 2)),
            ((1, 1), (3, 3), (1, 1), (1, 1), (1, 1)),
            ((1, 1), (5, 5), (1, 1), (2, 2), (1, 1)),
            ((6, 6), (3, 3), (2, 2), (1, 1), (1, 1)),
            ((5, 6), (2, 3), (1, 1), (0, 1), (1, 1)),
        ];
        for ((height, width), kernel, stride, padding, dilation) in cases {
            let out = |size: usize, k: usize, s: usize, p: usize, d: usize| {
                (size + 2 * p - d * (k - 1) - 1) / s + 1
            };
            let g = ConvGeometry {
                channels: 2,
                height,
                width,
                kernel,
                stride,
                padding,
                dilation,
                out_h: out(height, kernel.0, stride.0, padding.0, dilation.0),
                out_w: out(width, kernel.1, stride.1, padding.1, dilation.1),
            };
            let image: Vec<i32> = (1..=(2 * height * width) as i32).collect();
            let plane = g.out_h * g.out_w;
            let rows = 2 * kernel.0 * kernel.1;
            // The whole plane, and blocks starting mid-row.
            for (p0, len) in [(0, plane), (1, plane - 1), (plane / 2, plane - plane / 2)] {
                let mut cols = vec![-1; rows * len];
                g.im2col(&image, &mut cols, p0, len, 0);
                assert_eq!(
                    cols,
                    reference(&g, &image, p0, len),
                    "{height}x{width}, kernel {kernel:?}, padding {padding:?}, dilation {dilation:?}, block {p0}+{len}"
                );
            }
        }
    }
}
