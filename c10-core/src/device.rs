//! `DeviceType` and `Device`: where a tensor lives (`cpu`, `cuda:0`, `meta`).

use std::fmt;
use std::str::FromStr;

use crate::dispatch_key::BackendComponent;
use crate::error::Error;

/// `c10::DeviceType`, with PyTorch's values.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(i8)]
#[allow(missing_docs)]
pub enum DeviceType {
    CPU = 0,
    CUDA = 1,
    HIP = 6,
    XLA = 9,
    XPU = 12,
    MPS = 13,
    Meta = 14,
    HPU = 15,
    Lazy = 17,
    PrivateUse1 = 20,
}

impl DeviceType {
    /// Every device type, in `DeviceType` value order.
    pub const ALL: [DeviceType; 10] = [
        DeviceType::CPU,
        DeviceType::CUDA,
        DeviceType::HIP,
        DeviceType::XLA,
        DeviceType::XPU,
        DeviceType::MPS,
        DeviceType::Meta,
        DeviceType::HPU,
        DeviceType::Lazy,
        DeviceType::PrivateUse1,
    ];

    /// The device type whose `DeviceType` value is `value`, if any.
    pub fn from_i8(value: i8) -> Option<DeviceType> {
        DeviceType::ALL.into_iter().find(|t| *t as i8 == value)
    }

    /// The lower-case name used in device strings (`cuda`).
    pub const fn name(self) -> &'static str {
        match self {
            DeviceType::CPU => "cpu",
            DeviceType::CUDA => "cuda",
            DeviceType::HIP => "hip",
            DeviceType::XLA => "xla",
            DeviceType::XPU => "xpu",
            DeviceType::MPS => "mps",
            DeviceType::Meta => "meta",
            DeviceType::HPU => "hpu",
            DeviceType::Lazy => "lazy",
            DeviceType::PrivateUse1 => "privateuseone",
        }
    }

    /// The backend bit of a tensor on this device type.
    pub const fn backend_component(self) -> BackendComponent {
        match self {
            DeviceType::CPU => BackendComponent::CPUBit,
            DeviceType::CUDA => BackendComponent::CUDABit,
            DeviceType::HIP => BackendComponent::HIPBit,
            DeviceType::XLA => BackendComponent::XLABit,
            DeviceType::XPU => BackendComponent::XPUBit,
            DeviceType::MPS => BackendComponent::MPSBit,
            DeviceType::Meta => BackendComponent::MetaBit,
            DeviceType::HPU => BackendComponent::HPUBit,
            DeviceType::Lazy => BackendComponent::LazyBit,
            DeviceType::PrivateUse1 => BackendComponent::PrivateUse1Bit,
        }
    }
}

/// `c10::Device`: a device type and an optional index (-1 for "current").
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Device {
    device_type: DeviceType,
    index: i8,
}

impl Device {
    /// The CPU.
    pub const CPU: Device = Device::new(DeviceType::CPU, -1);
    /// The meta device (shapes without data).
    pub const META: Device = Device::new(DeviceType::Meta, -1);

    /// A device; `index` -1 means no particular index.
    pub const fn new(device_type: DeviceType, index: i8) -> Device {
        Device { device_type, index }
    }

    /// The device type.
    pub const fn device_type(self) -> DeviceType {
        self.device_type
    }

    /// The index, -1 when none was given.
    pub const fn index(self) -> i8 {
        self.index
    }

    /// Whether an index was given.
    pub const fn has_index(self) -> bool {
        self.index >= 0
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.has_index() {
            write!(f, "{}:{}", self.device_type.name(), self.index)
        } else {
            f.write_str(self.device_type.name())
        }
    }
}

