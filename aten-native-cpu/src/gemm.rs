//! General matrix multiplication on strided matrices:
//! `C = beta * C + alpha * (A @ B)` (`cpublas::gemm`).
//!
//! float32, float64 and float16 run on the `gemm` crate (packed,
//! cache-blocked micro-kernels with runtime AVX2/AVX-512/NEON selection,
//! parallel on `rayon`'s pool). It was chosen by measuring it against
//! libtorch (MKL) and `matrixmultiply` (the `kernels/mm_f32` benchmark in
//! `benches/benches/kernels.rs` records the figures); it also serves
//! float16 natively. bfloat16 and the integer types use a plain loop nest with a wide
//! accumulator (integers wrap, as PyTorch's do).
//!
//! Two choices around the crate are ours: a row-major product whose `B`
//! is column-major (`linear`'s `x @ W^T`) runs on a column-major scratch
//! and is copied out, so the crate's packing gathers the small `A` instead
//! of all of `B` (`column_major_scratch_is_cheaper`); and products on
//! several threads are split into blocks of rows or columns, one per
//! thread (`split`).

use aten_core::parallel::parallel_for;
use c10_core::half::{bf16, f16};
use c10_core::{Numeric, ThreadShared};

/// Runs `$body` with `$T` bound to an element type with a [`Gemm`] (the
/// `numeric:` family of `dispatch_dtype!`: integers but bool, and the
/// floating types); other dtypes return `"$name" not implemented for
/// 'Dtype'` from the enclosing function.
macro_rules! dispatch_gemm {
    ($dtype:expr, $name:expr, $T:ident => $body:expr) => {
        c10_core::dispatch_dtype!(numeric: $dtype, $T => $body,
            _ => return Err($crate::kernels::util::not_implemented($name, $dtype)))
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

impl<T> MatPtr<T> {
    /// The matrix from element (`row`, `col`) on (the address is computed
    /// with wrapping arithmetic; using it is the caller's contract).
    fn offset(self, row: isize, col: isize) -> Self {
        MatPtr {
            ptr: self.ptr.wrapping_offset(row * self.rs + col * self.cs),
            ..self
        }
    }
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

impl<T> MatMut<T> {
    /// As [`MatPtr::offset`].
    fn offset(self, row: isize, col: isize) -> Self {
        MatMut {
            ptr: self.ptr.wrapping_offset(row * self.rs + col * self.cs),
            ..self
        }
    }
}

/// Products below this many multiply-adds run on one thread: splitting
/// them costs more than it gains.
const PARALLEL_MIN_FLOPS: usize = 64 * 64 * 64;

/// Element types with a GEMM.
pub trait Gemm: Numeric + Send + Sync {
    /// Whether products are summed in a wider type than `Self` and
    /// rounded once, at the end (f16 and bf16 sum in f32, as oneDNN and
    /// PyTorch's CPU kernels do): one sum split over several calls would
    /// round at each, and differ from PyTorch's.
    const SUMS_WIDER: bool = false;

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

/// Which dimension of `C` a product is split along over threads.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Split {
    /// Blocks of rows: each thread reads its rows of `A` and all of `B`.
    Rows,
    /// Blocks of columns: each thread reads all of `A` and its columns of
    /// `B`.
    Columns,
}

/// How to split a product into blocks, one per thread; `None` to let the
/// crate thread it (products with few columns). Measured on this project's
/// machine kind at 2 threads, blocks of columns beat the crate's own
/// threading for 64x256x784 (190 vs 287 us), 256^3 (211 vs 244 us) and
/// 512^3 (1.21 vs 1.38 ms), and tie at 1024^3 and 2048^3. A product that
/// goes through the column-major scratch
/// ([`column_major_scratch_is_cheaper`]) splits its rows instead, so each
/// thread gathers only its own rows of `A`: 126 against 140 us for
/// 64x256x784 (`linear`'s `x @ W^T`). So does a product too narrow for
/// column blocks (a convolution of a few output positions, whose weight
/// `A` is the bulk of what it reads): each thread reads half of `A`.
fn split(
    m: usize,
    n: usize,
    k: usize,
    threads: usize,
    via_scratch: bool,
) -> Option<(Split, usize)> {
    let big_enough = m.saturating_mul(n).saturating_mul(k) >= PARALLEL_MIN_FLOPS;
    if threads < 2 || !big_enough {
        return None;
    }
    let wide = n >= 64 * threads;
    if (via_scratch || !wide) && m >= SPLIT_MIN_ROWS * threads {
        return Some((Split::Rows, threads));
    }
    wide.then_some((Split::Columns, threads))
}

/// The fewest rows a thread's block of a row split gets: the crate's
/// `float32` micro-kernel computes 16 rows at once.
const SPLIT_MIN_ROWS: usize = 16;

/// The sizes of a product: `C` (`m` x `n`) from `A` (`m` x `k`) and `B`
/// (`k` x `n`).
#[derive(Copy, Clone)]
struct GemmDims {
    m: usize,
    n: usize,
    k: usize,
}

/// [`crate_gemm`] split into `parts` blocks of rows or columns (`axis`),
/// each a product of its own run in a parallel region.
///
/// # Safety
///
/// [`Gemm::gemm`]'s contract.
#[allow(clippy::too_many_arguments)]
unsafe fn gemm_blocks<T>(
    dims: GemmDims,
    axis: Split,
    parts: usize,
    alpha: T,
    a: MatPtr<T>,
    b: MatPtr<T>,
    beta: T,
    c: MatMut<T>,
) where
    T: Gemm + Copy + 'static,
{
    let GemmDims { m, n, k } = dims;
    let len = if axis == Split::Rows { m } else { n };
    let chunk = len.div_ceil(parts);
    let parts = len.div_ceil(chunk);
    // SAFETY: the blocks only read `A` and `B` and write disjoint
    // blocks of `C`, all valid for the duration of the region (the
    // caller's contract).
    let (a, b, c) = unsafe {
        (
            ThreadShared::new(a),
            ThreadShared::new(b),
            ThreadShared::new(c),
        )
    };
    parallel_for(0, parts as i64, 1, |p0, p1| {
        for p in p0 as usize..p1 as usize {
            let start = p * chunk;
            let size = chunk.min(len.saturating_sub(start));
            if size == 0 {
                break;
            }
            let (a, b, c) = (*a.get(), *b.get(), *c.get());
            let at = start as isize;
            // The block's rows of `A` and `C`, or its columns of `B`
            // and `C`.
            let (a, b, c, rows, cols) = match axis {
                Split::Rows => (a.offset(at, 0), b, c.offset(at, 0), size, n),
                Split::Columns => (a, b.offset(0, at), c.offset(0, at), m, size),
            };
            // SAFETY: a block of the caller's rows or columns: inside
            // the operands, disjoint from the other blocks'.
            unsafe { T::gemm(rows, cols, k, alpha, a, b, beta, c, 1) };
        }
    });
}

/// [`Gemm`] on the `gemm` crate: split over threads by rows or columns
/// when that pays (`split`), through a column-major scratch when that
/// gathers less (`column_major_scratch_is_cheaper`), else straight into `c`.
/// `blocks_read_in_place`: each block of a split runs a kernel that reads
/// its operands where they are, not through the scratch, so the split
/// ignores the scratch's preference for rows.
///
/// # Safety
///
/// [`Gemm::gemm`]'s contract.
#[allow(clippy::too_many_arguments)]
unsafe fn crate_gemm<T>(
    m: usize,
    n: usize,
    k: usize,
    alpha: T,
    a: MatPtr<T>,
    b: MatPtr<T>,
    beta: T,
    c: MatMut<T>,
    threads: usize,
    blocks_read_in_place: bool,
) where
    T: Gemm + Copy + 'static + std::ops::Mul<Output = T> + std::ops::Add<Output = T>,
{
    let zero = T::from_f64(0.0);
    if alpha == zero {
        // SAFETY: the caller's `C` (see the trait).
        unsafe { scale_only(m, n, beta, c) };
        return;
    }
    let reads_c = beta != zero;
    let via_scratch = column_major_scratch_is_cheaper(m, n, k, a, b, c);
    if let Some((axis, parts)) = split(m, n, k, threads, via_scratch && !blocks_read_in_place) {
        let dims = GemmDims { m, n, k };
        // SAFETY: the caller's contract, passed on.
        unsafe { gemm_blocks(dims, axis, parts, alpha, a, b, beta, c) };
        return;
    }
    // `C = beta * C + alpha * (A @ B)` into `c`, reading the old `c` when
    // `read` says so.
    let run = |c: MatMut<T>, read: bool| {
        // SAFETY: the caller guarantees the operands (see the trait); `c` is
        // theirs or a scratch of the same shape. The crate computes
        // `dst = alpha' * dst + beta' * lhs @ rhs`, reading `dst` only when
        // asked to.
        unsafe {
            gemm::gemm(
                m,
                n,
                k,
                c.ptr,
                c.cs,
                c.rs,
                read,
                a.ptr,
                a.cs,
                a.rs,
                b.ptr,
                b.cs,
                b.rs,
                beta,
                alpha,
                false,
                false,
                false,
                parallelism(m, n, k, threads),
            );
        }
    };
    if !via_scratch {
        run(c, reads_c);
        return;
    }
    // The scratch holds `alpha * (A @ B)`; `beta * C` joins it on the way
    // out.
    let product = |scratch| run(scratch, false);
    if reads_c {
        // SAFETY: the caller's `C` (see the trait).
        unsafe { via_column_major_scratch(m, n, c, zero, product, |p, d| beta * d + p) };
    } else {
        // SAFETY: as above.
        unsafe { via_column_major_scratch(m, n, c, zero, product, |p, _| p) };
    }
}

/// `C = beta * C` (zeros when `beta` is 0, whatever `C` held): a product
/// with `alpha == 0`, which, as in BLAS, reads neither factor (an infinity
/// there must not turn `C` into NaN).
///
/// # Safety
///
/// `c` as in [`Gemm::gemm`]'s contract.
unsafe fn scale_only<T>(m: usize, n: usize, beta: T, c: MatMut<T>)
where
    T: Gemm + Copy + std::ops::Mul<Output = T>,
{
    let zero = T::from_f64(0.0);
    for i in 0..m {
        for j in 0..n {
            let at = c.ptr.wrapping_offset(i as isize * c.rs + j as isize * c.cs);
            // SAFETY: element (i, j) of the caller's `C`, valid for
            // reads and writes.
            unsafe { *at = if beta == zero { zero } else { beta * *at } };
        }
    }
}

impl Gemm for f32 {
    /// On AVX-512 processors, a product that runs on one thread is
    /// computed by `avx512_f32` in place when `B` and `C` rows are
    /// contiguous (`b.cs == 1`, `c.cs == 1`: row-major operands, a
    /// convolution's columns and output), or by its dot products when
    /// `A`'s rows and `B`'s columns are (`x @ w.t()`); split over threads,
    /// each block is. Everything else goes to the crate.
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
        // A dot-product block reads all of `A` and its own columns of `B`
        // (`linear`'s weight): split by columns, each thread reads half of
        // the weight once, and in a training step the half its own
        // `sub_` just wrote, still in its L2. Split by rows (the
        // scratch's preference), each thread read all of the weight, half
        // of it from the other core: 2x the dot products' time there.
        let dot = avx512_f32::dot_applies(k, alpha, a, b);
        let via_scratch = !dot && column_major_scratch_is_cheaper(m, n, k, a, b, c);
        let serial = threads <= 1 || split(m, n, k, threads, via_scratch).is_none();
        if serial {
            // SAFETY: the caller's contract, passed on.
            let done = unsafe {
                avx512_f32::try_gemm(m, n, k, alpha, a, b, beta, c)
                    || avx512_f32::try_dot(m, n, k, alpha, a, b, beta, c)
            };
            if done {
                return;
            }
        }
        // SAFETY: the caller's contract, passed on; a split calls back
        // here with one thread per block.
        unsafe { crate_gemm(m, n, k, alpha, a, b, beta, c, threads, dot) }
    }
}

/// A float32 product `C = beta * C + alpha * (A @ B)` on AVX-512 for `B`
/// and `C` whose rows are contiguous (row-major operands of `mm`, `bmm`
/// and `addmm`, a convolution's columns and output), read and written in
/// place.
///
/// The `gemm` crate computes a row-major `C` as `C^T = B^T @ A^T` and so
/// packs all of `B` (a convolution's im2col columns: the largest operand)
/// before multiplying, and its micro-kernels are AVX2 ones on stable Rust.
/// Here a tile of `C` (`ROWS` rows by `COLS` columns) stays in 24 vector
/// registers while `k` steps each load `COLS` contiguous elements of a row
/// of `B` and broadcast one element of `A` per row: no packing, and twice
/// the crate's lanes per instruction. Within a depth block the sums run
/// over `k` in order, one fused multiply-add per step, as the crate's do.
/// Measured on the CNN model (16 and 32 output channels, `k` of 27 to
/// 288), the convolutions' products took less than half the crate's time;
/// on square `mm` from 256 to 2048 the kernel ran 1.6 to 1.9 times the
/// crate's GFLOP/s (`kernels/mm_f32/*`, one and two threads).
#[cfg(target_arch = "x86_64")]
mod avx512_f32 {
    use std::arch::x86_64::*;

    use super::{MatMut, MatPtr};

    /// Computes the product here when it qualifies (`b.cs == 1`,
    /// `c.cs == 1`, `alpha != 0`, AVX-512F present); returns whether it
    /// did.
    ///
    /// # Safety
    ///
    /// [`super::Gemm::gemm`]'s contract.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn try_gemm(
        m: usize,
        n: usize,
        k: usize,
        alpha: f32,
        a: MatPtr<f32>,
        b: MatPtr<f32>,
        beta: f32,
        c: MatMut<f32>,
    ) -> bool {
        // `alpha == 0` reads neither factor (`crate_gemm` scales `C`).
        if b.cs != 1 || c.cs != 1 || alpha == 0.0 || !available() {
            return false;
        }
        // Deep products run in depth blocks of at most `MAX_DEPTH`, each
        // adding its partial product into `C` (the first one applies the
        // caller's `beta`), so a tile's block of `B` stays in cache. One
        // block runs even for `k == 0`, which scales `C` by `beta`.
        let (mut p, mut beta) = (0, beta);
        loop {
            let depth = MAX_DEPTH.min(k - p);
            // SAFETY: the caller's contract, with the unit column strides
            // and AVX-512F just checked; columns `p .. p + depth` of `A`
            // and rows `p .. p + depth` of `B` lie inside them.
            unsafe {
                gemm(
                    m,
                    n,
                    depth,
                    alpha,
                    a.offset(0, p as isize),
                    b.offset(p as isize, 0),
                    beta,
                    c,
                )
            };
            p += depth;
            if p >= k {
                return true;
            }
            beta = 1.0;
        }
    }

    /// Rows of `C` per tile.
    const ROWS: usize = 8;
    /// 16-lane vectors per tile row.
    const VECS: usize = 3;
    /// Columns of `C` per tile.
    const COLS: usize = 16 * VECS;
    /// The deepest block computed in one pass: a tile's `k x COLS` block
    /// of `B` (192 KiB at this depth) is read once per `ROWS` rows of `C`,
    /// so it must stay in the core's cache; deeper products run in blocks
    /// of this depth.
    const MAX_DEPTH: usize = 1024;

    /// Whether the processor has AVX-512F (`std` caches the detection).
    fn available() -> bool {
        std::is_x86_feature_detected!("avx512f")
    }

    /// `C = beta * C + alpha * (A @ B)`, tile by tile (`C`'s old values
    /// are not read when `beta` is 0).
    ///
    /// # Safety
    ///
    /// [`super::Gemm::gemm`]'s contract, with `b.cs == 1` and `c.cs == 1`,
    /// on a processor with AVX-512F.
    #[target_feature(enable = "avx512f")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn gemm(
        m: usize,
        n: usize,
        k: usize,
        alpha: f32,
        a: MatPtr<f32>,
        b: MatPtr<f32>,
        beta: f32,
        c: MatMut<f32>,
    ) {
        let mut j = 0;
        while j < n {
            let cols = COLS.min(n - j);
            // SAFETY: columns `j .. j + cols` of the caller's operands.
            unsafe {
                match cols.div_ceil(16) {
                    3 => column_block::<3>(m, cols, k, alpha, a, b, beta, c, j),
                    2 => column_block::<2>(m, cols, k, alpha, a, b, beta, c, j),
                    _ => column_block::<1>(m, cols, k, alpha, a, b, beta, c, j),
                }
            }
            j += cols;
        }
    }

    /// Columns `j .. j + cols` of `C` (`cols` at most `16 * V`), tile by
    /// tile of rows, each tile `V` vectors wide: a last block of a few
    /// columns (a 7x7 plane's 49 outputs: one after 48) costs a third of a
    /// full one, not as much.
    ///
    /// # Safety
    ///
    /// As [`gemm`], with `j + cols <= n` and `cols <= 16 * V`.
    #[target_feature(enable = "avx512f")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn column_block<const V: usize>(
        m: usize,
        cols: usize,
        k: usize,
        alpha: f32,
        a: MatPtr<f32>,
        b: MatPtr<f32>,
        beta: f32,
        c: MatMut<f32>,
        j: usize,
    ) {
        // The lanes of each vector inside the block's columns.
        let mut masks = [0 as __mmask16; V];
        for (v, mask) in masks.iter_mut().enumerate() {
            let lanes = cols.saturating_sub(16 * v).min(16);
            *mask = ((1u32 << lanes) - 1) as __mmask16;
        }
        let mut i = 0;
        while i < m {
            let rows = ROWS.min(m - i);
            let (a, b, c) = (
                a.offset(i as isize, 0),
                b.offset(0, j as isize),
                c.offset(i as isize, j as isize),
            );
            // SAFETY: rows `i .. i + rows` and columns `j .. j + cols`
            // of the caller's operands, which its contract makes valid;
            // the masks cover exactly those columns.
            unsafe {
                match rows {
                    8 => tile::<8, V>(k, alpha, a, b, beta, c, masks),
                    7 => tile::<7, V>(k, alpha, a, b, beta, c, masks),
                    6 => tile::<6, V>(k, alpha, a, b, beta, c, masks),
                    5 => tile::<5, V>(k, alpha, a, b, beta, c, masks),
                    4 => tile::<4, V>(k, alpha, a, b, beta, c, masks),
                    3 => tile::<3, V>(k, alpha, a, b, beta, c, masks),
                    2 => tile::<2, V>(k, alpha, a, b, beta, c, masks),
                    _ => tile::<1, V>(k, alpha, a, b, beta, c, masks),
                }
            }
            i += rows;
        }
    }

    /// One `R` x `16 * V` tile of `C` (the columns the masks select).
    ///
    /// # Safety
    ///
    /// `A`'s `R` rows and `k` columns, `B`'s `k` rows and the masked
    /// columns, and `C`'s `R` rows and the masked columns must be valid
    /// (`C` writable, not overlapping `A` or `B`); AVX-512F.
    #[target_feature(enable = "avx512f")]
    #[inline]
    #[allow(clippy::too_many_arguments)]
    unsafe fn tile<const R: usize, const V: usize>(
        k: usize,
        alpha: f32,
        a: MatPtr<f32>,
        b: MatPtr<f32>,
        beta: f32,
        c: MatMut<f32>,
        masks: [__mmask16; V],
    ) {
        let mut acc = [[_mm512_setzero_ps(); V]; R];
        let (mut ap, mut bp) = (a.ptr, b.ptr);
        for _ in 0..k {
            let mut bv = [_mm512_setzero_ps(); V];
            for v in 0..V {
                // SAFETY: the masked lanes are row `p` of `B` inside the
                // tile's columns; masked-off lanes are not accessed.
                bv[v] = unsafe { _mm512_maskz_loadu_ps(masks[v], bp.wrapping_add(16 * v)) };
            }
            for (r, acc) in acc.iter_mut().enumerate() {
                // SAFETY: element (r, p) of `A`, inside the tile's rows.
                let av = _mm512_set1_ps(unsafe { *ap.wrapping_offset(r as isize * a.rs) });
                for v in 0..V {
                    acc[v] = _mm512_fmadd_ps(av, bv[v], acc[v]);
                }
            }
            ap = ap.wrapping_offset(a.cs);
            bp = bp.wrapping_offset(b.rs);
        }
        let (alpha_v, beta_v) = (_mm512_set1_ps(alpha), _mm512_set1_ps(beta));
        for (r, acc) in acc.iter().enumerate() {
            let row = c.ptr.wrapping_offset(r as isize * c.rs);
            for v in 0..V {
                let at = row.wrapping_add(16 * v);
                let mut y = if alpha == 1.0 {
                    acc[v]
                } else {
                    _mm512_mul_ps(acc[v], alpha_v)
                };
                if beta != 0.0 {
                    // SAFETY: row `r` of the tile of `C`, masked lanes only.
                    let old = unsafe { _mm512_maskz_loadu_ps(masks[v], at) };
                    y = if beta == 1.0 {
                        _mm512_add_ps(old, y)
                    } else {
                        _mm512_fmadd_ps(old, beta_v, y)
                    };
                }
                // SAFETY: as above; `C` is writable and overlaps neither
                // input.
                unsafe { _mm512_mask_storeu_ps(at, masks[v], y) };
            }
        }
    }

    /// Computes the product here by dot products when `A`'s rows and
    /// `B`'s columns are contiguous (`a.cs == 1`, `b.rs == 1`: `x @ w.t()`
    /// as `linear` runs it, whose `B` the row kernel cannot read by rows),
    /// `k >= 16`, `alpha != 0` and AVX-512F is present; returns whether it
    /// did.
    ///
    /// # Safety
    ///
    /// [`super::Gemm::gemm`]'s contract.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn try_dot(
        m: usize,
        n: usize,
        k: usize,
        alpha: f32,
        a: MatPtr<f32>,
        b: MatPtr<f32>,
        beta: f32,
        c: MatMut<f32>,
    ) -> bool {
        if !dot_applies(k, alpha, a, b) {
            return false;
        }
        // SAFETY: the caller's contract, with the unit strides along `k`
        // and AVX-512F just checked.
        unsafe { dot(m, n, k, alpha, a, b, beta, c) };
        true
    }

    /// Whether [`try_dot`] computes a product with these operands.
    pub fn dot_applies(k: usize, alpha: f32, a: MatPtr<f32>, b: MatPtr<f32>) -> bool {
        a.cs == 1 && b.rs == 1 && k >= 16 && alpha != 0.0 && available()
    }

    /// Rows and columns of `C` per dot tile: 16 accumulators, each the
    /// lane-wise partial sums of one element's dot product.
    const DOT: usize = 4;

    /// `C = beta * C + alpha * (A @ B)` tile by tile of dot products.
    ///
    /// # Safety
    ///
    /// As `try_dot`, with its checks passed.
    #[target_feature(enable = "avx512f")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn dot(
        m: usize,
        n: usize,
        k: usize,
        alpha: f32,
        a: MatPtr<f32>,
        b: MatPtr<f32>,
        beta: f32,
        c: MatMut<f32>,
    ) {
        let mut i = 0;
        while i < m {
            let rows = DOT.min(m - i);
            let mut j = 0;
            while j < n {
                let cols = DOT.min(n - j);
                let (a, b, c) = (
                    a.offset(i as isize, 0),
                    b.offset(0, j as isize),
                    c.offset(i as isize, j as isize),
                );
                // SAFETY: rows `i .. i + rows` and columns `j .. j + cols`
                // of the caller's operands.
                unsafe {
                    match rows {
                        4 => dot_tile::<4>(cols, k, alpha, a, b, beta, c),
                        3 => dot_tile::<3>(cols, k, alpha, a, b, beta, c),
                        2 => dot_tile::<2>(cols, k, alpha, a, b, beta, c),
                        _ => dot_tile::<1>(cols, k, alpha, a, b, beta, c),
                    }
                }
                j += cols;
            }
            i += rows;
        }
    }

    /// One `R` x `cols` tile (`cols <= DOT`) of dot products over `k`:
    /// 16 elements of each row of `A` and column of `B` per step, the
    /// last step masked.
    ///
    /// # Safety
    ///
    /// `A`'s `R` rows and `B`'s `cols` columns, `k` long and contiguous,
    /// and `C`'s `R x cols` elements must be valid (`C` writable, not
    /// overlapping `A` or `B`); AVX-512F.
    #[target_feature(enable = "avx512f")]
    #[inline]
    #[allow(clippy::too_many_arguments)]
    unsafe fn dot_tile<const R: usize>(
        cols: usize,
        k: usize,
        alpha: f32,
        a: MatPtr<f32>,
        b: MatPtr<f32>,
        beta: f32,
        c: MatMut<f32>,
    ) {
        let mut acc = [[_mm512_setzero_ps(); DOT]; R];
        let mut p = 0;
        while p < k {
            let lanes = (k - p).min(16);
            let mask = ((1u32 << lanes) - 1) as __mmask16;
            let mut bv = [_mm512_setzero_ps(); DOT];
            for (s, v) in bv.iter_mut().enumerate().take(cols) {
                // SAFETY: elements `p .. p + lanes` of column `s` of `B`
                // (contiguous); masked-off lanes are not accessed.
                *v = unsafe {
                    _mm512_maskz_loadu_ps(
                        mask,
                        b.ptr.wrapping_offset(s as isize * b.cs + p as isize),
                    )
                };
            }
            for (r, acc) in acc.iter_mut().enumerate() {
                // SAFETY: elements `p .. p + lanes` of row `r` of `A`
                // (contiguous); masked-off lanes are not accessed.
                let av = unsafe {
                    _mm512_maskz_loadu_ps(
                        mask,
                        a.ptr.wrapping_offset(r as isize * a.rs + p as isize),
                    )
                };
                for s in 0..cols {
                    acc[s] = _mm512_fmadd_ps(av, bv[s], acc[s]);
                }
            }
            p += lanes;
        }
        let mut all = [_mm512_setzero_ps(); 16];
        for (r, acc) in acc.iter().enumerate() {
            all[r * DOT..][..DOT].copy_from_slice(acc);
        }
        let sums = lane_sums(&all);
        for r in 0..R {
            for s in 0..cols {
                let at = c.ptr.wrapping_offset(r as isize * c.rs + s as isize * c.cs);
                let sum = alpha * sums[r * DOT + s];
                // SAFETY: element (r, s) of the tile of `C`, writable,
                // overlapping neither input.
                unsafe { *at = if beta == 0.0 { sum } else { beta * *at + sum } };
            }
        }
    }

    /// The sums of the lanes of each of 16 vectors, in their order: a tree
    /// of shuffles and additions that halves the vectors at each level (16
    /// to 8, 4, 2, 1), about 30 instructions where 16 reductions of one
    /// vector each took about 150 (a dot product of a short `k`, as a
    /// small transformer's `64`, spent more in its reductions than in its
    /// multiply-adds).
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn lane_sums(v: &[__m512; 16]) -> [f32; 16] {
        // 16 -> 8: per 128-bit block of `(x, y)`, `[x0 + x2, y0 + y2, x1 +
        // x3, y1 + y3]`.
        let pairs: [__m512; 8] = std::array::from_fn(|i| {
            let (x, y) = (v[2 * i], v[2 * i + 1]);
            _mm512_add_ps(_mm512_unpacklo_ps(x, y), _mm512_unpackhi_ps(x, y))
        });
        // 8 -> 4: per block, the block's sum of each of four vectors, in
        // order.
        let quads: [__m512; 4] = std::array::from_fn(|i| {
            let (s, t) = (
                _mm512_castps_pd(pairs[2 * i]),
                _mm512_castps_pd(pairs[2 * i + 1]),
            );
            _mm512_add_ps(
                _mm512_castpd_ps(_mm512_unpacklo_pd(s, t)),
                _mm512_castpd_ps(_mm512_unpackhi_pd(s, t)),
            )
        });
        // Blocks 0 and 2, plus blocks 1 and 3, of two operands: twice,
        // until each block holds the four full sums of one quad.
        let fold = |a: __m512, b: __m512| {
            _mm512_add_ps(
                _mm512_shuffle_f32x4::<0b10_00_10_00>(a, b),
                _mm512_shuffle_f32x4::<0b11_01_11_01>(a, b),
            )
        };
        let total = fold(fold(quads[0], quads[1]), fold(quads[2], quads[3]));
        let mut out = [0f32; 16];
        // SAFETY: `out` holds 16 floats.
        unsafe { _mm512_storeu_ps(out.as_mut_ptr(), total) };
        out
    }
}

