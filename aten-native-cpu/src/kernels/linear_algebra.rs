//! Matrix products: `mm`, `bmm`, `addmm` and `dot`, checked as PyTorch
//! checks them and computed by [`crate::gemm`]. Results are contiguous.

use aten_core::tensor_iterator::convert::copy_into;
use aten_core::Tensor;
use c10_core::{
    Error, Numeric, Result, Scalar, ScalarType, StorageBorrow, TensorBase, ThreadShared,
};
use rayon::prelude::*;

use super::util::{device_of, dtype_of, is_meta, layout_of};
use crate::gemm::{dispatch_gemm, Gemm, MatMut, MatPtr};

fn same_dtype(a: &Tensor, b: &Tensor, what: &str) -> Result<ScalarType> {
    let (da, db) = (dtype_of(a)?, dtype_of(b)?);
    if da != db {
        return Err(Error::runtime(format!(
            "expected {what} to have the same dtype, but got: {} != {}",
            type_meta_name(da),
            type_meta_name(db)
        )));
    }
    Ok(da)
}

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
        let (pa, pb, pc) = (data(&la)?, data(&lb)?, data(&lc)?);
        let (sa, sb, sc) = (la.strides(), lb.strides(), lc.strides());
        let storages = [(la.storage(), false), (lb.storage(), false), (lc.storage(), true)];
        StorageBorrow::hold(storages, || {
        let threads = rayon::current_num_threads();
        let one = |b: i64, threads: usize| {
            // SAFETY: batch `b` of each operand lies inside its storage
            // (the snapshots' layouts, whose sizes were checked above);
            // `out` is fresh, so it overlaps neither input, and its batches
            // are disjoint; borrows are held.
            unsafe {
                T::gemm(
                    m as usize,
                    n as usize,
                    k as usize,
                    alpha,
                    MatPtr { ptr: (*pa.get()).wrapping_offset((b * sa[0]) as isize), rs: sa[1] as isize, cs: sa[2] as isize },
                    MatPtr { ptr: (*pb.get()).wrapping_offset((b * sb[0]) as isize), rs: sb[1] as isize, cs: sb[2] as isize },
                    beta,
                    MatMut { ptr: (*pc.get()).wrapping_offset((b * sc[0]) as isize), rs: sc[1] as isize, cs: sc[2] as isize },
                    threads,
                )
            }
        };
        let per_matrix = (m as usize).saturating_mul(n as usize).saturating_mul(k as usize);
        if batch > 1 && threads > 1 && per_matrix < 128 * 128 * 128 {
            // Small matrices: one thread per batch element.
            (0..batch).into_par_iter().for_each(|b| one(b, 1));
        } else {
            (0..batch).for_each(|b| one(b, threads));
        }
        })?;
    });
    Ok(())
}

/// A dtype as PyTorch's `TypeMeta` prints it in messages (`float`).
fn type_meta_name(d: ScalarType) -> &'static str {
    match d {
        ScalarType::Float => "float",
        ScalarType::Double => "double",
        ScalarType::Half => "c10::Half",
        ScalarType::BFloat16 => "c10::BFloat16",
        ScalarType::Long => "long int",
        ScalarType::Int => "int",
        ScalarType::Short => "short int",
        ScalarType::Char => "signed char",
        ScalarType::Byte => "unsigned char",
        ScalarType::Bool => "bool",
        _ => "unknown",
    }
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
    let base = layout
        .data_ptr()
        .ok_or_else(|| Error::runtime("tensor has no data"))?;
    StorageBorrow::hold([(layout.storage(), true)], || {
        let row = cols * width;
        for r in 1..rows {
            // SAFETY: the snapshot is a contiguous `rows x cols` matrix
            // (checked) whose storage is held exclusively; rows do not
            // overlap.
            unsafe { std::ptr::copy_nonoverlapping(base, base.add(r * row), row) };
        }
    })
}

fn check_matrix(t: &Tensor, name: &str) -> Result<()> {
    if t.dim() != 2 {
        return Err(Error::runtime(format!("{name} must be a matrix")));
    }
    Ok(())
}

