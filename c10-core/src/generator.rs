//! `Generator`: a shared, seeded random-number generator handle
//! (`at::Generator`): a seed and an offset that random kernels (`rand`,
//! `randn`, `uniform_`, `normal_`, `dropout`) advance, a value that can be
//! passed through `IValue`s and shared between calls.

use std::sync::{Arc, Mutex, OnceLock};

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

    /// The `i`-th 64-bit value of the stream of `seed` (a counter-based
    /// stream: any range of it can be produced independently, so kernels
    /// fill tensors in parallel and reproducibly).
    #[inline]
    pub fn random_at(seed: u64, i: u64) -> u64 {
        splitmix64(seed ^ splitmix64(i.wrapping_add(0x9E37_79B9_7F4A_7C15)))
    }

    /// The `i`-th value of the stream of `seed` as a uniform draw from
    /// [0, 1) with `bits` random bits (53 for `f64`; 24 keeps a
    /// single-precision value below 1 after rounding, as PyTorch's float
    /// distribution does). Every uniform draw of the kernels is this one.
    #[inline]
    pub fn uniform_at(seed: u64, i: u64, bits: u32) -> f64 {
        let bits = bits.clamp(1, 53);
        (Self::random_at(seed, i) >> (64 - bits)) as f64 / (1u64 << bits) as f64
    }

    /// The process-wide default CPU generator (`default_generator`),
    /// seeded with PyTorch's default seed until [`manual_seed`] is called.
    pub fn default_cpu() -> &'static Generator {
        static DEFAULT: OnceLock<Generator> = OnceLock::new();
        DEFAULT.get_or_init(|| Generator::new(Device::CPU, DEFAULT_SEED))
    }

    /// Whether both handles share one generator.
    pub fn is_same(&self, other: &Generator) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

/// PyTorch's default seed of the CPU generator.
pub const DEFAULT_SEED: u64 = 67_280_421_310_721;

/// `torch.manual_seed(seed)`: reseeds the default CPU generator.
pub fn manual_seed(seed: u64) {
    Generator::default_cpu().set_current_seed(seed);
}

/// SplitMix64's finaliser: a bijective mix of 64 bits.
#[inline]
fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
