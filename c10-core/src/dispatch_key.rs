//! `DispatchKey` and `BackendComponent`: the names of the levels of dispatch.
//!
//! PyTorch's `c10::DispatchKey` enum mixes five kinds of entries, and this type
//! keeps PyTorch's numbering for all of them:
//!
//! 1. *Functionality keys* (`Undefined`, `Dense`, `FPGA`, ..., `PythonDispatcher`,
//!    values `0..EndOfFunctionalityKeys`). Each owns one bit of a
//!    [`DispatchKeySet`](crate::DispatchKeySet). Six of them are *per-backend*
//!    functionalities (`Dense`, `Quantized`, `Sparse`, `SparseCsr`,
//!    `NestedTensor`, `AutogradFunctionality`): they are only building blocks
//!    and are combined with a backend bit to name a runtime key.
//! 2. *Per-backend runtime keys* (`CPU`, `QuantizedCUDA`, `AutogradMeta`, ...):
//!    a per-backend functionality crossed with a [`BackendComponent`]. They own
//!    no bit of their own; a key set holding `CPU` holds the `Dense` bit and the
//!    `CPUBit` backend bit.
//! 3. *Markers* (`EndOfFunctionalityKeys`, `StartOfDenseBackends`, ...), which
//!    share values with real keys where C++ does.
//! 4. *Alias keys* (`Autograd`, `CompositeImplicitAutograd`, ...): names for a
//!    group of runtime keys, used only when registering kernels. They have no
//!    bit and no slot in a dispatch table.
//!
//! Conversions between the kinds (`toFunctionalityKey`, `toBackendComponent`,
//! `toRuntimePerBackendFunctionalityKey`) are `const fn`s here.

use std::fmt;
use std::str::FromStr;

use crate::error::Error;

mod values;

/// A dispatch key: a `u8` with PyTorch 2.15's numbering and names.
///
/// It is a newtype rather than a Rust `enum` because C++ gives several names to
/// one value (`StartOfDenseBackends` is `Undefined`'s dense twin, and
/// `EndOfAliasKeys` is `CompositeExplicitAutogradNonFunctional`); every
/// constructible value is a valid key (`0..=EndOfAliasKeys`).
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct DispatchKey(u8);

/// Number of backend bits in a key set (`num_backends`).
pub const NUM_BACKENDS: u8 = BackendComponent::EndOfBackendKeys as u8;

/// Number of functionality keys including `Undefined` (`num_functionality_keys`).
pub const NUM_FUNCTIONALITY_KEYS: u8 = DispatchKey::EndOfFunctionalityKeys.0;

/// The per-backend functionality keys, in priority order.
const PER_BACKEND_FUNCTIONALITIES: [DispatchKey; 6] = [
    DispatchKey::Dense,
    DispatchKey::Quantized,
    DispatchKey::Sparse,
    DispatchKey::SparseCsr,
    DispatchKey::NestedTensor,
    DispatchKey::AutogradFunctionality,
];

/// `(functionality, StartOf<F>Backends)` for each per-backend functionality.
const PER_BACKEND_RANGES: [(DispatchKey, DispatchKey); 6] = [
    (DispatchKey::Dense, DispatchKey::StartOfDenseBackends),
    (
        DispatchKey::Quantized,
        DispatchKey::StartOfQuantizedBackends,
    ),
    (DispatchKey::Sparse, DispatchKey::StartOfSparseBackends),
    (
        DispatchKey::SparseCsr,
        DispatchKey::StartOfSparseCsrBackends,
    ),
    (
        DispatchKey::NestedTensor,
        DispatchKey::StartOfNestedTensorBackends,
    ),
    (
        DispatchKey::AutogradFunctionality,
        DispatchKey::StartOfAutogradFunctionalityBackends,
    ),
];

impl DispatchKey {
    /// Number of distinct values (`EndOfAliasKeys + 1`).
    pub const NUM_VALUES: usize = DispatchKey::EndOfAliasKeys.0 as usize + 1;

    /// The key with this numeric value, if there is one.
    pub const fn from_u8(value: u8) -> Option<DispatchKey> {
        if value <= DispatchKey::EndOfAliasKeys.0 {
            Some(DispatchKey(value))
        } else {
            None
        }
    }

