//! 2-d upsampling: `upsample_nearest2d` (each output copies the input
//! element [`nearest_idx`] names, through `gather_offsets`) and
//! `upsample_bilinear2d` (each output blends the four input elements
//! around its source position, with PyTorch's index and weight
//! arithmetic, [`linear_source`]) and `upsample_bicubic2d` (the sixteen
//! around it, with cubic convolution weights): both through one separable
//! interpolation.

use aten_core::meta::upsample::{
    area_pixel_compute_scale, area_pixel_compute_source_index, linear_source, nearest_idx,
    IndexPrecision,
};
use aten_core::structured::MetaOutput;
use aten_core::Tensor;
use c10_core::{Error, Numeric, Result, ScalarType};

use super::gather_offsets::{gather_offsets, index_map_offsets};
use super::util::{dtype_of, layout_of, not_implemented, with_fresh_output, write_output};
use crate::dispatch_floating;

/// `upsample_nearest2d.out` (the impl of the structured family): uint8
/// and floating types.
pub fn upsample_nearest2d_out_cpu(
    meta: &mut MetaOutput,
    self_: &Tensor,
    _output_size: &[i64],
    scales_h: Option<f64>,
    scales_w: Option<f64>,
) -> Result<()> {
    let dtype = dtype_of(self_)?;
    if !(dtype.is_floating_point() || dtype == ScalarType::Byte) {
        return Err(not_implemented("upsample_nearest2d", dtype));
    }
    let sl = layout_of(self_)?;
    let (ins, outs) = (sl.sizes(), meta.output().sizes());
    if ins.len() != 4 || outs.len() != 4 || ins[..2] != outs[..2] {
        return Err(Error::runtime(
            "upsample_nearest2d: the input changed while it ran",
        ));
    }
    let scales = [None, None, scales_h, scales_w];
    let maps: Vec<Vec<i64>> = (0..4)
        .map(|d| {
            (0..outs[d])
                .map(|o| {
                    if d < 2 {
                        o
                    } else {
                        nearest_idx(o, ins[d], outs[d], scales[d])
                    }
                })
                .collect()
        })
        .collect();
    let offsets = index_map_offsets(&sl, &maps)?;
    with_fresh_output(meta, |o| gather_offsets(&sl, o, &offsets))
}

/// The input rows or columns one output index reads, with their weights.
type Taps<const N: usize> = [(usize, f64); N];

/// `upsample_bilinear2d.out` (the impl of the structured family):
/// floating types.
pub fn upsample_bilinear2d_out_cpu(
    meta: &mut MetaOutput,
    self_: &Tensor,
    _output_size: &[i64],
    align_corners: bool,
    scales_h: Option<f64>,
    scales_w: Option<f64>,
) -> Result<()> {
    separable_2d::<2>(meta, self_, "upsample_bilinear2d", |p, d, ins, outs| {
        let scale = [scales_h, scales_w][d];
        let s = area_pixel_compute_scale(p, ins, outs, align_corners, scale);
        // The weights stay in the index precision (`opmath_t`).
        (0..outs)
            .map(|o| {
                let (i0, i1, l0, l1) = linear_source(p, s, o, ins, outs, align_corners);
                [(i0 as usize, p.round(l0)), (i1 as usize, l1)]
            })
            .collect()
    })
}

