//! `TensorImpl` and the `TensorBase` handle: a strided view of a storage.
//!
//! A tensor is a storage, an offset into it (in elements), sizes and strides
//! (in elements), a dtype, a device, the dispatch key set calls on it start
//! from, and a version counter shared by all views of one storage (bumped by
//! in-place writes, as autograd needs). Views (`as_strided` and every view
//! operator built on it) share the storage and the version counter.
//!
//! Autograd keeps its per-tensor state (`requires_grad`, `.grad`, `grad_fn`,
//! view information) behind [`AutogradMetaInterface`], made on first need
//! by the autograd layer, as PyTorch's `TensorImpl::autograd_meta_` is: a
//! tensor that never met autograd pays one null check.

use std::borrow::Cow;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use crate::device::Device;
use crate::dispatch_key::DispatchKey;
use crate::dispatch_key_set::DispatchKeySet;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::intrusive_ptr::IntrusivePtr;
use crate::scalar_type::ScalarType;
use crate::storage::{Storage, StorageBorrow};
use crate::tensor_layout::LayoutCell;
pub use crate::tensor_layout::{
    check_rank, checked_numel, contiguous_extent, contiguous_strides, storage_nbytes, DimVector,
    LayoutRef, TensorLayout,
};

/// The shared state of a tensor (`c10::TensorImpl`).
pub struct TensorImpl {
    layout: LayoutCell,
    dtype: ScalarType,
    device: Device,
    key_set: DispatchKeySet,
    /// The version counter, shared with every view; made on the first view
    /// or in-place write (a tensor that has neither reads version 0).
    version: OnceLock<Arc<AtomicU64>>,
    wrapped_number: bool,
    /// Autograd's state, set once by the autograd layer.
    autograd_meta: OnceLock<Arc<dyn AutogradMetaInterface>>,
    /// What a tensor subclass attached (PyTorch's `pyobj_slot`): set when
    /// the tensor is made, never changed.
    pyobj_slot: Option<Arc<dyn std::any::Any + Send + Sync>>,
}

/// The autograd state a tensor carries (`c10::AutogradMetaInterface`). The
/// autograd layer implements it; this crate only asks whether the tensor
/// requires grad.
pub trait AutogradMetaInterface: std::any::Any + Send + Sync {
    /// `requires_grad()`: whether autograd tracks this tensor.
    fn requires_grad(&self) -> bool;
    /// The implementation, for the autograd layer to downcast.
    fn as_any(&self) -> &dyn std::any::Any;
    /// The shared implementation, for the autograd layer to downcast.
    fn as_any_arc(self: Arc<Self>) -> Arc<dyn std::any::Any + Send + Sync>;
}

impl fmt::Debug for TensorImpl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let layout = self.layout.load();
        let layout = &*layout;
        f.debug_struct("TensorImpl")
            .field("sizes", &layout.sizes())
            .field("strides", &layout.strides())
            .field("storage_offset", &layout.storage_offset())
            .field("dtype", &self.dtype)
            .field("device", &self.device)
            .field("key_set", &self.key_set)
            .finish()
    }
}

impl TensorImpl {
    /// A new contiguous tensor on `device` with zero-filled storage, whose
    /// calls start from `key_set`. Devices without an allocator in this build
    /// get a storage without data (the tensor can be dispatched on, not
    /// computed with). Negative sizes, and sizes whose storage size
    /// overflows, are PyTorch's errors.
    pub fn new(
        key_set: DispatchKeySet,
        dtype: ScalarType,
        device: Device,
        sizes: Vec<i64>,
    ) -> Result<Self> {
        let (numel, nbytes) = contiguous_extent(&sizes, dtype.element_size())?;
        let storage = match Storage::new(nbytes, device) {
            Ok(storage) => storage,
            Err(_) if device.device_type() != crate::device::DeviceType::CPU => {
                Storage::new_dataless(nbytes, device)
            }
            Err(e) => return Err(e),
        };
        Ok(TensorImpl::with_layout(
            TensorLayout::contiguous_over_fresh(storage, &sizes, numel, dtype.element_size()),
            dtype,
            device,
            key_set,
            OnceLock::new(),
        ))
    }

    /// A tensor of `sizes` and `strides` whose storage has no data (what a
    /// wrapper tensor subclass or a fake tensor is made of); the storage
    /// spans exactly what the geometry reaches (checked arithmetic).
    pub fn new_dataless(
        key_set: DispatchKeySet,
        dtype: ScalarType,
        device: Device,
        sizes: &[i64],
        strides: &[i64],
    ) -> Result<Self> {
        check_rank(sizes, strides)?;
        let itemsize = dtype.element_size();
        let nbytes = storage_nbytes(sizes, strides, 0, itemsize)?;
        let layout = TensorLayout::new(
            Storage::new_dataless(nbytes, device),
            0,
            sizes,
            strides,
            itemsize,
        )?;
        Ok(TensorImpl::with_layout(
            layout,
            dtype,
            device,
            key_set,
            OnceLock::new(),
        ))
    }

    /// A snapshot of the current layout (see [`LayoutRef`]).
    #[inline]
    pub fn layout(&self) -> LayoutRef<'_> {
        self.layout.load()
    }

    /// The layout the tensor was made with. A resize publishes a new
    /// current layout and leaves this one as it was (with its storage), so
    /// code that computed strides from it when it made the tensor (an
    /// iterator's own outputs) can keep using it.
    #[inline]
    pub fn first_layout(&self) -> &TensorLayout {
        self.layout.first()
    }

    #[inline(always)]
    fn with_layout(
        layout: TensorLayout,
        dtype: ScalarType,
        device: Device,
        key_set: DispatchKeySet,
        version: OnceLock<Arc<AtomicU64>>,
    ) -> TensorImpl {
        TensorImpl {
            layout: LayoutCell::new(layout),
            dtype,
            device,
            key_set,
            version,
            wrapped_number: false,
            autograd_meta: OnceLock::new(),
            pyobj_slot: None,
        }
    }

    /// Attaches a tensor subclass's object (`pyobj_slot`); the tensor is
    /// still being built, so nothing has seen it without.
    pub fn with_pyobj_slot(mut self, object: Arc<dyn std::any::Any + Send + Sync>) -> TensorImpl {
        self.pyobj_slot = Some(object);
        self
    }

    /// The version counter, made on first use.
    fn version_counter(&self) -> &Arc<AtomicU64> {
        self.version.get_or_init(|| Arc::new(AtomicU64::new(0)))
    }

    /// The default key set of a dense tensor on `device`: the dense runtime
    /// key, its autograd key and ADInplaceOrView (as PyTorch gives every
    /// tensor; `requires_grad` does not change the keys).
    /// Under inference mode the tensor is an inference tensor: its key set
    /// has neither the autograd key nor ADInplaceOrView.
    #[inline]
    pub fn default_key_set(device: Device) -> DispatchKeySet {
        // CPU tensors (the commonest allocation) read a constant.
        const CPU: DispatchKeySet = keys_of_backend(Device::CPU);
        let keys = if device.device_type() == crate::device::DeviceType::CPU {
            CPU
        } else {
            keys_of_backend(device)
        };
        if crate::grad_mode::InferenceMode::is_enabled() {
            keys.difference(
                crate::dispatch_key_set::AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW,
            )
        } else {
            keys
        }
    }
}

