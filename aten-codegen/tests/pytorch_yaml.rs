//! PyTorch 2.15's own `native_functions.yaml` and `tags.yaml` load without
//! a single error, every `func` parses, and the counts are sane.

use aten_codegen::{Arguments, NativeFunctions, SchemaKind, Tags, Variant};
use c10_core::DispatchKey;

const NATIVE_FUNCTIONS: &str = include_str!("../../conformance/data/pytorch/native_functions.yaml");
const TAGS: &str = include_str!("../../conformance/data/pytorch/tags.yaml");

fn load() -> NativeFunctions {
    let tags = Tags::parse(TAGS, "tags.yaml").unwrap();
    match NativeFunctions::parse(NATIVE_FUNCTIONS, "native_functions.yaml", &tags) {
        Ok(f) => f,
        Err(errors) => panic!("{} errors:\n{errors}", errors.len()),
    }
}

#[test]
fn tags_load() {
    let tags = Tags::parse(TAGS, "tags.yaml").unwrap();
    assert_eq!(tags.len(), 20);
    assert!(tags.contains("pointwise") && tags.contains("nondeterministic_seeded"));
}

#[test]
fn every_function_loads_and_parses() {
    let fns = load();
    let written: Vec<&str> = NATIVE_FUNCTIONS
        .lines()
        .filter_map(|l| l.strip_prefix("- func: "))
        .map(|l| l.split(" #").next().unwrap_or(l).trim_end())
        .collect();
    assert!(fns.len() > 2_500, "{}", fns.len());
    assert_eq!(fns.len(), written.len());
    for (f, text) in fns.iter().zip(&written) {
        assert_eq!(f.func_text, *text);
        assert!(text.starts_with(&f.name().to_string()), "{text}");
    }
}

#[test]
fn counts() {
    let fns = load();
    let families = fns.structured_families().count();
    let structured = fns.iter().filter(|f| f.structured).count();
    assert_eq!(families, structured);
    println!(
        "functions {} groups {} structured families {} out variants {}",
        fns.len(),
        fns.groups().count(),
        families,
        fns.out_variants().count()
    );
}

#[test]
fn known_functions() {
    let fns = load();
    let add = fns.get("add.Tensor").unwrap();
    assert!(add.variants.contains(Variant::Method));
    assert_eq!(
        add.structured_delegate.as_ref().unwrap().to_string(),
        "add.out"
    );
    let out = fns.out_variant_of("add.Tensor").unwrap();
    assert_eq!(out.name().to_string(), "add.out");
    assert!(out.structured);
    assert_eq!(out.kind, SchemaKind::Out);
    assert_eq!(out.ufunc_inner_loop.len(), 2);
    assert_eq!(
        out.structured_inherits.as_deref(),
        Some("TensorIteratorBase")
    );
    assert_eq!(
        out.kernel(DispatchKey::SparseMeta).unwrap().kernel,
        "add_out_sparse_cpu"
    );
    let g = fns.group_of("add_.Tensor").unwrap();
    assert_eq!(g.functional.name().to_string(), "add.Tensor");
    let cat = fns.get("cat.out").unwrap();
    assert_eq!(cat.precomputed.as_ref().unwrap().replace[0].1.len(), 6);

    // No dispatch: an implied CompositeImplicitAutograd kernel named after
    // the function, not abstract.
    let cast = fns.get("_cast_Byte").unwrap();
    assert_eq!(cast.dispatch.len(), 1);
    assert!(cast.dispatch[0].implicit && cast.dispatch[0].kernel == "_cast_Byte");
    assert!(cast.has_composite_implicit_autograd_kernel() && !cast.is_abstract());
    // `dispatch: {}`: no kernel at all, abstract.
    let jagged = fns.get("_nested_view_from_jagged").unwrap();
    assert!(jagged.dispatch.is_empty() && jagged.is_abstract());
    assert!(add.is_abstract() && out.is_abstract());
}

/// torchgen's views of a function's kernels and arguments.
#[test]
fn kernel_and_argument_queries() {
    let fns = load();
    // Written entries only: `_cast_Byte`'s implied kernel is not one.
    assert_eq!(
        fns.get("_cast_Byte").unwrap().explicit_dispatch().count(),
        0
    );
    assert!(fns.get("_cast_Byte").unwrap().has_composite_kernel());
    let reshape = fns.get("reshape").unwrap();
    let keys: Vec<DispatchKey> = reshape.explicit_dispatch().map(|e| e.key).collect();
    assert_eq!(
        keys,
        [
            DispatchKey::CompositeImplicitAutograd,
            DispatchKey::CompositeImplicitAutogradNestedTensor
        ]
    );
    assert!(reshape.has_composite_implicit_autograd_nested_tensor_kernel());
    let polar = fns.get("polar").unwrap();
    assert!(polar.has_composite_kernel());
    assert!(!polar.has_composite_implicit_autograd_nested_tensor_kernel());
    // A backend kernel alone is no composite one.
    assert!(!fns.get("_mkldnn_reshape").unwrap().has_composite_kernel());

    // `self` in the middle: the positional arguments around it.
    let where_ = fns.get("where.ScalarSelf").unwrap();
    let args = Arguments::new(&where_.func);
    let names = |a: &[aten_boxing::schema::Argument]| -> Vec<String> {
        a.iter().map(|a| a.name().to_string()).collect()
    };
    assert_eq!(names(args.pre_self_positional()), ["condition"]);
    assert_eq!(names(args.post_self_positional()), ["other"]);
    // No `self`: nothing before it.
    let polar_args = Arguments::new(&polar.func);
    assert!(polar_args.pre_self_positional().is_empty());
    assert_eq!(names(polar_args.post_self_positional()), ["abs", "angle"]);
}

/// PyTorch's `derivatives.yaml` (its comments stripped): every entry
/// loads, its schema parses and every formula names inputs or outputs.
#[test]
fn every_derivative_entry_loads() {
    const DERIVATIVES: &str = include_str!("../../conformance/data/pytorch/derivatives.yaml");
    let d = match aten_codegen::Derivatives::parse(DERIVATIVES, "derivatives.yaml") {
        Ok(d) => d,
        Err(errors) => panic!("{} errors:\n{errors}", errors.len()),
    };
    let written = DERIVATIVES
        .lines()
        .filter(|l| l.starts_with("- name: "))
        .count();
    assert_eq!(d.len(), written);
    assert!(d.len() > 600, "{}", d.len());
    let add = d.get("add.Tensor").unwrap();
    let backward = add.formulas("Default").unwrap().backward();
    assert_eq!(backward[0].inputs(), ["self"]);
    assert_eq!(
        backward[0].formula(),
        "handle_r_to_c(self.scalar_type(), grad)"
    );
}
