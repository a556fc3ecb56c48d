//! [`Graph`]: placeholders, one node per operator call (its `OpOverload`
//! and arguments, graph values or constants), constants the program made,
//! and the output. Printed as FX prints `graph_module.code`, replayed on new
//! inputs.

use std::fmt::Write;
use std::sync::Arc;

use aten_boxing::schema::Type;
use aten_boxing::IValue;
use aten_ops::{GraphFn, HigherOrderOperator, HopArg, OpOverload};
use c10_core::{Error, Result, ScalarType};

/// An argument of a node.
#[derive(Clone, Debug)]
pub enum Arg {
    /// The value of node `i`.
    Node(usize),
    /// A constant.
    Const(IValue),
    /// A list whose items are arguments (a `Tensor[]` of graph values).
    List(Vec<Arg>),
    /// A tuple whose items are arguments (a higher-order operator's
    /// operands).
    Tuple(Vec<Arg>),
}

/// What a node is.
#[derive(Clone)]
pub enum NodeKind {
    /// An input of the graph.
    Placeholder,
    /// A tensor the program made without an operator the graph saw (FX's
    /// `get_attr` of `_tensor_constantN`).
    Constant(IValue),
    /// An operator call (a single result, or the tuple of several).
    CallFunction {
        /// The operator.
        op: Arc<OpOverload>,
        /// Positional arguments.
        args: Vec<Arg>,
        /// Keyword arguments.
        kwargs: Vec<(String, Arg)>,
    },
    /// A graph a higher-order operator takes (FX's `get_attr` of a
    /// submodule, `true_graph_0`).
    Subgraph(Arc<Graph>),
    /// A higher-order operator call; arguments naming a
    /// [`NodeKind::Subgraph`] pass that graph as a function.
    CallHigherOrder {
        /// The operator.
        op: Arc<HigherOrderOperator>,
        /// Its arguments.
        args: Vec<Arg>,
    },
    /// Element `index` of a multi-result node (`operator.getitem`).
    GetItem {
        /// The node with several results.
        of: usize,
        /// Which result.
        index: usize,
    },
    /// The graph's results.
    Output(Vec<Arg>),
}

/// One node: its name and what it is.
#[derive(Clone)]
pub struct Node {
    /// The node's unique name (FX's naming).
    pub name: String,
    /// What it is.
    pub kind: NodeKind,
}

/// A graph of operator calls (an FX `Graph` in `make_fx`'s shape).
#[derive(Clone, Default)]
pub struct Graph {
    /// The nodes, placeholders first, output last.
    pub nodes: Vec<Node>,
    /// Whether a single output prints as a one-element tuple (a subgraph's
    /// `return (mul,)`).
    pub tuple_output: bool,
}

impl Graph {
    /// The operator-call nodes' operators, in order (`str` of each, e.g.
    /// `aten.add.Tensor`).
    pub fn called_operators(&self) -> Vec<String> {
        self.nodes
            .iter()
            .filter_map(|n| match &n.kind {
                NodeKind::CallFunction { op, .. } => Some(op.to_string()),
                _ => None,
            })
            .collect()
    }

    /// The subgraph held by the node named `name` (`gm.true_graph_0`).
    pub fn subgraph(&self, name: &str) -> Option<&Graph> {
        self.nodes.iter().find_map(|n| match &n.kind {
            NodeKind::Subgraph(g) if n.name == name => Some(&**g),
            _ => None,
        })
    }

    /// The number of placeholders.
    pub fn num_inputs(&self) -> usize {
        self.nodes
            .iter()
            .filter(|n| matches!(n.kind, NodeKind::Placeholder))
            .count()
    }

