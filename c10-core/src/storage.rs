//! `Storage`: the memory behind tensors, shared by every view of it.
//!
//! A storage is built from the memory an [`Allocator`] made (a
//! [`DataPtr`], which gives the memory back when the storage's last handle
//! drops): on the CPU one 64-byte-aligned, zero-initialised block, or
//! 64-byte-aligned memory another value owns (a mapped file,
//! [`Storage::from_external_cpu`]); Meta storage records a size and has no
//! data. Views share a storage through a shared handle (`IntrusivePtr`).
//!
//! A storage only grows ([`Storage::grow`], what `resize_` does when a
//! tensor outgrows it): its bytes move to a larger allocation under an
//! exclusive borrow, so every view keeps seeing them, and a layout checked
//! against the old size stays inside the new one. The data pointer is
//! therefore only stable while a [`StorageBorrow`] is held: read it under
//! the borrow that covers its use.
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
//!
//! Borrows are per thread. A kernel that splits its loop over threads
//! (`aten_core::parallel`) keeps its borrows on the calling thread, which
//! runs only chunks of its own loop while it waits, never another job of
//! the pool that could need the same storages.

use std::any::Any;
use std::fmt;
use std::ptr::NonNull;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::allocator::CpuBlock;
pub use crate::allocator::{
    allocator_for, Allocator, CpuAllocator, DataPtr, MetaAllocator, ALIGNMENT,
};
use crate::device::{Device, DeviceType};
use crate::error::{Error, Result};
use crate::intrusive_ptr::IntrusivePtr;
use crate::sync::{self, AtomicIsize, AtomicPtr, AtomicUsize, Ordering, UnsafeCell};

impl Storage {
    /// A storage of `nbytes` bytes that holds no data on `device`: what Meta
    /// tensors have, and what tensors of devices without an allocator in
    /// this build have (they can be dispatched on, not computed with).
    pub fn new_dataless(nbytes: usize, device: Device) -> Storage {
        // SAFETY: a pointer without memory claims no bytes.
        unsafe { Storage::from_data_ptr(DataPtr::none(device), nbytes) }
    }

    /// A zero-filled storage of `nbytes` bytes made by `allocator`.
    pub fn new_with_allocator(nbytes: usize, allocator: &dyn Allocator) -> Result<Storage> {
        let data = allocator.allocate(nbytes)?;
        // SAFETY: the `Allocator` contract: `data` is `nbytes` bytes (or
        // none) that only this storage uses.
        Ok(unsafe { Storage::from_data_ptr(data, nbytes) })
    }

    /// A storage over the memory `data` addresses, `nbytes` long; the
    /// memory is given back when the storage's last handle drops.
    ///
    /// # Safety
    ///
    /// `data` must address at least `nbytes` bytes of initialized memory
    /// (or no memory at all: a storage without data) that nothing reads or
    /// writes except through this storage: views are checked against
    /// `nbytes`, and kernels trust them.
    #[inline(always)]
    pub unsafe fn from_data_ptr(data: DataPtr, nbytes: usize) -> Storage {
        let device = data.device();
        let (host, device_addr) = if device.device_type() == DeviceType::CPU {
            (data.get(), 0)
        } else {
            (std::ptr::null_mut(), data.get() as usize)
        };
        Storage::from_impl(|| StorageImpl {
            data: AtomicPtr::new(host),
            memory: UnsafeCell::new(data),
            device_addr,
            nbytes: AtomicUsize::new(nbytes),
            device,
            borrow: AtomicIsize::new(0),
        })
    }

    /// The device address of the data of a storage on a device other
    /// than the CPU (`None` for CPU, Meta and data-less storages).
    /// Kernels use it under a [`StorageBorrow`], as they do `data_ptr`.
    pub fn device_ptr(&self) -> Option<u64> {
        (self.inner.device_addr != 0).then_some(self.inner.device_addr as u64)
    }
}

struct StorageImpl {
    /// The start of the CPU memory (null when there is none): `memory`'s
    /// pointer, stored where any thread may read it. Changed only by
    /// [`Storage::grow`], under an exclusive borrow.
    data: AtomicPtr<u8>,
    /// The memory and what gives it back. Replaced only by
    /// [`Storage::grow`], under an exclusive borrow, and otherwise touched
    /// only when the storage is dropped.
    memory: UnsafeCell<DataPtr>,
    /// The device address of memory on another device (0 for none: host
    /// code cannot address it, and `data` is then null). Never changes.
    device_addr: usize,
    /// Size in bytes; it only ever grows.
    nbytes: AtomicUsize,
    device: Device,
    /// 0: free; n > 0: n shared borrows; -1: one exclusive borrow.
    borrow: AtomicIsize,
}

// SAFETY: `memory` is the one field without its own synchronization. It is
// written only by `Storage::grow` while that thread holds the storage's
// exclusive borrow (so no other thread reads or writes it, or the memory it
// owns, at the same time; the borrow's acquire/release orders the accesses)
// and read only by the last handle's drop; every other field is `Sync`.
unsafe impl Sync for StorageImpl {}

