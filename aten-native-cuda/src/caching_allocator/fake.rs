//! A fake device for tests of code over the caching allocator on machines
//! without a GPU: [`FakeDevice`] hands out made-up addresses from a fixed
//! capacity, tracks its live allocations and events, and completes events
//! only when the test says so.
//!
//! Addresses are never reused and consecutive segments are never adjacent,
//! so a use of a freed segment or a merge across segments shows up as an
//! error or a wrong snapshot rather than passing by luck.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use c10_core::{Error, Result};

use super::device::{DeviceMallocError, DeviceMemory, StreamId};

/// Where the fake device's addresses begin.
const BASE_ADDRESS: u64 = 0x7f00_0000_0000;
/// Segments start at multiples of this, with at least this gap between.
const ADDRESS_ALIGNMENT: u64 = 2 << 20;

/// An event of the [`FakeDevice`].
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct FakeEvent(u64);

#[derive(Debug)]
struct FakeEventState {
    recorded_on: Option<StreamId>,
    completed: bool,
}

#[derive(Debug)]
struct FakeState {
    capacity: usize,
    used: usize,
    live: BTreeMap<u64, usize>,
    next_address: u64,
    malloc_calls: usize,
    free_calls: usize,
    fail_next_malloc: Option<Error>,
    events: HashMap<u64, FakeEventState>,
    next_event: u64,
}

/// A device with `capacity` bytes of pretend memory. Clones share the same
/// device, so a test keeps one clone to inspect and drive the device while
/// the allocator owns another.
#[derive(Clone, Debug)]
pub struct FakeDevice {
    index: i8,
    state: Arc<Mutex<FakeState>>,
}

impl FakeDevice {
    /// Device `cuda:index` with `capacity` bytes.
    pub fn new(index: i8, capacity: usize) -> FakeDevice {
        FakeDevice {
            index,
            state: Arc::new(Mutex::new(FakeState {
                capacity,
                used: 0,
                live: BTreeMap::new(),
                next_address: BASE_ADDRESS,
                malloc_calls: 0,
                free_calls: 0,
                fail_next_malloc: None,
                events: HashMap::new(),
                next_event: 1,
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, FakeState> {
        // The state is plain counters and maps; a panicking test thread
        // leaves nothing half-updated that matters to another.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The live allocations: address and size, by address.
    pub fn live_allocations(&self) -> Vec<(u64, usize)> {
        self.lock()
            .live
            .iter()
            .map(|(&ptr, &size)| (ptr, size))
            .collect()
    }

    /// Successful and failed calls of `malloc` so far.
    pub fn malloc_calls(&self) -> usize {
        self.lock().malloc_calls
    }

    /// Successful calls of `free` so far.
    pub fn free_calls(&self) -> usize {
        self.lock().free_calls
    }

    /// Makes the next `malloc` fail with `error` (a device error other than
    /// out-of-memory).
    pub fn fail_next_malloc(&self, error: Error) {
        self.lock().fail_next_malloc = Some(error);
    }

    /// Events created and not yet destroyed.
    pub fn live_events(&self) -> usize {
        self.lock().events.len()
    }

    /// Events recorded and not yet completed.
    pub fn pending_events(&self) -> usize {
        self.lock()
            .events
            .values()
            .filter(|event| event.recorded_on.is_some() && !event.completed)
            .count()
    }

    /// Completes every event recorded on `stream`, as if the stream's work
    /// had finished.
    pub fn complete_stream(&self, stream: StreamId) {
        for event in self.lock().events.values_mut() {
            if event.recorded_on == Some(stream) {
                event.completed = true;
            }
        }
    }

    /// Completes every recorded event.
    pub fn complete_all_events(&self) {
        for event in self.lock().events.values_mut() {
            event.completed = true;
        }
    }
}

fn unknown_event(event: &FakeEvent) -> Error {
    Error::runtime(format!("fake device: unknown event {}", event.0))
}

impl DeviceMemory for FakeDevice {
    type Event = FakeEvent;

    fn device_index(&self) -> i8 {
        self.index
    }

    fn malloc(&self, bytes: usize) -> Result<u64, DeviceMallocError> {
        let mut state = self.lock();
        state.malloc_calls += 1;
        if let Some(error) = state.fail_next_malloc.take() {
            return Err(DeviceMallocError::Other(error));
        }
        if bytes == 0 {
            return Err(Error::runtime("fake device: malloc of zero bytes").into());
        }
        let fits = state
            .used
            .checked_add(bytes)
            .is_some_and(|used| used <= state.capacity);
        if !fits {
            return Err(DeviceMallocError::OutOfMemory);
        }
        let ptr = state.next_address;
        let span = (bytes as u64)
            .checked_next_multiple_of(ADDRESS_ALIGNMENT)
            .and_then(|span| span.checked_add(ADDRESS_ALIGNMENT))
            .and_then(|span| ptr.checked_add(span));
        let Some(next_address) = span else {
            return Err(DeviceMallocError::OutOfMemory);
        };
        state.next_address = next_address;
        state.used += bytes;
        state.live.insert(ptr, bytes);
        Ok(ptr)
    }

    fn free(&self, ptr: u64) -> Result<()> {
        let mut state = self.lock();
        let Some(bytes) = state.live.remove(&ptr) else {
            return Err(Error::runtime(format!(
                "fake device: free of {ptr:#x}, which is not a live allocation"
            )));
        };
        state.used -= bytes;
        state.free_calls += 1;
        Ok(())
    }

    fn mem_get_info(&self) -> Result<(usize, usize)> {
        let state = self.lock();
        Ok((state.capacity.saturating_sub(state.used), state.capacity))
    }

    fn create_event(&self) -> Result<FakeEvent> {
        let mut state = self.lock();
        let id = state.next_event;
        state.next_event += 1;
        // A CUDA event that was never recorded queries as complete.
        state.events.insert(
            id,
            FakeEventState {
                recorded_on: None,
                completed: true,
            },
        );
        Ok(FakeEvent(id))
    }

    fn record_event(&self, event: &FakeEvent, stream: StreamId) -> Result<()> {
        let mut state = self.lock();
        let slot = state
            .events
            .get_mut(&event.0)
            .ok_or_else(|| unknown_event(event))?;
        slot.recorded_on = Some(stream);
        slot.completed = false;
        Ok(())
    }

    fn query_event(&self, event: &FakeEvent) -> Result<bool> {
        let state = self.lock();
        let slot = state
            .events
            .get(&event.0)
            .ok_or_else(|| unknown_event(event))?;
        Ok(slot.completed)
    }

    fn synchronize_event(&self, event: &FakeEvent) -> Result<()> {
        // Waiting for an event means its stream's work got done.
        let mut state = self.lock();
        let slot = state
            .events
            .get_mut(&event.0)
            .ok_or_else(|| unknown_event(event))?;
        slot.completed = true;
        Ok(())
    }

    fn destroy_event(&self, event: FakeEvent) -> Result<()> {
        let mut state = self.lock();
        state
            .events
            .remove(&event.0)
            .map(|_| ())
            .ok_or_else(|| unknown_event(&event))
    }
}
