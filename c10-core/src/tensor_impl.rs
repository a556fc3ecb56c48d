//! `TensorImpl` and the `TensorBase` handle: a strided view of a storage.
//!
//! A tensor is a storage, an offset into it (in elements), sizes and strides
//! (in elements), a dtype, a device, the dispatch key set calls on it start
//! from, and a version counter shared by all views of one storage (bumped by
//! in-place writes, as autograd needs). Views (`as_strided` and every view
//! operator built on it) share the storage and the version counter.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use crate::device::Device;
use crate::dispatch_key::DispatchKey;
use crate::dispatch_key_set::DispatchKeySet;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::published_cell::PublishedCell;
use crate::scalar_type::ScalarType;
use crate::small_vec::SmallVec;
use crate::storage::{Storage, StorageBorrow};

/// Sizes or strides: inline up to 6 dimensions, on the heap beyond.
pub type DimVector = SmallVec<i64, 6>;

/// Whether `sizes` and `strides` describe a row-major contiguous layout:
/// dimensions of size 1 may have any stride, an empty tensor is contiguous.
fn compute_contiguous(sizes: &[i64], strides: &[i64]) -> bool {
    let mut expected = 1i64;
    for (&size, &stride) in sizes.iter().zip(strides).rev() {
        if size == 1 {
            continue;
        }
        if size == 0 {
            return true;
        }
        if stride != expected {
            return false;
        }
        expected *= size;
    }
    true
}

/// Contiguous (row-major) strides for `sizes`.
#[inline]
pub fn contiguous_strides(sizes: &[i64]) -> DimVector {
    let mut strides = DimVector::from_slice(sizes);
    let mut acc = 1i64;
    for (stride, &size) in strides.iter_mut().zip(sizes).rev() {
        *stride = acc;
        acc = acc.saturating_mul(size.max(1));
    }
    strides
}

/// Checked product of sizes (element count).
fn checked_numel(sizes: &[i64]) -> Result<i64> {
    sizes.iter().try_fold(1i64, |acc, &s| {
        if s < 0 {
            return Err(Error::runtime(format!(
                "Trying to create tensor with negative dimension {s}: {sizes:?}"
            )));
        }
        acc.checked_mul(s)
            .ok_or_else(|| Error::runtime(format!("numel overflows for sizes {sizes:?}")))
    })
}

/// Where a tensor's elements are: a storage, an offset, sizes and strides.
/// Replaced as a whole when the tensor is resized.
#[derive(Debug)]
pub struct TensorLayout {
    storage: Storage,
    storage_offset: i64,
    sizes: DimVector,
    strides: DimVector,
    numel: i64,
    /// `is_contiguous`, computed once (PyTorch's `is_contiguous_` flag).
    contiguous: bool,
}

impl TensorLayout {
    fn new(
        storage: Storage,
        storage_offset: i64,
        sizes: DimVector,
        strides: DimVector,
        numel: i64,
    ) -> TensorLayout {
        let contiguous = compute_contiguous(&sizes, &strides);
        TensorLayout {
            storage,
            storage_offset,
            sizes,
            strides,
            numel,
            contiguous,
        }
    }

    /// The storage.
    #[inline]
    pub fn storage(&self) -> &Storage {
        &self.storage
    }
    /// Offset into the storage, in elements.
    #[inline]
    pub fn storage_offset(&self) -> i64 {
        self.storage_offset
    }
    /// Sizes.
    #[inline]
    pub fn sizes(&self) -> &[i64] {
        &self.sizes
    }
    /// Strides, in elements.
    #[inline]
    pub fn strides(&self) -> &[i64] {
        &self.strides
    }
    /// Number of elements.
    #[inline]
    pub fn numel(&self) -> i64 {
        self.numel
    }
    /// Whether the elements are contiguous in row-major order.
    #[inline]
    pub fn is_contiguous(&self) -> bool {
        self.contiguous
    }
}

