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

/// What one operator contributes: its backward node, its Autograd kernel
/// and the name it is registered under, and its ADInplaceOrView kernel
/// (code and name) if it has one.
struct RenderedOp {
    node_code: String,
    kernel: String,
    kernel_name: String,
    registered: String,
    view_kernel: Option<(String, String)>,
}

/// Renders the backward node and the kernels of one operator.
fn render_op(
    schema: &FunctionSchema,
    derivatives: &Derivatives,
    node_names: &HashMap<String, String>,
) -> Result<RenderedOp, String> {
    let op = OpKernels::new(schema)?;
    // Only operators with tensor results record a node: not out=
    // operators, nor those returning values (or nothing).
    let outs = if op.is_out || op.values_only || schema.returns().is_empty() {
        None
    } else {
        Some(outputs(schema)?)
    };
    let view_kernel = op.view_kernel()?;
    let (node_code, kernel) = match outs {
        _ if op.is_out => (String::new(), op.out_kernel()),
        None => (String::new(), op.passthrough_kernel()),
        Some(outs) => {
            let resolved = op.resolve_entry(derivatives, node_names)?;
            op.recording_kernel(resolved.as_ref(), &outs)?
        }
    };
    Ok(RenderedOp {
        node_code,
        kernel,
        kernel_name: op.kernel_name(),
        registered: op.registered,
        view_kernel,
    })
}

/// An iterator of `Option<&Tensor>` over the tensors of `args`.
fn tensors_of(args: &[&Arg]) -> String {
    let mut e = "std::iter::empty::<Option<&Tensor>>()".to_string();
    for a in args {
        let _ = write!(e, ".chain({})", a.tensors_iter());
    }
    e
}

/// Whether some of `args` requires grad: their `requires_grad`, which the
/// kernels test before grad mode (a thread-local read only when some
/// argument requires grad).
fn any_requires_grad(args: &[&Arg]) -> String {
    let flags: Vec<String> = args.iter().map(|a| a.requires_grad_expr()).collect();
    if flags.is_empty() {
        "false".into()
    } else {
        flags.join(" || ")
    }
}

/// One operator whose kernels are being rendered: its schema, its
/// arguments, and what every kernel of it uses.
struct OpKernels<'a> {
    schema: &'a FunctionSchema,
    args: Vec<Arg>,
    /// The typed API's return type.
    ret_type: String,
    /// The base name (`add_`).
    base: &'a str,
    /// The typed API's function name (`add_tensor_`).
    fname: String,
    /// The name the kernels are registered under (`add_.Tensor`).
    registered: String,
    /// `, NAME: TYPE` per argument: the kernels' parameters.
    params: String,
    /// `NAME, ` per argument: the arguments of a redispatch.
    pass: String,
    inplace: bool,
    is_out: bool,
    /// A view operator (its result aliases an argument).
    is_view: bool,
    /// Only values come out (`_local_scalar_dense`'s `Scalar`): there is
    /// nothing to record a gradient for.
    values_only: bool,
}

