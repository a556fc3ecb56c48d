//! The values of the keys other than `func:`, each read and checked on its
//! own; the rules that tie several keys together are in `rules`.

use aten_boxing::schema::{FunctionSchema, OperatorName};

use super::fields::{Checker, Field, Fields};
use crate::dispatch::{parse_dispatch_key, parse_kernel_name, DispatchEntry};
use crate::native_function::{DeviceCheckType, Variant, Variants};
use crate::operator_name::parse_operator_name;
use crate::precompute::Precompute;
use crate::tags::Tags;
use crate::ufunc::{UfuncInnerLoop, UfuncKey};

/// The values of an entry's keys other than `func:` (defaults where a key
/// is absent or wrong).
pub(super) struct Keys {
    pub(super) use_const_ref_for_mutable_tensors: bool,
    pub(super) manual_kernel_registration: bool,
    pub(super) manual_cpp_binding: bool,
    pub(super) device_guard: bool,
    pub(super) structured: bool,
    pub(super) python_module: Option<String>,
    pub(super) category_override: Option<String>,
    pub(super) variants: Variants,
    pub(super) device_check: DeviceCheckType,
    pub(super) structured_delegate: Option<OperatorName>,
    pub(super) structured_inherits: Option<String>,
    pub(super) precomputed: Option<Precompute>,
    pub(super) tags: Vec<String>,
    pub(super) cpp_no_default_args: Vec<String>,
    pub(super) autogen: Vec<OperatorName>,
    pub(super) ufunc_inner_loop: Vec<UfuncInnerLoop>,
    /// The explicit entries of `dispatch:`.
    pub(super) dispatch: Vec<DispatchEntry>,
}

/// Reads every key but `func:`, in the order problems are reported.
/// `func` is the entry's schema; `tags` is `None` when tag names are not to
/// be checked.
pub(super) fn parse_keys(
    c: &mut Checker<'_>,
    fields: &Fields<'_, '_>,
    func: &FunctionSchema,
    tags: Option<&Tags>,
) -> Keys {
    // Plain flags and strings.
    let use_const_ref_for_mutable_tensors = c.bool(
        fields.get("use_const_ref_for_mutable_tensors"),
        "use_const_ref_for_mutable_tensors",
        false,
    );
    let manual_kernel_registration = c.bool(
        fields.get("manual_kernel_registration"),
        "manual_kernel_registration",
        false,
    );
    let manual_cpp_binding = c.bool(
        fields.get("manual_cpp_binding"),
        "manual_cpp_binding",
        false,
    );
    let device_guard = c.bool(fields.get("device_guard"), "device_guard", true);
    let structured = c.bool(fields.get("structured"), "structured", false);
    let python_module = c
        .string(fields.get("python_module"), "python_module")
        .map(|(s, _)| s);
    let category_override = c
        .string(fields.get("category_override"), "category_override")
        .map(|(s, _)| s);
    let variants = parse_variants(c, fields.get("variants"));
    let device_check = parse_device_check(c, fields.get("device_check"));
    let structured_delegate = parse_structured_delegate(c, fields.get("structured_delegate"));
    let structured_inherits = parse_structured_inherits(c, fields.get("structured_inherits"));
    let precomputed_field = fields.get("precomputed");
    let precomputed = precomputed_field.and_then(|f| parse_precomputed(c, f, func));
    if let Some(f) = precomputed_field {
        if !structured {
            c.error(f.line, "'precomputed' requires 'structured: True'");
        }
    }
    let tags = fields
        .get("tags")
        .map(|f| parse_tags(c, f, tags))
        .unwrap_or_default();
    let cpp_no_default_args = fields
        .get("cpp_no_default_args")
        .map(|f| parse_cpp_no_default_args(c, f, func))
        .unwrap_or_default();
    let autogen = parse_autogen(c, fields.get("autogen"));
    let ufunc_inner_loop = fields
        .get("ufunc_inner_loop")
        .map(|f| parse_ufunc(c, f))
        .unwrap_or_default();
    let dispatch = fields
        .get("dispatch")
        .map(|f| parse_dispatch(c, f))
        .unwrap_or_default();
    Keys {
        use_const_ref_for_mutable_tensors,
        manual_kernel_registration,
        manual_cpp_binding,
        device_guard,
        structured,
        python_module,
        category_override,
        variants,
        device_check,
        structured_delegate,
        structured_inherits,
        precomputed,
        tags,
        cpp_no_default_args,
        autogen,
        ufunc_inner_loop,
        dispatch,
    }
}