/// `upsample_bicubic2d.out` (the impl of the structured family):
/// floating types. Each output blends the 4x4 input elements around its
/// source position (clamped at the borders) with the cubic convolution
/// weights of `A = -0.75`, stored in the tensor's dtype as PyTorch's CPU
/// kernel stores them.
pub fn upsample_bicubic2d_out_cpu(
    meta: &mut MetaOutput,
    self_: &Tensor,
    _output_size: &[i64],
    align_corners: bool,
    scales_h: Option<f64>,
    scales_w: Option<f64>,
) -> Result<()> {
    let dtype = dtype_of(self_)?;
    dispatch_floating!(dtype, "upsample_bicubic2d", T => {
        let stored = |w: f64| T::from_f64(w).to_f64();
        separable_2d::<4>(meta, self_, "upsample_bicubic2d", |p, d, ins, outs| {
            let scale = [scales_h, scales_w][d];
            let s = area_pixel_compute_scale(p, ins, outs, align_corners, scale);
            (0..outs)
                .map(|o| {
                    let real = area_pixel_compute_source_index(p, s, o, align_corners, true);
                    let i = (real.floor() as i64).min(ins - 1);
                    let t = p.round(real - i as f64).clamp(0.0, 1.0);
                    let w = cubic_coefficients(p, t);
                    std::array::from_fn(|j| {
                        ((i - 1 + j as i64).clamp(0, ins - 1) as usize, stored(w[j]))
                    })
                })
                .collect()
        })
    })
}

/// The four weights of PyTorch's `get_cubic_upsample_coefficients` for
/// the fractional position `t`, in the index precision, with the fused
/// multiply-adds PyTorch's compiled kernel computes them with.
fn cubic_coefficients(p: IndexPrecision, t: f64) -> [f64; 4] {
    const A: f64 = -0.75;
    let r = |v: f64| p.round(v);
    // `((A + 2) * x - (A + 3)) * x * x + 1`, for |x| <= 1.
    let near = |x: f64| r(r(r(p.mul_add(A + 2.0, x, -(A + 3.0)) * x) * x) + 1.0);
    // `((A * x - 5A) * x + 8A) * x - 4A`, for 1 < |x| < 2.
    let far = |x: f64| {
        let s = p.mul_add(p.mul_add(A, x, -5.0 * A), x, 8.0 * A);
        r(r(s * x) - 4.0 * A)
    };
    let u = r(1.0 - t);
    [far(r(t + 1.0)), near(t), near(u), far(r(u + 1.0))]
}

/// A 2-d interpolation of `self_` (`[n, c, h, w]`) into the meta
/// function's output: `taps(precision, axis, input_size, output_size)`
/// gives, per output row (axis 0) or column (axis 1), the `N` input ones
/// it reads and their weights; each output is
/// `Σ_h w_h · Σ_w w_w · x[h][w]`, summed in `f64`.
fn separable_2d<const N: usize>(
    meta: &mut MetaOutput,
    self_: &Tensor,
    name: &str,
    taps: impl Fn(IndexPrecision, usize, i64, i64) -> Vec<Taps<N>>,
) -> Result<()> {
    let dtype = dtype_of(self_)?;
    let (ins, outs) = (self_.sizes(), meta.output().sizes());
    if ins.len() != 4 || outs.len() != 4 || ins[..2] != outs[..2] {
        return Err(Error::runtime(format!(
            "{name}: the input changed while it ran"
        )));
    }
    let p = if dtype == ScalarType::Double {
        IndexPrecision::F64
    } else {
        IndexPrecision::F32
    };
    let (hs, ws) = (taps(p, 0, ins[2], outs[2]), taps(p, 1, ins[3], outs[3]));
    let fresh = meta.is_fresh();
    dispatch_floating!(dtype, name, T => {
        let x = self_.to_vec::<T>()?;
        let (ih, iw) = (ins[2] as usize, ins[3] as usize);
        let planes = (ins[0] * ins[1]) as usize;
        if x.len() != planes * ih * iw {
            return Err(Error::runtime(format!("{name}: the input changed while it ran")));
        }
        let mut y = Vec::with_capacity(planes * hs.len() * ws.len());
        for plane in x.chunks_exact(ih * iw) {
            for rows in &hs {
                for cols in &ws {
                    let v: f64 = rows
                        .iter()
                        .map(|&(h, wh)| {
                            let row = &plane[h * iw..][..iw];
                            wh * cols.iter().map(|&(w, ww)| ww * row[w].to_f64()).sum::<f64>()
                        })
                        .sum();
                    y.push(T::from_f64(v));
                }
            }
        }
        write_output(meta.output(), fresh, &y)
    })
}
