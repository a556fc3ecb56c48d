//! Pooling over the last two or three dimensions: max pooling with
//! indices (`max_pool2d_with_indices`, `max_pool3d_with_indices`), average
//! pooling (`avg_pool3d`) and adaptive average pooling
//! (`_adaptive_avg_pool2d`, `_adaptive_avg_pool3d` and the 2-d backward).
//!
//! One geometry serves every rank: a 2-d pooling is a 3-d one of depth 1
//! (`PoolGeometry`), as PyTorch's CPU kernels do it. The windows follow
//! PyTorch's index arithmetic (`cpu_max_pool`, `cpu_avg_pool`,
//! `cpu_adaptive_avg_pool`); sums accumulate in `f64` for floating types
//! and exactly for int64.

use aten_core::meta::pooling::{Pool2d, Pool3d};
use aten_core::meta::{
    adaptive_avg_pool2d_backward_meta, adaptive_avg_pool2d_meta, adaptive_avg_pool3d_meta,
    max_pool3d_with_indices_meta,
};
use aten_core::parallel::{parallel_chunks_mut, GRAIN_SIZE};
use aten_core::structured::{copy_to_out, MetaOutput};
use aten_core::Tensor;
use c10_core::{dispatch_dtype, Error, Numeric, Result, ScalarType, ThreadShared};

use super::util::{dtype_of, not_implemented, window_columns, with_fresh_output_of, write_output};
use crate::dispatch_floating;

/// Unit parameters (adaptive pooling has no window parameters).
const ONES: [i64; 3] = [1; 3];
/// Zero paddings.
const ZEROS: [i64; 3] = [0; 3];

/// The window of a pooling over the last three dimensions of `planes`
/// volumes (`[depth, height, width]` triples).
#[derive(Copy, Clone, Debug)]
pub(crate) struct PoolGeometry {
    /// Volumes pooled independently (the leading dimensions' product).
    pub planes: usize,
    /// The input volume's sizes.
    pub input: [i64; 3],
    /// The output volume's sizes.
    pub output: [i64; 3],
    /// The window.
    pub kernel: [i64; 3],
    /// The step.
    pub stride: [i64; 3],
    /// The implicit padding before each dimension.
    pub padding: [i64; 3],
    /// The spacing of the window's elements.
    pub dilation: [i64; 3],
}

impl PoolGeometry {
    /// The geometry of pooling `input` (sizes `sizes`, the pooled sizes
    /// `out_sizes`) over its last `dims` (2 or 3) dimensions, parameters
    /// given for those dimensions.
    fn new(
        sizes: &[i64],
        out_sizes: &[i64],
        dims: usize,
        params: [&[i64]; 4],
    ) -> Result<PoolGeometry> {
        let ndim = sizes.len();
        if ndim < dims
            || out_sizes.len() != ndim
            || sizes[..ndim - dims] != out_sizes[..ndim - dims]
        {
            return Err(Error::runtime("pooling: the input changed while it ran"));
        }
        let lead = 3 - dims;
        let spatial = |s: &[i64], fill: i64| -> [i64; 3] {
            std::array::from_fn(|i| if i < lead { fill } else { s[i - lead] })
        };
        let planes = sizes[..ndim - dims]
            .iter()
            .try_fold(1usize, |n, &s| n.checked_mul(usize::try_from(s).ok()?))
            .ok_or_else(|| Error::runtime("pooling: the input's size overflows"))?;
        Ok(PoolGeometry {
            planes,
            input: spatial(&sizes[ndim - dims..], 1),
            output: spatial(&out_sizes[ndim - dims..], 1),
            kernel: spatial(params[0], 1),
            stride: spatial(params[1], 1),
            padding: spatial(params[2], 0),
            dilation: spatial(params[3], 1),
        })
    }

    fn input_len(&self) -> usize {
        self.input.iter().map(|&s| s as usize).product()
    }