    /// Runs the graph on `inputs` (one per placeholder); the outputs.
    pub fn run(&self, inputs: &[IValue]) -> Result<Vec<IValue>> {
        if inputs.len() != self.num_inputs() {
            return Err(Error::runtime(format!(
                "the graph takes {} inputs but {} were given",
                self.num_inputs(),
                inputs.len()
            )));
        }
        let mut values: Vec<Option<Vec<IValue>>> = vec![None; self.nodes.len()];
        let mut next_input = inputs.iter();
        for (i, node) in self.nodes.iter().enumerate() {
            let value = match &node.kind {
                NodeKind::Placeholder => vec![next_input.next().cloned().unwrap_or_default()],
                NodeKind::Constant(v) => vec![v.clone()],
                NodeKind::Subgraph(_) => Vec::new(),
                NodeKind::CallHigherOrder { op, args } => {
                    let args: Vec<HopArg> = args
                        .iter()
                        .map(|a| match a {
                            Arg::Node(j) => match self.nodes.get(*j).map(|n| &n.kind) {
                                Some(NodeKind::Subgraph(g)) => {
                                    let g = Arc::clone(g);
                                    let f: GraphFn = Arc::new(move |xs: &[IValue]| g.run(xs));
                                    Ok(HopArg::Fn(f))
                                }
                                _ => resolve(a, &values).map(HopArg::Value),
                            },
                            _ => resolve(a, &values).map(HopArg::Value),
                        })
                        .collect::<Result<_>>()?;
                    op.call(&args)?
                }
                NodeKind::CallFunction { op, args, kwargs } => {
                    let args: Vec<IValue> = args
                        .iter()
                        .map(|a| resolve(a, &values))
                        .collect::<Result<_>>()?;
                    let kwargs: Vec<(&str, IValue)> = kwargs
                        .iter()
                        .map(|(k, a)| Ok((k.as_str(), resolve(a, &values)?)))
                        .collect::<Result<_>>()?;
                    op.call(&args, &kwargs)?
                }
                NodeKind::GetItem { of, index } => {
                    let all = values
                        .get(*of)
                        .and_then(|v| v.as_ref())
                        .ok_or_else(|| Error::internal("getitem of a value not computed"))?;
                    let item = match all.as_slice() {
                        // An operator returning one list (`split`).
                        [IValue::TensorList(ts)] => ts.get(*index).cloned().map(IValue::Tensor),
                        _ => all.get(*index).cloned(),
                    };
                    vec![item.ok_or_else(|| Error::internal("getitem past the results"))?]
                }
                NodeKind::Output(outs) => {
                    return outs.iter().map(|a| resolve(a, &values)).collect();
                }
            };
            values[i] = Some(value);
        }
        Err(Error::internal("the graph has no output node"))
    }

    /// The Python source FX prints for the graph module
    /// (`graph_module.code`).
    pub fn code(&self) -> String {
        let last_use = self.last_uses();
        let inputs: Vec<&str> = self
            .nodes
            .iter()
            .filter(|n| matches!(n.kind, NodeKind::Placeholder))
            .map(|n| n.name.as_str())
            .collect();
        let mut out = String::new();
        let _ = writeln!(out, "\n\n\ndef forward(self, {}):", inputs.join(", "));
        for (i, node) in self.nodes.iter().enumerate() {
            let line = match &node.kind {
                NodeKind::Placeholder => continue,
                NodeKind::Constant(_) | NodeKind::Subgraph(_) => {
                    format!("{} = self.{}", node.name, node.name)
                }
                NodeKind::CallHigherOrder { op, args } => {
                    let parts: Vec<String> = args.iter().map(|a| self.show(a)).collect();
                    format!(
                        "{} = torch.ops.higher_order.{}({})",
                        node.name,
                        op.name(),
                        parts.join(", ")
                    )
                }
                NodeKind::CallFunction { op, args, kwargs } => {
                    let schema = op.schema().ok();
                    let ty = |pos: Option<usize>, name: Option<&str>| {
                        let schema = schema.as_ref()?;
                        let at = pos.or_else(|| schema.argument_index_with_name(name?))?;
                        schema.arguments().get(at).map(|a| a.real_type().clone())
                    };
                    let mut parts: Vec<String> = args
                        .iter()
                        .enumerate()
                        .map(|(i, a)| self.show_typed(a, ty(Some(i), None).as_ref()))
                        .collect();
                    parts.extend(kwargs.iter().map(|(k, a)| {
                        format!("{k} = {}", self.show_typed(a, ty(None, Some(k)).as_ref()))
                    }));
                    format!("{} = torch.ops.{op}({})", node.name, parts.join(", "))
                }
                NodeKind::GetItem { of, index } => {
                    format!("{} = {}[{index}]", node.name, self.name_of(*of))
                }
                NodeKind::Output(outs) => {
                    let shown: Vec<String> = outs.iter().map(|a| self.show(a)).collect();
                    let value = if shown.len() == 1 && !self.tuple_output {
                        shown[0].clone()
                    } else {
                        format!("({})", tuple_items(&shown))
                    };
                    let _ = writeln!(out, "    return {value}");
                    continue;
                }
            };
            let dead: Vec<&str> = last_use[i].iter().map(|&j| self.name_of(j)).collect();
            if dead.is_empty() {
                let _ = writeln!(out, "    {line}");
            } else {
                let _ = writeln!(out, "    {line};  {} = None", dead.join(" = "));
            }
        }
        out
    }