/// On other architectures every product goes to the crate.
#[cfg(not(target_arch = "x86_64"))]
mod avx512_f32 {
    use super::{MatMut, MatPtr};

    /// Never computes the product here.
    ///
    /// # Safety
    ///
    /// None needed; the signature matches the AVX-512 module's.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn try_gemm(
        _m: usize,
        _n: usize,
        _k: usize,
        _alpha: f32,
        _a: MatPtr<f32>,
        _b: MatPtr<f32>,
        _beta: f32,
        _c: MatMut<f32>,
    ) -> bool {
        false
    }

    /// No product is computed here.
    pub fn dot_applies(_k: usize, _alpha: f32, _a: MatPtr<f32>, _b: MatPtr<f32>) -> bool {
        false
    }

    /// Never computes the product here.
    ///
    /// # Safety
    ///
    /// None needed; the signature matches the AVX-512 module's.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn try_dot(
        _m: usize,
        _n: usize,
        _k: usize,
        _alpha: f32,
        _a: MatPtr<f32>,
        _b: MatPtr<f32>,
        _beta: f32,
        _c: MatMut<f32>,
    ) -> bool {
        false
    }
}

/// [`Gemm`] for the other types the `gemm` crate computes, through
/// [`crate_gemm`].
macro_rules! crate_gemm {
    ($($t:ty => $wider:expr),*) => {$(
        impl Gemm for $t {
            const SUMS_WIDER: bool = $wider;

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
                // SAFETY: the caller's contract, passed on.
                unsafe { crate_gemm(m, n, k, alpha, a, b, beta, c, threads, false) }
            }
        }
    )*};
}