    fn output_len(&self) -> usize {
        self.output.iter().map(|&s| s as usize).product()
    }

    /// Calls `f(plane, out_position, o)` for every output position of
    /// every plane, in row-major order; `o` is the position per dimension.
    fn for_each_output(&self, mut f: impl FnMut(usize, usize, [i64; 3])) {
        let mut at = 0;
        for plane in 0..self.planes {
            for od in 0..self.output[0] {
                for oh in 0..self.output[1] {
                    for ow in 0..self.output[2] {
                        f(plane, at, [od, oh, ow]);
                        at += 1;
                    }
                }
            }
        }
    }

    /// The input positions max pooling visits along dimension `i` for
    /// output position `o` there: the first in-range position, the end,
    /// and the step (PyTorch's `cpu_max_pool`: a window starting before
    /// the input starts at its first element inside it).
    fn max_window(&self, i: usize, o: i64) -> (i64, i64, i64) {
        let wide = i128::from;
        let d = wide(self.dilation[i]);
        let mut start = wide(o) * wide(self.stride[i]) - wide(self.padding[i]);
        let end = (start + (wide(self.kernel[i]) - 1) * d + 1).min(wide(self.input[i]));
        if start < 0 {
            start += (-start + d - 1) / d * d;
        }
        // Both lie in `[0, input + dilation)`: they fit an i64.
        (start as i64, end.max(0) as i64, self.dilation[i])
    }

    /// The window of average pooling for output position `o`: per
    /// dimension the clipped `[start, end)` and the unclipped extent over
    /// the padded input (PyTorch's `cpu_avg_pool`).
    fn avg_window(&self, o: [i64; 3]) -> ([(i64, i64); 3], i128) {
        let mut padded = 1i128;
        let window = std::array::from_fn(|i| {
            let wide = i128::from;
            let start = wide(o[i]) * wide(self.stride[i]) - wide(self.padding[i]);
            let end =
                (start + wide(self.kernel[i])).min(wide(self.input[i]) + wide(self.padding[i]));
            padded *= end - start;
            let (lo, hi) = (start.max(0), end.min(wide(self.input[i])));
            // Clipped to the input.
            (lo.min(wide(self.input[i])) as i64, hi.max(0) as i64)
        });
        (window, padded)
    }
}

/// Max pooling of contiguous planes `x` into `values` and `indices` (one
/// per output position of each plane, row-major): the maxima (NaN wins)
/// and their flat positions within each input volume.
///
/// A window along one dimension depends only on the output position along
/// that dimension, so the windows are computed once per call (in wide
/// arithmetic) and the loops below only walk indices: computing them per
/// output element made this kernel 14% of the CNN model's time.
fn max_pool<T: Numeric + PartialOrd + Send + Sync>(
    g: &PoolGeometry,
    x: &[T],
    lowest: T,
    values: &mut [T],
    indices: &mut [i64],
) {
    let (plane_len, out_len) = (g.input_len(), g.output_len());
    let iw = g.input[2];
    let windows: [Vec<(i64, i64, i64)>; 3] =
        std::array::from_fn(|i| (0..g.output[i]).map(|o| g.max_window(i, o)).collect());
    let columns = window_columns(
        g.kernel[2],
        g.stride[2],
        g.padding[2],
        g.dilation[2],
        iw,
        g.output[2],
    );
    if out_len == 0 || indices.len() != values.len() {
        return;
    }
    // Planes per task: about a grain's worth of comparisons.
    let taps = usize::try_from(g.kernel.iter().product::<i64>())
        .unwrap_or(1)
        .max(1);
    let grain = (GRAIN_SIZE as usize).div_ceil(out_len.saturating_mul(taps));
    // SAFETY: each part of `values` below is whole planes, and the indices
    // of those planes are the same range of `indices` (of the same
    // length), which no other part touches; `indices` is borrowed mutably
    // until the loop has returned.
    let shared_indices = unsafe { ThreadShared::new(indices.as_mut_ptr()) };
    #[cfg(target_arch = "x86_64")]
    let (avx512, avx2) = (
        std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512vl")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512dq"),
        std::is_x86_feature_detected!("avx2"),
    );
    parallel_chunks_mut(values, out_len, grain, |first, part| {
        for (i, values) in part.chunks_exact_mut(out_len).enumerate() {
            let plane = first + i;
            let volume = &x[plane * plane_len..][..plane_len];
            // SAFETY: see `shared_indices`: plane `plane`'s indices lie inside
            // `indices` and belong to this part alone.
            let indices = unsafe {
                std::slice::from_raw_parts_mut(shared_indices.get().add(plane * out_len), out_len)
            };
            let plane = PlaneWindows {
                g,
                windows: &windows,
                columns: &columns,
                lowest,
            };
            #[cfg(target_arch = "x86_64")]
            if avx512 {
                // SAFETY: the AVX-512 subsets were detected.
                unsafe { max_pool_plane_avx512(&plane, volume, values, indices) };
                continue;
            }
            #[cfg(target_arch = "x86_64")]
            if avx2 {
                // SAFETY: AVX2 was detected.
                unsafe { max_pool_plane_avx2(&plane, volume, values, indices) };
                continue;
            }
            max_pool_plane(&plane, volume, values, indices);
        }
    });
}

