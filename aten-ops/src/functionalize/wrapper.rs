//! The functional tensor wrapper and the storage its aliases share
//! (PyTorch's `FunctionalTensorWrapper` and `FunctionalStorageImpl`).
//!
//! A wrapper is a data-less tensor with the `Functionalize` key whose
//! object holds its current *value*, an ordinary tensor that is never
//! mutated. Every wrapper made from one input or factory result, and every
//! view of those, shares one [`FunctionalStorage`]: the value of the base
//! and the updates written through aliases since it was last brought up to
//! date. A view wrapper keeps the chain of [`ViewMeta`]s that leads from
//! the base to it. A mutation replaces the wrapper's value and records an
//! update (value and chain) on the storage, whose generation goes up; an
//! alias whose generation is behind is brought up to date before it is
//! used ([`FunctionalTensor::sync`]): the pending updates are written into
//! the base through the inverses of their chains, and the alias's value is
//! replayed from the new base through its own chain.
//!
//! Locks are never held while an operator runs: an operator may run user
//! code (a dispatch mode). Updates of one storage are applied by one thread
//! at a time, so none is lost when several threads use aliases of one base.

use std::sync::{Arc, Mutex, MutexGuard};

use c10_core::{DispatchKey, Error, Result, TensorBase, TensorImpl};

use super::view_meta::ViewMeta;

/// One write through an alias: its new value and the chain from the base.
struct Update {
    value: TensorBase,
    view_metas: Arc<[ViewMeta]>,
}

struct StorageState {
    base: TensorBase,
    updates: Vec<Update>,
    generation: u64,
}

/// What every alias of one base shares (`FunctionalStorageImpl`).
pub(crate) struct FunctionalStorage {
    state: Mutex<StorageState>,
    /// Held while pending updates are applied.
    applying: Mutex<()>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl FunctionalStorage {
    fn generation(&self) -> u64 {
        lock(&self.state).generation
    }

    /// Writes the pending updates into the base (`apply_updates`).
    fn apply_updates(&self) -> Result<()> {
        let _one_at_a_time = lock(&self.applying);
        let (mut base, updates) = {
            let mut s = lock(&self.state);
            (s.base.clone(), std::mem::take(&mut s.updates))
        };
        for (i, update) in updates.iter().enumerate() {
            match apply_update(&base, update) {
                Ok(new_base) => base = new_base,
                Err(e) => {
                    // The updates not applied stay pending, in order.
                    let mut s = lock(&self.state);
                    let later = std::mem::take(&mut s.updates);
                    s.updates = updates.into_iter().skip(i).chain(later).collect();
                    s.base = base;
                    return Err(e);
                }
            }
        }
        lock(&self.state).base = base;
        Ok(())
    }
}

/// The base with one update written into it: the chain replayed forward to
/// get each intermediate view, then inverted from the last view to the
/// base (`FunctionalStorageImpl::apply_update`).
fn apply_update(base: &TensorBase, update: &Update) -> Result<TensorBase> {
    let metas = &update.view_metas;
    let Some((_, leading)) = metas.split_last() else {
        return Ok(update.value.clone());
    };
    let mut intermediates = Vec::with_capacity(metas.len());
    intermediates.push(base.clone());
    for meta in leading {
        let next = meta.forward(intermediates.last().unwrap_or(base))?;
        intermediates.push(next);
    }
    let mut value = update.value.clone();
    for (meta, below) in metas.iter().zip(&intermediates).rev() {
        value = meta.inverse(below, &value)?;
    }
    Ok(value)
}

struct WrapperState {
    value: TensorBase,
    generation: u64,
}

/// The object a functional wrapper carries (`FunctionalTensorWrapper`).
pub(crate) struct FunctionalTensor {
    storage: Arc<FunctionalStorage>,
    view_metas: Arc<[ViewMeta]>,
    state: Mutex<WrapperState>,
}

impl FunctionalTensor {
    /// The functional object of `t`, if `t` is a wrapper.
    pub(crate) fn of(t: &TensorBase) -> Option<&FunctionalTensor> {
        t.pyobj_slot()?.downcast_ref::<FunctionalTensor>()
    }

    /// The current value, without bringing it up to date.
    pub(crate) fn value(&self) -> TensorBase {
        lock(&self.state).value.clone()
    }

