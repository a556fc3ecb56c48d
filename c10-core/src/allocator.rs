//! Making memory for storages (`c10/core/Allocator.h`): an [`Allocator`]
//! returns a [`DataPtr`], the address of the memory it made with what
//! gives that memory back, and a [`Storage`](crate::Storage) is built
//! from it ([`Storage::new_with_allocator`](crate::Storage::new_with_allocator)).
//!
//! The CPU allocator hands out 64-byte-aligned, zeroed blocks (small ones
//! recycled per thread, see `small_block_cache`); the Meta allocator hands
//! out no memory; a backend registers the allocators of its devices
//! ([`DEVICE_ALLOCATORS`](crate::device_allocator::DEVICE_ALLOCATORS)).

use std::alloc::Layout;
use std::any::Any;
use std::fmt;
use std::ptr::NonNull;
use std::sync::Arc;

use crate::device::{Device, DeviceType};
use crate::device_allocator::DeviceBuffer;
use crate::error::{Error, Result};
use crate::small_block_cache;
use crate::tensor_impl::out_of_memory;

/// Alignment of every CPU allocation (a cache line; enough for AVX-512).
pub const ALIGNMENT: usize = 64;

/// What gives a [`DataPtr`]'s memory back when it drops (`c10::DataPtr`'s
/// context and deleter).
enum Context {
    /// No memory (a Meta storage, or a device without data).
    None,
    /// A block of `small_block_cache` with this layout.
    CpuBlock(Layout),
    /// Memory this owner keeps alive (a mapped file's pages).
    External { _owner: Arc<dyn Any + Send + Sync> },
    /// Device memory a backend's allocator made; its drop returns it.
    Device { _buffer: Box<dyn DeviceBuffer> },
}

/// Memory an [`Allocator`] made (`c10::DataPtr`): its address on its
/// device, and the context whose drop gives it back.
pub struct DataPtr {
    /// The first byte: a host address for CPU memory, the device address
    /// for device memory, null for none.
    ptr: *mut u8,
    context: Context,
    device: Device,
}

// SAFETY: a `DataPtr` owns its memory (or a `Send + Sync` owner of it) and
// exposes only the address; reads and writes through it are governed by
// the storage's borrow flag.
unsafe impl Send for DataPtr {}
// SAFETY: as above; `&DataPtr` only exposes the address and the device.
unsafe impl Sync for DataPtr {}

impl DataPtr {
    /// No memory, on `device` (Meta storages, and storages of devices
    /// without data in this build).
    pub fn none(device: Device) -> DataPtr {
        DataPtr {
            ptr: std::ptr::null_mut(),
            context: Context::None,
            device,
        }
    }

    /// A CPU block of `nbytes` bytes (at least one, so that every storage
    /// has a distinct address), aligned to [`ALIGNMENT`]; zeroed, or
    /// (`zeroed` false) of unspecified contents that its first user must
    /// initialize.
    pub(crate) fn cpu(nbytes: usize, zeroed: bool) -> Result<DataPtr> {
        let block = CpuBlock::allocate(nbytes, zeroed)?;
        Ok(DataPtr::from_cpu_block(block))
    }

    /// The `DataPtr` that owns `block`: no calls, so that a caller
    /// building a storage around it writes it where the storage lives.
    #[inline(always)]
    pub(crate) fn from_cpu_block(block: CpuBlock) -> DataPtr {
        DataPtr {
            ptr: block.ptr.as_ptr(),
            context: Context::CpuBlock(block.layout),
            device: Device::CPU,
        }
    }

    /// CPU memory at `ptr` that `owner` keeps alive. Fails unless `ptr` is
    /// aligned to [`ALIGNMENT`], as every CPU allocation is.
    pub(crate) fn external_cpu(
        ptr: NonNull<u8>,
        owner: Arc<dyn Any + Send + Sync>,
    ) -> Result<DataPtr> {
        if !(ptr.as_ptr() as usize).is_multiple_of(ALIGNMENT) {
            return Err(Error::runtime(format!(
                "external CPU memory at {ptr:p} is not aligned to {ALIGNMENT} bytes"
            )));
        }
        Ok(DataPtr {
            ptr: ptr.as_ptr(),
            context: Context::External { _owner: owner },
            device: Device::CPU,
        })
    }

    /// Device memory a backend's allocator made on `device` (not the CPU).
    pub fn from_device_buffer(buffer: Box<dyn DeviceBuffer>, device: Device) -> Result<DataPtr> {
        if device.device_type() == DeviceType::CPU {
            return Err(Error::internal("a device buffer cannot back a CPU storage"));
        }
        Ok(DataPtr {
            ptr: buffer.device_ptr() as usize as *mut u8,
            context: Context::Device { _buffer: buffer },
            device,
        })
    }

