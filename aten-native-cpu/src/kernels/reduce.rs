//! Reductions: `sum`, `mean`, `prod`, `amax`, `amin`, `argmax`, `argmin`,
//! `max.dim`, `min.dim`, `all`, `any`, `var`, `linalg_vector_norm`, `norm`, and the scans and normalizations along
//! one dimension: `cumsum`, `softmax`, `log_softmax`.
//!
//! A reduction views its input with the kept dimensions first and the
//! reduced ones last (no copy), then folds each kept position's reduced
//! elements. Floating sums accumulate in `f64`, integer sums in `i64`. A
//! contiguous run is summed in sixteen independent lanes (so the loop
//! vectorizes), page by page with a prefetch ahead, as the in-order total of
//! fixed-size chunks (so threads can share a long run without changing the
//! result).
//!
//! The structured families (`sum`, `mean`, `prod.dim_int`, `amax`,
//! `amin`, `argmax`, `argmin`, `max.dim`, `min.dim`, `all`, `any`,
//! `linalg_vector_norm`, `norm`, `cumsum`, `_softmax`, `_log_softmax`) are
//! impls: `aten_core::meta` made their output, which they fill.

use aten_core::meta::{prod_meta, var_correction_meta};
use aten_core::native::{dims::make_dim_mask, dims::make_dim_mask_with};
use aten_core::parallel::{parallel_chunks_mut, parallel_for, GRAIN_SIZE};
use aten_core::structured::{DeferredOutput, MetaOutput};
use aten_core::tensor_iterator::convert::{to_dtype, to_dtype_if_needed};
use aten_core::Tensor;
use c10_core::tensor_impl::for_each_offset;
use c10_core::{
    dispatch_dtype, Element, Error, LayoutRef, Numeric, Result, Scalar, ScalarType, StorageBorrow,
    TensorBase, ThreadShared,
};

use super::util::{dtype_of, layout_of, not_implemented, with_fresh_output, with_fresh_output_of};
use crate::prefetch::{page_elements, page_pieces, prefetch_read};
use crate::softmax_rows::softmax_rows;

pub use aten_core::native::dims::wrap_dim;

/// How a reduction walks its input: computed from one snapshot of its
/// layout, which the loops then address.
struct Plan<'t> {
    layout: LayoutRef<'t>,
    kept: Vec<(i64, i64)>,
    reduced: Vec<(i64, i64)>,
    offset: i64,
    count: i64,
}

fn plan<'t>(t: &'t Tensor, reduced: &[bool]) -> Result<Plan<'t>> {
    let layout = layout_of(t)?;
    let (sizes, strides) = (layout.sizes(), layout.strides());
    if reduced.len() != sizes.len() {
        return Err(Error::runtime(
            "the input's dimensions changed while the reduction ran",
        ));
    }
    let (mut kept, mut red) = (Vec::new(), Vec::new());
    for d in 0..sizes.len() {
        if reduced[d] {
            red.push((sizes[d], strides[d]));
        } else {
            kept.push((sizes[d], strides[d]));
        }
    }
    // Coalesce the reduced dims so contiguous runs become one.
    let mut merged: Vec<(i64, i64)> = Vec::new();
    for (size, stride) in red {
        if size == 1 {
            continue;
        }
        match merged.last_mut() {
            // Checked: a tensor with a zero size anywhere has any sizes
            // and strides, whose products may overflow.
            Some(last) if size.checked_mul(stride) == Some(last.1) => {
                match last.0.checked_mul(size) {
                    Some(n) => *last = (n, stride),
                    None => merged.push((size, stride)),
                }
            }
            _ => merged.push((size, stride)),
        }
    }
    // A product of sizes overflows only when a kept size is zero (the
    // tensor's numel is an i64, and a zero reduced size gives zero): the
    // output is then empty and the count never read, so it saturates.
    let count = if merged.iter().any(|(s, _)| *s == 0) {
        0
    } else {
        merged.iter().fold(1i64, |n, (s, _)| n.saturating_mul(*s))
    };
    let offset = layout.storage_offset();
    Ok(Plan {
        layout,
        kept,
        reduced: merged,
        offset,
        count,
    })
}

