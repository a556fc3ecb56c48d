//! The backend fallbacks every operator gets from the framework, as PyTorch
//! registers them in `ATen/core` (`VariableFallbackKernel.cpp`,
//! `BackendSelectFallbackKernel.cpp`, the autocast and vmap-mode files):
//!
//! - `BackendSelect`, `ADInplaceOrView`, the autocast keys and the vmap-mode
//!   keys fall through: an operator without a kernel there skips them;
//! - the autograd keys get a boxed fallback that redispatches below autograd
//!   (what PyTorch's `autograd_fallback` does for an operator without an
//!   autograd formula until the autograd layer adds one).
//!
//! Only the keys a tensor of this project can carry are covered; PyTorch's
//! Python, functorch and functionalization fallbacks belong to layers that do
//! not exist here yet.

use aten_dispatch::{torch_library_impl, CppFunction};
use c10_core::dispatch_key_set::AFTER_AUTOGRAD_KEYSET;

torch_library_impl!(_, BackendSelect, |m| {
    m.fallback(CppFunction::fallthrough())?;
    Ok(())
});

torch_library_impl!(_, ADInplaceOrView, |m| {
    m.fallback(CppFunction::fallthrough())?;
    Ok(())
});

macro_rules! fallthrough_fallbacks {
    ($($key:ident),*) => {$(
        torch_library_impl!(_, $key, |m| {
            m.fallback(CppFunction::fallthrough())?;
            Ok(())
        });
    )*};
}

fallthrough_fallbacks!(
    AutocastCPU,
    AutocastMTIA,
    AutocastMAIA,
    AutocastXPU,
    AutocastMPS,
    AutocastCUDA,
    FuncTorchVmapMode,
    VmapMode
);

macro_rules! autograd_fallbacks {
    ($($key:ident),*) => {$(
        torch_library_impl!(_, $key, |m| {
            m.fallback(CppFunction::from_boxed(|op, keys, stack| {
                op.redispatch_boxed(keys & AFTER_AUTOGRAD_KEYSET, stack)
            }))?;
            Ok(())
        });
    )*};
}

autograd_fallbacks!(
    AutogradOther,
    AutogradCPU,
    AutogradCUDA,
    AutogradXLA,
    AutogradMPS,
    AutogradXPU,
    AutogradHPU,
    AutogradLazy,
    AutogradMTIA,
    AutogradMAIA,
    AutogradPrivateUse1,
    AutogradMeta
);

/// Referenced by the facade so that this crate's static registrations are
/// linked into every program that uses it.
#[doc(hidden)]
pub fn link() {}
