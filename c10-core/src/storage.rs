//! `Storage`: the memory behind tensors, shared by every view of it.
//!
//! CPU storage is one 64-byte-aligned, zero-initialised allocation made by an
//! [`Allocator`] (small ones are recycled per thread, see
//! `small_block_cache`); Meta storage records a size and has no data. Views share a
//! storage through `Arc`.
//!
//! # Concurrent access
//!
//! Tensors are `Send + Sync`, and in-place kernels write through storage that
//! other views (possibly on other threads) read or write. PyTorch leaves such
//! races to luck; here every kernel borrows the storages of its operands
//! through a per-storage reader/writer flag ([`StorageBorrow`]): shared for
//! storages it only reads, exclusive for storages it writes. Borrows of
//! several storages are taken in address order, so two kernels can never
//! wait on each other in a cycle. A contended borrow spins briefly and then
//! yields until it is granted.

use std::alloc::Layout;
use std::fmt;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::Arc;

use crate::device::{Device, DeviceType};
use crate::error::{Error, Result};
use crate::small_block_cache;

/// Alignment of every CPU allocation (a cache line; enough for AVX-512).
pub const ALIGNMENT: usize = 64;

/// An owned, aligned, zeroed CPU allocation.
struct CpuBuffer {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: the buffer is plain memory owned by this value; access to its
// contents is governed by the storage's borrow flag.
unsafe impl Send for CpuBuffer {}
// SAFETY: as above; `&CpuBuffer` only exposes the pointer value.
unsafe impl Sync for CpuBuffer {}

impl CpuBuffer {
    /// A zeroed buffer, or (`zeroed` false) one of unspecified contents
    /// that its first user must initialize.
    fn new(nbytes: usize, zeroed: bool) -> Result<CpuBuffer> {
        // A zero-byte tensor still gets a distinct, aligned allocation.
        let layout = small_block_cache::block_layout(nbytes)
            .ok_or_else(|| Error::runtime(format!("cannot allocate {nbytes} bytes")))?;
        let ptr = small_block_cache::allocate(layout, zeroed);
        let ptr = NonNull::new(ptr).ok_or_else(|| {
            Error::runtime(format!(
                "DefaultCPUAllocator: not enough memory: you tried to allocate {nbytes} bytes."
            ))
        })?;
        Ok(CpuBuffer { ptr, layout })
    }
}

impl Drop for CpuBuffer {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from `small_block_cache::allocate(layout)` and
        // is freed once.
        unsafe { small_block_cache::free(self.ptr, self.layout) }
    }
}

/// Makes storages for one device (`c10::Allocator`).
pub trait Allocator: Send + Sync {
    /// The device of the storages it makes.
    fn device(&self) -> Device;
    /// A zero-filled storage of `nbytes` bytes.
    fn allocate(&self, nbytes: usize) -> Result<Storage>;
}

/// The CPU allocator: 64-byte-aligned, zeroed memory.
#[derive(Copy, Clone, Debug, Default)]
pub struct CpuAllocator;

impl Allocator for CpuAllocator {
    fn device(&self) -> Device {
        Device::CPU
    }
    fn allocate(&self, nbytes: usize) -> Result<Storage> {
        Storage::new_cpu(nbytes, true)
    }
}

/// The Meta allocator: sizes without data.
#[derive(Copy, Clone, Debug, Default)]
pub struct MetaAllocator;

impl Allocator for MetaAllocator {
    fn device(&self) -> Device {
        Device::META
    }
    fn allocate(&self, nbytes: usize) -> Result<Storage> {
        Ok(Storage::new_dataless(nbytes, Device::META))
    }
}

impl Storage {
    /// A storage of `nbytes` bytes on `device` that holds no data: what Meta
    /// tensors have, and what tensors of devices without an allocator in
    /// this build have (they can be dispatched on, not computed with).
    pub fn new_dataless(nbytes: usize, device: Device) -> Storage {
        Storage::from_impl(StorageImpl {
            buffer: None,
            nbytes,
            device,
            borrow: AtomicIsize::new(0),
        })
    }
}

/// The allocator for a device, if this build has one.
pub fn allocator_for(device: Device) -> Result<&'static dyn Allocator> {
    match device.device_type() {
        DeviceType::CPU => Ok(&CpuAllocator),
        DeviceType::Meta => Ok(&MetaAllocator),
        _ => Err(Error::runtime(format!(
            "no allocator is available for device {device} in this build"
        ))),
    }
}

