//! Where generated code and registrations go: the crate that hosts each
//! kernel ([`kernel_home`]), and per crate a [`Section`] of generated
//! kernels and `impl` registrations.

use std::fmt::Write;

use aten_boxing::schema::FunctionSchema;
use c10_core::DispatchKey;

use crate::kernel_index::KernelIndex;

/// The crates that host kernels.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Home {
    Core,
    Cpu,
}

/// Which crate hosts the kernel of a dispatch entry, and the kernel's
/// full path there. CPU kernels live in `aten-native-cpu`, others in
/// `aten-core`; an entry that names the CPU kernel for another key
/// (`CPU, Meta: add`: kernels built on `TensorIterator` serve Meta tensors
/// too) is registered from the CPU crate with it. In `aten-core`, the
/// kernels named as Meta kernels (`fill_meta_`, `empty_meta`) live in
/// `meta`, every other in the module of `native` that `native` (the index
/// of its sources) finds it in.
pub(super) fn kernel_home(
    key: DispatchKey,
    kernel: &str,
    dispatch: &[(DispatchKey, String)],
    native: &KernelIndex,
) -> Result<(Home, String), String> {
    let cpu_kernel = dispatch
        .iter()
        .any(|(k, name)| *k == DispatchKey::CPU && name == kernel);
    if key == DispatchKey::CPU || cpu_kernel {
        Ok((Home::Cpu, format!("crate::kernels::{kernel}")))
    } else if kernel.ends_with("_meta") || kernel.ends_with("_meta_") {
        Ok((Home::Core, format!("crate::meta::{kernel}")))
    } else {
        Ok((Home::Core, native.path(kernel)?))
    }
}

/// Code and registrations destined for one crate.
#[derive(Default)]
pub(super) struct Section {
    /// Kernels generated for this crate.
    pub(super) code: String,
    /// `(key, registered name, kernel path)`.
    pub(super) impls: Vec<(DispatchKey, String, String)>,
}

impl Section {
    /// The `torch_library_impl!` blocks, one per dispatch key.
    pub(super) fn render_impls(&self, ns: &str) -> String {
        let mut keys: Vec<DispatchKey> = self.impls.iter().map(|(k, _, _)| *k).collect();
        keys.sort();
        keys.dedup();
        let mut out = String::new();
        for key in keys {
            let _ = writeln!(
                out,
                "aten_dispatch::torch_library_impl!({ns}, {key}, |m| {{"
            );
            for (_, name, kernel) in self.impls.iter().filter(|(k, _, _)| *k == key) {
                let _ = writeln!(
                    out,
                    "    m.impl_({name:?}, CppFunction::from_unboxed({kernel}))?;"
                );
            }
            let _ = writeln!(out, "    Ok(())\n}});\n");
        }
        out
    }
}

/// `name.overload` without namespace, as `Library::impl_` takes it.
pub(super) fn registered_name(schema: &FunctionSchema) -> String {
    let op = schema.operator_name();
    let short = op.name().rsplit("::").next().unwrap_or(op.name());
    if op.overload_name().is_empty() {
        short.to_string()
    } else {
        format!("{short}.{}", op.overload_name())
    }
}

/// The suffix of generated kernel names for `key` (`cpu`, `meta`).
pub(super) fn key_suffix(key: DispatchKey) -> String {
    key.name().to_lowercase()
}
