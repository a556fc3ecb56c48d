//! `make_fx`: runs a closure under a capturing dispatch mode and returns
//! the graph of the operator calls it made below autograd. Inputs become
//! placeholders (`x` is printed `x_1`, as `make_fx` names them); every call
//! becomes a node whose tensor arguments refer to the nodes that produced
//! them; a tensor the graph did not see made becomes a constant; the
//! closure's results become the output. Capture composes with other modes:
//! pushed inside a FakeTensor mode, it records with fake tensors; around
//! [`functionalize`](aten_ops::functionalize()), it records the functional
//! program. A higher-order operator (`cond`, `while_loop`, `map_impl`)
//! becomes one node taking its functions as subgraphs.
//! With [`MakeFxOptions::pre_dispatch`] the capture runs above autograd.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use aten_boxing::IValue;
use aten_ops::{
    push_mode, push_pre_dispatch_mode, HigherOrderOperator, HopArg, OpOverload, TorchDispatchMode,
};
use c10_core::{Error, Result, TensorBase};

use crate::graph::{Arg, Graph, Node, NodeKind};
use crate::names::Namer;

/// What the capturing mode has built so far.
struct Builder {
    graph: Graph,
    namer: Namer,
    /// Tensors seen, by identity, with the node that holds them; the
    /// handles keep the identities from being reused during the capture.
    by_tensor: HashMap<usize, (usize, TensorBase)>,
    constants: usize,
}

impl Builder {
    fn push(&mut self, base: &str, kind: NodeKind) -> usize {
        let name = self.namer.fresh(base);
        self.graph.nodes.push(Node::new(name, kind));
        self.graph.nodes.len() - 1
    }

    fn bind(&mut self, t: &TensorBase, node: usize) {
        self.by_tensor.insert(t.impl_id(), (node, t.clone()));
    }

    fn arg(&mut self, v: &IValue) -> Arg {
        match v {
            // A Python number stays a constant (printed as the number).
            IValue::Tensor(t) if t.is_wrapped_number() => Arg::Const(v.clone()),
            IValue::Tensor(t) if t.defined() => Arg::Node(self.tensor_node(t)),
            IValue::TensorList(ts) => {
                Arg::List(ts.iter().map(|t| Arg::Node(self.tensor_node(t))).collect())
            }
            IValue::Tuple(items) => Arg::Tuple(items.iter().map(|i| self.arg(i)).collect()),
            IValue::GenericList(items) => Arg::List(items.iter().map(|i| self.arg(i)).collect()),
            IValue::OptionalTensorList(ts) => Arg::List(
                ts.iter()
                    .map(|t| match t {
                        Some(t) => Arg::Node(self.tensor_node(t)),
                        None => Arg::Const(IValue::None),
                    })
                    .collect(),
            ),
            other => Arg::Const(other.clone()),
        }
    }

    /// One `getitem` node per tensor result of a multi-result node, or per
    /// element of a node's one list result (`split`).
    fn bind_items(&mut self, node: usize, results: &[IValue]) {
        let tensors: Vec<Option<TensorBase>> = match results {
            [IValue::TensorList(ts)] => ts.iter().cloned().map(Some).collect(),
            _ => results
                .iter()
                .map(|r| match r {
                    IValue::Tensor(t) => Some(t.clone()),
                    _ => None,
                })
                .collect(),
        };
        for (index, t) in tensors.iter().enumerate() {
            if let Some(t) = t {
                let item = self.push("getitem", NodeKind::GetItem { of: node, index });
                self.bind(t, item);
            }
        }
    }

    /// The node of a tensor, a new constant when the graph never saw it.
    fn tensor_node(&mut self, t: &TensorBase) -> usize {
        if let Some((node, _)) = self.by_tensor.get(&t.impl_id()) {
            return *node;
        }
        let name = format!("_tensor_constant{}", self.constants);
        self.constants += 1;
        let node = self.push(&name, NodeKind::Constant(IValue::Tensor(t.clone())));
        self.bind(t, node);
        node
    }
}

/// The capturing mode (PyTorch's `ProxyTorchDispatchMode`).
struct Capture {
    builder: Mutex<Builder>,
    /// How subgraphs are traced: as the graph is.
    options: MakeFxOptions,
}

