//! Matrix products: `mm`, `bmm`, `addmm`, `baddbmm` and `dot`, checked as PyTorch
//! checks them and computed by [`crate::gemm`]. Results are contiguous.

use aten_core::parallel::parallel_for;
use aten_core::structured::MetaOutput;
use aten_core::tensor_iterator::convert::copy_into;
use aten_core::Tensor;
use c10_core::{Error, Numeric, Result, Scalar, StorageBorrow, TensorBase, ThreadShared};

use super::util::{dtype_of, layout_of, with_fresh_output};
use crate::gemm::{dispatch_gemm, Gemm, MatMut, MatPtr};

/// `out[b] = beta * out[b] + alpha * (a[b] @ m2[b])` for every batch `b`
/// of 3-d tensors (`out` fresh and contiguous, or holding `beta`'s input).
fn batched_gemm(
    out: &TensorBase,
    a: &Tensor,
    m2: &Tensor,
    alpha: Scalar,
    beta: Scalar,
    name: &str,
) -> Result<()> {
    let dtype = dtype_of(a)?;
    // One snapshot of each operand: shapes, strides and data pointers all
    // come from it, checked to agree.
    let (la, lb, lc) = (layout_of(a)?, layout_of(m2)?, layout_of(out)?);
    let (&[batch, m, k], &[_, _, n]) = (la.sizes(), lb.sizes()) else {
        return Err(Error::runtime(format!("{name}: expected 3-d operands")));
    };
    if lb.sizes() != [batch, k, n] || lc.sizes() != [batch, m, n] {
        return Err(Error::runtime(format!(
            "{name}: operand shapes changed while the operation ran"
        )));
    }
    if lc.numel() == 0 {
        return Ok(());
    }
    dispatch_gemm!(dtype, name, T => {
        let alpha = T::from_f64_or_int(alpha);
        let beta = T::from_f64_or_int(beta);
        let data = |l: &c10_core::TensorLayout| -> Result<ThreadShared<*mut T>> {
            if l.itemsize() != std::mem::size_of::<T>() {
                return Err(Error::internal("batched_gemm: dtype and layout disagree"));
            }
            l.data_ptr()
                // SAFETY: the batches' threads only read `a` and `m2` and
                // write disjoint batches of the fresh `out`, all borrowed
                // for the loop below.
                .map(|p| unsafe { ThreadShared::new(p.cast::<T>()) })
                .ok_or_else(|| Error::runtime("tensor has no data"))
        };
        let (sa, sb, sc) = (la.strides(), lb.strides(), lc.strides());
        let storages = [(la.storage(), false), (lb.storage(), false), (lc.storage(), true)];
        StorageBorrow::hold(storages, || {
        let (pa, pb, pc) = (data(&la)?, data(&lb)?, data(&lc)?);
        let threads = rayon::current_num_threads();
        // The rows of every product are the pairs (batch, row). Normally
        // each batch is one product of `m` rows; when every batch multiplies
        // the same matrix (`m2`'s batch stride 0: a weight expanded over the
        // batch, as `torch.export` lowers `x @ W` for a 3-d `x`) and the
        // batches outnumber the rows, each row index `i` is one product of
        // `batch` rows instead: `out[:, i, :] = a[:, i, :] @ m2[0]`. Every
        // output element is the same sum over `k`, but the crate packs `m2`
        // `m` times rather than `batch` times, and its micro-kernels get
        // full tiles of rows (16 products of 2 rows were 30% of the
        // attention model's time).
        let by_row = sb[0] == 0 && batch > m;
        let (outer, rows, a_outer, a_rows, c_outer, c_rows, b_outer) = if by_row {
            (m, batch, sa[1], sa[0], sc[1], sc[0], 0)
        } else {
            (batch, m, sa[0], sa[1], sc[0], sc[1], sb[0])
        };
        let one = |o: i64, threads: usize| {
            // SAFETY: product `o` of each operand (rows `rows`, its outer
            // index `o`) lies inside its storage (the snapshots' layouts,
            // whose sizes were checked above); `out` is fresh, so it
            // overlaps neither input, and distinct products write distinct
            // (batch, row) pairs of it; borrows are held.
            unsafe {
                T::gemm(
                    rows as usize,
                    n as usize,
                    k as usize,
                    alpha,
                    MatPtr { ptr: (*pa.get()).wrapping_offset((o * a_outer) as isize), rs: a_rows as isize, cs: sa[2] as isize },
                    MatPtr { ptr: (*pb.get()).wrapping_offset((o * b_outer) as isize), rs: sb[1] as isize, cs: sb[2] as isize },
                    beta,
                    MatMut { ptr: (*pc.get()).wrapping_offset((o * c_outer) as isize), rs: c_rows as isize, cs: sc[2] as isize },
                    threads,
                )
            }
        };
        let per_matrix = (rows as usize).saturating_mul(n as usize).saturating_mul(k as usize);
        if outer > 1 && threads > 1 && per_matrix < 128 * 128 * 128 {
            // Small matrices: one thread per product.
            parallel_for(0, outer, 1, |o0, o1| (o0..o1).for_each(|o| one(o, 1)));
        } else {
            (0..outer).for_each(|o| one(o, threads));
        }
        Ok::<_, Error>(())
        })??;
    });
    Ok(())
}

