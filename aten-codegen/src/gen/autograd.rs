//! The autograd generators (torchgen's `gen_variable_type`,
//! `gen_autograd_functions`, `gen_inplace_or_view_type`): from the
//! operators and the project's `derivatives.yaml`, per operator without a
//! CompositeImplicitAutograd kernel,
//!
//! - a backward node (`MulBackward0`) saving what its formulas name, whose
//!   `apply` runs the formula of each wanted input;
//! - the kernel at the `Autograd` alias key: PyTorch's checks, the node
//!   with its next edges when an input requires grad, the call below
//!   autograd, and the outputs' history (through `CopySlices` for an
//!   in-place write on a view); operators without formulas record
//!   PyTorch's `NotImplemented` node, `out=` operators refuse inputs that
//!   require grad;
//! - for in-place, `out=` and view operators, the kernel at
//!   `ADInplaceOrView`: version bumps of the written arguments, or the
//!   view's base.
//!
//! Formulas are Rust expressions of type `Result<Tensor>` (one input) or
//! `Result<Vec<Tensor>>` (several inputs, or a `Tensor[]` input). In scope:
//! `grad` and `grads` (the gradients of the outputs), every argument the
//! formula names (saved tensors unpacked, `self` spelled `self_`),
//! `ARG_sizes`, `ARG_strides`, `ARG_storage_offset`, `ARG_dtype` and
//! `ARG_dim` of tensor arguments (saved instead of the tensor), the outputs
//! (`result`, or the returns' names, or `result0`, `result1`, ...), and
//! `grad_input_mask` (which inputs of a formula are wanted). The formula
//! `non_differentiable` marks an argument that must not require grad;
//! `not_implemented("name")` one whose gradient is PyTorch's error.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write;

use aten_boxing::schema::{Argument, FunctionSchema, Type};

use super::names::{function_name, ident, with_suffix};
use super::rust_types::{argument_type, returns_type};
use crate::derivatives::{DerivativeEntry, Derivatives, Differentiable};

/// Operators autograd never differentiates although they take tensors
/// (torchgen's `DONT_REQUIRE_DERIVATIVE`): their results depend only on
/// shapes, or are integers or booleans.
const DONT_REQUIRE_DERIVATIVE: &[&str] = &[
    "empty_like",
    "ones_like",
    "full_like",
    "zeros_like",
    "rand_like",
    "randn_like",
    "argmax",
    "argmin",
    "argsort",
    "logical_and",
    "logical_xor",
    "logical_not",
    "logical_or",
    "isnan",
    "isinf",
];

/// Operators whose Autograd kernels are written by hand
/// (`aten-autograd/src/manual.rs`; torchgen's `MANUAL_AUTOGRAD`): the
/// generators make no kernels for them.
const MANUAL_AUTOGRAD: &[&str] = &["detach", "detach_"];

/// Operators whose result aliases an argument but which torchgen does not
/// treat as views (neither in its `VIEW_FUNCTIONS` nor in
/// `RETURNS_VIEWS_OF_INPUT`): they get no ADInplaceOrView kernel.
const NOT_VIEWS: &[&str] = &["lift_fresh"];

/// One operator the autograd generators see.
pub struct AutogradOp<'a> {
    /// The schema, with namespace.
    pub schema: &'a FunctionSchema,
    /// Whether it has a CompositeImplicitAutograd kernel (then autograd
    /// differentiates its decomposition and it gets no kernels here).
    pub composite_implicit: bool,
}

/// The rendered autograd code.
#[derive(Default)]
pub struct AutogradCode {
    /// The backward nodes (`functions.rs`).
    pub functions: String,
    /// The Autograd kernels and their registrations (`variable_type.rs`).
    pub variable_type: String,
    /// The ADInplaceOrView kernels and their registrations
    /// (`inplace_or_view.rs`).
    pub inplace_or_view: String,
    /// Operators the generators cannot express, with the reason.
    pub skipped: Vec<String>,
}

/// How a schema argument is passed and saved.
#[derive(Clone, Debug)]
struct Arg {
    /// The schema name (`self`).
    schema_name: String,
    /// The Rust name (`self_`).
    name: String,
    /// The typed API's type (`&Tensor`).
    rust_type: String,
    kind: ArgKind,
    is_out: bool,
    is_write: bool,
    /// Carries a non-writing alias annotation (the base of a view).
    is_view_base: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ArgKind {
    Tensor,
    OptTensor,
    TensorList,
    Other,
}

impl Arg {
    fn new(a: &Argument) -> Result<Arg, String> {
        let rust_type = argument_type(a)?;
        let kind = match a.real_type() {
            Type::Tensor => ArgKind::Tensor,
            Type::Optional(t) if **t == Type::Tensor => ArgKind::OptTensor,
            Type::List(t) if **t == Type::Tensor => ArgKind::TensorList,
            _ => ArgKind::Other,
        };
        Ok(Arg {
            schema_name: a.name().to_string(),
            name: ident(a.name()),
            rust_type,
            kind,
            is_out: a.is_out(),
            is_write: a.is_write(),
            is_view_base: a.alias_info().is_some_and(|i| !i.is_write()),
        })
    }

    fn is_tensor(&self) -> bool {
        self.kind != ArgKind::Other
    }

