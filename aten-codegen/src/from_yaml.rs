//! One `native_functions.yaml` entry to a [`NativeFunction`], with every
//! check that needs only that entry (torchgen's `NativeFunction.from_yaml`,
//! `NativeFunction.__post_init__` and the schema checks of
//! `FunctionSchema.__post_init__`).
//!
//! Problems are collected, not returned one at a time: an entry with a
//! schema that parses yields a function even when some keys are wrong (with
//! their defaults), so that one run reports everything; an entry whose
//! `func` is missing or does not parse yields none.

use aten_boxing::schema::{Argument, FunctionSchema, Type};
use c10_core::DispatchKey;

use crate::arguments::{Arguments, SchemaKind};
use crate::dispatch::{
    parse_dispatch_key, parse_kernel_name, DispatchEntry, COMPOSITE_KEYS, STRUCTURED_DISPATCH_KEYS,
    UFUNC_DISPATCH_KEYS,
};
use crate::error::{Location, YamlError};
use crate::native_function::{DeviceCheckType, NativeFunction, Variant, Variants};
use crate::operator_name::{parse_operator_name, BaseOperatorName};
use crate::precompute::Precompute;
use crate::tags::Tags;
use crate::ufunc::{UfuncInnerLoop, UfuncKey};
use crate::yaml_loader::Node;

/// The keys an entry may have, as PyTorch's torchgen knows them.
pub const NATIVE_FUNCTION_KEYS: [&str; 18] = [
    "func",
    "variants",
    "dispatch",
    "structured",
    "structured_delegate",
    "structured_inherits",
    "precomputed",
    "autogen",
    "tags",
    "device_check",
    "device_guard",
    "manual_cpp_binding",
    "manual_kernel_registration",
    "python_module",
    "category_override",
    "cpp_no_default_args",
    "ufunc_inner_loop",
    "use_const_ref_for_mutable_tensors",
];

/// The value of one key and the line of the key.
#[derive(Clone, Copy)]
struct Field<'n, 'a> {
    line: u32,
    value: &'n Node<'a>,
}

/// Collects the problems of one entry.
struct Checker<'e> {
    file: &'e Location,
    errors: &'e mut Vec<YamlError>,
}

impl Checker<'_> {
    fn error(&mut self, line: u32, message: impl Into<String>) {
        self.errors
            .push(YamlError::new(self.file.at_line(line), message));
    }

    fn bool(&mut self, field: Option<Field<'_, '_>>, key: &str, default: bool) -> bool {
        let Some(f) = field else { return default };
        match f.value.as_bool() {
            Some(b) => b,
            None => {
                self.error(
                    f.line,
                    format!(
                        "'{key}' must be True or False, found {}",
                        f.value.describe()
                    ),
                );
                default
            }
        }
    }

    fn string(&mut self, field: Option<Field<'_, '_>>, key: &str) -> Option<(String, u32)> {
        let f = field?;
        match f.value.as_str() {
            Some(s) => Some((s.to_string(), f.line)),
            None => {
                self.error(
                    f.line,
                    format!("'{key}' must be a string, found {}", f.value.describe()),
                );
                None
            }
        }
    }

    /// A sequence of strings, each with its line.
    fn strings<'n>(&mut self, f: Field<'n, '_>, key: &str) -> Option<Vec<(&'n str, u32)>> {
        let Some(items) = f.value.as_sequence() else {
            self.error(
                f.line,
                format!(
                    "'{key}' must be a list of strings, found {}",
                    f.value.describe()
                ),
            );
            return None;
        };
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            match item.as_str() {
                Some(s) => out.push((s, item.line())),
                None => {
                    self.error(
                        item.line(),
                        format!(
                            "'{key}' must be a list of strings, found {} in it",
                            item.describe()
                        ),
                    );
                    return None;
                }
            }
        }
        Some(out)
    }
}

/// The entry's keys, found.
#[derive(Default)]
struct Fields<'n, 'a> {
    slots: [Option<Field<'n, 'a>>; NATIVE_FUNCTION_KEYS.len()],
}

