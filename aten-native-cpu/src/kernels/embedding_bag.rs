//! `_embedding_bag` on the CPU, as PyTorch's `_embedding_bag_cpu_impl`
//! computes it (see `aten_core::native::embedding_bag` for the outputs).
//!
//! - Bags: index `i` belongs to bag `offset2bag[i]`, the number of
//!   offsets (but the first; the last too with `include_last_offset`) at
//!   or before `i`. PyTorch's fast `sum`/`mean` path (float32 and narrower
//!   weights, no `padding_idx`) reads the bags as the index ranges between
//!   consecutive offsets instead, and reports a bad index in its own words.
//! - `sum` and `mean` accumulate each bag's rows (scaled by
//!   `per_sample_weights`) in float32 (float64 for float64 weights) and
//!   round once; `mean` then divides by the bag's size (at least 1).
//! - `max` keeps the first largest value per feature and its row.
//! - `bag_size` counts a bag's indices minus its `padding_idx` ones; it
//!   is zero in `sum` mode, and `max_indices` is a copy of it outside
//!   `max` mode.

use aten_core::native::embedding_bag::{embedding_bag_setup, EmbeddingBagMode};
use aten_core::{ops, Tensor};
use c10_core::{dispatch_dtype, Element, Error, Numeric, Result, ScalarType};

use super::indexing::index_values;
use super::util::{dtype_of, not_implemented, write_output};

/// Writes index values into a fresh int64 or int32 output.
fn write_ints(out: &Tensor, values: &[i64]) -> Result<()> {
    match dtype_of(out)? {
        ScalarType::Long => write_output(out, true, values),
        ScalarType::Int => {
            let narrow: Vec<i32> = values.iter().map(|&v| v as i32).collect();
            write_output(out, true, &narrow)
        }
        other => Err(not_implemented("embedding_bag", other)),
    }
}

/// `make_offset2bag`: the bag of each of `n` indices from `offsets` (the
/// last left out with `include_last_offset`); an offset outside `0..=n`
/// is `index_add_`'s error.
fn offset2bag(offsets: &[i64], n: usize, include_last_offset: bool) -> Result<Vec<i64>> {
    let used = if include_last_offset {
        &offsets[..offsets.len().saturating_sub(1)]
    } else {
        offsets
    };
    let mut counts = vec![0i64; n + 1];
    for &o in used {
        let slot = usize::try_from(o)
            .ok()
            .filter(|&s| s <= n)
            .ok_or_else(|| Error::index_error("index out of range in self"))?;
        counts[slot] += 1;
    }
    counts[0] -= 1;
    let mut acc = 0;
    Ok(counts[..n]
        .iter()
        .map(|c| {
            acc += c;
            acc
        })
        .collect())
}

/// The bag sizes from the offsets (`make_bag_size_out` with
/// `requires_grad`): the distance to the next offset, the last bag to
/// the end of `indices` (`n`).
fn bag_sizes(offsets: &[i64], num_bags: usize, n: i64) -> Vec<i64> {
    (0..num_bags)
        .map(|b| {
            if b + 1 < num_bags {
                offsets[b + 1].wrapping_sub(offsets[b])
            } else {
                n.wrapping_sub(offsets[b])
            }
        })
        .collect()
}

/// The arguments the reductions read.
struct Bags<'a> {
    mode: EmbeddingBagMode,
    indices: &'a [i64],
    offsets: &'a [i64],
    offset2bag: &'a [i64],
    num_bags: usize,
    dim: usize,
    fast_path: bool,
    padding_idx: i64,
    vocab: i64,
}

