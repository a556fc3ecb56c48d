//! General matrix multiplication on strided matrices:
//! `C = beta * C + alpha * (A @ B)` (`cpublas::gemm`).
//!
//! float32, float64 and float16 run on the `gemm` crate (packed,
//! cache-blocked micro-kernels with runtime AVX2/AVX-512/NEON selection,
//! parallel on `rayon`'s pool). It was chosen by measuring it against
//! libtorch (MKL) and `matrixmultiply` on this project's machine kind: at
//! 1024x1024 float32 it ran at 100 GFLOP/s on one thread and 205 on two,
//! `matrixmultiply` at 101 and 186, libtorch at 71 and 132
//! (`../shared/perf/RESULTS.md`); it also serves float16 natively.
//! bfloat16 and the integer types use a plain loop nest with a wide
//! accumulator (integers wrap, as PyTorch's do).

use c10_core::half::{bf16, f16};
use c10_core::Numeric;

/// Runs `$body` with `$T` bound to an element type with a [`Gemm`]: the
/// integer types (bool excepted) and, through
/// [`dispatch_floating`](crate::dispatch_floating), the floating ones; other
/// dtypes fail with `"$name" not implemented for 'Dtype'`.
macro_rules! dispatch_gemm {
    ($dtype:expr, $name:expr, $T:ident => $body:expr) => {
        match $dtype {
            c10_core::ScalarType::Long => {
                type $T = i64;
                $body
            }
            c10_core::ScalarType::Int => {
                type $T = i32;
                $body
            }
            c10_core::ScalarType::Short => {
                type $T = i16;
                $body
            }
            c10_core::ScalarType::Char => {
                type $T = i8;
                $body
            }
            c10_core::ScalarType::Byte => {
                type $T = u8;
                $body
            }
            other => $crate::dispatch_floating!(other, $name, $T => Ok::<_, c10_core::Error>($body))?,
        }
    };
}
pub(crate) use dispatch_gemm;

/// A matrix operand: its first element and its row and column strides, in
/// elements.
#[derive(Copy, Clone, Debug)]
pub struct MatPtr<T> {
    /// The element at (0, 0).
    pub ptr: *const T,
    /// Distance between rows.
    pub rs: isize,
    /// Distance between columns.
    pub cs: isize,
}

/// The output matrix.
#[derive(Copy, Clone, Debug)]
pub struct MatMut<T> {
    /// The element at (0, 0).
    pub ptr: *mut T,
    /// Distance between rows.
    pub rs: isize,
    /// Distance between columns.
    pub cs: isize,
}

/// Products below this many multiply-adds run on one thread: splitting
/// them costs more than it gains.
const PARALLEL_MIN_FLOPS: usize = 64 * 64 * 64;

/// Element types with a GEMM.
pub trait Gemm: Numeric + Send + Sync {
    /// `C = beta * C + alpha * (A @ B)` for an `m` x `k` `A` and a `k` x
    /// `n` `B`; with `beta == 0` the old `C` is not read (NaNs in it do
    /// not propagate, as in BLAS).
    ///
    /// # Safety
    ///
    /// Every element the sizes and strides reach must be valid: `A` and
    /// `B` readable, `C` writable and not overlapping `A` or `B`, and no
    /// two elements of `C` at the same address.
    #[allow(clippy::too_many_arguments)]
    unsafe fn gemm(
        m: usize,
        n: usize,
        k: usize,
        alpha: Self,
        a: MatPtr<Self>,
        b: MatPtr<Self>,
        beta: Self,
        c: MatMut<Self>,
        threads: usize,
    );
}

fn parallelism(m: usize, n: usize, k: usize, threads: usize) -> gemm::Parallelism {
    if threads > 1 && m.saturating_mul(n).saturating_mul(k) >= PARALLEL_MIN_FLOPS {
        gemm::Parallelism::Rayon(threads)
    } else {
        gemm::Parallelism::None
    }
}

/// How many column blocks to split a product into, one per thread; `None`
/// to let the crate thread it (products with few columns). Measured on
/// this project's machine kind at 2 threads, blocks of columns beat the
/// crate's own threading for 64x256x784 (190 vs 287 us), 256^3 (211 vs
/// 244 us) and 512^3 (1.21 vs 1.38 ms), and tie at 1024^3 and 2048^3.
fn column_split(m: usize, n: usize, k: usize, threads: usize) -> Option<usize> {
    let big_enough = m.saturating_mul(n).saturating_mul(k) >= PARALLEL_MIN_FLOPS;
    (threads > 1 && big_enough && n >= 64 * threads).then_some(threads)
}

