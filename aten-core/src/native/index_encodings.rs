//! Indices turned into tensors (CompositeImplicitAutograd, PyTorch's
//! `Onehot.cpp` and `Repeat.cpp`): `one_hot` (zeros with ones scattered
//! at the indices) and `repeat_interleave` with a count per element
//! (`index_select` of the repeated indices) or one count for all (an
//! expanded, copied view).

use c10_core::{Error, Result, Scalar, ScalarType};

use super::dims::wrap_dim;
use crate::generated::ops;
use crate::Tensor;

/// The single value of a reduction's result.
fn value_of(t: &Tensor) -> Result<i64> {
    Ok(ops::_local_scalar_dense(t)?.to_i64())
}

/// `one_hot(self, num_classes)`: int64 indices as one-hot rows (the class
/// count inferred from the largest index when `-1`).
pub fn one_hot(self_: &Tensor, num_classes: i64) -> Result<Tensor> {
    if self_.dtype() != Some(ScalarType::Long) {
        return Err(Error::runtime(
            "one_hot is only applicable to index tensor of type LongTensor.",
        ));
    }
    let mut shape = self_.sizes().to_vec();
    let options = ops::ZerosOptions {
        dtype: self_.dtype(),
        device: self_.device(),
        ..Default::default()
    };
    if self_.numel() == 0 {
        if num_classes <= 0 {
            return Err(Error::runtime(
                "Can not infer total number of classes from empty tensor.",
            ));
        }
        shape.push(num_classes);
        return ops::zeros_with(&shape, options);
    }
    if value_of(&ops::amin(self_)?)? < 0 {
        return Err(Error::runtime("Class values must be non-negative."));
    }
    let largest = value_of(&ops::amax(self_)?)?;
    let num_classes = if num_classes == -1 {
        largest + 1
    } else if num_classes <= largest {
        return Err(Error::runtime(
            "Class values must be smaller than num_classes.",
        ));
    } else {
        num_classes
    };
    shape.push(num_classes);
    let out = ops::zeros_with(&shape, options)?;
    ops::scatter_value_(&out, -1, &ops::unsqueeze(self_, -1)?, Scalar::Int(1))?;
    Ok(out)
}

/// `repeat_interleave.self_int(self, repeats, dim, *, output_size)`: each
/// element `repeats` times along `dim` (the flattened input without one).
pub fn repeat_interleave_self_int(
    self_: &Tensor,
    repeats: i64,
    dim: Option<i64>,
    output_size: Option<i64>,
) -> Result<Tensor> {
    let input = match dim {
        Some(_) => self_.clone(),
        None => ops::flatten_using_ints(self_)?,
    };
    let d = wrap_dim(dim.unwrap_or(0), self_.dim().max(1))?;
    if repeats < 0 {
        return Err(Error::runtime("Repeats must be non-negative"));
    }
    let input = ops::unsqueeze(&input, d as i64 + 1)?;
    let mut expand_shape = input.sizes().to_vec();
    expand_shape[d + 1] = repeats;
    let input = ops::expand(&input, &expand_shape)?;
    if let Some(size) = output_size {
        let calculated = repeats * expand_shape[d];
        if size != calculated {
            return Err(Error::runtime(format!(
                "repeat_interleave: Invalid output_size, expected {calculated} but got {size}"
            )));
        }
    }
    let copied = ops::clone_with(
        &input,
        ops::CloneOptions {
            memory_format: Some(c10_core::MemoryFormat::Contiguous),
        },
    )?;
    ops::flatten_using_ints_with(
        &copied,
        ops::FlattenUsingIntsOptions {
            start_dim: d as i64,
            end_dim: d as i64 + 1,
        },
    )
}

/// `repeat_interleave.self_Tensor(self, repeats, dim, *, output_size)`:
/// element `i` `repeats[i]` times (or every element `repeats` times for a
/// single count) along `dim`.
pub fn repeat_interleave_self_tensor(
    self_: &Tensor,
    repeats: &Tensor,
    dim: Option<i64>,
    output_size: Option<i64>,
) -> Result<Tensor> {
    let (input, d) = match dim {
        Some(d) => (self_.clone(), wrap_dim(d, self_.dim().max(1))?),
        None => (ops::flatten_using_ints(self_)?, 0),
    };
    let along = input.sizes()[d];
    let counts = match repeats.dim() {
        0 => ops::expand(&ops::reshape(repeats, &[1])?, &[along])?,
        1 if repeats.sizes()[0] == 1 => ops::expand(&ops::reshape(repeats, &[1])?, &[along])?,
        1 => {
            if repeats.sizes()[0] != along {
                return Err(Error::runtime(format!(
                    "repeats must have the same size as input along dim, but got repeats.size(0) = {} and input.size({}) = {along}",
                    repeats.sizes()[0],
                    dim.unwrap_or(0)
                )));
            }
            repeats.clone()
        }
        _ => return Err(Error::runtime("repeats must be 0-dim or 1-dim tensor")),
    };
    let indices = ops::repeat_interleave_tensor_with(
        &counts,
        ops::RepeatInterleaveTensorOptions { output_size },
    )?;
    ops::index_select(&input, d as i64, &indices)
}