/// The dense runtime key of `device`'s backend, its autograd key and
/// ADInplaceOrView.
const fn keys_of_backend(device: Device) -> DispatchKeySet {
    let backend = device.device_type().backend_component();
    DispatchKeySet::from_keys(&[
        backend.dense_key(),
        backend.autograd_key(),
        DispatchKey::ADInplaceOrView,
    ])
}

/// A cheap, shareable handle to a [`TensorImpl`], possibly undefined
/// (`at::TensorBase`). Clones bump a reference count.
///
/// The count is biased towards the thread that made the tensor (see
/// `intrusive_ptr`): when the last handle is dropped on *another* thread,
/// the tensor (and its storage, if no other tensor holds it) is freed when
/// the maker next makes a value, calls
/// [`merge_queued_handle_counts`](crate::merge_queued_handle_counts), or
/// exits, not at that drop. A producer thread that hands large tensors to
/// workers and then blocks for long should call
/// `merge_queued_handle_counts` when it wakes, or expect the memory back
/// only then.
#[derive(Clone, Debug, Default)]
pub struct TensorBase {
    inner: Option<IntrusivePtr<TensorImpl>>,
}

fn undefined_error() -> Error {
    Error::runtime("Tensor is undefined")
}

impl TensorBase {
    /// The undefined tensor (a `Tensor()` in C++, `None` in an optional).
    pub const fn undefined() -> TensorBase {
        TensorBase { inner: None }
    }

    /// A handle to a new tensor.
    pub fn from_impl(tensor: TensorImpl) -> TensorBase {
        TensorBase {
            inner: Some(IntrusivePtr::new(tensor)),
        }
    }

    /// `at::empty_strided`: a zero-filled tensor with the given layout. The
    /// storage covers every element the strides can reach; negative strides
    /// are refused as PyTorch refuses them.
    pub fn empty_strided(
        sizes: &[i64],
        strides: &[i64],
        dtype: ScalarType,
        device: Device,
    ) -> Result<TensorBase> {
        check_rank(sizes, strides)?;
        checked_numel(sizes)?;
        let nbytes = storage_nbytes(sizes, strides, 0, dtype.element_size())?;
        let storage = Storage::new(nbytes, device)?;
        Ok(TensorBase::from_impl(TensorImpl::with_layout(
            TensorLayout::new(storage, 0, sizes, strides, dtype.element_size())?,
            dtype,
            device,
            TensorImpl::default_key_set(device),
            OnceLock::new(),
        )))
    }

    /// A tensor of `dtype` viewing `storage` as `as_strided(sizes, strides,
    /// storage_offset)` (`at::from_blob` over a storage): every element
    /// the view reaches must lie inside the storage, with the checks of
    /// `as_strided`.
    pub fn from_storage(
        storage: Storage,
        dtype: ScalarType,
        sizes: &[i64],
        strides: &[i64],
        storage_offset: i64,
    ) -> Result<TensorBase> {
        let device = storage.device();
        let layout = TensorLayout::new(
            storage,
            storage_offset,
            sizes,
            strides,
            dtype.element_size(),
        )?;
        Ok(TensorBase::from_impl(TensorImpl::with_layout(
            layout,
            dtype,
            device,
            TensorImpl::default_key_set(device),
            OnceLock::new(),
        )))
    }

    /// A 0-dim CPU tensor holding `value` that type promotion treats as a
    /// Python number (`wrapped_scalar_tensor`).
    pub fn wrapped_number<T: Element>(value: T) -> Result<TensorBase> {
        let t = TensorBase::from_vec(vec![value], &[])?;
        let inner = t.get()?;
        let storage = inner.layout().storage().clone();
        Ok(TensorBase::from_impl(TensorImpl {
            layout: LayoutCell::new(TensorLayout::contiguous_over_fresh(
                storage,
                &[],
                1,
                T::DTYPE.element_size(),
            )),
            dtype: T::DTYPE,
            device: Device::CPU,
            key_set: inner.key_set,
            version: OnceLock::new(),
            wrapped_number: true,
            autograd_meta: OnceLock::new(),
            pyobj_slot: None,
        }))
    }

    /// Whether this 0-dim tensor stands for a Python number
    /// (`is_wrapped_number`).
    pub fn is_wrapped_number(&self) -> bool {
        self.inner.as_ref().is_some_and(|t| t.wrapped_number)
    }

    /// `resize_`: gives the tensor new sizes with contiguous strides,
    /// growing its storage in place when it is too small (the elements it
    /// held keep their values, and every view of the storage sees the
    /// grown one). The same sizes leave the tensor untouched.
    pub fn resize_(&self, sizes: &[i64]) -> Result<()> {
        if self.layout().is_some_and(|l| l.sizes() == sizes) {
            return Ok(());
        }
        self.resize_strided_(sizes, &contiguous_strides(sizes))
    }