/// Folds every kept position of the plan's input (of element type `T`) with `fold`,
/// which receives the data pointer and the plan's reduced dims at the base
/// offset, and writes the results (type `O`) into `out`, contiguous with
/// one element per kept position. With at least `GRAIN_SIZE` elements to
/// read and several kept positions, the positions are split over
/// `rayon`'s threads.
fn reduce_into<T: Element, O: Element>(
    plan: &Plan,
    out: &TensorBase,
    fold: impl Fn(*const T, i64, &[(i64, i64)]) -> O + Sync,
) -> Result<()> {
    let positions = plan.kept.iter().map(|k| k.0).product::<i64>();
    if out.numel() != positions || out.dtype() != Some(O::DTYPE) {
        return Err(Error::internal(
            "reduce_into: the output does not fit the plan",
        ));
    }
    if out.numel() == 0 {
        return Ok(());
    }
    let storage = plan.layout.storage();
    if plan.layout.itemsize() != std::mem::size_of::<T>() {
        return Err(Error::internal("reduce_into: dtype and layout disagree"));
    }
    let results: Vec<O> = StorageBorrow::hold([(storage, false)], || {
        let base = storage
            .data_ptr()
            .ok_or_else(|| Error::runtime("tensor has no data"))?
            .as_ptr() as *const T;
        let (ks, kst): (Vec<i64>, Vec<i64>) = plan.kept.iter().copied().unzip();
        let mut offsets = Vec::with_capacity(out.numel() as usize);
        for_each_offset(&ks, &kst, plan.offset, |off| offsets.push(off));
        // SAFETY: the threads only read the input, which is borrowed for
        // the whole parallel loop.
        let shared = unsafe { ThreadShared::new(base) };
        let mut results: Vec<O> = Vec::new();
        results.try_reserve_exact(offsets.len()).map_err(|_| {
            c10_core::tensor_impl::out_of_memory(offsets.len().saturating_mul(size_of::<O>()))
        })?;
        let grain = (GRAIN_SIZE / plan.count.max(1)).max(1) as usize;
        let slots = &mut results.spare_capacity_mut()[..offsets.len()];
        parallel_chunks_mut(slots, 1, grain, |first, part| {
            for (r, &off) in part.iter_mut().zip(&offsets[first..]) {
                r.write(fold(*shared.get(), off, &plan.reduced));
            }
        });
        // SAFETY: the loop above wrote every one of the `offsets.len()`
        // slots (its parts cover the whole range; a panic never gets here).
        unsafe { results.set_len(offsets.len()) };
        Ok::<_, Error>(results)
    })??;
    out.with_data_mut::<O, _>(|dst| dst.copy_from_slice(&results))
}

/// Visits the reduced elements at `base + off` in row-major order.
#[inline]
fn visit<T: Element>(base: *const T, off: i64, dims: &[(i64, i64)], mut f: impl FnMut(T)) {
    if let [(n, stride)] = dims {
        // One reduced dimension (a bias gradient's sum over the batch, one
        // call per kept column): the same order without the two vectors
        // below, which cost more than the 64 elements of that sum.
        for i in 0..*n {
            // SAFETY: as below: `off + i * stride` for `i < n` is an
            // offset of the tensor's own layout.
            f(unsafe { base.add((off + i * stride) as usize).read() })
        }
        return;
    }
    let (sizes, strides): (Vec<i64>, Vec<i64>) = dims.iter().copied().unzip();
    for_each_offset(&sizes, &strides, off, |o| {
        // SAFETY: offsets come from the tensor's own sizes and strides
        // (inside its storage); a shared borrow is held by the caller.
        f(unsafe { base.add(o as usize).read() })
    });
}

/// Sums the reduced elements as `f64`, with eight lanes on a contiguous run.
fn sum_f64<T: Numeric>(base: *const T, off: i64, dims: &[(i64, i64)]) -> f64 {
    if let [(n, 1)] = dims {
        // SAFETY: `off` is the run's first element, inside the storage.
        // The threads of the sum only read the run, which the caller
        // borrows.
        return sum_contiguous_f64(
            unsafe { ThreadShared::new(base.add(off as usize)) },
            *n as usize,
        );
    }
    let mut acc = 0.0;
    visit(base, off, dims, |x: T| acc += x.to_f64());
    acc
}

/// Elements per partial sum of a long contiguous run. A run is summed as
/// the in-order total of its chunks' sums whatever the thread count, so a
/// result does not depend on how many threads computed it.
const SUM_CHUNK: usize = 1 << 16;

/// Sums `n` consecutive elements as `f64`: chunk by chunk
/// ([`SUM_CHUNK`]), the chunks split into one contiguous part per thread
/// for runs of at least twice `GRAIN_SIZE`.
fn sum_contiguous_f64<T: Numeric>(start: ThreadShared<*const T>, n: usize) -> f64 {
    let chunks = n.div_ceil(SUM_CHUNK);
    if chunks <= 1 {
        let mut total = [0.0];
        // SAFETY: the caller borrows the `n` elements at `start`.
        unsafe { sum_chunks(*start.get(), n, 0, &mut total) };
        return total[0];
    }
    let mut partials = vec![0f64; chunks];
    // Runs of at least twice `GRAIN_SIZE` elements split: a grain of
    // chunks that makes the range of `chunks` smaller than two grains
    // below that.
    let grain = if n >= 2 * GRAIN_SIZE as usize {
        1
    } else {
        chunks
    };
    parallel_chunks_mut(&mut partials, 1, grain, |first, out| {
        // SAFETY: the part's chunks lie inside the caller's run.
        unsafe { sum_chunks(*start.get(), n, first, out) };
    });
    partials.iter().sum()
}

/// Sums chunks `first..first + out.len()` ([`SUM_CHUNK`] elements each, the
/// last one cut at `n`) of the run of `n` elements at `run` into `out`.
///
/// # Safety
///
/// `run` must be valid for reading `n` elements, borrowed by the caller,
/// and the chunks must start inside the run.
unsafe fn sum_chunks<T: Numeric>(run: *const T, n: usize, first: usize, out: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    if crate::loops::has_avx2_fma() {
        // SAFETY: AVX2 and FMA were detected; the rest is the caller's.
        return unsafe { sum_chunks_avx2(run, n, first, out) };
    }
    // SAFETY: the caller's.
    unsafe { sum_chunks_lanes(run, n, first, out) }
}

