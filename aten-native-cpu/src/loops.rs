//! CPU loops over a [`TensorIterator`]: typed, elementwise, with a
//! contiguous fast path that the compiler vectorizes (and that runs in an
//! AVX2+FMA build of itself when the processor has those, chosen at run
//! time), and a strided path for everything else. The contiguous path reads
//! page by page with its inputs prefetched ahead ([`crate::prefetch`]);
//! runs of a few elements (eager calls on small tensors) skip that set-up.
//!
//! Iterations of at least `GRAIN_SIZE` elements are split over `rayon`'s
//! threads ([`TensorIterator::parallel_for_each`], through
//! [`aten_core::parallel::parallel_for`]).
//!
//! Outputs and inputs may alias (in-place operations), so the loops read and
//! write through raw pointers, never through overlapping slices.

use aten_core::tensor_iterator::TensorIterator;

use crate::prefetch::{page_elements, page_pieces, prefetch_read};
use c10_core::{Element, Error, Result, ScalarType};

fn check(iter: &TensorIterator<'_>, expected: &[ScalarType]) -> Result<()> {
    if iter.has_dtypes(expected) {
        return Ok(());
    }
    Err(dtype_mismatch(iter, expected))
}

/// The error of a loop instantiated for other dtypes than its operands'.
#[cold]
#[inline(never)]
fn dtype_mismatch(iter: &TensorIterator<'_>, expected: &[ScalarType]) -> Error {
    if iter.ntensors() < expected.len() {
        return Error::internal(format!(
            "CPU loop: the loop was instantiated for {} operands but the iteration has {}",
            expected.len(),
            iter.ntensors()
        ));
    }
    match expected
        .iter()
        .enumerate()
        .find(|&(i, d)| iter.dtype(i) != *d)
    {
        Some((i, dtype)) => Error::internal(format!(
            "CPU loop: operand {i} has dtype {} but the loop was instantiated for {dtype}",
            iter.dtype(i)
        )),
        None => Error::internal("CPU loop: operand dtypes do not match the loop"),
    }
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

/// Bytes of stack for the results of an in-place loop, staged before they
/// are written (see `define_loop!`): half a page, so the frame stays under
/// a page (a larger one is probed on every call).
const STAGE_BYTES: usize = 2048;

/// Stack room for [`STAGE_BYTES`] of results, aligned for every element
/// type.
#[repr(C, align(16))]
struct Staged([std::mem::MaybeUninit<u8>; STAGE_BYTES]);

impl Staged {
    #[inline(always)]
    fn new() -> Staged {
        Staged([std::mem::MaybeUninit::uninit(); STAGE_BYTES])
    }

    /// The room for `STAGE_BYTES / size_of::<T>()` values of `T` (an
    /// element type: at most 16-byte aligned, far smaller than the room).
    #[inline(always)]
    fn as_mut_ptr<T>(&mut self) -> *mut T {
        const {
            assert!(std::mem::align_of::<T>() <= 16);
            assert!(std::mem::size_of::<T>() <= STAGE_BYTES);
        };
        self.0.as_mut_ptr().cast::<T>()
    }
}

/// Runs shorter than this go element by element (see `define_loop!`).
const SHORT_RUN: usize = 8;

macro_rules! define_loop {
    ($name:ident, $name_vec:ident, $avx:ident, $contig:ident, $staged:ident, $staged_avx:ident;
     $($a:ident : $A:ident),*) => {
        #[inline(always)]
        fn $contig<O: Element, $($A: Element),*>(
            out: *mut O,
            $($a: *const $A,)*
            n: usize,
            f: &impl Fn($($A),*) -> O,
        ) {
            if n < SHORT_RUN {
                // A run shorter than a vector pass (eager calls on a few
                // elements): element by element, without the page pieces'
                // bookkeeping or the vector loop's set-up.
                for i in 0..n {
                    // SAFETY: the caller passes pointers valid for `n`
                    // consecutive elements of the declared types.
                    unsafe { out.add(i).write(f($($a.add(i).read()),*)) }
                }
                return;
            }
            let widest = 0 $(.max(std::mem::size_of::<$A>()))*;
            let piece = page_elements(widest.max(std::mem::size_of::<O>()), 1);
            for (piece, ahead) in page_pieces(n, piece) {
                if let Some(i) = ahead {
                    $(prefetch_read($a.wrapping_add(i));)*
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

        /// `$contig` for a loop whose output is one of its inputs (an
        /// in-place operation): that loop fails the compiler's run-time
        /// overlap check and runs one element at a time (`add_` at half
        /// the speed of `add`). Here the results go to the stack, which
        /// no input can overlap, so the loop is vectorized, and are then
        /// copied out a block at a time: every element is read before it
        /// is written, as the aliasing needs. Called out of line
        /// (`$staged_avx`, `staged_out_of_line`), so that the stack room
        /// stays out of the common loop's frame.
        #[inline(always)]
        fn $staged<O: Element, $($A: Element),*>(
            out: *mut O,
            $($a: *const $A,)*
            n: usize,
            f: &impl Fn($($A),*) -> O,
        ) {
            let mut staged = Staged::new();
            let buf = staged.as_mut_ptr::<O>();
            let block = STAGE_BYTES / std::mem::size_of::<O>();
            for (piece, ahead) in page_pieces(n, block) {
                if let Some(i) = ahead {
                    $(prefetch_read($a.wrapping_add(i));)*
                }
                let (start, len) = (piece.start, piece.len());
                for j in 0..len {
                    // SAFETY: the caller passes pointers valid for `n`
                    // consecutive elements of the declared types; `buf`
                    // has room for `block >= len` values of `O`.
                    unsafe { buf.add(j).write(f($($a.add(start + j).read()),*)) }
                }
                // SAFETY: `len` elements were written to `buf` above;
                // `out` is valid for them; the stack and the output do
                // not overlap.
                unsafe { std::ptr::copy_nonoverlapping(buf, out.add(start), len) };
            }
        }

        /// `$staged` compiled for AVX2 and FMA.
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        #[inline(never)]
        unsafe fn $staged_avx<O: Element, $($A: Element),*>(
            out: *mut O,
            $($a: *const $A,)*
            n: usize,
            f: &impl Fn($($A),*) -> O,
        ) {
            $staged(out, $($a,)* n, f)
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
                let in_place = false $(|| $a as usize == out as usize)*;
                #[cfg(target_arch = "x86_64")]
                if avx {
                    // SAFETY: AVX2 and FMA were detected; the pointers are
                    // valid for the `len` elements from `start` (the
                    // caller's range ends at the loop's length at most).
                    unsafe {
                        if in_place {
                            $staged_avx(out, $($a,)* len, f)
                        } else {
                            $avx(out, $($a,)* len, f)
                        }
                    };
                    return;
                }
                let _ = avx;
                /// `$staged`, out of line.
                #[inline(never)]
                fn staged_out_of_line<O: Element, $($A: Element),*>(
                    out: *mut O,
                    $($a: *const $A,)*
                    n: usize,
                    f: &impl Fn($($A),*) -> O,
                ) {
                    $staged(out, $($a,)* n, f)
                }
                if in_place {
                    staged_out_of_line(out, $($a,)* len, f);
                } else {
                    $contig(out, $($a,)* len, f);
                }
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
                if contiguous(strides, &sizes) {
                    let head = whole_blocks(n, block);
                    run_contiguous(avx, out, $($a,)* 0..head, &vectorized);
                    run_contiguous(avx, out, $($a,)* head..n, &scalar);
                } else {
                    let head = if vectorizes(strides, &sizes) { whole_blocks(n, block) } else { 0 };
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

/// The elements of `n` in whole blocks of `block` (at least 1). A loop
/// shorter than a block (every one-element eager call) skips the division.
#[inline(always)]
fn whole_blocks(n: usize, block: usize) -> usize {
    if n < block {
        0
    } else {
        n / block * block
    }
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

define_loop!(unary, unary_vec, unary_avx2, unary_contig, unary_staged, unary_staged_avx2;
    a: A);
define_loop!(binary, binary_vec, binary_avx2, binary_contig, binary_staged, binary_staged_avx2;
    a: A, b: B);
define_loop!(ternary, ternary_vec, ternary_avx2, ternary_contig, ternary_staged,
    ternary_staged_avx2; a: A, b: B, c: C);

#[cfg(test)]
mod tests {
    use super::*;
    use aten_core::tensor_iterator::TensorIteratorConfig;
    use aten_core::Tensor;

    fn ramp(n: usize, scale: f32) -> Tensor {
        let v: Vec<f32> = (0..n).map(|i| i as f32 * scale).collect();
        Tensor::from_slice(&v, &[n as i64]).unwrap()
    }

    #[test]
    fn runs_of_every_length_short_and_long_allocated_and_in_place() {
        for n in 0..40 {
            let (a, b) = (ramp(n, 1.0), ramp(n, 10.0));
            let want: Vec<f32> = (0..n).map(|i| i as f32 * 11.0).collect();
            let mut it = TensorIteratorConfig::binary_op(None, &a, &b)
                .build()
                .unwrap();
            binary::<f32, f32, f32>(&mut it, |x, y| x + y).unwrap();
            assert_eq!(it.into_output(0).to_vec::<f32>().unwrap(), want, "n = {n}");
            let mut it = TensorIteratorConfig::binary_op(Some(&a), &a, &b)
                .build()
                .unwrap();
            binary::<f32, f32, f32>(&mut it, |x, y| x + y).unwrap();
            drop(it);
            assert_eq!(a.to_vec::<f32>().unwrap(), want, "in place, n = {n}");
        }
    }

    #[test]
    fn a_loop_for_other_dtypes_or_more_operands_is_an_error() {
        let (a, b) = (ramp(3, 1.0), ramp(3, 1.0));
        let mut it = TensorIteratorConfig::binary_op(None, &a, &b)
            .build()
            .unwrap();
        let err = binary::<f64, f64, f64>(&mut it, |x, y| x + y).unwrap_err();
        assert!(err.message().contains("operand 0 has dtype Float"), "{err}");
        let err = ternary::<f32, f32, f32, f32>(&mut it, |x, y, z| x + y + z).unwrap_err();
        assert!(err.message().contains("for 4 operands"), "{err}");
    }
}
