//! `codegen/*`: the `native_functions.yaml` model on PyTorch 2.15's full
//! file (`conformance/data/pytorch/native_functions.yaml`, 2,590 functions,
//! 16,000 lines): YAML, every schema, every key and every cross-function
//! check, as `aten yaml check` and the generators run them; then the whole
//! of `cargo xtask codegen` on it (with PyTorch's `derivatives.yaml`, whose
//! C++ formulas are rendered as text): rendering the typed API,
//! registrations, BackendSelect and autograd kernels (`generate_unformatted`), and the same followed by
//! `rustfmt` of every file (`generate_end_to_end`). torchgen takes tens of
//! seconds for its codegen.

// criterion_group! generates undocumented items.
#![allow(missing_docs)]

use aten_codegen::gen::{generate, render_files, GenOp};
use aten_codegen::kernel_index::KernelIndex;
use aten_codegen::{Derivatives, NativeFunctions, Tags};
use criterion::{black_box, criterion_group, criterion_main, Criterion};

const NATIVE_FUNCTIONS: &str = include_str!("../../conformance/data/pytorch/native_functions.yaml");
const TAGS: &str = include_str!("../../conformance/data/pytorch/tags.yaml");
const DERIVATIVES: &str = include_str!("../../conformance/data/pytorch/derivatives.yaml");

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("codegen");
    group.sample_size(20);
    group.bench_function("load_native_functions", |b| {
        b.iter(|| {
            let tags = Tags::parse(black_box(TAGS), "tags.yaml").ok();
            let functions = tags.and_then(|tags| {
                NativeFunctions::parse(black_box(NATIVE_FUNCTIONS), "native_functions.yaml", &tags)
                    .ok()
            });
            black_box(functions.map(|f| f.len()))
        })
    });
    let load = || {
        let tags = Tags::parse(TAGS, "tags.yaml").unwrap();
        NativeFunctions::parse(NATIVE_FUNCTIONS, "native_functions.yaml", &tags).unwrap()
    };
    let derivatives = Derivatives::parse(DERIVATIVES, "derivatives.yaml").unwrap();
    // PyTorch's kernels, as if each were a function of one module.
    let all_ops: Vec<GenOp> = load().iter().map(GenOp::from_native).collect();
    let kernels: String = all_ops
        .iter()
        .flat_map(|op| &op.dispatch)
        .map(|(_, kernel)| format!("pub fn {kernel}() {{}}\n"))
        .collect();
    let native = KernelIndex::from_sources("crate::native", &[("kernels".to_string(), kernels)]);
    group.bench_function("generate_unformatted", |b| {
        b.iter(|| {
            let functions = load();
            let ops: Vec<GenOp> = functions.iter().map(GenOp::from_native).collect();
            let (files, skipped) = render_files("aten", &ops, &ops, &derivatives, &native).unwrap();
            black_box((files.len(), skipped.len()))
        })
    });
    group.sample_size(10);
    group.bench_function("generate_end_to_end", |b| {
        b.iter(|| {
            let functions = load();
            let ops: Vec<GenOp> = functions.iter().map(GenOp::from_native).collect();
            let (files, skipped) = generate("aten", &ops, &ops, &derivatives, &native).unwrap();
            black_box((files.len(), skipped.len()))
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