/// Lanes of a contiguous sum: enough independent `f64` additions (four
/// AVX2 vectors) to keep up with memory.
const SUM_LANES: usize = 16;

/// [`sum_chunks`] in [`SUM_LANES`] lanes, page by page with a prefetch
/// ahead that runs on across chunk boundaries ([`page_pieces`]).
///
/// # Safety
///
/// As [`sum_chunks`].
#[inline(always)]
unsafe fn sum_chunks_lanes<T: Numeric>(run: *const T, n: usize, first: usize, out: &mut [f64]) {
    let begin = first * SUM_CHUNK;
    let end = n.min((first + out.len()) * SUM_CHUNK);
    // SAFETY: `begin..end` lies inside the caller's run.
    let part = unsafe { std::slice::from_raw_parts(run.add(begin), end - begin) };
    // Every chunk but the run's last is a whole number of pages, and pages
    // of whole lanes, so pieces never straddle a chunk and every element
    // lands in the lane of its index.
    let (whole, tail) = part.split_at(part.len() - part.len() % SUM_LANES);
    let mut lanes = [0f64; SUM_LANES];
    let piece = page_elements(std::mem::size_of::<T>(), SUM_LANES);
    let piece = piece.min(SUM_CHUNK);
    let mut chunk = 0;
    for (range, ahead) in page_pieces(whole.len(), piece) {
        if let Some(i) = ahead {
            prefetch_read(part.as_ptr().wrapping_add(i));
        }
        let piece_end = range.end;
        for c in whole[range].chunks_exact(SUM_LANES) {
            for (lane, x) in lanes.iter_mut().zip(c) {
                *lane += x.to_f64();
            }
        }
        if piece_end % SUM_CHUNK == 0 && piece_end < part.len() {
            out[chunk] = std::mem::take(&mut lanes).iter().sum();
            chunk += 1;
        }
    }
    let total: f64 = lanes.iter().sum();
    out[chunk] = tail.iter().fold(total, |acc, x| acc + x.to_f64());
}

/// [`sum_chunks_lanes`] in an AVX2+FMA build.
///
/// # Safety
///
/// As [`sum_chunks`], and the processor must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn sum_chunks_avx2<T: Numeric>(run: *const T, n: usize, first: usize, out: &mut [f64]) {
    // SAFETY: as documented.
    unsafe { sum_chunks_lanes(run, n, first, out) }
}

fn sum_i64<T: Numeric>(base: *const T, off: i64, dims: &[(i64, i64)]) -> i64 {
    let mut acc = 0i64;
    visit(base, off, dims, |x: T| acc = acc.wrapping_add(x.to_i64()));
    acc
}

/// What a sum-like reduction computes.
#[derive(Copy, Clone, PartialEq, Eq)]
enum SumKind {
    Sum,
    Mean,
    Prod,
}

/// Folds `t` (already in the output's dtype) over `mask` into `out`.
fn sum_like(t: &Tensor, mask: &[bool], out: &TensorBase, kind: SumKind) -> Result<()> {
    let dtype = dtype_of(t)?;
    let p = plan(t, mask)?;
    let count = p.count;
    dispatch_dtype!(dtype, T => reduce_into::<T, T>(&p, out, |base, off, dims| {
        match kind {
            SumKind::Sum | SumKind::Mean if T::IS_FLOAT => {
                let s = sum_f64(base, off, dims);
                T::from_f64(if kind == SumKind::Mean { s / count as f64 } else { s })
            }
            SumKind::Sum | SumKind::Mean => T::from_i64(sum_i64(base, off, dims)),
            SumKind::Prod => {
                if T::IS_FLOAT {
                    let mut acc = 1.0f64;
                    visit(base, off, dims, |x: T| acc *= x.to_f64());
                    T::from_f64(acc)
                } else {
                    let mut acc = 1i64;
                    visit(base, off, dims, |x: T| acc = acc.wrapping_mul(x.to_i64()));
                    T::from_i64(acc)
                }
            }
        }
    }), _ => Err(not_implemented("sum_cpu", dtype)))
}

/// A sum or mean of `self_` over `dim` into the meta function's output,
/// computed in its dtype.
fn sum_out_impl(
    meta: &MetaOutput,
    self_: &Tensor,
    dim: Option<&[i64]>,
    kind: SumKind,
) -> Result<()> {
    let t = to_dtype_if_needed(self_, dtype_of(meta.output())?)?;
    let mask = make_dim_mask(dim, t.dim())?;
    with_fresh_output(meta, |out| sum_like(&t, &mask, out, kind))
}

/// `sum.IntList_out`.
pub fn sum_intlist_out(
    meta: &mut MetaOutput,
    self_: &Tensor,
    dim: Option<&[i64]>,
    _keepdim: bool,
    _dtype: Option<ScalarType>,
) -> Result<()> {
    sum_out_impl(meta, self_, dim, SumKind::Sum)
}

/// `mean.out`.
pub fn mean_out(
    meta: &mut MetaOutput,
    self_: &Tensor,
    dim: Option<&[i64]>,
    _keepdim: bool,
    _dtype: Option<ScalarType>,
) -> Result<()> {
    sum_out_impl(meta, self_, dim, SumKind::Mean)
}

