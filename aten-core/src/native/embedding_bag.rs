//! `_embedding_bag`'s argument checks and output layout, shared by the
//! CPU kernel (which begins with [`embedding_bag_setup`]) and the Meta
//! kernel ([`_embedding_bag_meta`](crate::meta::_embedding_bag_meta)).
//!
//! Bags are runs of `indices` starting at each offset; the four outputs
//! are PyTorch's CPU kernel's (`_embedding_bag_cpu_impl` with
//! `requires_grad`): the reduced rows `[bags, embedding_dim]`,
//! `offset2bag` (the bag of each index; empty on the fast `sum` path,
//! which does not compute it), `bag_size` (`[bags]`), and `max_indices`
//! (`[bags, embedding_dim]` in `max` mode, else `[bags]`). The index
//! outputs have the promoted dtype of `indices` and `offsets`.

use c10_core::{Error, Result, ScalarType};

use crate::generated::ops;
use crate::meta::{check_scalar_types, tensor_type_name, torch_check};
use crate::tensor_iterator::convert::to_dtype_if_needed;
use crate::Tensor;

/// The reduction of a bag (`mode`: 0, 1, 2).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum EmbeddingBagMode {
    /// `0`: the sum of the bag's rows (weighted by `per_sample_weights`).
    Sum,
    /// `1`: their mean.
    Mean,
    /// `2`: their elementwise maximum.
    Max,
}

impl EmbeddingBagMode {
    /// The mode numbered `mode`.
    pub fn from_int(mode: i64) -> Result<EmbeddingBagMode> {
        Ok(match mode {
            0 => EmbeddingBagMode::Sum,
            1 => EmbeddingBagMode::Mean,
            2 => EmbeddingBagMode::Max,
            _ => {
                return Err(Error::runtime(format!(
                    "embedding_bag: mode has to be 0 (sum), 1 (mean) or 2 (max), but got {mode}"
                )))
            }
        })
    }
}

/// What [`embedding_bag_setup`] hands the kernel: the checked arguments
/// and the allocated outputs.
#[derive(Clone, Debug)]
pub struct EmbeddingBagSetup {
    /// The reduction.
    pub mode: EmbeddingBagMode,
    /// `indices` in the promoted index dtype.
    pub indices: Tensor,
    /// `offsets` in the promoted index dtype.
    pub offsets: Tensor,
    /// The number of bags (`offsets` minus the last with
    /// `include_last_offset`).
    pub num_bags: i64,
    /// Whether PyTorch takes its fast `index_select_add` path: float32,
    /// float16 or bfloat16 weights with unit stride along rows, no
    /// `padding_idx`, unit-stride per-sample weights. It skips
    /// `offset2bag` in `sum` mode and reports bad indices differently.
    pub fast_path: bool,
    /// `output`, `offset2bag`, `bag_size`, `max_indices`.
    pub outputs: [Tensor; 4],
}

/// The ranks `_embedding_bag_cpu_impl` accepts: 1-d or 2-d indices, 1-d
/// offsets with 1-d indices, a 2-d weight.
fn check_ranks(weight: &Tensor, indices: &Tensor, offsets: &Tensor) -> Result<()> {
    if !matches!(indices.dim(), 1 | 2) {
        return Err(Error::runtime(format!(
            "input has to be a 1D or 2D Tensor, but got Tensor of dimension {}",
            indices.dim()
        )));
    }
    if indices.dim() == 1 && offsets.dim() != 1 {
        return Err(Error::runtime(format!(
            "offsets has to be a 1D Tensor, but got Tensor of dimension {}",
            offsets.dim()
        )));
    }
    if weight.dim() != 2 {
        return Err(Error::runtime(format!(
            "weight has to be a 2D Tensor, but got Tensor of dimension {}",
            weight.dim()
        )));
    }
    Ok(())
}

/// `promoteIndicesAndOffsets`: both in their promoted dtype, which must be
/// int64 or int32.
fn promote_indices_and_offsets(
    indices: &Tensor,
    offsets: &Tensor,
) -> Result<(Tensor, Tensor, ScalarType)> {
    let (Some(index_dtype), Some(offset_dtype)) = (indices.dtype(), offsets.dtype()) else {
        return Err(Error::runtime("undefined tensor"));
    };
    let common = c10_core::type_promotion::promote_types(offset_dtype, index_dtype)?;
    let indices = to_dtype_if_needed(indices, common)?;
    let offsets = to_dtype_if_needed(offsets, common)?;
    let index_types = [ScalarType::Long, ScalarType::Int];
    check_scalar_types(&indices, (1, "indices"), &index_types, "embedding_bag")?;
    check_scalar_types(&offsets, (1, "offsets"), &index_types, "embedding_bag")?;
    Ok((indices, offsets, common))
}