/// Operands shared by the column blocks' threads.
struct SyncMat<T>(MatPtr<T>);
struct SyncMatMut<T>(MatMut<T>);
// SAFETY: the blocks only read `A` and `B` and write disjoint column
// blocks of `C`, all valid for the duration of the scope (the caller's
// contract).
unsafe impl<T> Sync for SyncMat<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for SyncMatMut<T> {}

macro_rules! crate_gemm {
    ($($t:ty),*) => {$(
        impl Gemm for $t {
            unsafe fn gemm(
                m: usize,
                n: usize,
                k: usize,
                alpha: Self,
                a: MatPtr<Self>,
                b: MatPtr<Self>,
                beta: Self,
                c: MatMut<Self>,
                threads: usize,
            ) {
                let zero = <$t>::from_f64(0.0);
                if let Some(parts) = column_split(m, n, k, threads) {
                    // Each thread takes a block of columns.
                    let chunk = n.div_ceil(parts);
                    let parts = n.div_ceil(chunk);
                    let (a, b, c) = (SyncMat(a), SyncMat(b), SyncMatMut(c));
                    rayon::scope(|s| {
                        for p in 0..parts {
                            let (a, b, c) = (&a, &b, &c);
                            s.spawn(move |_| {
                                let j0 = p * chunk;
                                let cols = chunk.min(n.saturating_sub(j0));
                                if cols == 0 {
                                    return;
                                }
                                let b = MatPtr { ptr: b.0.ptr.wrapping_offset(j0 as isize * b.0.cs), ..b.0 };
                                let c = MatMut { ptr: c.0.ptr.wrapping_offset(j0 as isize * c.0.cs), ..c.0 };
                                // SAFETY: a block of the caller's columns:
                                // inside the operands, disjoint from the
                                // other blocks' output.
                                unsafe { <$t>::gemm(m, cols, k, alpha, a.0, b, beta, c, 1) };
                            });
                        }
                    });
                    return;
                }
                // SAFETY: the caller guarantees the operands (see the
                // trait). The crate computes
                // `dst = alpha' * dst + beta' * lhs @ rhs`, reading `dst`
                // only when asked to.
                unsafe {
                    gemm::gemm(
                        m, n, k,
                        c.ptr, c.cs, c.rs,
                        beta != zero,
                        a.ptr, a.cs, a.rs,
                        b.ptr, b.cs, b.rs,
                        beta, alpha,
                        false, false, false,
                        parallelism(m, n, k, threads),
                    );
                }
            }
        }
    )*};
}

crate_gemm!(f32, f64, f16);

/// The loop nest for types the crate does not serve: `i, p, j` order so
/// the innermost loop walks rows of `B` and `C`, accumulating each `C` row
/// in a wide buffer.
///
/// # Safety
///
/// As [`Gemm::gemm`].
#[allow(clippy::too_many_arguments)]
unsafe fn naive_gemm<T: Numeric, A: Copy + Default>(
    m: usize,
    n: usize,
    k: usize,
    alpha: T,
    a: MatPtr<T>,
    b: MatPtr<T>,
    beta: T,
    c: MatMut<T>,
    widen: impl Fn(T) -> A,
    mul_add: impl Fn(A, A, A) -> A,
    mul: impl Fn(A, A) -> A,
    add: impl Fn(A, A) -> A,
    narrow: impl Fn(A) -> T,
) {
    let zero = T::from_f64(0.0);
    let (wa, wb) = (widen(alpha), widen(beta));
    let mut row = vec![A::default(); n];
    for i in 0..m {
        row.iter_mut().for_each(|x| *x = A::default());
        for p in 0..k {
            // SAFETY: `i < m`, `p < k`, `j < n`: inside the operands.
            let av = widen(unsafe { *a.ptr.offset(i as isize * a.rs + p as isize * a.cs) });
            for (j, acc) in row.iter_mut().enumerate() {
                // SAFETY: `p < k`, `j < n`: inside `B`.
                let bv = widen(unsafe { *b.ptr.offset(p as isize * b.rs + j as isize * b.cs) });
                *acc = mul_add(av, bv, *acc);
            }
        }
        for (j, acc) in row.iter().enumerate() {
            let dst = c.ptr.wrapping_offset(i as isize * c.rs + j as isize * c.cs);
            let product = mul(wa, *acc);
            let value = if beta == zero {
                product
            } else {
                // SAFETY: `i < m`, `j < n`: inside `C`, which the caller
                // lets us read and write.
                add(mul(wb, widen(unsafe { *dst })), product)
            };
            // SAFETY: as above.
            unsafe { *dst = narrow(value) };
        }
    }
}