    /// Resizes to `sizes` with `strides` (`resize_` followed by
    /// `as_strided_`), growing the storage in place when it is too small
    /// for them ([`Storage::grow`]). The layout it replaces is freed once no
    /// kernel uses it any more.
    pub fn resize_strided_(&self, sizes: &[i64], strides: &[i64]) -> Result<()> {
        let t = self.get()?;
        if sizes.len() != strides.len() || strides.iter().any(|s| *s < 0) {
            return Err(Error::runtime(format!(
                "resize: invalid strides {strides:?} for sizes {sizes:?}"
            )));
        }
        checked_numel(sizes)?;
        let layout = t.layout();
        let elem = t.dtype.element_size();
        let needed = storage_nbytes(sizes, strides, layout.storage_offset(), elem)?;
        let storage = layout.storage().clone();
        storage.grow(needed)?;
        let offset = layout.storage_offset();
        drop(layout);
        t.layout
            .store(TensorLayout::new(storage, offset, sizes, strides, elem)?);
        Ok(())
    }

    /// `at::empty`: a contiguous zero-filled tensor.
    pub fn empty(sizes: &[i64], dtype: ScalarType, device: Device) -> Result<TensorBase> {
        let (numel, nbytes) = contiguous_extent(sizes, dtype.element_size())?;
        let storage = Storage::new(nbytes, device)?;
        Ok(TensorBase::contiguous_on(
            storage, sizes, numel, dtype, device,
        ))
    }

    /// A contiguous tensor of `sizes` (`numel` elements, their checked
    /// product) over all of `storage`, which holds at least `numel`
    /// elements of `dtype`.
    #[inline(always)]
    fn contiguous_on(
        storage: Storage,
        sizes: &[i64],
        numel: i64,
        dtype: ScalarType,
        device: Device,
    ) -> TensorBase {
        // Built in its block (see `IntrusivePtr::new_with`): every eager
        // result is made here.
        TensorBase {
            inner: Some(IntrusivePtr::new_with(|| {
                TensorImpl::with_layout(
                    TensorLayout::contiguous_over_fresh(
                        storage,
                        sizes,
                        numel,
                        dtype.element_size(),
                    ),
                    dtype,
                    device,
                    TensorImpl::default_key_set(device),
                    OnceLock::new(),
                )
            })),
        }
    }

    /// A contiguous CPU tensor of `T` whose elements `write` gives their
    /// values: it receives them, not yet initialized, as the only access
    /// to the new storage (and may split them over threads). Kernels that
    /// overwrite their whole output skip zeroing it this way, which for a
    /// large output is a serial pass over memory before the parallel one.
    /// An error from `write` drops the storage.
    ///
    /// # Safety
    ///
    /// When `write` returns `Ok`, it must have written every element of
    /// the slice it was given.
    pub unsafe fn empty_written_by<T: Element>(
        sizes: &[i64],
        write: impl FnOnce(&mut [std::mem::MaybeUninit<T>]) -> Result<()>,
    ) -> Result<TensorBase> {
        let (numel, nbytes) = contiguous_extent(sizes, std::mem::size_of::<T>())?;
        let storage = Storage::new_cpu_uninit(nbytes)?;
        let data = storage
            .data_ptr()
            .ok_or_else(|| Error::internal("a CPU storage without data"))?;
        // SAFETY: the storage is new and this function holds its only
        // handle, so the slice is the only access to its memory; the block
        // is aligned to 64 bytes (enough for any `Element`) and holds
        // `numel` elements of `T`. `MaybeUninit` makes no claim about the
        // contents.
        let elements = unsafe {
            std::slice::from_raw_parts_mut(
                data.as_ptr().cast::<std::mem::MaybeUninit<T>>(),
                numel as usize,
            )
        };
        write(elements)?;
        Ok(TensorBase::contiguous_on(
            storage,
            sizes,
            numel,
            T::DTYPE,
            Device::CPU,
        ))
    }

    /// A CPU tensor holding `data` with shape `sizes`.
    pub fn from_vec<T: Element>(data: Vec<T>, sizes: &[i64]) -> Result<TensorBase> {
        let numel = checked_numel(sizes)?;
        if numel as usize != data.len() {
            return Err(Error::runtime(format!(
                "shape '{sizes:?}' is invalid for input of size {}",
                data.len()
            )));
        }
        let t = TensorBase::empty(sizes, T::DTYPE, Device::CPU)?;
        t.with_data_mut::<T, _>(|dst| dst.copy_from_slice(&data))?;
        Ok(t)
    }

    /// Whether this handle refers to a tensor.
    #[inline]
    pub fn defined(&self) -> bool {
        self.inner.is_some()
    }

    fn get(&self) -> Result<&TensorImpl> {
        self.inner.as_deref().ok_or_else(undefined_error)
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
    #[inline]
    pub fn dtype(&self) -> Option<ScalarType> {
        self.inner.as_ref().map(|t| t.dtype)
    }

    /// The device, if defined.
    #[inline]
    pub fn device(&self) -> Option<Device> {
        self.inner.as_ref().map(|t| t.device)
    }

    /// A snapshot of the current layout (storage, offset, sizes, strides),
    /// if defined. A kernel takes one and computes every address from it:
    /// another thread may resize the tensor meanwhile, and the snapshot
    /// keeps the layout it describes, and its storage, alive.
    #[inline]
    pub fn layout(&self) -> Option<LayoutRef<'_>> {
        self.inner.as_ref().map(|t| t.layout.load())
    }

    /// The sizes (empty for an undefined tensor), copied from the current
    /// layout.
    #[inline]
    pub fn sizes(&self) -> DimVector {
        self.layout()
            .map_or_else(DimVector::new, |l| DimVector::from_slice(l.sizes()))
    }

    /// The strides, in elements (empty for an undefined tensor), copied
    /// from the current layout: combine them with sizes or data read from
    /// the same [`layout`](Self::layout) snapshot, never a second read.
    #[inline]
    pub fn strides(&self) -> DimVector {
        self.layout()
            .map_or_else(DimVector::new, |l| DimVector::from_slice(l.strides()))
    }

    /// The size of dimension `dim` (negative counts from the end), as
    /// `Tensor.size(dim)`: a dimension out of range is PyTorch's error, so
    /// code that checked the rank on an earlier read (another thread may
    /// have resized the tensor since) gets an error, not a panic.
    pub fn size(&self, dim: i64) -> Result<i64> {
        let l = self.get()?.layout();
        Ok(l.sizes()[maybe_wrap_dim(dim, l.sizes().len(), false)?])
    }

    /// The stride of dimension `dim`, as [`size`](Self::size) reads sizes.
    pub fn stride(&self, dim: i64) -> Result<i64> {
        let l = self.get()?.layout();
        Ok(l.strides()[maybe_wrap_dim(dim, l.strides().len(), false)?])
    }

