//! Pairwise distances: `_cdist_forward` (between the rows of two batched
//! matrices) and `_pdist_forward` (between the rows of one matrix), as
//! p-norms of row differences (`p = 0` counts differing elements, `p =
//! inf` takes the largest difference). `_cdist_forward` with `p = 2` and
//! `compute_mode` asking for it (or more than 25 rows by default) uses
//! PyTorch's matrix-product form, `sqrt(max(|x|^2 - 2 x.y + |y|^2, 0))`.

use aten_core::meta::{cdist_forward_meta, pdist_forward_meta};
use aten_core::Tensor;
use c10_core::{Error, Numeric, Result};

use super::util::{dtype_of, not_implemented, write_output};

/// The p-norm distance of rows `a` and `b`.
fn distance<T: Numeric>(a: &[T], b: &[T], p: f64) -> f64 {
    let diffs = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x.to_f64() - y.to_f64()).abs());
    if p == 0.0 {
        diffs.filter(|&d| d != 0.0).count() as f64
    } else if p == 1.0 {
        diffs.sum()
    } else if p == 2.0 {
        diffs.map(|d| d * d).sum::<f64>().sqrt()
    } else if p == f64::INFINITY {
        diffs.fold(0.0, f64::max)
    } else {
        diffs.map(|d| d.powf(p)).sum::<f64>().powf(1.0 / p)
    }
}

/// The Euclidean distance of rows `a` and `b` in PyTorch's matrix-product
/// form (`_euclidean_dist`).
fn euclidean_by_products<T: Numeric>(a: &[T], b: &[T]) -> f64 {
    let (mut aa, mut bb, mut ab) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (x.to_f64(), y.to_f64());
        aa += x * x;
        bb += y * y;
        ab += x * y;
    }
    (aa - 2.0 * ab + bb).max(0.0).sqrt()
}

/// `_cdist_forward(x1, x2, p, compute_mode)`: float and double.
pub fn _cdist_forward(
    x1: &Tensor,
    x2: &Tensor,
    p: f64,
    compute_mode: Option<i64>,
) -> Result<Tensor> {
    let out = cdist_forward_meta(x1, x2, p, compute_mode)?;
    if out.numel() == 0 {
        return Ok(out);
    }
    let os = out.sizes();
    let nd = os.len();
    let (r1, r2) = (os[nd - 2], os[nd - 1]);
    let c = x1.size(-1)?;
    let by_products = p == 2.0
        && match compute_mode.unwrap_or(0) {
            1 => true,
            0 => r1 > 25 || r2 > 25,
            _ => false,
        };
    // Both inputs broadcast to the output's batch dimensions.
    let expand = |x: &Tensor, rows: i64| -> Result<Tensor> {
        let mut shape = os[..nd - 2].to_vec();
        shape.extend([rows, c]);
        aten_core::ops::expand(x, &shape)
    };
    let (e1, e2) = (expand(x1, r1)?, expand(x2, r2)?);
    let (r1, r2, c) = (r1 as usize, r2 as usize, c as usize);
    let dtype = dtype_of(x1)?;
    if dtype_of(x2)? != dtype {
        return Err(Error::runtime(format!(
            "cdist: expected X1 and X2 to have the same dtype, but got {dtype} and {}",
            dtype_of(x2)?
        )));
    }
    macro_rules! run {
        ($t:ty) => {{
            let (a, b) = (e1.to_vec::<$t>()?, e2.to_vec::<$t>()?);
            let batches = a.len() / (r1 * c).max(1);
            if a.len() != batches * r1 * c || b.len() != batches * r2 * c {
                return Err(Error::runtime("cdist: an input changed while it ran"));
            }
            let mut y = Vec::with_capacity(batches * r1 * r2);
            for n in 0..batches {
                for i in 0..r1 {
                    let row = &a[(n * r1 + i) * c..][..c];
                    for j in 0..r2 {
                        let other = &b[(n * r2 + j) * c..][..c];
                        let d = if by_products {
                            euclidean_by_products(row, other)
                        } else {
                            distance(row, other, p)
                        };
                        y.push(<$t>::from_f64(d));
                    }
                }
            }
            write_output(&out, true, &y)?;
        }};
    }
    match dtype {
        c10_core::ScalarType::Float => run!(f32),
        c10_core::ScalarType::Double => run!(f64),
        other => return Err(not_implemented("cdist", other)),
    }
    Ok(out)
}

/// `_pdist_forward(self, p)`: float and double.
pub fn _pdist_forward(self_: &Tensor, p: f64) -> Result<Tensor> {
    let out = pdist_forward_meta(self_, p)?;
    if out.numel() == 0 {
        return Ok(out);
    }
    if p.is_nan() || p < 0.0 {
        return Err(Error::runtime("pdist only supports non-negative p values"));
    }
    let n = self_.size(0)? as usize;
    let c = self_.size(1)? as usize;
    let dtype = dtype_of(self_)?;
    macro_rules! run {
        ($t:ty) => {{
            let x = self_.to_vec::<$t>()?;
            if x.len() != n * c {
                return Err(Error::runtime("pdist: the input changed while it ran"));
            }
            let mut y = Vec::with_capacity(out.numel() as usize);
            for i in 0..n {
                for j in i + 1..n {
                    y.push(<$t>::from_f64(distance(
                        &x[i * c..][..c],
                        &x[j * c..][..c],
                        p,
                    )));
                }
            }
            write_output(&out, true, &y)?;
        }};
    }
    match dtype {
        c10_core::ScalarType::Float => run!(f32),
        c10_core::ScalarType::Double => run!(f64),
        other => return Err(not_implemented("pdist", other)),
    }
    Ok(out)
}