trait FromScalar: Numeric {
    fn from_f64_or_int(s: Scalar) -> Self {
        if Self::IS_FLOAT {
            Self::from_f64(s.to_f64())
        } else {
            Self::from_i64(s.to_i64())
        }
    }
}

impl<T: Numeric> FromScalar for T {}

/// Copies row 0 of the fresh contiguous `rows x cols` matrix `out` into
/// its other rows.
fn replicate_first_row(out: &TensorBase, rows: usize, cols: usize) -> Result<()> {
    let layout = layout_of(out)?;
    let width = layout.itemsize();
    if !layout.is_contiguous() || layout.numel() as usize != rows * cols {
        return Err(Error::internal("replicate_first_row: not a fresh matrix"));
    }
    StorageBorrow::hold([(layout.storage(), true)], || {
        let base = layout
            .data_ptr()
            .ok_or_else(|| Error::runtime("tensor has no data"))?;
        let row = cols * width;
        for r in 1..rows {
            // SAFETY: the snapshot is a contiguous `rows x cols` matrix
            // (checked) whose storage is held exclusively; rows do not
            // overlap.
            unsafe { std::ptr::copy_nonoverlapping(base, base.add(r * row), row) };
        }
        Ok(())
    })?
}

/// `beta * input + alpha * (mat1 @ mat2)` (no `input`: `mat1 @ mat2`) into
/// the fresh contiguous matrix `out`.
fn addmm_into(
    out: &TensorBase,
    input: Option<&Tensor>,
    mat1: &Tensor,
    mat2: &Tensor,
    beta: Scalar,
    alpha: Scalar,
) -> Result<()> {
    let (m, k, n) = (mat1.size(0)?, mat1.size(1)?, mat2.size(1)?);
    let mut beta = beta;
    match input {
        Some(input) if beta.to_f64() != 0.0 => {
            let expanded = aten_core::ops::expand(input, &[m, n])?;
            if expanded.stride(0)? == 0 && m > 1 {
                // A bias row broadcast over the rows: convert it once, then
                // duplicate the first row.
                let first = out.as_strided(&[1, n], &[n, 1], None)?;
                copy_into(aten_core::ops::narrow(&expanded, 0, 0, 1)?.base(), &first)?;
                replicate_first_row(out, m as usize, n as usize)?;
            } else {
                copy_into(&expanded, out)?;
            }
        }
        _ => beta = Scalar::Int(0),
    }
    if k == 0 {
        // An empty sum: beta * input (or zeros).
        if beta.to_f64() != 0.0 {
            let scaled = aten_core::ops::mul_scalar(&Tensor::from(out.clone()), beta)?;
            return copy_into(&scaled, out);
        }
        return aten_core::ops::zero_(&Tensor::from(out.clone())).map(drop);
    }
    let a3 = mat1
        .base()
        .as_strided(&[1, m, k], &[0, mat1.stride(0)?, mat1.stride(1)?], None)?;
    let b3 = mat2
        .base()
        .as_strided(&[1, k, n], &[0, mat2.stride(0)?, mat2.stride(1)?], None)?;
    let c3 = out.as_strided(&[1, m, n], &[0, n, 1], None)?;
    batched_gemm(
        &c3,
        &Tensor::from(a3),
        &Tensor::from(b3),
        alpha,
        beta,
        "addmm_impl_cpu_",
    )
}