/// A shared handle to tensor memory (`c10::Storage`).
#[derive(Clone)]
pub struct Storage {
    inner: IntrusivePtr<StorageImpl>,
}

impl Storage {
    /// A storage of the `StorageImpl` that `make` returns, written straight
    /// into its block (inlined, so that the fields are stored where they
    /// live: a value built first and copied in is read back in wide loads
    /// while its narrow stores are still pending, a store-forwarding stall
    /// on every result's allocation).
    #[inline(always)]
    fn from_impl(make: impl FnOnce() -> StorageImpl) -> Storage {
        Storage {
            inner: IntrusivePtr::new_with(make),
        }
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
    ///
    /// The block is allocated first and the storage's fields, its
    /// `DataPtr` included, are then written where they live: every eager
    /// result is allocated here.
    fn new_cpu(nbytes: usize, zeroed: bool) -> Result<Storage> {
        // The block holds at least `nbytes` bytes, and only this storage
        // uses it; an uninitialized one is written before it is read
        // (`new_cpu_uninit`).
        let block = CpuBlock::allocate(nbytes, zeroed)?;
        let host = block.as_ptr();
        Ok(Storage::from_impl(
            #[inline(always)]
            || StorageImpl {
                data: AtomicPtr::new(host),
                memory: UnsafeCell::new(DataPtr::from_cpu_block(block)),
                device_addr: 0,
                nbytes: AtomicUsize::new(nbytes),
                device: Device::CPU,
                borrow: AtomicIsize::new(0),
            },
        ))
    }

    /// A CPU storage over `nbytes` bytes at `ptr` that `owner` keeps alive
    /// (the pages of a mapped file): no copy is made, and the memory is
    /// given back when the storage's last handle and every other handle to
    /// `owner` are gone. Fails unless `ptr` is aligned to [`ALIGNMENT`],
    /// as every CPU storage is.
    ///
    /// # Safety
    ///
    /// For as long as `owner` lives, the `nbytes` bytes at `ptr` must be
    /// initialized and valid for reads and writes, and nothing may read or
    /// write them except through this storage (no other storage, slice or
    /// pointer may cover any of them), so that the storage's borrow flag
    /// governs every access.
    pub unsafe fn from_external_cpu(
        ptr: NonNull<u8>,
        nbytes: usize,
        owner: Arc<dyn Any + Send + Sync>,
    ) -> Result<Storage> {
        let data = DataPtr::external_cpu(ptr, owner)?;
        // SAFETY: the caller's contract.
        Ok(unsafe { Storage::from_data_ptr(data, nbytes) })
    }

    /// A zeroed storage of `nbytes` bytes on `device`.
    pub fn new(nbytes: usize, device: Device) -> Result<Storage> {
        if device.device_type() == DeviceType::CPU {
            // What `allocator_for` gives the CPU, without the dynamic call
            // (every eager result is allocated here).
            return Storage::new_cpu(nbytes, true);
        }
        Storage::new_with_allocator(nbytes, allocator_for(device)?)
    }

    /// Size in bytes. It only grows ([`Storage::grow`]), so a view that
    /// fits it now fits it for good.
    pub fn nbytes(&self) -> usize {
        // Relaxed: a stale (smaller) size only makes a check stricter, and
        // the bytes of a larger one are reached only under a borrow, whose
        // acquisition orders `grow`'s writes before the access.
        self.inner.nbytes.load(Ordering::Relaxed)
    }

    /// Grows the storage to at least `nbytes` bytes in place
    /// (`resize_bytes`; a smaller size leaves it as it is): the bytes move
    /// to a new zero-extended allocation, and every handle and view sees
    /// them there. Takes the storage's exclusive borrow, so it waits for
    /// kernels using it, and fails like a kernel would when this thread
    /// already borrows it. Memory another value owns (a mapped file) and
    /// device memory do not grow.
    pub fn grow(&self, nbytes: usize) -> Result<()> {
        if nbytes <= self.nbytes() {
            return Ok(());
        }
        StorageBorrow::hold([(self, true)], || self.grow_exclusive(nbytes))?
    }

    /// [`grow`](Self::grow) with the exclusive borrow held.
    fn grow_exclusive(&self, nbytes: usize) -> Result<()> {
        let old = self.nbytes();
        if nbytes <= old {
            // Another thread grew it first.
            return Ok(());
        }
        if self.inner.device_addr != 0 {
            return Err(Error::runtime(format!(
                "resize_: growing a storage on {} is not supported",
                self.inner.device
            )));
        }
        self.inner.memory.with_mut(|memory| {
            // SAFETY: this thread holds the exclusive borrow, so nothing
            // else reads or writes `memory` (see `StorageImpl`'s `Sync`).
            let memory = unsafe { &mut *memory };
            self.grow_memory(memory, old, nbytes)
        })?;
        self.inner.nbytes.store(nbytes, Ordering::Release);
        Ok(())
    }

    /// Moves `memory`'s `old` bytes to a zero-extended CPU block of
    /// `nbytes` (`grow`, with the exclusive borrow held).
    fn grow_memory(&self, memory: &mut DataPtr, old: usize, nbytes: usize) -> Result<()> {
        if memory.get().is_null() {
            // No data (Meta): only the size grows.
            return Ok(());
        }
        if !memory.is_cpu_block() {
            return Err(Error::runtime(
                "Trying to resize storage that is not resizable",
            ));
        }
        let grown = CpuAllocator.allocate(nbytes)?;
        // SAFETY: both blocks are live and distinct; `old` bytes fit both;
        // the exclusive borrow keeps every other access to the old memory
        // away.
        unsafe { std::ptr::copy_nonoverlapping(memory.get(), grown.get(), old) };
        self.inner.data.store(grown.get(), Ordering::Release);
        // The old block is freed here: pointers to it were only usable
        // under a borrow, and this thread holds the only one.
        *memory = grown;
        Ok(())
    }

    /// The device.
    pub fn device(&self) -> Device {
        self.inner.device
    }

    /// Whether the storage has data (Meta storage has none).
    pub fn has_data(&self) -> bool {
        !self.inner.data.load(Ordering::Relaxed).is_null()
    }

    /// Whether both handles share one storage.
    pub fn is_same(&self, other: &Storage) -> bool {
        IntrusivePtr::ptr_eq(&self.inner, &other.inner)
    }

    /// Whether this is the only handle to the storage. Storages are only
    /// ever shared through handles (no weak references are made), so a
    /// caller that holds the only handle, and the only way to reach it, is
    /// the only one who can reach the memory. On a thread other than the
    /// one that made the storage, the answer is no until the handle counts
    /// are merged (never a false yes; see `use_count`).
    #[inline]
    pub fn is_unique(&self) -> bool {
        IntrusivePtr::is_unique(&self.inner)
    }

    /// An identity usable for ordering borrows.
    #[inline]
    pub fn address(&self) -> usize {
        IntrusivePtr::as_ptr(&self.inner) as usize
    }

    /// The start of the data, or `None` for Meta storage. Reading or writing
    /// through it requires a [`StorageBorrow`] of the matching kind, and
    /// the pointer must be read while that borrow is held: when the
    /// storage grows, its data moves.
    pub fn data_ptr(&self) -> Option<NonNull<u8>> {
        // Relaxed: the caller holds a borrow (or the only handle), whose
        // acquisition ordered `grow`'s store before this load.
        NonNull::new(self.inner.data.load(Ordering::Relaxed))
    }

    /// Number of handles sharing the storage (`use_count`). Exact on the
    /// thread that made the storage, and everywhere once that thread's part
    /// of the count is merged (when it has dropped its handles); on other
    /// threads before that, the maker's handles count as one.
    pub fn use_count(&self) -> usize {
        IntrusivePtr::strong_count(&self.inner)
    }

    /// Takes one borrow of the storage: shared, or (`exclusive`) the only
    /// one. Fails instead of waiting when waiting could never end: this
    /// thread already holds a borrow of this storage that conflicts, or
    /// `enclosing` (the borrows this thread held before the set this one
    /// belongs to) is not zero and the wait outlasts [`NESTED_WAIT`]
    /// (another thread may be waiting for one of those). Borrows of one set
    /// are taken in address order, so waiting for one while holding the
    /// set's earlier ones cannot close a cycle.
    #[inline]
    fn acquire(&self, exclusive: bool, enclosing: usize) -> Result<()> {
        if self.try_acquire(exclusive) {
            return Ok(());
        }
        self.acquire_contended(exclusive, enclosing)
    }

    /// One attempt at the borrow; `false` when another borrow is in the
    /// way (or the flag changed under the attempt).
    #[inline(always)]
    fn try_acquire(&self, exclusive: bool) -> bool {
        let flag = &self.inner.borrow;
        let current = flag.load(Ordering::Relaxed);
        let next = match (exclusive, current) {
            (true, 0) => -1,
            (false, n) if n >= 0 => n + 1,
            _ => return false,
        };
        let taken = flag
            .compare_exchange(current, next, Ordering::Acquire, Ordering::Relaxed)
            .is_ok();
        if taken {
            held::push(self.address());
        }
        taken
    }

    /// `acquire` after a first attempt failed: waits, or reports why
    /// waiting would never end.
    #[cold]
    #[inline(never)]
    fn acquire_contended(&self, exclusive: bool, enclosing: usize) -> Result<()> {
        let mut backoff = Backoff::default();
        loop {
            if self.try_acquire(exclusive) {
                return Ok(());
            }
            let current = self.inner.borrow.load(Ordering::Relaxed);
            let conflicts = if exclusive { current != 0 } else { current < 0 };
            if !conflicts {
                // The flag changed between the load and the exchange.
                sync::spin_hint();
                continue;
            }
            if held::contains(self.address()) {
                return Err(Error::runtime(format!(
                    "{self:?} is already borrowed by this thread: an operator cannot {} a tensor \
                     whose memory the calling code is {} (for example inside with_data)",
                    if exclusive { "write" } else { "read" },
                    if exclusive { "using" } else { "writing" },
                )));
            }
            if enclosing > 0 && backoff.waited() > NESTED_WAIT {
                return Err(Error::runtime(format!(
                    "{self:?} is already borrowed by another thread, and this thread holds \
                     borrows of other storages: waiting for it could deadlock"
                )));
            }
            backoff.wait();
        }
    }

    fn release(&self, exclusive: bool) {
        held::pop();
        if exclusive {
            self.inner.borrow.store(0, Ordering::Release);
        } else {
            self.inner.borrow.fetch_sub(1, Ordering::Release);
        }
    }
}

/// How long a thread that holds storage borrows waits for another storage
/// before it reports the conflict instead (it could be waiting for a thread
/// that waits for it).
pub const NESTED_WAIT: Duration = Duration::from_millis(200);

/// Waiting for a contended borrow: a few spins, then yields, then sleeps
/// that grow to a millisecond, so a waiter never spins for long.
#[derive(Default)]
struct Backoff {
    rounds: u32,
    started: Option<Instant>,
}

impl Backoff {
    fn wait(&mut self) {
        self.rounds += 1;
        if self.rounds < 64 {
            sync::spin_hint();
        } else if self.rounds < 128 || cfg!(loom) {
            sync::yield_now();
        } else {
            let micros = 1u64 << (self.rounds - 128).min(10);
            std::thread::sleep(Duration::from_micros(micros));
        }
    }

