//! A serialized graph (`graph_module.graph` of `model.json`, and the
//! nested graphs of higher-order operators) turned into a [`Graph`], as
//! `torch.export.load`'s `GraphModuleDeserializer` does: a placeholder per
//! input, a node per call, whose target is an operator overload
//! (`torch.ops.aten.add.Tensor`), a higher-order operator
//! (`torch.ops.higher_order.wrap_with_set_grad_enabled`) or a Python
//! function of sizes (`_operator.add`); `getitem` nodes for the elements
//! of multi-result calls; the output. Every problem is an error naming the
//! JSON path.

use std::collections::HashMap;
use std::sync::Arc;

use aten_boxing::schema::Type;
use aten_boxing::IValue;
use c10_core::{Complex64, Device, Result};

use super::codes;
use super::json::At;
use crate::builtins::Builtin;
use crate::graph::{Arg, Graph, Node, NodeKind};

/// A graph being built: its nodes and the node each value name refers to.
struct Builder {
    graph: Graph,
    names: HashMap<String, usize>,
}

impl Builder {
    fn push(&mut self, name: &str, kind: NodeKind, at: &At<'_>) -> Result<usize> {
        let index = self.graph.nodes.len();
        if self.names.insert(name.to_string(), index).is_some() {
            return Err(at.error(format!("value `{name}` is defined twice")));
        }
        self.graph.nodes.push(Node::new(name, kind));
        Ok(index)
    }

    fn get(&self, name: &str, at: &At<'_>) -> Result<usize> {
        self.names.get(name).copied().ok_or_else(|| {
            at.error(format!(
                "refers to `{name}`, which no graph input or earlier node defines"
            ))
        })
    }

    /// Pushes a node carrying the serialized node's `meta`.
    fn push_with_meta(
        &mut self,
        name: &str,
        kind: NodeKind,
        meta: Vec<(String, String)>,
        at: &At<'_>,
    ) -> Result<usize> {
        let index = self.push(name, kind, at)?;
        self.graph.nodes[index].meta = meta;
        Ok(index)
    }

    /// A fresh name for a node no value names (a subgraph, a call whose
    /// results are all taken apart).
    fn fresh(&self, base: &str) -> String {
        if !self.names.contains_key(base) {
            return base.to_string();
        }
        (1..)
            .map(|i| format!("{base}_{i}"))
            .find(|n| !self.names.contains_key(n))
            .unwrap_or_default()
    }
}

/// A serialized `Device` (`{"type": "cpu", "index": null}`).
pub(crate) fn device(at: &At<'_>) -> Result<Device> {
    let kind = at.field("type")?.str()?;
    let text = match at.opt("index")? {
        Some(i) => format!("{kind}:{}", i.int()?),
        None => kind.to_string(),
    };
    text.parse::<Device>()
        .map_err(|e| at.error(format!("bad device `{text}`: {}", e.message())))
}

/// The graph at `at` (a serialized `Graph`).
pub(crate) fn graph(at: &At<'_>) -> Result<Graph> {
    let mut b = Builder {
        graph: Graph::default(),
        names: HashMap::new(),
    };
    for input in at.field("inputs")?.items()? {
        let name = input_name(&input)?;
        b.push(name, NodeKind::Placeholder, &input)?;
    }
    for node in at.field("nodes")?.items()? {
        call(&mut b, &node)?;
    }
    let outputs = at
        .field("outputs")?
        .items()?
        .iter()
        .map(|o| argument(&mut b, o))
        .collect::<Result<Vec<_>>>()?;
    let name = b.fresh("output");
    b.push(&name, NodeKind::Output(outputs), at)?;
    Ok(b.graph)
}

/// The name of a graph input (`{"as_tensor": {"name": ...}}`, or a
/// `SymInt` input `{"as_sym_int": {"as_name": ...}}`).
fn input_name<'a>(input: &At<'a>) -> Result<&'a str> {
    match input.variant()? {
        ("as_tensor", t) => t.field("name")?.str(),
        ("as_sym_int" | "as_sym_float" | "as_sym_bool", v) => match v.variant()? {
            ("as_name", n) => n.str(),
            (other, _) => Err(v.error(format!("unsupported symbolic input form `{other}`"))),
        },
        (other, _) => Err(input.error(format!(
            "unsupported graph input kind `{other}` (tensors and symbolic sizes only)"
        ))),
    }
}

/// A symbolic value: `{"as_name": N}` (a node's) or a constant.
fn symbolic(b: &Builder, at: &At<'_>) -> Result<Arg> {
    match at.variant()? {
        ("as_name", n) => Ok(Arg::Node(b.get(n.str()?, &n)?)),
        ("as_int", v) => Ok(Arg::Const(IValue::Int(v.int()?))),
        ("as_float", v) => Ok(Arg::Const(IValue::double(v.float()?))),
        ("as_bool", v) => Ok(Arg::Const(IValue::bool(v.bool()?))),
        (other, v) => Err(v.error(format!("unsupported symbolic value form `{other}`"))),
    }
}