/// The shared state of a tensor (`c10::TensorImpl`).
pub struct TensorImpl {
    layout: PublishedCell<TensorLayout>,
    dtype: ScalarType,
    device: Device,
    key_set: DispatchKeySet,
    /// The version counter, shared with every view; made on the first view
    /// or in-place write (a tensor that has neither reads version 0).
    version: OnceLock<Arc<AtomicU64>>,
    wrapped_number: bool,
}

impl fmt::Debug for TensorImpl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let layout = self.layout.load();
        f.debug_struct("TensorImpl")
            .field("sizes", &layout.sizes)
            .field("strides", &layout.strides)
            .field("storage_offset", &layout.storage_offset)
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
    /// computed with).
    pub fn new(
        key_set: DispatchKeySet,
        dtype: ScalarType,
        device: Device,
        sizes: Vec<i64>,
    ) -> Self {
        let numel = checked_numel(&sizes).unwrap_or(0);
        let nbytes = (numel.max(0) as usize).saturating_mul(dtype.element_size());
        let storage =
            Storage::new(nbytes, device).unwrap_or_else(|_| Storage::new_dataless(nbytes, device));
        TensorImpl::with_layout(
            TensorLayout::new(
                storage,
                0,
                DimVector::from_slice(&sizes),
                contiguous_strides(&sizes),
                numel,
            ),
            dtype,
            device,
            key_set,
            OnceLock::new(),
        )
    }

    fn with_layout(
        layout: TensorLayout,
        dtype: ScalarType,
        device: Device,
        key_set: DispatchKeySet,
        version: OnceLock<Arc<AtomicU64>>,
    ) -> TensorImpl {
        TensorImpl {
            layout: PublishedCell::new(layout),
            dtype,
            device,
            key_set,
            version,
            wrapped_number: false,
        }
    }

    /// The version counter, made on first use.
    fn version_counter(&self) -> &Arc<AtomicU64> {
        self.version.get_or_init(|| Arc::new(AtomicU64::new(0)))
    }

    /// The default key set of a dense tensor on `device`: the dense runtime
    /// key, its autograd key and ADInplaceOrView (as PyTorch gives every
    /// tensor; `requires_grad` does not change the keys).
    #[inline]
    pub fn default_key_set(device: Device) -> DispatchKeySet {
        // CPU tensors (the commonest allocation) read a constant.
        const CPU: DispatchKeySet = keys_of_backend(Device::CPU);
        if device.device_type() == crate::device::DeviceType::CPU {
            CPU
        } else {
            keys_of_backend(device)
        }
    }
}