// The crate computes f16 products in f32 and rounds once.
crate_gemm!(f64 => false, f16 => true);

/// Whether `|rs| < |cs|`: the matrix's columns are its contiguous runs.
fn column_major(rs: isize, cs: isize) -> bool {
    rs.unsigned_abs() < cs.unsigned_abs()
}

/// The largest `C` (in elements) computed through a scratch copy: 64 MiB
/// of `float32`.
const SCRATCH_MAX_ELEMENTS: usize = 1 << 24;

/// Whether computing `C` column-major in a scratch matrix, copied out
/// transposed, costs the crate less than writing the caller's row-major
/// `C` directly.
///
/// The crate computes a row-major `C` as `C^T = B^T @ A^T`, and packs its
/// left operand into panels of rows: a strided gather, one element at a
/// time, when that operand is not column-major. So a row-major `C` with a
/// column-major `B` (`linear`'s `x @ W^T`) gathers all of `B` (`k * n`
/// elements), where a column-major scratch gathers `A` (`m * k`, none when
/// `A` is column-major) and then copies its `m * n` elements out. Measured
/// on 64x784x256 `float32` (`linear`'s first layer in
/// `eager/mlp_forward`): 283 us directly, 243 us through the scratch (MKL
/// in libtorch: 267 us).
fn column_major_scratch_is_cheaper<T>(
    m: usize,
    n: usize,
    k: usize,
    a: MatPtr<T>,
    b: MatPtr<T>,
    c: MatMut<T>,
) -> bool {
    if m < 2 || n < 2 || !column_major(c.cs, c.rs) || m.saturating_mul(n) > SCRATCH_MAX_ELEMENTS {
        // Vectors take the crate's matrix-vector paths; a column-major `C`
        // is the crate's own orientation; a huge `C` is not doubled.
        return false;
    }
    // Saturating: expanded (stride 0) operands may be larger than memory.
    let gathered_directly = if column_major(b.rs, b.cs) {
        k.saturating_mul(n)
    } else {
        0
    };
    let gathered_in_scratch = if column_major(a.rs, a.cs) {
        0
    } else {
        m.saturating_mul(k)
    };
    gathered_in_scratch.saturating_add(m * n) < gathered_directly
}