/// What every plane of a max pooling shares: the geometry, the windows
/// per dimension and the window's columns.
struct PlaneWindows<'a, T> {
    g: &'a PoolGeometry,
    windows: &'a [Vec<(i64, i64, i64)>; 3],
    columns: &'a [super::util::WindowColumn],
    lowest: T,
}

/// [`max_pool_plane`] compiled for AVX-512, so its column passes run on
/// 16 lanes with masked stores (4 with AVX2's).
///
/// # Safety
///
/// The processor must have AVX-512F, VL, BW and DQ.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq")]
unsafe fn max_pool_plane_avx512<T: Numeric + PartialOrd>(
    p: &PlaneWindows<'_, T>,
    volume: &[T],
    values: &mut [T],
    indices: &mut [i64],
) {
    max_pool_plane(p, volume, values, indices)
}

/// [`max_pool_plane`] compiled for AVX2, so its column passes run on
/// vectors.
///
/// # Safety
///
/// The processor must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn max_pool_plane_avx2<T: Numeric + PartialOrd>(
    p: &PlaneWindows<'_, T>,
    volume: &[T],
    values: &mut [T],
    indices: &mut [i64],
) {
    max_pool_plane(p, volume, values, indices)
}

/// Max pooling of one plane: `values` and `indices` are its outputs,
/// row-major.
#[inline(always)]
fn max_pool_plane<T: Numeric + PartialOrd>(
    p: &PlaneWindows<'_, T>,
    volume: &[T],
    values: &mut [T],
    indices: &mut [i64],
) {
    let [_, ih, iw] = p.g.input;
    let stride = p.g.stride[2];
    let out_w = p.windows[2].len();
    let mut at = 0;
    for &(d0, d1, dd) in &p.windows[0] {
        for &(h0, h1, dh) in &p.windows[1] {
            // One output row at a time, its windows' rows outermost: the
            // comparisons of neighbouring outputs do not wait for each
            // other, and run on vectors. Each output still visits its
            // window in PyTorch's order, so the first of equal maxima wins
            // as there.
            let row_values = &mut values[at..at + out_w];
            let row_indices = &mut indices[at..at + out_w];
            for (o, &(w0, _, _)) in p.windows[2].iter().enumerate() {
                row_values[o] = p.lowest;
                row_indices[o] = (d0 * ih + h0) * iw + w0;
            }
            let mut z = d0;
            while z < d1 {
                let mut y = h0;
                while y < h1 {
                    let row = (z * ih + y) * iw;
                    // The window's columns one at a time, each over every
                    // output it is inside the input for.
                    for column in p.columns {
                        let outputs = column.outputs.clone();
                        let first = row + column.first + outputs.start as i64 * stride;
                        let best = Best {
                            values: &mut row_values[outputs.clone()],
                            indices: &mut row_indices[outputs],
                        };
                        match stride {
                            1 => best.column::<1>(volume, first, 1),
                            2 => best.column::<2>(volume, first, 2),
                            _ => best.column::<0>(volume, first, stride),
                        }
                    }
                    y += dh;
                }
                z += dd;
            }
            at += out_w;
        }
    }
}