    /// The offset into the storage, in elements.
    #[inline]
    pub fn storage_offset(&self) -> i64 {
        self.layout().map_or(0, |l| l.storage_offset())
    }

    /// Number of dimensions.
    #[inline]
    pub fn dim(&self) -> usize {
        self.layout().map_or(0, |l| l.sizes().len())
    }

    /// Number of elements.
    #[inline]
    pub fn numel(&self) -> i64 {
        self.layout().map_or(0, |l| l.numel())
    }

    /// The storage (a new handle to it).
    #[inline]
    pub fn storage(&self) -> Option<Storage> {
        self.layout().map(|l| l.storage().clone())
    }

    /// The version counter's value.
    pub fn version(&self) -> u64 {
        self.inner
            .as_ref()
            .and_then(|t| t.version.get())
            .map_or(0, |v| v.load(Ordering::Relaxed))
    }

    /// Records an in-place write (`bump_version`). Inference tensors keep
    /// no version.
    pub fn bump_version(&self) {
        if let Some(t) = &self.inner {
            if !t.key_set.has(DispatchKey::ADInplaceOrView) {
                return;
            }
            t.version_counter().fetch_add(1, Ordering::Relaxed);
        }
    }

    /// `is_inference()`: made under inference mode (its key set has no
    /// autograd keys and no ADInplaceOrView).
    pub fn is_inference(&self) -> bool {
        self.inner
            .as_ref()
            .is_some_and(|t| !t.key_set.has(DispatchKey::ADInplaceOrView))
    }

    /// `requires_grad()`: whether autograd tracks this tensor. One load for
    /// a tensor that never met autograd.
    #[inline]
    pub fn requires_grad(&self) -> bool {
        match &self.inner {
            Some(t) => match t.autograd_meta.get() {
                Some(m) => m.requires_grad(),
                None => false,
            },
            None => false,
        }
    }

    /// The object a tensor subclass attached (`pyobj_slot`), if any.
    pub fn pyobj_slot(&self) -> Option<&Arc<dyn std::any::Any + Send + Sync>> {
        self.inner.as_ref()?.pyobj_slot.as_ref()
    }

    /// The autograd state, if the autograd layer made one.
    #[inline]
    pub fn autograd_meta(&self) -> Option<&dyn AutogradMetaInterface> {
        self.inner.as_ref()?.autograd_meta.get().map(|m| &**m)
    }

    /// The autograd state, made by `init` on first use. Fails on an
    /// undefined tensor.
    pub fn autograd_meta_or_init(
        &self,
        init: impl FnOnce() -> Arc<dyn AutogradMetaInterface>,
    ) -> Result<&Arc<dyn AutogradMetaInterface>> {
        Ok(self.get()?.autograd_meta.get_or_init(init))
    }

    /// A new tensor sharing this one's storage, layout and version counter,
    /// without autograd state (`shallow_copy_and_detach`, what `detach()`
    /// and saved variables build on).
    pub fn shallow_copy_and_detach(&self) -> Result<TensorBase> {
        let t = self.get()?;
        let layout = t.layout();
        let copy = TensorLayout::new(
            layout.storage().clone(),
            layout.storage_offset(),
            layout.sizes(),
            layout.strides(),
            t.dtype.element_size(),
        )?;
        let version = if t.key_set.has(DispatchKey::ADInplaceOrView) {
            OnceLock::from(Arc::clone(t.version_counter()))
        } else {
            OnceLock::new()
        };
        Ok(TensorBase::from_impl(TensorImpl {
            layout: LayoutCell::new(copy),
            dtype: t.dtype,
            device: t.device,
            key_set: t.key_set,
            version,
            wrapped_number: t.wrapped_number,
            autograd_meta: OnceLock::new(),
            pyobj_slot: t.pyobj_slot.clone(),
        }))
    }

    /// Whether two tensors share one version counter (views of one base).
    pub fn shares_version_counter(&self, other: &TensorBase) -> bool {
        match (&self.inner, &other.inner) {
            (Some(a), Some(b)) => match (a.version.get(), b.version.get()) {
                (Some(x), Some(y)) => Arc::ptr_eq(x, y),
                _ => IntrusivePtr::ptr_eq(a, b),
            },
            _ => false,
        }
    }

    /// Whether the tensor is contiguous in row-major order (`is_contiguous`):
    /// dimensions of size 1 may have any stride.
    #[inline]
    pub fn is_contiguous(&self) -> bool {
        self.layout().is_none_or(|l| l.is_contiguous())
    }

    /// A number identifying the tensor (its `TensorImpl`'s address; 0 for
    /// an undefined handle): equal while both handles live exactly when
    /// [`is_same`](Self::is_same).
    pub fn impl_id(&self) -> usize {
        self.inner
            .as_ref()
            .map_or(0, |a| IntrusivePtr::as_ptr(a) as usize)
    }

    /// Whether both handles refer to the same tensor (`is_same`); two
    /// undefined handles are the same.
    pub fn is_same(&self, other: &TensorBase) -> bool {
        match (&self.inner, &other.inner) {
            (Some(a), Some(b)) => IntrusivePtr::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }

    /// Whether this handle is the only way to reach the tensor's elements:
    /// the only handle to its `TensorImpl`, never resized, whose storage no
    /// other tensor (a view) holds. Handles are only ever made from other
    /// handles (no weak references exist), so while the caller keeps `&mut`
    /// access to this handle and does not clone it, no other thread can
    /// read or write those elements: the caller may skip the storage's
    /// borrow flag. On a thread other than the one that made the tensor,
    /// the answer may be a conservative no (see [`Storage::is_unique`]).
    #[inline]
    pub fn is_exclusively_owned(&mut self) -> bool {
        let Some(inner) = &self.inner else {
            return false;
        };
        let unique = IntrusivePtr::is_unique(inner)
            && !inner.layout.was_replaced()
            && inner.layout.load().storage().is_unique();
        if unique {
            // Other handles were dropped with a Release decrement; their
            // accesses happen before ours.
            std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
        }
        unique
    }

    /// Number of handles sharing the tensor (`use_count`), counted as
    /// [`Storage::use_count`] counts: exact on the thread that made the
    /// tensor and once the counts are merged.
    pub fn use_count(&self) -> usize {
        self.inner.as_ref().map_or(0, IntrusivePtr::strong_count)
    }

    /// `as_strided`: a view of the same storage with other sizes, strides
    /// and offset; fails when the view would reach outside the storage.
    pub fn as_strided(
        &self,
        sizes: &[i64],
        strides: &[i64],
        offset: Option<i64>,
    ) -> Result<TensorBase> {
        let t = self.get()?;
        let layout = t.layout();
        let offset = offset.unwrap_or(layout.storage_offset());
        let view = TensorLayout::new(
            layout.storage().clone(),
            offset,
            sizes,
            strides,
            t.dtype.element_size(),
        )?;
        Ok(TensorBase::from_impl(TensorImpl::with_layout(
            view,
            t.dtype,
            t.device,
            t.key_set,
            OnceLock::from(Arc::clone(t.version_counter())),
        )))
    }

    /// A snapshot of the layout of a defined tensor of `T` with data.
    fn data_layout<T: Element>(&self) -> Result<LayoutRef<'_>> {
        let t = self.get()?;
        if t.dtype != T::DTYPE {
            return Err(Error::runtime(format!(
                "expected scalar type {} but found {}",
                T::DTYPE,
                t.dtype
            )));
        }
        let layout = t.layout();
        if !layout.storage().has_data() {
            return Err(no_data_error(t.device));
        }
        Ok(layout)
    }

