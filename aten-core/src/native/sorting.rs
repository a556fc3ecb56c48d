//! `sort` and `sort.values` (CompositeExplicitAutograd): `sort.stable`
//! with `stable=False`, PyTorch's default (the CPU kernel's sort is stable
//! either way); `argsort` and its stable forms (CompositeImplicitAutograd):
//! `sort`'s indices.

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

/// `argsort(self, dim, descending)` (CompositeImplicitAutograd): `sort`'s
/// indices.
pub fn argsort(self_: &Tensor, dim: i64, descending: bool) -> Result<Tensor> {
    Ok(ops::sort_with(self_, ops::SortOptions { dim, descending })?.1)
}

/// `argsort.stable(self, *, stable, dim, descending)`
/// (CompositeImplicitAutograd).
pub fn argsort_stable(self_: &Tensor, stable: bool, dim: i64, descending: bool) -> Result<Tensor> {
    let options = ops::SortStableOptions { dim, descending };
    Ok(ops::sort_stable_with(self_, Some(stable), options)?.1)
}

/// `argsort.stable_out(self, *, stable, dim, descending, out)`
/// (CompositeImplicitAutograd): `sort.values_stable` into a scratch
/// values tensor and `out`.
pub fn argsort_stable_out(
    self_: &Tensor,
    stable: bool,
    dim: i64,
    descending: bool,
    out: &Tensor,
) -> Result<Tensor> {
    let values = ops::empty_like(self_)?;
    ops::sort_values_stable(self_, Some(stable), dim, descending, &values, out)?;
    Ok(out.clone())
}