impl<'n, 'a> Fields<'n, 'a> {
    fn get(&self, key: &str) -> Option<Field<'n, 'a>> {
        let i = NATIVE_FUNCTION_KEYS.iter().position(|k| *k == key)?;
        self.slots[i]
    }
}

/// Splits `ns::` off a `func:` text. Only one level of namespace is allowed.
fn split_namespace(text: &str) -> Result<(Option<&str>, &str), String> {
    let name_end = text.find('(').unwrap_or(text.len());
    let name = &text[..name_end];
    match name.split_once("::") {
        None => Ok((None, text)),
        Some((ns, rest)) if !rest.contains("::") && !ns.trim().is_empty() => {
            Ok((Some(ns.trim()), &text[ns.len() + 2..]))
        }
        Some(_) => Err(format!(
            "'func' name '{}' has more than one level of namespace",
            name.trim()
        )),
    }
}

/// The schema parser's message on one line. PyTorch's messages end with
/// the source and a `~~~ <--- HERE` marker under the fault; that becomes
/// `at column N of func: 'TOKEN'` (columns 1-based, counted in the `func:`
/// text, whose first `offset` bytes were not given to the parser).
fn condense_parser_message(message: &str, offset: usize) -> String {
    let lines: Vec<&str> = message.lines().collect();
    let marker = lines.iter().position(|l| l.contains("<--- HERE"));
    let (text, at) = match marker {
        Some(k) if k >= 1 => {
            let source = lines[k - 1];
            let caret = lines[k];
            let at = caret.find('~').map(|col| {
                let len = caret[col..].chars().take_while(|&c| c == '~').count();
                let token = source.get(col..col + len).unwrap_or("");
                format!(" at column {} of func: '{token}'", offset + col + 1)
            });
            (lines[..k - 1].join(" "), at)
        }
        _ => (lines.join(" "), None),
    };
    let text = text.trim();
    let text = text
        .strip_suffix(" here:")
        .or_else(|| text.strip_suffix(':'))
        .unwrap_or(text)
        .trim_end();
    format!("{text}{}", at.unwrap_or_default())
}

