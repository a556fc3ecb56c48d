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

/// Parses `cpu`, `cuda`, `cuda:1`, `meta`, ... with PyTorch's error text.
impl FromStr for Device {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || Error::runtime(format!("Invalid device string: '{s}'"));
        let (ty, index) = match s.split_once(':') {
            Some((ty, idx)) => {
                if idx.is_empty() || !idx.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(bad());
                }
                (ty, idx.parse::<i8>().map_err(|_| bad())?)
            }
            None => (s, -1),
        };
        let device_type = DeviceType::ALL
            .iter()
            .copied()
            .find(|t| t.name() == ty)
            .ok_or_else(|| {
                Error::runtime(format!(
                    "Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device string: {ty}"
                ))
            })?;
        if device_type == DeviceType::CPU && index > 0 {
            return Err(Error::runtime(format!(
                "CPU device index must be -1 or zero, got {index}"
            )));
        }
        Ok(Device::new(device_type, index))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints() {
        assert_eq!("cuda:1".parse::<Device>().unwrap().to_string(), "cuda:1");
        assert_eq!("meta".parse::<Device>().unwrap(), Device::META);
        assert!("cuda:".parse::<Device>().is_err());
        assert!("gpu".parse::<Device>().is_err());
    }
}