    /// The elements in row-major (logical) order.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        self.with_logical_values(|values| match values {
            Cow::Owned(values) => Ok(values),
            Cow::Borrowed(values) => {
                let mut owned = Vec::new();
                owned
                    .try_reserve_exact(values.len())
                    .map_err(|_| out_of_memory(std::mem::size_of_val(values)))?;
                owned.extend_from_slice(values);
                Ok(owned)
            }
        })?
    }

    /// Runs `f` on the elements of a contiguous tensor as a slice, holding a
    /// shared borrow of its storage. An operator called from `f` that
    /// writes this tensor's storage fails ("... is already borrowed"); one
    /// that `f` runs on *another* thread and waits for (a scoped thread
    /// joined inside `f`) waits for this borrow, which `f` releases only
    /// after that thread ends: do not wait inside `f` for other threads
    /// that write this storage.
    pub fn with_data<T: Element, R>(&self, f: impl FnOnce(&[T]) -> R) -> Result<R> {
        let l = self.data_layout::<T>()?;
        if !l.is_contiguous() {
            return Err(Error::runtime("with_data needs a contiguous tensor"));
        }
        StorageBorrow::hold([(l.storage(), false)], || {
            let base = l.data_ptr().ok_or_else(|| no_data_error(Device::CPU))? as *const T;
            // SAFETY: the snapshot is contiguous, so its elements are the
            // `numel` consecutive `T`s from `base` (read under the borrow),
            // inside the storage (checked when the layout was built) that
            // `l` keeps alive; the shared borrow keeps writers away for the
            // closure's duration.
            Ok(f(unsafe {
                std::slice::from_raw_parts(base, l.numel() as usize)
            }))
        })?
    }

    /// Runs `f` on the elements in row-major (logical) order: the storage
    /// itself when the tensor is contiguous, under a shared borrow (as
    /// [`TensorBase::with_data`]), else a copy gathered as
    /// [`TensorBase::to_vec`] gathers it. One layout snapshot decides and
    /// addresses both, so a kernel that only reads its input skips the copy
    /// in the common case without a second look at the layout.
    pub fn with_values<T: Element, R>(&self, f: impl FnOnce(&[T]) -> R) -> Result<R> {
        self.with_logical_values(|values| f(&values))
    }

    /// The one body of [`TensorBase::to_vec`] and [`TensorBase::with_values`]:
    /// `f` on the elements in logical order, borrowed from the storage
    /// (under a shared borrow) when one layout snapshot is contiguous, else
    /// gathered from that snapshot into a vector (`f` then runs after the
    /// borrow is released).
    fn with_logical_values<T: Element, R>(&self, f: impl FnOnce(Cow<'_, [T]>) -> R) -> Result<R> {
        let l = self.data_layout::<T>()?;
        let n = l.numel() as usize;
        let base = || l.data_ptr().ok_or_else(|| no_data_error(Device::CPU));
        if l.is_contiguous() {
            return StorageBorrow::hold([(l.storage(), false)], || {
                let base = base()? as *const T;
                // SAFETY: a contiguous snapshot's elements are the `numel`
                // consecutive `T`s from `base` (read under the borrow),
                // inside the storage that `l` keeps alive (checked when the
                // layout was built), under a shared borrow for the
                // closure's duration.
                Ok(f(Cow::Borrowed(unsafe {
                    std::slice::from_raw_parts(base, n)
                })))
            })?;
        }
        let mut values = Vec::new();
        values
            .try_reserve_exact(n)
            .map_err(|_| out_of_memory(n.saturating_mul(std::mem::size_of::<T>())))?;
        StorageBorrow::hold([(l.storage(), false)], || {
            let base = base()? as *const T;
            for_each_offset(l.sizes(), l.strides(), 0, |off| {
                // SAFETY: `off` is an element's offset from the first one in
                // this snapshot's sizes and strides, which `TensorLayout`
                // checked lie inside the storage (alive while `l` is); it
                // holds `T`s (dtype checked) and a shared borrow is held.
                values.push(unsafe { *base.add(off as usize) });
            });
            Ok::<_, Error>(())
        })??;
        Ok(f(Cow::Owned(values)))
    }

    /// Runs `f` on the storage of a contiguous tensor as a mutable slice
    /// (for constructors), holding an exclusive borrow.
    pub fn with_data_mut<T: Element, R>(&self, f: impl FnOnce(&mut [T]) -> R) -> Result<R> {
        let l = self.data_layout::<T>()?;
        if !l.is_contiguous() {
            return Err(Error::runtime("with_data_mut needs a contiguous tensor"));
        }
        StorageBorrow::hold([(l.storage(), true)], || {
            let base = l.data_ptr().ok_or_else(|| no_data_error(Device::CPU))? as *mut T;
            // SAFETY: as in `with_data`; the exclusive borrow keeps every
            // other kernel and reader away for the closure's duration.
            Ok(f(unsafe {
                std::slice::from_raw_parts_mut(base, l.numel() as usize)
            }))
        })?
    }
}

