//! Softmax and log-softmax of contiguous `float32` rows: the fast path of
//! `softmax.int` / `log_softmax.int` along a last dimension.
//!
//! Each row takes three passes: the maximum, `exp(x - max)` written to the
//! output while summing it (in `float32` lanes, as PyTorch's vectorized
//! kernel accumulates), and the scaling. The exponential is a
//! branch-free polynomial that the compiler vectorizes; the passes run in an
//! AVX2+FMA build of themselves when the processor has those.

use std::mem::MaybeUninit;

use crate::loops::has_avx2_fma;

/// `a * b + c`: one fused instruction in the FMA build (`FMA`), a multiply
/// and an add otherwise (where `mul_add` would be a library call).
#[inline(always)]
fn madd<const FMA: bool>(a: f32, b: f32, c: f32) -> f32 {
    if FMA {
        a.mul_add(b, c)
    } else {
        a * b + c
    }
}

/// `exp(x)` for `float32` within about two ulp (Cephes' `expf` range
/// reduction and polynomial): `0` below the smallest normal result, `NaN`
/// for `NaN`, the largest finite value's neighbourhood saturating.
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    exp::<false>(x)
}

#[inline(always)]
fn exp<const FMA: bool>(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    let underflow = x < -87.336_54;
    let xc = x.clamp(-87.336_54, 88.376_26);
    let n = madd::<FMA>(xc, LOG2E, 0.5).floor();
    let r = madd::<FMA>(-n, LN2_LO, madd::<FMA>(-n, LN2_HI, xc));
    let mut p = 1.987_569_1e-4f32;
    p = madd::<FMA>(p, r, 1.398_2e-3);
    p = madd::<FMA>(p, r, 8.333_452e-3);
    p = madd::<FMA>(p, r, 4.166_579_6e-2);
    p = madd::<FMA>(p, r, 1.666_666_5e-1);
    p = madd::<FMA>(p, r, 0.5);
    let y = madd::<FMA>(p, r * r, r + 1.0);
    // 2^n through the exponent bits: `n` is an integer in [-126, 128] after
    // the clamp, so `n + 127 + 2^23` holds `n + 127` in its low mantissa
    // bits (no float-to-int conversion, which keeps the loop vectorized).
    let biased = (n + 8_388_735.0).to_bits() & 0x7f_ffff;
    let scale = f32::from_bits(biased << 23);
    if underflow {
        0.0
    } else {
        y * scale
    }
}

/// Lanes of the row passes: two AVX2 vectors, so that independent
/// exponentials and sums overlap instead of waiting on each other (four
/// run out of registers).
const LANES: usize = 16;

/// The largest element of `x`, ignoring NaN: a NaN element still makes the
/// whole row NaN, through its exponential and the sum.
#[inline(always)]
fn row_max(x: &[f32]) -> f32 {
    let mut lanes = [f32::NEG_INFINITY; LANES];
    let chunks = x.chunks_exact(LANES);
    let tail = chunks.remainder();
    for c in chunks {
        for (l, v) in lanes.iter_mut().zip(c) {
            *l = if *v > *l { *v } else { *l };
        }
    }
    let m = lanes.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    tail.iter().copied().fold(m, f32::max)
}

/// Writes `exp(x - m)` to every element of `out` (as long as `x`) and
/// returns its sum (in `float32` lanes).
#[inline(always)]
fn exp_shifted_sum<const FMA: bool>(x: &[f32], m: f32, out: &mut [MaybeUninit<f32>]) -> f32 {
    let mut lanes = [0f32; LANES];
    let mut xs = x.chunks_exact(LANES);
    let mut os = out.chunks_exact_mut(LANES);
    for (c, o) in (&mut xs).zip(&mut os) {
        for ((l, o), v) in lanes.iter_mut().zip(o).zip(c) {
            let e = exp::<FMA>(*v - m);
            o.write(e);
            *l += e;
        }
    }
    let mut tail = 0f32;
    for (o, v) in os.into_remainder().iter_mut().zip(xs.remainder()) {
        let e = exp::<FMA>(*v - m);
        o.write(e);
        tail += e;
    }
    lanes.iter().sum::<f32>() + tail
}