/// The device type names `c10::Device(const std::string&)` accepts, in
/// PyTorch's order (`parse_type`; also the order of its error message).
pub const DEVICE_TYPE_NAMES: [&str; 20] = [
    "cpu",
    "cuda",
    "ipu",
    "xpu",
    "mkldnn",
    "opengl",
    "opencl",
    "ideep",
    "hip",
    "ve",
    "fpga",
    "maia",
    "xla",
    "lazy",
    "vulkan",
    "mps",
    "meta",
    "hpu",
    "mtia",
    "privateuseone",
];

/// A device string checked as `c10::Device(const std::string&)` checks it:
/// one of PyTorch's device type names (all of them, also those without a
/// [`DeviceType`] here) and an optional index. The one parser of device
/// strings: [`Device`]'s `FromStr` and the schema parser's `Device` defaults
/// both use it.
///
/// The grammar is PyTorch's, `([a-zA-Z_]+)(?::([1-9]\d*|0))?`, with its
/// error messages, and the index must fit a `DeviceIndex` (an `int8_t`):
/// PyTorch's release builds wrap larger indices (`cuda:200` becomes
/// `cuda:-56`); this parser refuses them. As in PyTorch's `validate`, a CPU
/// index can only be 0.
///
/// ```
/// use c10_core::device::DeviceString;
///
/// assert_eq!(DeviceString::parse("cuda:1").unwrap().to_string(), "cuda:1");
/// assert_eq!(DeviceString::parse("ipu").unwrap().index(), -1);
/// assert!(DeviceString::parse("cuda:200").is_err());
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct DeviceString {
    type_name: &'static str,
    index: i8,
}

impl DeviceString {
    /// Parses `text` (`cpu`, `cuda:1`, `meta`, ...).
    pub fn parse(text: &str) -> Result<DeviceString, Error> {
        if text.is_empty() {
            return Err(Error::runtime("Device string must not be empty"));
        }
        let (name, digits) = match text.split_once(':') {
            Some((name, digits)) => (name, Some(digits)),
            None => (text, None),
        };
        let name_ok =
            !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphabetic() || b == b'_');
        let digits_ok = digits.is_none_or(|d| {
            !d.is_empty()
                && d.bytes().all(|b| b.is_ascii_digit())
                && (d.len() == 1 || !d.starts_with('0'))
        });
        if !name_ok || !digits_ok {
            return Err(Error::runtime(format!("Invalid device string: '{text}'")));
        }
        let index = match digits {
            None => -1,
            // Digits only, without a leading zero: the parse fails only for
            // values above `i8::MAX`.
            Some(d) => d.parse::<i8>().map_err(|_| {
                Error::runtime(format!(
                    "Could not parse device index '{d}' in device string '{text}': a device index is a DeviceIndex (int8_t), at most {}",
                    i8::MAX
                ))
            })?,
        };
        let Some(type_name) = DEVICE_TYPE_NAMES.iter().copied().find(|n| *n == name) else {
            return Err(Error::runtime(format!(
                "Expected one of {} device type at start of device string: {name}",
                DEVICE_TYPE_NAMES.join(", ")
            )));
        };
        if type_name == "mkldnn" {
            warn_mkldnn_once();
        }
        if type_name == "cpu" && index > 0 {
            return Err(Error::runtime(format!(
                "CPU device index must be -1 or zero, got {index}"
            )));
        }
        Ok(DeviceString { type_name, index })
    }

    /// The device type's name, one of [`DEVICE_TYPE_NAMES`].
    pub fn type_name(self) -> &'static str {
        self.type_name
    }

    /// The index, -1 when none was given.
    pub fn index(self) -> i8 {
        self.index
    }

    /// The [`DeviceType`] of the name, if this crate models it.
    pub fn device_type(self) -> Option<DeviceType> {
        DeviceType::ALL
            .into_iter()
            .find(|t| t.name() == self.type_name)
    }
}

/// Prints as `c10::Device::str()` does: `cuda:1`, or `cpu` without an index.
impl fmt::Display for DeviceString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.index == -1 {
            f.write_str(self.type_name)
        } else {
            write!(f, "{}:{}", self.type_name, self.index)
        }
    }
}