impl<'a> OpKernels<'a> {
    /// The kernels' context of the operator of `schema`.
    fn new(schema: &'a FunctionSchema) -> Result<OpKernels<'a>, String> {
        let args: Vec<Arg> = schema
            .arguments()
            .iter()
            .map(Arg::new)
            .collect::<Result<_, _>>()?;
        let ret_type = returns_type(schema.returns())?;
        let base = base_name(schema);
        let overload = schema.overload_name();
        let is_view = !schema.is_mutable()
            && args.iter().any(|a| a.is_view_base)
            && !NOT_VIEWS.contains(&base);
        let values_only = !schema.returns().is_empty()
            && schema.returns().iter().all(|r| {
                let t = r.real_type();
                *t != Type::Tensor
                    && t.list_element() != Some(&Type::Tensor)
                    && t.optional_element() != Some(&Type::Tensor)
            });
        Ok(OpKernels {
            fname: function_name(base, overload),
            registered: entry_name(base, overload),
            params: args
                .iter()
                .map(|a| format!(", {}: {}", a.name, a.rust_type))
                .collect(),
            pass: args.iter().map(|a| format!("{}, ", a.pass())).collect(),
            inplace: is_inplace(schema),
            is_out: args.iter().any(|a| a.is_out),
            schema,
            args,
            ret_type,
            base,
            is_view,
            values_only,
        })
    }

    /// The Autograd kernel's name.
    fn kernel_name(&self) -> String {
        with_suffix(&self.fname, "autograd")
    }

    /// The tensor arguments that are not out arguments.
    fn inputs(&self) -> Vec<&Arg> {
        self.args
            .iter()
            .filter(|a| a.is_tensor() && !a.is_out)
            .collect()
    }

    /// `NAME(ks: DispatchKeySet, PARAMS) -> Result<RET>`: a kernel's
    /// signature.
    fn signature(&self, name: &str) -> String {
        format!(
            "{name}(ks: DispatchKeySet{}) -> Result<{}>",
            self.params, self.ret_type
        )
    }

    /// A kernel documented as the `what` of the schema, with attributes
    /// `attrs` and the lines of `body`.
    fn kernel(&self, what: &str, attrs: &str, name: &str, body: &str) -> String {
        format!(
            "/// {what} of `{}`.\n{attrs}pub fn {} {{\n{body}}}\n\n",
            self.schema,
            self.signature(name)
        )
    }

    /// The call below the keys of `keyset` (a block).
    fn redispatch(&self, keyset: &str) -> String {
        format!(
            "{{\n\
             \x20       let _guard = AutoDispatchBelowADInplaceOrView::new();\n\
             \x20       ops::{}()?.redispatch(ks.intersection({keyset}), ({}))?\n\
             \x20   }}",
            with_suffix(&self.fname, "op"),
            self.pass
        )
    }

    /// The ADInplaceOrView kernel of in-place, out= and view operators
    /// (torchgen's; a functional operator that writes some of its
    /// arguments, such as `_native_batch_norm_legit`, gets none), and its
    /// name.
    fn view_kernel(&self) -> Result<Option<(String, String)>, String> {
        if !((self.inplace && self.schema.is_mutable()) || self.is_out || self.is_view) {
            return Ok(None);
        }
        let name = with_suffix(&self.fname, "ad_inplace_or_view");
        let body = format!(
            "    let result = {};\n{}{}    Ok(result)\n",
            self.redispatch("AFTER_AD_INPLACE_OR_VIEW_KEYSET"),
            self.version_bumps(),
            self.view_links()?
        );
        let kernel = self.kernel("ADInplaceOrView kernel", "", &name, &body);
        Ok(Some((kernel, name)))
    }

    /// Bumps the version of each argument the operator writes.
    fn version_bumps(&self) -> String {
        let mut bumps = String::new();
        for a in self.args.iter().filter(|a| a.is_write) {
            let n = &a.name;
            match a.kind {
                ArgKind::Tensor => {
                    let _ = writeln!(bumps, "    record::increment_version({n})?;");
                }
                ArgKind::OptTensor => {
                    let _ = writeln!(
                        bumps,
                        "    if let Some(t) = {n} {{ record::increment_version(t)?; }}"
                    );
                }
                ArgKind::TensorList => {
                    let _ = writeln!(
                        bumps,
                        "    for t in {n} {{ record::increment_version(t)?; }}"
                    );
                }
                ArgKind::Other => {}
            }
        }
        bumps
    }

    /// Makes a view operator's results views of its base.
    fn view_links(&self) -> Result<String, String> {
        let mut links = String::new();
        if !self.is_view {
            return Ok(links);
        }
        let base_arg = self
            .args
            .iter()
            .find(|a| a.is_view_base && a.kind == ArgKind::Tensor)
            .ok_or("a view operator without a Tensor base")?;
        let returns = self.schema.returns();
        if returns.len() == 1 && matches!(returns[0].real_type(), Type::List(_)) {
            let _ = writeln!(
                links,
                "    for v in &result {{ crate::view::as_view({}, v)?; }}",
                base_arg.name
            );
        } else if returns.len() == 1 {
            let _ = writeln!(
                links,
                "    crate::view::as_view({}, &result)?;",
                base_arg.name
            );
        }
        Ok(links)
    }

    /// The Autograd kernel of an out= operator: it refuses inputs and
    /// outputs that require grad.
    fn out_kernel(&self) -> String {
        let outs = self.args.iter().filter(|a| a.is_out && a.is_tensor());
        let checked: Vec<&Arg> = self.inputs().into_iter().chain(outs).collect();
        let body = format!(
            "    if record::grad_mode_and({}) {{\n\
             \x20       return Err(record::out_requires_grad_error({:?}));\n\
             \x20   }}\n\
             \x20   Ok({})\n",
            any_requires_grad(&checked),
            self.base,
            self.redispatch("AFTER_AUTOGRAD_KEYSET")
        );
        self.kernel("Autograd kernel", "", &self.kernel_name(), &body)
    }

    /// The Autograd kernel of an operator that returns only values, or
    /// nothing (`_assert_scalar`): the call goes below autograd as it is,
    /// as torchgen's VariableType kernels do.
    fn passthrough_kernel(&self) -> String {
        let redispatch = self.redispatch("AFTER_AUTOGRAD_KEYSET");
        let body = if self.schema.returns().is_empty() {
            format!("    {redispatch};\n    Ok(())\n")
        } else {
            format!("    Ok({redispatch})\n")
        };
        self.kernel("Autograd kernel", "", &self.kernel_name(), &body)
    }

    /// The operator's derivatives entry (its own, or for an in-place
    /// operator its functional twin's), resolved against its schema.
    fn resolve_entry(
        &self,
        derivatives: &Derivatives,
        node_names: &HashMap<String, String>,
    ) -> Result<Option<Resolved>, String> {
        let overload = self.schema.overload_name();
        let own = derivatives.get(&self.registered);
        let entry = own.or_else(|| {
            self.inplace
                .then(|| derivatives.get(&entry_name(self.base.trim_end_matches('_'), overload)))
                .flatten()
        });
        let Some(e) = entry else {
            return Ok(None);
        };
        let key = entry_name(base_name(e.schema()), e.schema().overload_name());
        let node = node_names.get(&key).cloned().unwrap_or_default();
        let (theirs, ours) = (e.schema().arguments(), self.schema.arguments());
        if theirs.len() != ours.len() || theirs.iter().zip(ours).any(|(a, b)| a.name() != b.name())
        {
            return Err(format!(
                "the derivatives entry's schema does not match: {}",
                e.schema()
            ));
        }
        resolve(e, node, &self.args, self.schema.returns().len()).map(Some)
    }

    /// The Autograd kernel of an operator with tensor results, and the
    /// code of its backward node (empty when it records none).
    fn recording_kernel(
        &self,
        resolved: Option<&Resolved>,
        outs: &Outputs,
    ) -> Result<(String, String), String> {
        let redispatch = self.redispatch("AFTER_AUTOGRAD_KEYSET");
        let pre = self.record_prelude(&redispatch);
        let undifferentiable = DONT_REQUIRE_DERIVATIVE.contains(&self.base.trim_end_matches('_'));
        let mut node_code = String::new();
        let body = match resolved {
            _ if undifferentiable && !self.inplace => format!("    Ok({redispatch})\n"),
            _ if undifferentiable => format!("{pre}    Ok({redispatch})\n"),
            Some(r) if r.output_differentiable.iter().all(|d| !d) => {
                format!("{pre}    Ok({redispatch})\n")
            }
            Some(r) => {
                let node = render_node(self, r, outs)?;
                node_code = node.code;
                let checks = self.non_differentiable_checks(r);
                let diff: Vec<&Arg> = r.diff_inputs.iter().map(|&i| &self.args[i]).collect();
                let mutability = if node.after.contains("grad_fn.") {
                    "mut "
                } else {
                    ""
                };
                let grad_fn = format!("    let {mutability}grad_fn = {};\n", node.struct_init);
                let record = record_around_call(&diff, &grad_fn, &redispatch, &node.after, outs);
                format!("{pre}{checks}{record}")
            }
            None => format!("{pre}{}", self.record_not_implemented(outs, &redispatch)),
        };
        let kernel = self.kernel("Autograd kernel", "#[inline]\n", &self.kernel_name(), &body);
        Ok((node_code, kernel))
    }

    /// The kernel's fast path (nothing to record: the call alone), then
    /// the head of the recording function it calls otherwise. That part
    /// is a function of its own, so that the kernel stays small enough to
    /// be inlined into the dispatcher's trampoline.
    fn record_prelude(&self, redispatch: &str) -> String {
        let mut pre = String::new();
        let _ = writeln!(
            pre,
            "    let requires_grad = record::grad_mode_and({});",
            any_requires_grad(&self.inputs())
        );
        let record_name = with_suffix(&self.fname, "autograd_record");
        let arg_names: String = self
            .args
            .iter()
            .map(|a| format!(", {}", a.pass()))
            .collect();
        let _ = writeln!(
            pre,
            "    if !requires_grad {{\n        return Ok({redispatch});\n    }}\n    {record_name}(ks{arg_names})\n}}\n\n\
             /// The recording part of [`{}`]: some input requires grad.\n\
             #[inline(never)]\n\
             fn {} {{",
            self.kernel_name(),
            self.signature(&record_name)
        );
        if self.inplace {
            let _ = writeln!(pre, "    crate::view::check_inplace(self_, true)?;");
        }
        pre
    }

    /// Checks that the tensors marked `non_differentiable` do not require
    /// grad.
    fn non_differentiable_checks(&self, r: &Resolved) -> String {
        let mut checks = String::new();
        for &i in &r.non_differentiable {
            let a = &self.args[i];
            let t = match a.kind {
                ArgKind::Tensor => format!("Some({})", a.name),
                ArgKind::OptTensor => a.name.clone(),
                _ => continue,
            };
            let _ = writeln!(
                checks,
                "    record::check_no_requires_grad({t}, {:?}, {:?})?;",
                a.schema_name,
                self.base.trim_end_matches('_')
            );
        }
        checks
    }

    /// Records PyTorch's `NotImplemented` node (an operator without
    /// formulas) around the call.
    fn record_not_implemented(&self, outs: &Outputs, redispatch: &str) -> String {
        let node = format!(
            "        let node = record::make_node(\"NotImplemented\", record::NotImplemented {{ name: {:?} }}, edges, &{}, seq);\n",
            self.base.trim_end_matches('_'),
            outs.list
        );
        let after = node + &self.history(&outs.list, "[]");
        record_around_call(&self.inputs(), "", redispatch, &after, outs)
    }

    /// Sets the history of the outputs (`outputs`, differentiable per
    /// `flags`) to `node`, or for an in-place operator rebases `self`'s.
    fn history(&self, outputs: &str, flags: &str) -> String {
        if self.inplace {
            "        crate::view::rebase_history(self_, node)?;\n".to_string()
        } else {
            format!("        record::set_history(&{outputs}, &node, &{flags})?;\n")
        }
    }
}

/// The recording around the call: the next edges of `edges_of`, the
/// sequence number, `before` (statements), the call, then the statements
/// `after` in a block, and the result.
fn record_around_call(
    edges_of: &[&Arg],
    before: &str,
    redispatch: &str,
    after: &str,
    outs: &Outputs,
) -> String {
    format!(
        "    let edges = record::collect_next_edges({})?;\n\
         \x20   let seq = record::sequence_nr();\n\
         {before}\
         \x20   let {} = {redispatch};\n\
         \x20   {{\n{after}\
         \x20   }}\n\
         \x20   Ok({})\n",
        tensors_of(edges_of),
        outs.pattern,
        outs.ret
    )
}

/// A rendered backward node: the struct and its `BackwardFunction` impl;
/// the struct literal the kernel builds before the call; the code after
/// the call that saves outputs and records the node.
struct RenderedNode {
    code: String,
    struct_init: String,
    after: String,
}

/// The backward node of operator `op` for its formulas `r`.
fn render_node(op: &OpKernels<'_>, r: &Resolved, outs: &Outputs) -> Result<RenderedNode, String> {
    let mut node = NodeBuilder::new(op, r);
    node.save_ranges();
    for a in op.args.iter().filter(|a| !a.is_out) {
        node.save_argument(a);
        node.save_properties(a)?;
    }
    node.save_outputs(outs);
    node.record(outs);
    Ok(node.finish(outs))
}

/// A backward node being rendered: the operator, its formulas, and the
/// node's pieces so far.
struct NodeBuilder<'o, 'a> {
    op: &'o OpKernels<'a>,
    r: &'o Resolved,
    /// Some differentiable input is a `Tensor[]`: the node keeps the range
    /// of gradients of each input.
    has_lists: bool,
    /// The struct's fields.
    fields: String,
    /// The struct literal's fields.
    init: String,
    /// The body of `release_variables`.
    release: String,
    /// Per identifier a formula can name, its binding in `apply`.
    binds: Vec<(String, String)>,
    /// The code after the call.
    after: String,
}

impl<'o, 'a> NodeBuilder<'o, 'a> {
    /// An empty node of `op` for formulas `r`.
    fn new(op: &'o OpKernels<'a>, r: &'o Resolved) -> NodeBuilder<'o, 'a> {
        let has_lists = r
            .diff_inputs
            .iter()
            .any(|&i| op.args[i].kind == ArgKind::TensorList);
        NodeBuilder {
            op,
            r,
            has_lists,
            fields: String::new(),
            init: String::new(),
            release: String::new(),
            binds: Vec::new(),
            after: String::new(),
        }
    }

