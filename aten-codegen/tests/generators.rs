//! Snapshot tests of every generator on a small fixture yaml
//! (`tests/fixtures/generators/native_functions.yaml`): a structured family
//! (`add`), an operator with an `autogen` out variant (`relu`), a factory
//! with a BackendSelect kernel (`ones`), defaults of several kinds (`sum`)
//! and a keyword name (`where`); with derivative formulas for `add` and
//! `relu` (`fixtures/generators/derivatives.yaml`). Review changes with `cargo insta review`.

use aten_codegen::gen::{generate, GenOp};
use aten_codegen::kernel_index::KernelIndex;
use aten_codegen::{Derivatives, NativeFunctions, Tags};

fn generated() -> Vec<(String, String)> {
    let tags = Tags::parse(include_str!("../../tags.yaml"), "tags.yaml").unwrap();
    let functions = NativeFunctions::parse(
        include_str!("fixtures/generators/native_functions.yaml"),
        "native_functions.yaml",
        &tags,
    )
    .unwrap();
    let derivatives = Derivatives::parse(
        include_str!("fixtures/generators/derivatives.yaml"),
        "derivatives.yaml",
    )
    .unwrap();
    let ops: Vec<GenOp> = functions.iter().map(GenOp::from_native).collect();
    // The fixture's one hand-written `aten-core` kernel, in `factories`.
    let native = KernelIndex::from_sources(
        "crate::native",
        &[("factories".to_string(), "pub fn ones() {}\n".to_string())],
    );
    let (files, skipped) = generate("aten", &ops, &[], &derivatives, &native).unwrap();
    assert!(skipped.is_empty(), "{skipped:?}");
    files.into_iter().map(|f| (f.path, f.contents)).collect()
}

fn file(name: &str) -> String {
    generated()
        .into_iter()
        .find(|(path, _)| path.ends_with(name))
        .map(|(_, contents)| contents)
        .unwrap_or_else(|| panic!("no generated file {name}"))
}

#[test]
fn typed_api() {
    insta::assert_snapshot!(file("generated/ops.rs"));
}

#[test]
fn tensor_methods() {
    insta::assert_snapshot!(file("generated/tensor_methods.rs"));
}

#[test]
fn core_registrations() {
    insta::assert_snapshot!(file("generated/registrations.rs"));
}

#[test]
fn cpu_registrations() {
    insta::assert_snapshot!(file("generated/register_cpu.rs"));
}

#[test]
fn autograd_kernels() {
    insta::assert_snapshot!(file("generated/variable_type.rs"));
    insta::assert_snapshot!(file("generated/functions.rs"));
    insta::assert_snapshot!(file("generated/inplace_or_view.rs"));
}
