//! Meta functions of the reflection and replication padding families
//! (`reflection_pad{1,2,3}d`, `replication_pad{2,3}d`): PyTorch's shape
//! checks (`padding::check_valid_input`, the reflection limit), the padded
//! shape, and the output's memory format. [`pad_source_index`] is the
//! index rule a backend's kernel reads back.

use c10_core::{Error, MemoryFormat, Result};

use super::{dtype_and_device, new_strided};
use crate::native::{dims::fmt_list, factories::strides_for};
use crate::structured::{MetaOutput, SetOutput};
use crate::Tensor;

/// How a padding operator fills the border.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PadMode {
    /// The input mirrored at its edges (the edge itself not repeated).
    Reflect,
    /// The edge element repeated.
    Replicate,
}

/// Which memory format the padded output takes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PadLayout {
    /// Always contiguous.
    Contiguous,
    /// The input's suggested format for a batched input, else contiguous.
    SuggestedWhenBatched,
    /// The input's suggested format.
    Suggested,
}

/// The input index that output index `o` of a padded dimension of
/// `size` elements reads (`pad_before` elements added in front; negative
/// paddings crop).
/// An index outside the input (possible only with paddings no valid
/// call has) comes back as `-1`.
pub fn pad_source_index(mode: PadMode, o: i64, size: i64, pad_before: i64) -> i64 {
    let (i, size) = (i128::from(o) - i128::from(pad_before), i128::from(size));
    let source = match mode {
        PadMode::Replicate => i.clamp(0, (size - 1).max(0)),
        PadMode::Reflect if i < 0 => -i,
        PadMode::Reflect if i >= size => 2 * (size - 1) - i,
        PadMode::Reflect => i,
    };
    i64::try_from(source).unwrap_or(-1)
}

/// The padded shape of `input` padded over its last `dim` dimensions
/// (`padding` pairs run from the last dimension inwards), after PyTorch's
/// checks.
pub fn pad_output_shape(
    input: &Tensor,
    padding: &[i64],
    dim: usize,
    mode: PadMode,
) -> Result<Vec<i64>> {
    if padding.len() != 2 * dim {
        return Err(Error::runtime(format!(
            "padding size is expected to be {}, but got: {}",
            2 * dim,
            padding.len()
        )));
    }
    let sizes = input.sizes();
    let ndim = sizes.len();
    let batch_mode = ndim == dim + 2;
    let first = usize::from(batch_mode);
    let valid = (batch_mode || ndim == dim + 1) && sizes[first..].iter().all(|&s| s != 0);
    if !valid {
        return Err(Error::runtime(format!(
            "Expected {}D or {}D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: {}",
            dim + 1,
            dim + 2,
            fmt_list(&sizes)
        )));
    }
    if mode == PadMode::Reflect {
        for i in 0..dim {
            let d = ndim - 1 - i;
            let (before, after) = (padding[2 * i], padding[2 * i + 1]);
            if before >= sizes[d] || after >= sizes[d] {
                return Err(Error::runtime(format!(
                    "Argument #{}: Padding size should be less than the corresponding input dimension, but got: padding ({before}, {after}) at dimension {d} of input {}",
                    4 + 2 * i,
                    fmt_list(&sizes)
                )));
            }
        }
    }
    let mut out = sizes.to_vec();
    let mut valid_output = true;
    for i in 0..dim {
        let d = ndim - 1 - i;
        let size =
            i128::from(sizes[d]) + i128::from(padding[2 * i]) + i128::from(padding[2 * i + 1]);
        out[d] = i64::try_from(size)
            .map_err(|_| Error::runtime("padding: the padded size overflows"))?;
        valid_output &= out[d] >= 1;
    }
    if !valid_output {
        let (ins, outs) = (&sizes[ndim - dim..], &out[ndim - dim..]);
        return Err(Error::runtime(match dim {
            1 => format!(
                "input (W: {}) is too small. Calculated output W: {}",
                ins[0], outs[0]
            ),
            2 => format!(
                "Calculated output H: {} W: {} must be >= 1 in every dimension (input H: {}, W: {})",
                outs[0], outs[1], ins[0], ins[1]
            ),
            _ => format!(
                "Calculated output D: {} H: {} W: {} must be >= 1 in every dimension (input D: {}, H: {}, W: {})",
                outs[0], outs[1], outs[2], ins[0], ins[1], ins[2]
            ),
        }));
    }
    Ok(out)
}