    /// Time since the first wait.
    fn waited(&mut self) -> Duration {
        self.started.get_or_insert_with(Instant::now).elapsed()
    }
}

/// The storages the current thread holds borrows of, innermost last (the
/// first [`held::TRACKED`] of them by address; the count is exact). Borrow
/// scopes nest, so releases pop in reverse order of acquisition.
mod held {
    use std::cell::Cell;

    /// Addresses remembered per thread; deeper nesting is only counted.
    pub(super) const TRACKED: usize = 16;

    /// The thread's borrows: how many, and the first [`TRACKED`]
    /// addresses (one thread-local, so a push or pop is one access).
    struct Held {
        count: Cell<usize>,
        addresses: [Cell<usize>; TRACKED],
    }

    crate::sync::thread_local_seam! {
        static HELD: Held = Held {
            count: Cell::new(0),
            addresses: [const { Cell::new(0) }; TRACKED],
        };
    }

    #[inline]
    pub(super) fn push(address: usize) {
        HELD.with(|h| {
            let n = h.count.get();
            if let Some(slot) = h.addresses.get(n) {
                slot.set(address);
            }
            h.count.set(n + 1);
        });
    }

    #[inline]
    pub(super) fn pop() {
        HELD.with(|h| h.count.set(h.count.get().saturating_sub(1)));
    }

