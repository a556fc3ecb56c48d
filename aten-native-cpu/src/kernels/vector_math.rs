//! Float32 math functions written so that a loop vectorizes them: no
//! library call, no branch, no float-to-int conversion. PyTorch's
//! vectorized CPU kernels use Sleef's `expf_u10` and `tanhf_u10` (within 1
//! ULP) for the same reason.
//!
//! [`exp_f32`], within 1 ULP of the exact value where the result is normal
//! (measured over the range by the tests): the argument is split as
//! `x = n * ln 2 + r` with `|r| <= ln 2 / 2` (`ln 2` in two parts, so `r`
//! is exact to float32's precision), `e^r` is a degree-7 polynomial
//! (Cephes' `expf` coefficients) and `2^n` is made from the exponent bits,
//! in two factors so that results below the normal range round once, as
//! subnormals. Beyond the arguments where the result is 0 or infinite the
//! argument is clamped, which keeps those limits; NaN stays NaN.
//!
//! [`tanh_f32`], within 2 ULP: an odd polynomial below 0.625 in
//! magnitude (Cephes' `tanhf`), `1 - 2 / (e^(2|x|) + 1)` with the sign of
//! `x` above, where the result is at least 0.55 and the subtraction loses
//! nothing.

/// `e^x` for float32 (see the module docs).
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    // e^-104 is below half the smallest subnormal; e^88.8 above the
    // largest finite float32. `clamp` keeps NaN.
    let x = x.clamp(-104.0, 88.8);
    // Round to nearest by the 1.5 * 2^23 trick (exact for |v| < 2^22),
    // which needs no rounding instruction.
    const SHIFTER: f32 = 12_582_912.0;
    let shifted = x * std::f32::consts::LOG2_E + SHIFTER;
    let n = shifted - SHIFTER;
    // ln 2 = LN2_HI + LN2_LO, LN2_HI with few enough bits that `n * LN2_HI`
    // is exact.
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    let r = (x - n * LN2_HI) - n * LN2_LO;
    let p = 1.987_569_1e-4;
    let p = p * r + 1.398_199_9e-3;
    let p = p * r + 8.333_452e-3;
    let p = p * r + 4.166_579_6e-2;
    let p = p * r + 1.666_666_5e-1;
    let p = p * r + 0.5;
    let e_r = p * (r * r) + r + 1.0;
    // `n` as an integer: `shifted` holds it in its low mantissa bits
    // (`as i32`, which saturates, would not vectorize: one lane at a time
    // with a NaN test each). It lies in [-150, 129]: two factors of at
    // most 2^65 and at least 2^-75 each, both normal. For a NaN argument
    // the bits are meaningless and `e_r` is NaN, which the product keeps.
    let n = (shifted.to_bits() as i32).wrapping_sub(SHIFTER.to_bits() as i32);
    let half = n >> 1;
    let scale = |k: i32| f32::from_bits((k.wrapping_add(127) as u32) << 23);
    e_r * scale(half) * scale(n - half)
}

/// `tanh(x)` for float32 (see the module docs).
#[inline(always)]
pub fn tanh_f32(x: f32) -> f32 {
    let a = x.abs();
    let z = x * x;
    let p = -5.704_988_7e-3;
    let p = p * z + 2.063_909e-2;
    let p = p * z - 5.373_971_6e-2;
    let p = p * z + 1.333_144_2e-1;
    let p = p * z - 3.333_328e-1;
    let small = p * z * x + x;
    // For a large or infinite `|x|`, `e` is infinite and the quotient 0.
    let e = exp_f32(2.0 * a);
    let large = 1.0 - 2.0 / (e + 1.0);
    // NaN fails the test and takes `large`, which is NaN. Both parts have
    // the sign of `x` but for `-0.0`, whose polynomial sums to `+0.0`.
    let y = if a < 0.625 { small } else { large };
    y.copysign(x)
}

#[cfg(test)]
mod tests {
    use super::{exp_f32, tanh_f32};

    /// Distance in units of the last place between two float32 values of
    /// one sign.
    fn ulps(a: f32, b: f32) -> u32 {
        (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs() as u32
    }

    #[test]
    fn exp_is_within_one_ulp_over_its_normal_range() {
        let mut worst = 0;
        let mut x = -103.9f32;
        while x < 88.7 {
            let exact = (x as f64).exp() as f32;
            let got = exp_f32(x);
            let u = ulps(got, exact);
            // Subnormal results carry fewer digits: compare absolutely.
            if exact >= f32::MIN_POSITIVE {
                worst = worst.max(u);
            } else {
                assert!(
                    (got - exact).abs() <= 2.0 * f32::from_bits(1),
                    "{x}: {got} vs {exact}"
                );
            }
            x += 0.000_731;
        }
        assert!(worst <= 1, "worst error {worst} ulps");
    }

    #[test]
    fn limits_and_special_values() {
        assert_eq!(exp_f32(0.0), 1.0);
        assert_eq!(exp_f32(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp_f32(-200.0), 0.0);
        assert_eq!(exp_f32(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp_f32(89.0), f32::INFINITY);
        assert!(exp_f32(88.72).is_finite());
        assert!(exp_f32(f32::NAN).is_nan());
        assert!(exp_f32(-103.0) > 0.0);
    }

    #[test]
    fn tanh_is_within_two_ulps() {
        let mut worst = 0;
        let mut x = -12.0f32;
        while x < 12.0 {
            let exact = (x as f64).tanh() as f32;
            let got = tanh_f32(x);
            assert_eq!(got.is_sign_negative(), exact.is_sign_negative(), "{x}");
            worst = worst.max(ulps(got.abs(), exact.abs()));
            x += 0.000_377;
        }
        // Tiny arguments, where tanh(x) is x.
        for x in [1e-30f32, -1e-20, 1e-7, f32::from_bits(1)] {
            assert_eq!(tanh_f32(x), x);
        }
        assert!(worst <= 2, "worst error {worst} ulps");
        assert_eq!(tanh_f32(0.0).to_bits(), 0.0f32.to_bits());
        assert_eq!(tanh_f32(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(tanh_f32(f32::INFINITY), 1.0);
        assert_eq!(tanh_f32(-100.0), -1.0);
        assert!(tanh_f32(f32::NAN).is_nan());
    }
}
