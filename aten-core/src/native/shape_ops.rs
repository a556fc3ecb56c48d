//! Composite copying shape operators: `stack` (unsqueeze + `cat`),
//! `repeat` (a strided view of the result, filled by one broadcast copy)
//! and `constant_pad_nd` (a filled result whose inner view receives the
//! input, cropped by negative pads), and `roll` (views joined by `cat`).

use c10_core::{Error, MemoryFormat, Result, Scalar};

use super::dims::{fmt_list, wrap_dim};
use crate::generated::ops;
use crate::Tensor;

/// `stack(tensors, dim)` (CompositeExplicitAutograd).
pub fn stack(tensors: &[Tensor], dim: i64) -> Result<Tensor> {
    let Some(first) = tensors.first() else {
        return Err(Error::runtime("stack expects a non-empty TensorList"));
    };
    for (i, t) in tensors.iter().enumerate().skip(1) {
        if t.sizes() != first.sizes() {
            return Err(Error::runtime(format!(
                "stack expects each tensor to be equal size, but got {} at entry 0 and {} at entry {i}",
                fmt_list(&first.sizes()),
                fmt_list(&t.sizes())
            )));
        }
    }
    let d = wrap_dim(dim, first.dim() + 1)?;
    let unsqueezed = tensors
        .iter()
        .map(|t| ops::unsqueeze(t, d as i64))
        .collect::<Result<Vec<_>>>()?;
    ops::cat_with(&unsqueezed, ops::CatOptions { dim: d as i64 })
}

/// `repeat(repeats)` (CompositeExplicitAutograd): the result viewed as
/// `[repeats..., padded sizes...]` receives `self` broadcast.
pub fn repeat(self_: &Tensor, repeats: &[i64]) -> Result<Tensor> {
    if repeats.len() < self_.dim() {
        return Err(Error::runtime(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor",
        ));
    }
    if let Some(bad) = repeats.iter().find(|r| **r < 0) {
        return Err(Error::runtime(format!(
            "Trying to create tensor with negative dimension {bad}: {}",
            fmt_list(repeats)
        )));
    }
    let lead = repeats.len() - self_.dim();
    let mut padded = vec![1i64; lead];
    padded.extend_from_slice(&self_.sizes());
    let target = padded
        .iter()
        .zip(repeats)
        .map(|(s, r)| s.checked_mul(*r))
        .collect::<Option<Vec<i64>>>()
        .ok_or_else(|| Error::runtime("repeat: the result's size overflows"))?;
    let result = ops::empty_memory_format_with(
        &target,
        ops::EmptyMemoryFormatOptions {
            dtype: self_.dtype(),
            device: self_.device(),
            ..Default::default()
        },
    )?;
    if repeats.contains(&0) || result.numel() == 0 {
        return Ok(result);
    }
    let x = ops::expand(self_, &padded)?;
    // Dimension i of the result splits into (repeat, size): strides
    // (size * stride, stride).
    let strides = result.strides().to_vec();
    let mut view_sizes = repeats.to_vec();
    view_sizes.extend_from_slice(&padded);
    let mut view_strides: Vec<i64> = padded.iter().zip(&strides).map(|(s, st)| s * st).collect();
    view_strides.extend_from_slice(&strides);
    let view = ops::as_strided(&result, &view_sizes, &view_strides)?;
    let source = ops::expand(&x, &view_sizes)?;
    ops::copy_(&view, &source)?;
    Ok(result)
}

