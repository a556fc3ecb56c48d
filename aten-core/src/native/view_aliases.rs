//! Views PyTorch writes over other views (CompositeImplicitAutograd,
//! `TensorShape.cpp`): `expand_as`, `view_as`, `reshape_as`, `movedim`
//! and its alias `moveaxis` (a `permute`), `swapaxes`/`swapdims` (a
//! `transpose`), `numpy_T` (`.T`), `mT`, `ravel`, and `fliplr`/`flipud`.

use std::sync::atomic::{AtomicBool, Ordering};

use c10_core::{Error, Result};

use super::dims::{fmt_list, wrap_dim};
use crate::generated::ops;
use crate::Tensor;

/// `expand_as(self, other)`.
pub fn expand_as(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
    ops::expand(self_, &other.sizes())
}

/// `view_as(self, other)`.
pub fn view_as(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
    ops::view(self_, &other.sizes())
}

/// `reshape_as(self, other)`.
pub fn reshape_as(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
    ops::reshape(self_, &other.sizes())
}

/// `movedim.intlist(self, source, destination)`: the dimensions at
/// `source` moved to `destination`, the others in their order.
pub fn movedim_intlist(self_: &Tensor, source: &[i64], destination: &[i64]) -> Result<Tensor> {
    if source.len() != destination.len() {
        return Err(Error::runtime(format!(
            "movedim: Invalid source or destination dims: source ({} dims) should contain the same number of dims as destination ({} dims)",
            fmt_list(source),
            fmt_list(destination)
        )));
    }
    let n = self_.dim();
    let wrap = |v: &[i64]| {
        v.iter()
            .map(|&d| wrap_dim(d, n))
            .collect::<Result<Vec<_>>>()
    };
    let (src, dst) = (wrap(source)?, wrap(destination)?);
    let unique = |v: &[usize]| {
        let mut s = v.to_vec();
        s.sort_unstable();
        s.windows(2).all(|w| w[0] != w[1])
    };
    if !unique(&src) {
        return Err(Error::runtime(format!(
            "movedim: repeated dim in `source` ({})",
            fmt_list(source)
        )));
    }
    if !unique(&dst) {
        return Err(Error::runtime(format!(
            "movedim: repeated dim in `destination` ({})",
            fmt_list(destination)
        )));
    }
    if n == 0 {
        return ops::alias(self_);
    }
    let mut order = vec![usize::MAX; n];
    let mut rest_src: Vec<usize> = (0..n).filter(|d| !src.contains(d)).collect();
    let rest_dst: Vec<usize> = (0..n).filter(|d| !dst.contains(d)).collect();
    for (s, d) in src.iter().zip(&dst) {
        order[*d] = *s;
    }
    for (s, d) in rest_src.drain(..).zip(&rest_dst) {
        order[*d] = s;
    }
    let order: Vec<i64> = order.iter().map(|&d| d as i64).collect();
    ops::permute(self_, &order)
}

/// `movedim.int(self, source, destination)`.
pub fn movedim_int(self_: &Tensor, source: i64, destination: i64) -> Result<Tensor> {
    movedim_intlist(self_, &[source], &[destination])
}

/// `moveaxis.intlist(self, source, destination)`: `movedim`.
pub fn moveaxis_intlist(self_: &Tensor, source: &[i64], destination: &[i64]) -> Result<Tensor> {
    movedim_intlist(self_, source, destination)
}

/// `moveaxis.int(self, source, destination)`: `movedim`.
pub fn moveaxis_int(self_: &Tensor, source: i64, destination: i64) -> Result<Tensor> {
    movedim_intlist(self_, &[source], &[destination])
}

/// `swapaxes(self, axis0, axis1)`: `transpose`.
pub fn swapaxes(self_: &Tensor, axis0: i64, axis1: i64) -> Result<Tensor> {
    ops::transpose_int(self_, axis0, axis1)
}

/// `swapdims(self, dim0, dim1)`: `transpose`.
pub fn swapdims(self_: &Tensor, dim0: i64, dim1: i64) -> Result<Tensor> {
    ops::transpose_int(self_, dim0, dim1)
}

/// Warned once per process, as `TORCH_WARN_ONCE`.
static WARNED_T: AtomicBool = AtomicBool::new(false);

/// `numpy_T(self)` (`.T`): the dimensions reversed, with PyTorch's
/// deprecation warnings for tensors that are not matrices.
#[allow(non_snake_case)]
pub fn numpy_T(self_: &Tensor) -> Result<Tensor> {
    let n = self_.dim();
    if n != 2 && !WARNED_T.swap(true, Ordering::Relaxed) {
        if n == 0 {
            c10_core::torch_warn!(
                "Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases."
            );
        } else {
            c10_core::torch_warn!(
                "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it will throw an error in a future release. Consider `x.mT` to transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor."
            );
        }
    }
    let dims: Vec<i64> = (0..n as i64).rev().collect();
    ops::permute(self_, &dims)
}

/// `mT(self)`: the last two dimensions transposed.
#[allow(non_snake_case)]
pub fn mT(self_: &Tensor) -> Result<Tensor> {
    if self_.dim() < 2 {
        return Err(Error::runtime(format!(
            "tensor.mT is only supported on matrices or batches of matrices. Got {}-D tensor.",
            self_.dim()
        )));
    }
    ops::transpose_int(self_, -2, -1)
}

/// `ravel(self)`: `contiguous().view(-1)`.
pub fn ravel(self_: &Tensor) -> Result<Tensor> {
    ops::view(&ops::contiguous(self_)?, &[-1])
}

/// `fliplr(self)`: `flip` of dimension 1.
pub fn fliplr(self_: &Tensor) -> Result<Tensor> {
    if self_.dim() < 2 {
        return Err(Error::runtime("Input must be >= 2-d."));
    }
    ops::flip(self_, &[1])
}

/// `flipud(self)`: `flip` of dimension 0.
pub fn flipud(self_: &Tensor) -> Result<Tensor> {
    if self_.dim() < 1 {
        return Err(Error::runtime("Input must be >= 1-d."));
    }
    ops::flip(self_, &[0])
}