    /// The numeric value (PyTorch's enum value).
    #[inline]
    pub const fn as_u8(self) -> u8 {
        self.0
    }

    /// Every value `0..=EndOfAliasKeys`, markers included, in enum order.
    pub fn all() -> impl Iterator<Item = DispatchKey> {
        (0..=DispatchKey::EndOfAliasKeys.0).map(DispatchKey)
    }

    /// PyTorch's `toString(DispatchKey)`.
    pub fn name(self) -> &'static str {
        values::KEY_NAMES[self.0 as usize]
    }

    /// `isAliasDispatchKey`.
    #[doc(alias = "isAliasDispatchKey")]
    #[inline]
    pub const fn is_alias(self) -> bool {
        self.0 >= DispatchKey::StartOfAliasKeys.0 && self.0 <= DispatchKey::EndOfAliasKeys.0
    }

    /// `isPerBackendFunctionalityKey`: one of the six functionality keys that
    /// are crossed with backends.
    #[doc(alias = "isPerBackendFunctionalityKey")]
    #[inline]
    pub const fn is_per_backend_functionality(self) -> bool {
        matches!(
            self,
            DispatchKey::Dense
                | DispatchKey::Quantized
                | DispatchKey::Sparse
                | DispatchKey::SparseCsr
                | DispatchKey::NestedTensor
                | DispatchKey::AutogradFunctionality
        )
    }

    /// Whether the key is a functionality key (`Undefined..=PythonDispatcher`).
    #[inline]
    pub const fn is_functionality(self) -> bool {
        self.0 < NUM_FUNCTIONALITY_KEYS
    }

    /// Whether the key is a per-backend runtime key (`CPU`, `SparseMeta`, ...),
    /// not counting the `StartOf*Backends` markers.
    pub const fn is_per_backend_runtime(self) -> bool {
        self.0 >= DispatchKey::StartOfRuntimeBackendKeys.0
            && self.0 <= DispatchKey::EndOfRuntimeBackendKeys.0
            && !matches!(self.to_backend_component(), BackendComponent::InvalidBit)
    }

    /// Whether the key has its own slot in a dispatch table: a functionality
    /// key that is not per-backend, or a per-backend runtime key. `Undefined`
    /// counts (slot 0).
    pub const fn is_runtime(self) -> bool {
        (self.is_functionality() && !self.is_per_backend_functionality())
            || self.is_per_backend_runtime()
    }

    /// `toFunctionalityKey`: the functionality of a runtime key (`CPU` ->
    /// `Dense`); a functionality key maps to itself; alias keys and markers
    /// past the runtime keys map to `Undefined`.
    #[doc(alias = "toFunctionalityKey")]
    #[inline]
    pub const fn to_functionality_key(self) -> DispatchKey {
        if self.0 <= DispatchKey::EndOfFunctionalityKeys.0 {
            return self;
        }
        let mut i = PER_BACKEND_RANGES.len();
        while i > 0 {
            i -= 1;
            let (functionality, start) = PER_BACKEND_RANGES[i];
            if self.0 >= start.0 && self.0 <= start.0 + NUM_BACKENDS {
                return functionality;
            }
        }
        DispatchKey::Undefined
    }

    /// `toBackendComponent`: the backend of a per-backend runtime key (`CPU`
    /// -> `CPUBit`), or `InvalidBit`.
    #[doc(alias = "toBackendComponent")]
    #[inline]
    pub const fn to_backend_component(self) -> BackendComponent {
        let mut i = PER_BACKEND_RANGES.len();
        while i > 0 {
            i -= 1;
            let start = PER_BACKEND_RANGES[i].1 .0;
            if self.0 >= start && self.0 <= start + NUM_BACKENDS {
                return BackendComponent::from_index(self.0 - start);
            }
        }
        BackendComponent::InvalidBit
    }

    /// `toRuntimePerBackendFunctionalityKey`: `(Dense, CPUBit)` -> `CPU`.
    /// Returns `Undefined` when `functionality` is not per-backend.
    #[doc(alias = "toRuntimePerBackendFunctionalityKey")]
    #[inline]
    pub const fn to_runtime_per_backend_functionality_key(
        functionality: DispatchKey,
        backend: BackendComponent,
    ) -> DispatchKey {
        let mut i = 0;
        while i < PER_BACKEND_RANGES.len() {
            let (f, start) = PER_BACKEND_RANGES[i];
            if f.0 == functionality.0 {
                return DispatchKey(start.0 + backend as u8);
            }
            i += 1;
        }
        DispatchKey::Undefined
    }

    /// The six per-backend functionality keys, lowest priority first.
    pub const fn per_backend_functionalities() -> [DispatchKey; 6] {
        PER_BACKEND_FUNCTIONALITIES
    }

    /// `parseDispatchKey`: the key named `name` (PyTorch's spelling).
    ///
    /// Accepts every functionality, runtime and alias key name and `CatchAll`;
    /// markers are not accepted.
    pub fn parse(name: &str) -> Result<DispatchKey, Error> {
        if name == "CatchAll" {
            return Ok(DispatchKey::Undefined);
        }
        DispatchKey::all()
            .find(|k| (k.is_runtime() || k.is_functionality() || k.is_alias()) && k.name() == name)
            .filter(|k| *k != DispatchKey::EndOfFunctionalityKeys)
            .ok_or_else(|| Error::runtime(format!("could not parse dispatch key: {name}")))
    }
}