/// `variants:`, a comma-separated list of `function` and `method`.
fn parse_variants(c: &mut Checker<'_>, field: Option<Field<'_, '_>>) -> Variants {
    let Some((text, line)) = c.string(field, "variants") else {
        return Variants::default();
    };
    let mut v = Variants::NONE;
    for part in text.split(',').map(str::trim) {
        match part {
            "function" => v = v.with(Variant::Function),
            "method" => v = v.with(Variant::Method),
            other => c.error(
                line,
                format!("illegal variant '{other}' (expected 'function' and/or 'method')"),
            ),
        }
    }
    if v == Variants::NONE {
        Variants::default()
    } else {
        v
    }
}

/// `device_check:`, `NoCheck` or `ExactSame`.
fn parse_device_check(c: &mut Checker<'_>, field: Option<Field<'_, '_>>) -> DeviceCheckType {
    match c.string(field, "device_check") {
        None => DeviceCheckType::default(),
        Some((text, line)) => match text.as_str() {
            "NoCheck" => DeviceCheckType::NoCheck,
            "ExactSame" => DeviceCheckType::ExactSame,
            other => {
                c.error(
                    line,
                    format!("illegal device_check '{other}' (expected NoCheck or ExactSame)"),
                );
                DeviceCheckType::default()
            }
        },
    }
}

/// `structured_delegate:`, an operator name.
fn parse_structured_delegate(
    c: &mut Checker<'_>,
    field: Option<Field<'_, '_>>,
) -> Option<OperatorName> {
    let (text, line) = c.string(field, "structured_delegate")?;
    match parse_operator_name(&text) {
        Ok(name) => Some(name),
        Err(message) => {
            c.error(line, format!("bad structured_delegate: {message}"));
            None
        }
    }
}

/// `structured_inherits:`, a class name without namespace.
fn parse_structured_inherits(c: &mut Checker<'_>, field: Option<Field<'_, '_>>) -> Option<String> {
    let (text, line) = c.string(field, "structured_inherits")?;
    if text.contains("::") {
        c.error(
            line,
            "a namespace is not supported in structured_inherits; the function's own namespace is used",
        );
        None
    } else {
        Some(text)
    }
}

/// `precomputed:`, whose replaced arguments must be arguments of `func`.
fn parse_precomputed(
    c: &mut Checker<'_>,
    f: Field<'_, '_>,
    func: &FunctionSchema,
) -> Option<Precompute> {
    let lines = c.strings(f, "precomputed")?;
    let texts: Vec<&str> = lines.iter().map(|(s, _)| *s).collect();
    match Precompute::parse(&texts) {
        Ok(p) => {
            for (arg, _) in &p.replace {
                if !func.arguments().iter().any(|a| a.name() == arg) {
                    c.error(
                        f.line,
                        format!(
                            "precomputed replaces '{arg}', which is not an argument of {}",
                            func.operator_name()
                        ),
                    );
                }
            }
            Some(p)
        }
        Err(message) => {
            c.error(f.line, message);
            None
        }
    }
}

/// `tags:`, one name or a list, each known to `tags.yaml` (when `known` is
/// given), without repeats.
fn parse_tags(c: &mut Checker<'_>, f: Field<'_, '_>, known: Option<&Tags>) -> Vec<String> {
    let mut tag_names: Vec<String> = Vec::new();
    let listed: Option<Vec<(&str, u32)>> = match f.value.as_str() {
        Some(one) => Some(vec![(one, f.value.line())]),
        None => c.strings(f, "tags"),
    };
    for (name, line) in listed.unwrap_or_default() {
        if let Some(known) = known {
            if !known.contains(name) {
                c.error(line, format!("unknown tag '{name}' (not in tags.yaml)"));
                continue;
            }
        }
        if !tag_names.iter().any(|t| t == name) {
            tag_names.push(name.to_string());
        }
    }
    tag_names
}

/// `cpp_no_default_args:`, arguments of `func` that have defaults.
fn parse_cpp_no_default_args(
    c: &mut Checker<'_>,
    f: Field<'_, '_>,
    func: &FunctionSchema,
) -> Vec<String> {
    let mut cpp_no_default_args = Vec::new();
    for (name, line) in c.strings(f, "cpp_no_default_args").unwrap_or_default() {
        let defaulted = func
            .arguments()
            .iter()
            .any(|a| a.name() == name && a.default_value().is_some());
        if !defaulted {
            c.error(
                line,
                format!("invalid cpp_no_default_args: '{name}' is not an argument with a default"),
            );
        }
        cpp_no_default_args.push(name.to_string());
    }
    cpp_no_default_args
}

