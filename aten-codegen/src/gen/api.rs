//! The typed operator API: one Rust function per operator overload, holding
//! its typed dispatcher handle in a `static`, and `Tensor` methods for
//! `variants: method`.
//!
//! Arguments without defaults are positional parameters. When an operator
//! has arguments with defaults, `name(...)` uses the defaults and
//! `name_with(..., NameOptions { .. })` takes them from an options struct
//! (`NameOptions::default()` holds the schema's defaults).

use std::fmt::Write;

use aten_boxing::schema::{Argument, FunctionSchema};

use super::names::{camel, function_name, ident, with_suffix};
use super::rust_types::{argument_type, default_expr, field_type, returns_type, static_type};

/// Method names that would shadow a trait method every Rust reader relies
/// on (`Tensor::clone` stays the cheap handle clone); these operators are
/// functions only.
const RESERVED_METHODS: &[&str] = &[
    "clone", "eq", "ne", "lt", "le", "gt", "ge", "cmp", "hash", "fmt",
];

/// One argument as the API passes it.
struct ApiArg {
    name: String,
    rust_type: String,
    default: Option<String>,
}

/// The rendered API of one operator overload.
pub struct ApiFunction {
    /// The function name (`add_tensor`).
    pub name: String,
    /// The free functions (and options struct).
    pub code: String,
    /// The `impl Tensor` methods, if it is a method.
    pub method: Option<String>,
}

fn api_args(args: &[Argument]) -> Result<Vec<ApiArg>, String> {
    args.iter()
        .map(|a| {
            Ok(ApiArg {
                name: ident(a.name()),
                rust_type: argument_type(a)?,
                default: default_expr(a),
            })
        })
        .collect()
}

/// Renders the API of `schema`. `method` asks for `Tensor` methods (the
/// schema must have a `Tensor self` argument).
pub fn render(schema: &FunctionSchema, method: bool) -> Result<ApiFunction, String> {
    let base = schema
        .name()
        .rsplit("::")
        .next()
        .unwrap_or(schema.name())
        .to_string();
    let name = function_name(&base, schema.overload_name());
    let args = api_args(schema.arguments())?;
    let ret = returns_type(schema.returns())?;
    // Defaults only count from the first defaulted argument on, so that the
    // required ones stay in schema order.
    let first_default = args
        .iter()
        .rposition(|a| a.default.is_none())
        .map_or(0, |i| i + 1);
    let (required, defaulted) = args.split_at(first_default);
    let static_args: Vec<String> = args.iter().map(|a| static_type(&a.rust_type)).collect();
    let handle_type = format!(
        "TypedOperatorHandle<({}), {ret}>",
        static_args
            .iter()
            .map(|t| format!("{t},"))
            .collect::<String>()
    );
    let doc = format!("/// `{schema}`");
    let params = |list: &[ApiArg]| {
        list.iter()
            .map(|a| format!("{}: {}", a.name, a.rust_type))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let call_args = |prefix: &str| {
        args.iter()
            .enumerate()
            .map(|(i, a)| {
                if i < first_default {
                    a.name.clone()
                } else {
                    format!("{prefix}{}", a.name)
                }
            })
            .map(|a| format!("{a},"))
            .collect::<String>()
    };
    let mut code = String::new();
    let op_name = schema.name();
    let overload = schema.overload_name();
    let op_fn = with_suffix(&name, "op");
    let with_fn = with_suffix(&name, "with");
    let body = format!("    {op_fn}()?.call(({}))", call_args("options."));
    let _ = writeln!(
        code,
        "/// The typed dispatcher handle of `{op_name}.{overload}`, looked up once.\n\
         pub fn {op_fn}() -> Result<&'static {handle_type}> {{\n\
             static OP: OnceLock<Result<{handle_type}>> = OnceLock::new();\n\
             OP.get_or_init(|| typed_handle(\"{op_name}\", \"{overload}\")).as_ref().map_err(Clone::clone)\n\
         }}\n"
    );
    let mut method_code = String::new();
    let self_index = schema.arguments().iter().position(|a| a.name() == "self");
    let method = method
        && !RESERVED_METHODS.contains(&name.as_str())
        && self_index.is_some_and(|i| i < first_default && args[i].rust_type == "&Tensor");
    let method_params = |list: &[ApiArg]| {
        list.iter()
            .filter(|a| a.name != "self_")
            .map(|a| format!(", {}: {}", a.name, a.rust_type))
            .collect::<String>()
    };
    let method_call = |list: &[ApiArg]| {
        list.iter()
            .map(|a| {
                if a.name == "self_" {
                    "self".to_string()
                } else {
                    a.name.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    if defaulted.is_empty() {
        let _ = writeln!(
            code,
            "{doc}\npub fn {name}({}) -> Result<{ret}> {{\n{body}\n}}\n",
            params(required)
        );
        if method {
            let _ = writeln!(
                method_code,
                "{doc}\npub fn {name}(&self{}) -> Result<{ret}> {{\n    ops::{name}({})\n}}\n",
                method_params(required),
                method_call(required)
            );
        }
    } else {
        let options = format!("{}Options", camel(&name));
        let borrowed = defaulted.iter().any(|a| a.rust_type.contains('&'));
        let lifetime = if borrowed { "<'a>" } else { "" };
        let _ = writeln!(
            code,
            "/// The arguments of [`{with_fn}`] that have defaults.\n#[derive(Clone, Debug)]\npub struct {options}{lifetime} {{"
        );
        for a in defaulted {
            let _ = writeln!(
                code,
                "    /// `{}`.\n    pub {}: {},",
                a.name,
                a.name,
                field_type(&a.rust_type)
            );
        }
        let _ = writeln!(code, "}}\n");
        let _ = writeln!(
            code,
            "impl Default for {options}{} {{\n    fn default() -> Self {{\n        {options} {{",
            if borrowed { "<'_>" } else { "" }
        );
        for a in defaulted {
            let _ = writeln!(
                code,
                "            {}: {},",
                a.name,
                a.default.clone().unwrap_or_default()
            );
        }
        let _ = writeln!(code, "        }}\n    }}\n}}\n");
        let sep = if required.is_empty() { "" } else { ", " };
        let _ = writeln!(
            code,
            "{doc}\npub fn {name}({}) -> Result<{ret}> {{\n    {with_fn}({}{sep}{options}::default())\n}}\n",
            params(required),
            required.iter().map(|a| a.name.clone()).collect::<Vec<_>>().join(", ")
        );
        let _ = writeln!(
            code,
            "{doc}\npub fn {with_fn}({}{sep}options: {options}{}) -> Result<{ret}> {{\n{body}\n}}\n",
            params(required),
            if borrowed { "<'_>" } else { "" }
        );
        if method {
            let _ = writeln!(
                method_code,
                "{doc}\npub fn {name}(&self{}) -> Result<{ret}> {{\n    ops::{name}({})\n}}\n",
                method_params(required),
                method_call(required)
            );
            let _ = writeln!(
                method_code,
                "{doc}\npub fn {with_fn}(&self{}, options: ops::{options}{}) -> Result<{ret}> {{\n    ops::{with_fn}({}, options)\n}}\n",
                method_params(required),
                if borrowed { "<'_>" } else { "" },
                method_call(required)
            );
        }
    }
    Ok(ApiFunction {
        name,
        code,
        method: method.then_some(method_code),
    })
}