/// `mm.out`: `self @ mat2`.
pub fn mm_out(meta: &mut MetaOutput, self_: &Tensor, mat2: &Tensor) -> Result<()> {
    with_fresh_output(meta, |out| {
        addmm_into(out, None, self_, mat2, Scalar::Int(0), Scalar::Int(1))
    })
}

/// `addmm.out`: `beta * self + alpha * (mat1 @ mat2)`.
pub fn addmm_out(
    meta: &mut MetaOutput,
    self_: &Tensor,
    mat1: &Tensor,
    mat2: &Tensor,
    beta: Scalar,
    alpha: Scalar,
) -> Result<()> {
    with_fresh_output(meta, |out| {
        addmm_into(out, Some(self_), mat1, mat2, beta, alpha)
    })
}

/// `bmm.out`: a batch of matrix products.
pub fn bmm_out(meta: &mut MetaOutput, self_: &Tensor, mat2: &Tensor) -> Result<()> {
    with_fresh_output(meta, |out| {
        if self_.size(2)? == 0 {
            return aten_core::ops::zero_(&Tensor::from(out.clone())).map(drop);
        }
        batched_gemm(out, self_, mat2, Scalar::Int(1), Scalar::Int(0), "bmm")
    })
}

/// `baddbmm.out`: `beta * self + alpha * (batch1 @ batch2)`, `self`
/// unread when `beta` is zero.
pub fn baddbmm_out(
    meta: &mut MetaOutput,
    self_: &Tensor,
    batch1: &Tensor,
    batch2: &Tensor,
    beta: Scalar,
    alpha: Scalar,
) -> Result<()> {
    with_fresh_output(meta, |out| {
        let beta = if beta.to_f64() == 0.0 {
            Scalar::Int(0)
        } else {
            copy_into(aten_core::ops::expand(self_, &out.sizes())?.base(), out)?;
            beta
        };
        if batch1.size(2)? == 0 {
            // An empty sum: beta * self (or zeros).
            let t = Tensor::from(out.clone());
            return match beta {
                Scalar::Int(0) => aten_core::ops::zero_(&t).map(drop),
                _ => copy_into(aten_core::ops::mul_scalar(&t, beta)?.base(), out),
            };
        }
        batched_gemm(out, batch1, batch2, alpha, beta, "baddbmm")
    })
}

/// `dot(self, tensor)`: the inner product of two vectors.
pub fn dot(self_: &Tensor, tensor: &Tensor) -> Result<Tensor> {
    let out = aten_core::meta::dot_meta(self_, tensor)?;
    let n = self_.numel();
    if n == 0 || n != tensor.numel() {
        return Ok(out);
    }
    let a3 = self_
        .base()
        .as_strided(&[1, 1, n], &[0, 0, self_.stride(0)?], None)?;
    let b3 = tensor
        .base()
        .as_strided(&[1, n, 1], &[0, tensor.stride(0)?, 0], None)?;
    let c3 = out.base().as_strided(&[1, 1, 1], &[0, 0, 0], None)?;
    batched_gemm(
        &c3,
        &Tensor::from(a3),
        &Tensor::from(b3),
        Scalar::Int(1),
        Scalar::Int(0),
        "dot",
    )?;
    Ok(out)
}
