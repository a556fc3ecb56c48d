//! Meta kernels of `_fft_r2c` and `_fft_c2r`: the output the transform's
//! geometry describes.

use c10_core::Result;

use crate::native::fft::{fft_c2r_geometry, fft_r2c_geometry};
use crate::Tensor;

/// Meta kernel of `_fft_r2c`.
pub fn _fft_r2c_meta(
    self_: &Tensor,
    dim: &[i64],
    normalization: i64,
    onesided: bool,
) -> Result<Tensor> {
    fft_r2c_geometry(self_, dim, normalization, onesided)?.output(self_)
}

/// Meta kernel of `_fft_c2r`.
pub fn _fft_c2r_meta(
    self_: &Tensor,
    dim: &[i64],
    normalization: i64,
    last_dim_size: i64,
) -> Result<Tensor> {
    fft_c2r_geometry(self_, dim, normalization, last_dim_size)?.output(self_)
}