    /// Declares field `name: ty`, which the kernel sets to `init`.
    fn declare(&mut self, name: &str, ty: &str, init: &str) {
        let _ = writeln!(self.fields, "    pub(crate) {name}: {ty},");
        let _ = writeln!(self.init, "            {name}: {init},");
    }

    /// Releases field `name` in `release_variables` by `how`.
    fn release_with(&mut self, name: &str, how: &str) {
        let _ = writeln!(self.release, "        self.{name}{how};");
    }

    /// Binds `name` in `apply` by `code`, for the formulas that use it.
    fn bind(&mut self, name: &str, code: String) {
        self.binds.push((name.to_string(), code));
    }

    /// Saves a tensor (`init`) in a `SavedVariable` field.
    fn saved_variable(&mut self, name: &str, init: &str) {
        self.declare(name, "SavedVariable", init);
        self.release_with(name, ".reset_data()");
        self.bind(
            name,
            format!("let {name} = &self.{name}.unpack(ctx.node)?;"),
        );
    }

    /// Saves tensors (`init`) in a `Vec<SavedVariable>` field.
    fn saved_variables(&mut self, name: &str, init: &str) {
        self.declare(name, "Vec<SavedVariable>", init);
        self.release_with(name, ".iter_mut().for_each(SavedVariable::reset_data)");
        self.bind(
            name,
            format!("let {name}_owned = self.{name}.iter().map(|s| s.unpack(ctx.node)).collect::<Result<Vec<Tensor>>>()?; let {name} = &{name}_owned[..];"),
        );
    }