struct StorageImpl {
    buffer: Option<CpuBuffer>,
    nbytes: usize,
    device: Device,
    /// 0: free; n > 0: n shared borrows; -1: one exclusive borrow.
    borrow: AtomicIsize,
}

/// A shared handle to tensor memory (`c10::Storage`).
#[derive(Clone)]
pub struct Storage {
    inner: Arc<StorageImpl>,
}

impl Storage {
    fn from_impl(s: StorageImpl) -> Storage {
        Storage { inner: Arc::new(s) }
    }

    /// A CPU storage of `nbytes` bytes whose contents are not initialized:
    /// the caller owns the only handle and must write every byte before
    /// anything reads it (see [`TensorBase::empty_written_by`]).
    ///
    /// [`TensorBase::empty_written_by`]: crate::TensorBase::empty_written_by
    pub(crate) fn new_cpu_uninit(nbytes: usize) -> Result<Storage> {
        Storage::new_cpu(nbytes, false)
    }

    /// A CPU storage of `nbytes` bytes, zeroed when `zeroed`.
    fn new_cpu(nbytes: usize, zeroed: bool) -> Result<Storage> {
        Ok(Storage::from_impl(StorageImpl {
            buffer: Some(CpuBuffer::new(nbytes, zeroed)?),
            nbytes,
            device: Device::CPU,
            borrow: AtomicIsize::new(0),
        }))
    }

    /// A zeroed storage of `nbytes` bytes on `device`.
    pub fn new(nbytes: usize, device: Device) -> Result<Storage> {
        allocator_for(device)?.allocate(nbytes)
    }

    /// Size in bytes.
    pub fn nbytes(&self) -> usize {
        self.inner.nbytes
    }

    /// The device.
    pub fn device(&self) -> Device {
        self.inner.device
    }

    /// Whether the storage has data (Meta storage has none).
    pub fn has_data(&self) -> bool {
        self.inner.buffer.is_some()
    }

    /// Whether both handles share one storage.
    pub fn is_same(&self, other: &Storage) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Whether this is the only handle to the storage. Storages are only
    /// ever shared through handles (no weak references are made), so a
    /// caller that holds the only handle, and the only way to reach it, is
    /// the only one who can reach the memory.
    #[inline]
    pub fn is_unique(&self) -> bool {
        Arc::strong_count(&self.inner) == 1
    }

    /// An identity usable for ordering borrows.
    #[inline]
    pub fn address(&self) -> usize {
        Arc::as_ptr(&self.inner) as usize
    }

    /// The start of the data, or `None` for Meta storage. Reading or writing
    /// through it requires a [`StorageBorrow`] of the matching kind.
    pub fn data_ptr(&self) -> Option<NonNull<u8>> {
        self.inner.buffer.as_ref().map(|b| b.ptr)
    }

    fn acquire(&self, exclusive: bool) {
        let flag = &self.inner.borrow;
        let mut spins = 0u32;
        loop {
            let current = flag.load(Ordering::Relaxed);
            let next = match (exclusive, current) {
                (true, 0) => Some(-1),
                (false, n) if n >= 0 => Some(n + 1),
                _ => None,
            };
            if let Some(next) = next {
                if flag
                    .compare_exchange_weak(current, next, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    return;
                }
                continue;
            }
            spins += 1;
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }

    fn release(&self, exclusive: bool) {
        if exclusive {
            self.inner.borrow.store(0, Ordering::Release);
        } else {
            self.inner.borrow.fetch_sub(1, Ordering::Release);
        }
    }
}

impl fmt::Debug for Storage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Storage({} bytes on {})",
            self.inner.nbytes, self.inner.device
        )
    }
}

/// Storages a [`StorageBorrow`] keeps inline (a kernel's usual operands).
const INLINE_BORROWS: usize = 4;