/// The strides of the padded output of shape `shape` for `input`.
pub fn pad_output_strides(input: &Tensor, shape: &[i64], layout: PadLayout) -> Result<Vec<i64>> {
    let sizes = input.sizes();
    let format = match layout {
        PadLayout::Contiguous => MemoryFormat::Contiguous,
        PadLayout::SuggestedWhenBatched if sizes.len() != 4 => MemoryFormat::Contiguous,
        _ => MemoryFormat::suggest(&sizes, &input.strides()),
    };
    strides_for(shape, format)
}

/// The meta function shared by the padding families.
fn pad(
    out: SetOutput<'_>,
    input: &Tensor,
    padding: &[i64],
    dim: usize,
    mode: PadMode,
    layout: PadLayout,
) -> Result<MetaOutput> {
    let (dtype, device) = dtype_and_device(input)?;
    let shape = pad_output_shape(input, padding, dim, mode)?;
    let strides = pad_output_strides(input, &shape, layout)?;
    out.set_outputs([(&shape, Some(&strides), dtype)], device)
}

/// `reflection_pad1d(self, padding)`: contiguous.
pub fn reflection_pad1d(out: SetOutput<'_>, self_: &Tensor, padding: &[i64]) -> Result<MetaOutput> {
    pad(
        out,
        self_,
        padding,
        1,
        PadMode::Reflect,
        PadLayout::Contiguous,
    )
}

/// `reflection_pad3d(self, padding)`: in the input's suggested format
/// (what PyTorch's CPU kernel gives).
pub fn reflection_pad3d(out: SetOutput<'_>, self_: &Tensor, padding: &[i64]) -> Result<MetaOutput> {
    pad(
        out,
        self_,
        padding,
        3,
        PadMode::Reflect,
        PadLayout::Suggested,
    )
}

/// `replication_pad1d(self, padding)`: contiguous.
pub fn replication_pad1d(
    out: SetOutput<'_>,
    self_: &Tensor,
    padding: &[i64],
) -> Result<MetaOutput> {
    pad(
        out,
        self_,
        padding,
        1,
        PadMode::Replicate,
        PadLayout::Contiguous,
    )
}

/// `replication_pad2d(self, padding)`: a batched input's suggested format.
pub fn replication_pad2d(
    out: SetOutput<'_>,
    self_: &Tensor,
    padding: &[i64],
) -> Result<MetaOutput> {
    pad(
        out,
        self_,
        padding,
        2,
        PadMode::Replicate,
        PadLayout::SuggestedWhenBatched,
    )
}

/// `replication_pad3d(self, padding)`: in the input's suggested format.
pub fn replication_pad3d(
    out: SetOutput<'_>,
    self_: &Tensor,
    padding: &[i64],
) -> Result<MetaOutput> {
    pad(
        out,
        self_,
        padding,
        3,
        PadMode::Replicate,
        PadLayout::Suggested,
    )
}

/// `reflection_pad2d(self, padding)`: a batched input's suggested memory
/// format.
pub fn reflection_pad2d_meta(self_: &Tensor, padding: &[i64]) -> Result<Tensor> {
    let (dtype, device) = dtype_and_device(self_)?;
    let shape = pad_output_shape(self_, padding, 2, PadMode::Reflect)?;
    let strides = pad_output_strides(self_, &shape, PadLayout::SuggestedWhenBatched)?;
    new_strided(&shape, &strides, dtype, device)
}
