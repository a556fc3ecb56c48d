//! The backend fallbacks every operator gets from the framework, as PyTorch
//! registers them in `ATen/core` (`VariableFallbackKernel.cpp`,
//! `BackendSelectFallbackKernel.cpp`, the autocast and vmap-mode files):
//!
//! - `BackendSelect`, `ADInplaceOrView`, the autocast keys and the vmap-mode
//!   keys fall through: an operator without a kernel there skips them;
//! - the autograd keys fall through as well. PyTorch 2.15 registers a boxed
//!   `autograd_fallback` there that, for an operator without an autograd
//!   formula, redispatches below autograd; until this project's autograd
//!   layer exists, falling through has the same effect without boxing every
//!   call (PyTorch's own tables show these slots as `[backend fallback]`
//!   either way; ours print the `fallthrough ` prefix).
//!
//! - `Meta` gets PyTorch's boxed fallback that refuses an operator without
//!   a Meta kernel, naming it (`MetaFallbackKernel.cpp`).
//!
//! Only the keys a tensor of this project can carry are covered; PyTorch's
//! Python, functorch and functionalization fallbacks belong to layers that do
//! not exist here yet.

use aten_dispatch::{torch_library_impl, CppFunction};

torch_library_impl!(_, BackendSelect, |m| {
    m.fallback(CppFunction::fallthrough())?;
    Ok(())
});

torch_library_impl!(_, Meta, |m| {
    m.fallback(CppFunction::from_boxed(|op, _keys, _stack| {
        Err(c10_core::Error::not_implemented(format!(
            "{}: attempted to run this operator with Meta tensors, but there was no fake impl or Meta kernel registered. You may have run into this message while using an operator with PT2 compilation APIs (torch.compile/torch.export); in order to use this operator with those APIs you'll need to add a fake impl. Please see the following for next steps:  https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html",
            op.operator_name()
        )))
    }))?;
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

fallthrough_fallbacks!(
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
