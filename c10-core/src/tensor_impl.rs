//! `TensorImpl` and the `TensorBase` handle: what the boxing and dispatch
//! layers see of a tensor.
//!
//! The dispatcher needs a tensor's key set (to pick a kernel), dtype, device
//! and shape; the boxing layer needs cheap clones and identity (`is_same`).
//! Storage, strides and views join this type with the tensor issue (#6).

use std::sync::Arc;

use crate::device::Device;
use crate::dispatch_key::DispatchKey;
use crate::dispatch_key_set::DispatchKeySet;
use crate::scalar_type::ScalarType;

/// The shared state of a tensor (`c10::TensorImpl`).
#[derive(Debug)]
pub struct TensorImpl {
    key_set: DispatchKeySet,
    dtype: ScalarType,
    device: Device,
    sizes: Vec<i64>,
}

impl TensorImpl {
    /// A tensor description. `key_set` is the set a dispatch on this tensor
    /// starts from (for a plain CPU tensor that requires grad:
    /// `{CPU, AutogradCPU, ADInplaceOrView}`).
    pub fn new(
        key_set: DispatchKeySet,
        dtype: ScalarType,
        device: Device,
        sizes: Vec<i64>,
    ) -> Self {
        TensorImpl {
            key_set,
            dtype,
            device,
            sizes,
        }
    }

    /// The default key set of a dense tensor on `device`: the dense runtime
    /// key, its autograd key and ADInplaceOrView (as PyTorch gives every
    /// tensor; `requires_grad` does not change the keys).
    pub fn default_key_set(device: Device) -> DispatchKeySet {
        let backend = device.device_type().backend_component();
        DispatchKeySet::from_keys(&[
            backend.dense_key(),
            backend.autograd_key(),
            DispatchKey::ADInplaceOrView,
        ])
    }
}

/// A cheap, shareable handle to a [`TensorImpl`], possibly undefined
/// (`at::TensorBase`). Clones bump a reference count.
#[derive(Clone, Debug, Default)]
pub struct TensorBase {
    inner: Option<Arc<TensorImpl>>,
}

impl TensorBase {
    /// The undefined tensor (a `Tensor()` in C++, `None` in an optional).
    pub const fn undefined() -> TensorBase {
        TensorBase { inner: None }
    }

    /// A handle to a new tensor.
    pub fn from_impl(tensor: TensorImpl) -> TensorBase {
        TensorBase {
            inner: Some(Arc::new(tensor)),
        }
    }

    /// Whether this handle refers to a tensor.
    #[inline]
    pub fn defined(&self) -> bool {
        self.inner.is_some()
    }

    /// The tensor's key set; empty for an undefined tensor.
    #[inline]
    pub fn key_set(&self) -> DispatchKeySet {
        match &self.inner {
            Some(t) => t.key_set,
            None => DispatchKeySet::EMPTY,
        }
    }

    /// The implementation, if defined.
    pub fn tensor_impl(&self) -> Option<&TensorImpl> {
        self.inner.as_deref()
    }

    /// The dtype, if defined.
    pub fn dtype(&self) -> Option<ScalarType> {
        self.inner.as_ref().map(|t| t.dtype)
    }

    /// The device, if defined.
    pub fn device(&self) -> Option<Device> {
        self.inner.as_ref().map(|t| t.device)
    }

    /// The sizes (empty for an undefined tensor).
    pub fn sizes(&self) -> &[i64] {
        self.inner.as_ref().map_or(&[], |t| &t.sizes)
    }

    /// Whether both handles refer to the same tensor (`is_same`); two
    /// undefined handles are the same.
    pub fn is_same(&self, other: &TensorBase) -> bool {
        match (&self.inner, &other.inner) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }

    /// Number of handles sharing the tensor (`use_count`).
    pub fn use_count(&self) -> usize {
        self.inner.as_ref().map_or(0, Arc::strong_count)
    }
}