    /// An iterator of `Option<&Tensor>` over the argument's tensors.
    fn tensors_iter(&self) -> String {
        match self.kind {
            ArgKind::Tensor => format!("[Some({})]", self.name),
            ArgKind::OptTensor => format!("[{}]", self.name),
            ArgKind::TensorList => format!("{}.iter().map(Some)", self.name),
            ArgKind::Other => "[None]".into(),
        }
    }

    /// Whether the argument requires grad (a plain expression: the kernels'
    /// fast path).
    fn requires_grad_expr(&self) -> String {
        let n = &self.name;
        match self.kind {
            ArgKind::Tensor => format!("{n}.requires_grad()"),
            ArgKind::OptTensor => format!("{n}.is_some_and(|t| t.requires_grad())"),
            ArgKind::TensorList => format!("{n}.iter().any(|t| t.requires_grad())"),
            ArgKind::Other => "false".into(),
        }
    }

    /// The argument passed on in a redispatch.
    fn pass(&self) -> String {
        match self.rust_type.as_str() {
            "Scalar" | "Generator" | "Option<Scalar>" | "Option<Generator>" => {
                format!("{}.clone()", self.name)
            }
            _ => self.name.clone(),
        }
    }

    /// The field type and save expression of a non-tensor argument.
    fn saved_value(&self) -> (String, String) {
        let n = &self.name;
        match self.rust_type.as_str() {
            "&[i64]" => ("Vec<i64>".into(), format!("{n}.to_vec()")),
            "&[f64]" => ("Vec<f64>".into(), format!("{n}.to_vec()")),
            "&[bool]" => ("Vec<bool>".into(), format!("{n}.to_vec()")),
            "Option<&[i64]>" => (
                "Option<Vec<i64>>".into(),
                format!("{n}.map(<[i64]>::to_vec)"),
            ),
            "Option<&[f64]>" => (
                "Option<Vec<f64>>".into(),
                format!("{n}.map(<[f64]>::to_vec)"),
            ),
            "&str" => ("String".into(), format!("{n}.to_string()")),
            "Option<&str>" => ("Option<String>".into(), format!("{n}.map(str::to_string)")),
            t => (t.to_string(), self.pass()),
        }
    }

    /// The binding of a saved non-tensor argument inside `apply`.
    fn bind_value(&self) -> String {
        let n = &self.name;
        match self.rust_type.as_str() {
            "&[i64]" | "&[f64]" | "&[bool]" => format!("let {n} = &self.{n}[..];"),
            "Option<&[i64]>" | "Option<&[f64]>" | "Option<&str>" => {
                format!("let {n} = self.{n}.as_deref();")
            }
            "&str" => format!("let {n}: &str = &self.{n};"),
            "Scalar" | "Generator" | "Option<Scalar>" | "Option<Generator>" => {
                format!("let {n} = self.{n}.clone();")
            }
            _ => format!("let {n} = self.{n};"),
        }
    }
}

/// The properties of a tensor argument a formula can name instead of the
/// tensor: suffix, field type, save expression (of `t: &Tensor`).
const TENSOR_PROPERTIES: &[(&str, &str, &str)] = &[
    ("sizes", "Vec<i64>", "t.sizes().to_vec()"),
    ("strides", "Vec<i64>", "t.strides().to_vec()"),
    ("storage_offset", "i64", "t.storage_offset()"),
    (
        "dtype",
        "ScalarType",
        "t.dtype().unwrap_or(ScalarType::Float)",
    ),
    ("dim", "i64", "t.dim() as i64"),
];

/// The identifiers of a formula (with `self` spelled `self_`).
fn identifiers(formula: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut cur = String::new();
    let mut prev_colon = false;
    for c in formula.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_alphanumeric() || c == '_' {
            cur.push(c);
            continue;
        }
        if !cur.is_empty() && !cur.starts_with(|c: char| c.is_ascii_digit()) && !prev_colon {
            out.insert(ident(&cur));
        }
        prev_colon = c == ':' || (c == '.' && !cur.is_empty());
        cur.clear();
    }
    out
}

/// The formula with `self` spelled `self_`.
fn rust_formula(formula: &str) -> String {
    let mut out = String::new();
    let mut cur = String::new();
    for c in formula.chars().chain(std::iter::once('\0')) {
        if c.is_ascii_alphanumeric() || c == '_' {
            cur.push(c);
            continue;
        }
        if cur == "self" {
            out.push_str("self_");
        } else {
            out.push_str(&cur);
        }
        cur.clear();
        if c != '\0' {
            out.push(c);
        }
    }
    out
}

/// torchgen's node name stem: each `_`-separated part title-cased
/// (`max_pool2d_with_indices` -> `MaxPool2DWithIndices`), a trailing
/// `_forward` dropped.
fn node_stem(base: &str) -> String {
    let base = base.strip_suffix('_').unwrap_or(base);
    let base = base.strip_suffix("_forward").unwrap_or(base);
    let mut out = String::new();
    for part in base.split('_') {
        let mut upper = true;
        for c in part.chars() {
            if upper {
                out.extend(c.to_uppercase());
            } else {
                out.push(c);
            }
            upper = !c.is_ascii_alphabetic();
        }
    }
    out
}

/// The base name of a schema (`add_` for `aten::add_.Tensor`).
fn base_name(schema: &FunctionSchema) -> &str {
    schema.name().rsplit("::").next().unwrap_or(schema.name())
}