/// `maybe_wrap_dim`: `dim` (negative counts from the end) wrapped into
/// `0..ndim`, or PyTorch's error. With `wrap_scalar`, a 0-dim tensor takes
/// 0 and -1 as its one dimension (what operators accept); without, it has
/// no dimension to index (what `size(dim)` says).
pub fn maybe_wrap_dim(dim: i64, ndim: usize, wrap_scalar: bool) -> Result<usize> {
    if ndim == 0 && !wrap_scalar {
        return Err(Error::index_error(format!(
            "dimension specified as {dim} but tensor has no dimensions"
        )));
    }
    let n = ndim.max(1) as i64;
    if dim < -n || dim >= n {
        return Err(Error::index_error(format!(
            "Dimension out of range (expected to be in range of [{}, {}], but got {dim})",
            -n,
            n - 1
        )));
    }
    let wrapped = if dim < 0 { dim + n } else { dim } as usize;
    Ok(wrapped.min(ndim.saturating_sub(1)))
}

/// PyTorch's error for a tensor whose storage has no data.
fn no_data_error(device: Device) -> Error {
    Error::runtime(format!(
        "Cannot access data of a tensor on {device} (it has no data)"
    ))
}

/// PyTorch's CPU allocation failure.
pub fn out_of_memory(nbytes: usize) -> Error {
    Error::runtime(format!(
        "DefaultCPUAllocator: not enough memory: you tried to allocate {nbytes} bytes."
    ))
}

/// Calls `f` with the storage offset of every element, in row-major order
/// (the walk of [`for_each_offset_pair`] with one set of strides).
pub fn for_each_offset(sizes: &[i64], strides: &[i64], offset: i64, mut f: impl FnMut(i64)) {
    for_each_offset_pair(sizes, strides, strides, |n, a, step, _, _| {
        for i in 0..n as isize {
            f(offset.wrapping_add(a.wrapping_add(i.wrapping_mul(step)) as i64));
        }
    });
}