/// Runs `product` on a column-major `m` x `n` scratch standing in for `c`,
/// then stores each element `p` of the scratch into `c` as
/// `combine(p, old)`, where `old` is `c`'s element (a `combine` that
/// ignores it makes old NaNs vanish, as `beta == 0` must).
///
/// # Safety
///
/// `c` must be valid for reading and writing its `m` x `n` elements, with
/// no two at the same address.
unsafe fn via_column_major_scratch<T: Copy>(
    m: usize,
    n: usize,
    c: MatMut<T>,
    zero: T,
    product: impl FnOnce(MatMut<T>),
    combine: impl Fn(T, T) -> T,
) {
    let mut scratch = vec![zero; m * n];
    product(MatMut {
        ptr: scratch.as_mut_ptr(),
        rs: 1,
        cs: m as isize,
    });
    // The copy walks square tiles, so both the scratch's columns and `c`'s
    // rows stay in cache, writing `c` along its contiguous rows.
    const TILE: usize = 32;
    for i0 in (0..m).step_by(TILE) {
        for j0 in (0..n).step_by(TILE) {
            for i in i0..m.min(i0 + TILE) {
                let row = c.ptr.wrapping_offset(i as isize * c.rs);
                for j in j0..n.min(j0 + TILE) {
                    let p = scratch[i + j * m];
                    // SAFETY: `i < m`, `j < n`: inside `C`, which the
                    // caller lets us read and write.
                    unsafe {
                        let d = row.offset(j as isize * c.cs);
                        *d = combine(p, *d);
                    }
                }
            }
        }
    }
}

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
    const SUMS_WIDER: bool = true;

    /// Through `float32`: both factors widened (exactly) into `float32`
    /// copies that keep their orientation, the product computed by
    /// `f32`'s kernels into a `float32` scratch, and each sum rounded to
    /// bfloat16 once, with `alpha` and `beta` applied in `float32` as
    /// oneDNN's bfloat16 products do. Products too large for the copies
    /// (expanded operands) take the loop nest.
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
        let widen = |x: bf16| x.to_f32();
        let elements = m
            .checked_mul(k)
            .zip(k.checked_mul(n))
            .zip(m.checked_mul(n))
            .and_then(|((a, b), c)| a.checked_add(b)?.checked_add(c));
        if alpha.to_f32() != 0.0 && elements.is_some_and(|e| e <= WIDENED_MAX_ELEMENTS) {
            // SAFETY: the caller's operands (see the trait): `A` readable
            // at its `m x k` elements, `B` at its `k x n`.
            let (wa, a32) = unsafe { widened(a, m, k, widen) };
            // SAFETY: as above.
            let (wb, b32) = unsafe { widened(b, k, n, widen) };
            let mut product = vec![0f32; m * n];
            let p32 = MatMut {
                ptr: product.as_mut_ptr(),
                rs: n as isize,
                cs: 1,
            };
            // SAFETY: the three copies hold exactly the elements their
            // sizes and strides reach, and are distinct allocations.
            unsafe { f32::gemm(m, n, k, 1.0, a32.at(&wa), b32.at(&wb), 0.0, p32, threads) };
            let (alpha, beta) = (alpha.to_f32(), beta.to_f32());
            for i in 0..m {
                let row = c.ptr.wrapping_offset(i as isize * c.rs);
                for (j, &p) in product[i * n..(i + 1) * n].iter().enumerate() {
                    let dst = row.wrapping_offset(j as isize * c.cs);
                    let scaled = alpha * p;
                    // SAFETY: `i < m`, `j < n`: inside `C`, which the
                    // caller lets us read and write; the old value is
                    // read only when `beta` asks for it (BLAS's rule).
                    unsafe {
                        let value = if beta == 0.0 {
                            scaled
                        } else {
                            beta * (*dst).to_f32() + scaled
                        };
                        *dst = bf16::from_f32(value);
                    }
                }
            }
            return;
        }
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
                widen,
                |x, y, acc| x.mul_add(y, acc),
                |x, y| x * y,
                |x, y| x + y,
                bf16::from_f32,
            )
        }
    }
}

