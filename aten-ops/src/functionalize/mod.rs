//! Functionalization (PyTorch's `FunctionalTensorWrapper`, the
//! `Functionalize` key's kernels and `torch.func.functionalize`): a program
//! with in-place and `out=` operators and views runs as a program of
//! functional operators, which is what graph capture under it records.
//!
//! - `wrapper`: the functional tensor wrapper and the storage its
//!   aliases share, with the update and replay rules;
//! - `view_meta`: one view of a chain, replayed forward and inverted;
//! - `kernel`: the `Functionalize` key's fallback;
//! - here: [`functionalize`], the guard that turns functionalization on for
//!   a thread ([`enable_functionalization`]), and the conversions
//!   (`_to_functional_tensor`, `_from_functional_tensor`, `_sync`).

use std::cell::Cell;
use std::sync::Arc;

use aten_boxing::IValue;
use c10_core::local_dispatch_key_set::{
    tls_is_dispatch_key_included, tls_set_dispatch_key_included,
};
use c10_core::{DispatchKey, Error, Result, TensorBase};

pub(crate) mod kernel;
pub(crate) mod view_meta;
pub(crate) mod wrapper;

use wrapper::FunctionalTensor;

thread_local! {
    static REAPPLY_VIEWS: Cell<bool> = const { Cell::new(false) };
}

/// Whether views taken now replay as views (else as their `*_copy` form).
pub(crate) fn reapply_views() -> bool {
    REAPPLY_VIEWS.with(Cell::get)
}

/// Functionalization on for this thread while it lives
/// (`torch._enable_functionalization(reapply_views=...)`): the
/// `Functionalize` key is included, so factories' results are wrapped too.
#[must_use = "functionalization is on only while the guard lives"]
pub struct FunctionalizationGuard {
    was_included: bool,
    was_reapplying: bool,
    _not_send: std::marker::PhantomData<*const ()>,
}

/// Turns functionalization on for this thread; `reapply_views` makes views
/// replay as views rather than as `*_copy` operators.
pub fn enable_functionalization(reapply_views: bool) -> FunctionalizationGuard {
    let guard = FunctionalizationGuard {
        was_included: tls_is_dispatch_key_included(DispatchKey::Functionalize),
        was_reapplying: REAPPLY_VIEWS.with(|r| r.replace(reapply_views)),
        _not_send: std::marker::PhantomData,
    };
    tls_set_dispatch_key_included(DispatchKey::Functionalize, true);
    guard
}

impl Drop for FunctionalizationGuard {
    fn drop(&mut self) {
        tls_set_dispatch_key_included(DispatchKey::Functionalize, self.was_included);
        REAPPLY_VIEWS.with(|r| r.set(self.was_reapplying));
    }
}

/// `torch._to_functional_tensor`: a wrapper of `t` with a storage of its
/// own.
pub fn to_functional_tensor(t: &TensorBase) -> Result<TensorBase> {
    if is_functional_tensor(t) {
        return Err(Error::runtime(
            "to_functional_tensor: the tensor is already a functional tensor",
        ));
    }
    wrapper::wrap_new(t)
}

/// `torch._from_functional_tensor`: the wrapper's value as it is (call
/// [`sync`] first to bring it up to date).
pub fn from_functional_tensor(t: &TensorBase) -> Result<TensorBase> {
    FunctionalTensor::of(t)
        .map(FunctionalTensor::value)
        .ok_or_else(|| Error::runtime("from_functional_tensor: expected a functional tensor"))
}

/// `torch._is_functional_tensor`.
pub fn is_functional_tensor(t: &TensorBase) -> bool {
    FunctionalTensor::of(t).is_some()
}

/// `torch._sync`: brings a wrapper up to date with every write through its
/// aliases (any other tensor is left alone).
pub fn sync(t: &TensorBase) -> Result<()> {
    match FunctionalTensor::of(t) {
        Some(f) => f.sync(),
        None => Ok(()),
    }
}

/// What [`functionalize`] removes (`torch.func.functionalize`'s `remove`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Remove {
    /// In-place and `out=` operators become functional; views stay views.
    Mutations,
    /// Views become their `*_copy` operators as well.
    MutationsAndViews,
}

