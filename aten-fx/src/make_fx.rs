//! `make_fx`: runs a closure under a capturing dispatch mode and returns
//! the graph of the operator calls it made below autograd. Inputs become
//! placeholders (`x` is printed `x_1`, as `make_fx` names them); every call
//! becomes a node whose tensor arguments refer to the nodes that produced
//! them; a tensor the graph did not see made becomes a constant; the
//! closure's results become the output. Capture composes with other modes:
//! pushed inside a FakeTensor mode, it records with fake tensors.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use aten_boxing::IValue;
use aten_ops::{push_mode, OpOverload, TorchDispatchMode};
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
        self.graph.nodes.push(Node { name, kind });
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
            for (index, r) in results.iter().enumerate() {
                if let IValue::Tensor(t) = r {
                    let item = b.push("getitem", NodeKind::GetItem { of: node, index });
                    b.bind(t, item);
                }
            }
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

/// `make_fx(f)(*inputs)`: the graph of `f`'s operator calls on `inputs`
/// (named `names`, one per input).
pub fn make_fx(
    f: impl FnOnce(&[IValue]) -> Result<Vec<IValue>>,
    names: &[&str],
    inputs: &[IValue],
) -> Result<Graph> {
    if names.len() != inputs.len() {
        return Err(Error::runtime(format!(
            "make_fx: {} names for {} inputs",
            names.len(),
            inputs.len()
        )));
    }
    let capture = Arc::new(Capture {
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
        let _mode = push_mode(capture.clone());
        f(inputs)?
    };
    let mut b = capture.lock();
    let outs: Vec<Arg> = outputs.iter().map(|v| b.arg(v)).collect();
    b.push("output", NodeKind::Output(outs));
    Ok(std::mem::take(&mut b.graph))
}
