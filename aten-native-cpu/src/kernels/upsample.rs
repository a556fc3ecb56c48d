//! 2-d upsampling: `upsample_nearest2d` (each output copies the input
//! element [`nearest_idx`] names, through `gather_offsets`) and
//! `upsample_bilinear2d` (each output blends the four input elements
//! around its source position, with PyTorch's index and weight
//! arithmetic, [`linear_source`]).

use aten_core::meta::upsample::{
    area_pixel_compute_scale, linear_source, nearest_idx, IndexPrecision,
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
    let dtype = dtype_of(self_)?;
    let (ins, outs) = (self_.sizes(), meta.output().sizes());
    if ins.len() != 4 || outs.len() != 4 || ins[..2] != outs[..2] {
        return Err(Error::runtime(
            "upsample_bilinear2d: the input changed while it ran",
        ));
    }
    let p = if dtype == ScalarType::Double {
        IndexPrecision::F64
    } else {
        IndexPrecision::F32
    };
    let fresh = meta.is_fresh();
    dispatch_floating!(dtype, "upsample_bilinear2d", T => {
        // The weights stay in the index precision (`opmath_t`).
        let axis = |d: usize, scale: Option<f64>| -> Vec<(usize, usize, f64, f64)> {
            let s = area_pixel_compute_scale(p, ins[d], outs[d], align_corners, scale);
            (0..outs[d])
                .map(|o| {
                    let (i0, i1, l0, l1) = linear_source(p, s, o, ins[d], outs[d], align_corners);
                    (i0 as usize, i1 as usize, p.round(l0), l1)
                })
                .collect()
        };
        let (hs, ws) = (axis(2, scales_h), axis(3, scales_w));
        let x = self_.to_vec::<T>()?;
        let (ih, iw) = (ins[2] as usize, ins[3] as usize);
        let planes = (ins[0] * ins[1]) as usize;
        if x.len() != planes * ih * iw {
            return Err(Error::runtime("upsample_bilinear2d: the input changed while it ran"));
        }
        let mut y = Vec::with_capacity(planes * hs.len() * ws.len());
        for plane in x.chunks_exact(ih * iw) {
            for &(h0, h1, lh0, lh1) in &hs {
                let (r0, r1) = (&plane[h0 * iw..][..iw], &plane[h1 * iw..][..iw]);
                for &(w0, w1, lw0, lw1) in &ws {
                    let top = lw0 * r0[w0].to_f64() + lw1 * r0[w1].to_f64();
                    let bottom = lw0 * r1[w0].to_f64() + lw1 * r1[w1].to_f64();
                    y.push(T::from_f64(lh0 * top + lh1 * bottom));
                }
            }
        }
        write_output(meta.output(), fresh, &y)
    })
}