impl Bags<'_> {
    /// The positions of `indices` that each bag reduces, in order: the
    /// offset ranges on the fast path, `offset2bag` otherwise (positions
    /// outside every bag are left out).
    fn members(&self) -> Vec<Vec<usize>> {
        let mut members = vec![Vec::new(); self.num_bags];
        let n = self.indices.len() as i64;
        if self.fast_path && self.mode != EmbeddingBagMode::Max {
            for (b, m) in members.iter_mut().enumerate() {
                let start = self.offsets[b].clamp(0, n);
                let end = self
                    .offsets
                    .get(b + 1)
                    .copied()
                    .unwrap_or(n)
                    .clamp(start, n);
                m.extend(start as usize..end as usize);
            }
        } else {
            for (i, &bag) in self.offset2bag.iter().enumerate() {
                if let Some(m) = usize::try_from(bag).ok().and_then(|b| members.get_mut(b)) {
                    m.push(i);
                }
            }
        }
        members
    }

    /// The first bad index in the order the path visits them, as that
    /// path reports it.
    fn check_indices(&self, members: &[Vec<usize>]) -> Result<()> {
        let bad = |idx: i64| idx < 0 || idx >= self.vocab;
        if self.fast_path && self.mode != EmbeddingBagMode::Max {
            for &i in members.iter().flatten() {
                let idx = self.indices[i];
                if bad(idx) {
                    return Err(Error::runtime(format!(
                        "Index {i} is out of bounds: {idx}, range 0 to {}",
                        self.vocab
                    )));
                }
            }
        } else if let Some(&idx) = self.indices.iter().find(|&&idx| bad(idx)) {
            return Err(Error::runtime(format!(
                "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be {idx}"
            )));
        }
        Ok(())
    }
}

/// The reduced rows (`[bags, dim]`, row-major) and the `max` rows'
/// indices, for weights `rows[i]` (the row of `indices[i]`, row-major)
/// and `bag_size` (decremented for padding indices).
fn reduce<T: Element + Numeric>(
    bags: &Bags<'_>,
    members: &[Vec<usize>],
    rows: &[T],
    scale: Option<&[f64]>,
    bag_size: &mut [i64],
) -> (Vec<T>, Vec<i64>) {
    let d = bags.dim;
    let zero = T::from_f64(0.0);
    let mut output = vec![zero; bags.num_bags * d];
    let mut max_indices = Vec::new();
    let is_double = T::DTYPE == ScalarType::Double;
    match bags.mode {
        EmbeddingBagMode::Sum | EmbeddingBagMode::Mean => {
            let mut acc = vec![0f64; d];
            for (b, m) in members.iter().enumerate() {
                acc.iter_mut().for_each(|a| *a = 0.0);
                for &i in m {
                    if bags.indices[i] == bags.padding_idx {
                        bag_size[b] = bag_size[b].wrapping_sub(1);
                        continue;
                    }
                    let s = scale.map_or(1.0, |s| s[i]);
                    for (f, a) in acc.iter_mut().enumerate() {
                        let x = rows[i * d + f].to_f64();
                        // float32 accumulation below float64 weights.
                        *a = if is_double {
                            *a + x * s
                        } else {
                            f64::from(*a as f32 + (x as f32) * (s as f32))
                        };
                    }
                }
                for (f, &a) in acc.iter().enumerate() {
                    output[b * d + f] = T::from_f64(a);
                }
            }
            if bags.mode == EmbeddingBagMode::Mean {
                for (b, row) in output.chunks_mut(d.max(1)).enumerate() {
                    let count = T::from_i64(bag_size[b].max(1)).to_f64();
                    for v in row.iter_mut() {
                        let q = v.to_f64() / count;
                        *v = T::from_f64(if is_double { q } else { f64::from(q as f32) });
                    }
                }
            }
        }
        EmbeddingBagMode::Max => {
            max_indices = vec![0i64; bags.num_bags * d];
            for (b, m) in members.iter().enumerate() {
                let mut first = true;
                for &i in m {
                    let idx = bags.indices[i];
                    if idx == bags.padding_idx {
                        bag_size[b] = bag_size[b].wrapping_sub(1);
                        continue;
                    }
                    for f in 0..d {
                        let w = rows[i * d + f];
                        if first || w > output[b * d + f] {
                            output[b * d + f] = w;
                            max_indices[b * d + f] = idx;
                        }
                    }
                    first = false;
                }
            }
        }
    }
    (output, max_indices)
}

/// PyTorch's checks of the offsets: the first bag starts at 0, and the
/// last offset lies within the `n` indices.
fn check_offsets(offs: &[i64], n: i64) -> Result<()> {
    if let (Some(&first), Some(&last)) = (offs.first(), offs.last()) {
        if first != 0 {
            return Err(Error::runtime(format!(
                "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. However, got {first}"
            )));
        }
        if last > n {
            return Err(Error::runtime(format!(
                "offsets[-1] can not be greater than input's length {n} but got offsets[-1] of {last}"
            )));
        }
    }
    Ok(())
}

