//! [`Graph`]: placeholders, one node per operator call (its `OpOverload`
//! and arguments, graph values or constants), calls of Python functions on
//! sizes, constants the program made, and the output. The one
//! representation of `make_fx` captures and loaded `.pt2` programs:
//! printed as FX prints `graph_module.code`, run by the
//! [`Interpreter`].

use std::fmt::Write;
use std::sync::Arc;

use aten_boxing::schema::Type;
use aten_boxing::IValue;
use aten_ops::{HigherOrderOperator, OpOverload};
use c10_core::{Result, ScalarType};

use crate::builtins::Builtin;
use crate::interpreter::Interpreter;

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
    /// A Python function of sizes (`operator.add` of two `SymInt`s, FX's
    /// `call_function` with a Python target).
    CallBuiltin {
        /// The function.
        function: Builtin,
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

/// One node: its name, what it is, and its metadata.
#[derive(Clone)]
pub struct Node {
    /// The node's unique name (FX's naming).
    pub name: String,
    /// What it is.
    pub kind: NodeKind,
    /// FX's `node.meta` as text (`nn_module_stack`, `stack_trace`,
    /// `torch_fn`, ... of a loaded program), by key.
    pub meta: Vec<(String, String)>,
}

impl Node {
    /// A node without metadata.
    pub fn new(name: impl Into<String>, kind: NodeKind) -> Node {
        Node {
            name: name.into(),
            kind,
            meta: Vec::new(),
        }
    }

    /// The metadata entry `key`, if any.
    pub fn meta(&self, key: &str) -> Option<&str> {
        self.meta
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
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
    /// The graph is compiled for the run ([`Interpreter::new`]); compile it
    /// once to run it often.
    pub fn run(&self, inputs: &[IValue]) -> Result<Vec<IValue>> {
        Interpreter::new(self)?.run(inputs)
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
                NodeKind::CallBuiltin { function, args } => {
                    let parts: Vec<String> = args.iter().map(|a| self.show(a)).collect();
                    let call = match (function.infix(), parts.as_slice()) {
                        (Some(op), [a, b]) => format!("{a} {op} {b}"),
                        _ => match (function, parts.as_slice()) {
                            (Builtin::Neg, [a]) => format!("-{a}"),
                            _ => format!(
                                "{}({})",
                                function.target().trim_start_matches('_'),
                                parts.join(", ")
                            ),
                        },
                    };
                    format!("{} = {call}", node.name)
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
                NodeKind::CallHigherOrder { args, .. } | NodeKind::CallBuiltin { args, .. } => {
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