/// `prod.int_out`.
pub fn prod_out(
    meta: &mut MetaOutput,
    self_: &Tensor,
    dim: i64,
    _keepdim: bool,
    _dtype: Option<ScalarType>,
) -> Result<()> {
    sum_out_impl(meta, self_, Some(&[dim]), SumKind::Prod)
}

/// `prod(self, *, dtype)`: into the Meta kernel's output (integers widen
/// to int64).
pub fn prod(self_: &Tensor, dtype: Option<ScalarType>) -> Result<Tensor> {
    let out = prod_meta(self_, dtype)?;
    let t = to_dtype_if_needed(self_, dtype_of(&out)?)?;
    sum_like(&t, &vec![true; t.dim()], &out, SumKind::Prod)?;
    Ok(out)
}

/// `linalg_vector_norm.out`: the input in the output's dtype, folded in
/// `f64`: the count of non-zeros (`ord` 0), the largest or smallest
/// magnitude (`±inf`), the sum of magnitudes (1), the root of the sum of
/// squares (2), else `(Σ|x|^ord)^(1/ord)`.
pub fn linalg_vector_norm_out(
    meta: &mut MetaOutput,
    self_: &Tensor,
    ord: Scalar,
    dim: Option<&[i64]>,
    _keepdim: bool,
    _dtype: Option<ScalarType>,
) -> Result<()> {
    let t = to_dtype_if_needed(self_, dtype_of(meta.output())?)?;
    let dtype = dtype_of(&t)?;
    let mask = make_dim_mask(Some(dim.unwrap_or(&[])), t.dim())?;
    let p = plan(&t, &mask)?;
    let ord = ord.to_f64();
    with_fresh_output(meta, |out| {
        dispatch_dtype!(dtype, T => {
            if !T::IS_FLOAT {
                return Err(not_implemented("linalg_vector_norm", dtype));
            }
            reduce_into::<T, T>(&p, out, |base, off, dims| {
                let mut acc = if ord == f64::NEG_INFINITY { f64::INFINITY } else { 0.0 };
                visit(base, off, dims, |x: T| {
                    let a = x.to_f64().abs();
                    if ord == 0.0 {
                        acc += f64::from(u8::from(a != 0.0));
                    } else if ord == 1.0 {
                        acc += a;
                    } else if ord == 2.0 {
                        acc += a * a;
                    } else if ord == f64::INFINITY {
                        acc = if a.is_nan() || a > acc { a } else { acc };
                    } else if ord == f64::NEG_INFINITY {
                        acc = if a.is_nan() || a < acc { a } else { acc };
                    } else {
                        acc += a.powf(ord);
                    }
                });
                T::from_f64(if ord == 2.0 {
                    acc.sqrt()
                } else if ord == 0.0 || ord == 1.0 || ord.is_infinite() {
                    acc
                } else {
                    acc.powf(ord.recip())
                })
            })
        }, _ => Err(not_implemented("linalg_vector_norm", dtype)))
    })
}

/// `norm.out`: `linalg_vector_norm.out` of order `p` (2 when `None`).
pub fn norm_out(
    meta: &mut MetaOutput,
    self_: &Tensor,
    p: Option<Scalar>,
    dim: &[i64],
    keepdim: bool,
) -> Result<()> {
    norm_into(meta, self_, p, dim, keepdim, None)
}

/// `norm.dtype_out`: `linalg_vector_norm.out` with `dtype`, whose checks
/// apply.
pub fn norm_dtype_out(
    meta: &mut MetaOutput,
    self_: &Tensor,
    p: Option<Scalar>,
    dim: &[i64],
    keepdim: bool,
    dtype: ScalarType,
) -> Result<()> {
    norm_into(meta, self_, p, dim, keepdim, Some(dtype))
}

/// PyTorch's `impl_func_norm`: the vector norm into the meta function's
/// output.
fn norm_into(
    meta: &MetaOutput,
    self_: &Tensor,
    p: Option<Scalar>,
    dim: &[i64],
    keepdim: bool,
    dtype: Option<ScalarType>,
) -> Result<()> {
    let p = p.unwrap_or(Scalar::Double(2.0));
    aten_core::ops::linalg_vector_norm_out(self_, p, Some(dim), keepdim, dtype, meta.output())
        .map(drop)
}

/// Keeps the larger (`max`) or smaller value, NaN winning.
#[inline]
fn better<T: Numeric>(candidate: T, best: T, max: bool) -> bool {
    if T::IS_FLOAT {
        let (c, b) = (candidate.to_f64(), best.to_f64());
        if b.is_nan() {
            return false;
        }
        if c.is_nan() {
            return true;
        }
    }
    if max {
        candidate > best
    } else {
        candidate < best
    }
}

fn extreme(meta: &MetaOutput, t: &Tensor, dims: &[i64], max: bool) -> Result<()> {
    let name = if max { "amax" } else { "amin" };
    let p = plan(t, &make_dim_mask(Some(dims), t.dim())?)?;
    let dtype = dtype_of(t)?;
    with_fresh_output(meta, |out| {
        dispatch_dtype!(dtype, T => reduce_into::<T, T>(&p, out, |base, off, dims| {
            let mut best: Option<T> = None;
            visit(base, off, dims, |x: T| match best {
                None => best = Some(x),
                Some(b) if better(x, b, max) => best = Some(x),
                _ => {}
            });
            best.unwrap_or_else(|| T::from_i64(0))
        }), _ => Err(not_implemented(name, dtype)))
    })
}