/// An `Argument` of the serialized graph.
fn argument(b: &mut Builder, at: &At<'_>) -> Result<Arg> {
    let (kind, v) = at.variant()?;
    match kind {
        "as_tensor" => tensor(b, &v),
        "as_tensors" => Ok(Arg::List(
            v.items()?
                .iter()
                .map(|t| tensor(b, t))
                .collect::<Result<_>>()?,
        )),
        "as_optional_tensor" => optional_tensor(b, &v, ""),
        "as_optional_tensors" => Ok(Arg::List(
            v.items()?
                .iter()
                .map(|t| optional_tensor(b, t, " in a `Tensor?[]`"))
                .collect::<Result<_>>()?,
        )),
        "as_sym_int" | "as_sym_float" | "as_sym_bool" => symbolic(b, &v),
        "as_sym_ints" | "as_sym_floats" | "as_sym_bools" => symbolic_list(b, kind, &v),
        "as_graph" => subgraph(b, &v),
        _ => match constant(kind, &v)? {
            Some(value) => Ok(Arg::Const(value)),
            None => Err(at.error(format!("unsupported argument kind `{kind}`"))),
        },
    }
}

/// A tensor argument (`{"name": ...}`): the node that defines it.
fn tensor(b: &Builder, at: &At<'_>) -> Result<Arg> {
    Ok(Arg::Node(b.get(at.field("name")?.str()?, at)?))
}

/// A `Tensor?` argument (`{"as_tensor": ...}` or `{"as_none": ...}`);
/// `place` says where it is in the error for any other form.
fn optional_tensor(b: &Builder, at: &At<'_>, place: &str) -> Result<Arg> {
    match at.variant()? {
        ("as_tensor", t) => tensor(b, &t),
        ("as_none", _) => Ok(Arg::Const(IValue::None)),
        (other, _) => Err(at.error(format!(
            "expected `as_tensor` or `as_none`{place}, found `{other}`"
        ))),
    }
}

/// A list of symbolic values (`as_sym_ints`, ...): a constant list when
/// every element is a constant, else a list of arguments.
fn symbolic_list(b: &Builder, kind: &str, v: &At<'_>) -> Result<Arg> {
    let items = v
        .items()?
        .iter()
        .map(|i| symbolic(b, i))
        .collect::<Result<Vec<_>>>()?;
    if !items.iter().all(|i| matches!(i, Arg::Const(_))) {
        return Ok(Arg::List(items));
    }
    let values: Vec<IValue> = items
        .into_iter()
        .filter_map(|i| match i {
            Arg::Const(v) => Some(v),
            _ => None,
        })
        .collect();
    Ok(Arg::Const(match kind {
        "as_sym_ints" => IValue::IntList(Arc::new(
            values.iter().map(IValue::to_int).collect::<Result<_>>()?,
        )),
        _ => IValue::GenericList(Arc::new(values)),
    }))
}

/// A nested graph argument (`as_graph`), pushed as a subgraph node.
fn subgraph(b: &mut Builder, v: &At<'_>) -> Result<Arg> {
    let name = v.field("name")?.str()?;
    let mut sub = graph(&v.field("graph")?)?;
    sub.tuple_output = true;
    let node_name = b.fresh(name);
    let at = b.push(&node_name, NodeKind::Subgraph(Arc::new(sub)), v)?;
    Ok(Arg::Node(at))
}

/// The value of a constant argument of kind `kind` (`as_int`,
/// `as_floats`, `as_device`, ...); `None` for a kind that is not a
/// constant.
fn constant(kind: &str, v: &At<'_>) -> Result<Option<IValue>> {
    Ok(Some(match kind {
        "as_none" => IValue::None,
        "as_int" => IValue::Int(v.int()?),
        "as_ints" => IValue::IntList(Arc::new(v.ints()?)),
        "as_float" => IValue::double(v.float()?),
        "as_floats" => IValue::DoubleList(Arc::new(
            v.items()?.iter().map(At::float).collect::<Result<_>>()?,
        )),
        "as_bool" => IValue::bool(v.bool()?),
        "as_bools" => IValue::BoolList(Arc::new(
            v.items()?.iter().map(At::bool).collect::<Result<_>>()?,
        )),
        "as_string" => string(v)?,
        "as_strings" => IValue::GenericList(Arc::new(
            v.items()?.iter().map(string).collect::<Result<_>>()?,
        )),
        "as_complex" => {
            let (re, im) = (v.field("real")?.float()?, v.field("imag")?.float()?);
            IValue::ComplexDouble(Arc::new(Complex64::new(re, im)))
        }
        "as_scalar_type" | "as_layout" | "as_memory_format" => IValue::Int(enum_code(kind, v)?),
        "as_device" => IValue::device(device(v)?),
        _ => return Ok(None),
    }))
}