/// The maxima so far of a run of outputs and where they are.
struct Best<'a, T> {
    values: &'a mut [T],
    indices: &'a mut [i64],
}

impl<T: Copy + PartialOrd> Best<'_, T> {
    /// Compares output `o`'s best with input element `first + o * stride`
    /// (`S` is the stride when known at compile time, 0 when not): a
    /// contiguous or constant-stride read the compiler turns into vector
    /// loads.
    #[inline(always)]
    fn column<const S: usize>(self, volume: &[T], first: i64, stride: i64) {
        let step = if S == 0 { stride as usize } else { S };
        let n = self.values.len();
        if n == 0 {
            return;
        }
        // The outputs' inputs all lie inside the plane (`window_columns`):
        // output `o` reads `src[o * step]`, the last one `src[(n - 1) *
        // step]`. All but the last read the first element of a whole
        // chunk of `step`, a constant-stride read the compiler turns into
        // vector loads and shuffles when `S` is known.
        let src = &volume[first as usize..][..(n - 1) * step + 1];
        let (values, last_value) = self.values.split_at_mut(n - 1);
        let (indices, last_index) = self.indices.split_at_mut(n - 1);
        let (body, last) = src.split_at((n - 1) * step);
        let (chunks, last) = (body.chunks_exact(step), last[0]);
        let pairs = values.iter_mut().zip(indices.iter_mut());
        for (o, ((best, best_at), chunk)) in pairs.zip(chunks).enumerate() {
            let x = first + (o * step) as i64;
            take_if_larger(best, best_at, chunk[0], x);
        }
        let x = first + ((n - 1) * step) as i64;
        take_if_larger(&mut last_value[0], &mut last_index[0], last, x);
    }
}

/// PyTorch's `val > maxval || isnan(val)` step of a max pooling, as two
/// selects rather than a branch: on random data the branch mispredicted
/// about every other element. `|`, not `||`: a short circuit is a branch
/// too.
#[inline(always)]
fn take_if_larger<T: Copy + PartialOrd>(best: &mut T, best_at: &mut i64, v: T, x: i64) {
    let take = (v > *best) | v.partial_cmp(&v).is_none();
    *best = std::hint::select_unpredictable(take, v, *best);
    *best_at = std::hint::select_unpredictable(take, x, *best_at);
}

/// Runs max pooling for `self_` into the two outputs (`fresh` when the
/// call allocated them): read in place when contiguous, written in place
/// when fresh (no copies through vectors).
fn max_pool_into(
    self_: &Tensor,
    values_out: &Tensor,
    indices_out: &Tensor,
    fresh: bool,
    g: &PoolGeometry,
    name: &str,
) -> Result<()> {
    let dtype = dtype_of(self_)?;
    if dtype == ScalarType::Bool {
        return Err(not_implemented(name, dtype));
    }
    let changed = || Error::runtime(format!("{name}: the input changed while it ran"));
    dispatch_dtype!(dtype, T => {
        let lowest = match dtype {
            ScalarType::Byte => T::from_i64(0),
            ScalarType::Char => T::from_i64(i64::from(i8::MIN)),
            ScalarType::Short => T::from_i64(i64::from(i16::MIN)),
            ScalarType::Int => T::from_i64(i64::from(i32::MIN)),
            ScalarType::Long => T::from_i64(i64::MIN),
            _ => T::from_f64(f64::NEG_INFINITY),
        };
        let out_len = g.planes * g.output_len();
        with_fresh_output_of(values_out, fresh, |values| {
            with_fresh_output_of(indices_out, fresh, |indices| {
                self_.with_values::<T, _>(|x| {
                    if x.len() != g.planes * g.input_len() {
                        return Err(changed());
                    }
                    values.with_data_mut::<T, _>(|v| {
                        indices.with_data_mut::<i64, _>(|ix| {
                            if v.len() != out_len || ix.len() != out_len {
                                return Err(changed());
                            }
                            max_pool(g, x, lowest, v, ix);
                            Ok(())
                        })?
                    })?
                })?
            })
        })
    }, _ => Err(not_implemented(name, dtype)))
}