/// `autogen:`, a comma-separated list of operator names.
fn parse_autogen(c: &mut Checker<'_>, field: Option<Field<'_, '_>>) -> Vec<OperatorName> {
    let mut autogen = Vec::new();
    if let Some((text, line)) = c.string(field, "autogen") {
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match parse_operator_name(part) {
                Ok(name) => autogen.push(name),
                Err(message) => c.error(line, format!("bad autogen entry: {message}")),
            }
        }
    }
    autogen
}

/// `ufunc_inner_loop:` as one loop or a mapping of keys to loops.
fn parse_ufunc(c: &mut Checker<'_>, f: Field<'_, '_>) -> Vec<UfuncInnerLoop> {
    if let Some(text) = f.value.as_str() {
        return match UfuncInnerLoop::parse(text, UfuncKey::Generic) {
            Ok(l) => vec![l],
            Err(message) => {
                c.error(f.line, message);
                Vec::new()
            }
        };
    }
    let Some(entries) = f.value.as_mapping() else {
        c.error(
            f.line,
            format!(
                "ufunc_inner_loop must be a string or a mapping, found {}",
                f.value.describe()
            ),
        );
        return Vec::new();
    };
    let mut loops: Vec<UfuncInnerLoop> = Vec::new();
    for (k, v) in entries {
        let Some(key) = k.as_str() else {
            c.error(
                k.line(),
                format!("expected a ufunc key, found {}", k.describe()),
            );
            continue;
        };
        let Some(ufunc_key) = UfuncKey::parse(key) else {
            c.error(k.line(), format!("unknown ufunc key '{key}'"));
            continue;
        };
        if loops.iter().any(|l| l.ufunc_key == ufunc_key) {
            c.error(k.line(), format!("duplicate ufunc key '{key}'"));
            continue;
        }
        let Some(text) = v.as_str() else {
            c.error(
                k.line(),
                format!(
                    "ufunc_inner_loop value must be a string, found {}",
                    v.describe()
                ),
            );
            continue;
        };
        match UfuncInnerLoop::parse(text, ufunc_key) {
            Ok(l) => loops.push(l),
            Err(message) => c.error(k.line(), message),
        }
    }
    loops.sort_by_key(|l| l.ufunc_key);
    loops
}

/// `dispatch:`, one entry per key.
fn parse_dispatch(c: &mut Checker<'_>, f: Field<'_, '_>) -> Vec<DispatchEntry> {
    let Some(entries) = f.value.as_mapping() else {
        c.error(
            f.line,
            format!(
                "'dispatch' must be a mapping of dispatch keys to kernels, found {}",
                f.value.describe()
            ),
        );
        return Vec::new();
    };
    let mut out: Vec<DispatchEntry> = Vec::new();
    for (k, v) in entries {
        let line = k.line();
        let Some(keys) = k.as_str() else {
            c.error(
                line,
                format!("expected dispatch keys, found {}", k.describe()),
            );
            continue;
        };
        let kernel = match v.as_str() {
            Some(text) => match parse_kernel_name(text) {
                Ok(kn) => Some(kn),
                Err(message) => {
                    c.error(line, message);
                    None
                }
            },
            None => {
                c.error(
                    line,
                    format!(
                        "the kernel for '{keys}' must be a name, found {}",
                        v.describe()
                    ),
                );
                None
            }
        };
        for name in keys.split(',').map(str::trim) {
            let key = match parse_dispatch_key(name) {
                Ok(key) => key,
                Err(message) => {
                    c.error(line, message);
                    continue;
                }
            };
            if let Some(first) = out.iter().find(|e| e.key == key) {
                let first_line = first.location.line();
                c.error(
                    line,
                    format!("dispatch key '{name}' appears twice (first at line {first_line})"),
                );
                continue;
            }
            if let Some((ns, kernel)) = &kernel {
                out.push(DispatchEntry::new(
                    key,
                    kernel.clone(),
                    ns.clone(),
                    c.file.at_line(line),
                    false,
                ));
            }
        }
    }
    out
}