    pub(super) fn count() -> usize {
        HELD.with(|h| h.count.get())
    }

    pub(super) fn contains(address: usize) -> bool {
        HELD.with(|h| {
            let n = h.count.get().min(TRACKED);
            h.addresses[..n].iter().any(|c| c.get() == address)
        })
    }
}

impl fmt::Debug for Storage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Storage({} bytes on {})",
            self.nbytes(),
            self.inner.device
        )
    }
}

/// Storages [`StorageBorrow::hold`] lists on the stack (a kernel's usual
/// operands); more go to the heap.
const INLINE_BORROWS: usize = 4;

/// One storage a [`StorageBorrow`] lists: the storage and whether the use
/// writes it; `None` for a slot with nothing to borrow (or whose storage
/// was merged into another slot, or not taken).
pub type BorrowSlot<'a> = Option<(&'a Storage, bool)>;

/// Borrows of several storages held for one kernel: shared for inputs,
/// exclusive for outputs, taken in address order (reads alone are first
/// tried in the order given, without waiting), released when the kernel
/// returns (or unwinds). Only [`StorageBorrow::hold`] and
/// [`StorageBorrow::hold_slots`] make one, and they never hand it out, so
/// a borrow cannot be leaked.
///
/// It records what it holds in the caller's slots, in place: a kernel that
/// already lists its operands' storages lends that list, and nothing is
/// copied.
pub struct StorageBorrow<'s, 'a> {
    slots: &'s mut [BorrowSlot<'a>],
}