/// `max_pool2d_with_indices.out`: the maxima of each window (NaN wins)
/// and their flat positions in the input plane.
pub fn max_pool2d_with_indices_out_cpu(
    meta: &mut MetaOutput<2>,
    self_: &Tensor,
    kernel_size: &[i64],
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    _ceil_mode: bool,
) -> Result<()> {
    let p = Pool2d::new(kernel_size, stride, padding, dilation)?;
    let pair = |(a, b): (i64, i64)| [a, b];
    let [values, indices] = meta.outputs();
    let g = PoolGeometry::new(
        &self_.sizes(),
        &values.sizes(),
        2,
        [
            &pair(p.kernel),
            &pair(p.stride),
            &pair(p.padding),
            &pair(p.dilation),
        ],
    )?;
    max_pool_into(self_, values, indices, meta.is_fresh(), &g, "max_pool2d")
}

/// `max_pool3d_with_indices(self, kernel_size, stride, padding, dilation,
/// ceil_mode)`.
pub fn max_pool3d_with_indices_cpu(
    self_: &Tensor,
    kernel_size: &[i64],
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    ceil_mode: bool,
) -> Result<(Tensor, Tensor)> {
    let (values, indices) =
        max_pool3d_with_indices_meta(self_, kernel_size, stride, padding, dilation, ceil_mode)?;
    let p = Pool3d::parse("max_pool3d", kernel_size, stride, padding, Some(dilation))?;
    let g = PoolGeometry::new(
        &self_.sizes(),
        &values.sizes(),
        3,
        [&p.kernel, &p.stride, &p.padding, &p.dilation],
    )?;
    max_pool_into(self_, &values, &indices, true, &g, "max_pool3d")?;
    Ok((values, indices))
}

/// `max_pool3d_with_indices.out(..., *, out, indices)`.
#[allow(clippy::too_many_arguments)]
pub fn max_pool3d_with_indices_out_cpu(
    self_: &Tensor,
    kernel_size: &[i64],
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    ceil_mode: bool,
    out: &Tensor,
    indices: &Tensor,
) -> Result<(Tensor, Tensor)> {
    let (v, i) =
        max_pool3d_with_indices_cpu(self_, kernel_size, stride, padding, dilation, ceil_mode)?;
    copy_to_out(&v, out)?;
    copy_to_out(&i, indices)?;
    Ok((out.clone(), indices.clone()))
}

/// The divisor of an average-pooling window: the override, or the padded
/// or clipped window's element count.
fn avg_divisor(
    padded: i128,
    window: &[(i64, i64); 3],
    count_include_pad: bool,
    divisor_override: Option<i64>,
) -> i128 {
    match divisor_override {
        Some(d) => i128::from(d),
        None if count_include_pad => padded,
        None => window.iter().map(|&(lo, hi)| i128::from(hi - lo)).product(),
    }
}