/// A string argument.
fn string(at: &At<'_>) -> Result<IValue> {
    Ok(IValue::String(Arc::new(at.str()?.to_string())))
}

/// A dtype, layout or memory format argument (`as_scalar_type`, ...): the
/// value of the enum its serialized code names.
fn enum_code(kind: &str, v: &At<'_>) -> Result<i64> {
    let code = v.int()?;
    match kind {
        "as_scalar_type" => codes::scalar_type(code)
            .map(|dtype| dtype as i64)
            .ok_or_else(|| {
                v.error(format!(
                    "dtype {} is not supported",
                    codes::scalar_type_name(code)
                ))
            }),
        "as_layout" => codes::layout(code)
            .map(|layout| layout as i64)
            .ok_or_else(|| v.error(format!("unknown layout code {code}"))),
        _ => codes::memory_format(code)
            .map(|format| format as i64)
            .ok_or_else(|| v.error(format!("unknown memory format code {code}"))),
    }
}

/// A node's keyword arguments, by name.
type Kwargs = Vec<(String, Arg)>;

/// What a node calls.
enum Target {
    Op(Arc<aten_ops::OpOverload>),
    HigherOrder(Arc<aten_ops::HigherOrderOperator>),
    Builtin(Builtin),
}

/// `torch.ops.aten.add.Tensor` -> `aten::add.Tensor`; `...relu.default`
/// -> `aten::relu`.
pub(crate) fn qualified_name(target: &str) -> Option<String> {
    let rest = target.strip_prefix("torch.ops.")?;
    let (namespace, rest) = rest.split_once('.')?;
    let (op, overload) = rest.rsplit_once('.')?;
    if namespace.is_empty() || op.is_empty() || overload.is_empty() || op.contains('.') {
        return None;
    }
    Some(if overload == "default" {
        format!("{namespace}::{op}")
    } else {
        format!("{namespace}::{op}.{overload}")
    })
}

fn target(name: &str, at: &At<'_>) -> Result<Target> {
    let text = at.str()?;
    if let Some(b) = Builtin::from_target(text) {
        return Ok(Target::Builtin(b));
    }
    if let Some(hop) = text.strip_prefix("torch.ops.higher_order.") {
        return aten_ops::ops()
            .higher_order()
            .op(hop)
            .map(Target::HigherOrder)
            .map_err(|e| {
                at.error(format!(
                    "node `{name}`: unknown higher-order operator `{text}`: {}",
                    e.message()
                ))
            });
    }
    let qualified = qualified_name(text).ok_or_else(|| {
        at.error(format!(
            "node `{name}`: unsupported target `{text}` (expected `torch.ops.<namespace>.<op>.<overload>` or a Python function of sizes such as `_operator.add`)"
        ))
    })?;
    aten_ops::ops()
        .overload(&qualified)
        .map(Target::Op)
        .map_err(|e| {
            at.error(format!(
                "node `{name}`: unknown operator `{text}`: {}",
                e.message()
            ))
        })
}

/// The name an output defines, if any (`as_tensor`, `as_sym_int` by name).
fn output_name<'a>(out: &At<'a>) -> Result<Option<&'a str>> {
    Ok(match out.variant()? {
        ("as_tensor", t) => Some(t.field("name")?.str()?),
        ("as_sym_int" | "as_sym_bool" | "as_sym_float", v) => match v.variant()? {
            ("as_name", n) => Some(n.str()?),
            _ => None,
        },
        _ => None,
    })
}

/// The serialized node at `at`.
fn call(b: &mut Builder, at: &At<'_>) -> Result<()> {
    let name = at.field("name")?.str()?.to_string();
    let target_at = at.field("target")?;
    let target = target(&name, &target_at)?;
    let (args, kwargs) = inputs(b, at, &name)?;
    let listed = at.field("outputs")?.items()?;
    let meta = metadata(at)?;
    let (kind, returns) = node_kind(target, args, kwargs, &name, at, &target_at)?;
    if let Some(returns) = &returns {
        if listed.len() != returns.len() {
            return Err(at.error(format!(
                "node `{name}`: {} outputs listed, but the operator returns {}",
                listed.len(),
                returns.len()
            )));
        }
    }
    // One result that is not a list: the node itself is the value.
    let list_output = match listed.first() {
        Some(o) => matches!(o.variant()?.0, "as_tensors" | "as_optional_tensors"),
        None => false,
    };
    if listed.len() == 1 && !list_output {
        let node_name = match output_name(&listed[0])? {
            Some(n) => n.to_string(),
            None => b.fresh(&name),
        };
        b.push_with_meta(&node_name, kind, meta, at)?;
        return Ok(());
    }
    let node_name = b.fresh(&name);
    let node = b.push_with_meta(&node_name, kind, meta, at)?;
    // A list result of a one-result operator is taken apart directly.
    let lists_one_result = listed.len() == 1 && returns.as_ref().is_some_and(|r| r.len() == 1);
    for (index, out) in listed.iter().enumerate() {
        let (kind, v) = out.variant()?;
        match kind {
            "as_tensors" | "as_optional_tensors" => {
                let list = if lists_one_result {
                    node
                } else {
                    let item = b.fresh(&format!("{node_name}_{index}"));
                    b.push(&item, NodeKind::GetItem { of: node, index }, out)?
                };
                list_items(b, list, &v)?;
            }
            _ => {
                if let Some(item) = output_name(out)? {
                    b.push(item, NodeKind::GetItem { of: node, index }, out)?;
                }
            }
        }
    }
    Ok(())
}