    /// With `Tensor[]` inputs, the range of gradients of each
    /// differentiable input.
    fn save_ranges(&mut self) {
        if !self.has_lists {
            return;
        }
        let lens: Vec<String> = self
            .r
            .diff_inputs
            .iter()
            .map(|&i| {
                let a = &self.op.args[i];
                if a.kind == ArgKind::TensorList {
                    format!("{}.len()", a.name)
                } else {
                    "1".into()
                }
            })
            .collect();
        let init = format!("record::ranges(&[{}])", lens.join(", "));
        self.declare("ranges", "Vec<std::ops::Range<usize>>", &init);
    }

    /// Saves argument `a` if a formula names it.
    fn save_argument(&mut self, a: &Arg) {
        let n = &a.name;
        if !self.r.used.contains(n) {
            return;
        }
        match a.kind {
            ArgKind::Tensor => {
                let saved = if self.op.inplace && a.is_write {
                    // The value before the write (PyTorch's original_self).
                    format!("&{{ let _guard = AutoDispatchBelowADInplaceOrView::new(); ops::clone({n})? }}")
                } else {
                    n.clone()
                };
                self.saved_variable(n, &format!("SavedVariable::new({saved}, false)?"));
            }
            ArgKind::OptTensor => {
                let init = format!("SavedVariable::new_opt({n}, false)?");
                self.declare(n, "SavedVariable", &init);
                self.release_with(n, ".reset_data()");
                self.bind(
                    n,
                    format!("let {n}_owned = self.{n}.unpack(ctx.node)?; let {n} = if {n}_owned.defined() {{ Some(&{n}_owned) }} else {{ None }};"),
                );
            }
            ArgKind::TensorList => {
                let init = format!(
                    "{n}.iter().map(|t| SavedVariable::new(t, false)).collect::<Result<_>>()?"
                );
                self.saved_variables(n, &init);
            }
            ArgKind::Other => {
                let (ty, save) = a.saved_value();
                self.declare(n, &ty, &save);
                self.bind(n, a.bind_value());
            }
        }
    }

