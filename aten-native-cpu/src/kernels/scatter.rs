//! The scatter families' impls (`scatter.src`, `scatter.value`,
//! `scatter_add`, `scatter_reduce.two`): the output starts as a copy of
//! `self`, then for every position `p` of `index` (row-major),
//! `out[p with p[dim] = index[p]]` is assigned, or reduced with,
//! `src[p]` (or the value).
//!
//! Without `include_self`, the scattered-to elements start from the
//! reduction's identity (PyTorch's `scatter_reduce_exclude_self_helper`);
//! `mean` divides each scattered-to element by its number of
//! contributions (plus one for `self`), flooring for integers.

use std::collections::HashMap;

use aten_core::meta::scatter::ScatterReduce;
use aten_core::native::dims::wrap_dim;
use aten_core::structured::MetaOutput;
use aten_core::tensor_iterator::convert::copy_into;
use aten_core::Tensor;
use c10_core::tensor_impl::for_each_offset;
use c10_core::{dispatch_dtype, Error, Result, Scalar, ScalarType};

use super::arith::Arith;
use super::indexing::index_values;
use super::scatter_offsets::update_offsets;
use super::util::{dtype_of, is_nan, layout_of, not_implemented, try_vec_with_capacity};

/// What is scattered: the elements of a tensor, or one value.
#[derive(Copy, Clone, Debug)]
enum Source<'a> {
    Tensor(&'a Tensor),
    Value(Scalar),
}

/// `sizes` and `strides` of a layout, a 0-dim one as one dimension of
/// size 1 (`ensure_nonempty`).
fn nonempty(sizes: &[i64], strides: &[i64]) -> (Vec<i64>, Vec<i64>) {
    if sizes.is_empty() {
        (vec![1], vec![0])
    } else {
        (sizes.to_vec(), strides.to_vec())
    }
}

/// The elements of `src` at the positions of an index of `index_sizes`
/// (the index's region of `src`), row-major.
fn source_values<T: c10_core::Element>(src: &Tensor, index_sizes: &[i64]) -> Result<Vec<T>> {
    let layout = layout_of(src)?;
    let (_, strides) = nonempty(layout.sizes(), layout.strides());
    let offset = layout.storage_offset();
    drop(layout);
    src.base()
        .as_strided(index_sizes, &strides, Some(offset))?
        .to_vec::<T>()
}

/// The smallest and largest values of `T` (infinities for floats).
fn bounds<T: Arith>() -> (T, T) {
    match T::DTYPE {
        ScalarType::Byte => (T::from_i64(0), T::from_i64(u8::MAX.into())),
        ScalarType::Char => (T::from_i64(i8::MIN.into()), T::from_i64(i8::MAX.into())),
        ScalarType::Short => (T::from_i64(i16::MIN.into()), T::from_i64(i16::MAX.into())),
        ScalarType::Int => (T::from_i64(i32::MIN.into()), T::from_i64(i32::MAX.into())),
        ScalarType::Long => (T::from_i64(i64::MIN), T::from_i64(i64::MAX)),
        ScalarType::Bool => (T::from_i64(0), T::from_i64(1)),
        _ => (T::from_f64(f64::NEG_INFINITY), T::from_f64(f64::INFINITY)),
    }
}

/// `self = reduce(self, src)` as PyTorch's scatter reductions compute it:
/// a NaN `src` wins `amax`/`amin`, as does a NaN `self`.
#[inline]
fn combine<T: Arith>(op: ScatterReduce, a: T, b: T) -> T {
    match op {
        ScatterReduce::Sum | ScatterReduce::Mean => a.add(b),
        ScatterReduce::Prod => a.mul(b),
        ScatterReduce::Amax => {
            if is_nan(b) || a < b {
                b
            } else {
                a
            }
        }
        ScatterReduce::Amin => {
            if is_nan(b) || b < a {
                b
            } else {
                a
            }
        }
    }
}

/// The value a scattered-to element starts from without `include_self`.
fn identity<T: Arith>(op: ScatterReduce) -> T {
    match op {
        ScatterReduce::Sum | ScatterReduce::Mean => T::zero(),
        ScatterReduce::Prod => T::one(),
        ScatterReduce::Amax => bounds::<T>().0,
        ScatterReduce::Amin => bounds::<T>().1,
    }
}

/// `a / count` as `mean` divides: true division for floats, floor
/// division for integers (a count that wraps to zero in `T` counts as 1,
/// as PyTorch's `masked_fill_(count == 0, 1)` makes it).
fn mean_of<T: Arith>(a: T, count: i64) -> T {
    if T::IS_FLOAT {
        return T::from_f64(a.to_f64() / count as f64);
    }
    let c = match T::from_i64(count).to_i64() {
        0 => 1,
        c => c,
    };
    let x = a.to_i64();
    let (q, r) = (x.wrapping_div(c), x.wrapping_rem(c));
    T::from_i64(if r != 0 && ((r < 0) != (c < 0)) {
        q - 1
    } else {
        q
    })
}

