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
use crate::native_functions::{NativeFunctions, NativeFunctionsGroup};

/// Python's keywords (`keyword.kwlist`): argument names the Python
/// bindings could not use.
const PYTHON_RESERVED_KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// Functions PyTorch lets keep a keyword as an argument name.
const KEYWORD_EXCLUSIONS: [(&str, &str); 4] = [
    ("_has_compatible_shallow_copy_type", "from"),
    ("random_.from", "from"),
    ("uniform_", "from"),
    // PyTorch generates `uniform` (autogen); this project writes it out.
    ("uniform", "from"),
];

/// Appends every cross-function problem of `functions` to `errors`: per
/// function in file order, then per group of variants.
pub(crate) fn check_across_functions(functions: &NativeFunctions, errors: &mut Vec<YamlError>) {
    let mut report = Report { errors };
    let base_names: HashSet<String> = functions.iter().map(|f| f.base_name.to_string()).collect();
    for (i, f) in functions.iter().enumerate() {
        let delegate_ok = check_delegate(&mut report, functions, f);
        check_argument_names(&mut report, f);
        check_inplace_view(&mut report, f, &base_names);
        check_autogen(&mut report, functions, f);
        check_grouped(&mut report, functions, i, f, delegate_ok);
    }
    for g in functions.groups() {
        check_group(&mut report, functions, &g);
    }
}

/// Collects problems, each at the function it is about.
struct Report<'e> {
    errors: &'e mut Vec<YamlError>,
}

impl Report<'_> {
    fn error(&mut self, f: &NativeFunction, message: String) {
        self.errors
            .push(YamlError::new(f.location.clone(), message));
    }
}

/// `structured_delegate` names an existing structured function. Returns
/// whether it does (or there is none), so that a bad delegate is reported
/// once.
fn check_delegate(
    report: &mut Report<'_>,
    functions: &NativeFunctions,
    f: &NativeFunction,
) -> bool {
    let Some(d) = &f.structured_delegate else {
        return true;
    };
    let name = f.name();
    match functions.by_operator_name(d) {
        None => {
            report.error(
                f,
                format!("{name} is marked as a structured_delegate pointing to {d}, but {d} is missing."),
            );
            false
        }
        Some(target) if !target.structured => {
            report.error(
                f,
                format!("{name} is marked as a structured_delegate pointing to {d}, but {d} is not marked as structured. Consider adding 'structured=True' to the delegated operator"),
            );
            false
        }
        Some(_) => true,
    }
}

/// Argument names the Python bindings can use.
fn check_argument_names(report: &mut Report<'_>, f: &NativeFunction) {
    let name = f.name();
    let full = name.to_string();
    for a in f.func.arguments() {
        if PYTHON_RESERVED_KEYWORDS.contains(&a.name())
            && !KEYWORD_EXCLUSIONS.contains(&(full.as_str(), a.name()))
        {
            report.error(
                f,
                format!(
                    "Argument name '{}' in function '{name}' is a reserved Python keyword.",
                    a.name()
                ),
            );
        }
    }
}

/// `inplace_view` functions are in-place and have an out-of-place view.
fn check_inplace_view(report: &mut Report<'_>, f: &NativeFunction, base_names: &HashSet<String>) {
    let name = f.name();
    let full = name.to_string();
    let written = f.base_name.to_string();
    if !f.has_tag("inplace_view") || full == "resize_" || full == "resize_as_" || written == "set_"
    {
        return;
    }
    if !f.base_name.is_inplace() {
        report.error(
            f,
            format!("{name} is marked with tag: inplace_view, but it doesn't follow the naming convention for inplace ops - the codegen expects the base name to have a trailing underscore."),
        );
        return;
    }
    let out_of_place = if f.base_name.is_dunder_method() {
        format!("__{}__", f.base_name.base())
    } else {
        f.base_name.base().to_string()
    };
    if !base_names.contains(&out_of_place) {
        report.error(
            f,
            format!("{name} is marked with tag: inplace_view. The codegen expects there to be a corresponding out-of-place view op with the name '{out_of_place}' and matching schema, but it didn't find one."),
        );
    }
}

/// `autogen` lists functions the codegen generates, not existing ones.
fn check_autogen(report: &mut Report<'_>, functions: &NativeFunctions, f: &NativeFunction) {
    for generated in &f.autogen {
        if let Some(existing) = functions.by_operator_name(generated) {
            report.error(
                f,
                format!(
                    "autogen names {generated}, which is already defined at {}; autogen lists only functions the codegen generates",
                    existing.location
                ),
            );
        }
    }
}

/// Structured functions and delegates (the `i`th function, `f`) belong to
/// a structured group. `delegate_ok`: its delegate, if any, was found
/// structured ([`check_delegate`] reported it otherwise).
fn check_grouped(
    report: &mut Report<'_>,
    functions: &NativeFunctions,
    i: usize,
    f: &NativeFunction,
    delegate_ok: bool,
) {
    let grouped = functions.pre_group_slots(i).is_some_and(|s| {
        s.is_group() && [s.functional, s.inplace, s.mutable, s.out].contains(&Some(i))
    });
    if grouped {
        return;
    }
    let name = f.name();
    // A structured function that is not an out variant is reported where
    // it is read.
    if f.structured && f.kind == SchemaKind::Out {
        report.error(
            f,
            format!("{name} is structured, but there was no valid functional variant of it (a function with the same signature and no out arguments)."),
        );
    }
    if f.structured_delegate.is_some() && delegate_ok {
        report.error(
            f,
            format!("{name} delegates to another structured out function, but no valid function was found (the delegate may not exist, or it has the wrong type)"),
        );
    }
}

/// A group's variants are all structured (or delegates) or none is; a
/// structured group has no composite kernel, and its functional and
/// in-place variants delegate to its out variant.
fn check_group(report: &mut Report<'_>, functions: &NativeFunctions, g: &NativeFunctionsGroup<'_>) {
    let structured = g.structured();
    for f in g.functions() {
        // A delegate to a missing or unstructured function is reported by
        // `check_delegate`.
        let bad_delegate = f.structured_delegate.as_ref().is_some_and(|d| {
            !functions
                .by_operator_name(d)
                .is_some_and(|target| target.structured)
        });
        if f.part_of_structured_group() != structured && !bad_delegate {
            report.error(
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
        return;
    }
    if g.out
        .kernel(DispatchKey::CompositeImplicitAutograd)
        .is_some()
        || g.out
            .kernel(DispatchKey::CompositeImplicitAutogradNestedTensor)
            .is_some()
    {
        report.error(
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
            Some(d) => report.error(
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