impl fmt::Display for DispatchKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl fmt::Debug for DispatchKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DispatchKey {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DispatchKey::parse(s)
    }
}

/// `c10::BackendComponent`: the backend half of a per-backend runtime key.
/// `CPUBit` is bit 0 of a key set, `MetaBit` bit 15; `InvalidBit` has no bit.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
#[allow(missing_docs)]
pub enum BackendComponent {
    InvalidBit = 0,
    CPUBit,
    CUDABit,
    HIPBit,
    XLABit,
    MPSBit,
    IPUBit,
    XPUBit,
    HPUBit,
    VEBit,
    LazyBit,
    MTIABit,
    MAIABit,
    PrivateUse1Bit,
    PrivateUse2Bit,
    PrivateUse3Bit,
    MetaBit,
}

#[allow(non_upper_case_globals)]
impl BackendComponent {
    /// The last backend (`EndOfBackendKeys`).
    pub const EndOfBackendKeys: BackendComponent = BackendComponent::MetaBit;

    const ALL: [BackendComponent; 17] = [
        BackendComponent::InvalidBit,
        BackendComponent::CPUBit,
        BackendComponent::CUDABit,
        BackendComponent::HIPBit,
        BackendComponent::XLABit,
        BackendComponent::MPSBit,
        BackendComponent::IPUBit,
        BackendComponent::XPUBit,
        BackendComponent::HPUBit,
        BackendComponent::VEBit,
        BackendComponent::LazyBit,
        BackendComponent::MTIABit,
        BackendComponent::MAIABit,
        BackendComponent::PrivateUse1Bit,
        BackendComponent::PrivateUse2Bit,
        BackendComponent::PrivateUse3Bit,
        BackendComponent::MetaBit,
    ];

    /// The backend with this value (`0` is `InvalidBit`); values past
    /// `EndOfBackendKeys` give `InvalidBit`.
    #[inline]
    pub const fn from_index(value: u8) -> BackendComponent {
        if value as usize >= BackendComponent::ALL.len() {
            BackendComponent::InvalidBit
        } else {
            BackendComponent::ALL[value as usize]
        }
    }

    /// Every real backend (`CPUBit..=MetaBit`), in bit order.
    pub fn backends() -> impl Iterator<Item = BackendComponent> {
        BackendComponent::ALL[1..].iter().copied()
    }

