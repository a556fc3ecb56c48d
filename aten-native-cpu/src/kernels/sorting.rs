//! `sort.values_stable` and `topk.values` impls: each lane along `dim` is
//! ordered stably with PyTorch's NaN rule (NaN is larger than every
//! number: last ascending, first descending; `topk` with `largest` picks
//! NaNs first), and the values with their original positions are written
//! to the outputs the meta functions laid out.

use std::cmp::Ordering;

use aten_core::native::dims::wrap_dim;
use aten_core::structured::MetaOutput;
use aten_core::Tensor;
use c10_core::{dispatch_dtype, Element, Error, Result, ScalarType};

use super::util::{dtype_of, is_nan, not_implemented, try_vec_filled, write_output};

/// Ascending order with NaNs last (`KeyValueCompAsc`).
fn ascending<T: PartialOrd + Copy>(a: T, b: T) -> Ordering {
    match (is_nan(a), is_nan(b)) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

/// Descending order with NaNs first (`KeyValueCompDesc`).
fn descending<T: PartialOrd + Copy>(a: T, b: T) -> Ordering {
    ascending(b, a)
}

/// A tensor's lanes along one dimension: `outer` blocks of `len` runs
/// `inner` elements apart, in row-major order.
#[derive(Copy, Clone, Debug)]
struct Lanes {
    outer: usize,
    len: usize,
    inner: usize,
}

impl Lanes {
    /// The lanes of `sizes` along `dim` (a 0-dim tensor: one lane of one).
    fn of(sizes: &[i64], dim: usize) -> Lanes {
        if sizes.is_empty() {
            return Lanes {
                outer: 1,
                len: 1,
                inner: 1,
            };
        }
        // Saturating: an empty tensor's other sizes may multiply past
        // `usize` (it has no lanes to visit anyway).
        let prod = |s: &[i64]| {
            s.iter()
                .fold(1usize, |acc, &x| acc.saturating_mul(x as usize))
        };
        Lanes {
            outer: prod(&sizes[..dim]),
            len: sizes[dim] as usize,
            inner: prod(&sizes[dim + 1..]),
        }
    }

    /// Row-major position of element `j` of lane `(o, i)`.
    #[inline]
    fn at(&self, o: usize, i: usize, j: usize) -> usize {
        (o * self.len + j) * self.inner + i
    }
}

/// For every lane of `values` (row-major, laid out as `lanes`), its first
/// `k` elements in `order` (stable), and their positions in the lane;
/// both row-major over the lanes shortened to `k`.
fn ordered_lanes<T: Copy>(
    values: &[T],
    lanes: Lanes,
    k: usize,
    order: impl Fn(T, T) -> Ordering,
) -> Result<(Vec<T>, Vec<i64>)> {
    if values.is_empty() {
        // No lanes to order (their count or length is 0, whatever the
        // other sizes): nothing to allocate.
        return Ok((Vec::new(), Vec::new()));
    }
    let kept = Lanes { len: k, ..lanes };
    // At most `values.len()`: `k` is at most the lanes' length.
    let total = lanes.outer * k * lanes.inner;
    // Every position is written below (each lane's first `k`); a lane of
    // `k > 0` elements exists whenever `total > 0`.
    let mut out_values: Vec<T> = match values.first() {
        Some(&first) => try_vec_filled(first, total)?,
        None => Vec::new(),
    };
    let mut out_indices = try_vec_filled(0i64, out_values.len())?;
    let mut perm: Vec<usize> = Vec::with_capacity(lanes.len);
    for o in 0..lanes.outer {
        for i in 0..lanes.inner {
            perm.clear();
            perm.extend(0..lanes.len);
            perm.sort_by(|&a, &b| order(values[lanes.at(o, i, a)], values[lanes.at(o, i, b)]));
            for (j, &p) in perm.iter().take(k).enumerate() {
                let at = kept.at(o, i, j);
                out_values[at] = values[lanes.at(o, i, p)];
                out_indices[at] = p as i64;
            }
        }
    }
    Ok((out_values, out_indices))
}

/// Writes the sorted (or top-`k`, at most the lane's length) lanes along
/// `dim` of `self_` into the two outputs.
fn write_ordered<T: Element + PartialOrd>(
    meta: &MetaOutput<2>,
    self_: &Tensor,
    dim: i64,
    k: Option<usize>,
    order: impl Fn(T, T) -> Ordering,
) -> Result<()> {
    let values = self_.to_vec::<T>()?;
    let sizes = self_.sizes();
    let lanes = Lanes::of(&sizes, wrap_dim(dim, sizes.len())?);
    if values.len() != lanes.outer * lanes.len * lanes.inner {
        return Err(Error::runtime("sort: the tensor changed while it was read"));
    }
    let k = k.map_or(lanes.len, |k| k.min(lanes.len));
    let (sorted, positions) = ordered_lanes(&values, lanes, k, order)?;
    let [out_values, out_indices] = meta.outputs();
    let fresh = meta.is_fresh();
    write_output(out_values, fresh, &sorted)?;
    write_output(out_indices, fresh, &positions)
}

/// `sort.values_stable`'s impl.
pub fn sort_stable_out(
    meta: &mut MetaOutput<2>,
    self_: &Tensor,
    _stable: Option<bool>,
    dim: i64,
    descending_: bool,
) -> Result<()> {
    let dtype = dtype_of(self_)?;
    dispatch_dtype!(dtype, T => if descending_ {
        write_ordered::<T>(meta, self_, dim, None, descending)
    } else {
        write_ordered::<T>(meta, self_, dim, None, ascending)
    }, _ => Err(not_implemented("sort", dtype)))
}

/// `topk.values`'s impl: the `k` largest (or smallest) of each lane,
/// ordered.
pub fn topk_out_cpu(
    meta: &mut MetaOutput<2>,
    self_: &Tensor,
    k: i64,
    dim: i64,
    largest: bool,
    _sorted: bool,
) -> Result<()> {
    let sizes = self_.sizes();
    let d = wrap_dim(dim, sizes.len())?;
    let slice = sizes.get(d).copied().unwrap_or(1);
    if k < 0 || k > slice {
        return Err(Error::runtime("selected index k out of range"));
    }
    let dtype = dtype_of(self_)?;
    if dtype == ScalarType::Bool && !sizes.is_empty() {
        return Err(not_implemented("topk_cpu", dtype));
    }
    // A 0-dim `self` is its own top element, whatever `k`.
    let k = if sizes.is_empty() { 1 } else { k as usize };
    dispatch_dtype!(dtype, T => if largest {
        write_ordered::<T>(meta, self_, dim, Some(k), descending)
    } else {
        write_ordered::<T>(meta, self_, dim, Some(k), ascending)
    }, _ => Err(not_implemented("topk_cpu", dtype)))
}
