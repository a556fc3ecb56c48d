//! The rules that tie several keys of one entry together: those of
//! torchgen's `NativeFunction.from_yaml` around `dispatch:` (with the
//! implied `CompositeImplicitAutograd` entry of a function without one) and
//! those of `NativeFunction.__post_init__`.

use c10_core::DispatchKey;

use super::fields::{Checker, Fields};
use crate::arguments::SchemaKind;
use crate::dispatch::{
    DispatchEntry, COMPOSITE_KEYS, STRUCTURED_DISPATCH_KEYS, UFUNC_DISPATCH_KEYS,
};
use crate::native_function::{DeviceCheckType, NativeFunction, Variant, Variants};

/// Checks `dispatch` (the explicit entries) against the function's other
/// keys and returns the function's entries: `dispatch`, or for a function
/// without `dispatch:` that is neither structured nor delegating, the
/// implied `CompositeImplicitAutograd` entry named after it. `factory` says
/// whether the function is a factory (`TensorOptions` and no tensor).
pub(super) fn complete_dispatch(
    c: &mut Checker<'_>,
    f: &NativeFunction,
    fields: &Fields<'_, '_>,
    mut dispatch: Vec<DispatchEntry>,
    factory: bool,
) -> Vec<DispatchEntry> {
    let func_line = f.location.line();
    let dispatch_field = fields.get("dispatch");
    let cpp_name = f.cpp_name();
    if let Some(d) = dispatch_field {
        if f.manual_kernel_registration {
            c.error(
                d.line,
                "cannot specify both manual_kernel_registration and dispatch; with manual registration, dispatch has no effect!",
            );
        }
        if let [only] = dispatch.as_slice() {
            if only.key == DispatchKey::CompositeImplicitAutograd {
                let written = match &only.kernel_namespace {
                    Some(ns) => format!("{ns}::{}", only.kernel),
                    None => only.kernel.clone(),
                };
                if written == cpp_name {
                    c.error(
                        d.line,
                        "unnecessary dispatch table for this function; just delete the dispatch key entirely",
                    );
                } else if f.structured_delegate.is_none() && !only.kernel.contains("_symint") {
                    c.error(
                        d.line,
                        format!(
                            "unexpected name for singleton CompositeImplicitAutograd dispatch entry: expected {cpp_name} but got {}. Rename your implementation to the expected name, then delete the dispatch table",
                            only.kernel
                        ),
                    );
                }
            }
        }
    } else if !f.structured && f.structured_delegate.is_none() {
        let name = f.base_name.to_string();
        if name.starts_with("new_") || name.ends_with("_like") || factory {
            c.error(
                func_line,
                format!(
                    "expected {name} to have a CompositeExplicitAutograd dispatch entry, but there was no dispatch table. Factory functions should not have implicit dispatch as they should not be decomposed for __torch_dispatch__"
                ),
            );
        }
        dispatch.push(DispatchEntry::new(
            DispatchKey::CompositeImplicitAutograd,
            cpp_name.clone(),
            None,
            f.location.clone(),
            true,
        ));
    }
    let composites: Vec<DispatchKey> = COMPOSITE_KEYS
        .into_iter()
        .filter(|k| dispatch.iter().any(|e| e.key == *k))
        .collect();
    let composites_ok = composites.len() <= 1
        || (composites.len() == 2
            && !composites.contains(&DispatchKey::CompositeExplicitAutogradNonFunctional)
            && composites.contains(&DispatchKey::CompositeImplicitAutogradNestedTensor));
    if !composites_ok {
        c.error(
            dispatch_field.map_or(func_line, |d| d.line),
            "cannot specify more than one of CompositeExplicitAutograd, CompositeExplicitAutogradNonFunctional, or CompositeImplicitAutograd on a single kernel; each strictly subsumes the other. If you wanted to provide an explicit autograd implementation, specify CompositeExplicitAutograd; otherwise specify CompositeImplicitAutograd only",
        );
    }
    if let Some(u) = fields.get("ufunc_inner_loop") {
        if !f.structured {
            c.error(u.line, "ufunc must be structured");
        }
        for key in UFUNC_DISPATCH_KEYS {
            if let Some(e) = dispatch.iter().find(|e| e.key == key && !e.implicit) {
                c.error(
                    e.location.line(),
                    format!("ufunc should not have explicit dispatch entry for {key}"),
                );
            }
        }
    }
    if f.structured_delegate.is_some() {
        for key in STRUCTURED_DISPATCH_KEYS {
            if let Some(e) = dispatch.iter().find(|e| e.key == key) {
                c.error(
                    e.location.line(),
                    format!("if structured_delegate, then must not have {key} in dispatch dictionary (it is delegated!)"),
                );
            }
        }
    }
    dispatch
}

/// The rules of torchgen's `NativeFunction.__post_init__`. `random` says
/// whether the function must be tagged `nondeterministic_seeded`.
pub(super) fn check_post_init(
    c: &mut Checker<'_>,
    f: &NativeFunction,
    fields: &Fields<'_, '_>,
    random: bool,
) {
    let func_line = f.location.line();
    if f.is_out_fn() && f.variants != Variants::FUNCTION {
        c.error(
            fields.get("variants").map_or(func_line, |v| v.line),
            "Native functions with out arguments MUST be declared with only function variant; e.g., variants: function; otherwise you will tickle a Python argument binding bug (which usually manifests itself as the result variable being undefined.)",
        );
    }
    let structured_line = fields.get("structured").map_or(func_line, |s| s.line);
    if f.structured {
        if f.kind != SchemaKind::Out {
            c.error(
                structured_line,
                "Put structured field on the out= variant of a function; did you mean structured_delegate?",
            );
        }
        if !f.device_guard {
            c.error(
                structured_line,
                "device_guard: False is not respected by structured kernels",
            );
        }
    }
    if let (Some(_), Some(d)) = (&f.structured_delegate, fields.get("structured_delegate")) {
        if f.kind == SchemaKind::Out {
            c.error(
                d.line,
                "structured_delegate field not allowed on out= functions; did you mean structured?",
            );
        }
        if !f.device_guard {
            c.error(
                d.line,
                "device_guard: False is not respected by structured kernels",
            );
        }
        if f.structured {
            c.error(
                d.line,
                "Cannot have both structured and structured_delegate on function",
            );
        }
    }
    if let (Some(_), Some(i)) = (&f.structured_inherits, fields.get("structured_inherits")) {
        if !f.structured {
            c.error(
                i.line,
                "structured_inherits must also imply structured: True",
            );
        }
    }
    if let (Some(_), Some(p)) = (&f.python_module, fields.get("python_module")) {
        if f.variants.contains(Variant::Method) {
            c.error(p.line, "functions in modules cannot be methods");
        }
    }
    if f.func.name().starts_with("_foreach") && f.device_check != DeviceCheckType::NoCheck {
        c.error(
            func_line,
            "foreach kernels fall back to slow path when tensor are on different devices, device_check not allowed to be enabled",
        );
    }
    if random && !f.has_tag("nondeterministic_seeded") {
        c.error(
            func_line,
            format!(
                "{} must have the tag nondeterministic_seeded (its name says rand or dropout, or it takes a Generator)",
                f.func.operator_name()
            ),
        );
    }
}
