//! CPU loops over a [`TensorIterator`]: typed, elementwise, with a
//! contiguous fast path that the compiler vectorizes (and that runs in an
//! AVX2+FMA build of itself when the processor has those, chosen at run
//! time), and a strided path for everything else. The contiguous path reads
//! page by page with its inputs prefetched ahead ([`crate::prefetch`]).
//!
//! Iterations of at least `GRAIN_SIZE` elements are split over `rayon`'s
//! threads ([`TensorIterator::parallel_for_each`]).
//!
//! Outputs and inputs may alias (in-place operations), so the loops read and
//! write through raw pointers, never through overlapping slices.

use aten_core::tensor_iterator::TensorIterator;

use crate::prefetch::{page_elements, page_pieces, prefetch_read, PAGE_BYTES};
use c10_core::{Element, Error, Result, ScalarType};

fn check(iter: &TensorIterator<'_>, expected: &[ScalarType]) -> Result<()> {
    for (i, dtype) in expected.iter().enumerate() {
        if iter.dtype(i) != *dtype {
            return Err(Error::internal(format!(
                "CPU loop: operand {i} has dtype {} but the loop was instantiated for {dtype}",
                iter.dtype(i)
            )));
        }
    }
    Ok(())
}

#[inline(always)]
fn contiguous(strides: &[i64], sizes: &[usize]) -> bool {
    strides.iter().zip(sizes).all(|(s, z)| *s == *z as i64)
}