/// The most elements of both factors and the product together that a
/// bfloat16 product widens into `float32` copies (512 MiB of them).
const WIDENED_MAX_ELEMENTS: usize = 1 << 27;

/// Where a widened copy's elements lie: its strides (row-major or
/// column-major, as the original's smaller stride says).
#[derive(Copy, Clone)]
struct Widened {
    rs: isize,
    cs: isize,
}

impl Widened {
    /// The copy `data` as an operand.
    fn at(self, data: &[f32]) -> MatPtr<f32> {
        MatPtr {
            ptr: data.as_ptr(),
            rs: self.rs,
            cs: self.cs,
        }
    }
}

/// A dense `float32` copy of the `rows x cols` matrix `x`, laid out as
/// `x` mostly is (column-major when its columns are closer than its rows),
/// so the product's kernel choice (dot products for `x @ W^T`) is the one
/// the original layout would get.
///
/// # Safety
///
/// Every element of `x` the sizes reach must be readable.
unsafe fn widened<T: Copy>(
    x: MatPtr<T>,
    rows: usize,
    cols: usize,
    widen: impl Fn(T) -> f32,
) -> (Vec<f32>, Widened) {
    let mut out = Vec::with_capacity(rows * cols);
    let col_major = column_major(x.rs, x.cs);
    let (outer, inner, os, is) = if col_major {
        (cols, rows, x.cs, x.rs)
    } else {
        (rows, cols, x.rs, x.cs)
    };
    for o in 0..outer {
        let line = x.ptr.wrapping_offset(o as isize * os);
        // SAFETY: `o < outer`, `i < inner`: an element of `x` (the
        // caller's contract).
        out.extend((0..inner).map(|i| widen(unsafe { *line.wrapping_offset(i as isize * is) })));
    }
    let layout = if col_major {
        Widened {
            rs: 1,
            cs: rows as isize,
        }
    } else {
        Widened {
            rs: cols as isize,
            cs: 1,
        }
    };
    (out, layout)
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

    /// A matrix operand at `ptr` with strides `(rs, cs)`.
    fn mat<T>(ptr: *const T, (rs, cs): (usize, usize)) -> MatPtr<T> {
        MatPtr {
            ptr,
            rs: rs as isize,
            cs: cs as isize,
        }
    }

    /// An output matrix at `ptr` with strides `(rs, cs)`.
    fn mat_mut<T>(ptr: *mut T, (rs, cs): (usize, usize)) -> MatMut<T> {
        MatMut {
            ptr,
            rs: rs as isize,
            cs: cs as isize,
        }
    }

    fn check<T: Gemm + std::fmt::Debug>() {
        // A = [[1, 2, 3], [4, 5, 6]] row-major; B = A^T read through
        // strides (column-major view of A); C starts at 1.
        let a: Vec<T> = (1..=6).map(|v| T::from_i64(v)).collect();
        let mut c: Vec<T> = vec![T::from_i64(1); 4];
        let ap = mat(a.as_ptr(), (3, 1));
        let bp = mat(a.as_ptr(), (1, 3));
        let cp = mat_mut(c.as_mut_ptr(), (2, 1));
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
        let ap = mat(a.as_ptr(), (k, 1));
        let bp = mat(b.as_ptr(), (n, 1));
        let cp = mat_mut(c.as_mut_ptr(), (n, 1));
        // SAFETY: sizes match the vectors; beta 0 ignores the NaNs.
        unsafe { f64::gemm(m, n, k, 1.0, ap, bp, 0.0, cp, 2) };
        for i in 0..m {
            for j in 0..n {
                let want: f64 = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
                assert_eq!(c[i * n + j], want);
            }
        }
    }

    #[test]
    fn a_zero_alpha_reads_neither_factor() {
        // BLAS's rule, which PyTorch's `addmm` inherits: with `alpha == 0`
        // the result is `beta * C` even when `A` or `B` hold infinities.
        let (m, n, k) = (9, 50, 4);
        let a = vec![f32::INFINITY; m * k];
        let b = vec![f32::NAN; k * n];
        for (beta, fill, want) in [
            (1.0f32, 2.0f32, 2.0f32),
            (0.5, 2.0, 1.0),
            (0.0, f32::NAN, 0.0),
        ] {
            let mut c = vec![fill; m * n];
            // SAFETY: sizes and strides stay inside the vectors.
            unsafe {
                f32::gemm(
                    m,
                    n,
                    k,
                    0.0,
                    mat(a.as_ptr(), (k, 1)),
                    mat(b.as_ptr(), (n, 1)),
                    beta,
                    mat_mut(c.as_mut_ptr(), (n, 1)),
                    1,
                )
            };
            assert!(c.iter().all(|&v| v == want), "beta {beta}: {:?}", &c[..4]);
        }
    }

    #[test]
    fn dot_products_match_a_reference_at_every_tile_edge() {
        // `A` row-major and `B` column-major (`x @ w.t()`), both padded;
        // `C` row- or column-major; sizes around the 4 x 4 tile and the
        // 16-lane step; small integers, so every sum is exact in float32.
        for (m, n, k) in [
            (1, 1, 16),
            (3, 5, 17),
            (4, 4, 32),
            (9, 7, 100),
            (13, 30, 784),
        ] {
            let (lda, ldb) = (k + 3, k + 5);
            let a: Vec<f32> = (0..m * lda).map(|i| ((i * 7) % 11) as f32 - 5.0).collect();
            let b: Vec<f32> = (0..n * ldb).map(|i| ((i * 3) % 13) as f32 - 6.0).collect();
            for c_row_major in [true, false] {
                for (alpha, beta) in [(1.0f32, 0.0f32), (2.0, 1.0), (1.0, 3.0)] {
                    let fill = if beta == 0.0 { f32::NAN } else { 1.0 };
                    let mut c = vec![fill; m * n];
                    let cs = if c_row_major { (n, 1) } else { (1, m) };
                    // SAFETY: sizes and strides stay inside the vectors.
                    unsafe {
                        f32::gemm(
                            m,
                            n,
                            k,
                            alpha,
                            mat(a.as_ptr(), (lda, 1)),
                            mat(b.as_ptr(), (1, ldb)),
                            beta,
                            mat_mut(c.as_mut_ptr(), cs),
                            1,
                        )
                    };
                    for i in 0..m {
                        for j in 0..n {
                            let got = c[i * cs.0 + j * cs.1];
                            let dot: f32 = (0..k).map(|p| a[i * lda + p] * b[j * ldb + p]).sum();
                            let want = alpha * dot + if beta == 0.0 { 0.0 } else { beta * fill };
                            assert_eq!(got, want, "{m}x{n}x{k} at ({i}, {j}), beta {beta}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn row_products_match_a_reference_at_every_tile_edge() {
        // Rows and columns around the AVX-512 tile's (8 x 48), padded row
        // strides, a strided `A`, each `beta` branch, no depth at all and
        // a depth of three blocks; small integers, so every sum is exact in
        // float32.
        for (m, n, k) in [
            (1, 1, 1),
            (7, 47, 5),
            (8, 48, 27),
            (9, 49, 3),
            (17, 100, 144),
            (3, 20, 0),
            (10, 50, 2500),
        ] {
            let (lda, ldb, ldc) = (2 * k + 1, n + 5, n + 3);
            let a: Vec<f32> = (0..m * lda).map(|i| ((i * 7) % 11) as f32 - 5.0).collect();
            let b: Vec<f32> = (0..k * ldb).map(|i| ((i * 3) % 13) as f32 - 6.0).collect();
            for (alpha, beta) in [(1.0f32, 0.0f32), (2.0, 1.0), (1.0, 3.0)] {
                let fill = if beta == 0.0 { f32::NAN } else { 1.0 };
                let mut c = vec![fill; m * ldc];
                let ap = mat(a.as_ptr(), (lda, 2));
                let bp = mat(b.as_ptr(), (ldb, 1));
                let cp = mat_mut(c.as_mut_ptr(), (ldc, 1));
                // SAFETY: sizes and strides stay inside the vectors.
                unsafe { f32::gemm(m, n, k, alpha, ap, bp, beta, cp, 1) };
                for i in 0..m {
                    for j in 0..ldc {
                        let got = c[i * ldc + j];
                        if j >= n {
                            assert_eq!(got.is_nan(), beta == 0.0, "padding at ({i}, {j})");
                            continue;
                        }
                        let dot: f32 = (0..k).map(|p| a[i * lda + 2 * p] * b[p * ldb + j]).sum();
                        let want = alpha * dot + if beta == 0.0 { 0.0 } else { beta * fill };
                        assert_eq!(got, want, "{m}x{n}x{k} at ({i}, {j}), beta {beta}");
                    }
                }
            }
        }
    }

    /// `x @ W^T` as `linear` runs it: row-major `A`, column-major `B` (a
    /// row-major `W` read transposed), row-major `C` with a padded row
    /// stride; through the column-major scratch, with and without `beta`.
    fn check_linear_shape<T: Gemm + std::fmt::Debug>(
        (m, n, k): (usize, usize, usize),
        threads: usize,
    ) {
        let ldc = n + 3;
        let x: Vec<T> = (0..m * k)
            .map(|i| T::from_i64((i % 7) as i64 - 3))
            .collect();
        let w: Vec<T> = (0..n * k)
            .map(|i| T::from_i64((i % 5) as i64 - 2))
            .collect();
        let a = mat(x.as_ptr(), (k, 1));
        let b = mat(w.as_ptr(), (1, k));
        for beta in [0i64, 2] {
            let fill = if beta == 0 {
                T::from_f64(f64::NAN)
            } else {
                T::from_i64(1)
            };
            let mut c: Vec<T> = vec![fill; m * ldc];
            let cp = mat_mut(c.as_mut_ptr(), (ldc, 1));
            assert!(column_major_scratch_is_cheaper(m, n, k, a, b, cp));
            // SAFETY: sizes and strides stay inside the vectors.
            unsafe {
                T::gemm(
                    m,
                    n,
                    k,
                    T::from_i64(3),
                    a,
                    b,
                    T::from_i64(beta),
                    cp,
                    threads,
                )
            };
            for i in 0..m {
                for j in 0..ldc {
                    let got = c[i * ldc + j].to_f64();
                    if j >= n {
                        // The padding between rows is untouched.
                        assert_eq!(got.is_nan(), beta == 0, "padding at ({i}, {j})");
                        continue;
                    }
                    let dot: f64 = (0..k)
                        .map(|p| x[i * k + p].to_f64() * w[j * k + p].to_f64())
                        .sum();
                    let want = 3.0 * dot + if beta == 0 { 0.0 } else { beta as f64 };
                    assert_eq!(got, want, "({i}, {j}) with beta {beta}");
                }
            }
        }
    }

    #[test]
    fn linear_shaped_products_go_through_a_column_major_scratch() {
        check_linear_shape::<f32>((20, 70, 150), 1);
        check_linear_shape::<f64>((20, 70, 150), 1);
        // float16: sums small enough to stay exact.
        check_linear_shape::<f16>((20, 70, 30), 1);
        // Split by rows over two threads, each block through its scratch.
        assert_eq!(split(40, 300, 100, 2, true), Some((Split::Rows, 2)));
        check_linear_shape::<f32>((40, 300, 100), 2);
        check_linear_shape::<f64>((40, 300, 100), 2);
    }

    #[test]
    fn products_split_by_columns_unless_they_go_through_the_scratch_or_are_narrow() {
        assert_eq!(split(64, 256, 784, 2, false), Some((Split::Columns, 2)));
        // A convolution of 8 output positions: each thread half the weight.
        assert_eq!(split(512, 8, 4608, 2, false), Some((Split::Rows, 2)));
        assert_eq!(split(8, 100, 4608, 2, false), None);
        assert_eq!(split(64, 256, 784, 2, true), Some((Split::Rows, 2)));
        // Too few rows for two micro-kernel blocks: columns after all.
        assert_eq!(split(20, 256, 784, 2, true), Some((Split::Columns, 2)));
        assert_eq!(split(64, 256, 784, 1, true), None);
        assert_eq!(split(8, 8, 8, 2, true), None);
    }

    #[test]
    fn the_scratch_is_chosen_only_when_it_gathers_less() {
        // (m, n, k, A column-major, B column-major, C row-major, expected)
        let cases = [
            // linear's first layer: B column-major, large.
            (64, 256, 784, false, true, true, true),
            // Row-major B: the crate packs it contiguously already.
            (64, 256, 784, false, false, true, false),
            // A column-major C is the crate's own orientation.
            (64, 256, 784, false, true, false, false),
            // A small B (linear's last layer) costs less than the copies.
            (64, 10, 256, false, true, true, false),
            // Vectors stay on the crate's matrix-vector paths.
            (1, 256, 784, false, true, true, false),
            // A huge C is not doubled.
            (64, 1 << 20, 1 << 20, false, true, true, false),
        ];
        for (m, n, k, a_col, b_col, c_row, expected) in cases {
            let layout = |col: bool, rows: usize, cols: usize| {
                if col {
                    (1, rows as isize)
                } else {
                    (cols as isize, 1)
                }
            };
            let (rs, cs) = layout(a_col, m, k);
            let a = MatPtr {
                ptr: std::ptr::null::<f32>(),
                rs,
                cs,
            };
            let (rs, cs) = layout(b_col, k, n);
            let b = MatPtr {
                ptr: std::ptr::null::<f32>(),
                rs,
                cs,
            };
            let (rs, cs) = layout(!c_row, m, n);
            let c = MatMut {
                ptr: std::ptr::null_mut::<f32>(),
                rs,
                cs,
            };
            assert_eq!(
                column_major_scratch_is_cheaper(m, n, k, a, b, c),
                expected,
                "{m}x{n}x{k}, A col {a_col}, B col {b_col}, C row {c_row}"
            );
        }
    }

    #[test]
    fn bfloat16_products_through_float32_match_the_loop_nest() {
        // Factors on a grid of 1/8 and sums far below 2^24 of them: every
        // float32 sum is exact in any order, so the widened product and the
        // loop nest round the same sums and must agree bit for bit.
        let mut next = crate::test_rng(0x9e37_79b9_7f4a_7c15u64);
        for case in 0..40 {
            let (m, n, k) = (1 + next(40), 1 + next(50), next(70));
            let (a_col, b_col) = (next(2) == 1, next(2) == 1);
            let threads = 1 + next(2);
            let beta = bf16::from_f32([0.0, 0.5][next(2)]);
            let alpha = bf16::from_f32([1.0, 1.5][next(2)]);
            let a: Vec<bf16> = (0..m * k)
                .map(|i| bf16::from_f32(((i * 13) % 17) as f32 * 0.25 - 2.0))
                .collect();
            let b: Vec<bf16> = (0..k * n)
                .map(|i| bf16::from_f32(((i * 7) % 19) as f32 * 0.125 - 1.0))
                .collect();
            let ap = if a_col {
                mat(a.as_ptr(), (1, m))
            } else {
                mat(a.as_ptr(), (k.max(1), 1))
            };
            let bp = if b_col {
                mat(b.as_ptr(), (1, k.max(1)))
            } else {
                mat(b.as_ptr(), (n, 1))
            };
            // NaN in the old `C` must vanish when `beta` is 0.
            let reads_old = beta.to_f32() != 0.0;
            let old: Vec<bf16> = (0..m * n)
                .map(|i| match i % 5 {
                    0 if !reads_old => bf16::NAN,
                    r => bf16::from_f32(r as f32 * 0.5),
                })
                .collect();
            let (mut got, mut want) = (old.clone(), old);
            let (gp, wp) = (
                mat_mut(got.as_mut_ptr(), (n, 1)),
                mat_mut(want.as_mut_ptr(), (n, 1)),
            );
            // SAFETY: sizes and strides stay inside the vectors.
            unsafe {
                bf16::gemm(m, n, k, alpha, ap, bp, beta, gp, threads);
                naive_gemm(
                    m,
                    n,
                    k,
                    alpha,
                    ap,
                    bp,
                    beta,
                    wp,
                    |x: bf16| x.to_f32(),
                    |x, y, acc| x.mul_add(y, acc),
                    |x, y| x * y,
                    |x, y| x + y,
                    bf16::from_f32,
                );
            }
            let bits = |v: &[bf16]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(&got),
                bits(&want),
                "case {case}: {m}x{n}x{k}, A col {a_col}, B col {b_col}"
            );
            assert!(got.iter().all(|x| !x.is_nan()), "case {case}: NaN");
        }
    }

    #[test]
    fn random_layouts_match_a_reference() {
        let mut next = crate::test_rng(0x2545_f491_4f6c_dd1du64);
        let (mut via_scratch, mut row_splits) = (0, 0);
        for case in 0..60 {
            let (m, n, k) = (1 + next(70), 1 + next(90), 1 + next(120));
            let (a_col, b_col) = (next(2) == 1, next(2) == 1);
            let pad = next(3);
            let threads = 1 + next(2);
            let beta = [0.0, 0.5][next(2)];
            let a: Vec<f32> = (0..m * k)
                .map(|i| ((i * 13) % 17) as f32 * 0.25 - 2.0)
                .collect();
            let b: Vec<f32> = (0..k * n)
                .map(|i| ((i * 7) % 19) as f32 * 0.125 - 1.0)
                .collect();
            let ap = if a_col {
                mat(a.as_ptr(), (1, m))
            } else {
                mat(a.as_ptr(), (k, 1))
            };
            let bp = if b_col {
                mat(b.as_ptr(), (1, k))
            } else {
                mat(b.as_ptr(), (n, 1))
            };
            let ldc = n + pad;
            let old = |i: usize, j: usize| (i * 3 + j) as f32 * 0.5;
            let mut c: Vec<f32> = (0..m * ldc).map(|x| old(x / ldc, x % ldc)).collect();
            let cp = mat_mut(c.as_mut_ptr(), (ldc, 1));
            let scratch = column_major_scratch_is_cheaper(m, n, k, ap, bp, cp);
            via_scratch += usize::from(scratch);
            row_splits += usize::from(matches!(
                split(m, n, k, threads, scratch),
                Some((Split::Rows, _))
            ));
            // SAFETY: sizes and strides stay inside the vectors.
            unsafe { f32::gemm(m, n, k, 1.5, ap, bp, beta, cp, threads) };
            for i in 0..m {
                for j in 0..ldc {
                    let got = c[i * ldc + j] as f64;
                    if j >= n {
                        assert_eq!(got, old(i, j) as f64, "case {case}: padding");
                        continue;
                    }
                    let at =
                        |i: usize, p: usize| (ap.rs * i as isize + ap.cs * p as isize) as usize;
                    let bt =
                        |p: usize, j: usize| (bp.rs * p as isize + bp.cs * j as isize) as usize;
                    let dot: f64 = (0..k)
                        .map(|p| a[at(i, p)] as f64 * b[bt(p, j)] as f64)
                        .sum();
                    let want = 1.5 * dot + beta as f64 * old(i, j) as f64;
                    assert!(
                        (got - want).abs() <= 1e-4 * want.abs().max(1.0),
                        "case {case} ({m}x{n}x{k}, A col {a_col}, B col {b_col}, beta {beta}, {threads} threads) at ({i}, {j}): {got} vs {want}"
                    );
                }
            }
        }
        // Both of our choices were exercised.
        assert!(
            via_scratch >= 3 && row_splits >= 1 && via_scratch < 60,
            "{via_scratch} through the scratch, {row_splits} split by rows"
        );
    }
}