fn is_inplace(schema: &FunctionSchema) -> bool {
    let b = base_name(schema);
    b.ends_with('_') && !b.ends_with("__")
}

/// The name an entry is looked up by (`add.Tensor`, `relu`).
fn entry_name(base: &str, overload: &str) -> String {
    if overload.is_empty() {
        base.to_string()
    } else {
        format!("{base}.{overload}")
    }
}

/// One backward formula, resolved against the schema.
struct ResolvedFormula {
    /// Indices (into the differentiable inputs) of the inputs it computes.
    inputs: Vec<usize>,
    /// The Rust expression, or `None` for `not_implemented`.
    expr: Option<String>,
    not_implemented: Option<String>,
}

/// A derivative entry resolved against an operator's schema.
struct Resolved {
    node: String,
    /// Indices into the schema's arguments of the differentiable inputs.
    diff_inputs: Vec<usize>,
    formulas: Vec<ResolvedFormula>,
    /// Arguments that must not require grad.
    non_differentiable: Vec<usize>,
    /// Per return, whether it is differentiable.
    output_differentiable: Vec<bool>,
    /// Every identifier the formulas use.
    used: BTreeSet<String>,
}

fn resolve(
    entry: &DerivativeEntry,
    node: String,
    args: &[Arg],
    n_returns: usize,
) -> Result<Resolved, String> {
    // An entry may give only `output_differentiability`.
    let none = crate::derivatives::Formulas::default();
    let formulas = entry.formulas("Default").unwrap_or(&none);
    let mut diff_inputs = Vec::new();
    let mut non_differentiable = Vec::new();
    let mut resolved = Vec::new();
    let mut used = BTreeSet::new();
    for f in formulas.backward() {
        let text = f.formula().trim();
        let mut idx = Vec::new();
        for name in f.inputs() {
            let i = args
                .iter()
                .position(|a| a.schema_name == name)
                .ok_or_else(|| format!("formula for unknown argument '{name}'"))?;
            idx.push(i);
        }
        if text == "non_differentiable" {
            non_differentiable.extend(idx);
            continue;
        }
        let mut positions = Vec::new();
        for i in idx {
            positions.push(diff_inputs.len());
            diff_inputs.push(i);
        }
        if let Some(rest) = text.strip_prefix("not_implemented(") {
            let name = rest.trim_end_matches(')').trim_matches('"').to_string();
            resolved.push(ResolvedFormula {
                inputs: positions,
                expr: None,
                not_implemented: Some(name),
            });
            continue;
        }
        used.extend(identifiers(text));
        resolved.push(ResolvedFormula {
            inputs: positions,
            expr: Some(rust_formula(text)),
            not_implemented: None,
        });
    }
    // Inputs appear in schema order, as PyTorch's next edges do.
    let mut order: Vec<usize> = (0..diff_inputs.len()).collect();
    order.sort_by_key(|&p| diff_inputs[p]);
    let mut new_pos = vec![0; diff_inputs.len()];
    for (new, &old) in order.iter().enumerate() {
        new_pos[old] = new;
    }
    for f in &mut resolved {
        for p in &mut f.inputs {
            *p = new_pos[*p];
        }
    }
    diff_inputs.sort_unstable();
    let output_differentiable = match entry.output_differentiability() {
        Some(flags) => flags
            .iter()
            .map(|d| !matches!(d, Differentiable::No))
            .collect(),
        None => vec![true; n_returns],
    };
    Ok(Resolved {
        node,
        diff_inputs,
        formulas: resolved,
        non_differentiable,
        output_differentiable,
        used,
    })
}

/// The names the outputs are known by in formulas.
fn output_names(schema: &FunctionSchema) -> Vec<String> {
    let rets = schema.returns();
    if rets.len() == 1 && rets[0].name().is_empty() {
        return vec!["result".into()];
    }
    rets.iter()
        .enumerate()
        .map(|(i, r)| {
            if r.name().is_empty() {
                format!("result{i}")
            } else {
                ident(r.name())
            }
        })
        .collect()
}

/// How the operator's result is bound and listed.
struct Outputs {
    /// `let PATTERN = ...` of the redispatch's result.
    pattern: String,
    /// The expression returned.
    ret: String,
    /// An expression of type `Vec<&Tensor>` (or array) over the outputs.
    list: String,
    /// Whether the single return is a `Tensor[]`.
    is_list: bool,
    names: Vec<String>,
}