/// `amax.out`.
pub fn amax_out(meta: &mut MetaOutput, self_: &Tensor, dim: &[i64], _keepdim: bool) -> Result<()> {
    extreme(meta, self_, dim, true)
}

/// `amin.out`.
pub fn amin_out(meta: &mut MetaOutput, self_: &Tensor, dim: &[i64], _keepdim: bool) -> Result<()> {
    extreme(meta, self_, dim, false)
}

/// Index and value of the first extreme element along the reduced run.
fn arg_extreme<T: Numeric>(base: *const T, off: i64, dims: &[(i64, i64)], max: bool) -> (i64, T) {
    let mut best: Option<(i64, T)> = None;
    let mut i = 0i64;
    visit(base, off, dims, |x: T| {
        match best {
            None => best = Some((i, x)),
            Some((_, b)) if better(x, b, max) => best = Some((i, x)),
            _ => {}
        }
        i += 1;
    });
    best.unwrap_or((0, T::from_i64(0)))
}

/// `argmax.out` (`max`) and `argmin.out`: without `dim`, over the
/// flattened input; the first extreme index in logical order.
fn arg_extreme_out(meta: &MetaOutput, self_: &Tensor, dim: Option<i64>, max: bool) -> Result<()> {
    let name = if max { "argmax_cpu" } else { "argmin_cpu" };
    let dtype = dtype_of(self_)?;
    if dtype == ScalarType::Bool {
        return Err(not_implemented(name, dtype));
    }
    let (t, mask) = match dim {
        None => {
            let flat = contiguous(self_)?
                .base()
                .as_strided(&[self_.numel()], &[1], None)?;
            (Tensor::from(flat), vec![true])
        }
        Some(d) => (self_.clone(), make_dim_mask(Some(&[d]), self_.dim())?),
    };
    let p = plan(&t, &mask)?;
    with_fresh_output(meta, |out| {
        dispatch_dtype!(dtype, T => reduce_into::<T, i64>(&p, out, |base, off, dims| {
            arg_extreme::<T>(base, off, dims, max).0
        }), _ => Err(not_implemented(name, dtype)))
    })
}

/// `argmax.out`.
pub fn argmax_out(
    meta: &mut MetaOutput,
    self_: &Tensor,
    dim: Option<i64>,
    _keepdim: bool,
) -> Result<()> {
    arg_extreme_out(meta, self_, dim, true)
}

/// `argmin.out`.
pub fn argmin_out(
    meta: &mut MetaOutput,
    self_: &Tensor,
    dim: Option<i64>,
    _keepdim: bool,
) -> Result<()> {
    arg_extreme_out(meta, self_, dim, false)
}

/// `max.dim_max` (`max`) and `min.dim_min`: values and indices.
fn extreme_dim(meta: &mut MetaOutput<2>, self_: &Tensor, dim: i64, max: bool) -> Result<()> {
    let name = if max { "max_cpu" } else { "min_cpu" };
    let dtype = dtype_of(self_)?;
    let p = plan(self_, &make_dim_mask(Some(&[dim]), self_.dim())?)?;
    let [values, indices] = meta.outputs();
    let fresh = meta.is_fresh();
    dispatch_dtype!(dtype, T => {
        with_fresh_output_of(values, fresh, |out| {
            reduce_into::<T, T>(&p, out, |b, o, d| arg_extreme::<T>(b, o, d, max).1)
        })?;
        with_fresh_output_of(indices, fresh, |out| {
            reduce_into::<T, i64>(&p, out, |b, o, d| arg_extreme::<T>(b, o, d, max).0)
        })
    }, _ => Err(not_implemented(name, dtype)))
}

/// `max.dim_max`.
pub fn max_dim_max(
    meta: &mut MetaOutput<2>,
    self_: &Tensor,
    dim: i64,
    _keepdim: bool,
) -> Result<()> {
    extreme_dim(meta, self_, dim, true)
}

/// `min.dim_min`.
pub fn min_dim_min(
    meta: &mut MetaOutput<2>,
    self_: &Tensor,
    dim: i64,
    _keepdim: bool,
) -> Result<()> {
    extreme_dim(meta, self_, dim, false)
}

/// Folds the plan's input with `&&` (`all`) or `||` into `out` (bool or
/// uint8).
fn all_any_into<T: Numeric, O: Numeric>(p: &Plan, out: &TensorBase, all: bool) -> Result<()> {
    reduce_into::<T, O>(p, out, |base, off, dims| {
        let mut acc = all;
        visit(base, off, dims, |x: T| {
            let truth = x.to_f64() != 0.0;
            acc = if all { acc && truth } else { acc || truth };
        });
        O::from_i64(acc as i64)
    })
}

/// `all` and `any` over `dims` (every one for `None`, none for an empty
/// list): into a bool or uint8 output.
fn all_any(meta: &MetaOutput, t: &Tensor, dims: Option<&[i64]>, all: bool) -> Result<()> {
    let dtype = dtype_of(t)?;
    let p = plan(t, &make_dim_mask_with(dims, t.dim(), true)?)?;
    let to_byte = meta.output().dtype() == Some(ScalarType::Byte);
    let name = if all { "all" } else { "any" };
    with_fresh_output(meta, |out| {
        dispatch_dtype!(dtype, T => if to_byte {
            all_any_into::<T, u8>(&p, out, all)
        } else {
            all_any_into::<T, bool>(&p, out, all)
        }, _ => Err(not_implemented(name, dtype)))
    })
}