pub(crate) fn map_tensors(
    v: &IValue,
    f: &mut impl FnMut(&TensorBase) -> Result<TensorBase>,
) -> Result<IValue> {
    Ok(match v {
        IValue::Tensor(t) if t.defined() => IValue::Tensor(f(t)?),
        IValue::TensorList(ts) => {
            IValue::TensorList(Arc::new(ts.iter().map(&mut *f).collect::<Result<_>>()?))
        }
        IValue::OptionalTensorList(ts) => IValue::OptionalTensorList(Arc::new(
            ts.iter()
                .map(|t| t.as_ref().map(&mut *f).transpose())
                .collect::<Result<_>>()?,
        )),
        IValue::GenericList(items) | IValue::Tuple(items) => {
            let mapped = items
                .iter()
                .map(|i| map_tensors(i, f))
                .collect::<Result<Vec<_>>>()?;
            if matches!(v, IValue::Tuple(_)) {
                IValue::Tuple(Arc::new(mapped))
            } else {
                IValue::GenericList(Arc::new(mapped))
            }
        }
        other => other.clone(),
    })
}

/// Every tensor of `v`, in order.
pub(crate) fn tensors_of(v: &IValue, out: &mut Vec<TensorBase>) {
    let _ = map_tensors(v, &mut |t| {
        out.push(t.clone());
        Ok(t.clone())
    });
}

/// `functionalize(f)(*inputs)`: runs `f` on wrappers of `inputs` with
/// functionalization on, then, as PyTorch's test harness does, brings each
/// input's wrapper up to date and copies its value into the input when the
/// program wrote to it (`copy_`, so a capture records it), and returns the
/// up-to-date values of `f`'s results.
pub fn functionalize(
    f: impl FnOnce(&[IValue]) -> Result<Vec<IValue>>,
    inputs: &[IValue],
    remove: Remove,
) -> Result<Vec<IValue>> {
    run_on_wrappers(f, inputs, remove == Remove::Mutations, |input, value| {
        if value.sizes() != input.sizes() {
            return Err(Error::runtime(format!(
                "functionalize: the program changed an input's shape from {:?} to {:?}, which cannot be written back",
                &input.sizes()[..],
                &value.sizes()[..]
            )));
        }
        let copy_ = crate::ops().overload("aten::copy_")?;
        copy_.call(&[IValue::Tensor(input.clone()), IValue::Tensor(value)], &[])?;
        Ok(())
    })
}

/// Runs `f` on functional wrappers of `inputs` with functionalization on
/// (`reapply`: mutations are removed too), then brings each input's
/// wrapper up to date and hands `written` each input whose value the
/// program replaced, with that value; returns `f`'s results, synced.
pub(crate) fn run_on_wrappers(
    f: impl FnOnce(&[IValue]) -> Result<Vec<IValue>>,
    inputs: &[IValue],
    reapply: bool,
    mut written: impl FnMut(&TensorBase, TensorBase) -> Result<()>,
) -> Result<Vec<IValue>> {
    let wrapped: Vec<IValue> = inputs
        .iter()
        .map(|v| map_tensors(v, &mut to_functional_tensor))
        .collect::<Result<_>>()?;
    let outputs = {
        let _on = enable_functionalization(reapply);
        f(&wrapped)?
    };
    let (mut before, mut after) = (Vec::new(), Vec::new());
    inputs.iter().for_each(|v| tensors_of(v, &mut before));
    wrapped.iter().for_each(|v| tensors_of(v, &mut after));
    for (input, wrapper) in before.iter().zip(&after) {
        sync(wrapper)?;
        let value = from_functional_tensor(wrapper)?;
        if value.impl_id() != input.impl_id() {
            written(input, value)?;
        }
    }
    synced_values(&outputs)
}

/// `values` with each functional tensor in them synced and replaced by
/// its current value (what a functionalized function returns).
pub(crate) fn synced_values(values: &[IValue]) -> Result<Vec<IValue>> {
    values
        .iter()
        .map(|v| {
            map_tensors(v, &mut |t| match FunctionalTensor::of(t) {
                Some(f) => {
                    f.sync()?;
                    Ok(f.value())
                }
                None => Ok(t.clone()),
            })
        })
        .collect()
}