/// `constant_pad_nd(pad, value)` (CompositeExplicitAutograd): `pad` holds
/// (before, after) pairs for the last dimensions, the last dimension
/// first; positive pads add elements of `value`, negative ones crop. The
/// result is laid out in the memory format `self` suggests.
pub fn constant_pad_nd(self_: &Tensor, pad: &[i64], value: Scalar) -> Result<Tensor> {
    if !pad.len().is_multiple_of(2) {
        return Err(Error::runtime(format!(
            "Length of pad must be even but instead it equals {}",
            pad.len()
        )));
    }
    let layout = self_
        .layout()
        .ok_or_else(|| Error::runtime("Tensor is undefined"))?;
    let (sizes, strides) = (layout.sizes().to_vec(), layout.strides().to_vec());
    drop(layout);
    let l_inp = sizes.len();
    let l_pad = pad.len() / 2;
    if l_inp < l_pad {
        return Err(Error::runtime(format!(
            "Length of pad should be no more than twice the number of dimensions of the input. Pad length is {}while the input has {l_inp}dimensions.",
            pad.len()
        )));
    }
    let l_diff = l_inp - l_pad;
    // The (before, after) pads of dimension `i >= l_diff`.
    let pads_of = |i: usize| {
        let at = 2 * (l_inp - i - 1);
        (pad[at], pad[at + 1])
    };
    let mut cropped = self_.clone();
    let mut all_pads_non_positive = true;
    for i in l_diff..l_inp {
        let (before, after) = pads_of(i);
        if before < 0 {
            let size = cropped.size(i as i64)?;
            cropped = ops::narrow(
                &cropped,
                i as i64,
                before.saturating_neg(),
                size.saturating_add(before),
            )?;
        } else if before != 0 {
            all_pads_non_positive = false;
        }
        if after < 0 {
            let size = cropped.size(i as i64)?;
            cropped = ops::narrow(&cropped, i as i64, 0, size.saturating_add(after))?;
        } else if after != 0 {
            all_pads_non_positive = false;
        }
    }
    if all_pads_non_positive {
        return ops::clone(&cropped);
    }
    let mut new_shape = sizes[..l_diff].to_vec();
    for (i, &size) in sizes.iter().enumerate().skip(l_diff) {
        let (before, after) = pads_of(i);
        let new_dim = size
            .checked_add(before)
            .and_then(|n| n.checked_add(after))
            .ok_or_else(|| Error::runtime("constant_pad_nd: the padded size overflows"))?;
        if new_dim < 0 {
            return Err(Error::runtime(format!(
                "The input size {size}, plus negative padding {before} and {after} resulted in a negative output size, which is invalid. Check dimension {i} of your input."
            )));
        }
        new_shape.push(new_dim);
    }
    let output = ops::empty_memory_format_with(
        &new_shape,
        ops::EmptyMemoryFormatOptions {
            dtype: self_.dtype(),
            device: self_.device(),
            memory_format: Some(MemoryFormat::suggest(&sizes, &strides)),
            ..Default::default()
        },
    )?;
    ops::fill_scalar_(&output, value)?;
    let mut inner = output.clone();
    for i in l_diff..l_inp {
        let (before, after) = pads_of(i);
        if before > 0 {
            let size = inner.size(i as i64)?;
            inner = ops::narrow(&inner, i as i64, before, size - before)?;
        }
        if after > 0 {
            let size = inner.size(i as i64)?;
            inner = ops::narrow(&inner, i as i64, 0, size - after)?;
        }
    }
    ops::copy_(&inner, &cropped)?;
    Ok(output)
}

/// `roll(self, shifts, dims)` (PyTorch's `roll_cpu`): one dimension as two
/// `narrow`s joined the other way round; several one after the other; no
/// dimensions, the flattened tensor.
pub fn roll(self_: &Tensor, shifts: &[i64], dims: &[i64]) -> Result<Tensor> {
    if dims.len() != 1 || shifts.len() != 1 {
        if shifts.is_empty() {
            return Err(Error::runtime("`shifts` required"));
        }
        if dims.is_empty() && shifts.len() == 1 {
            let flat = ops::view(&ops::contiguous(self_)?, &[self_.numel()])?;
            return ops::view(&roll(&flat, shifts, &[0])?, &self_.sizes());
        }
        if shifts.len() != dims.len() {
            return Err(Error::runtime(format!(
                "shifts and dimensions must align. shifts: {}, dims:{}",
                shifts.len(),
                dims.len()
            )));
        }
        let first = roll(self_, &shifts[..1], &dims[..1])?;
        return roll(&first, &shifts[1..], &dims[1..]);
    }
    if self_.numel() == 0 {
        return ops::clone(self_);
    }
    let dim = dims[0];
    let d = super::dims::wrap_dim(dim, self_.dim())?;
    let size = self_.sizes()[d];
    let start = (size - shifts[0] % size) % size;
    let t0 = ops::narrow(self_, dim, start, size - start)?;
    let t1 = ops::narrow(self_, dim, 0, start)?;
    ops::cat_with(&[t0, t1], ops::CatOptions { dim })
}