    /// Saves the properties of tensor argument `a` that formulas name
    /// instead of the tensor (`self_sizes`).
    fn save_properties(&mut self, a: &Arg) -> Result<(), String> {
        if !a.is_tensor() {
            return Ok(());
        }
        let n = &a.name;
        let stem = n.trim_end_matches('_');
        for (suffix, ty, save) in TENSOR_PROPERTIES {
            let prop = format!("{stem}_{suffix}");
            if !self.r.used.contains(&prop) {
                continue;
            }
            let bind = match a.kind {
                ArgKind::Tensor => {
                    self.declare(&prop, ty, &save.replace("t.", &format!("{n}.")));
                    if *ty == "Vec<i64>" {
                        format!("let {prop} = &self.{prop}[..];")
                    } else {
                        format!("let {prop} = self.{prop};")
                    }
                }
                ArgKind::TensorList => {
                    let init = format!("{n}.iter().map(|t| {save}).collect()");
                    self.declare(&prop, &format!("Vec<{ty}>"), &init);
                    format!("let {prop} = &self.{prop}[..];")
                }
                _ => return Err(format!("'{prop}' of an optional tensor is not supported")),
            };
            self.bind(&prop, bind);
        }
        Ok(())
    }

    /// Saves the outputs formulas name; the kernel sets them after the
    /// call.
    fn save_outputs(&mut self, outs: &Outputs) {
        for (i, name) in outs.names.iter().enumerate() {
            if !self.r.used.contains(name) {
                continue;
            }
            if outs.is_list {
                self.saved_variables(name, "Vec::new()");
                let _ = writeln!(self.after, "        grad_fn.{name} = result.iter().enumerate().map(|(i, t)| SavedVariable::new_output(t, i, true)).collect::<Result<_>>()?;");
            } else {
                self.saved_variable(name, "SavedVariable::default()");
                let differentiable = self.r.output_differentiable.get(i).copied().unwrap_or(true);
                let _ = writeln!(self.after, "        grad_fn.{name} = SavedVariable::new_output(&out{i}, {i}, {differentiable})?;");
            }
        }
    }

