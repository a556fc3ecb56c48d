//! `grid_sampler_2d`: samples an `[N, C, H, W]` input at the normalized
//! `(x, y)` positions of an `[N, H_out, W_out, 2]` grid, with bilinear,
//! nearest or bicubic interpolation and zeros, border or reflection
//! padding, in the input's precision as PyTorch's scalar kernel computes
//! (`GridSampler.h`: unnormalize, clip and reflect the coordinates).

use std::ops::{Add, Div, Mul, Sub};

use aten_core::meta::grid_sampler_2d_meta;
use aten_core::Tensor;
use c10_core::{Error, Result, ScalarType};

use super::util::{dtype_of, not_implemented, write_output};

/// The float types the kernel computes in (`f32`, `f64`).
trait Real:
    Copy
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + c10_core::Element
{
    fn of(v: f64) -> Self;
    fn int(v: i64) -> Self;
    fn f64(self) -> f64;
    fn floor(self) -> Self;
    fn abs(self) -> Self;
    fn fmod(self, other: Self) -> Self;
    fn nearbyint(self) -> Self;
}

macro_rules! real {
    ($($t:ty),*) => {$(
        impl Real for $t {
            fn of(v: f64) -> Self { v as $t }
            fn int(v: i64) -> Self { v as $t }
            fn f64(self) -> f64 { self as f64 }
            fn floor(self) -> Self { <$t>::floor(self) }
            fn abs(self) -> Self { <$t>::abs(self) }
            fn fmod(self, other: Self) -> Self { self % other }
            fn nearbyint(self) -> Self { <$t>::round_ties_even(self) }
        }
    )*};
}
real!(f32, f64);

/// The interpolation modes (`GridSamplerInterpolation`).
#[derive(Copy, Clone, PartialEq, Eq)]
enum Interpolation {
    Bilinear,
    Nearest,
    Bicubic,
}

/// The padding modes (`GridSamplerPadding`).
#[derive(Copy, Clone, PartialEq, Eq)]
enum Padding {
    Zeros,
    Border,
    Reflection,
}

/// The sampling parameters.
#[derive(Copy, Clone)]
struct Sampler {
    interpolation: Interpolation,
    padding: Padding,
    align_corners: bool,
}

impl Sampler {
    /// `coord` in `[-1, 1]` mapped to pixel coordinates of a side of
    /// `size` (`grid_sampler_unnormalize`).
    fn unnormalize<T: Real>(&self, coord: T, size: i64) -> T {
        let (one, two) = (T::of(1.0), T::of(2.0));
        if self.align_corners {
            (coord + one) / two * T::int(size - 1)
        } else {
            ((coord + one) * T::int(size) - one) / two
        }
    }

    /// The padding's effect on a pixel coordinate (`compute_coordinates`).
    fn compute_coordinates<T: Real>(&self, coord: T, size: i64) -> T {
        let clip = |v: T| {
            let hi = T::int(size - 1);
            let v = if v > T::of(0.0) { v } else { T::of(0.0) };
            if hi < v {
                hi
            } else {
                v
            }
        };
        match self.padding {
            Padding::Zeros => coord,
            Padding::Border => clip(coord),
            Padding::Reflection => {
                let reflected = if self.align_corners {
                    reflect_coordinates(coord, 0, 2 * (size - 1))
                } else {
                    reflect_coordinates(coord, -1, 2 * size - 1)
                };
                clip(reflected)
            }
        }
    }

    /// `grid_sampler_compute_source_index`.
    fn source_index<T: Real>(&self, coord: T, size: i64) -> T {
        self.compute_coordinates(self.unnormalize(coord, size), size)
    }
}

/// `in` reflected into `[twice_low / 2, twice_high / 2]`
/// (`reflect_coordinates`).
fn reflect_coordinates<T: Real>(v: T, twice_low: i64, twice_high: i64) -> T {
    if twice_low == twice_high {
        return T::of(0.0);
    }
    let min = T::int(twice_low) / T::of(2.0);
    let span = T::int(twice_high - twice_low) / T::of(2.0);
    let v = (v - min).abs();
    let extra = v.fmod(span);
    let flips = (v / span).floor().f64();
    // `static_cast<int>(flips) % 2`: the parity of the (finite) count.
    if flips.is_finite() && (flips as i64) % 2 == 0 {
        extra + min
    } else {
        span - extra + min
    }
}

/// PyTorch's bicubic weights of the four taps around fraction `t`
/// (`get_cubic_upsample_coefficients`, `A = -0.75`).
fn cubic_coefficients<T: Real>(t: T) -> [T; 4] {
    let a = T::of(-0.75);
    let one = T::of(1.0);
    let c1 = |x: T| ((a + T::of(2.0)) * x - (a + T::of(3.0))) * x * x + one;
    let c2 = |x: T| ((a * x - T::of(5.0) * a) * x + T::of(8.0) * a) * x - T::of(4.0) * a;
    let x2 = one - t;
    [c2(t + one), c1(t), c1(x2), c2(x2 + one)]
}