/// `all.out`.
pub fn all_out(meta: &mut MetaOutput, self_: &Tensor, dim: i64, _keepdim: bool) -> Result<()> {
    all_any(meta, self_, Some(&[dim]), true)
}

/// `any.out`.
pub fn any_out(meta: &mut MetaOutput, self_: &Tensor, dim: i64, _keepdim: bool) -> Result<()> {
    all_any(meta, self_, Some(&[dim]), false)
}

/// `any.all_out`: over every dimension.
pub fn any_all_out(meta: &mut MetaOutput, self_: &Tensor) -> Result<()> {
    all_any(meta, self_, None, false)
}

/// `any.dims_out`.
pub fn any_dims_out(
    meta: &mut MetaOutput,
    self_: &Tensor,
    dim: Option<&[i64]>,
    _keepdim: bool,
) -> Result<()> {
    all_any(meta, self_, dim, false)
}

/// A contiguous copy when `t` is not contiguous (`contiguous()`).
pub fn contiguous(t: &Tensor) -> Result<Tensor> {
    if t.is_contiguous() {
        return Ok(t.clone());
    }
    to_dtype(t, dtype_of(t)?)
}

/// `var.correction`.
pub fn var_correction(
    self_: &Tensor,
    dim: Option<&[i64]>,
    correction: Option<Scalar>,
    keepdim: bool,
) -> Result<Tensor> {
    let out = var_correction_meta(self_, dim, correction, keepdim)?;
    let dtype = dtype_of(self_)?;
    let correction = correction.map_or(1.0, Scalar::to_f64);
    let p = plan(self_, &make_dim_mask(dim, self_.dim())?)?;
    let n = p.count as f64;
    dispatch_dtype!(dtype, T => reduce_into::<T, T>(&p, &out, |base, off, dims| {
        let mean = sum_f64(base, off, dims) / n;
        let mut ss = 0.0;
        visit(base, off, dims, |x: T| {
            let d = x.to_f64() - mean;
            ss += d * d;
        });
        T::from_f64(ss / (n - correction).max(0.0))
    })?, _ => return Err(not_implemented("var", dtype)));
    Ok(out)
}

/// Runs `f` on every 1-D slice of `t` along `dim` and the matching slice
/// of `out` (fresh, of `t`'s shape): `f(input, output, n)` where the
/// slices are given as (pointer, element stride).
fn along_dim<I: Element, O: Element>(
    t: &Tensor,
    dim: i64,
    out: &TensorBase,
    f: impl Fn((*const I, isize), (*mut O, isize), usize) + Sync,
) -> Result<()> {
    // One snapshot of each tensor: its shape, strides and data.
    let il = layout_of(t)?;
    let ol = layout_of(out)?;
    if il.sizes() != ol.sizes() {
        return Err(Error::runtime(
            "the input's shape changed while the kernel ran",
        ));
    }
    let ndim = il.sizes().len();
    let d = wrap_dim(dim, ndim)?;
    if il.numel() == 0 {
        return Ok(());
    }
    if il.itemsize() != std::mem::size_of::<I>() || ol.itemsize() != std::mem::size_of::<O>() {
        return Err(Error::internal("along_dim: dtype and layout disagree"));
    }
    let (n, is, os) = if ndim == 0 {
        (1usize, 0isize, 0isize)
    } else {
        (
            il.sizes()[d] as usize,
            il.strides()[d] as isize,
            ol.strides()[d] as isize,
        )
    };
    let outer_sizes: Vec<i64> = (0..ndim)
        .map(|k| if k == d { 1 } else { il.sizes()[k] })
        .collect();
    let mut in_offsets = Vec::new();
    for_each_offset(&outer_sizes, il.strides(), il.storage_offset(), |o| {
        in_offsets.push(o)
    });
    let mut out_offsets = Vec::new();
    for_each_offset(&outer_sizes, ol.strides(), ol.storage_offset(), |o| {
        out_offsets.push(o)
    });
    StorageBorrow::hold([(il.storage(), false), (ol.storage(), true)], || {
        let no_data = || Error::runtime("no data");
        let ip = il.storage().data_ptr().ok_or_else(no_data)?.as_ptr() as *const I;
        let op = ol.storage().data_ptr().ok_or_else(no_data)?.as_ptr() as *mut O;
        // SAFETY: the threads read the borrowed input and write disjoint
        // slices of the fresh output (exclusively borrowed).
        let (ip, op) = unsafe { (ThreadShared::new(ip), ThreadShared::new(op)) };
        let slice = |(&io, &oo): (&i64, &i64)| {
            // SAFETY: the offsets and the slice of `n` elements at the stride
            // lie inside each storage (from the tensors' own layouts); borrows
            // are held; the output is a fresh tensor, so it cannot alias, and
            // different slices write disjoint output elements.
            let (i, o) = unsafe { (ip.get().add(io as usize), op.get().add(oo as usize)) };
            f((i, is), (o, os), n);
        };
        let grain = if il.numel() >= GRAIN_SIZE {
            (GRAIN_SIZE as usize).div_ceil(n.max(1))
        } else {
            in_offsets.len()
        };
        parallel_for(0, in_offsets.len() as i64, grain as i64, |i0, i1| {
            let (i0, i1) = (i0 as usize, i1 as usize);
            in_offsets[i0..i1]
                .iter()
                .zip(&out_offsets[i0..i1])
                .for_each(slice);
        });
        Ok(())
    })?
}

