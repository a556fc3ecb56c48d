//! Composite matrix products: `mv`, `matmul` (every broadcasting case,
//! folding batches into one `mm` where PyTorch does) and `linear`.

use c10_core::{Error, Result};

use crate::generated::ops;
use crate::tensor_iterator::broadcast::infer_size;
use crate::Tensor;

/// `mv(self, vec)` (CompositeExplicitAutograd).
pub fn mv(self_: &Tensor, vec: &Tensor) -> Result<Tensor> {
    if self_.dim() != 2 || vec.dim() != 1 {
        return Err(Error::runtime(format!(
            "vector + matrix @ vector expected, got {}, {}, {}",
            1,
            self_.dim(),
            vec.dim()
        )));
    }
    if self_.size(1)? != vec.size(0)? {
        return Err(Error::runtime(format!(
            "size mismatch, got input ({}), mat ({}x{}), vec ({})",
            self_.size(0)?,
            self_.size(0)?,
            self_.size(1)?,
            vec.size(0)?
        )));
    }
    ops::squeeze_dim(&ops::mm(self_, &ops::unsqueeze(vec, 1)?)?, 1)
}

/// `mT`: the last two dimensions swapped.
fn mt(t: &Tensor) -> Result<Tensor> {
    ops::transpose_int(t, -2, -1)
}

/// Whether `matmul` folds the larger operand's batch dimensions into the
/// rows of one `mm` (it does when that needs no copy).
fn should_fold(t1: &Tensor, t2: &Tensor) -> Result<bool> {
    let t1_larger = t1.dim() >= t2.dim();
    let big = if t1_larger { t1.clone() } else { mt(t2)? };
    let small_dim = if t1_larger { t2.dim() } else { t1.dim() };
    if !(big.dim() >= 3 && small_dim <= 2) {
        return Ok(false);
    }
    if t1.dim() == 2 {
        return Ok(false);
    }
    if big.numel() == 0 {
        return Ok(true);
    }
    let (shape, strides) = (big.sizes(), big.strides());
    Ok((0..big.dim() - 2).all(|i| strides[i] == strides[i + 1] * shape[i + 1]))
}

/// `matmul(self, other)` (CompositeImplicitAutograd), as PyTorch's
/// `_matmul_impl`.
pub fn matmul(t1: &Tensor, t2: &Tensor) -> Result<Tensor> {
    let (d1, d2) = (t1.dim(), t2.dim());
    if d1 == 0 || d2 == 0 {
        return Err(Error::runtime(format!(
            "both arguments to matmul need to be at least 1D, but they are {d1}D and {d2}D"
        )));
    }
    match (d1, d2) {
        (1, 1) => return ops::dot(t1, t2),
        (2, 1) => return ops::mv(t1, t2),
        (1, 2) => return ops::squeeze_dim(&ops::mm(&ops::unsqueeze(t1, 0)?, t2)?, 0),
        (2, 2) => return ops::mm(t1, t2),
        _ => {}
    }
    if should_fold(t1, t2)? {
        let transpose = d2 > d1;
        let a = if transpose { mt(t2)? } else { t1.clone() };
        let b = if !transpose {
            t2.clone()
        } else if d1 == 2 {
            ops::t(t1)?
        } else {
            t1.clone()
        };
        let sizes = a.sizes();
        let mut output_shape = sizes[..sizes.len() - 1].to_vec();
        let folded: i64 = output_shape.iter().product();
        let b_is_matrix = b.dim() == 2;
        if b_is_matrix {
            output_shape.push(b.size(1)?);
        }
        let a_folded = ops::reshape(&a, &[folded, sizes[sizes.len() - 1]])?;
        return if b_is_matrix {
            let output = ops::view(&ops::mm(&a_folded, &b)?, &output_shape)?;
            if transpose {
                ops::contiguous(&mt(&output)?)
            } else {
                Ok(output)
            }
        } else {
            ops::view(&ops::mv(&a_folded, &b)?, &output_shape)
        };
    }
    // Broadcast the batch dimensions and run one `bmm`.
    let s1 = t1.sizes();
    let s2 = t2.sizes();
    let n = if d1 > 1 { s1[d1 - 2] } else { 1 };
    let m1 = s1[d1 - 1];
    let batch1 = &s1[..d1.saturating_sub(2)];
    let m2 = if d2 > 1 { s2[d2 - 2] } else { s2[0] };
    let p = if d2 > 1 { s2[d2 - 1] } else { 1 };
    let batch2 = &s2[..d2.saturating_sub(2)];
    let mut output_shape = infer_size(batch1, batch2)?;
    let batch: i64 = output_shape.iter().product();
    let mut e1 = output_shape.clone();
    e1.extend([n, m1]);
    let a = ops::reshape(&ops::expand(t1, &e1)?, &[batch, n, m1])?;
    let vector_rhs = d2 == 1;
    let mut e2 = output_shape.clone();
    if vector_rhs {
        e2.push(m2);
    } else {
        e2.extend([m2, p]);
    }
    let b = ops::expand(t2, &e2)?;
    let b = if vector_rhs {
        ops::unsqueeze(&ops::reshape(&b, &[batch, m2])?, 2)?
    } else {
        ops::reshape(&b, &[batch, m2, p])?
    };
    if d1 > 1 {
        output_shape.push(n);
    }
    if d2 > 1 {
        output_shape.push(p);
    }
    let product = ops::bmm(&a, &b)?;
    let product = if vector_rhs {
        ops::squeeze_dim(&product, -1)?
    } else {
        product
    };
    ops::view(&product, &output_shape)
}

/// `linear(input, weight, bias)` (CompositeImplicitAutograd):
/// `input @ weight.T + bias`, one `addmm` when the input folds to a matrix.
pub fn linear(input: &Tensor, weight: &Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
    let wt = ops::t(weight)?;
    if let Some(bias) = bias {
        if input.dim() == 2 {
            return ops::addmm(bias, input, &wt);
        }
        if input.is_contiguous() && (input.dim() == 3 || bias.dim() == 1) && input.dim() >= 1 {
            let sizes = input.sizes();
            let last = sizes[sizes.len() - 1];
            let flat: i64 = sizes[..sizes.len() - 1].iter().product();
            let result = ops::addmm(bias, &ops::reshape(input, &[flat, last])?, &wt)?;
            let mut shape = sizes[..sizes.len() - 1].to_vec();
            shape.push(result.size(1)?);
            return ops::view(&result, &shape);
        }
    }
    let output = matmul(input, &wt)?;
    match bias {
        Some(bias) => ops::add_tensor_(&output, bias),
        None => Ok(output),
    }
}