    /// Brings the value up to date with every write through an alias
    /// (`sync_`).
    pub(crate) fn sync(&self) -> Result<()> {
        if lock(&self.state).generation == self.storage.generation() {
            return Ok(());
        }
        self.storage.apply_updates()?;
        self.regenerate_from_base()
    }

    /// The value replayed from the base through the chain
    /// (`regenerate_from_base`).
    fn regenerate_from_base(&self) -> Result<()> {
        let (mut value, generation) = {
            let s = lock(&self.storage.state);
            (s.base.clone(), s.generation)
        };
        for meta in self.view_metas.iter() {
            value = meta.forward(&value)?;
        }
        let mut state = lock(&self.state);
        state.value = value;
        state.generation = generation;
        Ok(())
    }

    /// The value written by a mutation (`replace_` then `commit_update`):
    /// `wrapper` (this object's tensor) takes `value`'s sizes and strides
    /// when an `out=` operator resized it, and the write is recorded for
    /// the other aliases.
    pub(crate) fn write(&self, wrapper: &TensorBase, value: TensorBase) -> Result<()> {
        if value.dtype() != wrapper.dtype() {
            return Err(Error::runtime(format!(
                "functionalization: a mutation would change a tensor's dtype from {:?} to {:?}",
                wrapper.dtype(),
                value.dtype()
            )));
        }
        // An `out=` operator may resize its output (a base: views of it
        // keep their own shapes); a view's value keeps its sizes, and its
        // strides are the functional value's business.
        let sizes = value.sizes();
        if wrapper.sizes() != sizes {
            if !self.view_metas.is_empty() {
                return Err(Error::runtime(
                    "functionalization: a mutation cannot resize a view of another tensor",
                ));
            }
            wrapper.resize_strided_(&sizes, &value.strides())?;
        }
        lock(&self.state).value = value.clone();
        let mut s = lock(&self.storage.state);
        s.updates.push(Update {
            value,
            view_metas: Arc::clone(&self.view_metas),
        });
        s.generation += 1;
        Ok(())
    }
}

/// The key set of a wrapper of `value`: `value`'s keys without the Python
/// ones, with `Functionalize`.
fn wrapper_impl(value: &TensorBase, object: FunctionalTensor) -> Result<TensorBase> {
    let (Some(dtype), Some(device)) = (value.dtype(), value.device()) else {
        return Err(Error::runtime(
            "functionalization: cannot wrap an undefined tensor",
        ));
    };
    let keys = value
        .key_set()
        .remove(DispatchKey::Python)
        .remove(DispatchKey::PythonTLSSnapshot)
        .add(DispatchKey::Functionalize);
    let tensor = TensorImpl::new_dataless(keys, dtype, device, &value.sizes(), &value.strides())?
        .with_pyobj_slot(Arc::new(object));
    Ok(TensorBase::from_impl(tensor))
}

/// A wrapper of `value` with a storage of its own (`to_functional_tensor`).
pub(crate) fn wrap_new(value: &TensorBase) -> Result<TensorBase> {
    let storage = Arc::new(FunctionalStorage {
        state: Mutex::new(StorageState {
            base: value.clone(),
            updates: Vec::new(),
            generation: 0,
        }),
        applying: Mutex::new(()),
    });
    wrapper_impl(
        value,
        FunctionalTensor {
            storage,
            view_metas: Arc::from(Vec::new()),
            state: Mutex::new(WrapperState {
                value: value.clone(),
                generation: 0,
            }),
        },
    )
}

/// A wrapper of `value`, the view `meta` takes of `of` (which is up to
/// date): it shares `of`'s storage, and its chain is `of`'s and `meta`.
pub(crate) fn wrap_view(
    of: &FunctionalTensor,
    value: &TensorBase,
    meta: ViewMeta,
) -> Result<TensorBase> {
    let generation = lock(&of.state).generation;
    let view_metas: Arc<[ViewMeta]> = of.view_metas.iter().cloned().chain([meta]).collect();
    wrapper_impl(
        value,
        FunctionalTensor {
            storage: Arc::clone(&of.storage),
            view_metas,
            state: Mutex::new(WrapperState {
                value: value.clone(),
                generation,
            }),
        },
    )
}