/// `cumsum.out`: in the output's dtype.
pub fn cumsum_out(
    meta: &mut MetaOutput,
    self_: &Tensor,
    dim: i64,
    _dtype: Option<ScalarType>,
) -> Result<()> {
    let out_dtype = dtype_of(meta.output())?;
    let t = to_dtype_if_needed(self_, out_dtype)?;
    with_fresh_output(meta, |out| {
        dispatch_dtype!(out_dtype, T => along_dim::<T, T>(&t, dim, out, |(i, is), (o, os), n| {
            let mut acc_f = 0.0f64;
            let mut acc_i = 0i64;
            for k in 0..n as isize {
                // SAFETY: see `along_dim`.
                unsafe {
                    let x = i.offset(k * is).read();
                    let y = if T::IS_FLOAT {
                        acc_f += x.to_f64();
                        T::from_f64(acc_f)
                    } else {
                        acc_i = acc_i.wrapping_add(x.to_i64());
                        T::from_i64(acc_i)
                    };
                    o.offset(k * os).write(y);
                }
            }
        }), _ => Err(not_implemented("cumsum_cpu", out_dtype)))
    })
}

/// Softmax (or its log) of `t` along `dim` into `out`, fresh and
/// contiguous.
fn softmax_into(t: &Tensor, dim: i64, out: &TensorBase, log: bool) -> Result<()> {
    let dt = dtype_of(t)?;
    let name = if log {
        "log_softmax_lastdim_kernel_impl"
    } else {
        "softmax_lastdim_kernel_impl"
    };
    if !dt.is_floating_point() {
        return Err(not_implemented(name, dt));
    }
    if is_lastdim_f32(t, dim)? {
        return softmax_lastdim_f32(t, out, log);
    }
    // PyTorch's log-softmax along the last dimension keeps each row's sum
    // of exponentials and then its log in buffers of the input's dtype
    // (rounding both: float16 and bfloat16 rows differ from a float
    // computation by an ulp or two); along other dimensions they stay in
    // float (`opmath`), as here for softmax.
    let rounds_log_sum = log && wrap_dim(dim, t.dim())? + 1 >= t.dim();
    dispatch_dtype!(dt, T => along_dim::<T, T>(t, dim, out, |(i, is), (o, os), n| {
        let read = |k: usize| -> f64 {
            // SAFETY: see `along_dim`.
            unsafe { i.offset(k as isize * is).read() }.to_f64()
        };
        let m = (0..n).map(read).fold(f64::NEG_INFINITY, f64::max);
        let s: f64 = (0..n).map(|k| (read(k) - m).exp()).sum();
        let round = |v: f64| if rounds_log_sum { T::from_f64(v).to_f64() } else { v };
        let log_sum = round(round(s).ln());
        for k in 0..n {
            let y = if log { read(k) - m - log_sum } else { (read(k) - m).exp() / s };
            // SAFETY: see `along_dim`.
            unsafe { o.offset(k as isize * os).write(T::from_f64(y)) };
        }
    }), _ => Err(not_implemented(name, dt)))
}

/// Whether softmax of `t` along `dim` takes the contiguous `float32`
/// last-dimension path.
fn is_lastdim_f32(t: &Tensor, dim: i64) -> Result<bool> {
    let d = wrap_dim(dim, t.dim())?;
    Ok(
        t.dtype() == Some(ScalarType::Float)
            && t.dim() > 0
            && d == t.dim() - 1
            && t.is_contiguous(),
    )
}

/// Softmax of the rows of `n` elements of `x` into `o` (as many
/// elements), split over `rayon`'s threads above `GRAIN_SIZE` elements.
/// On `Ok`, every element of `o` was written: `n` may come from an older
/// look at the input's shape than `x`, so rows that do not tile `x`
/// exactly are an error.
fn softmax_rows_of(
    x: &[f32],
    o: &mut [std::mem::MaybeUninit<f32>],
    n: usize,
    log: bool,
) -> Result<()> {
    if x.len() != o.len() {
        return Err(Error::internal("softmax: input and output sizes differ"));
    }
    if x.is_empty() {
        return Ok(());
    }
    if n == 0 || !x.len().is_multiple_of(n) {
        return Err(Error::runtime("softmax: the input was resized meanwhile"));
    }
    let rows = (GRAIN_SIZE as usize).div_ceil(n);
    parallel_chunks_mut(o, n, rows, |first, o| {
        softmax_rows(&x[first * n..][..o.len()], o, n, log)
    });
    Ok(())
}

/// Softmax of a contiguous `float32` tensor along its last dimension into
/// `out` (of its shape, contiguous).
fn softmax_lastdim_f32(t: &Tensor, out: &TensorBase, log: bool) -> Result<()> {
    let n = last_size(&t.sizes());
    t.with_data::<f32, _>(|x| {
        out.with_data_mut::<f32, _>(|o| {
            // SAFETY: `MaybeUninit<f32>` has `f32`'s layout, and
            // `softmax_rows` only stores initialized values through it.
            let o = unsafe {
                std::slice::from_raw_parts_mut(
                    o.as_mut_ptr().cast::<std::mem::MaybeUninit<f32>>(),
                    o.len(),
                )
            };
            softmax_rows_of(x, o, n, log)
        })?
    })?
}