    /// Records the node as the outputs' history, after the call.
    fn record(&mut self, outs: &Outputs) {
        let diff_flags = format!(
            "[{}]",
            self.r
                .output_differentiable
                .iter()
                .map(bool::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        );
        let _ = writeln!(
            self.after,
            "        let outputs = {};\n        let node = record::make_node({:?}, grad_fn, edges, &outputs, seq);",
            outs.list, self.r.node
        );
        let history = self.op.history("outputs", &diff_flags);
        self.after.push_str(&history);
    }

    /// The test in `apply` of whether input `p`'s gradient is wanted.
    fn wanted(&self, p: usize) -> String {
        if self.has_lists {
            format!("ctx.should_compute_any(self.ranges[{p}].clone())")
        } else {
            format!("ctx.should_compute_output({p})")
        }
    }

    /// The range of input `p`'s gradients.
    fn range_of(&self, p: usize) -> String {
        if self.has_lists {
            format!("self.ranges[{p}].clone()")
        } else {
            format!("{p}..{}", p + 1)
        }
    }

    /// The position of input `p`'s (first) gradient.
    fn start_of(&self, p: usize) -> String {
        if self.has_lists {
            format!("self.ranges[{p}].start")
        } else {
            p.to_string()
        }
    }

    /// The block of `apply` that runs formula `f` when one of its inputs'
    /// gradients is wanted.
    fn formula_block(&self, f: &ResolvedFormula) -> String {
        let mut block = String::new();
        let wanted: Vec<String> = f.inputs.iter().map(|&p| self.wanted(p)).collect();
        let _ = writeln!(block, "        if {} {{", wanted.join(" || "));
        if let Some(name) = &f.not_implemented {
            let _ = writeln!(
                block,
                "            return Err(Error::runtime(\"the derivative for '{name}' is not implemented.\"));\n        }}"
            );
            return block;
        }
        let expr = f.expr.as_deref().unwrap_or_default();
        let used = identifiers(expr);
        for (id, bind) in &self.binds {
            if used.contains(id) {
                let _ = writeln!(block, "            {bind}");
            }
        }
        if used.contains("grad_input_mask") {
            let _ = writeln!(
                block,
                "            let grad_input_mask = [{}];",
                wanted.join(", ")
            );
        }
        block.push_str(&self.store_gradients(f, expr));
        block
    }

    /// Stores the gradients that formula `f` (`expr`) computes at its
    /// inputs' positions, and closes its block.
    fn store_gradients(&self, f: &ResolvedFormula, expr: &str) -> String {
        match f.inputs[..] {
            [p] if self.op.args[self.r.diff_inputs[p]].kind != ArgKind::TensorList => format!(
                "            let g: Tensor = {{ {expr} }}?;\n            out[{}] = g;\n        }}\n",
                self.start_of(p)
            ),
            [p] => format!(
                "            let gs: Vec<Tensor> = {{ {expr} }}?;\n            let r = {};\n            for (j, g) in gs.into_iter().enumerate().take(r.len()) {{ out[r.start + j] = g; }}\n        }}\n",
                self.range_of(p)
            ),
            _ => {
                let starts: Vec<String> = f.inputs.iter().map(|&p| self.start_of(p)).collect();
                format!(
                    "            let gs: Vec<Tensor> = {{ {expr} }}?;\n            for (g, at) in gs.into_iter().zip([{}]) {{ out[at] = g; }}\n        }}\n",
                    starts.join(", ")
                )
            }
        }
    }

    /// The test in `apply` of whether every differentiable output's
    /// gradient is undefined (then so are the inputs').
    fn all_undefined(&self, outs: &Outputs) -> String {
        let n = outs.names.len().max(1);
        let diff: Vec<usize> = (0..n)
            .filter(|&i| self.r.output_differentiable.get(i).copied().unwrap_or(true))
            .collect();
        if outs.is_list || diff.len() == n {
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
    }

    /// The node's struct, its impl, its struct literal and the code after
    /// the call.
    fn finish(self, outs: &Outputs) -> RenderedNode {
        let (schema, node) = (self.op.schema, &self.r.node);
        // Instances of one node type serve several operators (in-place
        // twins): name the struct after the operator.
        let struct_name = format!("{}{}", node, if self.op.inplace { "Inplace" } else { "" });
        let all_undefined = self.all_undefined(outs);
        let apply: String = self
            .r
            .formulas
            .iter()
            .map(|f| self.formula_block(f))
            .collect();
        let (fields, release) = (&self.fields, &self.release);
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
        let struct_init = format!(
            "crate::generated::functions::{struct_name} {{\n{}        }}",
            self.init
        );
        RenderedNode {
            code,
            struct_init,
            after: self.after,
        }
    }
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
