//! Device-generic kernel tests (PyTorch's `instantiate_device_type_tests`).
//!
//! A test body takes a [`DeviceTest`] and makes its tensors through it;
//! the `aten` facade's `instantiate_device_type_tests!` turns each body
//! into one `#[test]` per backend the build has (Meta always, CPU and CUDA
//! with their features), each through
//! [`instantiate_device_tests_for!`](crate::instantiate_device_tests_for). On a device
//! without data (Meta) the checks compare shapes, dtypes and devices, and
//! skip values and data-dependent errors, as PyTorch's Meta tests do.

use std::fmt::Debug;

use c10_core::{Device, DeviceType, Element, Result};

use crate::ops;
use crate::Tensor;

/// The device one instantiation of a device-generic test runs on.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DeviceTest {
    /// The device the test's tensors live on.
    pub device: Device,
}

impl DeviceTest {
    /// The CPU instantiation.
    pub const CPU: DeviceTest = DeviceTest {
        device: Device::CPU,
    };
    /// The Meta instantiation (shapes, dtypes and errors without data).
    pub const META: DeviceTest = DeviceTest {
        device: Device::META,
    };
    /// The CUDA instantiation (the first device).
    pub const CUDA: DeviceTest = DeviceTest {
        device: Device::new(DeviceType::CUDA, 0),
    };

    /// Whether tensors on this device have values to compare.
    pub fn has_data(&self) -> bool {
        self.device.device_type() != DeviceType::Meta
    }

    /// A tensor of `data` laid out as `shape`, on this device.
    pub fn tensor<T: Element>(&self, data: &[T], shape: &[i64]) -> Tensor {
        let cpu = Tensor::from_slice(data, shape).expect("a valid tensor");
        self.to_device(&cpu)
    }

    /// `t` copied to this device (itself on the CPU).
    pub fn to_device(&self, t: &Tensor) -> Tensor {
        if t.device() == Some(self.device) {
            return t.clone();
        }
        ops::_to_copy_with(
            t,
            ops::ToCopyOptions {
                device: Some(self.device),
                ..Default::default()
            },
        )
        .expect("a copy to the device under test")
    }

    /// Checks that `t` lives on this device, has `shape` and dtype `T`,
    /// and (where the device has data) holds `expected`.
    pub fn assert_values<T: Element + PartialEq + Debug>(
        &self,
        t: &Tensor,
        shape: &[i64],
        expected: &[T],
    ) {
        assert_eq!(t.device(), Some(self.device), "device");
        assert_eq!(t.sizes(), shape, "shape");
        assert_eq!(t.dtype(), Some(T::DTYPE), "dtype");
        if self.has_data() {
            assert_eq!(t.to_vec::<T>().expect("readable values"), expected);
        }
    }

    /// Checks an error that every device raises (shape, dtype and argument
    /// checks of meta functions) and returns its message.
    pub fn assert_error<T: Debug>(&self, result: Result<T>) -> String {
        result
            .expect_err("an error on every device")
            .message()
            .to_string()
    }

    /// Checks an error raised where the data is (a kernel's dtype or value
    /// checks): an error on devices with data, success on Meta.
    pub fn assert_data_error<T: Debug>(&self, result: Result<T>) -> Option<String> {
        if self.has_data() {
            Some(result.expect_err("an error").message().to_string())
        } else {
            result.expect("no error on a device without data");
            None
        }
    }
}

/// One `#[test]` per named test body (`fn(DeviceTest)`) in module `$module`,
/// run on `$device` (an expression of type [`DeviceTest`]) when `$ready`
/// holds (a device the build has but the machine lacks skips). The `aten`
/// facade's `instantiate_device_type_tests!` calls this once per backend
/// in the build (PyTorch's `instantiate_device_type_tests`).
#[macro_export]
macro_rules! instantiate_device_tests_for {
    ($module:ident, $device:expr, $ready:expr; $($test:ident),* $(,)?) => {
        mod $module {
            $(
                #[test]
                fn $test() {
                    if $ready {
                        super::$test($device)
                    }
                }
            )*
        }
    };
}