/// Calls `f(n, a, a_step, b, b_step)` for runs of `n` elements along the
/// last dimension of `sizes`, in row-major order: `a` and `b` are the
/// element offsets of the run's first element under strides `a_strides`
/// and `b_strides`, which step by `a_step` and `b_step`. The arithmetic
/// wraps: for the strides of a layout (whose elements all lie inside its
/// storage, sized below `isize::MAX`) nothing wraps.
pub fn for_each_offset_pair(
    sizes: &[i64],
    a_strides: &[i64],
    b_strides: &[i64],
    mut f: impl FnMut(i64, isize, isize, isize, isize),
) {
    if sizes.contains(&0) {
        return;
    }
    let Some((&inner, outer)) = sizes.split_last() else {
        f(1, 0, 0, 0, 0);
        return;
    };
    let last = sizes.len() - 1;
    let (sa, sb) = (a_strides[last] as isize, b_strides[last] as isize);
    let mut index = DimVector::from_slice(outer);
    index.iter_mut().for_each(|i| *i = 0);
    let (mut a, mut b) = (0isize, 0isize);
    loop {
        f(inner, a, sa, b, sb);
        let mut d = outer.len();
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            index[d] += 1;
            let (ad, bd) = (a_strides[d] as isize, b_strides[d] as isize);
            if index[d] < outer[d] {
                a = a.wrapping_add(ad);
                b = b.wrapping_add(bd);
                break;
            }
            let back = (outer[d] - 1) as isize;
            a = a.wrapping_sub(ad.wrapping_mul(back));
            b = b.wrapping_sub(bd.wrapping_mul(back));
            index[d] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dataless_tensors_refuse_hostile_geometry() {
        let keys = TensorImpl::default_key_set(Device::CPU);
        let make = |sizes: &[i64], strides: &[i64]| {
            TensorImpl::new_dataless(keys, ScalarType::Float, Device::CPU, sizes, strides)
        };
        assert!(make(&[2, 3], &[3]).is_err(), "rank mismatch");
        assert!(make(&[-1], &[1]).is_err(), "negative size");
        assert!(make(&[2], &[-1]).is_err(), "negative stride");
        assert!(
            make(&[i64::MAX, 2], &[1, i64::MAX]).is_err(),
            "extent overflows"
        );
        let t = TensorBase::from_impl(make(&[2, 3], &[1, 2]).unwrap());
        assert_eq!(t.layout().unwrap().strides(), &[1, 2]);
        assert!(t.to_vec::<f32>().is_err(), "no data to read");
        // The slot a subclass attaches survives a shallow copy.
        let object: Arc<dyn std::any::Any + Send + Sync> = Arc::new(7u8);
        let t = TensorBase::from_impl(make(&[0], &[1]).unwrap().with_pyobj_slot(object));
        let copy = t.shallow_copy_and_detach().unwrap();
        assert_eq!(copy.pyobj_slot().unwrap().downcast_ref::<u8>(), Some(&7));
        assert_eq!(t.impl_id() != copy.impl_id(), !t.is_same(&copy));
    }

    #[test]
    fn exclusive_ownership_is_never_claimed_where_the_counts_are_not_known() {
        let mut t = TensorBase::empty(&[4], ScalarType::Float, Device::CPU).unwrap();
        let moved = t.clone();
        let moved = std::thread::spawn(move || {
            let mut moved = moved;
            assert!(!moved.is_exclusively_owned());
            moved
        })
        .join()
        .unwrap();
        drop(moved);
        assert!(t.is_exclusively_owned());
        // Even the only handle: on another thread than its maker, the
        // maker's part of the count is not readable, so the answer is no.
        let mut t = std::thread::spawn(move || {
            assert!(!t.is_exclusively_owned());
            t
        })
        .join()
        .unwrap();
        assert!(t.is_exclusively_owned());
    }

    #[test]
    fn exclusive_ownership_needs_one_handle_and_an_unshared_storage() {
        let mut t = TensorBase::empty(&[4], ScalarType::Float, Device::CPU).unwrap();
        assert!(t.is_exclusively_owned());
        let handle = t.clone();
        assert!(!t.is_exclusively_owned());
        drop(handle);
        assert!(t.is_exclusively_owned());
        let view = t.as_strided(&[2], &[2], None).unwrap();
        assert!(!t.is_exclusively_owned());
        drop(view);
        assert!(t.is_exclusively_owned());
        // A resize that keeps the storage leaves the old layout (and its
        // handle to the storage) in the tensor: no longer exclusive.
        t.resize_(&[2]).unwrap();
        assert!(!t.is_exclusively_owned());
        assert!(!TensorBase::undefined().is_exclusively_owned());
        assert_eq!(
            TensorImpl::default_key_set(Device::CPU),
            keys_of_backend(Device::CPU)
        );
        assert_eq!(
            TensorBase::empty(&[2, 3], ScalarType::Float, Device::META)
                .unwrap()
                .key_set(),
            keys_of_backend(Device::META)
        );
    }

    #[test]
    fn empty_written_by_keeps_what_was_written() {
        // SAFETY: the closure writes every element.
        let t = unsafe {
            TensorBase::empty_written_by::<i32>(&[2, 3], |out| {
                for (i, o) in out.iter_mut().enumerate() {
                    o.write(i as i32 * 10);
                }
                Ok(())
            })
        }
        .unwrap();
        assert_eq!(
            (&t.sizes()[..], &t.strides()[..]),
            (&[2i64, 3][..], &[3i64, 1][..])
        );
        assert!(t.is_contiguous());
        assert_eq!(t.to_vec::<i32>().unwrap(), vec![0, 10, 20, 30, 40, 50]);
        // SAFETY: the closure fails, so it need not write anything.
        let err = unsafe {
            TensorBase::empty_written_by::<f32>(&[1 << 20], |_| Err(Error::runtime("no")))
        };
        assert_eq!(err.unwrap_err().message(), "no");
    }

    #[test]
    fn views_share_storage_and_version() {
        let t = TensorBase::from_vec((0..6).map(|x| x as f32).collect(), &[2, 3]).unwrap();
        assert!(t.is_contiguous());
        let tt = t.as_strided(&[3, 2], &[1, 3], None).unwrap();
        assert!(!tt.is_contiguous());
        assert_eq!(tt.to_vec::<f32>().unwrap(), vec![0., 3., 1., 4., 2., 5.]);
        assert!(tt.storage().unwrap().is_same(&t.storage().unwrap()));
        tt.bump_version();
        assert_eq!(t.version(), 1);
        assert!(t.shares_version_counter(&tt) && tt.shares_version_counter(&t));
        let other = TensorBase::from_vec(vec![0f32; 6], &[2, 3]).unwrap();
        assert!(!t.shares_version_counter(&other));
        assert!(!t.shares_version_counter(&TensorBase::default()));
        assert!(t.as_strided(&[7], &[1], None).is_err());
        assert!(t.to_vec::<i64>().is_err());
    }

    #[test]
    fn empty_and_meta() {
        let m = TensorBase::empty(&[2, 2], ScalarType::Float, Device::META).unwrap();
        assert_eq!(m.numel(), 4);
        assert!(m.to_vec::<f32>().is_err());
        assert!(TensorBase::empty(&[-1], ScalarType::Float, Device::CPU).is_err());
        let z = TensorBase::empty(&[0, 3], ScalarType::Long, Device::CPU).unwrap();
        assert_eq!(z.to_vec::<i64>().unwrap(), Vec::<i64>::new());
        let s = TensorBase::from_vec(vec![true], &[]).unwrap();
        assert_eq!(s.to_vec::<bool>().unwrap(), vec![true]);
    }

    #[test]
    fn constructors_refuse_layouts_outside_their_storage() {
        let err = TensorBase::empty_strided(
            &[2, 2],
            &[-(1 << 30), 1 << 30],
            ScalarType::Float,
            Device::CPU,
        )
        .unwrap_err();
        assert!(
            err.message()
                .contains("Storage size calculation overflowed"),
            "{err}"
        );
        assert!(
            TensorBase::empty_strided(&[4, 2], &[-16, 64], ScalarType::Float, Device::CPU).is_err()
        );
        assert!(
            TensorBase::empty_strided(&[i64::MAX, 2], &[1, 1], ScalarType::Float, Device::CPU)
                .is_err()
        );
        // Empty tensors with huge strides: no overflow, no storage.
        let e = TensorBase::empty_strided(
            &[0, 3],
            &[i64::MAX, i64::MAX],
            ScalarType::Float,
            Device::CPU,
        )
        .unwrap();
        assert_eq!(e.to_vec::<f32>().unwrap(), Vec::<f32>::new());
        let t = TensorBase::from_vec(vec![1f32, 2., 3., 4.], &[4]).unwrap();
        assert!(t.as_strided(&[2], &[1], Some(3)).is_err());
        assert!(t.as_strided(&[2], &[1], Some(-1)).is_err());
        assert!(t.as_strided(&[2], &[i64::MAX], Some(0)).is_err());
        assert!(t.as_strided(&[-1], &[1], Some(0)).is_err());
        // An empty view may start anywhere; reading it reads nothing.
        let far = t.as_strided(&[0], &[1], Some(1 << 40)).unwrap();
        assert_eq!(far.to_vec::<f32>().unwrap(), Vec::<f32>::new());
        assert_eq!(
            t.as_strided(&[2], &[1], Some(2))
                .unwrap()
                .to_vec::<f32>()
                .unwrap(),
            vec![3., 4.]
        );
    }

    #[test]
    fn tensor_impl_new_refuses_invalid_sizes() {
        let keys = TensorImpl::default_key_set(Device::CPU);
        for sizes in [vec![-1, -1], vec![i64::MAX, 4], vec![1 << 62, 1 << 62]] {
            assert!(
                TensorImpl::new(keys, ScalarType::Float, Device::CPU, sizes.clone()).is_err(),
                "{sizes:?}"
            );
        }
        let ok = TensorImpl::new(keys, ScalarType::Float, Device::CPU, vec![2, 3]).unwrap();
        assert_eq!(ok.layout().numel(), 6);
    }

    #[test]
    fn replaced_layouts_are_freed_and_the_storage_grows_in_place() {
        let t = TensorBase::empty(&[0], ScalarType::Float, Device::CPU).unwrap();
        let storage = t.storage().unwrap();
        for n in 1..=2000i64 {
            t.resize_(&[n * 16]).unwrap();
        }
        assert!(t.storage().unwrap().is_same(&storage));
        assert_eq!((t.numel(), storage.nbytes()), (32000, 32000 * 4));
        // Every replaced layout was freed: the handles left are this
        // test's, the first layout's and the current one's.
        assert_eq!(storage.use_count(), 3);
        // A snapshot keeps its layout alive across a resize.
        let before = t.layout().unwrap();
        t.resize_(&[1 << 16]).unwrap();
        assert_eq!(before.numel(), 32000);
        assert_eq!(storage.use_count(), 4);
        drop(before);
        assert_eq!(storage.use_count(), 3);
    }

    #[test]
    fn growing_keeps_the_values_and_the_views() {
        let t = TensorBase::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
        let view = t.as_strided(&[2], &[1], None).unwrap();
        t.resize_(&[4]).unwrap();
        assert_eq!(t.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 0.0, 0.0]);
        t.with_data_mut::<f32, _>(|d| d[3] = 9.0).unwrap();
        view.with_data_mut::<f32, _>(|d| d[0] = 5.0).unwrap();
        assert!(view.storage().unwrap().is_same(&t.storage().unwrap()));
        let wide = view.as_strided(&[4], &[1], None).unwrap();
        assert_eq!(wide.to_vec::<f32>().unwrap(), vec![5.0, 2.0, 0.0, 9.0]);
        // Shrink, then grow again: the storage kept its bytes.
        t.resize_(&[1]).unwrap();
        assert_eq!(t.to_vec::<f32>().unwrap(), vec![5.0]);
        t.resize_(&[2, 3]).unwrap();
        assert_eq!(
            t.to_vec::<f32>().unwrap(),
            vec![5.0, 2.0, 0.0, 9.0, 0.0, 0.0]
        );
        // An offset view grows from its offset.
        let tail = t.as_strided(&[1], &[1], Some(5)).unwrap();
        tail.resize_(&[3]).unwrap();
        assert_eq!(tail.to_vec::<f32>().unwrap(), vec![0.0, 0.0, 0.0]);
        assert_eq!(t.storage().unwrap().nbytes(), 8 * 4);
        // Meta storage grows its size only.
        let m = TensorBase::empty(&[2], ScalarType::Float, Device::META).unwrap();
        m.resize_(&[3, 4]).unwrap();
        assert_eq!(m.storage().unwrap().nbytes(), 48);
    }

    #[test]
    fn growing_inside_a_borrow_of_the_same_storage_fails() {
        let t = TensorBase::from_vec(vec![1i32, 2], &[2]).unwrap();
        let err = t
            .with_data::<i32, _>(|_| t.resize_(&[64]))
            .unwrap()
            .unwrap_err();
        assert!(err.message().contains("is already borrowed"), "{err}");
        assert_eq!(t.to_vec::<i32>().unwrap(), vec![1, 2]);
    }

    #[test]
    fn memory_another_value_owns_does_not_grow() {
        let owner = TensorBase::from_vec(vec![3u8; 64], &[64]).unwrap();
        let bytes = owner.storage().unwrap();
        let ptr = bytes.data_ptr().unwrap();
        // SAFETY: `owner`'s storage stays alive (kept by `_owner` below) and
        // this test touches its bytes only through the new storage.
        let external = unsafe {
            Storage::from_external_cpu(ptr, 64, std::sync::Arc::new(bytes.clone())).unwrap()
        };
        let err = external.grow(128).unwrap_err();
        assert_eq!(
            err.message(),
            "Trying to resize storage that is not resizable"
        );
        assert_eq!(external.nbytes(), 64);
    }

    #[test]
    fn growing_while_other_threads_read_keeps_every_value() {
        let t = TensorBase::from_vec((0..64i64).collect::<Vec<_>>(), &[64]).unwrap();
        let head = t.as_strided(&[64], &[1], None).unwrap();
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    while !stop.load(Ordering::Relaxed) {
                        // The first 64 values never change, whatever the
                        // storage's size.
                        let sum = head.with_data::<i64, _>(|d| d.iter().sum::<i64>()).unwrap();
                        assert_eq!(sum, 63 * 64 / 2);
                        let v = t.to_vec::<i64>().unwrap();
                        assert_eq!(&v[..64], &(0..64).collect::<Vec<_>>()[..]);
                    }
                });
            }
            for n in 1..=200i64 {
                t.resize_(&[64 + n * 64]).unwrap();
                if n % 3 == 0 {
                    t.resize_(&[64]).unwrap();
                }
            }
            stop.store(true, Ordering::Relaxed);
        });
        assert_eq!(t.storage().unwrap().nbytes(), (64 + 200 * 64) * 8);
        assert!(head.storage().unwrap().is_same(&t.storage().unwrap()));
    }

    #[test]
    fn a_resize_on_another_thread_never_mixes_layouts() {
        let t = TensorBase::from_vec(vec![1i64; 64], &[8, 8]).unwrap();
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                for i in 0..2000 {
                    let sizes: &[i64] = if i % 2 == 0 { &[64, 1] } else { &[2, 4, 8] };
                    t.resize_(sizes).unwrap();
                    let big: &[i64] = &[1, 1 << 12];
                    if i % 7 == 0 {
                        t.resize_(big).unwrap();
                    }
                }
                stop.store(true, Ordering::Relaxed);
            });
            while !stop.load(Ordering::Relaxed) {
                let v = t.to_vec::<i64>().unwrap();
                assert!(v.len() == 64 || v.len() == 1 << 12);
                let _ = t.with_data::<i64, _>(|d| d.iter().sum::<i64>());
            }
        });
    }

    #[test]
    fn an_operator_inside_with_data_gets_an_error_not_a_hang() {
        let t = TensorBase::from_vec(vec![1f32, 2.], &[2]).unwrap();
        let inner = t
            .with_data::<f32, _>(|_| t.with_data_mut::<f32, _>(|d| d[0] = 5.))
            .unwrap();
        let err = inner.unwrap_err();
        assert!(err.message().contains("is already borrowed"), "{err}");
        // Reading inside a read is fine.
        let sum = t
            .with_data::<f32, _>(|_| t.to_vec::<f32>().unwrap().iter().sum::<f32>())
            .unwrap();
        assert_eq!(sum, 3.);
        t.with_data_mut::<f32, _>(|d| d[0] = 5.).unwrap();
        assert_eq!(t.to_vec::<f32>().unwrap(), vec![5., 2.]);
    }
}