/// `per_sample_weights`: `sum` mode only, the weight's dtype, one value
/// per index.
fn check_per_sample_weights(
    psw: &Tensor,
    mode: EmbeddingBagMode,
    weight: &Tensor,
    indices: &Tensor,
) -> Result<()> {
    if mode != EmbeddingBagMode::Sum {
        return Err(Error::runtime(
            "embedding_bag: per_sample_weights only supported with mode='sum'",
        ));
    }
    if psw.dtype() != weight.dtype() {
        return Err(Error::runtime(format!(
            "Expected tensor for argument #1 'weight' to have the same type as tensor for argument #1 'per_sample_weights'; but type {} does not equal {} (while checking arguments for embedding_bag)",
            tensor_type_name(weight),
            tensor_type_name(psw)
        )));
    }
    torch_check(psw.dim() == 1, "per_sample_weights.value().dim() == 1")?;
    torch_check(
        psw.numel() == indices.numel(),
        "per_sample_weights.value().numel() == indices.numel()",
    )
}

/// The four outputs as `_embedding_bag_cpu_impl` allocates them: `output`,
/// `offset2bag` (`offset2bag_len` long), `bag_size`, `max_indices` (per
/// element in `max` mode).
fn allocate_outputs(
    weight: &Tensor,
    mode: EmbeddingBagMode,
    num_bags: i64,
    offset2bag_len: i64,
    index_dtype: ScalarType,
) -> Result<[Tensor; 4]> {
    let embedding_dim = weight.size(1)?;
    let device = weight.device();
    let new = |sizes: &[i64], dtype: ScalarType| {
        ops::empty_memory_format_with(
            sizes,
            ops::EmptyMemoryFormatOptions {
                dtype: Some(dtype),
                device,
                ..Default::default()
            },
        )
    };
    let max_indices_sizes = if mode == EmbeddingBagMode::Max {
        vec![num_bags, embedding_dim]
    } else {
        vec![num_bags]
    };
    Ok([
        new(
            &[num_bags, embedding_dim],
            weight.dtype().unwrap_or(ScalarType::Float),
        )?,
        new(&[offset2bag_len], index_dtype)?,
        new(&[num_bags], index_dtype)?,
        new(&max_indices_sizes, index_dtype)?,
    ])
}

/// The checks of `_embedding_bag_cpu_impl` that need no data, and the
/// outputs it allocates (`offsets[0] == 0` and `offsets[-1] <=
/// indices.size(0)` are the kernel's, which reads them).
#[allow(clippy::too_many_arguments)]
pub fn embedding_bag_setup(
    weight: &Tensor,
    indices: &Tensor,
    offsets: &Tensor,
    mode: i64,
    per_sample_weights: Option<&Tensor>,
    include_last_offset: bool,
    padding_idx: i64,
) -> Result<EmbeddingBagSetup> {
    check_ranks(weight, indices, offsets)?;
    let (indices, offsets, common) = promote_indices_and_offsets(indices, offsets)?;
    check_scalar_types(
        weight,
        (1, "weight"),
        &[
            ScalarType::Half,
            ScalarType::BFloat16,
            ScalarType::Float,
            ScalarType::Double,
        ],
        "embedding_bag",
    )?;
    let mode = EmbeddingBagMode::from_int(mode)?;
    if let Some(psw) = per_sample_weights {
        check_per_sample_weights(psw, mode, weight, &indices)?;
    }
    let offsets_len = offsets.size(0)?;
    if include_last_offset && offsets_len < 1 {
        return Err(Error::runtime(
            "include_last_offset: number of offset should be at least 1",
        ));
    }
    let num_bags = offsets_len - i64::from(include_last_offset);
    let weight_dtype = weight.dtype().unwrap_or(ScalarType::Float);
    let fast_path = matches!(
        weight_dtype,
        ScalarType::Float | ScalarType::Half | ScalarType::BFloat16
    ) && weight.stride(1)? == 1
        && padding_idx < 0
        && per_sample_weights.map_or(Ok(true), |p| p.stride(0).map(|s| s == 1))?;
    let offset2bag_len = if mode != EmbeddingBagMode::Sum || !fast_path {
        indices.size(0)?
    } else {
        0
    };
    let outputs = allocate_outputs(weight, mode, num_bags, offset2bag_len, common)?;
    Ok(EmbeddingBagSetup {
        mode,
        indices,
        offsets,
        num_bags,
        fast_path,
        outputs,
    })
}
