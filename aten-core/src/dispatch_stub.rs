//! Per-device kernels of backend-neutral operations (PyTorch's
//! `DispatchStub`): `aten-core` declares a stub (a static list of kernels
//! by device type) and calls the kernel of the device at hand; a backend
//! registers its kernel with [`register_dispatch!`](crate::register_dispatch),
//! which the linker collects like the dispatcher's static registrations.
//! `aten-core` itself holds no kernel loops.

pub use c10_core::DeviceType;

#[doc(hidden)]
pub use aten_dispatch::library::__linkme;

/// One backend's kernel of a stub.
#[derive(Copy, Clone, Debug)]
pub struct StubKernel<F: 'static> {
    /// The device type the kernel serves.
    pub device: DeviceType,
    /// The kernel.
    pub kernel: F,
}

/// The kernel of `kernels` registered for `device`, if any.
#[inline]
pub fn find<F: Copy>(kernels: &[StubKernel<F>], device: DeviceType) -> Option<F> {
    kernels
        .iter()
        .find(|k| k.device == device)
        .map(|k| k.kernel)
}

/// `REGISTER_DISPATCH(stub, kernel)`: registers `$kernel` (of type `$ty`)
/// as `$stub`'s kernel for the device type `$device`.
#[macro_export]
#[doc(alias = "REGISTER_DISPATCH")]
macro_rules! register_dispatch {
    ($stub:path, $ty:ty, $device:ident, $kernel:expr) => {
        const _: () = {
            #[$crate::dispatch_stub::__linkme::distributed_slice($stub)]
            #[linkme(crate = $crate::dispatch_stub::__linkme)]
            static KERNEL: $crate::dispatch_stub::StubKernel<$ty> =
                $crate::dispatch_stub::StubKernel {
                    device: $crate::dispatch_stub::DeviceType::$device,
                    kernel: $kernel,
                };
        };
    };
}