    /// For each node, the values whose last use it is, in FX's order
    /// (`register_last_uses`: nodes walked from the end, each one's inputs
    /// in argument order). Values the output uses are never freed.
    fn last_uses(&self) -> Vec<Vec<usize>> {
        fn inputs(a: &Arg, out: &mut Vec<usize>) {
            match a {
                Arg::Node(j) => out.push(*j),
                Arg::List(items) | Arg::Tuple(items) => items.iter().for_each(|i| inputs(i, out)),
                Arg::Const(_) => {}
            }
        }
        let mut seen = vec![false; self.nodes.len()];
        let mut dead = vec![Vec::new(); self.nodes.len()];
        for (i, node) in self.nodes.iter().enumerate().rev() {
            let mut used = Vec::new();
            match &node.kind {
                NodeKind::CallFunction { args, kwargs, .. } => {
                    args.iter().for_each(|a| inputs(a, &mut used));
                    kwargs.iter().for_each(|(_, a)| inputs(a, &mut used));
                }
                NodeKind::CallHigherOrder { args, .. } => {
                    args.iter().for_each(|a| inputs(a, &mut used));
                }
                NodeKind::GetItem { of, .. } => used.push(*of),
                NodeKind::Output(outs) => {
                    outs.iter().for_each(|a| inputs(a, &mut used));
                    for &j in &used {
                        if let Some(s) = seen.get_mut(j) {
                            *s = true;
                        }
                    }
                    continue;
                }
                _ => {}
            }
            for j in used {
                if let Some(s @ false) = seen.get_mut(j) {
                    *s = true;
                    dead[i].push(j);
                }
            }
        }
        dead
    }

    /// An argument as printed for a parameter of schema type `ty`: an int
    /// passed as a `ScalarType` prints as its dtype (`torch.float32`).
    fn show_typed(&self, a: &Arg, ty: Option<&Type>) -> String {
        let is_dtype = match ty {
            Some(Type::ScalarType) => true,
            Some(Type::Optional(inner)) => **inner == Type::ScalarType,
            _ => false,
        };
        match a {
            Arg::Const(IValue::Int(code)) if is_dtype => match ScalarType::from_i64(*code) {
                Ok(dtype) => format!("torch.{}", dtype.python_name()),
                Err(_) => code.to_string(),
            },
            _ => self.show(a),
        }
    }

    /// Node `j`'s name (a placeholder for an index outside the graph, which
    /// replay refuses).
    fn name_of(&self, j: usize) -> &str {
        self.nodes
            .get(j)
            .map_or("<missing node>", |n| n.name.as_str())
    }

