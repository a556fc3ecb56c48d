//! Weight normalization (`torch.nn.utils.weight_norm`), as PyTorch's
//! `WeightNorm.cpp` writes it: `norm_except_dim` (the 2-norm over every
//! dimension but one), `_weight_norm` (CompositeImplicitAutograd:
//! `v * (g / ||v||)`, through the fused `_weight_norm_interface` along the
//! first or last dimension) and `_weight_norm_interface` itself, written
//! over other operators (its norms in float for a bfloat16 `g`).

use c10_core::{Error, Result, Scalar, ScalarType};

use crate::generated::ops;
use crate::Tensor;

/// `norm_except_dim(v, pow, dim)`: the `pow`-norm of each slice of `v`
/// along `dim`, shaped as `v` with every other dimension of size 1 (of
/// the whole tensor for `dim = -1`).
pub fn norm_except_dim(v: &Tensor, pow: i64, dim: i64) -> Result<Tensor> {
    let p = Some(Scalar::Int(pow));
    let nd = v.dim() as i64;
    if dim == -1 {
        return ops::norm_scalaropt_dim(v, p, &[]);
    }
    if dim != 0 && dim != nd - 1 {
        let moved = ops::transpose_int(v, 0, dim)?;
        return ops::transpose_int(&norm_except_dim(&moved, pow, 0)?, 0, dim);
    }
    let d = dim as usize;
    let size = v.size(dim)?;
    let mut shape = vec![1; v.dim()];
    shape[d] = size;
    let flat: [i64; 2] = if dim == 0 { [size, -1] } else { [-1, size] };
    let reduced = if dim == 0 { 1 } else { 0 };
    let rows = ops::view(&ops::contiguous(v)?, &flat)?;
    ops::view(&ops::norm_scalaropt_dim(&rows, p, &[reduced])?, &shape)
}

/// `_weight_norm(v, g, dim)`: the fused kernel along the first or last
/// dimension (not for half operands), else `v * (g / norm_except_dim(v))`.
pub fn _weight_norm(v: &Tensor, g: &Tensor, dim: i64) -> Result<Tensor> {
    if v.device() != g.device() {
        let show = |t: &Tensor| t.device().map_or("undefined".into(), |d| d.to_string());
        return Err(Error::runtime(format!(
            "weight_norm: expected v_in and g_in to be on the same device, but v_in is on {} and g_in is on {}",
            show(v),
            show(g)
        )));
    }
    let (v, g) = (ops::contiguous(v)?, ops::contiguous(g)?);
    let half = [&v, &g].iter().any(|t| t.dtype() == Some(ScalarType::Half));
    if !half && (dim == 0 || dim == v.dim() as i64 - 1) {
        return Ok(ops::_weight_norm_interface_with(
            &v,
            &g,
            ops::WeightNormInterfaceOptions { dim },
        )?
        .0);
    }
    ops::mul_tensor(&v, &ops::div_tensor(&g, &norm_except_dim(&v, 2, dim)?)?)
}

/// `_weight_norm_interface(v, g, dim)`: `(v * (g / norms), norms)` for
/// `dim` the first or last dimension, the norms shaped as `g` (in float
/// for a bfloat16 `g`).
pub fn _weight_norm_interface(v: &Tensor, g: &Tensor, dim: i64) -> Result<(Tensor, Tensor)> {
    if dim != 0 && dim != v.dim() as i64 - 1 {
        return Err(Error::runtime(
            "fused kernels can only be applied for first or last dim",
        ));
    }
    let gd = g
        .dtype()
        .ok_or_else(|| Error::runtime("Tensor is undefined"))?;
    let vd = v
        .dtype()
        .ok_or_else(|| Error::runtime("Tensor is undefined"))?;
    let nd = if gd == ScalarType::BFloat16 {
        ScalarType::Float
    } else {
        gd
    };
    let norms = norm_except_dim(&ops::to_dtype(v, nd)?, 2, dim)?;
    let norms = ops::reshape(&norms, &g.sizes())?;
    let scale = ops::div_tensor(&ops::to_dtype(g, nd)?, &norms)?;
    let shape: Vec<i64> = norms_shape(v, dim)?;
    let w = ops::mul_tensor(&ops::to_dtype(v, nd)?, &ops::reshape(&scale, &shape)?)?;
    Ok((
        ops::contiguous(&ops::to_dtype(&w, vd)?)?,
        ops::contiguous(&norms)?,
    ))
}

/// `v`'s shape with every dimension but `dim` of size 1.
fn norms_shape(v: &Tensor, dim: i64) -> Result<Vec<i64>> {
    let mut shape = vec![1; v.dim()];
    if let Some(s) = shape.get_mut(dim as usize) {
        *s = v.size(dim)?;
    }
    Ok(shape)
}
