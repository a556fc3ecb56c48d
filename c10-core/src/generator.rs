//! `Generator`: a shared, seeded random-number generator handle
//! (`at::Generator`). The random streams that consume it arrive with the
//! factory kernels (issue #7); here it is a value that can be passed through
//! `IValue`s and shared between calls.

use std::sync::{Arc, Mutex};

use crate::device::Device;

#[derive(Debug)]
struct GeneratorImpl {
    device: Device,
    state: Mutex<GeneratorState>,
}

#[derive(Debug, Clone, Copy)]
struct GeneratorState {
    seed: u64,
    offset: u64,
}

/// A shared generator handle; clones share state.
#[derive(Clone, Debug)]
pub struct Generator {
    inner: Arc<GeneratorImpl>,
}

impl Generator {
    /// A generator for `device` seeded with `seed`.
    pub fn new(device: Device, seed: u64) -> Generator {
        Generator {
            inner: Arc::new(GeneratorImpl {
                device,
                state: Mutex::new(GeneratorState { seed, offset: 0 }),
            }),
        }
    }

    /// The device it generates for.
    pub fn device(&self) -> Device {
        self.inner.device
    }

    fn with_state<R>(&self, f: impl FnOnce(&mut GeneratorState) -> R) -> R {
        // A panic while holding the lock cannot leave the plain-data state
        // inconsistent, so a poisoned lock is recovered.
        let mut guard = self
            .inner
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&mut guard)
    }

    /// `current_seed()`.
    pub fn current_seed(&self) -> u64 {
        self.with_state(|s| s.seed)
    }

    /// `manual_seed(seed)`: reseeds and restarts the stream.
    pub fn set_current_seed(&self, seed: u64) {
        self.with_state(|s| {
            s.seed = seed;
            s.offset = 0;
        });
    }

    /// Reserves `n` values of the stream and returns the offset of the first.
    pub fn advance(&self, n: u64) -> u64 {
        self.with_state(|s| {
            let at = s.offset;
            s.offset = s.offset.wrapping_add(n);
            at
        })
    }

    /// Whether both handles share one generator.
    pub fn is_same(&self, other: &Generator) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}