    fn show(&self, a: &Arg) -> String {
        match a {
            Arg::Node(j) => self.name_of(*j).to_string(),
            Arg::List(items) => {
                let shown: Vec<String> = items.iter().map(|i| self.show(i)).collect();
                format!("[{}]", shown.join(", "))
            }
            Arg::Tuple(items) => {
                let shown: Vec<String> = items.iter().map(|i| self.show(i)).collect();
                format!("({})", tuple_items(&shown))
            }
            Arg::Const(v) => python_repr(v),
        }
    }
}

impl std::fmt::Display for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.code())
    }
}

/// Items of a Python tuple: a single one keeps its comma.
fn tuple_items(shown: &[String]) -> String {
    match shown {
        [one] => format!("{one},"),
        _ => shown.join(", "),
    }
}

fn resolve(a: &Arg, values: &[Option<Vec<IValue>>]) -> Result<IValue> {
    match a {
        Arg::Node(j) => values
            .get(*j)
            .and_then(|v| v.as_ref())
            .and_then(|v| v.first())
            .cloned()
            .ok_or_else(|| Error::internal("an argument refers to a value not computed")),
        Arg::Const(v) => Ok(v.clone()),
        Arg::Tuple(items) => Ok(IValue::Tuple(Arc::new(
            items
                .iter()
                .map(|i| resolve(i, values))
                .collect::<Result<_>>()?,
        ))),
        Arg::List(items) => {
            let items: Vec<IValue> = items
                .iter()
                .map(|i| resolve(i, values))
                .collect::<Result<_>>()?;
            if items.iter().all(|i| matches!(i, IValue::Tensor(_))) {
                Ok(IValue::TensorList(Arc::new(
                    items
                        .into_iter()
                        .filter_map(|i| match i {
                            IValue::Tensor(t) => Some(t),
                            _ => None,
                        })
                        .collect(),
                )))
            } else {
                Ok(IValue::GenericList(Arc::new(items)))
            }
        }
    }
}

/// A Python number held in a wrapped-number tensor, as Python prints it.
fn wrapped_number_repr(t: &c10_core::TensorBase) -> String {
    let value = match t.dtype() {
        Some(ScalarType::Bool) => t
            .to_vec::<bool>()
            .ok()
            .and_then(|v| v.first().map(|b| IValue::bool(*b))),
        Some(ScalarType::Long) => t
            .to_vec::<i64>()
            .ok()
            .and_then(|v| v.first().map(|i| IValue::Int(*i))),
        Some(ScalarType::Double) => t
            .to_vec::<f64>()
            .ok()
            .and_then(|v| v.first().map(|d| IValue::double(*d))),
        _ => None,
    };
    value.map_or_else(|| "<wrapped number>".into(), |v| python_repr(&v))
}

/// A constant as Python prints it in FX code.
fn python_repr(v: &IValue) -> String {
    match v {
        IValue::None => "None".into(),
        IValue::Bool(b) => if b.get() { "True" } else { "False" }.into(),
        IValue::Int(i) => i.to_string(),
        IValue::Double(d) => {
            let d = d.get();
            if d.is_finite() && d == d.trunc() && d.abs() < 1e16 {
                format!("{d:.1}")
            } else if d.is_nan() {
                "nan".into()
            } else if d.is_infinite() {
                if d > 0.0 { "inf" } else { "-inf" }.into()
            } else {
                format!("{d}")
            }
        }
        IValue::IntList(xs) => {
            let shown: Vec<String> = xs.iter().map(i64::to_string).collect();
            format!("[{}]", shown.join(", "))
        }
        IValue::String(s) => format!("'{s}'"),
        IValue::Tensor(t) if t.is_wrapped_number() => wrapped_number_repr(t),
        IValue::Device(d) => {
            let d = d.get();
            match d.index() {
                i if i >= 0 => format!("device(type='{}', index={i})", d.device_type().name()),
                _ => format!("device(type='{}')", d.device_type().name()),
            }
        }
        other => other.to_string(),
    }
}