impl Capture {
    fn lock(&self) -> std::sync::MutexGuard<'_, Builder> {
        self.builder.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl TorchDispatchMode for Capture {
    fn torch_dispatch(
        &self,
        op: &OpOverload,
        args: &[IValue],
        kwargs: &[(&str, IValue)],
    ) -> Result<Vec<IValue>> {
        let results = op.call(args, kwargs)?;
        let mut b = self.lock();
        let arg_nodes: Vec<Arg> = args.iter().map(|a| b.arg(a)).collect();
        let kwarg_nodes: Vec<(String, Arg)> = kwargs
            .iter()
            .map(|(k, v)| (k.to_string(), b.arg(v)))
            .collect();
        let op = op
            .overload_packet()
            .ok_or_else(|| Error::internal(format!("{op} has no packet")))?
            .overload(op.overload_name())?;
        let base = op.op_name().to_string();
        let node = b.push(
            &base,
            NodeKind::CallFunction {
                op,
                args: arg_nodes,
                kwargs: kwarg_nodes,
            },
        );
        if let [IValue::Tensor(t)] = results.as_slice() {
            b.bind(t, node);
        } else {
            b.bind_items(node, &results);
        }
        Ok(results)
    }

    fn name(&self) -> String {
        "ProxyTorchDispatchMode".into()
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// How [`make_fx_with`] traces.
#[derive(Clone, Copy, Debug, Default)]
pub struct MakeFxOptions {
    /// Record at the `PreDispatch` key, above autograd: operators as the
    /// program called them, before `CompositeImplicitAutograd` kernels
    /// decompose them (`make_fx(..., pre_dispatch=True)`).
    pub pre_dispatch: bool,
}

/// `make_fx(f)(*inputs)`: the graph of `f`'s operator calls on `inputs`
/// (named `names`, one per input), recorded below autograd.
pub fn make_fx(
    f: impl FnOnce(&[IValue]) -> Result<Vec<IValue>>,
    names: &[&str],
    inputs: &[IValue],
) -> Result<Graph> {
    make_fx_with(f, names, inputs, MakeFxOptions::default())
}

/// [`make_fx`] with options.
pub fn make_fx_with(
    f: impl FnOnce(&[IValue]) -> Result<Vec<IValue>>,
    names: &[&str],
    inputs: &[IValue],
    options: MakeFxOptions,
) -> Result<Graph> {
    if names.len() != inputs.len() {
        return Err(Error::runtime(format!(
            "make_fx: {} names for {} inputs",
            names.len(),
            inputs.len()
        )));
    }
    register_higher_order_rules()?;
    let capture = Arc::new(Capture {
        options,
        builder: Mutex::new(Builder {
            graph: Graph::default(),
            namer: Namer::default(),
            by_tensor: HashMap::new(),
            constants: 0,
        }),
    });
    {
        let mut b = capture.lock();
        for (name, input) in names.iter().zip(inputs) {
            let node = b.push(&format!("{name}_1"), NodeKind::Placeholder);
            if let IValue::Tensor(t) = input {
                b.bind(t, node);
            }
        }
    }
    let outputs = {
        let _mode = if options.pre_dispatch {
            push_pre_dispatch_mode(capture.clone())
        } else {
            push_mode(capture.clone())
        };
        f(inputs)?
    };
    let mut b = capture.lock();
    let outs: Vec<Arg> = outputs.iter().map(|v| b.arg(v)).collect();
    b.push("output", NodeKind::Output(outs));
    Ok(std::mem::take(&mut b.graph))
}

/// Registers, once per process, what the capturing mode does with the
/// shipped higher-order operators (PyTorch's `trace_cond`, `trace_map`,
/// `trace_while_loop`).
fn register_higher_order_rules() -> Result<()> {
    static DONE: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    DONE.get_or_init(|| {
        let hops = aten_ops::ops().higher_order();
        let register = |name: &str,
                        rule: fn(
            &Capture,
            &HigherOrderOperator,
            &[HopArg],
        ) -> Result<Vec<IValue>>| {
            hops.op(name)?.py_impl_mode::<Capture>(rule)
        };
        register("cond", |c, op, args| {
            let operands = items(
                args.get(3)
                    .ok_or_else(|| arity(op, 4, args))?
                    .value("operands")?,
            );
            trace_higher_order(
                c,
                op,
                args,
                &[(1, "true_graph"), (2, "false_graph")],
                operands,
            )
        })
        .and_then(|()| {
            register("while_loop", |c, op, args| {
                let [_, _, carried, additional] = args else {
                    return Err(arity(op, 4, args));
                };
                let mut inputs = items(carried.value("carried_inputs")?);
                inputs.extend(items(additional.value("additional_inputs")?));
                trace_higher_order(
                    c,
                    op,
                    args,
                    &[(0, "while_loop_cond_graph"), (1, "while_loop_body_graph")],
                    inputs,
                )
            })
        })
        .and_then(|()| {
            register("map_impl", |c, op, args| {
                let [_, xs, pos_args] = args else {
                    return Err(arity(op, 3, args));
                };
                let select = aten_ops::ops().overload("aten::select.int")?;
                let mut inputs = items(xs.value("xs")?)
                    .into_iter()
                    .map(|x| {
                        let mut r = select.call(&[x, IValue::Int(0), IValue::Int(0)], &[])?;
                        r.pop()
                            .ok_or_else(|| Error::internal("select returned nothing"))
                    })
                    .collect::<Result<Vec<_>>>()?;
                inputs.extend(items(pos_args.value("pos_args")?));
                trace_higher_order(c, op, args, &[(0, "body_graph")], inputs)
            })
        })
        .map_err(|e| e.to_string())
    })
    .clone()
    .map_err(Error::runtime)
}

fn arity(op: &HigherOrderOperator, n: usize, args: &[HopArg]) -> Error {
    Error::runtime(format!(
        "{} expects {n} arguments but got {}",
        op.name(),
        args.len()
    ))
}

/// The items of an operand container.
fn items(v: &IValue) -> Vec<IValue> {
    match v {
        IValue::Tuple(items) | IValue::GenericList(items) => items.to_vec(),
        IValue::TensorList(ts) => ts.iter().cloned().map(IValue::Tensor).collect(),
        other => vec![other.clone()],
    }
}

/// A higher-order operator call as one node: each function argument (at
/// the positions `functions` names, with the attribute prefix) traced on
/// `inputs` as a subgraph (`true_graph_0 = self.true_graph_0`, printed
/// before the node), the operator's other arguments as graph values, and
/// the results of the real call bound to the node's `getitem`s.
fn trace_higher_order(
    capture: &Capture,
    op: &HigherOrderOperator,
    args: &[HopArg],
    functions: &[(usize, &'static str)],
    inputs: Vec<IValue>,
) -> Result<Vec<IValue>> {
    let names: Vec<String> = (0..inputs.len()).map(|i| format!("arg{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut subgraphs = Vec::with_capacity(functions.len());
    for &(at, prefix) in functions {
        let f = Arc::clone(
            args.get(at)
                .ok_or_else(|| arity(op, at + 1, args))?
                .function(prefix)?,
        );
        let mut g = make_fx_with(move |xs| f(xs), &names, &inputs, capture.options)?;
        g.tuple_output = true;
        subgraphs.push((at, prefix, Arc::new(g)));
    }
    // The operator runs the traced graphs, as PyTorch's does: the closures
    // ran once, while traced.
    let mut traced_args = args.to_vec();
    for (at, _, g) in &subgraphs {
        let g = Arc::new(crate::interpreter::Interpreter::new(g)?);
        let f: aten_ops::GraphFn = Arc::new(move |xs: &[IValue]| g.run(xs));
        traced_args[*at] = HopArg::Fn(f);
    }
    let results = op.call(&traced_args)?;
    let mut b = capture.lock();
    // PyTorch's `unique_graph_id`: the first index whose first attribute
    // name is free.
    let first = functions.first().map_or("graph", |f| f.1);
    let taken = |b: &Builder, i: usize| {
        let name = format!("{first}_{i}");
        b.graph.nodes.iter().any(|n| n.name == name)
    };
    let index = (0..).find(|&i| !taken(&b, i)).unwrap_or(0);
    let mut node_args: Vec<Option<Arg>> = vec![None; args.len()];
    for (at, prefix, g) in subgraphs {
        node_args[at] = Some(Arg::Node(
            b.push(&format!("{prefix}_{index}"), NodeKind::Subgraph(g)),
        ));
    }
    let node_args = node_args
        .into_iter()
        .zip(args)
        .map(|(traced, arg)| match (traced, arg) {
            (Some(a), _) => Ok(a),
            (None, HopArg::Value(v)) => Ok(b.arg(v)),
            (None, HopArg::Fn(_)) => Err(Error::internal("a function argument was not traced")),
        })
        .collect::<Result<Vec<_>>>()?;
    let node = b.push(
        op.name(),
        NodeKind::CallHigherOrder {
            op: aten_ops::ops().higher_order().op(op.name())?,
            args: node_args,
        },
    );
    b.bind_items(node, &results);
    Ok(results)
}
