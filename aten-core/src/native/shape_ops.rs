//! Composite copying shape operators: `stack` (unsqueeze + `cat`) and
//! `repeat` (a strided view of the result, filled by one broadcast copy).

use c10_core::{Error, Result};

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