/// Sums every window of contiguous planes `x` with `add` and finishes it
/// with `finish(sum, divisor(padded_extent, window))`; empty windows give
/// `empty`.
fn avg_pool<T: Copy, A: Copy>(
    g: &PoolGeometry,
    x: &[T],
    zero: A,
    add: impl Fn(A, T) -> A,
    finish: impl Fn(A, i128) -> T,
    empty: T,
    divisor: impl Fn(i128, &[(i64, i64); 3]) -> i128,
) -> Vec<T> {
    let plane_len = g.input_len();
    let [_, ih, iw] = g.input;
    let mut out = Vec::with_capacity(g.planes * g.output_len());
    g.for_each_output(|plane, _, o| {
        let volume = &x[plane * plane_len..][..plane_len];
        let (window, padded) = g.avg_window(o);
        let [(d0, d1), (h0, h1), (w0, w1)] = window;
        if d0 >= d1 || h0 >= h1 || w0 >= w1 {
            out.push(empty);
            return;
        }
        let mut sum = zero;
        for z in d0..d1 {
            for y in h0..h1 {
                let row = ((z * ih + y) * iw) as usize;
                for v in &volume[row + w0 as usize..row + w1 as usize] {
                    sum = add(sum, *v);
                }
            }
        }
        out.push(finish(sum, divisor(padded, &window)));
    });
    out
}

/// `avg_pool3d.out` (the impl of the structured family): floating types
/// and int64 (integer division, as PyTorch's kernel divides).
#[allow(clippy::too_many_arguments)]
pub fn avg_pool3d_out_cpu(
    meta: &mut MetaOutput,
    self_: &Tensor,
    kernel_size: &[i64],
    stride: &[i64],
    padding: &[i64],
    _ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: Option<i64>,
) -> Result<()> {
    let p = Pool3d::parse("avg_pool3d", kernel_size, stride, padding, None)?;
    let out = meta.output();
    let g = PoolGeometry::new(
        &self_.sizes(),
        &out.sizes(),
        3,
        [&p.kernel, &p.stride, &p.padding, &p.dilation],
    )?;
    let dtype = dtype_of(self_)?;
    let fresh = meta.is_fresh();
    let divisor = |padded: i128, window: &[(i64, i64); 3]| {
        avg_divisor(padded, window, count_include_pad, divisor_override)
    };
    let check = |n: usize| {
        if n != g.planes * g.input_len() {
            return Err(Error::runtime("avg_pool3d: the input changed while it ran"));
        }
        Ok(())
    };
    if dtype == ScalarType::Long {
        let x = self_.to_vec::<i64>()?;
        check(x.len())?;
        let y = avg_pool(
            &g,
            &x,
            0i64,
            |a, v| a.wrapping_add(v),
            // Truncating division, as C++'s; a divisor of 0 cannot occur
            // (windows are non-empty, overrides non-zero).
            |s, d| (i128::from(s) / d.max(1)) as i64,
            0,
            divisor,
        );
        return write_output(out, fresh, &y);
    }
    dispatch_floating!(dtype, "avg_pool3d", T => {
        let x = self_.to_vec::<T>()?;
        check(x.len())?;
        let y = avg_pool(
            &g,
            &x,
            0f64,
            |a, v| a + v.to_f64(),
            |s, d| T::from_f64(s / d as f64),
            T::from_f64(0.0),
            divisor,
        );
        write_output(out, fresh, &y)
    })
}

/// PyTorch's adaptive window `[start, end)` of output `o` of `out` over
/// `input` elements (`start_index`, `end_index`, in integers).
fn adaptive_range(o: i64, out: i64, input: i64) -> (i64, i64) {
    let (o, out, input) = (i128::from(o), i128::from(out), i128::from(input));
    let start = (o * input) / out;
    let end = ((o + 1) * input + out - 1) / out;
    // Within `[0, input]`.
    (start as i64, end as i64)
}

