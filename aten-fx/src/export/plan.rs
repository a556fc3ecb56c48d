//! An exported graph compiled for running: every node's operator resolved
//! once through `torch.ops`, its arguments bound to the schema once
//! (defaults filled in, keywords placed), leaving only the slots that take
//! the values of earlier nodes; and, per node, the values that die after it,
//! so memory is released as the graph runs.

use std::collections::HashMap;
use std::sync::Arc;

use aten_boxing::schema::Type;
use aten_boxing::{IValue, Stack};
use aten_ops::arguments::bind_arguments;
use aten_ops::OpOverload;
use c10_core::{Device, DispatchKey, Error, Result, TensorBase};

use super::codes;
use super::json::At;

/// Where a value of the graph lives while it runs.
pub(crate) type ValueId = usize;

/// A node's argument that is filled in at run time.
#[derive(Debug)]
enum Slot {
    /// A value of the graph (a tensor, or a symbolic int computed earlier).
    Value(ValueId),
    /// `Tensor[]`.
    Tensors(Vec<ValueId>),
    /// `Tensor?[]`.
    OptionalTensors(Vec<Option<ValueId>>),
}

/// Where one of a node's returns goes.
#[derive(Debug)]
enum Output {
    /// Unused, or a constant the serializer recorded.
    Ignore,
    /// A value.
    Value(ValueId),
    /// The elements of a `Tensor[]` return.
    Values(Vec<Option<ValueId>>),
}

/// One compiled node.
pub(crate) struct NodePlan {
    name: String,
    op: Arc<OpOverload>,
    /// The whole bound argument list, with placeholders at `slots`.
    template: Vec<IValue>,
    slots: Vec<(usize, Slot)>,
    outputs: Vec<Output>,
    /// The values last read by this node (freed after it).
    dead: Vec<ValueId>,
}

/// The compiled graph.
pub(crate) struct Plan {
    /// How many values the graph has.
    pub(crate) num_values: usize,
    pub(crate) nodes: Vec<NodePlan>,
}

/// The values of a graph being built: names to ids.
#[derive(Default)]
pub(crate) struct Values {
    ids: HashMap<String, ValueId>,
}

impl Values {
    /// Defines `name`; an error if it is defined twice.
    pub(crate) fn define(&mut self, name: &str, at: &At<'_>) -> Result<ValueId> {
        if self.ids.contains_key(name) {
            return Err(at.error(format!("value `{name}` is defined twice")));
        }
        let id = self.ids.len();
        self.ids.insert(name.to_string(), id);
        Ok(id)
    }

    /// The id of the defined value `name`.
    pub(crate) fn get(&self, name: &str, at: &At<'_>) -> Result<ValueId> {
        self.ids.get(name).copied().ok_or_else(|| {
            at.error(format!(
                "refers to `{name}`, which no graph input or earlier node defines"
            ))
        })
    }

    /// The number of values.
    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }
}

