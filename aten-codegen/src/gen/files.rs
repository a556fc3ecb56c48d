//! The generated files: each one's path, header (the [`PREAMBLE`], module
//! docs, lints and imports) and the rendered code it wraps.

use aten_boxing::schema::FunctionSchema;

use super::registrations::{self, OpRegistration};
use super::sections::Section;
use super::{GeneratedFile, PREAMBLE};

/// `aten-core/src/generated/ops.rs`: the typed operator functions.
pub(super) fn ops(api: &str) -> GeneratedFile {
    GeneratedFile {
        path: "aten-core/src/generated/ops.rs".into(),
        contents: format!(
            "{PREAMBLE}//! The typed operator API: a function per operator overload.\n\n\
             #![allow(
    clippy::too_many_arguments,
    clippy::type_complexity,
    clippy::derivable_impls,
    non_snake_case
)]\n\n\
             use std::sync::OnceLock;\n\n\
             #[allow(unused_imports)]\n\
             use aten_dispatch::TypedOperatorHandle;\n\
             #[allow(unused_imports)]\n\
             use c10_core::{{Device, Generator, Layout, MemoryFormat, Result, Scalar, ScalarType}};\n\n\
             use crate::typed_handle::typed_handle;\n\
             #[allow(unused_imports)]\n\
             use crate::Tensor;\n\n{api}"
        ),
    }
}

/// `aten-core/src/generated/tensor_methods.rs`: the `Tensor` methods.
pub(super) fn tensor_methods(methods: &str) -> GeneratedFile {
    GeneratedFile {
        path: "aten-core/src/generated/tensor_methods.rs".into(),
        contents: format!(
            "{PREAMBLE}//! `Tensor` methods for operators with `variants: method`.\n\n\
             #![allow(clippy::too_many_arguments, non_snake_case)]\n\n\
             #[allow(unused_imports)]\n\
             use c10_core::{{Device, Generator, Layout, MemoryFormat, Result, Scalar, ScalarType}};\n\n\
             #[allow(unused_imports)]\n\
             use super::ops;\n\
             use crate::Tensor;\n\n\
             impl Tensor {{\n{methods}}}\n"
        ),
    }
}

/// The header of a registration file, with its module docs `doc`.
fn registrations_header(doc: &str) -> String {
    format!(
        "{PREAMBLE}//! {doc}\n\n\
         #![allow(clippy::too_many_arguments)]\n\n\
         #[allow(unused_imports)]\n\
         use aten_dispatch::{{AliasAnalysisKind, CppFunction}};\n\
         #[allow(unused_imports)]\n\
         use c10_core::{{Device, DispatchKeySet, Generator, Layout, MemoryFormat, Result, Scalar, ScalarType}};\n\n"
    )
}

/// `aten-core/src/generated/registrations.rs`: the library `ns`'s
/// definitions (`defs`: each schema with its tags) and `aten-core`'s
/// kernels and registrations.
pub(super) fn core_registrations(
    ns: &str,
    defs: &[(FunctionSchema, Vec<String>)],
    core: &Section,
) -> GeneratedFile {
    let def_regs: Vec<OpRegistration<'_>> = defs
        .iter()
        .map(|(schema, tags)| OpRegistration { schema, tags })
        .collect();
    GeneratedFile {
        path: "aten-core/src/generated/registrations.rs".into(),
        contents: format!(
            "{}#[allow(unused_imports)]\nuse super::ops;\n#[allow(unused_imports)]\nuse crate::Tensor;\n\n{}\n{}\n{}",
            registrations_header(&format!(
                "Registrations made by `aten-core`: the `{ns}` library's definitions, BackendSelect kernels of factory operators, and the composite and Meta kernels."
            )),
            registrations::render_defs(ns, &def_regs),
            core.code,
            core.render_impls(ns)
        ),
    }
}

/// `aten-native-cpu/src/generated/register_cpu.rs`: the CPU crate's
/// kernels and registrations.
pub(super) fn cpu_registrations(ns: &str, cpu: &Section) -> GeneratedFile {
    GeneratedFile {
        path: "aten-native-cpu/src/generated/register_cpu.rs".into(),
        contents: format!(
            "{}#[allow(unused_imports)]\nuse aten_core::Tensor;\n\n{}\n{}",
            registrations_header(
                "The CPU kernels named by `dispatch:` entries, and the structured CPU kernels."
            ),
            cpu.code,
            cpu.render_impls(ns)
        ),
    }
}

/// The imports every autograd file starts with.
const AUTOGRAD_IMPORTS: &str = "#[allow(unused_imports)]\n\
     use aten_core::{ops, Tensor};\n\
     #[allow(unused_imports)]\n\
     use c10_core::{Device, DispatchKeySet, Error, Generator, Layout, MemoryFormat, Result, Scalar, ScalarType};\n\
     #[allow(unused_imports)]\n\
     use c10_core::AutoDispatchBelowADInplaceOrView;\n\
     #[allow(unused_imports)]\n\
     use c10_core::dispatch_key_set::{AFTER_AD_INPLACE_OR_VIEW_KEYSET, AFTER_AUTOGRAD_KEYSET};\n\
     #[allow(unused_imports)]\n\
     use aten_dispatch::CppFunction;\n\
     #[allow(unused_imports)]\n\
     use crate::formulas::*;\n\
     #[allow(unused_imports)]\n\
     use crate::node::{ApplyContext, BackwardFunction};\n\
     #[allow(unused_imports)]\n\
     use crate::record;\n\
     #[allow(unused_imports)]\n\
     use crate::saved_variable::SavedVariable;\n\n";

fn autograd_file(name: &str, doc: &str, code: &str) -> GeneratedFile {
    GeneratedFile {
        path: format!("aten-autograd/src/generated/{name}"),
        contents: format!(
            "{PREAMBLE}//! {doc}\n\n#![allow(clippy::too_many_arguments, clippy::needless_borrow, clippy::redundant_clone, clippy::clone_on_copy, clippy::needless_question_mark, clippy::redundant_field_names, non_snake_case)]\n\n{AUTOGRAD_IMPORTS}{code}"
        ),
    }
}

/// `aten-autograd/src/generated/functions.rs`: the backward nodes.
pub(super) fn autograd_functions(code: &str) -> GeneratedFile {
    autograd_file(
        "functions.rs",
        "The backward nodes of the operators with formulas in `derivatives.yaml`.",
        code,
    )
}

/// `aten-autograd/src/generated/variable_type.rs`: the Autograd kernels.
pub(super) fn variable_type(code: &str) -> GeneratedFile {
    autograd_file(
        "variable_type.rs",
        "The kernels at the `Autograd` alias key (PyTorch's `VariableType`).",
        code,
    )
}

/// `aten-autograd/src/generated/inplace_or_view.rs`: the ADInplaceOrView
/// kernels.
pub(super) fn inplace_or_view(code: &str) -> GeneratedFile {
    autograd_file(
        "inplace_or_view.rs",
        "The kernels at `ADInplaceOrView`: version bumps of in-place and `out=` operators, view bases of view operators.",
        code,
    )
}