/// Adaptive average pooling of contiguous volumes `x` (`g.kernel` etc.
/// unused): each output the mean of its adaptive window.
fn adaptive_avg_pool<T: Numeric>(g: &PoolGeometry, x: &[T]) -> Vec<T> {
    let plane_len = g.input_len();
    let [_, ih, iw] = g.input;
    let mut out = Vec::with_capacity(g.planes * g.output_len());
    g.for_each_output(|plane, _, o| {
        let volume = &x[plane * plane_len..][..plane_len];
        let r: [(i64, i64); 3] =
            std::array::from_fn(|i| adaptive_range(o[i], g.output[i], g.input[i]));
        let mut sum = 0f64;
        for z in r[0].0..r[0].1 {
            for y in r[1].0..r[1].1 {
                let row = ((z * ih + y) * iw) as usize;
                for v in &volume[row + r[2].0 as usize..row + r[2].1 as usize] {
                    sum += v.to_f64();
                }
            }
        }
        let n: i64 = r.iter().map(|&(a, b)| b - a).product();
        out.push(T::from_f64(sum / n as f64));
    });
    out
}

/// The gradient of [`adaptive_avg_pool`]: each output's gradient spread
/// evenly over its window.
fn adaptive_avg_pool_backward<T: Numeric>(g: &PoolGeometry, grad: &[T]) -> Vec<T> {
    let plane_len = g.input_len();
    let [_, ih, iw] = g.input;
    let mut gi = vec![0f64; g.planes * plane_len];
    g.for_each_output(|plane, at, o| {
        let volume = &mut gi[plane * plane_len..][..plane_len];
        let r: [(i64, i64); 3] =
            std::array::from_fn(|i| adaptive_range(o[i], g.output[i], g.input[i]));
        let n: i64 = r.iter().map(|&(a, b)| b - a).product();
        let delta = grad[at].to_f64() / n as f64;
        for z in r[0].0..r[0].1 {
            for y in r[1].0..r[1].1 {
                let row = ((z * ih + y) * iw) as usize;
                for v in &mut volume[row + r[2].0 as usize..row + r[2].1 as usize] {
                    *v += delta;
                }
            }
        }
    });
    gi.into_iter().map(T::from_f64).collect()
}

/// Fills `out` (fresh) with the adaptive average pooling of `self_` over
/// its last `dims` dimensions.
fn adaptive_avg_pool_into(self_: &Tensor, out: &Tensor, dims: usize, name: &str) -> Result<()> {
    let g = PoolGeometry::new(
        &self_.sizes(),
        &out.sizes(),
        dims,
        [&ONES[..dims], &ONES[..dims], &ZEROS[..dims], &ONES[..dims]],
    )?;
    let dtype = dtype_of(self_)?;
    dispatch_floating!(dtype, name, T => {
        let x = self_.to_vec::<T>()?;
        if x.len() != g.planes * g.input_len() {
            return Err(Error::runtime(format!("{name}: the input changed while it ran")));
        }
        write_output(out, true, &adaptive_avg_pool(&g, &x))
    })
}

/// `_adaptive_avg_pool2d(self, output_size)`.
pub fn adaptive_avg_pool2d_cpu(self_: &Tensor, output_size: &[i64]) -> Result<Tensor> {
    let out = adaptive_avg_pool2d_meta(self_, output_size)?;
    adaptive_avg_pool_into(self_, &out, 2, "adaptive_avg_pool2d")?;
    Ok(out)
}

/// `_adaptive_avg_pool3d(self, output_size)`.
pub fn adaptive_avg_pool3d_cpu(self_: &Tensor, output_size: &[i64]) -> Result<Tensor> {
    let out = adaptive_avg_pool3d_meta(self_, output_size)?;
    adaptive_avg_pool_into(self_, &out, 3, "adaptive_avg_pool3d_cpu")?;
    Ok(out)
}

