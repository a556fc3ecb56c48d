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
    let o = Overload::new(schema)?;
    let mut code = o.handle_fn();
    let method = method && o.can_be_method();
    let mut method_code = String::new();
    if o.defaulted().is_empty() {
        code.push_str(&o.plain_fn());
        if method {
            method_code.push_str(&o.plain_method());
        }
    } else {
        code.push_str(&o.options_struct());
        code.push_str(&o.fns_with_options());
        if method {
            method_code.push_str(&o.plain_method());
            method_code.push_str(&o.with_method());
        }
    }
    Ok(ApiFunction {
        name: o.name,
        code,
        method: method.then_some(method_code),
    })
}

/// One overload, with the names and types every part of its API is
/// rendered from.
struct Overload<'s> {
    schema: &'s FunctionSchema,
    /// The function name (`add_tensor`).
    name: String,
    args: Vec<ApiArg>,
    /// The Rust return type.
    ret: String,
    /// The index of the first argument taken from the options struct:
    /// defaults only count from there on, so that the required arguments
    /// stay in schema order.
    first_default: usize,
    /// The doc line of every function and method: the schema.
    doc: String,
}

impl<'s> Overload<'s> {
    fn new(schema: &'s FunctionSchema) -> Result<Overload<'s>, String> {
        let base = schema
            .name()
            .rsplit("::")
            .next()
            .unwrap_or(schema.name())
            .to_string();
        let name = function_name(&base, schema.overload_name());
        let args = api_args(schema.arguments())?;
        let ret = returns_type(schema.returns())?;
        let first_default = args
            .iter()
            .rposition(|a| a.default.is_none())
            .map_or(0, |i| i + 1);
        Ok(Overload {
            schema,
            name,
            args,
            ret,
            first_default,
            doc: format!("/// `{schema}`"),
        })
    }

    fn required(&self) -> &[ApiArg] {
        &self.args[..self.first_default]
    }

    fn defaulted(&self) -> &[ApiArg] {
        &self.args[self.first_default..]
    }

    /// `name_op`: the function returning the typed handle.
    fn op_fn(&self) -> String {
        with_suffix(&self.name, "op")
    }

    /// `name_with`: the function taking the options struct.
    fn with_fn(&self) -> String {
        with_suffix(&self.name, "with")
    }

    /// `NameOptions`: the struct of the arguments with defaults.
    fn options(&self) -> String {
        format!("{}Options", camel(&self.name))
    }

    /// Whether the options struct borrows (and so has a lifetime).
    fn borrowed(&self) -> bool {
        self.defaulted().iter().any(|a| a.rust_type.contains('&'))
    }

    /// `<'_>` where the options struct borrows.
    fn anonymous_lifetime(&self) -> &'static str {
        if self.borrowed() {
            "<'_>"
        } else {
            ""
        }
    }

    /// Whether the overload can be a `Tensor` method: a required `&Tensor`
    /// `self` and a name that shadows no common trait method.
    fn can_be_method(&self) -> bool {
        let self_index = self
            .schema
            .arguments()
            .iter()
            .position(|a| a.name() == "self");
        !RESERVED_METHODS.contains(&self.name.as_str())
            && self_index
                .is_some_and(|i| i < self.first_default && self.args[i].rust_type == "&Tensor")
    }

