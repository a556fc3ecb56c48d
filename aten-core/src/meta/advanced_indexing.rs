//! Meta function of `index.Tensor` (PyTorch's `TORCH_PRECOMPUTE_META_FUNC2
//! (index, Tensor)`): the index checks, then a `TensorIterator` over the
//! restrided `self` and the reshaped indices lays the output out as
//! PyTorch's does (its strides follow the operands'). The state keeps the
//! normalized index ([`AdvancedIndex`]) for the backend's impl.

use c10_core::Result;

use crate::memory_overlap::{assert_no_internal_overlap, assert_no_overlap};
use crate::native::advanced_index::{check_index_count, AdvancedIndex};
use crate::structured::{SetOutput, StructuredMeta};
use crate::tensor_iterator::TensorIteratorConfig;
use crate::Tensor;

/// The structured state of `index.Tensor`: the output and the normalized
/// index (PyTorch's precomputed `sizes` and `strides` come from it).
#[derive(Clone, Debug)]
pub struct IndexState {
    output: Tensor,
    fresh: bool,
    /// The normalized index the impl reads.
    pub info: AdvancedIndex,
}

impl IndexState {
    /// The output the impl writes.
    #[inline]
    pub fn output(&self) -> &Tensor {
        &self.output
    }

    /// Whether the call allocated the output (no input overlaps it).
    #[inline]
    pub fn is_fresh(&self) -> bool {
        self.fresh
    }
}

impl StructuredMeta for IndexState {
    #[inline]
    fn into_output(self) -> Result<Tensor> {
        Ok(self.output)
    }
}

/// `index.Tensor(self, indices)`.
pub fn index_tensor(
    out: SetOutput<'_>,
    self_: &Tensor,
    indices: &[Option<Tensor>],
) -> Result<IndexState> {
    check_index_count(self_, indices.len())?;
    let given = out.maybe_get_output();
    if let Some(result) = given {
        assert_no_internal_overlap(result)?;
        assert_no_overlap(result, self_)?;
        for index in indices.iter().flatten() {
            assert_no_overlap(result, index)?;
        }
    }
    let info = AdvancedIndex::new(self_, indices)?;
    let dtype = info
        .src
        .dtype()
        .ok_or_else(|| c10_core::Error::runtime("undefined tensor"))?;
    let mut config = TensorIteratorConfig::default()
        .check_mem_overlap(false)
        .check_all_same_dtype(false)
        .add_output(given)
        .add_owned_input(info.restrided_src()?);
    for index in info.reshaped_indices()? {
        config = config.add_owned_input(index);
    }
    if given.is_none() {
        config = config.static_output_dtype(dtype);
    }
    let output = out.build(config)?.into_output(0);
    Ok(IndexState {
        output,
        fresh: given.is_none(),
        info,
    })
}