/// `self @ mat2` for matrices, with `beta * input` added (`addmm`) when
/// `input` is given.
fn addmm_impl(
    input: Option<&Tensor>,
    mat1: &Tensor,
    mat2: &Tensor,
    beta: Scalar,
    alpha: Scalar,
    prefix: &str,
) -> Result<Tensor> {
    let (names, label) = if input.is_some() {
        (("mat1", "mat2"), "mat1 and mat2")
    } else {
        (("self", "mat2"), "mat1 and mat2")
    };
    check_matrix(mat1, names.0)?;
    check_matrix(mat2, names.1)?;
    let (m, k, k2, n) = (mat1.size(0)?, mat1.size(1)?, mat2.size(0)?, mat2.size(1)?);
    if k != k2 {
        return Err(Error::runtime(format!(
            "{prefix}{label} shapes cannot be multiplied ({m}x{k} and {k2}x{n})"
        )));
    }
    let dtype = same_dtype(mat1, mat2, label)?;
    if let Some(input) = input {
        let d = dtype_of(input)?;
        if d != dtype {
            return Err(Error::runtime(format!(
                "self and mat2 must have the same dtype, but got {d} and {dtype}"
            )));
        }
    }
    let out = TensorBase::empty(&[m, n], dtype, device_of(mat1))?;
    let out_t = Tensor::from(out.clone());
    let mut beta = beta;
    if let Some(input) = input {
        let expanded = aten_core::ops::expand(input, &[m, n]).map_err(|_| {
            Error::runtime(format!(
                "The size of tensor a ({}) must match the size of tensor b ({n}) at non-singleton dimension 1",
                input.sizes().last().copied().unwrap_or(1)
            ))
        })?;
        if !is_meta(mat1) && beta.to_f64() != 0.0 {
            if expanded.stride(0)? == 0 && m > 1 {
                // A bias row broadcast over the rows: convert it once, then
                // duplicate the first row.
                let first = out.as_strided(&[1, n], &[n, 1], None)?;
                copy_into(aten_core::ops::narrow(&expanded, 0, 0, 1)?.base(), &first)?;
                replicate_first_row(&out, m as usize, n as usize)?;
            } else {
                copy_into(&expanded, &out)?;
            }
        } else {
            beta = Scalar::Int(0);
        }
    } else {
        beta = Scalar::Int(0);
    }
    if is_meta(mat1) {
        return Ok(out_t);
    }
    if k == 0 {
        // An empty sum: beta * input (or zeros).
        if input.is_some() && beta.to_f64() != 0.0 {
            return aten_core::ops::mul_scalar(&out_t, beta);
        }
        return Ok(out_t);
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
    )?;
    Ok(out_t)
}

/// `mm(self, mat2)`.
pub fn mm(self_: &Tensor, mat2: &Tensor) -> Result<Tensor> {
    addmm_impl(None, self_, mat2, Scalar::Int(0), Scalar::Int(1), "mm: ")
}

/// `addmm(self, mat1, mat2, beta, alpha)`: `beta * self + alpha * mat1 @ mat2`.
pub fn addmm(
    self_: &Tensor,
    mat1: &Tensor,
    mat2: &Tensor,
    beta: Scalar,
    alpha: Scalar,
) -> Result<Tensor> {
    addmm_impl(Some(self_), mat1, mat2, beta, alpha, "")
}

/// `bmm(self, mat2)`: a batch of matrix products.
pub fn bmm(self_: &Tensor, mat2: &Tensor) -> Result<Tensor> {
    if self_.dim() != 3 {
        return Err(Error::runtime("batch1 must be a 3D tensor"));
    }
    if mat2.dim() != 3 {
        return Err(Error::runtime("batch2 must be a 3D tensor"));
    }
    let (bs, m, k) = (self_.size(0)?, self_.size(1)?, self_.size(2)?);
    let n = mat2.size(2)?;
    if mat2.size(0)? != bs || mat2.size(1)? != k {
        return Err(Error::runtime(format!(
            "Expected size for first two dimensions of batch2 tensor to be: [{bs}, {k}] but got: [{}, {}].",
            mat2.size(0)?,
            mat2.size(1)?
        )));
    }
    let dtype = same_dtype(self_, mat2, "batch1 and batch2")?;
    let out = TensorBase::empty(&[bs, m, n], dtype, device_of(self_))?;
    if !is_meta(self_) && k > 0 {
        batched_gemm(&out, self_, mat2, Scalar::Int(1), Scalar::Int(0), "bmm")?;
    }
    Ok(Tensor::from(out))
}

/// `dot(self, tensor)`: the inner product of two vectors.
pub fn dot(self_: &Tensor, tensor: &Tensor) -> Result<Tensor> {
    if self_.dim() != 1 || tensor.dim() != 1 {
        return Err(Error::runtime(format!(
            "1D tensors expected, but got {}D and {}D tensors",
            self_.dim(),
            tensor.dim()
        )));
    }
    let (da, db) = (dtype_of(self_)?, dtype_of(tensor)?);
    if da != db {
        return Err(Error::runtime(format!(
            "dot : expected both vectors to have same dtype, but found {} and {}",
            da, db
        )));
    }
    let (n, n2) = (self_.numel(), tensor.numel());
    if n != n2 {
        return Err(Error::runtime(format!(
            "inconsistent tensor size, expected tensor [{n}] and src [{n2}] to have the same number of elements, but got {n} and {n2} elements respectively"
        )));
    }
    let out = TensorBase::empty(&[], da, device_of(self_))?;
    if is_meta(self_) || n == 0 {
        return Ok(Tensor::from(out));
    }
    let a3 = self_
        .base()
        .as_strided(&[1, 1, n], &[0, 0, self_.stride(0)?], None)?;
    let b3 = tensor
        .base()
        .as_strided(&[1, n, 1], &[0, tensor.stride(0)?, 0], None)?;
    let c3 = out.as_strided(&[1, 1, 1], &[0, 0, 0], None)?;
    batched_gemm(
        &c3,
        &Tensor::from(a3),
        &Tensor::from(b3),
        Scalar::Int(1),
        Scalar::Int(0),
        "dot",
    )?;
    Ok(Tensor::from(out))
}
