//! The checks that look at several functions at once (torchgen's
//! `error_check_native_functions`, the invariants of
//! `NativeFunctionsGroup` and `NativeFunction.validate_unstructured`):
//! structured delegates and families, argument names that are Python
//! keywords, `inplace_view` naming, and `autogen` entries.
//!
//! Duplicate names and two variants of one kind with one signature are
//! found while the collection is built
//! ([`NativeFunctions`](crate::NativeFunctions)); the checks of single
//! entries are in `from_yaml`.

use std::collections::HashSet;

use c10_core::DispatchKey;

use crate::arguments::SchemaKind;
use crate::error::YamlError;
use crate::native_function::NativeFunction;
use crate::native_functions::NativeFunctions;

/// Python's keywords (`keyword.kwlist`): argument names the Python
/// bindings could not use.
const PYTHON_RESERVED_KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// Functions PyTorch lets keep a keyword as an argument name.
const KEYWORD_EXCLUSIONS: [(&str, &str); 3] = [
    ("_has_compatible_shallow_copy_type", "from"),
    ("random_.from", "from"),
    ("uniform_", "from"),
];

/// Appends every cross-function problem of `functions` to `errors`.
pub(crate) fn check_across_functions(functions: &NativeFunctions, errors: &mut Vec<YamlError>) {
    let mut error = |f: &NativeFunction, message: String| {
        errors.push(YamlError::new(f.location.clone(), message));
    };
    let base_names: HashSet<String> = functions.iter().map(|f| f.base_name.to_string()).collect();

    for (i, f) in functions.iter().enumerate() {
        let name = f.name();

        // structured_delegate names an existing structured function.
        let mut delegate_ok = true;
        if let Some(d) = &f.structured_delegate {
            match functions.by_operator_name(d) {
                None => {
                    delegate_ok = false;
                    error(
                        f,
                        format!("{name} is marked as a structured_delegate pointing to {d}, but {d} is missing."),
                    );
                }
                Some(target) if !target.structured => {
                    delegate_ok = false;
                    error(
                        f,
                        format!("{name} is marked as a structured_delegate pointing to {d}, but {d} is not marked as structured. Consider adding 'structured=True' to the delegated operator"),
                    );
                }
                Some(_) => {}
            }
        }

        // Argument names the Python bindings can use.
        let full = name.to_string();
        for a in f.func.arguments() {
            if PYTHON_RESERVED_KEYWORDS.contains(&a.name())
                && !KEYWORD_EXCLUSIONS.contains(&(full.as_str(), a.name()))
            {
                error(
                    f,
                    format!(
                        "Argument name '{}' in function '{name}' is a reserved Python keyword.",
                        a.name()
                    ),
                );
            }
        }

        // inplace_view functions are in-place and have an out-of-place view.
        let written = f.base_name.to_string();
        if f.has_tag("inplace_view")
            && full != "resize_"
            && full != "resize_as_"
            && written != "set_"
        {
            if !f.base_name.is_inplace() {
                error(
                    f,
                    format!("{name} is marked with tag: inplace_view, but it doesn't follow the naming convention for inplace ops - the codegen expects the base name to have a trailing underscore."),
                );
            } else {
                let out_of_place = if f.base_name.is_dunder_method() {
                    format!("__{}__", f.base_name.base())
                } else {
                    f.base_name.base().to_string()
                };
                if !base_names.contains(&out_of_place) {
                    error(
                        f,
                        format!("{name} is marked with tag: inplace_view. The codegen expects there to be a corresponding out-of-place view op with the name '{out_of_place}' and matching schema, but it didn't find one."),
                    );
                }
            }
        }

        // autogen lists functions the codegen generates, not existing ones.
        for generated in &f.autogen {
            if let Some(existing) = functions.by_operator_name(generated) {
                error(
                    f,
                    format!(
                        "autogen names {generated}, which is already defined at {}; autogen lists only functions the codegen generates",
                        existing.location
                    ),
                );
            }
        }

        // Structured functions and delegates belong to a structured group.
        let grouped = functions.pre_group_slots(i).is_some_and(|s| {
            s.is_group() && [s.functional, s.inplace, s.mutable, s.out].contains(&Some(i))
        });
        if !grouped {
            // A structured function that is not an out variant is reported
            // where it is read.
            if f.structured && f.kind == SchemaKind::Out {
                error(
                    f,
                    format!("{name} is structured, but there was no valid functional variant of it (a function with the same signature and no out arguments)."),
                );
            }
            if f.structured_delegate.is_some() && delegate_ok {
                error(
                    f,
                    format!("{name} delegates to another structured out function, but no valid function was found (the delegate may not exist, or it has the wrong type)"),
                );
            }
        }
    }

    for g in functions.groups() {
        let structured = g.structured();
        for f in g.functions() {
            // A delegate to a missing or unstructured function is reported
            // above.
            let bad_delegate = f.structured_delegate.as_ref().is_some_and(|d| {
                !functions
                    .by_operator_name(d)
                    .is_some_and(|target| target.structured)
            });
            if f.part_of_structured_group() != structured && !bad_delegate {
                error(
                    f,
                    format!(
                        "{} and {} share a signature but one is structured (or a structured_delegate) and the other is not",
                        g.out.name(),
                        f.name()
                    ),
                );
            }
        }
        if !structured {
            continue;
        }
        if g.out
            .kernel(DispatchKey::CompositeImplicitAutograd)
            .is_some()
            || g.out
                .kernel(DispatchKey::CompositeImplicitAutogradNestedTensor)
                .is_some()
        {
            error(
                g.out,
                format!(
                    "structured function {} cannot have a CompositeImplicitAutograd kernel (structured composite kernels are not supported)",
                    g.out.name()
                ),
            );
        }
        for f in [Some(g.functional), g.inplace].into_iter().flatten() {
            match &f.structured_delegate {
                Some(d) if d == g.out.name() => {}
                Some(d) => error(
                    f,
                    format!(
                        "{} delegates to {d} but its actual delegate is {}",
                        f.name(),
                        g.out.name()
                    ),
                ),
                // Reported above as a structured/unstructured mix.
                None => {}
            }
        }
    }
}