    /// PyTorch's `toString(BackendComponent)`; note that PyTorch prints
    /// `MTIABit` and `MAIABit` without the `Bit` suffix.
    pub const fn name(self) -> &'static str {
        match self {
            BackendComponent::InvalidBit => "InvalidBit",
            BackendComponent::CPUBit => "CPUBit",
            BackendComponent::CUDABit => "CUDABit",
            BackendComponent::HIPBit => "HIPBit",
            BackendComponent::XLABit => "XLABit",
            BackendComponent::MPSBit => "MPSBit",
            BackendComponent::IPUBit => "IPUBit",
            BackendComponent::XPUBit => "XPUBit",
            BackendComponent::HPUBit => "HPUBit",
            BackendComponent::VEBit => "VEBit",
            BackendComponent::LazyBit => "LazyBit",
            BackendComponent::MTIABit => "MTIA",
            BackendComponent::MAIABit => "MAIA",
            BackendComponent::PrivateUse1Bit => "PrivateUse1Bit",
            BackendComponent::PrivateUse2Bit => "PrivateUse2Bit",
            BackendComponent::PrivateUse3Bit => "PrivateUse3Bit",
            BackendComponent::MetaBit => "MetaBit",
        }
    }

    /// The dense runtime key of this backend (`CPUBit` -> `CPU`).
    pub const fn dense_key(self) -> DispatchKey {
        DispatchKey::to_runtime_per_backend_functionality_key(DispatchKey::Dense, self)
    }

    /// `getAutogradKeyFromBackend`: the autograd key serving this backend.
    /// Backends without a dedicated autograd key (HIP, VE, InvalidBit) map to
    /// `AutogradOther`.
    #[doc(alias = "getAutogradKeyFromBackend")]
    pub const fn autograd_key(self) -> DispatchKey {
        match self {
            BackendComponent::InvalidBit | BackendComponent::HIPBit | BackendComponent::VEBit => {
                DispatchKey::AutogradOther
            }
            b => DispatchKey::to_runtime_per_backend_functionality_key(
                DispatchKey::AutogradFunctionality,
                b,
            ),
        }
    }
}

impl fmt::Display for BackendComponent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl fmt::Debug for BackendComponent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BackendComponent {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        BackendComponent::ALL
            .iter()
            .copied()
            .find(|b| b.name() == s)
            .ok_or_else(|| Error::runtime(format!("could not parse backend component: {s}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_between_kinds() {
        assert_eq!(DispatchKey::CPU.to_functionality_key(), DispatchKey::Dense);
        assert_eq!(
            DispatchKey::CPU.to_backend_component(),
            BackendComponent::CPUBit
        );
        assert_eq!(
            DispatchKey::AutogradMeta.to_backend_component(),
            BackendComponent::MetaBit
        );
        assert_eq!(
            DispatchKey::to_runtime_per_backend_functionality_key(
                DispatchKey::Sparse,
                BackendComponent::CUDABit
            ),
            DispatchKey::SparseCUDA
        );
        assert_eq!(
            DispatchKey::FPGA.to_backend_component(),
            BackendComponent::InvalidBit
        );
        assert_eq!(
            DispatchKey::Autograd.to_functionality_key(),
            DispatchKey::Undefined
        );
        for k in DispatchKey::all().filter(|k| k.is_per_backend_runtime()) {
            assert_eq!(
                DispatchKey::to_runtime_per_backend_functionality_key(
                    k.to_functionality_key(),
                    k.to_backend_component()
                ),
                k
            );
        }
    }

    #[test]
    fn names_parse_back() {
        for k in DispatchKey::all().filter(|k| k.is_runtime() || k.is_alias()) {
            assert_eq!(k.name().parse::<DispatchKey>().unwrap(), k);
        }
        assert_eq!(
            "Nope".parse::<DispatchKey>().unwrap_err().message(),
            "could not parse dispatch key: Nope"
        );
        assert_eq!(BackendComponent::MTIABit.to_string(), "MTIA");
        assert_eq!(
            "CPUBit".parse::<BackendComponent>().unwrap(),
            BackendComponent::CPUBit
        );
    }

    #[test]
    fn autograd_keys_for_backends() {
        assert_eq!(
            BackendComponent::CPUBit.autograd_key(),
            DispatchKey::AutogradCPU
        );
        assert_eq!(
            BackendComponent::HIPBit.autograd_key(),
            DispatchKey::AutogradOther
        );
        assert_eq!(
            BackendComponent::InvalidBit.autograd_key(),
            DispatchKey::AutogradOther
        );
    }
}
