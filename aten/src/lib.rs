//! `aten`: the facade users depend on, PyTorch's `torch` package for Rust.
//!
//! It re-exports the layers of the stack and links in the backends chosen by
//! features (`cpu`, on by default; `cuda`), so that their kernel
//! registrations are present whenever the dispatcher is used.
//!
//! The layers, bottom up:
//! - [`c10`]: dispatch keys, key sets, thread-local dispatch state, errors;
//! - [`boxing`]: `IValue`, `FunctionSchema`, kernels;
//! - [`dispatch`]: the dispatcher, libraries and registrations;
//! - [`core`]: tensors and the typed operator API ([`ops`], [`Tensor`]);
//! - [`autograd`]: the autograd layer (`requires_grad_`, `backward`,
//!   `grad`, grad modes), through [`TensorAutograd`] on tensors;
//! - [`torch_ops`]: the `torch.ops` layer (namespaces, overload packets,
//!   overloads, host kernels, runtime libraries, higher-order operators,
//!   custom classes, dispatch modes, tensor subclasses, FakeTensor), rooted
//!   at [`ops_root`];
//! - [`fx`]: graphs of operator calls captured with `make_fx`, printed in
//!   FX's format and replayed.

pub use aten_autograd as autograd;
pub use aten_boxing as boxing;
pub use aten_core as core;
pub use aten_dispatch as dispatch;
pub use aten_fx as fx;
pub use aten_ops as torch_ops;
pub use c10_core as c10;

pub use aten_autograd::TensorAutograd;
pub use aten_core::{ops, Tensor};
pub use c10_core::{
    BackendComponent, Device, DispatchKey, DispatchKeySet, Error, ErrorKind, Generator, Layout,
    MemoryFormat, Result, Scalar, ScalarType,
};

#[cfg(feature = "cpu")]
pub use aten_native_cpu as native_cpu;

/// The process-wide dispatcher with every linked backend's registrations
/// (PyTorch's `c10::Dispatcher::singleton()`).
pub fn dispatcher() -> &'static aten_dispatch::Dispatcher {
    // Reference the registering crates so the linker keeps their static
    // registration blocks.
    std::hint::black_box(aten_core::link as fn());
    std::hint::black_box(aten_autograd::link as fn());
    #[cfg(feature = "cpu")]
    std::hint::black_box(aten_native_cpu::link as fn());
    #[cfg(feature = "cuda")]
    std::hint::black_box(aten_native_cuda::link as fn());
    aten_dispatch::Dispatcher::global()
}

/// `torch.ops` over [`dispatcher()`] (with every linked backend).
pub fn ops_root() -> &'static aten_ops::Ops {
    dispatcher();
    aten_ops::ops()
}

#[cfg(feature = "cuda")]
pub use aten_native_cuda as native_cuda;

/// `torch.cuda`: whether CUDA can be used. Without the `cuda` feature
/// there is no backend: CUDA is never available, and creating a CUDA
/// tensor fails with "Torch not compiled with CUDA enabled".
pub mod cuda {
    /// Whether this build has the CUDA backend (the `cuda` feature;
    /// `torch.backends.cuda.is_built()`), whether or not a device is there.
    #[doc(alias = "torch.backends.cuda.is_built")]
    pub fn is_built() -> bool {
        cfg!(feature = "cuda")
    }

    /// Whether the `cuda` feature is on, a driver loads and a device is
    /// present (`torch.cuda.is_available()`).
    pub fn is_available() -> bool {
        #[cfg(feature = "cuda")]
        return aten_native_cuda::is_available();
        #[cfg(not(feature = "cuda"))]
        false
    }

    /// The number of usable CUDA devices (`torch.cuda.device_count()`).
    pub fn device_count() -> usize {
        #[cfg(feature = "cuda")]
        return aten_native_cuda::device_count();
        #[cfg(not(feature = "cuda"))]
        0
    }
}

/// One `#[test]` per backend in this build for each named device-generic
/// test body (`fn(DeviceTest)`; PyTorch's `instantiate_device_type_tests`):
/// module `meta` always, `cpu` with the `cpu` feature, `cuda` with the
/// `cuda` feature (skipped on a machine without a device). Each backend's
/// instantiation is its own macro below, present only when the backend is.
#[macro_export]
macro_rules! instantiate_device_type_tests {
    ($($test:ident),* $(,)?) => {
        $crate::core::instantiate_device_tests_for!(
            meta, $crate::core::testing::DeviceTest::META, true; $($test),*
        );
        $crate::__instantiate_cpu_tests!($($test),*);
        $crate::__instantiate_cuda_tests!($($test),*);
    };
}

/// The CPU backend's instantiation of device-generic tests.
#[cfg(feature = "cpu")]
#[doc(hidden)]
#[macro_export]
macro_rules! __instantiate_cpu_tests {
    ($($test:ident),*) => {
        $crate::core::instantiate_device_tests_for!(
            cpu, $crate::core::testing::DeviceTest::CPU, true; $($test),*
        );
    };
}

/// No CPU backend in this build: no CPU instantiation.
#[cfg(not(feature = "cpu"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __instantiate_cpu_tests {
    ($($test:ident),*) => {};
}

/// The CUDA backend's instantiation of device-generic tests, run where a
/// device is present.
#[cfg(feature = "cuda")]
#[doc(hidden)]
#[macro_export]
macro_rules! __instantiate_cuda_tests {
    ($($test:ident),*) => {
        $crate::core::instantiate_device_tests_for!(
            cuda, $crate::core::testing::DeviceTest::CUDA, $crate::cuda::is_available(); $($test),*
        );
    };
}

/// No CUDA backend in this build: no CUDA instantiation.
#[cfg(not(feature = "cuda"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __instantiate_cuda_tests {
    ($($test:ident),*) => {};
}
