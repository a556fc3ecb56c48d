//! `pad` (CompositeImplicitAutograd, PyTorch's `PadNd.cpp`): `constant`
//! through `constant_pad_nd`, `reflect` and `replicate` through the
//! reflection and replication kernels of the padded dimensions' count,
//! `circular` through `_pad_circular` (copies of slices of a new tensor).

use c10_core::{Error, Result, Scalar};

use crate::generated::ops;
use crate::Tensor;

/// `pad(self, pad, mode, value)`.
pub fn pad(self_: &Tensor, pad: &[i64], mode: &str, value: Option<f64>) -> Result<Tensor> {
    if !matches!(mode, "reflect" | "constant" | "replicate" | "circular") {
        return Err(Error::not_implemented(format!(
            "Unrecognised padding mode {mode}"
        )));
    }
    let dim = self_.dim();
    if !pad.len().is_multiple_of(2) {
        return Err(Error::runtime("Padding length must be divisible by 2"));
    }
    if pad.len() > 2 * dim {
        return Err(Error::runtime(format!(
            "Padding length should be less than or equal to two times the input dimension but got padding length {} and input of dimension {dim}",
            pad.len()
        )));
    }
    if mode == "constant" {
        return ops::constant_pad_nd_with(
            self_,
            pad,
            ops::ConstantPadNdOptions {
                value: Scalar::Double(value.unwrap_or(0.0)),
            },
        );
    }
    if value.is_some_and(|v| v != 0.0) {
        return Err(Error::runtime(format!(
            "Padding mode \"{mode}\" doesn't take in value argument"
        )));
    }
    match (pad.len(), dim, mode) {
        (2, 2 | 3, "reflect") => ops::reflection_pad1d(self_, pad),
        (2, 2 | 3, "replicate") => ops::replication_pad1d(self_, pad),
        (4, 3 | 4, "reflect") => ops::reflection_pad2d(self_, pad),
        (4, 3 | 4, "replicate") => ops::replication_pad2d(self_, pad),
        (6, 4 | 5, "reflect") => ops::reflection_pad3d(self_, pad),
        (6, 4 | 5, "replicate") => ops::replication_pad3d(self_, pad),
        (2, 2 | 3, "circular") | (4, 3 | 4, "circular") | (6, 4 | 5, "circular") => {
            ops::_pad_circular(self_, pad)
        }
        _ => Err(Error::not_implemented(
            "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now",
        )),
    }
}

/// `slice(t, dim, start, end)`.
fn slice(t: &Tensor, dim: usize, start: i64, end: i64) -> Result<Tensor> {
    ops::slice_tensor_with(
        t,
        ops::SliceTensorOptions {
            dim: dim as i64,
            start: Some(start),
            end: Some(end),
            step: 1,
        },
    )
}

/// `_pad_circular(self, pad)`: the input copied into the middle of a new
/// tensor, then each padded side copied from the opposite end.
pub fn _pad_circular(self_: &Tensor, pad: &[i64]) -> Result<Tensor> {
    let in_shape = self_.sizes();
    let rank = in_shape.len();
    if rank < 2 || pad.len() + 4 != rank * 2 {
        return Err(Error::runtime(format!(
            "Expected padding of length {}, but got {}",
            rank.saturating_sub(2) * 2,
            pad.len()
        )));
    }
    let ndim = rank - 2;
    let mut out_shape = in_shape.to_vec();
    for i in 0..ndim {
        let (l, r) = (pad[2 * (ndim - i - 1)], pad[2 * (ndim - i - 1) + 1]);
        let size = in_shape[2 + i];
        out_shape[2 + i] = size + l + r;
        if l > size || r > size {
            return Err(Error::runtime(
                "Padding value causes wrapping around more than once.",
            ));
        }
        if out_shape[2 + i] < 0 {
            return Err(Error::runtime(
                "Negative padding value is resulting in an empty dimension",
            ));
        }
    }
    let out = ops::new_empty(self_, &out_shape)?;
    let (mut out_slice, mut in_slice) = (out.clone(), self_.clone());
    for i in 0..ndim {
        let dim = ndim - i + 1;
        let (l, r) = (pad[2 * i], pad[2 * i + 1]);
        out_slice = slice(&out_slice, dim, l.max(0), out_shape[dim] - r.max(0))?;
        in_slice = slice(&in_slice, dim, (-l).max(0), in_shape[dim] - (-r).max(0))?;
    }
    ops::copy_(&out_slice, &in_slice)?;
    for i in 0..ndim {
        let dim = ndim - i + 1;
        let (l, r) = (pad[2 * i], pad[2 * i + 1]);
        if l > 0 {
            let dst = slice(&out, dim, 0, l)?;
            let src = slice(
                &out,
                dim,
                out_shape[dim] - l - r.max(0),
                out_shape[dim] - r.max(0),
            )?;
            ops::copy_(&dst, &src)?;
        }
        if r > 0 {
            let dst = slice(&out, dim, out_shape[dim] - r, out_shape[dim])?;
            let src = slice(&out, dim, l.max(0), l.max(0) + r)?;
            ops::copy_(&dst, &src)?;
        }
    }
    Ok(out)
}