/// The node's inputs: the positional arguments, then the keyword ones
/// (`kind` 1 and 2 of a `NamedArgument`).
fn inputs(b: &mut Builder, at: &At<'_>, name: &str) -> Result<(Vec<Arg>, Kwargs)> {
    let mut args = Vec::new();
    let mut kwargs = Kwargs::new();
    for input in at.field("inputs")?.items()? {
        let arg_name = input.field("name")?.str()?;
        let kind = input
            .opt("kind")?
            .map(|k| k.int())
            .transpose()?
            .unwrap_or(1);
        let value = argument(b, &input.field("arg")?)?;
        match kind {
            1 => {
                if !kwargs.is_empty() {
                    return Err(input.error(format!(
                        "node `{name}`: positional argument `{arg_name}` after a keyword argument"
                    )));
                }
                args.push(value);
            }
            2 => kwargs.push((arg_name.to_string(), value)),
            other => {
                return Err(input.error(format!("node `{name}`: unknown argument kind {other}")))
            }
        }
    }
    Ok((args, kwargs))
}

/// The node's string-valued `metadata` entries (`stack_trace`, ...).
fn metadata(at: &At<'_>) -> Result<Vec<(String, String)>> {
    Ok(match at.opt("metadata")? {
        Some(m) => m
            .entries()?
            .into_iter()
            .filter_map(|(k, v)| v.str().ok().map(|s| (k.to_string(), s.to_string())))
            .collect(),
        None => Vec::new(),
    })
}

/// The node calling `target`, and the operator's return types (only an
/// operator overload has a schema to give them).
fn node_kind(
    target: Target,
    args: Vec<Arg>,
    kwargs: Kwargs,
    name: &str,
    at: &At<'_>,
    target_at: &At<'_>,
) -> Result<(NodeKind, Option<Vec<Type>>)> {
    Ok(match target {
        Target::Op(op) => {
            let schema = op.schema().map_err(|e| target_at.error(e.message()))?;
            if let Some(bad) = kwargs
                .iter()
                .find(|(k, _)| schema.argument_index_with_name(k).is_none())
            {
                return Err(at.error(format!(
                    "node `{name}`: `{}` has no argument `{}`",
                    schema.operator_name(),
                    bad.0
                )));
            }
            let returns = schema
                .returns()
                .iter()
                .map(|r| r.real_type().clone())
                .collect();
            (NodeKind::CallFunction { op, args, kwargs }, Some(returns))
        }
        Target::HigherOrder(op) => {
            no_kwargs(&kwargs, "a higher-order operator", name, at)?;
            (NodeKind::CallHigherOrder { op, args }, None)
        }
        Target::Builtin(function) => {
            no_kwargs(&kwargs, &format!("`{}`", function.target()), name, at)?;
            (NodeKind::CallBuiltin { function, args }, None)
        }
    })
}

/// The error for keyword arguments to `callee`, which takes none.
fn no_kwargs(kwargs: &[(String, Arg)], callee: &str, name: &str, at: &At<'_>) -> Result<()> {
    if kwargs.is_empty() {
        return Ok(());
    }
    Err(at.error(format!(
        "node `{name}`: {callee} takes no keyword arguments"
    )))
}

/// The `getitem` nodes of a list output (`as_tensors`,
/// `as_optional_tensors`) whose elements are the items of node `list`;
/// a `None` element defines nothing.
fn list_items(b: &mut Builder, list: usize, v: &At<'_>) -> Result<()> {
    for (j, t) in v.items()?.iter().enumerate() {
        let t = match t.variant() {
            Ok(("as_tensor", inner)) => inner,
            Ok(("as_none", _)) => continue,
            _ => t.clone(),
        };
        let item = t.field("name")?.str()?;
        b.push(item, NodeKind::GetItem { of: list, index: j }, &t)?;
    }
    Ok(())
}
