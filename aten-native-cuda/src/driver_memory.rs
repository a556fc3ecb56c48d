//! [`DeviceMemory`] over the CUDA driver API (`cudarc::driver::result`):
//! `cuMemAlloc` / `cuMemFree`, `cuMemGetInfo` and events, each made with
//! the device's primary context current on the calling thread (as the
//! runtime API does for PyTorch).
//!
//! Only the caching allocator calls these, so a driver allocation happens
//! when its cache cannot serve a request, never once per operator.

use std::ffi::c_void;

use c10_core::{Error, Result};
use cudarc::driver::result::{self as driver, DriverError};
use cudarc::driver::sys;

use crate::caching_allocator::{DeviceMallocError, DeviceMemory, StreamId};

/// The driver's error as this crate's error, naming the call.
fn driver_error(call: &str, e: DriverError) -> Error {
    Error::runtime(format!("CUDA error: {call} failed: {e:?}"))
}

/// One device's memory through the driver, in its primary context.
pub struct DriverMemory {
    ordinal: usize,
    context: Context,
}

/// A primary context handle.
struct Context(sys::CUcontext);

// SAFETY: a driver context is a process-wide object that any thread may
// make current (`cuCtxSetCurrent`); the handle is only passed to the
// driver, never dereferenced here.
unsafe impl Send for Context {}
// SAFETY: as above: sharing the handle only lets threads pass it to the
// driver, which synchronizes its own use of the context.
unsafe impl Sync for Context {}

/// A driver event handle (`CUevent`).
pub struct DriverEvent(sys::CUevent);

// SAFETY: events may be recorded, queried and destroyed from any thread
// that has the owning context current; the handle is only passed to the
// driver.
unsafe impl Send for DriverEvent {}

impl DriverMemory {
    /// The memory of device `ordinal`, retaining its primary context.
    /// The caller has checked that the driver loads and the ordinal exists
    /// ([`crate::availability::check_device`]).
    pub fn new(ordinal: usize) -> Result<DriverMemory> {
        let index = i32::try_from(ordinal)
            .map_err(|_| Error::runtime(format!("CUDA device {ordinal} does not exist")))?;
        let device = driver::device::get(index).map_err(|e| driver_error("cuDeviceGet", e))?;
        // SAFETY: `device` is a valid device handle from `cuDeviceGet`;
        // the primary context is retained for the life of the process
        // (allocators are never dropped).
        let context = unsafe { driver::primary_ctx::retain(device) }
            .map_err(|e| driver_error("cuDevicePrimaryCtxRetain", e))?;
        Ok(DriverMemory {
            ordinal,
            context: Context(context),
        })
    }

    /// Makes the device's context current on this thread.
    fn enter(&self) -> Result<()> {
        // SAFETY: the context was retained in `new` and is never released.
        unsafe { driver::ctx::set_current(self.context.0) }
            .map_err(|e| driver_error("cuCtxSetCurrent", e))
    }

    /// Fills `bytes` bytes at `ptr` with zeros and waits for it: storages
    /// start zeroed, as every allocator's here do.
    pub fn zero(&self, ptr: u64, bytes: usize) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        self.enter()?;
        // SAFETY: the caller passes a live allocation of at least `bytes`
        // bytes from this device's allocator.
        unsafe { driver::memset_d8_sync(ptr, 0, bytes) }.map_err(|e| driver_error("cuMemsetD8", e))
    }
}

impl DeviceMemory for DriverMemory {
    type Event = DriverEvent;

    fn device_index(&self) -> i8 {
        i8::try_from(self.ordinal).unwrap_or(i8::MAX)
    }

    fn malloc(&self, bytes: usize) -> std::result::Result<u64, DeviceMallocError> {
        self.enter()?;
        // SAFETY: a plain allocation in the current (this device's)
        // context; the address is only handed to the caching allocator.
        match unsafe { driver::malloc_sync(bytes) } {
            Ok(ptr) => Ok(ptr),
            Err(DriverError(sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY)) => {
                Err(DeviceMallocError::OutOfMemory)
            }
            Err(e) => Err(DeviceMallocError::Other(driver_error("cuMemAlloc", e))),
        }
    }

    fn free(&self, ptr: u64) -> Result<()> {
        self.enter()?;
        // SAFETY: the caching allocator frees each address it got from
        // `malloc` once, after every stream using it has finished with it.
        unsafe { driver::free_sync(ptr) }.map_err(|e| driver_error("cuMemFree", e))
    }

    fn mem_get_info(&self) -> Result<(usize, usize)> {
        self.enter()?;
        driver::mem_get_info().map_err(|e| driver_error("cuMemGetInfo", e))
    }

    fn create_event(&self) -> Result<DriverEvent> {
        self.enter()?;
        driver::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)
            .map(DriverEvent)
            .map_err(|e| driver_error("cuEventCreate", e))
    }

    fn record_event(&self, event: &DriverEvent, stream: StreamId) -> Result<()> {
        self.enter()?;
        // SAFETY: `event` was created by `create_event` and not destroyed;
        // a stream id is a `CUstream` handle of this device (0: the legacy
        // default stream).
        unsafe { driver::event::record(event.0, stream.0 as usize as *mut c_void as _) }
            .map_err(|e| driver_error("cuEventRecord", e))
    }

    fn query_event(&self, event: &DriverEvent) -> Result<bool> {
        self.enter()?;
        // SAFETY: a live event from `create_event`.
        match unsafe { driver::event::query(event.0) } {
            Ok(()) => Ok(true),
            Err(DriverError(sys::cudaError_enum::CUDA_ERROR_NOT_READY)) => Ok(false),
            Err(e) => Err(driver_error("cuEventQuery", e)),
        }
    }

    fn synchronize_event(&self, event: &DriverEvent) -> Result<()> {
        self.enter()?;
        // SAFETY: a live event from `create_event`.
        unsafe { driver::event::synchronize(event.0) }
            .map_err(|e| driver_error("cuEventSynchronize", e))
    }

    fn destroy_event(&self, event: DriverEvent) -> Result<()> {
        self.enter()?;
        // SAFETY: a live event from `create_event`, destroyed once (the
        // allocator hands each back exactly once).
        unsafe { driver::event::destroy(event.0) }.map_err(|e| driver_error("cuEventDestroy", e))
    }
}