    /// `a: A, b: B` for a parameter list.
    fn params(list: &[ApiArg]) -> String {
        list.iter()
            .map(|a| format!("{}: {}", a.name, a.rust_type))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The body of the function that calls the operator: required
    /// arguments by name, the others from `options`.
    fn call_body(&self) -> String {
        let call_args = self
            .args
            .iter()
            .enumerate()
            .map(|(i, a)| {
                if i < self.first_default {
                    a.name.clone()
                } else {
                    format!("options.{}", a.name)
                }
            })
            .map(|a| format!("{a},"))
            .collect::<String>();
        format!("    {}()?.call(({call_args}))", self.op_fn())
    }

    /// The function holding the typed dispatcher handle in a `static`.
    fn handle_fn(&self) -> String {
        let static_args: Vec<String> = self
            .args
            .iter()
            .map(|a| static_type(&a.rust_type))
            .collect();
        let handle_type = format!(
            "TypedOperatorHandle<({}), {}>",
            static_args
                .iter()
                .map(|t| format!("{t},"))
                .collect::<String>(),
            self.ret
        );
        let op_name = self.schema.name();
        let overload = self.schema.overload_name();
        let op_fn = self.op_fn();
        format!(
            "/// The typed dispatcher handle of `{op_name}.{overload}`, looked up once.\n\
             #[inline]\n\
             pub fn {op_fn}() -> Result<&'static {handle_type}> {{\n\
                 static OP: OnceLock<Result<{handle_type}>> = OnceLock::new();\n\
                 OP.get_or_init(|| typed_handle(\"{op_name}\", \"{overload}\")).as_ref().map_err(Clone::clone)\n\
             }}\n\n"
        )
    }

    /// The function of an overload without defaulted arguments.
    fn plain_fn(&self) -> String {
        format!(
            "{}\npub fn {}({}) -> Result<{}> {{\n{}\n}}\n\n",
            self.doc,
            self.name,
            Self::params(self.required()),
            self.ret,
            self.call_body()
        )
    }

    /// The options struct of the defaulted arguments and its `Default`
    /// (the schema's defaults).
    fn options_struct(&self) -> String {
        let mut code = String::new();
        let options = self.options();
        let lifetime = if self.borrowed() { "<'a>" } else { "" };
        let _ = writeln!(
            code,
            "/// The arguments of [`{}`] that have defaults.\n#[derive(Clone, Debug)]\npub struct {options}{lifetime} {{",
            self.with_fn()
        );
        for a in self.defaulted() {
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
            self.anonymous_lifetime()
        );
        for a in self.defaulted() {
            let _ = writeln!(
                code,
                "            {}: {},",
                a.name,
                a.default.clone().unwrap_or_default()
            );
        }
        let _ = writeln!(code, "        }}\n    }}\n}}\n");
        code
    }

    /// `name(required)`, which uses the defaults, and
    /// `name_with(required, options)`.
    fn fns_with_options(&self) -> String {
        let mut code = String::new();
        let (doc, name, ret) = (&self.doc, &self.name, &self.ret);
        let (options, with_fn) = (self.options(), self.with_fn());
        let required = self.required();
        let sep = if required.is_empty() { "" } else { ", " };
        let _ = writeln!(
            code,
            "{doc}\npub fn {name}({}) -> Result<{ret}> {{\n    {with_fn}({}{sep}{options}::default())\n}}\n",
            Self::params(required),
            required.iter().map(|a| a.name.clone()).collect::<Vec<_>>().join(", ")
        );
        let _ = writeln!(
            code,
            "{doc}\npub fn {with_fn}({}{sep}options: {options}{}) -> Result<{ret}> {{\n{}\n}}\n",
            Self::params(required),
            self.anonymous_lifetime(),
            self.call_body()
        );
        code
    }

    /// `, a: A, b: B`: a method's parameters after `&self`.
    fn method_params(&self) -> String {
        self.required()
            .iter()
            .filter(|a| a.name != "self_")
            .map(|a| format!(", {}: {}", a.name, a.rust_type))
            .collect::<String>()
    }

    /// The arguments a method passes on, `self` for `self_`.
    fn method_call(&self) -> String {
        self.required()
            .iter()
            .map(|a| {
                if a.name == "self_" {
                    "self".to_string()
                } else {
                    a.name.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The method calling `ops::name`.
    fn plain_method(&self) -> String {
        format!(
            "{}\npub fn {}(&self{}) -> Result<{}> {{\n    ops::{}({})\n}}\n\n",
            self.doc,
            self.name,
            self.method_params(),
            self.ret,
            self.name,
            self.method_call()
        )
    }

    /// The method calling `ops::name_with`.
    fn with_method(&self) -> String {
        let with_fn = self.with_fn();
        format!(
            "{}\npub fn {with_fn}(&self{}, options: ops::{}{}) -> Result<{}> {{\n    ops::{with_fn}({}, options)\n}}\n\n",
            self.doc,
            self.method_params(),
            self.options(),
            self.anonymous_lifetime(),
            self.ret,
            self.method_call()
        )
    }
}