/// The element count of `sizes` and the bytes a contiguous tensor of them
/// takes at `element_size` bytes each.
fn contiguous_extent(sizes: &[i64], element_size: usize) -> Result<(i64, usize)> {
    let numel = checked_numel(sizes)?;
    let nbytes = (numel as usize)
        .checked_mul(element_size)
        .ok_or_else(|| Error::runtime("storage size overflows"))?;
    Ok((numel, nbytes))
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
#[derive(Clone, Debug, Default)]
pub struct TensorBase {
    inner: Option<Arc<TensorImpl>>,
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
            inner: Some(Arc::new(tensor)),
        }
    }

    /// `at::empty_strided`: a zero-filled tensor with the given layout. The
    /// storage covers every element the strides can reach.
    pub fn empty_strided(
        sizes: &[i64],
        strides: &[i64],
        dtype: ScalarType,
        device: Device,
    ) -> Result<TensorBase> {
        if sizes.len() != strides.len() {
            return Err(Error::runtime(format!(
                "mismatch in length of strides and shape: {} vs {}",
                strides.len(),
                sizes.len()
            )));
        }
        let numel = checked_numel(sizes)?;
        let span = storage_span(sizes, strides, 0)?;
        let storage = Storage::new(
            span.checked_mul(dtype.element_size())
                .ok_or_else(|| Error::runtime("storage size overflows"))?,
            device,
        )?;
        Ok(TensorBase::from_impl(TensorImpl::with_layout(
            TensorLayout::new(
                storage,
                0,
                DimVector::from_slice(sizes),
                DimVector::from_slice(strides),
                numel,
            ),
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
        let layout = inner.layout.load();
        Ok(TensorBase::from_impl(TensorImpl {
            layout: PublishedCell::new(TensorLayout::new(
                layout.storage.clone(),
                0,
                DimVector::from_slice(&[]),
                DimVector::from_slice(&[]),
                1,
            )),
            dtype: T::DTYPE,
            device: Device::CPU,
            key_set: inner.key_set,
            version: OnceLock::new(),
            wrapped_number: true,
        }))
    }

    /// Whether this 0-dim tensor stands for a Python number
    /// (`is_wrapped_number`).
    pub fn is_wrapped_number(&self) -> bool {
        self.inner.as_ref().is_some_and(|t| t.wrapped_number)
    }

    /// `resize_`: gives the tensor new sizes with contiguous strides,
    /// allocating new storage when the current one is too small (other views
    /// keep the old storage). The same sizes leave the tensor untouched.
    pub fn resize_(&self, sizes: &[i64]) -> Result<()> {
        if self.sizes() == sizes {
            return Ok(());
        }
        self.resize_strided_(sizes, &contiguous_strides(sizes))
    }

    /// Resizes to `sizes` with `strides` (`resize_` followed by
    /// `as_strided_`), allocating new storage when the current one is too
    /// small for them.
    pub fn resize_strided_(&self, sizes: &[i64], strides: &[i64]) -> Result<()> {
        let t = self.get()?;
        if sizes.len() != strides.len() || strides.iter().any(|s| *s < 0) {
            return Err(Error::runtime(format!(
                "resize: invalid strides {strides:?} for sizes {sizes:?}"
            )));
        }
        let layout = t.layout.load();
        let numel = checked_numel(sizes)?;
        let elem = t.dtype.element_size();
        let needed = storage_span(sizes, strides, layout.storage_offset)?
            .checked_mul(elem)
            .ok_or_else(|| Error::runtime("resize: storage size overflows"))?;
        let storage = if needed <= layout.storage.nbytes() {
            layout.storage.clone()
        } else if layout.storage.has_data() {
            Storage::new(needed, t.device)?
        } else {
            Storage::new_dataless(needed, t.device)
        };
        t.layout.store(TensorLayout::new(
            storage,
            layout.storage_offset,
            DimVector::from_slice(sizes),
            DimVector::from_slice(strides),
            numel,
        ));
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

    /// A contiguous tensor of `sizes` (`numel` elements) over all of
    /// `storage`.
    fn contiguous_on(
        storage: Storage,
        sizes: &[i64],
        numel: i64,
        dtype: ScalarType,
        device: Device,
    ) -> TensorBase {
        TensorBase::from_impl(TensorImpl::with_layout(
            TensorLayout {
                storage,
                storage_offset: 0,
                sizes: DimVector::from_slice(sizes),
                strides: contiguous_strides(sizes),
                numel,
                contiguous: true,
            },
            dtype,
            device,
            TensorImpl::default_key_set(device),
            OnceLock::new(),
        ))
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

    /// The sizes (empty for an undefined tensor).
    #[inline]
    pub fn sizes(&self) -> &[i64] {
        self.inner.as_ref().map_or(&[], |t| &t.layout.load().sizes)
    }

    /// The current layout (storage, offset, sizes, strides), if defined.
    #[inline]
    pub fn layout(&self) -> Option<&TensorLayout> {
        self.inner.as_ref().map(|t| t.layout.load())
    }

    /// The strides, in elements (empty for an undefined tensor).
    #[inline]
    pub fn strides(&self) -> &[i64] {
        self.inner
            .as_ref()
            .map_or(&[], |t| &t.layout.load().strides)
    }

    /// The offset into the storage, in elements.
    #[inline]
    pub fn storage_offset(&self) -> i64 {
        self.inner
            .as_ref()
            .map_or(0, |t| t.layout.load().storage_offset)
    }

    /// Number of dimensions.
    #[inline]
    pub fn dim(&self) -> usize {
        self.sizes().len()
    }

    /// Number of elements.
    #[inline]
    pub fn numel(&self) -> i64 {
        self.inner.as_ref().map_or(0, |t| t.layout.load().numel)
    }

    /// The storage.
    #[inline]
    pub fn storage(&self) -> Option<&Storage> {
        self.inner.as_ref().map(|t| &t.layout.load().storage)
    }

    /// The version counter's value.
    pub fn version(&self) -> u64 {
        self.inner
            .as_ref()
            .and_then(|t| t.version.get())
            .map_or(0, |v| v.load(Ordering::Relaxed))
    }

    /// Records an in-place write (`bump_version`).
    pub fn bump_version(&self) {
        if let Some(t) = &self.inner {
            t.version_counter().fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Whether the tensor is contiguous in row-major order (`is_contiguous`):
    /// dimensions of size 1 may have any stride.
    #[inline]
    pub fn is_contiguous(&self) -> bool {
        self.inner
            .as_ref()
            .is_none_or(|t| t.layout.load().contiguous)
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

    /// Whether this handle is the only way to reach the tensor's elements:
    /// the only handle to its `TensorImpl`, whose storage no other tensor
    /// (a view, an older layout) holds. Handles are only ever made from
    /// other handles (no weak references exist), so while the caller keeps
    /// `&mut` access to this handle and does not clone it, no other thread
    /// can read or write those elements: the caller may skip the storage's
    /// borrow flag.
    #[inline]
    pub fn is_exclusively_owned(&mut self) -> bool {
        let Some(inner) = &self.inner else {
            return false;
        };
        let unique = Arc::strong_count(inner) == 1 && inner.layout.load().storage.is_unique();
        if unique {
            // Other handles were dropped with a Release decrement; their
            // accesses happen before ours.
            std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
        }
        unique
    }

    /// Number of handles sharing the tensor (`use_count`).
    pub fn use_count(&self) -> usize {
        self.inner.as_ref().map_or(0, Arc::strong_count)
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
        if sizes.len() != strides.len() {
            return Err(Error::runtime(format!(
                "mismatch in length of strides and shape: {} vs {}",
                strides.len(),
                sizes.len()
            )));
        }
        if strides.iter().any(|s| *s < 0) {
            return Err(Error::runtime("as_strided: Negative strides are not supported at the moment, got strides: {strides:?}".replace("{strides:?}", &format!("{strides:?}"))));
        }
        let layout = t.layout.load();
        let offset = offset.unwrap_or(layout.storage_offset);
        if offset < 0 {
            return Err(Error::runtime(format!(
                "Tensor: invalid storage offset {offset}"
            )));
        }
        let numel = checked_numel(sizes)?;
        let span = storage_span(sizes, strides, offset)?;
        let available = layout.storage.nbytes() / t.dtype.element_size();
        if numel > 0 && span > available {
            return Err(Error::runtime(format!(
                "setStorage: sizes {sizes:?}, strides {strides:?}, storage offset {offset}, and itemsize {} requiring a storage size of {} are out of bounds for storage of size {}",
                t.dtype.element_size(),
                span * t.dtype.element_size(),
                layout.storage.nbytes()
            )));
        }
        Ok(TensorBase::from_impl(TensorImpl::with_layout(
            TensorLayout::new(
                layout.storage.clone(),
                offset,
                DimVector::from_slice(sizes),
                DimVector::from_slice(strides),
                numel,
            ),
            t.dtype,
            t.device,
            t.key_set,
            OnceLock::from(Arc::clone(t.version_counter())),
        )))
    }

    fn check_element<T: Element>(&self) -> Result<&TensorImpl> {
        let t = self.get()?;
        if t.dtype != T::DTYPE {
            return Err(Error::runtime(format!(
                "expected scalar type {} but found {}",
                T::DTYPE,
                t.dtype
            )));
        }
        if !t.layout.load().storage.has_data() {
            return Err(Error::runtime(format!(
                "Cannot access data of a tensor on {} (it has no data)",
                t.device
            )));
        }
        Ok(t)
    }

    /// The elements in row-major (logical) order.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        let t = self.check_element::<T>()?;
        let l = t.layout.load();
        let _borrow = StorageBorrow::new([(&l.storage, false)]);
        let base = l.storage.data_ptr().ok_or_else(undefined_error)?.as_ptr() as *const T;
        let mut out = Vec::with_capacity(l.numel as usize);
        for_each_offset(&l.sizes, &l.strides, l.storage_offset, |off| {
            // SAFETY: `as_strided`/`empty_strided` checked that every offset
            // the sizes and strides reach lies inside the storage; the storage
            // holds `T`s (dtype checked) and a shared borrow is held.
            out.push(unsafe { *base.add(off as usize) });
        });
        Ok(out)
    }

    /// Runs `f` on the elements of a contiguous tensor as a slice, holding a
    /// shared borrow of its storage.
    pub fn with_data<T: Element, R>(&self, f: impl FnOnce(&[T]) -> R) -> Result<R> {
        let t = self.check_element::<T>()?;
        if !self.is_contiguous() {
            return Err(Error::runtime("with_data needs a contiguous tensor"));
        }
        let l = t.layout.load();
        let _borrow = StorageBorrow::new([(&l.storage, false)]);
        let base = l.storage.data_ptr().ok_or_else(undefined_error)?.as_ptr() as *const T;
        // SAFETY: the tensor is contiguous, so its elements are the `numel`
        // consecutive `T`s from its offset, inside the storage (checked when
        // the view was made); the shared borrow keeps writers away for the
        // closure's duration.
        let slice = unsafe {
            std::slice::from_raw_parts(base.add(l.storage_offset as usize), l.numel as usize)
        };
        Ok(f(slice))
    }

    /// Runs `f` on the storage of a contiguous tensor as a mutable slice
    /// (for constructors), holding an exclusive borrow.
    pub fn with_data_mut<T: Element, R>(&self, f: impl FnOnce(&mut [T]) -> R) -> Result<R> {
        let t = self.check_element::<T>()?;
        if !self.is_contiguous() {
            return Err(Error::runtime("with_data_mut needs a contiguous tensor"));
        }
        let l = t.layout.load();
        let _borrow = StorageBorrow::new([(&l.storage, true)]);
        let base = l.storage.data_ptr().ok_or_else(undefined_error)?.as_ptr() as *mut T;
        // SAFETY: the tensor is contiguous, so its elements are the `numel`
        // consecutive `T`s from its offset, inside the storage (checked when
        // the view was made); the exclusive borrow keeps every other kernel
        // and reader away for the closure's duration.
        let slice = unsafe {
            std::slice::from_raw_parts_mut(base.add(l.storage_offset as usize), l.numel as usize)
        };
        Ok(f(slice))
    }
}

/// One past the largest element offset the view reaches (0 for no elements).
fn storage_span(sizes: &[i64], strides: &[i64], offset: i64) -> Result<usize> {
    if sizes.contains(&0) {
        return Ok(offset.max(0) as usize);
    }
    let mut last = offset;
    for (&size, &stride) in sizes.iter().zip(strides) {
        last = (size - 1)
            .checked_mul(stride)
            .and_then(|x| last.checked_add(x))
            .ok_or_else(|| Error::runtime("storage offset overflows"))?;
    }
    Ok((last + 1) as usize)
}

/// Calls `f` with the storage offset of every element, in row-major order.
pub fn for_each_offset(sizes: &[i64], strides: &[i64], offset: i64, mut f: impl FnMut(i64)) {
    if sizes.contains(&0) {
        return;
    }
    let n = sizes.len();
    let mut index = vec![0i64; n];
    let mut off = offset;
    loop {
        f(off);
        let mut d = n;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            index[d] += 1;
            off += strides[d];
            if index[d] < sizes[d] {
                break;
            }
            off -= strides[d] * sizes[d];
            index[d] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!((t.sizes(), t.strides()), (&[2i64, 3][..], &[3i64, 1][..]));
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
        assert!(tt.storage().unwrap().is_same(t.storage().unwrap()));
        tt.bump_version();
        assert_eq!(t.version(), 1);
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
}