fn outputs(schema: &FunctionSchema) -> Result<Outputs, String> {
    let rets = schema.returns();
    let names = output_names(schema);
    if rets.len() == 1 && matches!(rets[0].real_type(), Type::List(_)) {
        return Ok(Outputs {
            pattern: "result".into(),
            ret: "result".into(),
            list: "result.iter().collect::<Vec<&Tensor>>()".into(),
            is_list: true,
            names: vec!["result".into()],
        });
    }
    if rets.iter().any(|r| *r.real_type() != Type::Tensor) {
        return Err("only Tensor returns are differentiated".into());
    }
    let vars: Vec<String> = (0..rets.len()).map(|i| format!("out{i}")).collect();
    let (pattern, ret) = match vars.len() {
        0 => ("()".to_string(), "()".to_string()),
        1 => (vars[0].clone(), vars[0].clone()),
        _ => (
            format!("({})", vars.join(", ")),
            format!("({})", vars.join(", ")),
        ),
    };
    Ok(Outputs {
        pattern,
        ret,
        list: format!(
            "[{}]",
            vars.iter()
                .map(|v| format!("&{v}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        is_list: false,
        names,
    })
}

/// Renders the autograd code of `ops` with the formulas of `derivatives`.
pub fn render(ns: &str, ops: &[AutogradOp<'_>], derivatives: &Derivatives) -> AutogradCode {
    let mut code = AutogradCode::default();
    let mut autograd_impls = Vec::new();
    let mut view_impls = Vec::new();
    // Node names: per base name, numbered in the derivatives file's order.
    let mut node_names: HashMap<String, String> = HashMap::new();
    let mut counters: HashMap<String, usize> = HashMap::new();
    for e in derivatives.iter() {
        let stem = node_stem(base_name(e.schema()));
        let n = counters.entry(stem.clone()).or_default();
        node_names.insert(
            entry_name(base_name(e.schema()), e.schema().overload_name()),
            format!("{stem}Backward{n}"),
        );
        *n += 1;
    }
    for op in ops {
        if op.composite_implicit
            || (op.schema.overload_name().is_empty()
                && MANUAL_AUTOGRAD.contains(&base_name(op.schema)))
        {
            continue;
        }
        match render_op(op.schema, derivatives, &node_names) {
            Ok(r) => {
                code.functions.push_str(&r.node_code);
                code.variable_type.push_str(&r.kernel);
                autograd_impls.push((r.registered.clone(), r.kernel_name));
                if let Some((k, name)) = r.view_kernel {
                    code.inplace_or_view.push_str(&k);
                    view_impls.push((r.registered, name));
                }
            }
            Err(e) => code
                .skipped
                .push(format!("{} (autograd): {e}", op.schema.operator_name())),
        }
    }
    code.variable_type
        .push_str(&render_impls(ns, "Autograd", &autograd_impls));
    code.inplace_or_view
        .push_str(&render_impls(ns, "ADInplaceOrView", &view_impls));
    code
}

fn render_impls(ns: &str, key: &str, impls: &[(String, String)]) -> String {
    let mut out = format!("aten_dispatch::torch_library_impl!({ns}, {key}, |m| {{\n");
    for (name, kernel) in impls {
        let _ = writeln!(
            out,
            "    m.impl_({name:?}, CppFunction::from_unboxed({kernel}))?;"
        );
    }
    out.push_str("    Ok(())\n});\n");
    out
}

struct RenderedOp {
    node_code: String,
    kernel: String,
    kernel_name: String,
    registered: String,
    view_kernel: Option<(String, String)>,
}

fn render_op(
    schema: &FunctionSchema,
    derivatives: &Derivatives,
    node_names: &HashMap<String, String>,
) -> Result<RenderedOp, String> {
    let args: Vec<Arg> = schema
        .arguments()
        .iter()
        .map(Arg::new)
        .collect::<Result<_, _>>()?;
    let ret_type = returns_type(schema.returns())?;
    let base = base_name(schema);
    let overload = schema.overload_name();
    let fname = function_name(base, overload);
    let handle = format!("ops::{}", with_suffix(&fname, "op"));
    let registered = entry_name(base, overload);
    let inplace = is_inplace(schema);
    let is_out = args.iter().any(|a| a.is_out);
    let is_view = !schema.is_mutable()
        && args.iter().any(|a| a.is_view_base)
        && !NOT_VIEWS.contains(&base_name(schema));
    let params: String = args
        .iter()
        .map(|a| format!(", {}: {}", a.name, a.rust_type))
        .collect();
    let pass: String = args.iter().map(|a| format!("{}, ", a.pass())).collect();
    // Only values come out (`_local_scalar_dense`'s `Scalar`): there is
    // nothing to record a gradient for.
    let values_only = !schema.returns().is_empty()
        && schema.returns().iter().all(|r| {
            let t = r.real_type();
            *t != Type::Tensor
                && t.list_element() != Some(&Type::Tensor)
                && t.optional_element() != Some(&Type::Tensor)
        });
    let outs = if is_out || values_only || schema.returns().is_empty() {
        None
    } else {
        Some(outputs(schema)?)
    };

    // The ADInplaceOrView kernel of in-place, out= and view operators
    // (torchgen's; a functional operator that writes some of its
    // arguments, such as `_native_batch_norm_legit`, gets none).
    let view_kernel = if (inplace && schema.is_mutable()) || is_out || is_view {
        let name = with_suffix(&fname, "ad_inplace_or_view");
        let mut after = String::new();
        for a in args.iter().filter(|a| a.is_write) {
            match a.kind {
                ArgKind::Tensor => {
                    let _ = writeln!(after, "    record::increment_version({})?;", a.name);
                }
                ArgKind::OptTensor => {
                    let _ = writeln!(
                        after,
                        "    if let Some(t) = {} {{ record::increment_version(t)?; }}",
                        a.name
                    );
                }
                ArgKind::TensorList => {
                    let _ = writeln!(
                        after,
                        "    for t in {} {{ record::increment_version(t)?; }}",
                        a.name
                    );
                }
                ArgKind::Other => {}
            }
        }
        if is_view {
            let base_arg = args
                .iter()
                .find(|a| a.is_view_base && a.kind == ArgKind::Tensor)
                .ok_or("a view operator without a Tensor base")?;
            let returns_list = schema.returns().len() == 1
                && matches!(schema.returns()[0].real_type(), Type::List(_));
            if returns_list {
                let _ = writeln!(
                    after,
                    "    for v in &result {{ crate::view::as_view({}, v)?; }}",
                    base_arg.name
                );
            } else if schema.returns().len() == 1 {
                let _ = writeln!(
                    after,
                    "    crate::view::as_view({}, &result)?;",
                    base_arg.name
                );
            }
        }
        let kernel = format!(
            "/// ADInplaceOrView kernel of `{schema}`.\n\
             pub fn {name}(ks: DispatchKeySet{params}) -> Result<{ret_type}> {{\n\
             \x20   let result = {{\n\
             \x20       let _guard = AutoDispatchBelowADInplaceOrView::new();\n\
             \x20       {handle}()?.redispatch(ks.intersection(AFTER_AD_INPLACE_OR_VIEW_KEYSET), ({pass}))?\n\
             \x20   }};\n{after}\
             \x20   Ok(result)\n}}\n\n"
        );
        Some((kernel, name))
    } else {
        None
    };

    let kernel_name = with_suffix(&fname, "autograd");
    let redispatch = format!(
        "{{\n\
         \x20       let _guard = AutoDispatchBelowADInplaceOrView::new();\n\
         \x20       {handle}()?.redispatch(ks.intersection(AFTER_AUTOGRAD_KEYSET), ({pass}))?\n\
         \x20   }}"
    );
    let doc = format!("/// Autograd kernel of `{schema}`.\n");
    let inputs: Vec<&Arg> = args.iter().filter(|a| a.is_tensor() && !a.is_out).collect();
    let requires_expr = |list: &[&Arg]| -> String {
        let mut e = "std::iter::empty::<Option<&Tensor>>()".to_string();
        for a in list {
            let _ = write!(e, ".chain({})", a.tensors_iter());
        }
        e
    };
    // `requires_grad` of the arguments, then grad mode (a thread-local read
    // only when some argument requires grad).
    let requires_flags = |list: &[&Arg]| -> String {
        let flags: Vec<String> = list.iter().map(|a| a.requires_grad_expr()).collect();
        if flags.is_empty() {
            "false".into()
        } else {
            flags.join(" || ")
        }
    };

    // out= operators: refuse inputs and outputs that require grad.
    if is_out {
        let outs_args: Vec<&Arg> = args.iter().filter(|a| a.is_out && a.is_tensor()).collect();
        let name = base;
        let kernel = format!(
            "{doc}pub fn {kernel_name}(ks: DispatchKeySet{params}) -> Result<{ret_type}> {{\n\
             \x20   if record::grad_mode_and({}) {{\n\
             \x20       return Err(record::out_requires_grad_error({name:?}));\n\
             \x20   }}\n\
             \x20   Ok({redispatch})\n}}\n\n",
            requires_flags(&inputs.iter().chain(&outs_args).copied().collect::<Vec<_>>()),
        );
        return Ok(RenderedOp {
            node_code: String::new(),
            kernel,
            kernel_name,
            registered,
            view_kernel,
        });
    }
    // Only values come out, or nothing (`_assert_scalar`): the call goes
    // below autograd as it is, as torchgen's VariableType kernels do.
    if values_only || schema.returns().is_empty() {
        let body = if schema.returns().is_empty() {
            format!("    {redispatch};\n    Ok(())")
        } else {
            format!("    Ok({redispatch})")
        };
        let kernel = format!(
            "{doc}pub fn {kernel_name}(ks: DispatchKeySet{params}) -> Result<{ret_type}> {{\n{body}\n}}\n\n"
        );
        return Ok(RenderedOp {
            node_code: String::new(),
            kernel,
            kernel_name,
            registered,
            view_kernel,
        });
    }
    let Some(outs) = outs else {
        return Err("an operator without tensor results reached the differentiable path".into());
    };

    // The entry: the operator's own, or for an in-place operator its
    // functional twin's.
    let own = derivatives.get(&registered);
    let entry = own.or_else(|| {
        inplace
            .then(|| derivatives.get(&entry_name(base.trim_end_matches('_'), overload)))
            .flatten()
    });
    let resolved = match entry {
        Some(e) => {
            let key = entry_name(base_name(e.schema()), e.schema().overload_name());
            let node = node_names.get(&key).cloned().unwrap_or_default();
            if e.schema().arguments().len() != schema.arguments().len()
                || e.schema()
                    .arguments()
                    .iter()
                    .zip(schema.arguments())
                    .any(|(a, b)| a.name() != b.name())
            {
                return Err(format!(
                    "the derivatives entry's schema does not match: {}",
                    e.schema()
                ));
            }
            Some(resolve(e, node, &args, schema.returns().len())?)
        }
        None => None,
    };

    let mut pre = String::new();
    let _ = writeln!(
        pre,
        "    let requires_grad = record::grad_mode_and({});",
        requires_flags(&inputs)
    );
    // The fast path: nothing to record. The rest of the kernel is a
    // function of its own, so that this part stays small enough to be
    // inlined into the dispatcher's trampoline.
    let record_name = with_suffix(&fname, "autograd_record");
    let arg_names: String = args.iter().map(|a| format!(", {}", a.pass())).collect();
    let _ = writeln!(
        pre,
        "    if !requires_grad {{\n        return Ok({redispatch});\n    }}\n    {record_name}(ks{arg_names})\n}}\n\n\
         /// The recording part of [`{kernel_name}`]: some input requires grad.\n\
         #[inline(never)]\n\
         fn {record_name}(ks: DispatchKeySet{params}) -> Result<{ret_type}> {{"
    );
    if inplace {
        let _ = writeln!(pre, "    crate::view::check_inplace(self_, true)?;");
    }
    let mut node_code = String::new();
    let undifferentiable = DONT_REQUIRE_DERIVATIVE.contains(&base.trim_end_matches('_'));
    let body = match resolved {
        _ if undifferentiable && !inplace => format!("    Ok({redispatch})\n"),
        _ if undifferentiable => format!("{pre}    Ok({redispatch})\n"),
        Some(r) if r.output_differentiable.iter().all(|d| !d) => {
            format!("{pre}    Ok({redispatch})\n")
        }
        Some(r) => {
            let (code, struct_init, after) = render_node(&r, &args, &outs, inplace, schema)?;
            node_code = code;
            let mut checks = String::new();
            for &i in &r.non_differentiable {
                let a = &args[i];
                if a.kind == ArgKind::Tensor || a.kind == ArgKind::OptTensor {
                    let t = if a.kind == ArgKind::Tensor {
                        format!("Some({})", a.name)
                    } else {
                        a.name.clone()
                    };
                    let _ = writeln!(
                        checks,
                        "    record::check_no_requires_grad({t}, {:?}, {:?})?;",
                        a.schema_name,
                        base.trim_end_matches('_')
                    );
                }
            }
            let diff: Vec<&Arg> = r.diff_inputs.iter().map(|&i| &args[i]).collect();
            let mutability = if after.contains("grad_fn.") {
                "mut "
            } else {
                ""
            };
            format!(
                "{pre}{checks}\
                 \x20   let edges = record::collect_next_edges({})?;\n\
                 \x20   let seq = record::sequence_nr();\n\
                 \x20   let {mutability}grad_fn = {struct_init};\n\
                 \x20   let {} = {redispatch};\n\
                 \x20   {{\n{after}\
                 \x20   }}\n\
                 \x20   Ok({})\n",
                requires_expr(&diff),
                outs.pattern,
                outs.ret
            )
        }
        None => {
            // No formula: PyTorch's NotImplemented node.
            let history = if inplace {
                "        crate::view::rebase_history(self_, node)?;\n".to_string()
            } else {
                format!(
                    "        record::set_history(&{}, &node, &[])?;\n",
                    outs.list
                )
            };
            format!(
                "{pre}\
                 \x20   let edges = record::collect_next_edges({})?;\n\
                 \x20   let seq = record::sequence_nr();\n\
                 \x20   let {} = {redispatch};\n\
                 \x20   {{\n\
                 \x20       let node = record::make_node(\"NotImplemented\", record::NotImplemented {{ name: {:?} }}, edges, &{}, seq);\n\
                 {history}\
                 \x20   }}\n\
                 \x20   Ok({})\n",
                requires_expr(&inputs),
                outs.pattern,
                base.trim_end_matches('_'),
                outs.list,
                outs.ret
            )
        }
    };
    let kernel = format!(
        "{doc}#[inline]\npub fn {kernel_name}(ks: DispatchKeySet{params}) -> Result<{ret_type}> {{\n{body}}}\n\n"
    );
    Ok(RenderedOp {
        node_code,
        kernel,
        kernel_name,
        registered,
        view_kernel,
    })
}

/// The node struct and its `BackwardFunction` impl; the struct literal
/// the kernel builds before the call; the code after the call that saves
/// outputs and records the node.
fn render_node(
    r: &Resolved,
    args: &[Arg],
    outs: &Outputs,
    inplace: bool,
    schema: &FunctionSchema,
) -> Result<(String, String, String), String> {
    let node = &r.node;
    // Instances of one node type serve several operators (in-place twins):
    // name the struct after the operator.
    let struct_name = format!("{}{}", node, if inplace { "Inplace" } else { "" });
    let mut fields = String::new();
    let mut init = String::new();
    let mut release = String::new();
    let has_lists = r
        .diff_inputs
        .iter()
        .any(|&i| args[i].kind == ArgKind::TensorList);
    if has_lists {
        fields.push_str("    pub(crate) ranges: Vec<std::ops::Range<usize>>,\n");
        let lens: Vec<String> = r
            .diff_inputs
            .iter()
            .map(|&i| {
                let a = &args[i];
                if a.kind == ArgKind::TensorList {
                    format!("{}.len()", a.name)
                } else {
                    "1".into()
                }
            })
            .collect();
        let e = format!("record::ranges(&[{}])", lens.join(", "));
        let _ = writeln!(init, "            ranges: {e},");
    }
    let mut binds: Vec<(String, String)> = Vec::new(); // (identifier, binding code)
    for a in args {
        if a.is_out {
            continue;
        }
        let n = &a.name;
        if r.used.contains(n) {
            match a.kind {
                ArgKind::Tensor => {
                    let _ = writeln!(fields, "    pub(crate) {n}: SavedVariable,");
                    let saved = if inplace && a.is_write {
                        // The value before the write (PyTorch's original_self).
                        format!("&{{ let _guard = AutoDispatchBelowADInplaceOrView::new(); ops::clone({n})? }}")
                    } else {
                        n.clone()
                    };
                    let _ = writeln!(
                        init,
                        "            {n}: SavedVariable::new({saved}, false)?,"
                    );
                    let _ = writeln!(release, "        self.{n}.reset_data();");
                    binds.push((n.clone(), format!("let {n} = &self.{n}.unpack(ctx.node)?;")));
                }
                ArgKind::OptTensor => {
                    let _ = writeln!(fields, "    pub(crate) {n}: SavedVariable,");
                    let _ = writeln!(
                        init,
                        "            {n}: SavedVariable::new_opt({n}, false)?,"
                    );
                    let _ = writeln!(release, "        self.{n}.reset_data();");
                    binds.push((
                        n.clone(),
                        format!("let {n}_owned = self.{n}.unpack(ctx.node)?; let {n} = if {n}_owned.defined() {{ Some(&{n}_owned) }} else {{ None }};"),
                    ));
                }
                ArgKind::TensorList => {
                    let _ = writeln!(fields, "    pub(crate) {n}: Vec<SavedVariable>,");
                    let _ = writeln!(init, "            {n}: {n}.iter().map(|t| SavedVariable::new(t, false)).collect::<Result<_>>()?,");
                    let _ = writeln!(
                        release,
                        "        self.{n}.iter_mut().for_each(SavedVariable::reset_data);"
                    );
                    binds.push((
                        n.clone(),
                        format!("let {n}_owned = self.{n}.iter().map(|s| s.unpack(ctx.node)).collect::<Result<Vec<Tensor>>>()?; let {n} = &{n}_owned[..];"),
                    ));
                }
                ArgKind::Other => {
                    let (ty, save) = a.saved_value();
                    let _ = writeln!(fields, "    pub(crate) {n}: {ty},");
                    let _ = writeln!(init, "            {n}: {save},");
                    binds.push((n.clone(), a.bind_value()));
                }
            }
        }
        if a.is_tensor() {
            let stem = n.trim_end_matches('_');
            for (suffix, ty, save) in TENSOR_PROPERTIES {
                let prop = format!("{stem}_{suffix}");
                if !r.used.contains(&prop) {
                    continue;
                }
                match a.kind {
                    ArgKind::Tensor => {
                        let _ = writeln!(fields, "    pub(crate) {prop}: {ty},");
                        let save = save.replace("t.", &format!("{n}."));
                        let _ = writeln!(init, "            {prop}: {save},");
                    }
                    ArgKind::TensorList => {
                        let _ = writeln!(fields, "    pub(crate) {prop}: Vec<{ty}>,");
                        let _ = writeln!(
                            init,
                            "            {prop}: {n}.iter().map(|t| {save}).collect(),"
                        );
                    }
                    _ => return Err(format!("'{prop}' of an optional tensor is not supported")),
                }
                let bind = match *ty {
                    "Vec<i64>" if a.kind == ArgKind::Tensor => {
                        format!("let {prop} = &self.{prop}[..];")
                    }
                    _ if a.kind == ArgKind::TensorList => format!("let {prop} = &self.{prop}[..];"),
                    _ => format!("let {prop} = self.{prop};"),
                };
                binds.push((prop, bind));
            }
        }
    }
    // Saved outputs.
    let mut after = String::new();
    for (i, name) in outs.names.iter().enumerate() {
        if !r.used.contains(name) {
            continue;
        }
        if outs.is_list {
            let _ = writeln!(fields, "    pub(crate) {name}: Vec<SavedVariable>,");
            let _ = writeln!(init, "            {name}: Vec::new(),");
            let _ = writeln!(
                release,
                "        self.{name}.iter_mut().for_each(SavedVariable::reset_data);"
            );
            binds.push((
                name.clone(),
                format!("let {name}_owned = self.{name}.iter().map(|s| s.unpack(ctx.node)).collect::<Result<Vec<Tensor>>>()?; let {name} = &{name}_owned[..];"),
            ));
            let _ = writeln!(after, "        grad_fn.{name} = result.iter().enumerate().map(|(i, t)| SavedVariable::new_output(t, i, true)).collect::<Result<_>>()?;");
        } else {
            let _ = writeln!(fields, "    pub(crate) {name}: SavedVariable,");
            let _ = writeln!(init, "            {name}: SavedVariable::default(),");
            let _ = writeln!(release, "        self.{name}.reset_data();");
            binds.push((
                name.clone(),
                format!("let {name} = &self.{name}.unpack(ctx.node)?;"),
            ));
            let differentiable = r.output_differentiable.get(i).copied().unwrap_or(true);
            let _ = writeln!(after, "        grad_fn.{name} = SavedVariable::new_output(&out{i}, {i}, {differentiable})?;");
        }
    }
    let diff_flags = format!(
        "[{}]",
        r.output_differentiable
            .iter()
            .map(bool::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(
        after,
        "        let outputs = {};\n        let node = record::make_node({node:?}, grad_fn, edges, &outputs, seq);",
        outs.list
    );
    if inplace {
        let _ = writeln!(after, "        crate::view::rebase_history(self_, node)?;");
    } else {
        let _ = writeln!(
            after,
            "        record::set_history(&outputs, &node, &{diff_flags})?;"
        );
    }

    // apply(): one block per formula.
    let range_of = |p: usize| -> String {
        if has_lists {
            format!("self.ranges[{p}].clone()")
        } else {
            format!("{p}..{}", p + 1)
        }
    };
    let wanted = |p: usize| -> String {
        if has_lists {
            format!("ctx.should_compute_any(self.ranges[{p}].clone())")
        } else {
            format!("ctx.should_compute_output({p})")
        }
    };
    let start_of = |p: usize| -> String {
        if has_lists {
            format!("self.ranges[{p}].start")
        } else {
            p.to_string()
        }
    };
    let mut apply = String::new();
    for f in &r.formulas {
        let cond = f
            .inputs
            .iter()
            .map(|&p| wanted(p))
            .collect::<Vec<_>>()
            .join(" || ");
        let _ = writeln!(apply, "        if {cond} {{");
        if let Some(name) = &f.not_implemented {
            let _ = writeln!(
                apply,
                "            return Err(Error::runtime(\"the derivative for '{name}' is not implemented.\"));\n        }}"
            );
            continue;
        }
        let expr = f.expr.as_deref().unwrap_or_default();
        let used = identifiers(expr);
        for (id, bind) in &binds {
            if used.contains(id) {
                let _ = writeln!(apply, "            {bind}");
            }
        }
        let single =
            f.inputs.len() == 1 && args[r.diff_inputs[f.inputs[0]]].kind != ArgKind::TensorList;
        if used.contains("grad_input_mask") {
            let _ = writeln!(
                apply,
                "            let grad_input_mask = [{}];",
                f.inputs
                    .iter()
                    .map(|&p| wanted(p))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        if single {
            let _ = writeln!(
                apply,
                "            let g: Tensor = {{ {expr} }}?;\n            out[{}] = g;\n        }}",
                start_of(f.inputs[0])
            );
        } else if f.inputs.len() == 1 {
            let _ = writeln!(
                apply,
                "            let gs: Vec<Tensor> = {{ {expr} }}?;\n            let r = {};\n            for (j, g) in gs.into_iter().enumerate().take(r.len()) {{ out[r.start + j] = g; }}\n        }}",
                range_of(f.inputs[0])
            );
        } else {
            let starts = f
                .inputs
                .iter()
                .map(|&p| start_of(p))
                .collect::<Vec<_>>()
                .join(", ");
            let _ = writeln!(
                apply,
                "            let gs: Vec<Tensor> = {{ {expr} }}?;\n            for (g, at) in gs.into_iter().zip([{starts}]) {{ out[at] = g; }}\n        }}"
            );
        }
    }
    let all_undefined = {
        let diff: Vec<usize> = (0..outs.names.len().max(1))
            .filter(|&i| r.output_differentiable.get(i).copied().unwrap_or(true))
            .collect();
        if outs.is_list || diff.len() == outs.names.len().max(1) {
            "grads.iter().all(|g| !g.defined())".to_string()
        } else {
            format!(
                "[{}].iter().all(|&i| !grads.get(i).is_some_and(|g| g.defined()))",
                diff.iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    };
    let code = format!(
        "/// The backward of `{schema}` (`{node}`).\npub struct {struct_name} {{\n{fields}}}\n\n\
         impl BackwardFunction for {struct_name} {{\n\
         \x20   #[allow(unused_variables, unused_mut, clippy::all)]\n\
         \x20   fn apply(&mut self, ctx: &ApplyContext<'_>, grads: Vec<Tensor>) -> Result<Vec<Tensor>> {{\n\
         \x20       let n = ctx.needed.len();\n\
         \x20       if {all_undefined} {{\n\
         \x20           return Ok(record::undefined_grads(n));\n\
         \x20       }}\n\
         \x20       let grads = &grads[..];\n\
         \x20       let grad = &grads[0];\n\
         \x20       let mut out = record::undefined_grads(n);\n\
         {apply}\
         \x20       Ok(out)\n\
         \x20   }}\n\n\
         \x20   fn release_variables(&mut self) {{\n{release}    }}\n}}\n\n"
    );
    let struct_init = format!("crate::generated::functions::{struct_name} {{\n{init}        }}");
    Ok((code, struct_init, after))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_names_follow_torchgen() {
        assert_eq!(node_stem("max_pool2d_with_indices"), "MaxPool2DWithIndices");
        assert_eq!(node_stem("_softmax"), "Softmax");
        assert_eq!(node_stem("mul"), "Mul");
        assert_eq!(node_stem("_slow_conv2d_forward"), "SlowConv2D");
    }

    #[test]
    fn formulas_spell_self_as_rust_can() {
        assert_eq!(
            rust_formula("mul_tensor_backward(grad, self, other_dtype)"),
            "mul_tensor_backward(grad, self_, other_dtype)"
        );
        let ids = identifiers("ops::mul_tensor(grad, &self.sizes()) + self_sizes");
        assert!(ids.contains("grad") && ids.contains("self_sizes"));
        assert!(!ids.contains("mul_tensor") && !ids.contains("sizes"));
    }
}