/// `_adaptive_avg_pool2d_backward(grad_output, self)`.
pub fn adaptive_avg_pool2d_backward_cpu(grad_output: &Tensor, self_: &Tensor) -> Result<Tensor> {
    let out = adaptive_avg_pool2d_backward_meta(grad_output, self_)?;
    let g = PoolGeometry::new(
        &out.sizes(),
        &grad_output.sizes(),
        2,
        [&ONES[..2], &ONES[..2], &ZEROS[..2], &ONES[..2]],
    )?;
    let dtype = dtype_of(self_)?;
    dispatch_floating!(dtype, "adaptive_avg_pool2d_backward_cpu", T => {
        let grad = grad_output.to_vec::<T>()?;
        if grad.len() != g.planes * g.output_len() {
            return Err(Error::runtime("adaptive_avg_pool2d_backward: the input changed while it ran"));
        }
        write_output(&out, true, &adaptive_avg_pool_backward(&g, &grad))
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PyTorch's `cpu_max_pool` loop, one output at a time over its
    /// window in row-major order (`val > maxval || isnan(val)`).
    fn reference(g: &PoolGeometry, x: &[f32]) -> (Vec<f32>, Vec<i64>) {
        let (mut values, mut indices) = (Vec::new(), Vec::new());
        let [_, ih, iw] = g.input;
        g.for_each_output(|plane, _, o| {
            let volume = &x[plane * g.input_len()..][..g.input_len()];
            let w: [(i64, i64, i64); 3] = std::array::from_fn(|i| g.max_window(i, o[i]));
            let mut best = (f32::NEG_INFINITY, (w[0].0 * ih + w[1].0) * iw + w[2].0);
            for z in (w[0].0..w[0].1).step_by(w[0].2 as usize) {
                for y in (w[1].0..w[1].1).step_by(w[1].2 as usize) {
                    for xx in (w[2].0..w[2].1).step_by(w[2].2 as usize) {
                        let at = (z * ih + y) * iw + xx;
                        let v = volume[at as usize];
                        if v > best.0 || v.is_nan() {
                            best = (v, at);
                        }
                    }
                }
            }
            values.push(best.0);
            indices.push(best.1);
        });
        (values, indices)
    }

    #[test]
    fn max_pooling_matches_pytorchs_loop_with_ties_and_nans() {
        let mut rng = crate::test_rng(0x1234_5678_9abc_def1u64);
        let mut next = |bound: i64| rng(bound as usize) as i64;
        for case in 0..300 {
            let kernel = [1, 1 + next(3), 1 + next(4)];
            let stride = [1, 1 + next(3), 1 + next(3)];
            let dilation = [1, 1 + next(2), 1 + next(2)];
            let padding = [0, next(kernel[1] / 2 + 1), next(kernel[2] / 2 + 1)];
            let input = [1, 1 + next(9), 1 + next(40)];
            let mut out = |i: usize| {
                let span = input[i] + 2 * padding[i] - dilation[i] * (kernel[i] - 1) - 1;
                // Ceil mode's extra window, when it starts inside.
                let floor = span.div_euclid(stride[i]) + 1;
                if next(2) == 1 && (floor * stride[i]) < input[i] + padding[i] {
                    floor + 1
                } else {
                    floor
                }
            };
            let output = [1, out(1), out(2)];
            if output.iter().any(|&o| o < 1) {
                continue;
            }
            let g = PoolGeometry {
                planes: 1 + next(3) as usize,
                input,
                output,
                kernel,
                stride,
                padding,
                dilation,
            };
            // Few distinct values (ties) and some NaNs.
            let x: Vec<f32> = (0..g.planes * g.input_len())
                .map(|_| match next(12) {
                    0 => f32::NAN,
                    v => v as f32 % 4.0,
                })
                .collect();
            let n = g.planes * g.output_len();
            let (mut values, mut indices) = (vec![0f32; n], vec![0i64; n]);
            max_pool(&g, &x, f32::NEG_INFINITY, &mut values, &mut indices);
            let (want_values, want_indices) = reference(&g, &x);
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&values), bits(&want_values), "case {case}: {g:?}");
            assert_eq!(indices, want_indices, "case {case}: {g:?}");
        }
    }
}