/// Samples one `[C, H, W]` image (`image`, contiguous) at every position
/// of its grid (`grid`, `[H_out * W_out, 2]` contiguous), appending to
/// `out` in `[C, H_out * W_out]` order.
fn sample_image<T: Real>(
    s: &Sampler,
    image: &[T],
    (c, h, w): (usize, i64, i64),
    grid: &[T],
    out: &mut Vec<T>,
) {
    let positions = grid.len() / 2;
    let plane = (h * w) as usize;
    let at = |ch: usize, y: i64, x: i64| -> T {
        if y >= 0 && y < h && x >= 0 && x < w {
            image[ch * plane + (y * w + x) as usize]
        } else {
            T::of(0.0)
        }
    };
    let start = out.len();
    out.resize(start + c * positions, T::of(0.0));
    for p in 0..positions {
        let (gx, gy) = (grid[2 * p], grid[2 * p + 1]);
        match s.interpolation {
            Interpolation::Bilinear => {
                let ix = s.source_index(gx, w);
                let iy = s.source_index(gy, h);
                let (x0, y0) = (ix.floor(), iy.floor());
                let (x1, y1) = (x0 + T::of(1.0), y0 + T::of(1.0));
                let nw = (x1 - ix) * (y1 - iy);
                let ne = (ix - x0) * (y1 - iy);
                let sw = (x1 - ix) * (iy - y0);
                let se = (ix - x0) * (iy - y0);
                let (xi, yi) = (to_index(x0), to_index(y0));
                for ch in 0..c {
                    let v = at(ch, yi, xi) * nw
                        + at(ch, yi, xi.saturating_add(1)) * ne
                        + at(ch, yi.saturating_add(1), xi) * sw
                        + at(ch, yi.saturating_add(1), xi.saturating_add(1)) * se;
                    out[start + ch * positions + p] = v;
                }
            }
            Interpolation::Nearest => {
                let ix = to_index(s.source_index(gx, w).nearbyint());
                let iy = to_index(s.source_index(gy, h).nearbyint());
                for ch in 0..c {
                    out[start + ch * positions + p] = at(ch, iy, ix);
                }
            }
            Interpolation::Bicubic => {
                // Unnormalized only: the taps take the padding one by one.
                let ix = s.unnormalize(gx, w);
                let iy = s.unnormalize(gy, h);
                let (x0, y0) = (ix.floor(), iy.floor());
                let (cx, cy) = (cubic_coefficients(ix - x0), cubic_coefficients(iy - y0));
                let tap = |ch: usize, x: T, y: T| -> T {
                    let x = to_index(s.compute_coordinates(x, w));
                    let y = to_index(s.compute_coordinates(y, h));
                    at(ch, y, x)
                };
                for ch in 0..c {
                    let mut v = T::of(0.0);
                    for (i, wy) in cy.iter().enumerate() {
                        let y = y0 + T::int(i as i64 - 1);
                        let mut row = T::of(0.0);
                        for (j, wx) in cx.iter().enumerate() {
                            row = row + tap(ch, x0 + T::int(j as i64 - 1), y) * *wx;
                        }
                        v = v + row * *wy;
                    }
                    out[start + ch * positions + p] = v;
                }
            }
        }
    }
}

/// A pixel coordinate as an index (`static_cast<int64_t>`: truncation;
/// NaN and out-of-range values land outside every image).
fn to_index<T: Real>(v: T) -> i64 {
    let v = v.f64();
    if v.is_nan() {
        i64::MIN
    } else {
        v as i64
    }
}

/// `grid_sampler_2d(input, grid, interpolation_mode, padding_mode,
/// align_corners)`: `[N, C, H_out, W_out]`, contiguous.
pub fn grid_sampler_2d_cpu(
    input: &Tensor,
    grid: &Tensor,
    interpolation_mode: i64,
    padding_mode: i64,
    align_corners: bool,
) -> Result<Tensor> {
    let out = grid_sampler_2d_meta(input, grid, interpolation_mode, padding_mode, align_corners)?;
    let s = Sampler {
        interpolation: match interpolation_mode {
            0 => Interpolation::Bilinear,
            1 => Interpolation::Nearest,
            _ => Interpolation::Bicubic,
        },
        padding: match padding_mode {
            0 => Padding::Zeros,
            1 => Padding::Border,
            _ => Padding::Reflection,
        },
        align_corners,
    };
    let is = input.sizes();
    let (n, c, h, w) = (is[0] as usize, is[1] as usize, is[2], is[3]);
    let positions = (out.sizes()[2] * out.sizes()[3]) as usize;
    let dtype = dtype_of(input)?;
    macro_rules! run {
        ($t:ty) => {{
            let x = input.to_vec::<$t>()?;
            let g = grid.to_vec::<$t>()?;
            let image = c * (h * w) as usize;
            if x.len() != n * image || g.len() != n * positions * 2 {
                return Err(Error::runtime(
                    "grid_sampler_2d: an input changed while it ran",
                ));
            }
            let mut y = Vec::with_capacity(n * c * positions);
            for b in 0..n {
                sample_image(
                    &s,
                    &x[b * image..][..image],
                    (c, h, w),
                    &g[b * positions * 2..][..positions * 2],
                    &mut y,
                );
            }
            write_output(&out, true, &y)?;
        }};
    }
    match dtype {
        ScalarType::Float => run!(f32),
        ScalarType::Double => run!(f64),
        other => return Err(not_implemented("grid_sampler_2d_cpu", other)),
    }
    Ok(out)
}