impl Gemm for bf16 {
    unsafe fn gemm(
        m: usize,
        n: usize,
        k: usize,
        alpha: Self,
        a: MatPtr<Self>,
        b: MatPtr<Self>,
        beta: Self,
        c: MatMut<Self>,
        _threads: usize,
    ) {
        // SAFETY: forwarded from the caller.
        unsafe {
            naive_gemm(
                m,
                n,
                k,
                alpha,
                a,
                b,
                beta,
                c,
                |x: bf16| x.to_f32(),
                |x, y, acc| x.mul_add(y, acc),
                |x, y| x * y,
                |x, y| x + y,
                bf16::from_f32,
            )
        }
    }
}

macro_rules! int_gemm {
    ($($t:ty),*) => {$(
        impl Gemm for $t {
            unsafe fn gemm(
                m: usize,
                n: usize,
                k: usize,
                alpha: Self,
                a: MatPtr<Self>,
                b: MatPtr<Self>,
                beta: Self,
                c: MatMut<Self>,
                _threads: usize,
            ) {
                // SAFETY: forwarded from the caller.
                unsafe {
                    naive_gemm(
                        m, n, k, alpha, a, b, beta, c,
                        |x: $t| x,
                        |x: $t, y: $t, acc: $t| acc.wrapping_add(x.wrapping_mul(y)),
                        |x: $t, y: $t| x.wrapping_mul(y),
                        |x: $t, y: $t| x.wrapping_add(y),
                        |x| x,
                    )
                }
            }
        }
    )*};
}

int_gemm!(u8, i8, i16, i32, i64);

#[cfg(test)]
mod tests {
    use super::*;

    fn check<T: Gemm + std::fmt::Debug>() {
        // A = [[1, 2, 3], [4, 5, 6]] row-major; B = A^T read through
        // strides (column-major view of A); C starts at 1.
        let a: Vec<T> = (1..=6).map(|v| T::from_i64(v)).collect();
        let mut c: Vec<T> = vec![T::from_i64(1); 4];
        let ap = MatPtr {
            ptr: a.as_ptr(),
            rs: 3,
            cs: 1,
        };
        let bp = MatPtr {
            ptr: a.as_ptr(),
            rs: 1,
            cs: 3,
        };
        let cp = MatMut {
            ptr: c.as_mut_ptr(),
            rs: 2,
            cs: 1,
        };
        // SAFETY: the strides stay inside the vectors; `c` is separate.
        unsafe { T::gemm(2, 2, 3, T::from_i64(2), ap, bp, T::from_i64(3), cp, 2) };
        let got: Vec<i64> = c.iter().map(|v| v.to_i64()).collect();
        // A A^T = [[14, 32], [32, 77]]; 2 * that + 3.
        assert_eq!(got, vec![31, 67, 67, 157]);
    }

    #[test]
    fn every_type_multiplies_strided_operands() {
        check::<f32>();
        check::<f64>();
        check::<f16>();
        check::<bf16>();
        check::<i64>();
        check::<i32>();
        check::<i16>();
        check::<u8>();
    }

    #[test]
    fn large_products_match_a_reference() {
        let (m, n, k) = (97, 131, 70);
        let a: Vec<f64> = (0..m * k).map(|i| ((i * 7) % 11) as f64 - 5.0).collect();
        let b: Vec<f64> = (0..k * n).map(|i| ((i * 3) % 13) as f64 - 6.0).collect();
        let mut c = vec![f64::NAN; m * n];
        let ap = MatPtr {
            ptr: a.as_ptr(),
            rs: k as isize,
            cs: 1,
        };
        let bp = MatPtr {
            ptr: b.as_ptr(),
            rs: n as isize,
            cs: 1,
        };
        let cp = MatMut {
            ptr: c.as_mut_ptr(),
            rs: n as isize,
            cs: 1,
        };
        // SAFETY: sizes match the vectors; beta 0 ignores the NaNs.
        unsafe { f64::gemm(m, n, k, 1.0, ap, bp, 0.0, cp, 2) };
        for i in 0..m {
            for j in 0..n {
                let want: f64 = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
                assert_eq!(c[i * n + j], want);
            }
        }
    }
}
