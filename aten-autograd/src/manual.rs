//! The Autograd kernels written by hand (PyTorch's `VariableTypeManual`):
//! `detach`, whose result leaves the graph, and `detach_`, which takes its
//! argument out of the graph in place. The generators skip these
//! operators.

use aten_core::{ops, Tensor};
use aten_dispatch::CppFunction;
use c10_core::dispatch_key_set::{AFTER_AD_INPLACE_OR_VIEW_KEYSET, AFTER_AUTOGRAD_KEYSET};
use c10_core::{AutoDispatchBelowADInplaceOrView, DispatchKeySet, Result};

use crate::meta;

/// `detach`: the call below autograd, whose result has no autograd state
/// (and so neither a `grad_fn` nor forward gradients).
fn detach(ks: DispatchKeySet, self_: &Tensor) -> Result<Tensor> {
    let _guard = AutoDispatchBelowADInplaceOrView::new();
    ops::detach_op()?.redispatch(ks.intersection(AFTER_AUTOGRAD_KEYSET), (self_,))
}

/// `detach_`: a view cannot be detached in place; anything else stops
/// requiring grad and forgets its `grad_fn`.
fn detach_(ks: DispatchKeySet, self_: &Tensor) -> Result<Tensor> {
    meta::detach_in_place(self_)?;
    let _guard = AutoDispatchBelowADInplaceOrView::new();
    ops::detach_op_()?.redispatch(ks.intersection(AFTER_AUTOGRAD_KEYSET), (self_,))
}

/// `detach` at ADInplaceOrView (PyTorch's `ADInplaceOrView::detach`): the
/// call below, whose result is an alias outside the graph (the Autograd
/// kernel above already leaves it without autograd state).
fn detach_ad_inplace_or_view(ks: DispatchKeySet, self_: &Tensor) -> Result<Tensor> {
    let _guard = AutoDispatchBelowADInplaceOrView::new();
    ops::detach_op()?.redispatch(ks.intersection(AFTER_AD_INPLACE_OR_VIEW_KEYSET), (self_,))
}

aten_dispatch::torch_library_impl!(aten, Autograd, |m| {
    m.impl_("detach", CppFunction::from_unboxed(detach))?;
    m.impl_("detach_", CppFunction::from_unboxed(detach_))?;
    Ok(())
});

aten_dispatch::torch_library_impl!(aten, ADInplaceOrView, |m| {
    m.impl_(
        "detach",
        CppFunction::from_unboxed(detach_ad_inplace_or_view),
    )?;
    Ok(())
});