/// Borrows of several storages held for one kernel: shared for inputs,
/// exclusive for outputs, taken in address order, released on drop.
pub struct StorageBorrow<'a> {
    held: [(Option<&'a Storage>, bool); INLINE_BORROWS],
    extra: Vec<(Option<&'a Storage>, bool)>,
}

impl<'a> StorageBorrow<'a> {
    /// Borrows `storages`; a storage listed both as read and written (or
    /// twice) is borrowed once, exclusively if any use writes it.
    pub fn new(storages: impl IntoIterator<Item = (&'a Storage, bool)>) -> StorageBorrow<'a> {
        let mut held = [(None, false); INLINE_BORROWS];
        let mut extra = Vec::new();
        let mut n = 0;
        for (s, write) in storages {
            if n < held.len() {
                held[n] = (Some(s), write);
                n += 1;
            } else {
                extra.push((Some(s), write));
            }
        }
        let entries: &mut [(Option<&'a Storage>, bool)] = if extra.is_empty() {
            &mut held[..n]
        } else {
            // Past the inline slots: all of them in the vector.
            extra.extend_from_slice(&held[..n]);
            held = [(None, false); INLINE_BORROWS];
            &mut extra
        };
        let kept = sort_and_merge(entries);
        entries[kept..].fill((None, false));
        for (s, write) in &entries[..kept] {
            if let Some(s) = s {
                s.acquire(*write);
            }
        }
        StorageBorrow { held, extra }
    }
}

/// Sorts `entries` by storage address (the order borrows are taken in) and
/// merges each storage's repeats into its first entry, writing if any use
/// writes; returns how many distinct entries now lead the slice.
#[inline]
fn sort_and_merge(entries: &mut [(Option<&Storage>, bool)]) -> usize {
    if entries.len() <= INLINE_BORROWS {
        // An insertion sort inline: a kernel's few operands.
        for i in 1..entries.len() {
            let mut j = i;
            while j > 0 && addr(entries[j - 1].0) > addr(entries[j].0) {
                entries.swap(j - 1, j);
                j -= 1;
            }
        }
    } else {
        entries.sort_unstable_by_key(|(s, _)| addr(*s));
    }
    let mut kept = 0;
    for i in 0..entries.len() {
        if kept > 0 && addr(entries[kept - 1].0) == addr(entries[i].0) {
            entries[kept - 1].1 |= entries[i].1;
        } else {
            entries[kept] = entries[i];
            kept += 1;
        }
    }
    kept
}

#[inline]
fn addr(s: Option<&Storage>) -> usize {
    s.map_or(0, Storage::address)
}

impl Drop for StorageBorrow<'_> {
    fn drop(&mut self) {
        for (s, write) in self.held.iter().rev() {
            if let Some(s) = s {
                s.release(*write);
            }
        }
        for (s, write) in self.extra.iter().rev() {
            if let Some(s) = s {
                s.release(*write);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_aligned_and_zeroed() {
        let s = Storage::new(100, Device::CPU).unwrap();
        let p = s.data_ptr().unwrap();
        assert_eq!(p.as_ptr() as usize % ALIGNMENT, 0);
        let _b = StorageBorrow::new([(&s, false)]);
        // SAFETY: 100 bytes were allocated and zeroed; a shared borrow is held.
        let bytes = unsafe { std::slice::from_raw_parts(p.as_ptr(), 100) };
        assert!(bytes.iter().all(|b| *b == 0));
        assert!(!Storage::new(8, Device::META).unwrap().has_data());
    }

    #[test]
    fn borrows_exclude_writers() {
        let s = Storage::new(8, Device::CPU).unwrap();
        let a = StorageBorrow::new([(&s, false), (&s, false)]);
        let b = StorageBorrow::new([(&s, false)]);
        assert_eq!(s.inner.borrow.load(Ordering::Relaxed), 2);
        drop((a, b));
        let w = StorageBorrow::new([(&s, false), (&s, true)]);
        assert_eq!(s.inner.borrow.load(Ordering::Relaxed), -1);
        drop(w);
        assert_eq!(s.inner.borrow.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn many_borrows_merge_duplicates() {
        let stores: Vec<Storage> = (0..5)
            .map(|_| Storage::new(8, Device::CPU).unwrap())
            .collect();
        // Eleven uses of five storages: past the inline slots, each storage
        // appears twice or more, written by one use of storage 2 only.
        let uses: Vec<(&Storage, bool)> = (0..11).map(|i| (&stores[i % 5], i == 7)).collect();
        let b = StorageBorrow::new(uses);
        let flags: Vec<isize> = stores
            .iter()
            .map(|s| s.inner.borrow.load(Ordering::Relaxed))
            .collect();
        assert_eq!(flags, vec![1, 1, -1, 1, 1]);
        drop(b);
        assert!(stores
            .iter()
            .all(|s| s.inner.borrow.load(Ordering::Relaxed) == 0));
        let u = Storage::new(8, Device::CPU).unwrap();
        assert!(u.is_unique());
        let v = u.clone();
        assert!(!u.is_unique() && !v.is_unique());
    }
}