#[inline(always)]
fn rows<const FMA: bool>(input: &[f32], out: &mut [MaybeUninit<f32>], n: usize, log: bool) {
    for (x, o) in input.chunks_exact(n).zip(out.chunks_exact_mut(n)) {
        let m = row_max(x);
        let s = exp_shifted_sum::<FMA>(x, m, o);
        // SAFETY: `exp_shifted_sum` wrote every element of the row (`x` and
        // `o` are both `n` long), and `f32` and `MaybeUninit<f32>` have one
        // layout.
        let o = unsafe { &mut *(o as *mut [MaybeUninit<f32>] as *mut [f32]) };
        if log {
            let shift = m + s.ln();
            for (o, v) in o.iter_mut().zip(x) {
                *o = *v - shift;
            }
        } else {
            let inv = 1.0 / s;
            for o in o.iter_mut() {
                *o *= inv;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn rows_avx2(input: &[f32], out: &mut [MaybeUninit<f32>], n: usize, log: bool) {
    rows::<true>(input, out, n, log)
}

/// Softmax (or log-softmax) of each `n`-element row of `input` into the
/// same row of `out`, which need not be initialized: every element of the
/// rows is written. `input.len()` and `out.len()` are equal multiples of
/// `n` (other lengths write only the whole rows both hold).
pub fn softmax_rows(input: &[f32], out: &mut [MaybeUninit<f32>], n: usize, log: bool) {
    if n == 0 {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if has_avx2_fma() {
        // SAFETY: AVX2 and FMA were detected at run time.
        unsafe { rows_avx2(input, out, n, log) };
        return;
    }
    rows::<false>(input, out, n, log)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a row kernel into a fresh, uninitialized output.
    fn run(
        kernel: fn(&[f32], &mut [MaybeUninit<f32>], usize, bool),
        input: &[f32],
        n: usize,
        log: bool,
    ) -> Vec<f32> {
        let mut out = vec![MaybeUninit::<f32>::uninit(); input.len()];
        kernel(input, &mut out, n, log);
        // SAFETY: the kernels write every element of whole rows, and
        // `input.len()` is a multiple of `n`.
        out.iter().map(|v| unsafe { v.assume_init() }).collect()
    }

    #[test]
    fn exp_is_within_two_ulp() {
        let mut x = -87.0f32;
        while x < 88.0 {
            let want = (x as f64).exp();
            let ulp = (want as f32).abs() * f32::EPSILON;
            // Both builds: with fused multiply-adds and without.
            for got in [exp::<false>(x), exp::<true>(x)] {
                assert!(
                    ((got as f64) - want).abs() <= 2.0 * ulp as f64,
                    "exp({x}) = {got}, want {want}"
                );
            }
            x += 0.013;
        }
        assert_eq!(exp_f32(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp_f32(-1000.0), 0.0);
        assert!(exp_f32(f32::NAN).is_nan());
        assert_eq!(exp_f32(0.0), 1.0);
    }

    #[test]
    fn rows_match_the_definition() {
        let input: Vec<f32> = (0..3 * 37)
            .map(|i| ((i * 7919) % 101) as f32 / 9.0 - 5.0)
            .collect();
        let out = run(softmax_rows, &input, 37, false);
        let log_out = run(softmax_rows, &input, 37, true);
        // The portable build agrees with the dispatched one.
        let portable = run(rows::<false>, &input, 37, false);
        let portable_log = run(rows::<false>, &input, 37, true);
        for (a, b) in out
            .iter()
            .zip(&portable)
            .chain(log_out.iter().zip(&portable_log))
        {
            assert!((a - b).abs() <= 1e-6 * a.abs().max(1.0), "{a} vs {b}");
        }
        for (r, x) in input.chunks(37).enumerate() {
            let m = x.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
            let s: f64 = x.iter().map(|v| (*v as f64 - m).exp()).sum();
            for (k, v) in x.iter().enumerate() {
                let want = (*v as f64 - m).exp() / s;
                assert!((out[r * 37 + k] as f64 - want).abs() < 1e-6 * want.max(1e-3));
                let want_log = *v as f64 - m - s.ln();
                assert!((log_out[r * 37 + k] as f64 - want_log).abs() < 1e-5);
            }
        }
    }

    #[test]
    fn nan_rows_are_nan_and_masked_entries_are_zero() {
        let input = [1.0, f32::NAN, 2.0, f32::NEG_INFINITY, 0.0, 1.0];
        let out = run(softmax_rows, &input, 3, false);
        assert!(out[..3].iter().all(|v| v.is_nan()));
        assert_eq!(out[3], 0.0);
        assert!((out[4] + out[5] - 1.0).abs() < 1e-6);
    }
}