/// `torch.ops.aten.add.Tensor` -> `aten::add.Tensor`; `...relu.default`
/// -> `aten::relu`.
fn qualified_name(target: &str) -> Option<String> {
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

/// A tensor placeholder in a bound template.
fn tensor_placeholder() -> IValue {
    IValue::Tensor(TensorBase::undefined())
}

/// An `Argument` of the serialized graph: its value for the bound
/// template, and the slot it fills at run time, if any.
fn argument(at: &At<'_>, values: &Values) -> Result<(IValue, Option<Slot>)> {
    let (kind, v) = at.variant()?;
    let constant = |value: IValue| Ok((value, None));
    match kind {
        "as_none" => constant(IValue::None),
        "as_tensor" => {
            let id = values.get(v.field("name")?.str()?, &v)?;
            Ok((tensor_placeholder(), Some(Slot::Value(id))))
        }
        "as_tensors" => {
            let ids = v
                .items()?
                .iter()
                .map(|t| values.get(t.field("name")?.str()?, t))
                .collect::<Result<Vec<_>>>()?;
            let placeholder =
                IValue::TensorList(Arc::new(vec![TensorBase::undefined(); ids.len()]));
            Ok((placeholder, Some(Slot::Tensors(ids))))
        }
        "as_optional_tensors" => {
            let ids = v
                .items()?
                .iter()
                .map(|t| match t.variant()? {
                    ("as_tensor", t) => Ok(Some(values.get(t.field("name")?.str()?, &t)?)),
                    ("as_none", _) => Ok(None),
                    (other, _) => Err(t.error(format!(
                        "expected `as_tensor` or `as_none` in a `Tensor?[]`, found `{other}`"
                    ))),
                })
                .collect::<Result<Vec<_>>>()?;
            let placeholder = IValue::OptionalTensorList(Arc::new(
                ids.iter()
                    .map(|id| id.map(|_| TensorBase::undefined()))
                    .collect(),
            ));
            Ok((placeholder, Some(Slot::OptionalTensors(ids))))
        }
        "as_int" => constant(IValue::Int(v.int()?)),
        "as_ints" => constant(IValue::IntList(Arc::new(v.ints()?))),
        "as_float" => constant(IValue::double(v.float()?)),
        "as_floats" => constant(IValue::DoubleList(Arc::new(
            v.items()?.iter().map(At::float).collect::<Result<_>>()?,
        ))),
        "as_bool" => constant(IValue::bool(v.bool()?)),
        "as_bools" => constant(IValue::BoolList(Arc::new(
            v.items()?.iter().map(At::bool).collect::<Result<_>>()?,
        ))),
        "as_string" => constant(IValue::String(Arc::new(v.str()?.to_string()))),
        "as_strings" => constant(IValue::GenericList(Arc::new(
            v.items()?
                .iter()
                .map(|s| Ok(IValue::String(Arc::new(s.str()?.to_string()))))
                .collect::<Result<_>>()?,
        ))),
        "as_scalar_type" => {
            let code = v.int()?;
            let dtype = codes::scalar_type(code).ok_or_else(|| {
                v.error(format!(
                    "dtype {} is not supported",
                    codes::scalar_type_name(code)
                ))
            })?;
            constant(IValue::Int(dtype as i64))
        }
        "as_layout" => {
            let code = v.int()?;
            let layout = codes::layout(code)
                .ok_or_else(|| v.error(format!("unknown layout code {code}")))?;
            constant(IValue::Int(layout as i64))
        }
        "as_memory_format" => {
            let code = v.int()?;
            let format = codes::memory_format(code)
                .ok_or_else(|| v.error(format!("unknown memory format code {code}")))?;
            constant(IValue::Int(format as i64))
        }
        "as_device" => constant(IValue::device(device(&v)?)),
        "as_sym_int" => match v.variant()? {
            ("as_int", n) => constant(IValue::Int(n.int()?)),
            ("as_name", n) => {
                let id = values.get(n.str()?, &n)?;
                Ok((IValue::Int(0), Some(Slot::Value(id))))
            }
            (other, n) => Err(n.error(format!("unsupported `SymInt` form `{other}`"))),
        },
        "as_sym_ints" => {
            let items = v.items()?;
            if items
                .iter()
                .all(|i| matches!(i.variant(), Ok(("as_int", _))))
            {
                constant(IValue::IntList(Arc::new(v.sym_ints()?)))
            } else {
                Err(v.error("symbolic sizes are not supported (only static shapes)"))
            }
        }
        "as_sym_float" | "as_sym_bool" | "as_sym_floats" | "as_sym_bools" => Err(v.error(format!(
            "`{kind}`: symbolic values are not supported (only static shapes)"
        ))),
        other => Err(at.error(format!("unsupported argument kind `{other}`"))),
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

impl NodePlan {
    /// Compiles the node at `at`, defining its outputs in `values`.
    pub(crate) fn compile(at: &At<'_>, values: &mut Values) -> Result<NodePlan> {
        let name = at.field("name")?.str()?.to_string();
        let target_at = at.field("target")?;
        let target = target_at.str()?;
        let qualified = qualified_name(target).ok_or_else(|| {
            target_at.error(format!(
                "node `{name}`: unsupported target `{target}` (expected `torch.ops.<namespace>.<op>.<overload>`)"
            ))
        })?;
        let op = aten_ops::ops().overload(&qualified).map_err(|e| {
            target_at.error(format!(
                "node `{name}`: unknown operator `{target}`: {}",
                e.message()
            ))
        })?;
        if !op
            .handle()
            .has_computed_kernel_for_dispatch_key(DispatchKey::CPU)
        {
            return Err(target_at.error(format!(
                "node `{name}`: operator `{target}` has no CPU kernel in this build"
            )));
        }
        let schema = op.schema().map_err(|e| target_at.error(e.message()))?;

        // Arguments: a positional prefix, then keywords by name.
        let mut positional = Vec::new();
        let mut keywords: Vec<(String, IValue)> = Vec::new();
        let mut slots = Vec::new();
        for input in at.field("inputs")?.items()? {
            let arg_name = input.field("name")?.str()?;
            let kind = input
                .opt("kind")?
                .map(|k| k.int())
                .transpose()?
                .unwrap_or(1);
            let (value, slot) = argument(&input.field("arg")?, values)?;
            let position = match kind {
                1 => {
                    if !keywords.is_empty() {
                        return Err(input.error(format!(
                            "node `{name}`: positional argument `{arg_name}` after a keyword argument"
                        )));
                    }
                    positional.push(value);
                    positional.len() - 1
                }
                2 => {
                    keywords.push((arg_name.to_string(), value));
                    schema
                        .arguments()
                        .iter()
                        .position(|a| a.name() == arg_name)
                        .ok_or_else(|| {
                            input.error(format!(
                                "node `{name}`: `{qualified}` has no argument `{arg_name}`"
                            ))
                        })?
                }
                other => {
                    return Err(input.error(format!("node `{name}`: unknown argument kind {other}")))
                }
            };
            if let Some(slot) = slot {
                slots.push((position, slot));
            }
        }
        let kwargs: Vec<(&str, IValue)> = keywords
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        let mut template = Stack::with_capacity(schema.arguments().len());
        bind_arguments(&schema, &positional, &kwargs, &mut template)
            .map_err(|e| at.error(format!("node `{name}`: {}", e.message())))?;

        // Outputs: one per return; a `Tensor[]` return is one `as_tensors`.
        let returns = schema.returns();
        let listed = at.field("outputs")?.items()?;
        if listed.len() != returns.len() {
            return Err(at.error(format!(
                "node `{name}`: {} outputs listed, but `{qualified}` returns {}",
                listed.len(),
                returns.len()
            )));
        }
        let mut outputs = Vec::with_capacity(listed.len());
        for (out, ret) in listed.iter().zip(returns) {
            let (kind, v) = out.variant()?;
            let output = match kind {
                "as_tensor" => Output::Value(values.define(v.field("name")?.str()?, &v)?),
                "as_tensors" | "as_optional_tensors" => {
                    if !matches!(ret.ty(), Type::List(_)) {
                        return Err(out.error(format!(
                            "node `{name}`: a list output for a return of type {}",
                            ret.ty()
                        )));
                    }
                    let ids = v
                        .items()?
                        .iter()
                        .map(|t| {
                            let t = match t.variant() {
                                Ok(("as_tensor", inner)) => inner,
                                Ok(("as_none", _)) => return Ok(None),
                                _ => t.clone(),
                            };
                            values.define(t.field("name")?.str()?, &t).map(Some)
                        })
                        .collect::<Result<Vec<_>>>()?;
                    Output::Values(ids)
                }
                "as_sym_int" | "as_sym_bool" | "as_sym_float" => match v.variant()? {
                    ("as_name", n) => Output::Value(values.define(n.str()?, &n)?),
                    _ => Output::Ignore,
                },
                "as_none" | "as_int" | "as_float" | "as_bool" => Output::Ignore,
                other => {
                    return Err(
                        out.error(format!("node `{name}`: unsupported output kind `{other}`"))
                    )
                }
            };
            outputs.push(output);
        }
        Ok(NodePlan {
            name,
            op,
            template,
            slots,
            outputs,
            dead: Vec::new(),
        })
    }

    /// The value ids this node reads.
    fn reads(&self) -> impl Iterator<Item = ValueId> + '_ {
        self.slots.iter().flat_map(|(_, slot)| -> Vec<ValueId> {
            match slot {
                Slot::Value(id) => vec![*id],
                Slot::Tensors(ids) => ids.clone(),
                Slot::OptionalTensors(ids) => ids.iter().flatten().copied().collect(),
            }
        })
    }

    /// Runs the node on `values`.
    fn run(&self, values: &mut [Option<IValue>]) -> Result<()> {
        let mut stack: Stack = self.template.clone();
        let fetch = |id: ValueId| -> Result<IValue> {
            values[id].clone().ok_or_else(|| {
                Error::internal(format!(
                    "node `{}` reads a value not yet computed",
                    self.name
                ))
            })
        };
        let tensor = |id: ValueId| -> Result<TensorBase> {
            match fetch(id)? {
                IValue::Tensor(t) => Ok(t),
                other => Err(Error::runtime(format!(
                    "node `{}`: expected a tensor in a tensor list, found {}",
                    self.name,
                    other.type_name()
                ))),
            }
        };
        for (position, slot) in &self.slots {
            stack[*position] = match slot {
                Slot::Value(id) => fetch(*id)?,
                Slot::Tensors(ids) => IValue::TensorList(Arc::new(
                    ids.iter().map(|id| tensor(*id)).collect::<Result<_>>()?,
                )),
                Slot::OptionalTensors(ids) => IValue::OptionalTensorList(Arc::new(
                    ids.iter()
                        .map(|id| id.map(tensor).transpose())
                        .collect::<Result<_>>()?,
                )),
            };
        }
        self.op.call_boxed(&mut stack).map_err(|e| {
            Error::new(
                e.kind(),
                format!("node `{}` ({}): {}", self.name, self.op.name(), e.message()),
            )
        })?;
        if stack.len() != self.outputs.len() {
            return Err(Error::internal(format!(
                "node `{}`: {} returns for {} outputs",
                self.name,
                stack.len(),
                self.outputs.len()
            )));
        }
        for (value, output) in stack.into_iter().zip(&self.outputs) {
            match output {
                Output::Ignore => {}
                Output::Value(id) => values[*id] = Some(value),
                Output::Values(ids) => {
                    let items = value.to_list()?;
                    if items.len() != ids.len() {
                        return Err(Error::runtime(format!(
                            "node `{}`: {} results for {} listed outputs",
                            self.name,
                            items.len(),
                            ids.len()
                        )));
                    }
                    for (item, id) in items.into_iter().zip(ids) {
                        if let Some(id) = id {
                            values[*id] = Some(item);
                        }
                    }
                }
            }
        }
        for id in &self.dead {
            values[*id] = None;
        }
        Ok(())
    }
}

impl Plan {
    /// Records, for each node, the values it is the last reader of;
    /// `keep` (the graph's outputs) are never released.
    pub(crate) fn new(num_values: usize, mut nodes: Vec<NodePlan>, keep: &[ValueId]) -> Plan {
        let mut last = vec![None; num_values];
        for (i, node) in nodes.iter().enumerate() {
            for id in node.reads() {
                last[id] = Some(i);
            }
        }
        let mut kept = vec![false; num_values];
        for id in keep {
            kept[*id] = true;
            last[*id] = None;
        }
        // Results nothing reads are dropped as they come back.
        for node in &mut nodes {
            for output in &mut node.outputs {
                match output {
                    Output::Value(id) if last[*id].is_none() && !kept[*id] => {
                        *output = Output::Ignore;
                    }
                    Output::Values(ids) => {
                        for slot in ids.iter_mut() {
                            if slot.is_some_and(|id| last[id].is_none() && !kept[id]) {
                                *slot = None;
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        for (id, node) in last.iter().enumerate() {
            if let Some(i) = node {
                nodes[*i].dead.push(id);
            }
        }
        Plan { num_values, nodes }
    }

    /// Runs every node in order on `values` (graph inputs filled in).
    pub(crate) fn run(&self, values: &mut [Option<IValue>]) -> Result<()> {
        for node in &self.nodes {
            node.run(values)?;
        }
        Ok(())
    }

    /// The operators the nodes call (`aten::add.Tensor`), in node order.
    pub(crate) fn targets(&self) -> impl Iterator<Item = String> + '_ {
        self.nodes.iter().map(|n| n.op.name())
    }
}