impl<'s, 'a> StorageBorrow<'s, 'a> {
    /// Runs `f` while holding borrows of `storages`; a storage listed both
    /// as read and written (or written twice) is borrowed once,
    /// exclusively (one listed only for reading may be borrowed once per
    /// listing: shared borrows never exclude each other). Waits while
    /// another thread holds a conflicting borrow; fails with "... is
    /// already borrowed" when this thread holds one (a kernel called from
    /// inside [`with_data`] on the tensor it reads), or when waiting could
    /// deadlock (see `NESTED_WAIT`).
    ///
    /// [`with_data`]: crate::TensorBase::with_data
    #[inline]
    pub fn hold<R>(
        storages: impl IntoIterator<Item = (&'a Storage, bool)>,
        f: impl FnOnce() -> R,
    ) -> Result<R> {
        let mut inline: [BorrowSlot<'a>; INLINE_BORROWS] = [None; INLINE_BORROWS];
        let mut heap = Vec::new();
        let mut n = 0;
        for use_ in storages {
            if n < INLINE_BORROWS {
                inline[n] = Some(use_);
            } else {
                if heap.is_empty() {
                    heap.extend_from_slice(&inline);
                }
                heap.push(Some(use_));
            }
            n += 1;
        }
        let slots = if heap.is_empty() {
            &mut inline[..n]
        } else {
            &mut heap[..]
        };
        StorageBorrow::hold_slots(slots, f)
    }

    /// [`hold`](Self::hold) for the storages listed in `slots` (`None`:
    /// nothing to borrow), recorded in place: on return the slots no
    /// longer say what was listed (repeats merged into one slot are
    /// `None`).
    #[inline]
    pub fn hold_slots<R>(slots: &mut [BorrowSlot<'a>], f: impl FnOnce() -> R) -> Result<R> {
        let borrow = StorageBorrow::acquire_all(slots)?;
        let result = f();
        drop(borrow);
        Ok(result)
    }

    /// Takes the borrows `slots` list; on failure, gives back those taken.
    #[inline]
    fn acquire_all(slots: &'s mut [BorrowSlot<'a>]) -> Result<StorageBorrow<'s, 'a>> {
        if try_shared_in_place(slots) {
            return Ok(StorageBorrow { slots });
        }
        let enclosing = held::count();
        // The slots stay where they are; an order over them is sorted.
        // (Swapping the slots themselves, written a moment ago a field at a
        // time, read each back in one wide load that waited for those
        // stores: a stall on every call whose inputs came in descending
        // address order.)
        let mut inline_order = [0usize; INLINE_BORROWS];
        let mut heap_order = Vec::new();
        let order: &mut [usize] = if slots.len() <= INLINE_BORROWS {
            &mut inline_order[..slots.len()]
        } else {
            heap_order.resize(slots.len(), 0);
            &mut heap_order
        };
        for (k, slot) in order.iter_mut().enumerate() {
            *slot = k;
        }
        sort_and_merge(slots, order);
        for k in 0..order.len() {
            let Some((s, write)) = slots[order[k]] else {
                continue;
            };
            if let Err(e) = s.acquire(write, enclosing) {
                // Nothing from `k` on in the order was taken; the guard
                // gives back the rest.
                for &j in &order[k..] {
                    slots[j] = None;
                }
                drop(StorageBorrow { slots });
                return Err(e);
            }
        }
        Ok(StorageBorrow { slots })
    }
}

/// When `slots` list reads only (a kernel's inputs beside outputs it
/// allocated), one attempt at each in the order given: readers never
/// exclude each other, so a storage listed twice needs no merging, and
/// taking them without sorting cannot deadlock because nothing waits.
/// `false` (with every borrow taken here given back) when a slot writes
/// or an attempt fails; the caller then takes them in address order,
/// waiting as needed.
#[inline]
fn try_shared_in_place(slots: &[BorrowSlot<'_>]) -> bool {
    if slots.iter().flatten().any(|&(_, write)| write) {
        return false;
    }
    for (k, slot) in slots.iter().enumerate() {
        if let Some((s, _)) = slot {
            if !s.try_acquire(false) {
                for (s, _) in slots[..k].iter().rev().flatten() {
                    s.release(false);
                }
                return false;
            }
        }
    }
    true
}

/// Sorts `order` (indices into `slots`) by storage address, the order
/// borrows are taken in, and merges each storage's repeats into its first
/// slot in that order: it writes if any use writes, and the repeats become
/// `None`.
#[inline]
fn sort_and_merge(slots: &mut [BorrowSlot<'_>], order: &mut [usize]) {
    let key = |i: usize| slots[i].map_or(0, |(s, _)| s.address());
    if order.len() <= INLINE_BORROWS {
        // An insertion sort inline: a kernel's few operands.
        for k in 1..order.len() {
            let mut j = k;
            while j > 0 && key(order[j - 1]) > key(order[j]) {
                order.swap(j - 1, j);
                j -= 1;
            }
        }
    } else {
        order.sort_unstable_by_key(|&i| key(i));
    }
    let mut lead = 0;
    for k in 1..order.len() {
        let (first, this) = (order[lead], order[k]);
        match (slots[first], slots[this]) {
            (Some((a, wa)), Some((b, wb))) if a.address() == b.address() => {
                slots[first] = Some((a, wa || wb));
                slots[this] = None;
            }
            _ => lead = k,
        }
    }
}

impl Drop for StorageBorrow<'_, '_> {
    fn drop(&mut self) {
        for (s, write) in self.slots.iter().rev().flatten() {
            s.release(*write);
        }
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use crate::sync::model;
    use loom::cell::UnsafeCell;
    use loom::sync::Arc;
    use loom::thread;

    use super::*;

    /// A storage and memory whose accesses `loom` tracks, standing for the
    /// storage's bytes: a kernel touches it only inside its borrow.
    fn storage_and_data() -> (Arc<Storage>, Arc<UnsafeCell<usize>>) {
        (
            Arc::new(Storage::new(8, Device::CPU).unwrap()),
            Arc::new(UnsafeCell::new(0)),
        )
    }

    fn add_one(s: &Storage, data: &UnsafeCell<usize>) {
        StorageBorrow::hold([(s, true)], || {
            // SAFETY: the exclusive borrow is held.
            data.with_mut(|p| unsafe { *p += 1 })
        })
        .unwrap();
    }

    fn read(s: &Storage, data: &UnsafeCell<usize>) -> usize {
        StorageBorrow::hold([(s, false)], || {
            // SAFETY: a shared borrow is held.
            data.with(|p| unsafe { *p })
        })
        .unwrap()
    }

    #[test]
    fn loom_an_exclusive_borrow_excludes_every_other_borrow() {
        model(|| {
            let (s, data) = storage_and_data();
            let writer = {
                let (s, data) = (Arc::clone(&s), Arc::clone(&data));
                thread::spawn(move || add_one(&s, &data))
            };
            let seen = read(&s, &data);
            assert!(seen <= 1);
            add_one(&s, &data);
            writer.join().unwrap();
            assert_eq!(read(&s, &data), 2);
        });
    }

    #[test]
    fn loom_shared_borrows_read_together() {
        model(|| {
            let (s, data) = storage_and_data();
            let reader = {
                let (s, data) = (Arc::clone(&s), Arc::clone(&data));
                thread::spawn(move || read(&s, &data))
            };
            assert_eq!(read(&s, &data), 0);
            assert_eq!(reader.join().unwrap(), 0);
        });
    }

    #[test]
    fn loom_growing_waits_for_readers_and_publishes_the_new_size() {
        model(|| {
            let (s, data) = storage_and_data();
            let grower = {
                let (s, data) = (Arc::clone(&s), Arc::clone(&data));
                thread::spawn(move || {
                    s.grow(64).unwrap();
                    add_one(&s, &data);
                })
            };
            let (seen, nbytes, has_data) = StorageBorrow::hold([(&*s, false)], || {
                // SAFETY: a shared borrow is held.
                let seen = data.with(|p| unsafe { *p });
                (seen, s.nbytes(), s.data_ptr().is_some())
            })
            .unwrap();
            assert!(has_data);
            // The size a reader sees never runs ahead of the bytes.
            assert!((nbytes == 8 && seen == 0) || nbytes == 64);
            grower.join().unwrap();
            assert_eq!((s.nbytes(), read(&s, &data)), (64, 1));
        });
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn flag(s: &Storage) -> isize {
        s.inner.borrow.load(Ordering::Relaxed)
    }

    #[test]
    fn allocations_are_aligned_and_zeroed() {
        let s = Storage::new(100, Device::CPU).unwrap();
        let p = s.data_ptr().unwrap();
        assert_eq!(p.as_ptr() as usize % ALIGNMENT, 0);
        StorageBorrow::hold([(&s, false)], || {
            // SAFETY: 100 bytes were allocated and zeroed; a shared borrow
            // is held.
            let bytes = unsafe { std::slice::from_raw_parts(p.as_ptr(), 100) };
            assert!(bytes.iter().all(|b| *b == 0));
        })
        .unwrap();
        assert!(!Storage::new(8, Device::META).unwrap().has_data());
    }

    #[test]
    fn borrows_exclude_writers() {
        let s = Storage::new(8, Device::CPU).unwrap();
        // Two reads of one storage are two shared borrows (taken in place,
        // unmerged); a nested read adds a third.
        StorageBorrow::hold([(&s, false), (&s, false)], || {
            assert_eq!(flag(&s), 2);
            StorageBorrow::hold([(&s, false)], || assert_eq!(flag(&s), 3)).unwrap();
        })
        .unwrap();
        StorageBorrow::hold([(&s, false), (&s, true)], || assert_eq!(flag(&s), -1)).unwrap();
        assert_eq!(flag(&s), 0);
    }

    #[test]
    fn reentrant_conflicts_are_errors_not_hangs() {
        let s = Storage::new(8, Device::CPU).unwrap();
        let other = Storage::new(8, Device::CPU).unwrap();
        StorageBorrow::hold([(&s, false)], || {
            let err = StorageBorrow::hold([(&s, true)], || ()).unwrap_err();
            assert!(err.message().contains("is already borrowed"), "{err}");
            // The failed attempt took nothing: `other` is free.
            StorageBorrow::hold([(&other, true)], || ()).unwrap();
        })
        .unwrap();
        StorageBorrow::hold([(&s, true)], || {
            assert!(StorageBorrow::hold([(&other, false), (&s, false)], || ()).is_err());
            assert_eq!(flag(&other), 0);
        })
        .unwrap();
        assert_eq!((flag(&s), flag(&other)), (0, 0));
        // A panic inside releases the borrow.
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            StorageBorrow::hold([(&s, true)], || panic!("inside")).unwrap();
        }));
        assert!(caught.is_err());
        assert_eq!(flag(&s), 0);
        StorageBorrow::hold([(&s, true)], || ()).unwrap();
    }

    #[test]
    fn a_nested_wait_gives_up_instead_of_deadlocking() {
        let (a, b) = (
            Arc::new(Storage::new(8, Device::CPU).unwrap()),
            Arc::new(Storage::new(8, Device::CPU).unwrap()),
        );
        let barrier = Arc::new(std::sync::Barrier::new(2));
        // Each thread holds one storage and then wants the other's: at
        // least one of them must give up with an error.
        let run = |first: Arc<Storage>, second: Arc<Storage>, barrier: Arc<std::sync::Barrier>| {
            std::thread::spawn(move || {
                StorageBorrow::hold([(&*first, true)], || {
                    barrier.wait();
                    StorageBorrow::hold([(&*second, true)], || ()).is_ok()
                })
                .unwrap()
            })
        };
        let t1 = run(Arc::clone(&a), Arc::clone(&b), Arc::clone(&barrier));
        let t2 = run(b, a, barrier);
        let (r1, r2) = (t1.join().unwrap(), t2.join().unwrap());
        assert!(!(r1 && r2));
    }

    #[test]
    fn a_kernel_waits_as_long_as_needed_for_its_own_second_operand() {
        // Two storages in address order; another thread writes the second
        // for longer than `NESTED_WAIT`.
        let (mut x, mut y) = (
            Arc::new(Storage::new(8, Device::CPU).unwrap()),
            Arc::new(Storage::new(8, Device::CPU).unwrap()),
        );
        if x.address() > y.address() {
            std::mem::swap(&mut x, &mut y);
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let writer = {
            let y = Arc::clone(&y);
            std::thread::spawn(move || {
                StorageBorrow::hold([(&*y, true)], || {
                    tx.send(()).unwrap();
                    std::thread::sleep(NESTED_WAIT * 2);
                })
                .unwrap()
            })
        };
        rx.recv().unwrap();
        // One kernel writing `x` and reading `y`: it takes `x`, then waits
        // for `y`. It held nothing before, so it cannot be part of a cycle
        // and waits until `y` is free.
        let started = Instant::now();
        StorageBorrow::hold([(&*x, true), (&*y, false)], || ()).unwrap();
        assert!(started.elapsed() >= NESTED_WAIT);
        writer.join().unwrap();
    }

    /// A thread that holds a borrow of `s` (`write`: exclusive) for 20 ms;
    /// it holds it when this returns.
    fn held_on_another_thread(s: &Arc<Storage>, write: bool) -> std::thread::JoinHandle<()> {
        let (tx, rx) = std::sync::mpsc::channel();
        let s = Arc::clone(s);
        let holder = std::thread::spawn(move || {
            StorageBorrow::hold([(&*s, write)], || {
                tx.send(()).unwrap();
                std::thread::sleep(Duration::from_millis(20));
            })
            .unwrap()
        });
        rx.recv().unwrap();
        holder
    }

    #[test]
    fn a_writer_waits_for_another_threads_reader() {
        let s = Arc::new(Storage::new(8, Device::CPU).unwrap());
        let reader = held_on_another_thread(&s, false);
        StorageBorrow::hold([(&*s, true)], || assert_eq!(flag(&s), -1)).unwrap();
        reader.join().unwrap();
    }

    #[test]
    fn a_writer_on_another_thread_waits_for_a_read() {
        let s = Arc::new(Storage::new(8, Device::CPU).unwrap());
        let reading = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writer = StorageBorrow::hold([(&*s, false)], || {
            reading.store(true, Ordering::SeqCst);
            let (s, seen) = (Arc::clone(&s), Arc::clone(&reading));
            let writer = std::thread::spawn(move || {
                StorageBorrow::hold([(&*s, true)], || {
                    assert!(!seen.load(Ordering::SeqCst), "wrote during a read");
                    assert_eq!(flag(&s), -1);
                })
                .unwrap();
            });
            std::thread::sleep(Duration::from_millis(20));
            reading.store(false, Ordering::SeqCst);
            writer
        })
        .unwrap();
        writer.join().unwrap();
        assert_eq!(flag(&s), 0);
    }

    /// One thread reads two storages (taken in the order given) for as
    /// long as another fills them, each under an exclusive borrow, with
    /// one byte value after another: every read sees whole fills.
    #[test]
    fn reads_never_overlap_another_threads_writes() {
        const BYTES: usize = 512;
        const ROUNDS: usize = 1000;
        let (a, b) = (
            Arc::new(Storage::new(BYTES, Device::CPU).unwrap()),
            Arc::new(Storage::new(BYTES, Device::CPU).unwrap()),
        );
        let bytes = |s: &Storage| {
            // SAFETY: the storage holds `BYTES` bytes, and the caller holds
            // a borrow of it.
            unsafe { std::slice::from_raw_parts(s.data_ptr().unwrap().as_ptr(), BYTES) }
        };
        let (wa, wb) = (Arc::clone(&a), Arc::clone(&b));
        let writer = std::thread::spawn(move || {
            for round in 0..ROUNDS {
                for s in [&wa, &wb] {
                    StorageBorrow::hold([(&**s, true)], || {
                        let p = s.data_ptr().unwrap().as_ptr();
                        for i in 0..BYTES {
                            // SAFETY: in bounds, under an exclusive borrow.
                            unsafe { p.add(i).write_volatile(round as u8) };
                        }
                    })
                    .unwrap();
                }
            }
        });
        while !writer.is_finished() {
            StorageBorrow::hold([(&*a, false), (&*b, false)], || {
                for s in [&a, &b] {
                    let v = bytes(s);
                    assert!(v.iter().all(|x| *x == v[0]), "a read saw a partial fill");
                }
            })
            .unwrap();
        }
        writer.join().unwrap();
        assert_eq!((flag(&a), flag(&b)), (0, 0));
    }

    #[test]
    fn readers_wait_for_another_threads_writer() {
        let (s, t) = (
            Arc::new(Storage::new(8, Device::CPU).unwrap()),
            Storage::new(8, Device::CPU).unwrap(),
        );
        let writer = held_on_another_thread(&s, true);
        // The attempt in the given order fails at `s`; the ordered one
        // waits for the writer, and both reads are then held.
        StorageBorrow::hold([(&t, false), (&*s, false)], || {
            assert_eq!((flag(&s), flag(&t)), (1, 1));
        })
        .unwrap();
        writer.join().unwrap();
        assert_eq!((flag(&s), flag(&t)), (0, 0));
    }

    #[test]
    fn a_few_borrows_in_any_order_merge_and_fail_cleanly() {
        let (a, b, c) = (
            Storage::new(8, Device::CPU).unwrap(),
            Storage::new(8, Device::CPU).unwrap(),
            Storage::new(8, Device::CPU).unwrap(),
        );
        // Inline entries given in both address orders, `a` read and then
        // written: one exclusive borrow of `a`, a shared one of `b`.
        for uses in [
            [(&a, false), (&b, false), (&a, true)],
            [(&a, true), (&b, false), (&a, false)],
            [(&b, false), (&a, false), (&a, true)],
        ] {
            StorageBorrow::hold(uses, || {
                assert_eq!((flag(&a), flag(&b)), (-1, 1));
            })
            .unwrap();
            assert_eq!((flag(&a), flag(&b)), (0, 0));
        }
        // `c` held elsewhere: whichever of the others came before it in
        // address order was taken and is given back, the rest untouched.
        StorageBorrow::hold([(&c, true)], || {
            for uses in [
                [(&a, false), (&c, false), (&b, true)],
                [(&b, true), (&c, false), (&a, false)],
            ] {
                assert!(StorageBorrow::hold(uses, || ()).is_err());
                assert_eq!((flag(&a), flag(&b), flag(&c)), (0, 0, -1));
            }
            // Reads only: the attempt in the given order takes `a` and `b`,
            // fails at `c` and gives them back before the ordered one.
            for uses in [
                [(&a, false), (&b, false), (&c, false)],
                [(&c, false), (&b, false), (&a, false)],
            ] {
                let err = StorageBorrow::hold(uses, || ()).unwrap_err();
                assert!(err.message().contains("is already borrowed"), "{err}");
                assert_eq!((flag(&a), flag(&b), flag(&c)), (0, 0, -1));
            }
        })
        .unwrap();
        assert_eq!(flag(&c), 0);
    }

    #[test]
    fn many_borrows_merge_duplicates() {
        let stores: Vec<Storage> = (0..5)
            .map(|_| Storage::new(8, Device::CPU).unwrap())
            .collect();
        // Eleven uses of five storages: past the inline slots, each storage
        // appears twice or more, written by one use of storage 2 only.
        let uses: Vec<(&Storage, bool)> = (0..11).map(|i| (&stores[i % 5], i == 7)).collect();
        StorageBorrow::hold(uses, || {
            let flags: Vec<isize> = stores.iter().map(flag).collect();
            assert_eq!(flags, vec![1, 1, -1, 1, 1]);
        })
        .unwrap();
        assert!(stores.iter().all(|s| flag(s) == 0));
        let u = Storage::new(8, Device::CPU).unwrap();
        assert!(u.is_unique());
        let v = u.clone();
        assert!(!u.is_unique() && !v.is_unique());
    }
}
