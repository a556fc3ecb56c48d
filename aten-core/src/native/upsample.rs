//! The `.vec` upsampling overloads (CompositeImplicitAutograd in
//! PyTorch): the output size from `output_size` or `scale_factors`
//! (`compute_output_size`), then the operator taking sizes and scales.

use c10_core::{Error, Result};

use crate::generated::ops;
use crate::Tensor;

/// PyTorch's `compute_output_size`: `output_size`, or each spatial size
/// times its scale factor (truncated); exactly one must be given.
pub fn compute_output_size(
    input_size: &[i64],
    output_size: Option<&[i64]>,
    scale_factors: Option<&[f64]>,
) -> Result<Vec<i64>> {
    // Negative below rank 2: then no list has the right length, and the
    // input's spatial sizes are never read.
    let spatial = input_size.len() as i64 - 2;
    match (output_size, scale_factors) {
        (Some(_), Some(_)) | (None, None) => Err(Error::runtime(
            "Must specify exactly one of output_size and scale_factors",
        )),
        (Some(o), None) => {
            if o.len() as i64 != spatial {
                return Err(Error::runtime(format!(
                    "It is expected output_size equals to {spatial}, but got size {}",
                    o.len()
                )));
            }
            Ok(o.to_vec())
        }
        (None, Some(s)) => {
            if s.len() as i64 != spatial {
                return Err(Error::runtime(format!(
                    "It is expected scale_factors equals to {spatial}, but got size {}",
                    s.len()
                )));
            }
            s.iter()
                .zip(input_size.iter().skip(2))
                .map(|(&f, &size)| {
                    let v = size as f64 * f;
                    // `c10::checked_convert<int64_t, double>`.
                    if !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&v) {
                        Err(Error::runtime(
                            "value cannot be converted to type int64_t without overflow",
                        ))
                    } else {
                        Ok(v as i64)
                    }
                })
                .collect()
        }
    }
}

/// Element `i` of `scale_factors`, if given.
fn scale_value(scale_factors: Option<&[f64]>, i: usize) -> Option<f64> {
    scale_factors.and_then(|s| s.get(i).copied())
}

/// `upsample_nearest2d.vec(input, output_size, scale_factors)`.
pub fn upsample_nearest2d_vec(
    input: &Tensor,
    output_size: Option<&[i64]>,
    scale_factors: Option<&[f64]>,
) -> Result<Tensor> {
    let osize = compute_output_size(&input.sizes(), output_size, scale_factors)?;
    ops::upsample_nearest2d_with(
        input,
        &osize,
        ops::UpsampleNearest2dOptions {
            scales_h: scale_value(scale_factors, 0),
            scales_w: scale_value(scale_factors, 1),
        },
    )
}

/// `upsample_bilinear2d.vec(input, output_size, align_corners,
/// scale_factors)`.
pub fn upsample_bilinear2d_vec(
    input: &Tensor,
    output_size: Option<&[i64]>,
    align_corners: bool,
    scale_factors: Option<&[f64]>,
) -> Result<Tensor> {
    let osize = compute_output_size(&input.sizes(), output_size, scale_factors)?;
    ops::upsample_bilinear2d_with(
        input,
        &osize,
        align_corners,
        ops::UpsampleBilinear2dOptions {
            scales_h: scale_value(scale_factors, 0),
            scales_w: scale_value(scale_factors, 1),
        },
    )
}

/// `upsample_bicubic2d.vec(input, output_size, align_corners,
/// scale_factors)`.
pub fn upsample_bicubic2d_vec(
    input: &Tensor,
    output_size: Option<&[i64]>,
    align_corners: bool,
    scale_factors: Option<&[f64]>,
) -> Result<Tensor> {
    let osize = compute_output_size(&input.sizes(), output_size, scale_factors)?;
    ops::upsample_bicubic2d_with(
        input,
        &osize,
        align_corners,
        ops::UpsampleBicubic2dOptions {
            scales_h: scale_value(scale_factors, 0),
            scales_w: scale_value(scale_factors, 1),
        },
    )
}