/// PyTorch's `TORCH_WARN_ONCE` for the `mkldnn` device name.
fn warn_mkldnn_once() {
    static WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !WARNED.swap(true, std::sync::atomic::Ordering::Relaxed) {
        crate::torch_warn!(
            "'mkldnn' is no longer used as device type. So torch.device('mkldnn') will be deprecated and removed in the future. Please use other valid device types instead."
        );
    }
}

/// Parses `cpu`, `cuda`, `cuda:1`, `meta`, ... through [`DeviceString`],
/// with PyTorch's error texts. A device type PyTorch knows but this crate
/// does not model (`ipu`, `vulkan`, ...) is an error.
impl FromStr for Device {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let parsed = DeviceString::parse(s)?;
        let device_type = parsed.device_type().ok_or_else(|| {
            Error::runtime(format!(
                "device type {} is not supported by this build (device string '{s}'); supported: {}",
                parsed.type_name(),
                DeviceType::ALL.map(DeviceType::name).join(", ")
            ))
        })?;
        Ok(Device::new(device_type, parsed.index()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints() {
        assert_eq!("cuda:1".parse::<Device>().unwrap().to_string(), "cuda:1");
        assert_eq!("meta".parse::<Device>().unwrap(), Device::META);
        assert_eq!("cpu:0".parse::<Device>().unwrap().to_string(), "cpu:0");
        assert_eq!("cuda:127".parse::<Device>().unwrap().index(), 127);
        assert!("cuda:".parse::<Device>().is_err());
        assert!("gpu".parse::<Device>().is_err());
    }

    fn error(text: &str) -> String {
        DeviceString::parse(text).unwrap_err().message().to_string()
    }

    #[test]
    fn device_strings_follow_pytorchs_grammar_and_messages() {
        let ok = |t: &str| DeviceString::parse(t).unwrap().to_string();
        assert_eq!(ok("cpu"), "cpu");
        assert_eq!(ok("cpu:0"), "cpu:0");
        assert_eq!(ok("meta"), "meta");
        assert_eq!(ok("cuda:0"), "cuda:0");
        assert_eq!(ok("privateuseone:3"), "privateuseone:3");
        assert_eq!(ok("vulkan"), "vulkan");
        for bad in [
            "cuda:01", "cuda:-1", "cuda:", ":0", "cuda:1:2", "cu da", "cuda:+1", "cuda:1x",
        ] {
            assert_eq!(error(bad), format!("Invalid device string: '{bad}'"));
        }
        assert_eq!(error(""), "Device string must not be empty");
        assert!(error("gpu").starts_with("Expected one of cpu, cuda, ipu, xpu, mkldnn,"));
        assert!(error("gpu").ends_with(" device type at start of device string: gpu"));
        assert_eq!(error("cpu:1"), "CPU device index must be -1 or zero, got 1");
    }

    #[test]
    fn indices_beyond_int8_are_refused_not_wrapped() {
        for (text, digits) in [
            ("cuda:200", "200"),
            ("cuda:128", "128"),
            ("cuda:255", "255"),
            ("cuda:256", "256"),
            ("cuda:99999999999", "99999999999"),
        ] {
            assert_eq!(
                error(text),
                format!("Could not parse device index '{digits}' in device string '{text}': a device index is a DeviceIndex (int8_t), at most 127")
            );
            assert!(text.parse::<Device>().is_err());
        }
    }

    #[test]
    fn device_types_without_a_model_here_parse_as_strings_only() {
        let ipu = DeviceString::parse("ipu:1").unwrap();
        assert_eq!(
            (ipu.type_name(), ipu.index(), ipu.device_type()),
            ("ipu", 1, None)
        );
        assert!("ipu:1"
            .parse::<Device>()
            .unwrap_err()
            .message()
            .starts_with("device type ipu is not supported by this build"));
        assert_eq!(
            DeviceString::parse("cuda").unwrap().device_type(),
            Some(DeviceType::CUDA)
        );
    }
}