/// The same, into a new tensor whose elements it writes without zeroing
/// them first (the functional member's output).
fn softmax_lastdim_f32_new(t: &Tensor, log: bool) -> Result<Tensor> {
    let sizes = t.sizes();
    let n = last_size(&sizes);
    let write = |o: &mut [std::mem::MaybeUninit<f32>]| {
        t.with_data::<f32, _>(|x| softmax_rows_of(x, o, n, log))?
    };
    // SAFETY: `write` returns `Ok` only when `softmax_rows_of` wrote every
    // element of the slice (see there): the input's data has the slice's
    // length and a whole, non-zero number of `n`-element rows, whatever
    // happened to its shape since `sizes` was read, and `softmax_rows`
    // writes every element of each row; the parallel chunks are whole rows
    // that together cover the slice.
    let out = unsafe { TensorBase::empty_written_by::<f32>(&sizes, write) }?;
    Ok(Tensor::from(out))
}

/// The last size of a shape (1 for a 0-dim one, which another thread may
/// have made of a tensor checked to have dimensions).
fn last_size(sizes: &[i64]) -> usize {
    sizes.last().map_or(1, |&n| n.max(0) as usize)
}

/// `_softmax.out` and `_log_softmax.out` on CPU: no half-to-float
/// conversion. The functional member's float output along the last
/// dimension is made here, unzeroed.
fn softmax_out_impl(
    meta: &mut DeferredOutput,
    t: &Tensor,
    dim: i64,
    half: bool,
    log: bool,
) -> Result<()> {
    if half {
        return Err(Error::runtime(format!(
            "{}softmax with half to float conversion is not supported on CPU",
            if log { "log_" } else { "" }
        )));
    }
    if meta.is_fresh() && is_lastdim_f32(t, dim)? && t.sizes() == meta.sizes() {
        return meta.supply(softmax_lastdim_f32_new(t, log)?);
    }
    let fresh = meta.is_fresh();
    with_fresh_output_of(meta.output()?, fresh, |out| softmax_into(t, dim, out, log))
}

/// `_softmax.out`.
pub fn _softmax_out(
    meta: &mut DeferredOutput,
    self_: &Tensor,
    dim: i64,
    half_to_float: bool,
) -> Result<()> {
    softmax_out_impl(meta, self_, dim, half_to_float, false)
}

/// `_log_softmax.out`.
pub fn _log_softmax_out(
    meta: &mut DeferredOutput,
    self_: &Tensor,
    dim: i64,
    half_to_float: bool,
) -> Result<()> {
    softmax_out_impl(meta, self_, dim, half_to_float, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softmax_rows_that_do_not_tile_the_data_are_an_error() {
        let x = [1.0f32; 6];
        let mut o = [std::mem::MaybeUninit::<f32>::uninit(); 6];
        // A row length from a stale shape: zero, or not dividing the data.
        for n in [0, 4] {
            assert!(softmax_rows_of(&x, &mut o, n, false).is_err(), "{n}");
        }
        assert!(softmax_rows_of(&x, &mut o, 3, false).is_ok());
        assert!(softmax_rows_of(&[], &mut [], 0, false).is_ok());
    }

    #[test]
    fn contiguous_sums_agree_with_a_plain_f64_sum() {
        // Lengths around the lane count, the chunk size, and runs split over
        // threads.
        let lengths = [
            0,
            1,
            15,
            16,
            17,
            1000,
            2 * GRAIN_SIZE as usize + 3,
            SUM_CHUNK,
            2 * SUM_CHUNK,
            3 * SUM_CHUNK + 5,
            7 * SUM_CHUNK + 16,
        ];
        let pool = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
        };
        let (one, two, three) = (pool(1), pool(2), pool(3));
        for n in lengths {
            let x: Vec<f32> = (0..n)
                .map(|i| ((i * 7919) % 1013) as f32 * 0.01 - 5.0)
                .collect();
            let want: f64 = x.iter().map(|v| *v as f64).sum();
            let mut partials = vec![0.0; n.div_ceil(SUM_CHUNK).max(1)];
            // SAFETY: `x` holds `n` elements and is borrowed for the call.
            unsafe { sum_chunks_lanes(x.as_ptr(), n, 0, &mut partials) };
            let portable: f64 = partials.iter().sum();
            // SAFETY: the threads only read `x`, alive for the call.
            let run = || sum_contiguous_f64(unsafe { ThreadShared::new(x.as_ptr()) }, n);
            let on_one = one.install(run);
            for got in [portable, on_one] {
                assert!(
                    (got - want).abs() <= 1e-9 * want.abs().max(1.0),
                    "{n}: {got} vs {want}"
                );
            }
            // The same bits whatever the thread count.
            assert_eq!(
                two.install(run).to_bits(),
                on_one.to_bits(),
                "{n} on two threads"
            );
            assert_eq!(
                three.install(run).to_bits(),
                on_one.to_bits(),
                "{n} on three threads"
            );
        }
    }
}