/// Whether the processor supports the AVX2+FMA code paths.
#[inline]
pub fn has_avx2_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::sync::atomic::{AtomicU8, Ordering};
        static CACHE: AtomicU8 = AtomicU8::new(0);
        match CACHE.load(Ordering::Relaxed) {
            1 => false,
            2 => true,
            _ => {
                let yes =
                    std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma");
                CACHE.store(if yes { 2 } else { 1 }, Ordering::Relaxed);
                yes
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// One page of stack space for the results of an in-place piece of a
/// contiguous loop (a piece is at most [`PAGE_BYTES`] of its widest
/// element, see [`page_elements`]), aligned for every element type.
#[repr(C, align(64))]
struct StagedPage([std::mem::MaybeUninit<u8>; PAGE_BYTES]);

impl StagedPage {
    #[inline(always)]
    fn new() -> StagedPage {
        StagedPage([std::mem::MaybeUninit::uninit(); PAGE_BYTES])
    }

    /// The page as room for `PAGE_BYTES / size_of::<T>()` values of `T`
    /// (any element type: at most 64-byte aligned).
    #[inline(always)]
    fn as_mut_ptr<T>(&mut self) -> *mut T {
        const { assert!(std::mem::align_of::<T>() <= 64) };
        self.0.as_mut_ptr().cast::<T>()
    }
}

macro_rules! define_loop {
    ($name:ident, $name_vec:ident, $avx:ident, $contig:ident; $($a:ident : $A:ident),*) => {
        #[inline(always)]
        fn $contig<O: Element, $($A: Element),*>(
            out: *mut O,
            $($a: *const $A,)*
            n: usize,
            f: &impl Fn($($A),*) -> O,
        ) {
            let widest = 0 $(.max(std::mem::size_of::<$A>()))*;
            let piece = page_elements(widest.max(std::mem::size_of::<O>()), 1);
            let in_place = false $(|| $a as usize == out as usize)*;
            for (piece, ahead) in page_pieces(n, piece) {
                if let Some(i) = ahead {
                    $(prefetch_read($a.wrapping_add(i));)*
                }
                if in_place {
                    // An input that is the output (an in-place operation)
                    // fails the compiler's run-time overlap check of the
                    // loop below, which then runs one element at a time
                    // (`add_` at half the speed of `add`). Here the piece's
                    // results go to a page on the stack, which no input can
                    // overlap, so that loop is vectorized, and are then
                    // copied out: every element is read before any is
                    // written, as the aliasing needs.
                    let mut staged = StagedPage::new();
                    let buf = staged.as_mut_ptr::<O>();
                    let (start, len) = (piece.start, piece.len());
                    for j in 0..len {
                        // SAFETY: as below for the inputs; `buf` holds a
                        // whole piece (`StagedPage::new`'s contract: a
                        // piece is at most a page of the widest element).
                        unsafe { buf.add(j).write(f($($a.add(start + j).read()),*)) }
                    }
                    // SAFETY: `len` elements were written to `buf` above;
                    // `out` is valid for them; the stack page and the
                    // output do not overlap.
                    unsafe { std::ptr::copy_nonoverlapping(buf, out.add(start), len) };
                    continue;
                }
                for i in piece {
                    // SAFETY: the caller passes pointers valid for `n`
                    // consecutive elements of the declared types (checked
                    // against the iterator's dtypes).
                    unsafe { out.add(i).write(f($($a.add(i).read()),*)) }
                }
            }
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn $avx<O: Element, $($A: Element),*>(
            out: *mut O,
            $($a: *const $A,)*
            n: usize,
            f: &impl Fn($($A),*) -> O,
        ) {
            $contig(out, $($a,)* n, f)
        }

        /// Runs `f` on every element: output 0 from the inputs, with the
        /// dtypes given by the type parameters (checked).
        pub fn $name<O: Element, $($A: Element),*>(
            iter: &mut TensorIterator<'_>,
            f: impl Fn($($A),*) -> O + Sync,
        ) -> Result<()> {
            $name_vec(iter, 1, &f, &f)
        }

        /// PyTorch's `cpu_kernel_vec` for an operation whose vectorized
        /// form (`vectorized`) and scalar form (`scalar`) round
        /// differently: in an inner loop that PyTorch vectorizes (every
        /// operand contiguous, or one input a broadcast value and the rest
        /// contiguous), the elements of its whole blocks of `block`
        /// elements (`2 * Vectorized<T>::size()`) take `vectorized`; the
        /// rest of the loop, and loops of other layouts, take `scalar`.
        pub fn $name_vec<O: Element, $($A: Element),*>(
            iter: &mut TensorIterator<'_>,
            block: usize,
            vectorized: impl Fn($($A),*) -> O + Sync,
            scalar: impl Fn($($A),*) -> O + Sync,
        ) -> Result<()> {
            check(iter, &[O::DTYPE, $($A::DTYPE),*])?;
            let sizes = [std::mem::size_of::<O>(), $(std::mem::size_of::<$A>()),*];
            let avx = has_avx2_fma();
            let block = block.max(1);
            /// `f` on the elements `range` of a contiguous loop.
            #[inline(always)]
            fn run_contiguous<O: Element, $($A: Element),*>(
                avx: bool,
                out: *mut O,
                $($a: *const $A,)*
                range: std::ops::Range<usize>,
                f: &impl Fn($($A),*) -> O,
            ) {
                if range.is_empty() {
                    return;
                }
                let (start, len) = (range.start, range.len());
                let (out, $($a),*) = (out.wrapping_add(start), $($a.wrapping_add(start)),*);
                #[cfg(target_arch = "x86_64")]
                if avx {
                    // SAFETY: AVX2 and FMA were detected; the pointers are
                    // valid for the `len` elements from `start` (the
                    // caller's range ends at the loop's length at most).
                    unsafe { $avx(out, $($a,)* len, f) };
                    return;
                }
                let _ = avx;
                $contig(out, $($a,)* len, f);
            }

            /// `f` on the elements `range` of a strided loop (pointers
            /// with their byte strides).
            #[inline(always)]
            fn run_strided<O: Element, $($A: Element),*>(
                (out, so): (*mut O, isize),
                $($a: (*const $A, isize),)*
                range: std::ops::Range<usize>,
                f: &impl Fn($($A),*) -> O,
            ) {
                for i in range {
                    let i = i as isize;
                    // SAFETY: `for_each` guarantees each pointer is valid
                    // at `i * stride` bytes for `i < n` (the caller's range
                    // ends at `n` at most), with the checked dtypes.
                    unsafe {
                        let v = f($((($a.0 as *const u8).offset(i * $a.1) as *const $A).read()),*);
                        ((out as *mut u8).offset(i * so) as *mut O).write(v);
                    }
                }
            }

            iter.parallel_for_each(|ptrs, strides, n| {
                let mut k = 0;
                let out = ptrs[k] as *mut O;
                $(k += 1; let $a = ptrs[k] as *const $A;)*
                let _ = k;
                let head = if vectorizes(strides, &sizes) { n / block * block } else { 0 };
                if contiguous(strides, &sizes) {
                    run_contiguous(avx, out, $($a,)* 0..head, &vectorized);
                    run_contiguous(avx, out, $($a,)* head..n, &scalar);
                } else {
                    let mut j = 0;
                    let out = (out, strides[j] as isize);
                    $(j += 1; let $a = ($a, strides[j] as isize);)*
                    let _ = j;
                    run_strided(out, $($a,)* 0..head, &vectorized);
                    run_strided(out, $($a,)* head..n, &scalar);
                }
            })
        }
    };
}

/// Whether PyTorch's `VectorizedLoop2d` vectorizes an inner loop with
/// these byte strides (output first) for operands of these element sizes:
/// every operand contiguous, or exactly one input broadcast (stride 0) and
/// the other operands contiguous.
#[inline(always)]
fn vectorizes(strides: &[i64], sizes: &[usize]) -> bool {
    contiguous(strides, sizes)
        || (1..strides.len()).any(|s| {
            strides[s] == 0
                && strides
                    .iter()
                    .zip(sizes)
                    .enumerate()
                    .all(|(j, (st, z))| j == s || *st == *z as i64)
        })
}

define_loop!(unary, unary_vec, unary_avx2, unary_contig; a: A);
define_loop!(binary, binary_vec, binary_avx2, binary_contig; a: A, b: B);
define_loop!(ternary, ternary_vec, ternary_avx2, ternary_contig; a: A, b: B, c: C);
