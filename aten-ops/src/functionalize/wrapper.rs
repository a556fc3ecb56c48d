//! The functional tensor wrapper and the storage its aliases share
//! (PyTorch's `FunctionalTensorWrapper` and `FunctionalStorageImpl`).
//!
//! A wrapper is a data-less tensor with the `Functionalize` key whose
//! object holds its current *value*, an ordinary tensor that is never
//! mutated. Every wrapper made from one input or factory result, and every
//! view of those, shares one [`FunctionalStorage`]: the value of the base,
//! the generation that value reflects, and the updates written through
//! aliases since. A view wrapper keeps the chain of [`ViewMeta`]s that
//! leads from the base to it. A mutation replaces the wrapper's value and
//! records an update (value, chain, the new generation) on the storage; an
//! alias whose generation is behind is brought up to date before it is used
//! ([`FunctionalTensor::sync`]): the pending updates are written into the
//! base through the inverses of their chains, and the alias's value is
//! replayed from the new base through its own chain.
//!
//! No lock is held while an operator runs (an operator may run a user's
//! dispatch mode, which may use these tensors again). Updates are applied
//! optimistically: a thread computes the new base from a snapshot and
//! stores it only if no other thread stored one since, else starts again,
//! so no update is lost when several threads use aliases of one base.

use std::sync::{Arc, Mutex, MutexGuard};

use c10_core::{DispatchKey, Error, Result, TensorBase, TensorImpl};

use super::view_meta::ViewMeta;

/// One write through an alias: its new value, the chain from the base, and
/// the storage generation it made.
#[derive(Clone)]
struct Update {
    value: TensorBase,
    view_metas: Arc<[ViewMeta]>,
    generation: u64,
}

struct StorageState {
    base: TensorBase,
    /// The generation `base` reflects: every update up to it is in it.
    base_generation: u64,
    /// Updates newer than `base_generation`, in order.
    updates: Vec<Update>,
    generation: u64,
}

/// What every alias of one base shares (`FunctionalStorageImpl`).
pub(crate) struct FunctionalStorage {
    state: Mutex<StorageState>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl FunctionalStorage {
    fn generation(&self) -> u64 {
        lock(&self.state).generation
    }

    /// Writes the pending updates into the base (`apply_updates`). On an
    /// error the storage is unchanged.
    fn apply_updates(&self) -> Result<()> {
        loop {
            let (mut base, from, pending) = {
                let s = lock(&self.state);
                (s.base.clone(), s.base_generation, s.updates.clone())
            };
            let Some(last) = pending.last().map(|u| u.generation) else {
                return Ok(());
            };
            for update in &pending {
                base = apply_update(&base, update)?;
            }
            let mut s = lock(&self.state);
            if s.base_generation == from {
                s.base = base;
                s.base_generation = last;
                s.updates.retain(|u| u.generation > last);
                return Ok(());
            }
            // Another thread stored a newer base meanwhile: start from it.
        }
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

    /// The current value and the generation it reflects, read together.
    fn snapshot(&self) -> (TensorBase, u64) {
        let s = lock(&self.state);
        (s.value.clone(), s.generation)
    }

    /// Whether a write through this wrapper can be written into its base:
    /// every view of its chain has an inverse.
    pub(crate) fn check_writable(&self) -> Result<()> {
        self.view_metas
            .iter()
            .try_for_each(ViewMeta::check_invertible)
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
            (s.base.clone(), s.base_generation)
        };
        for meta in self.view_metas.iter() {
            value = meta.forward(&value)?;
        }
        let mut state = lock(&self.state);
        // A thread that regenerated from a newer base keeps its value.
        if state.generation <= generation {
            state.value = value;
            state.generation = generation;
        }
        Ok(())
    }

    /// Checks a write of `value` (already of `wrapper`'s dtype) before
    /// anything is recorded: a view keeps its sizes, and its chain must be
    /// invertible.
    pub(crate) fn check_write(&self, wrapper: &TensorBase, value: &TensorBase) -> Result<()> {
        if !self.view_metas.is_empty() && wrapper.sizes() != value.sizes() {
            return Err(Error::runtime(
                "functionalization: a mutation cannot resize a view of another tensor",
            ));
        }
        self.check_writable()
    }

    /// Records a checked write (`replace_` then `commit_update`): the value
    /// is replaced, `wrapper` (this object's tensor) takes the value's sizes
    /// and strides when it is a base (an `out=` operator may resize it), and
    /// the write is recorded for the other aliases.
    pub(crate) fn commit_write(&self, wrapper: &TensorBase, value: TensorBase) -> Result<()> {
        if self.view_metas.is_empty()
            && (wrapper.sizes() != value.sizes() || wrapper.strides() != value.strides())
        {
            wrapper.resize_strided_(&value.sizes(), &value.strides())?;
        }
        lock(&self.state).value = value.clone();
        let mut s = lock(&self.storage.state);
        s.generation += 1;
        let generation = s.generation;
        s.updates.push(Update {
            value,
            view_metas: Arc::clone(&self.view_metas),
            generation,
        });
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
            base_generation: 0,
            updates: Vec::new(),
            generation: 0,
        }),
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

/// The view `make(value)` takes of `of`'s current value (up to date or
/// not: the view is as far behind), wrapped as an alias of `of` whose chain
/// is `of`'s and `meta`.
pub(crate) fn wrap_view(
    of: &FunctionalTensor,
    meta: ViewMeta,
    make: impl FnOnce(&ViewMeta, TensorBase) -> Result<Vec<TensorBase>>,
) -> Result<Vec<TensorBase>> {
    let (value, generation) = of.snapshot();
    let views = make(&meta, value)?;
    views
        .iter()
        .enumerate()
        .map(|(out_index, view)| {
            let meta = meta.with_out_index(out_index);
            let view_metas: Arc<[ViewMeta]> = of.view_metas.iter().cloned().chain([meta]).collect();
            wrapper_impl(
                view,
                FunctionalTensor {
                    storage: Arc::clone(&of.storage),
                    view_metas,
                    state: Mutex::new(WrapperState {
                        value: view.clone(),
                        generation,
                    }),
                },
            )
        })
        .collect()
}
