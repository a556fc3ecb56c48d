//! Meta kernel of `grid_sampler_2d`.

use c10_core::{Error, MemoryFormat, Result};

use super::{dtype_and_device, new_strided};
use crate::native::dims::fmt_list;
use crate::native::factories::strides_for;
use crate::Tensor;

/// `grid_sampler_2d(input, grid, interpolation_mode, padding_mode,
/// align_corners)`: `[N, C, H_out, W_out]` after PyTorch's
/// `check_grid_sampler_common` and `check_grid_sampler_2d`.
pub fn grid_sampler_2d_meta(
    input: &Tensor,
    grid: &Tensor,
    interpolation_mode: i64,
    padding_mode: i64,
    _align_corners: bool,
) -> Result<Tensor> {
    let (dtype, device) = dtype_and_device(input)?;
    let (gdtype, gdevice) = dtype_and_device(grid)?;
    if device != gdevice {
        return Err(Error::runtime(format!(
            "grid_sampler(): expected input and grid to be on same device, but input is on {device} and grid is on {gdevice}"
        )));
    }
    if dtype != gdtype {
        return Err(Error::runtime(format!(
            "grid_sampler(): expected input and grid to have same dtype, but input has {dtype} and grid has {gdtype}"
        )));
    }
    let (is, gs) = (input.sizes(), grid.sizes());
    if is.len() != gs.len() {
        return Err(Error::runtime(format!(
            "grid_sampler(): expected input and grid to have same number of dimensions, but got input with sizes {} and grid with sizes {}",
            fmt_list(&is),
            fmt_list(&gs)
        )));
    }
    if is.len() < 2 {
        return Err(Error::runtime(format!(
            "grid_sampler(): expected 4D input and grid with same number of dimensions, but got input with sizes {} and grid with sizes {}",
            fmt_list(&is),
            fmt_list(&gs)
        )));
    }
    if is[0] != gs[0] {
        return Err(Error::runtime(format!(
            "grid_sampler(): expected grid and input to have same batch size, but got input with sizes {} and grid with sizes {}",
            fmt_list(&is),
            fmt_list(&gs)
        )));
    }
    if gs[gs.len() - 1] != is.len() as i64 - 2 {
        return Err(Error::runtime(format!(
            "grid_sampler(): expected grid to have size {} in last dimension, but got grid with sizes {}",
            is.len() - 2,
            fmt_list(&gs)
        )));
    }
    for (d, &size) in is.iter().enumerate().skip(2) {
        if size <= 0 {
            return Err(Error::runtime(format!(
                "grid_sampler(): expected input to have non-empty spatial dimensions, but input has sizes {} with dimension {d} being empty",
                fmt_list(&is)
            )));
        }
    }
    if is.len() != 4 {
        return Err(Error::runtime(format!(
            "grid_sampler(): expected 4D input and grid with same number of dimensions, but got input with sizes {} and grid with sizes {}",
            fmt_list(&is),
            fmt_list(&gs)
        )));
    }
    if !(0..=2).contains(&interpolation_mode) {
        return Err(Error::runtime(format!(
            "grid_sampler(): invalid interpolation mode {interpolation_mode}"
        )));
    }
    if !(0..=2).contains(&padding_mode) {
        return Err(Error::runtime(format!(
            "grid_sampler(): invalid padding mode {padding_mode}"
        )));
    }
    let shape = [is[0], is[1], gs[1], gs[2]];
    new_strided(
        &shape,
        &strides_for(&shape, MemoryFormat::Contiguous)?,
        dtype,
        device,
    )
}