    /// The first byte (null for none): a host address on the CPU, else an
    /// address on the device.
    #[inline]
    pub fn get(&self) -> *mut u8 {
        self.ptr
    }

    /// The device of the memory.
    #[inline]
    pub fn device(&self) -> Device {
        self.device
    }

    /// Whether the memory is a CPU block this pointer owns (which can be
    /// moved to a larger one).
    pub(crate) fn is_cpu_block(&self) -> bool {
        matches!(self.context, Context::CpuBlock(_))
    }
}

impl Drop for DataPtr {
    fn drop(&mut self) {
        if let Context::CpuBlock(layout) = self.context {
            if let Some(ptr) = NonNull::new(self.ptr) {
                // SAFETY: `ptr` came from `small_block_cache::allocate`
                // with `layout` (`DataPtr::cpu`) and is freed once, here.
                unsafe { small_block_cache::free(ptr, layout) }
            }
        }
        // Other contexts give their memory back as they drop.
    }
}

impl fmt::Debug for DataPtr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DataPtr({:p} on {})", self.ptr, self.device)
    }
}

/// A fresh block of `small_block_cache` that nothing owns yet: what
/// [`DataPtr::from_cpu_block`] takes ownership of. Two words, returned in
/// registers, so that a storage's fields are written in place after the
/// allocation instead of being moved there inside a `Result<DataPtr>`.
#[must_use = "a CpuBlock leaks unless a DataPtr takes it"]
pub(crate) struct CpuBlock {
    ptr: NonNull<u8>,
    layout: Layout,
}

impl CpuBlock {
    /// `nbytes` bytes (at least one, so that every storage has a distinct
    /// address), aligned to [`ALIGNMENT`]; zeroed, or (`zeroed` false) of
    /// unspecified contents that its first user must initialize.
    #[inline]
    pub(crate) fn allocate(nbytes: usize, zeroed: bool) -> Result<CpuBlock> {
        let layout = small_block_cache::block_layout(nbytes)
            .ok_or_else(|| Error::runtime(format!("cannot allocate {nbytes} bytes")))?;
        let ptr = NonNull::new(small_block_cache::allocate(layout, zeroed))
            .ok_or_else(|| out_of_memory(nbytes))?;
        Ok(CpuBlock { ptr, layout })
    }

    /// The first byte.
    #[inline(always)]
    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

/// Makes memory for one device's storages (`c10::Allocator`).
///
/// # Safety
///
/// `allocate(nbytes)` must return memory on [`device`](Self::device) that
/// is at least `nbytes` bytes long, zero-filled, and used by nothing but
/// the storage built from it (or a pointer without memory, for a device
/// whose storages hold no data): views are checked against `nbytes`, and
/// kernels trust them.
pub unsafe trait Allocator: Send + Sync {
    /// The device of the memory it makes.
    fn device(&self) -> Device;
    /// `nbytes` bytes of zero-filled memory.
    fn allocate(&self, nbytes: usize) -> Result<DataPtr>;
}

/// The CPU allocator: 64-byte-aligned, zeroed memory.
#[derive(Copy, Clone, Debug, Default)]
pub struct CpuAllocator;

// SAFETY: `DataPtr::cpu` returns a fresh zeroed block of at least `nbytes`.
unsafe impl Allocator for CpuAllocator {
    fn device(&self) -> Device {
        Device::CPU
    }
    fn allocate(&self, nbytes: usize) -> Result<DataPtr> {
        DataPtr::cpu(nbytes, true)
    }
}

/// The Meta allocator: sizes without data.
#[derive(Copy, Clone, Debug, Default)]
pub struct MetaAllocator;

// SAFETY: Meta storages hold no data: the pointer addresses nothing.
unsafe impl Allocator for MetaAllocator {
    fn device(&self) -> Device {
        Device::META
    }
    fn allocate(&self, _nbytes: usize) -> Result<DataPtr> {
        Ok(DataPtr::none(Device::META))
    }
}

/// The allocator for a device: the built-in ones for CPU and Meta, else
/// the one a linked backend registered
/// ([`DEVICE_ALLOCATORS`](crate::device_allocator::DEVICE_ALLOCATORS)).
pub fn allocator_for(device: Device) -> Result<&'static dyn Allocator> {
    match device.device_type() {
        DeviceType::CPU => Ok(&CpuAllocator),
        DeviceType::Meta => Ok(&MetaAllocator),
        _ => crate::device_allocator::registered_allocator(device),
    }
}