/// The shared impl: see the module docs.
fn scatter_impl(
    meta: &MetaOutput,
    self_: &Tensor,
    dim: i64,
    index: &Tensor,
    source: Source<'_>,
    reduce: Option<(ScatterReduce, bool)>,
) -> Result<()> {
    let out = meta.output();
    if !out.is_same(self_) {
        copy_into(self_.base(), out.base())?;
    }
    if index.numel() == 0 {
        return Ok(());
    }
    let d = wrap_dim(dim, self_.dim())?;
    let dst = layout_of(out)?;
    let (out_sizes, out_strides) = nonempty(dst.sizes(), dst.strides());
    let index_sizes = nonempty(&index.sizes(), &[]).0;
    if out_sizes.len() != index_sizes.len() || d >= out_sizes.len() {
        return Err(Error::runtime(
            "scatter: the tensors were resized while it ran",
        ));
    }
    let idx = index_values(index, "scatter")?;
    let (size, stride) = (out_sizes[d], out_strides[d]);
    let mut base_strides = out_strides.clone();
    base_strides[d] = 0;
    let mut offsets = try_vec_with_capacity(idx.len())?;
    let mut bad = None;
    for_each_offset(&index_sizes, &base_strides, dst.storage_offset(), |b| {
        let i = idx.get(offsets.len()).copied().unwrap_or(-1);
        if (0..size).contains(&i) {
            offsets.push(b + i * stride);
        } else {
            bad.get_or_insert(i);
            offsets.push(b);
        }
    });
    if let Some(i) = bad {
        return Err(Error::runtime(format!(
            "index {i} is out of bounds for dimension {d} with size {size}"
        )));
    }
    if offsets.len() != idx.len() {
        return Err(Error::runtime(
            "scatter: the index changed while it was read",
        ));
    }
    let dtype = dtype_of(out)?;
    dispatch_dtype!(dtype, T => {
        let (values, single): (Vec<T>, bool) = match source {
            Source::Tensor(src) => (source_values::<T>(src, &index_sizes)?, false),
            Source::Value(v) => (vec![T::from_scalar(v)?], true),
        };
        if !single && values.len() != offsets.len() {
            return Err(Error::runtime("scatter: src changed while it was read"));
        }
        let value = |i: usize| values[if single { 0 } else { i }];
        match reduce {
            None => update_offsets(&dst, &offsets, value, |_: T, b| b)?,
            Some((op, include_self)) => {
                if !include_self {
                    update_offsets(&dst, &offsets, |_| identity::<T>(op), |_: T, b| b)?;
                }
                update_offsets(&dst, &offsets, value, |a, b| combine(op, a, b))?;
                if op == ScatterReduce::Mean {
                    let mut counts: HashMap<i64, i64> = HashMap::new();
                    for &o in &offsets {
                        *counts.entry(o).or_insert(i64::from(include_self)) += 1;
                    }
                    let (targets, totals): (Vec<i64>, Vec<i64>) = counts.into_iter().unzip();
                    update_offsets(&dst, &targets, |i| totals[i], |a: T, c| mean_of(a, c))?;
                }
            }
        }
    }, _ => return Err(not_implemented("scatter", dtype)));
    Ok(())
}

/// `scatter.src_out`'s impl.
pub fn scatter_src_out(
    meta: &mut MetaOutput,
    self_: &Tensor,
    dim: i64,
    index: &Tensor,
    src: &Tensor,
) -> Result<()> {
    scatter_impl(meta, self_, dim, index, Source::Tensor(src), None)
}

/// `scatter.value_out`'s impl.
pub fn scatter_value_out(
    meta: &mut MetaOutput,
    self_: &Tensor,
    dim: i64,
    index: &Tensor,
    value: Scalar,
) -> Result<()> {
    scatter_impl(meta, self_, dim, index, Source::Value(value), None)
}

/// `scatter_add.out`'s impl.
pub fn scatter_add_out(
    meta: &mut MetaOutput,
    self_: &Tensor,
    dim: i64,
    index: &Tensor,
    src: &Tensor,
) -> Result<()> {
    scatter_impl(
        meta,
        self_,
        dim,
        index,
        Source::Tensor(src),
        Some((ScatterReduce::Sum, true)),
    )
}

/// `scatter_reduce.two_out`'s impl.
pub fn scatter_reduce_two_out(
    meta: &mut MetaOutput,
    self_: &Tensor,
    dim: i64,
    index: &Tensor,
    src: &Tensor,
    reduce: &str,
    include_self: bool,
) -> Result<()> {
    let op = ScatterReduce::parse(reduce)?;
    scatter_impl(
        meta,
        self_,
        dim,
        index,
        Source::Tensor(src),
        Some((op, include_self)),
    )
}