/// Parses and checks one entry; `tags` is `None` when tag names are not to
/// be checked.
pub(crate) fn parse_native_function(
    entry: &Node<'_>,
    file: &Location,
    tags: Option<&Tags>,
    errors: &mut Vec<YamlError>,
) -> Option<NativeFunction> {
    let mut c = Checker { file, errors };
    let Some(mapping) = entry.as_mapping() else {
        c.error(
            entry.line(),
            format!(
                "expected a function entry (a mapping), found {}",
                entry.describe()
            ),
        );
        return None;
    };
    let mut fields = Fields::default();
    for (key, value) in mapping {
        let Some(name) = key.as_str() else {
            c.error(
                key.line(),
                format!("expected a string key, found {}", key.describe()),
            );
            continue;
        };
        match NATIVE_FUNCTION_KEYS.iter().position(|k| *k == name) {
            Some(i) if fields.slots[i].is_some() => {
                c.error(key.line(), format!("duplicate key '{name}'"));
            }
            Some(i) => {
                fields.slots[i] = Some(Field {
                    line: key.line(),
                    value,
                });
            }
            None => c.error(key.line(), format!("unknown key '{name}'")),
        }
    }

    // func
    let Some(func_field) = fields.get("func") else {
        c.error(entry.line(), "function entry without 'func'");
        return None;
    };
    let func_line = func_field.line;
    let (func_text, _) = c.string(Some(func_field), "func")?;
    let parsed = split_namespace(&func_text).and_then(|(ns, schema_text)| {
        let offset = func_text.len() - schema_text.len();
        let schema = FunctionSchema::parse(schema_text).map_err(|e| {
            format!(
                "could not parse func: {}",
                condense_parser_message(e.message(), offset)
            )
        })?;
        Ok((ns.unwrap_or("aten").to_string(), schema))
    });
    let (namespace, func) = match parsed {
        Ok(p) => p,
        Err(message) => {
            c.error(func_line, message);
            return None;
        }
    };
    let base_name = match BaseOperatorName::parse(func.name()) {
        Ok(b) => b,
        Err(message) => {
            c.error(func_line, message);
            return None;
        }
    };
    if func.is_vararg() || func.is_varret() {
        c.error(func_line, "native functions cannot take or return '...'");
    }
    let args = Arguments::new(&func);
    let out_last = args.check();
    if let Err(message) = &out_last {
        c.error(func_line, message.clone());
    }
    let kind = match args.kind(&base_name) {
        Ok(k) => k,
        Err(message) => {
            c.error(func_line, message);
            SchemaKind::Out
        }
    };
    if out_last.is_ok() {
        check_schema(&mut c, func_line, &func, &base_name, &args, kind);
    }
    let factory = args.tensor_options().is_some() && !args.has_tensor_arg();
    let random = is_random(&func, &args);

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
    let python_module = c.string(fields.get("python_module"), "python_module");
    let category_override = c
        .string(fields.get("category_override"), "category_override")
        .map(|(s, _)| s);

    // variants
    let variants_field = fields.get("variants");
    let variants = match c.string(variants_field, "variants") {
        None => Variants::default(),
        Some((text, line)) => {
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
    };

    // device_check
    let device_check = match c.string(fields.get("device_check"), "device_check") {
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
    };

    // structured_delegate, structured_inherits
    let delegate_field = fields.get("structured_delegate");
    let structured_delegate =
        c.string(delegate_field, "structured_delegate")
            .and_then(|(text, line)| match parse_operator_name(&text) {
                Ok(name) => Some(name),
                Err(message) => {
                    c.error(line, format!("bad structured_delegate: {message}"));
                    None
                }
            });
    let inherits_field = fields.get("structured_inherits");
    let structured_inherits = c
        .string(inherits_field, "structured_inherits")
        .and_then(|(text, line)| {
            if text.contains("::") {
                c.error(
                    line,
                    "a namespace is not supported in structured_inherits; the function's own namespace is used",
                );
                None
            } else {
                Some(text)
            }
        });

    // precomputed
    let precomputed_field = fields.get("precomputed");
    let precomputed = precomputed_field.and_then(|f| {
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
    });
    if let Some(f) = precomputed_field {
        if !structured {
            c.error(f.line, "'precomputed' requires 'structured: True'");
        }
    }

    // tags
    let mut tag_names: Vec<String> = Vec::new();
    if let Some(f) = fields.get("tags") {
        let listed: Option<Vec<(&str, u32)>> = match f.value.as_str() {
            Some(one) => Some(vec![(one, f.value.line())]),
            None => c.strings(f, "tags"),
        };
        for (name, line) in listed.unwrap_or_default() {
            if let Some(known) = tags {
                if !known.contains(name) {
                    c.error(line, format!("unknown tag '{name}' (not in tags.yaml)"));
                    continue;
                }
            }
            if !tag_names.iter().any(|t| t == name) {
                tag_names.push(name.to_string());
            }
        }
    }

    // cpp_no_default_args
    let mut cpp_no_default_args = Vec::new();
    if let Some(f) = fields.get("cpp_no_default_args") {
        for (name, line) in c.strings(f, "cpp_no_default_args").unwrap_or_default() {
            let defaulted = func
                .arguments()
                .iter()
                .any(|a| a.name() == name && a.default_value().is_some());
            if !defaulted {
                c.error(
                    line,
                    format!(
                        "invalid cpp_no_default_args: '{name}' is not an argument with a default"
                    ),
                );
            }
            cpp_no_default_args.push(name.to_string());
        }
    }

    // autogen
    let mut autogen = Vec::new();
    if let Some((text, line)) = c.string(fields.get("autogen"), "autogen") {
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match parse_operator_name(part) {
                Ok(name) => autogen.push(name),
                Err(message) => c.error(line, format!("bad autogen entry: {message}")),
            }
        }
    }

    // ufunc_inner_loop
    let ufunc_field = fields.get("ufunc_inner_loop");
    let ufunc_inner_loop = ufunc_field
        .map(|f| parse_ufunc(&mut c, f))
        .unwrap_or_default();

    // dispatch
    let dispatch_field = fields.get("dispatch");
    let mut dispatch = dispatch_field
        .map(|f| parse_dispatch(&mut c, f))
        .unwrap_or_default();

    let func_name = func.operator_name().clone();
    let mut f = NativeFunction {
        namespace,
        func,
        func_text,
        base_name,
        kind,
        location: file.at_line(func_line),
        variants,
        dispatch: Vec::new(),
        structured,
        structured_delegate,
        structured_inherits,
        precomputed,
        autogen,
        ufunc_inner_loop,
        tags: tag_names,
        device_check,
        device_guard,
        manual_cpp_binding,
        manual_kernel_registration,
        python_module: python_module.as_ref().map(|(s, _)| s.clone()),
        category_override,
        cpp_no_default_args,
        use_const_ref_for_mutable_tensors,
    };
    let cpp_name = f.cpp_name();

    // Rules across keys (from_yaml).
    if let Some(d) = dispatch_field {
        if manual_kernel_registration {
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
    } else if !structured && f.structured_delegate.is_none() {
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
            file.at_line(func_line),
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
    if let Some(u) = ufunc_field {
        if !structured {
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
    f.dispatch = dispatch;

    // Rules of NativeFunction.__post_init__.
    if f.is_out_fn() && f.variants != Variants::FUNCTION {
        c.error(
            variants_field.map_or(func_line, |v| v.line),
            "Native functions with out arguments MUST be declared with only function variant; e.g., variants: function; otherwise you will tickle a Python argument binding bug (which usually manifests itself as the result variable being undefined.)",
        );
    }
    let structured_line = fields.get("structured").map_or(func_line, |s| s.line);
    if structured {
        if kind != SchemaKind::Out {
            c.error(
                structured_line,
                "Put structured field on the out= variant of a function; did you mean structured_delegate?",
            );
        }
        if !device_guard {
            c.error(
                structured_line,
                "device_guard: False is not respected by structured kernels",
            );
        }
    }
    if let (Some(_), Some(d)) = (&f.structured_delegate, delegate_field) {
        if kind == SchemaKind::Out {
            c.error(
                d.line,
                "structured_delegate field not allowed on out= functions; did you mean structured?",
            );
        }
        if !device_guard {
            c.error(
                d.line,
                "device_guard: False is not respected by structured kernels",
            );
        }
        if structured {
            c.error(
                d.line,
                "Cannot have both structured and structured_delegate on function",
            );
        }
    }
    if let (Some(_), Some(i)) = (&f.structured_inherits, inherits_field) {
        if !structured {
            c.error(
                i.line,
                "structured_inherits must also imply structured: True",
            );
        }
    }
    if let Some((_, line)) = &python_module {
        if f.variants.contains(Variant::Method) {
            c.error(*line, "functions in modules cannot be methods");
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
                "{func_name} must have the tag nondeterministic_seeded (its name says rand or dropout, or it takes a Generator)"
            ),
        );
    }
    Some(f)
}

/// torchgen's test for functions that must be tagged
/// `nondeterministic_seeded`: `rand` in the name, `dropout` in the name or
/// an argument name (backward functions and `_cudnn_init_dropout_state`
/// excepted), or a `Generator` argument. The `_philox_*` functions are
/// excepted too: they are deterministic functions of their `key` tensor,
/// and PyTorch 2.15 leaves `_philox_randint_` untagged.
fn is_random(func: &FunctionSchema, args: &Arguments<'_>) -> bool {
    let full = func.operator_name().to_string();
    if full.starts_with("_philox_") {
        return false;
    }
    let dropout = full.contains("dropout")
        || func
            .arguments()
            .iter()
            .any(|a| a.name().contains("dropout"));
    full.contains("rand")
        || (dropout && !full.contains("backward") && func.name() != "_cudnn_init_dropout_state")
        || args.has_generator_arg()
}

/// The schema rules of torchgen's `FunctionSchema.__post_init__`.
fn check_schema(
    c: &mut Checker<'_>,
    line: u32,
    func: &FunctionSchema,
    base_name: &BaseOperatorName,
    args: &Arguments<'_>,
    kind: SchemaKind,
) {
    let returns = func.returns();
    for (arg, ret) in args.out().iter().zip(returns) {
        if arg.alias_info() != ret.alias_info() {
            c.error(
                line,
                "Out arguments must have matching return Tensor; furthermore, the ith-argument needs to correspond to the ith return",
            );
            break;
        }
    }
    let returned = |a: &Argument| returns.iter().any(|r| r.alias_info() == a.alias_info());
    if args
        .post_self_positional()
        .iter()
        .any(|a| a.is_write() && returned(a))
    {
        c.error(
            line,
            format!("If you have a schema with mutable positional args, we expect them to not be returned. schema: {func}"),
        );
    }
    let mutable_returns = returns.iter().filter(|r| r.is_write()).count();
    if mutable_returns > 0 && mutable_returns < returns.len() {
        c.error(
            line,
            format!("NativeFunctions must have either only mutable returns, or only immutable returns. Found: {func}"),
        );
    }
    let out_or_self: Vec<&Argument> = args.out().iter().chain(args.self_arg()).collect();
    if returns
        .iter()
        .filter(|r| r.is_write())
        .any(|r| !out_or_self.iter().any(|a| a.alias_info() == r.alias_info()))
    {
        c.error(
            line,
            "All mutable returns must be aliased either to a keyword argument, or to \"self\". Did you forget to mark an out argument as keyword-only?",
        );
    }
    if !args.out().is_empty() {
        if args.out().iter().any(|a| *a.real_type() != Type::Tensor) {
            if !returns.is_empty() {
                c.error(
                    line,
                    "out= ops that accept tensor lists as out arguments are expected to have no return type (since you can't do method chaining on them)",
                );
            }
        } else {
            let counted = args
                .out()
                .iter()
                .filter(|a| !a.name().starts_with("_scratch_"))
                .count();
            if counted != returns.len() {
                c.error(
                    line,
                    "Must return as many arguments as there are out arguments, or no return at all",
                );
            }
        }
    }
    if base_name.is_inplace() {
        match args.self_arg() {
            Some(s) if s.is_write() => {
                if *s.real_type() == Type::Tensor {
                    if !(returns.len() == 1 && returns[0].alias_info() == s.alias_info()) {
                        c.error(
                            line,
                            "in-place functions with a Tensor self must return self (Tensor(a!))",
                        );
                    }
                } else if !returns.is_empty() {
                    c.error(
                        line,
                        "in-place functions whose self is not a Tensor must return nothing",
                    );
                }
            }
            _ => c.error(
                line,
                "in-place functions (name ending in '_') must take a mutable self argument (Tensor(a!) self)",
            ),
        }
    }
    if args.tensor_options().is_some() && kind != SchemaKind::Functional {
        c.error(
            line,
            format!("Found an operator that is not functional or out variant, but has tensor options arguments. This is not allowed- tensor options arguments are only allowed for factory functions. schema: {func}"),
        );
    }
    if func.overload_name().contains("functional") && kind != SchemaKind::Functional {
        c.error(
            line,
            format!("Found an operator that is not functional, but its overload contains the string 'functional'. This is a special keyword in the codegen, please use a different overload name. schema: {func}"),
        );
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parser_messages_on_one_line() {
        let e = FunctionSchema::parse("f(Tensor self, int x=) -> Tensor").unwrap_err();
        assert_eq!(
            condense_parser_message(e.message(), 0),
            "expected number but found ')' at column 22 of func: ')'"
        );
        let e = FunctionSchema::parse("f(Tensr self) -> Tensor").unwrap_err();
        let m = condense_parser_message(e.message(), 6);
        assert!(m.starts_with("unknown type specifier."), "{m}");
        assert!(m.ends_with(" at column 9 of func: 'Tensr'"), "{m}");
        assert_eq!(condense_parser_message("plain", 0), "plain");
    }

    #[test]
    fn namespaces() {
        assert_eq!(split_namespace("f() -> ()"), Ok((None, "f() -> ()")));
        assert_eq!(
            split_namespace("quantized::f() -> ()"),
            Ok((Some("quantized"), "f() -> ()"))
        );
        assert!(split_namespace("a::b::f() -> ()").is_err());
    }
}
