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
    let c = |value: IValue| Ok(Arg::Const(value));
    match kind {
        "as_none" => c(IValue::None),
        "as_tensor" => Ok(Arg::Node(b.get(v.field("name")?.str()?, &v)?)),
        "as_tensors" => Ok(Arg::List(
            v.items()?
                .iter()
                .map(|t| Ok(Arg::Node(b.get(t.field("name")?.str()?, t)?)))
                .collect::<Result<_>>()?,
        )),
        "as_optional_tensor" => match v.variant()? {
            ("as_tensor", t) => Ok(Arg::Node(b.get(t.field("name")?.str()?, &t)?)),
            ("as_none", _) => c(IValue::None),
            (other, _) => Err(v.error(format!(
                "expected `as_tensor` or `as_none`, found `{other}`"
            ))),
        },
        "as_optional_tensors" => Ok(Arg::List(
            v.items()?
                .iter()
                .map(|t| match t.variant()? {
                    ("as_tensor", t) => Ok(Arg::Node(b.get(t.field("name")?.str()?, &t)?)),
                    ("as_none", _) => Ok(Arg::Const(IValue::None)),
                    (other, _) => Err(t.error(format!(
                        "expected `as_tensor` or `as_none` in a `Tensor?[]`, found `{other}`"
                    ))),
                })
                .collect::<Result<_>>()?,
        )),
        "as_int" => c(IValue::Int(v.int()?)),
        "as_ints" => c(IValue::IntList(Arc::new(v.ints()?))),
        "as_float" => c(IValue::double(v.float()?)),
        "as_floats" => c(IValue::DoubleList(Arc::new(
            v.items()?.iter().map(At::float).collect::<Result<_>>()?,
        ))),
        "as_bool" => c(IValue::bool(v.bool()?)),
        "as_bools" => c(IValue::BoolList(Arc::new(
            v.items()?.iter().map(At::bool).collect::<Result<_>>()?,
        ))),
        "as_string" => c(IValue::String(Arc::new(v.str()?.to_string()))),
        "as_strings" => c(IValue::GenericList(Arc::new(
            v.items()?
                .iter()
                .map(|s| Ok(IValue::String(Arc::new(s.str()?.to_string()))))
                .collect::<Result<_>>()?,
        ))),
        "as_complex" => {
            let (re, im) = (v.field("real")?.float()?, v.field("imag")?.float()?);
            c(IValue::ComplexDouble(Arc::new(Complex64::new(re, im))))
        }
        "as_scalar_type" => {
            let code = v.int()?;
            let dtype = codes::scalar_type(code).ok_or_else(|| {
                v.error(format!(
                    "dtype {} is not supported",
                    codes::scalar_type_name(code)
                ))
            })?;
            c(IValue::Int(dtype as i64))
        }
        "as_layout" => {
            let code = v.int()?;
            let layout = codes::layout(code)
                .ok_or_else(|| v.error(format!("unknown layout code {code}")))?;
            c(IValue::Int(layout as i64))
        }
        "as_memory_format" => {
            let code = v.int()?;
            let format = codes::memory_format(code)
                .ok_or_else(|| v.error(format!("unknown memory format code {code}")))?;
            c(IValue::Int(format as i64))
        }
        "as_device" => c(IValue::device(device(&v)?)),
        "as_sym_int" | "as_sym_float" | "as_sym_bool" => symbolic(b, &v),
        "as_sym_ints" | "as_sym_floats" | "as_sym_bools" => {
            let items = v
                .items()?
                .iter()
                .map(|i| symbolic(b, i))
                .collect::<Result<Vec<_>>>()?;
            if items.iter().all(|i| matches!(i, Arg::Const(_))) {
                let values: Vec<IValue> = items
                    .into_iter()
                    .filter_map(|i| match i {
                        Arg::Const(v) => Some(v),
                        _ => None,
                    })
                    .collect();
                let list = match kind {
                    "as_sym_ints" => IValue::IntList(Arc::new(
                        values.iter().map(IValue::to_int).collect::<Result<_>>()?,
                    )),
                    _ => IValue::GenericList(Arc::new(values)),
                };
                return c(list);
            }
            Ok(Arg::List(items))
        }
        "as_graph" => {
            let name = v.field("name")?.str()?;
            let sub = graph(&v.field("graph")?)?;
            let mut sub = sub;
            sub.tuple_output = true;
            let node_name = b.fresh(name);
            let at = b.push(&node_name, NodeKind::Subgraph(Arc::new(sub)), &v)?;
            Ok(Arg::Node(at))
        }
        other => Err(at.error(format!("unsupported argument kind `{other}`"))),
    }
}

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
    let mut args = Vec::new();
    let mut kwargs: Vec<(String, Arg)> = Vec::new();
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
    let listed = at.field("outputs")?.items()?;
    let meta: Vec<(String, String)> = match at.opt("metadata")? {
        Some(m) => m
            .entries()?
            .into_iter()
            .filter_map(|(k, v)| v.str().ok().map(|s| (k.to_string(), s.to_string())))
            .collect(),
        None => Vec::new(),
    };
    let (kind, returns): (NodeKind, Option<Vec<Type>>) = match target {
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
            if !kwargs.is_empty() {
                return Err(at.error(format!(
                    "node `{name}`: a higher-order operator takes no keyword arguments"
                )));
            }
            (NodeKind::CallHigherOrder { op, args }, None)
        }
        Target::Builtin(function) => {
            if !kwargs.is_empty() {
                return Err(at.error(format!(
                    "node `{name}`: `{}` takes no keyword arguments",
                    function.target()
                )));
            }
            (NodeKind::CallBuiltin { function, args }, None)
        }
    };
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
    let one = listed.len() == 1 && !list_output;
    if one {
        let value_name = output_name(&listed[0])?;
        let node_name = match value_name {
            Some(n) => n.to_string(),
            None => b.fresh(&name),
        };
        let index = b.push(&node_name, kind, at)?;
        b.graph.nodes[index].meta = meta;
        return Ok(());
    }
    let node_name = b.fresh(&name);
    let node = b.push(&node_name, kind, at)?;
    b.graph.nodes[node].meta = meta;
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
                for (j, t) in v.items()?.iter().enumerate() {
                    let t = match t.variant() {
                        Ok(("as_tensor", inner)) => inner,
                        Ok(("as_none", _)) => continue,
                        _ => t.clone(),
                    };
                    let item = t.field("name")?.str()?;
                    b.push(item, NodeKind::GetItem { of: list, index: j }, &t)?;
                }
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
