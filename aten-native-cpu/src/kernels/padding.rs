//! Reflection and replication padding (`reflection_pad{1,2,3}d`,
//! `replication_pad{2,3}d`): each output element copies the input element
//! its index maps to, one index map per padded dimension
//! ([`pad_source_index`]), through `gather_offsets`.

use aten_core::meta::padding::{pad_source_index, PadMode};
use aten_core::structured::{copy_to_out, MetaOutput};
use aten_core::Tensor;
use c10_core::{Error, Result, ScalarType};

use super::gather_offsets::{gather_offsets, index_map_offsets};
use super::util::{dtype_of, layout_of, not_implemented, with_fresh_output_of};

/// Writes `input` padded over its last `padding.len() / 2` dimensions into
/// `out` (the shape the meta function computed; `fresh` when the call
/// allocated it).
fn pad_into(
    out: &Tensor,
    fresh: bool,
    input: &Tensor,
    padding: &[i64],
    mode: PadMode,
    name: &str,
) -> Result<()> {
    let dtype = dtype_of(input)?;
    if dtype == ScalarType::Bool {
        return Err(not_implemented(name, dtype));
    }
    let sl = layout_of(input)?;
    let (in_sizes, out_sizes) = (sl.sizes(), out.sizes());
    let ndim = in_sizes.len();
    let dim = padding.len() / 2;
    if out_sizes.len() != ndim || dim > ndim {
        return Err(Error::runtime(format!(
            "{name}: the input changed while it ran"
        )));
    }
    let mut maps = Vec::with_capacity(ndim);
    for d in 0..ndim {
        let map: Vec<i64> = if d < ndim - dim {
            if out_sizes[d] != in_sizes[d] {
                return Err(Error::runtime(format!(
                    "{name}: the input changed while it ran"
                )));
            }
            (0..in_sizes[d]).collect()
        } else {
            let before = padding[2 * (ndim - 1 - d)];
            (0..out_sizes[d])
                .map(|o| pad_source_index(mode, o, in_sizes[d], before))
                .collect()
        };
        maps.push(map);
    }
    let offsets = index_map_offsets(&sl, &maps)?;
    with_fresh_output_of(out, fresh, |o| gather_offsets(&sl, o, &offsets))
}

macro_rules! structured_pad {
    ($($(#[$doc:meta])* $name:ident => $mode:ident, $op:literal;)*) => {$(
        $(#[$doc])*
        pub fn $name(meta: &mut MetaOutput, self_: &Tensor, padding: &[i64]) -> Result<()> {
            pad_into(meta.output(), meta.is_fresh(), self_, padding, PadMode::$mode, $op)
        }
    )*};
}

structured_pad! {
    /// `reflection_pad1d.out` (the impl of the structured family).
    reflection_pad1d_out_cpu => Reflect, "reflection_pad1d";
    /// `reflection_pad3d.out`.
    reflection_pad3d_out_cpu => Reflect, "reflection_pad3d";
    /// `replication_pad1d.out`.
    replication_pad1d_out_cpu => Replicate, "replication_pad1d";
    /// `replication_pad2d.out`.
    replication_pad2d_out_cpu => Replicate, "replication_pad2d";
    /// `replication_pad3d.out`.
    replication_pad3d_out_cpu => Replicate, "replication_pad3d";
}

/// `reflection_pad2d(self, padding)` (not structured in PyTorch): a
/// batched input's suggested memory format.
pub fn reflection_pad2d_cpu(self_: &Tensor, padding: &[i64]) -> Result<Tensor> {
    let out = aten_core::meta::reflection_pad2d_meta(self_, padding)?;
    pad_into(
        &out,
        true,
        self_,
        padding,
        PadMode::Reflect,
        "reflection_pad2d",
    )?;
    Ok(out)
}

/// `reflection_pad2d.out(self, padding, *, out)`.
pub fn reflection_pad2d_out_cpu(self_: &Tensor, padding: &[i64], out: &Tensor) -> Result<Tensor> {
    let result = reflection_pad2d_cpu(self_, padding)?;
    copy_to_out(&result, out)?;
    Ok(out.clone())
}