/// The per-sample weights as `f64`, one per index (`len` of them).
fn per_sample_scale(p: &Tensor, len: usize) -> Result<Vec<f64>> {
    let dtype = dtype_of(p)?;
    let scale = dispatch_dtype!(floating: dtype, T => p.to_vec::<T>()?.iter().map(|x| x.to_f64()).collect::<Vec<f64>>(),
        _ => return Err(not_implemented("embedding_bag", dtype)));
    if scale.len() != len {
        return Err(Error::runtime(
            "embedding_bag: per_sample_weights changed while they were read",
        ));
    }
    Ok(scale)
}

/// `_embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode,
/// sparse, per_sample_weights, include_last_offset, padding_idx)`.
#[allow(clippy::too_many_arguments)]
pub fn _embedding_bag_cpu(
    weight: &Tensor,
    indices: &Tensor,
    offsets: &Tensor,
    _scale_grad_by_freq: bool,
    mode: i64,
    _sparse: bool,
    per_sample_weights: Option<&Tensor>,
    include_last_offset: bool,
    padding_idx: i64,
) -> Result<(Tensor, Tensor, Tensor, Tensor)> {
    let setup = embedding_bag_setup(
        weight,
        indices,
        offsets,
        mode,
        per_sample_weights,
        include_last_offset,
        padding_idx,
    )?;
    let idx = index_values(&setup.indices, "embedding_bag")?;
    let offs = index_values(&setup.offsets, "embedding_bag")?;
    let n = setup.indices.size(0)?;
    check_offsets(&offs, n)?;
    let [output, offset2bag_out, bag_size_out, max_indices_out] = &setup.outputs;
    let num_bags = usize::try_from(setup.num_bags).unwrap_or(0);
    if offs.len() < num_bags || setup.indices.numel() != idx.len() as i64 {
        return Err(Error::runtime(
            "embedding_bag: indices or offsets changed while they were read",
        ));
    }
    // The fast `sum` path neither needs nor computes `offset2bag`.
    let bag_of = if setup.mode != EmbeddingBagMode::Sum || !setup.fast_path {
        offset2bag(&offs, idx.len(), include_last_offset)?
    } else {
        Vec::new()
    };
    let bags = Bags {
        mode: setup.mode,
        indices: &idx,
        offsets: &offs,
        offset2bag: &bag_of,
        num_bags,
        dim: usize::try_from(weight.size(1)?).unwrap_or(0),
        fast_path: setup.fast_path,
        padding_idx,
        vocab: weight.size(0)?,
    };
    let members = bags.members();
    bags.check_indices(&members)?;
    let mut bag_size = bag_sizes(&offs, num_bags, n);
    let scale = per_sample_weights
        .map(|p| per_sample_scale(p, idx.len()))
        .transpose()?;
    // The row of each index (a row in range for the indices no bag reads,
    // which are never checked).
    let vocab = bags.vocab;
    let row_ids: Vec<i64> = idx
        .iter()
        .map(|&i| if (0..vocab).contains(&i) { i } else { 0 })
        .collect();
    let rows = ops::index_select(weight, 0, &Tensor::from_vec(row_ids, &[idx.len() as i64])?)?;
    let dtype = dtype_of(weight)?;
    let max_indices = dispatch_dtype!(floating: dtype, T => {
        let rows = rows.to_vec::<T>()?;
        if rows.len() != idx.len() * bags.dim {
            return Err(Error::runtime("embedding_bag: weight changed while it was read"));
        }
        let (values, max_indices) = reduce::<T>(&bags, &members, &rows, scale.as_deref(), &mut bag_size);
        write_output(output, true, &values)?;
        max_indices
    }, _ => return Err(not_implemented("embedding_bag_no_grad_cpu_out", dtype)));
    if setup.mode == EmbeddingBagMode::Sum {
        bag_size.iter_mut().for_each(|b| *b = 0);
    }
    if offset2bag_out.numel() > 0 {
        write_ints(offset2bag_out, &bag_of)?;
    }
    write_ints(bag_size_out, &bag_size)?;
    let max_or_sizes = if setup.mode == EmbeddingBagMode::Max {
        &max_indices
    } else {
        &bag_size
    };
    write_ints(max_indices_out, max_or_sizes)?;
    let [output, offset2bag_out, bag_size_out, max_indices_out] = setup.outputs;
    Ok((output, offset2bag_out, bag_size_out, max_indices_out))
}
