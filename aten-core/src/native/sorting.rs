//! `sort` and `sort.values` (CompositeExplicitAutograd): `sort.stable`
//! with `stable=False`, PyTorch's default (the CPU kernel's sort is stable
//! either way).

use c10_core::Result;

use crate::generated::ops;
use crate::Tensor;

/// `sort(self, dim, descending)`.
pub fn sort(self_: &Tensor, dim: i64, descending: bool) -> Result<(Tensor, Tensor)> {
    ops::sort_stable_with(
        self_,
        Some(false),
        ops::SortStableOptions { dim, descending },
    )
}

/// `sort.values(self, dim, descending, *, values, indices)`.
pub fn sort_out(
    self_: &Tensor,
    dim: i64,
    descending: bool,
    values: &Tensor,
    indices: &Tensor,
) -> Result<(Tensor, Tensor)> {
    ops::sort_values_stable(self_, Some(false), dim, descending, values, indices)
}
