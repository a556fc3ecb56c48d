//! [`Interpreter`]: a [`Graph`] compiled for running, the one runner of
//! graphs `make_fx` captures and programs `torch.export` saved. Each
//! operator call is bound to its schema once (defaults filled in, keywords
//! placed, Python numbers in `Tensor` slots of the operators that allow it
//! made wrapped numbers), leaving slots for the values of earlier nodes;
//! subgraphs are compiled with their graph; and each value is released
//! after its last reader, so memory is given back as the graph runs. A run
//! keeps its values in its own table: one interpreter serves several
//! threads at once. Calls on values known before any run can be folded
//! into constants once ([`Interpreter::fold_constants`]), a batch
//! normalisation folded into the convolution before it
//! ([`Interpreter::fuse_batch_norms`]), and chains of pointwise calls run
//! as one pass over the data ([`Interpreter::fuse_pointwise`]).

mod fold;
mod fuse;
mod pointwise;
mod work;

pub use work::NodeProfile;

use std::sync::Arc;
use std::time::Instant;

use aten_boxing::normalize::value_matches_type;
use aten_boxing::schema::{FunctionSchema, Type};
use aten_boxing::{IValue, Stack};
use aten_ops::arguments::{bind_arguments, coerce};
use aten_ops::{GraphFn, HigherOrderOperator, HopArg, OpOverload};
use c10_core::{Error, Result, TensorBase};

use crate::builtins::Builtin;
use crate::graph::{Arg, Graph, NodeKind};

/// A value an operand is built from at run time.
#[derive(Debug)]
enum Operand {
    /// The value of node `i`.
    Node(usize),
    /// A constant.
    Const(IValue),
    /// A list, built as `kind` from its items.
    List(ListKind, Vec<Operand>),
    /// A tuple.
    Tuple(Vec<Operand>),
}

/// What a list operand becomes.
#[derive(Copy, Clone, Debug)]
enum ListKind {
    /// `Tensor[]`.
    Tensors,
    /// `Tensor?[]`.
    OptionalTensors,
    /// `int[]`, `SymInt[]`.
    Ints,
    /// `float[]`.
    Floats,
    /// `bool[]`.
    Bools,
    /// Whatever the items are (a list of tensors becomes `Tensor[]`, of
    /// ints `int[]`).
    Inferred,
}

/// One compiled node.
enum Step {
    /// The `i`-th input.
    Input(usize),
    /// A constant (and `None` for a subgraph, which higher-order calls
    /// compile as their function).
    Constant(IValue),
    /// An operator call: its bound arguments with placeholders at the
    /// slots, and what fills each slot (with the schema type it must
    /// have, for the conversions of the binding).
    Call {
        op: Arc<OpOverload>,
        schema: Arc<FunctionSchema>,
        template: Stack,
        slots: Vec<(usize, Operand)>,
    },
    /// A higher-order operator call.
    HigherOrder {
        op: Arc<HigherOrderOperator>,
        args: Vec<HopOperand>,
    },
    /// A Python function of sizes.
    Builtin {
        function: Builtin,
        args: Vec<Operand>,
    },
    /// An element of an earlier node's results.
    GetItem { of: usize, index: usize },
    /// The graph's results.
    Output(Vec<Operand>),
    /// A chain of pointwise calls run as one (see [`pointwise`]).
    Fused(Box<pointwise::Fused>),
}

/// An argument of a higher-order call.
enum HopOperand {
    /// A subgraph, passed as a function.
    Function(Arc<Interpreter>),
    /// A value.
    Value(Operand),
}

/// A compiled graph.
pub struct Interpreter {
    steps: Vec<Step>,
    names: Vec<String>,
    /// Per step, the values it reads last (released after it).
    dead: Vec<Vec<usize>>,
    num_inputs: usize,
}

impl std::fmt::Debug for Interpreter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interpreter")
            .field("nodes", &self.steps.len())
            .field("inputs", &self.num_inputs)
            .finish()
    }
}

/// A placeholder of schema type `ty` for a slot filled at run time (so
/// that binding's type checks pass).
fn placeholder(ty: &Type) -> IValue {
    match ty {
        Type::Optional(_) => IValue::None,
        Type::Tensor => IValue::Tensor(TensorBase::undefined()),
        Type::Int | Type::SymInt | Type::ScalarType | Type::Layout | Type::MemoryFormat => {
            IValue::Int(0)
        }
        Type::Float => IValue::double(0.0),
        Type::Bool | Type::SymBool => IValue::bool(false),
        Type::Number => IValue::Int(0),
        Type::List(inner) => match &**inner {
            Type::Tensor => IValue::TensorList(Arc::new(Vec::new())),
            Type::Optional(t) if **t == Type::Tensor => {
                IValue::OptionalTensorList(Arc::new(Vec::new()))
            }
            Type::Int | Type::SymInt => IValue::IntList(Arc::new(Vec::new())),
            Type::Float => IValue::DoubleList(Arc::new(Vec::new())),
            Type::Bool => IValue::BoolList(Arc::new(Vec::new())),
            _ => IValue::GenericList(Arc::new(Vec::new())),
        },
        _ => IValue::None,
    }
}

/// The kind of list a schema type asks for.
fn list_kind(ty: &Type) -> ListKind {
    let ty = ty.optional_element().unwrap_or(ty);
    match ty.list_element() {
        Some(Type::Tensor) => ListKind::Tensors,
        Some(Type::Optional(t)) if **t == Type::Tensor => ListKind::OptionalTensors,
        Some(Type::Int) | Some(Type::SymInt) => ListKind::Ints,
        Some(Type::Float) => ListKind::Floats,
        Some(Type::Bool) => ListKind::Bools,
        _ => ListKind::Inferred,
    }
}

/// Whether an argument reads a node's value.
fn reads_nodes(a: &Arg) -> bool {
    match a {
        Arg::Node(_) => true,
        Arg::Const(_) => false,
        Arg::List(items) | Arg::Tuple(items) => items.iter().any(reads_nodes),
    }
}

/// The constant value of an argument that reads no node.
fn constant_of(a: &Arg) -> IValue {
    match a {
        Arg::Const(v) => v.clone(),
        Arg::Node(_) => IValue::None,
        Arg::Tuple(items) => IValue::Tuple(Arc::new(items.iter().map(constant_of).collect())),
        Arg::List(items) => list_value(ListKind::Inferred, items.iter().map(constant_of).collect())
            .unwrap_or_else(|_| IValue::None),
    }
}

/// An operand of `a`, its lists built as `kind`.
fn operand(a: &Arg, kind: ListKind) -> Operand {
    match a {
        Arg::Node(j) => Operand::Node(*j),
        Arg::Const(v) => Operand::Const(v.clone()),
        Arg::List(items) => Operand::List(
            kind,
            items
                .iter()
                .map(|i| operand(i, ListKind::Inferred))
                .collect(),
        ),
        Arg::Tuple(items) => Operand::Tuple(
            items
                .iter()
                .map(|i| operand(i, ListKind::Inferred))
                .collect(),
        ),
    }
}

/// A list of `kind` made of `items`.
fn list_value(kind: ListKind, items: Vec<IValue>) -> Result<IValue> {
    let mismatch = |what: &str, v: &IValue| {
        Error::runtime(format!(
            "expected {what} in a list but found {}",
            v.type_name()
        ))
    };
    Ok(match kind {
        ListKind::Tensors => IValue::TensorList(Arc::new(
            items
                .into_iter()
                .map(|v| match v {
                    IValue::Tensor(t) => Ok(t),
                    v => Err(mismatch("a tensor", &v)),
                })
                .collect::<Result<_>>()?,
        )),
        ListKind::OptionalTensors => IValue::OptionalTensorList(Arc::new(
            items
                .into_iter()
                .map(|v| match v {
                    IValue::Tensor(t) => Ok(Some(t)),
                    IValue::None => Ok(None),
                    v => Err(mismatch("a tensor or None", &v)),
                })
                .collect::<Result<_>>()?,
        )),
        // A symbolic size keeps the list generic: a `SymInt[]` argument
        // takes it as it is, an `int[]` one guards on it.
        ListKind::Ints if items.iter().any(|v| matches!(v, IValue::SymInt(_))) => {
            IValue::GenericList(Arc::new(items))
        }
        ListKind::Ints => IValue::IntList(Arc::new(
            items
                .iter()
                .map(|v| v.to_int().map_err(|_| mismatch("an int", v)))
                .collect::<Result<_>>()?,
        )),
        ListKind::Floats => IValue::DoubleList(Arc::new(
            items
                .iter()
                .map(|v| match v {
                    IValue::Double(d) => Ok(d.get()),
                    IValue::Int(i) => Ok(*i as f64),
                    IValue::SymInt(_) => v.to_int().map(|i| i as f64),
                    v => Err(mismatch("a float", v)),
                })
                .collect::<Result<_>>()?,
        )),
        ListKind::Bools => IValue::BoolList(Arc::new(
            items
                .iter()
                .map(|v| match v {
                    IValue::Bool(b) => Ok(b.get()),
                    v => Err(mismatch("a bool", v)),
                })
                .collect::<Result<_>>()?,
        )),
        ListKind::Inferred => {
            if !items.is_empty() && items.iter().all(|v| matches!(v, IValue::Tensor(_))) {
                list_value(ListKind::Tensors, items)?
            } else if !items.is_empty()
                && items
                    .iter()
                    .all(|v| matches!(v, IValue::Int(_) | IValue::SymInt(_)))
            {
                list_value(ListKind::Ints, items)?
            } else {
                IValue::GenericList(Arc::new(items))
            }
        }
    })
}

/// The nodes an operand reads.
fn operand_reads(o: &Operand, out: &mut Vec<usize>) {
    match o {
        Operand::Node(j) => out.push(*j),
        Operand::Const(_) => {}
        Operand::List(_, items) | Operand::Tuple(items) => {
            items.iter().for_each(|i| operand_reads(i, out))
        }
    }
}

impl Interpreter {
    /// Compiles `graph`: every operator's arguments bound to its schema.
    pub fn new(graph: &Graph) -> Result<Interpreter> {
        let mut steps = Vec::with_capacity(graph.nodes.len());
        let mut inputs = 0;
        for node in &graph.nodes {
            let error =
                |e: Error| Error::new(e.kind(), format!("node `{}`: {}", node.name, e.message()));
            let step = match &node.kind {
                NodeKind::Placeholder => {
                    inputs += 1;
                    Step::Input(inputs - 1)
                }
                NodeKind::Constant(v) => Step::Constant(v.clone()),
                NodeKind::Subgraph(_) => Step::Constant(IValue::None),
                NodeKind::CallFunction { op, args, kwargs } => {
                    Interpreter::call_step(op, args, kwargs).map_err(error)?
                }
                NodeKind::CallHigherOrder { op, args } => {
                    let args = args
                        .iter()
                        .map(|a| match a {
                            Arg::Node(j) => match graph.nodes.get(*j).map(|n| &n.kind) {
                                Some(NodeKind::Subgraph(g)) => {
                                    Ok(HopOperand::Function(Arc::new(Interpreter::new(g)?)))
                                }
                                _ => Ok(HopOperand::Value(Operand::Node(*j))),
                            },
                            a => Ok(HopOperand::Value(operand(a, ListKind::Inferred))),
                        })
                        .collect::<Result<_>>()?;
                    Step::HigherOrder {
                        op: Arc::clone(op),
                        args,
                    }
                }
                NodeKind::CallBuiltin { function, args } => Step::Builtin {
                    function: *function,
                    args: args
                        .iter()
                        .map(|a| operand(a, ListKind::Inferred))
                        .collect(),
                },
                NodeKind::GetItem { of, index } => Step::GetItem {
                    of: *of,
                    index: *index,
                },
                NodeKind::Output(outs) => Step::Output(
                    outs.iter()
                        .map(|a| operand(a, ListKind::Inferred))
                        .collect(),
                ),
            };
            steps.push(step);
        }
        for (i, step) in steps.iter().enumerate() {
            for j in Interpreter::step_reads(step) {
                if j >= i {
                    return Err(Error::runtime(format!(
                        "node `{}` reads node {j}, which does not come before it",
                        graph.nodes[i].name
                    )));
                }
            }
        }
        let dead = Interpreter::liveness(&steps);
        Ok(Interpreter {
            steps,
            names: graph.nodes.iter().map(|n| n.name.clone()).collect(),
            dead,
            num_inputs: inputs,
        })
    }

    /// Per step, the values it reads last (released after it): the last
    /// reader of each value; a value nothing reads dies where it is made;
    /// the output's values are never released.
    fn liveness(steps: &[Step]) -> Vec<Vec<usize>> {
        let n = steps.len();
        let mut last: Vec<Option<usize>> = vec![None; n];
        let mut kept = vec![false; n];
        for (i, step) in steps.iter().enumerate() {
            let reads = Interpreter::step_reads(step);
            if matches!(step, Step::Output(_)) {
                reads.iter().for_each(|&j| kept[j] = true);
            }
            for j in reads {
                last[j] = Some(i);
            }
        }
        let mut dead = vec![Vec::new(); n];
        for j in 0..n {
            if kept[j] || matches!(steps[j], Step::Output(_)) {
                continue;
            }
            dead[last[j].unwrap_or(j)].push(j);
        }
        dead
    }

    fn call_step(op: &Arc<OpOverload>, args: &[Arg], kwargs: &[(String, Arg)]) -> Result<Step> {
        let schema: Arc<FunctionSchema> = op.schema()?;
        let arguments = schema.arguments();
        let mut slots = Vec::new();
        let mut positional = Vec::with_capacity(args.len());
        for (pos, a) in args.iter().enumerate() {
            let ty = arguments.get(pos).map(|x| x.real_type());
            positional.push(Interpreter::bind_one(a, ty, pos, &mut slots));
        }
        let mut keywords = Vec::with_capacity(kwargs.len());
        for (name, a) in kwargs {
            let pos = schema.argument_index_with_name(name).ok_or_else(|| {
                Error::runtime(format!(
                    "{}() got an unexpected keyword argument '{name}'",
                    schema.name()
                ))
            })?;
            let ty = Some(arguments[pos].real_type());
            keywords.push((name.as_str(), Interpreter::bind_one(a, ty, pos, &mut slots)));
        }
        let mut template = Stack::with_capacity(arguments.len());
        bind_arguments(&schema, &positional, &keywords, &mut template)?;
        Ok(Step::Call {
            op: Arc::clone(op),
            schema,
            template,
            slots,
        })
    }

    /// The bound value of argument `a` at `pos`: the constant, or a
    /// placeholder of type `ty` with a slot recorded.
    fn bind_one(
        a: &Arg,
        ty: Option<&Type>,
        pos: usize,
        slots: &mut Vec<(usize, Operand)>,
    ) -> IValue {
        if !reads_nodes(a) {
            return constant_of(a);
        }
        let kind = ty.map_or(ListKind::Inferred, list_kind);
        slots.push((pos, operand(a, kind)));
        ty.map_or(IValue::None, placeholder)
    }

    fn step_reads(step: &Step) -> Vec<usize> {
        let mut out = Vec::new();
        match step {
            Step::Call { slots, .. } => slots.iter().for_each(|(_, o)| operand_reads(o, &mut out)),
            Step::HigherOrder { args, .. } => {
                for a in args {
                    if let HopOperand::Value(o) = a {
                        operand_reads(o, &mut out);
                    }
                }
            }
            Step::Builtin { args, .. } | Step::Output(args) => {
                args.iter().for_each(|o| operand_reads(o, &mut out))
            }
            Step::GetItem { of, .. } => out.push(*of),
            Step::Fused(f) => out.extend(f.nodes()),
            Step::Input(_) | Step::Constant(_) => {}
        }
        out
    }

    /// The number of inputs the graph takes.
    pub fn num_inputs(&self) -> usize {
        self.num_inputs
    }

    /// Runs the graph on `inputs` (one per placeholder); its outputs.
    pub fn run(&self, inputs: &[IValue]) -> Result<Vec<IValue>> {
        self.run_timed(inputs, None)
    }

    /// As [`run`](Self::run), adding each node's wall time and work to
    /// `profile` when it is given (one entry per node of the graph; a
    /// shorter profile covers the nodes it has entries for).
    pub fn run_timed(
        &self,
        inputs: &[IValue],
        mut profile: Option<&mut NodeProfile>,
    ) -> Result<Vec<IValue>> {
        if inputs.len() != self.num_inputs {
            return Err(Error::runtime(format!(
                "the graph takes {} inputs but {} were given",
                self.num_inputs,
                inputs.len()
            )));
        }
        let mut values: Vec<Option<IValue>> = vec![None; self.steps.len()];
        for (i, step) in self.steps.iter().enumerate() {
            if let Step::Output(outs) = step {
                return outs.iter().map(|o| self.eval(o, &values, i)).collect();
            }
            let start = profile.is_some().then(Instant::now);
            let value = match step {
                Step::Fused(fused) => self.fused_step(fused, inputs, &mut values)?,
                _ => self
                    .step(i, step, inputs, &values)
                    .map_err(|e| self.node_error(i, step, e))?,
            };
            if let (Some(start), Some(p)) = (start, profile.as_deref_mut()) {
                let time = start.elapsed();
                let operands = self.operands(i, step, &values);
                p.add(i, time, self.node_target(i).as_deref(), &operands, &value);
            }
            values[i] = Some(value);
            for &j in &self.dead[i] {
                values[j] = None;
            }
        }
        Err(Error::runtime("the graph has no output node"))
    }

    /// `e` of node `i`'s call, named with the node and what it calls.
    fn node_error(&self, i: usize, step: &Step, e: Error) -> Error {
        let what = match step {
            Step::Call { op, .. } => op.name(),
            Step::Builtin { function, .. } => function.target().to_string(),
            _ => return e,
        };
        Error::new(
            e.kind(),
            format!("node `{}` ({what}): {}", self.names[i], e.message()),
        )
    }

    /// A fused chain: its program where the backend serves it, else its
    /// calls one by one (each value in its node's slot until the chain
    /// ends).
    fn fused_step(
        &self,
        fused: &pointwise::Fused,
        inputs: &[IValue],
        values: &mut [Option<IValue>],
    ) -> Result<IValue> {
        if let Some(t) = self.run_fused(fused, values)? {
            return Ok(IValue::Tensor(t));
        }
        let mut outcome = Ok(());
        for (j, step) in &fused.calls {
            match self.step(*j, step, inputs, values) {
                Ok(v) => values[*j] = Some(v),
                Err(e) => {
                    outcome = Err(self.node_error(*j, step, e));
                    break;
                }
            }
        }
        let root = fused.calls.last().map(|(j, _)| *j);
        let value = root.and_then(|r| values[r].take());
        for (j, _) in &fused.calls {
            values[*j] = None;
        }
        outcome?;
        value.ok_or_else(|| Error::internal("a fused chain has no calls"))
    }

    fn step(
        &self,
        i: usize,
        step: &Step,
        inputs: &[IValue],
        values: &[Option<IValue>],
    ) -> Result<IValue> {
        Ok(match step {
            Step::Input(k) => inputs[*k].clone(),
            Step::Constant(v) => v.clone(),
            Step::Call {
                op,
                schema,
                template,
                slots,
            } => {
                let mut stack = template.clone();
                for (pos, o) in slots {
                    let v = self.eval(o, values, i)?;
                    let fits = schema
                        .arguments()
                        .get(*pos)
                        .is_some_and(|a| value_matches_type(&v, a.ty()));
                    stack[*pos] = if fits { v } else { coerce(schema, *pos, &v)? };
                }
                op.call_boxed(&mut stack)?;
                match stack.len() {
                    0 => IValue::None,
                    1 => stack.pop().unwrap_or_default(),
                    _ => IValue::Tuple(Arc::new(stack)),
                }
            }
            Step::HigherOrder { op, args } => {
                let args = args
                    .iter()
                    .map(|a| match a {
                        HopOperand::Function(g) => {
                            let g = Arc::clone(g);
                            let f: GraphFn = Arc::new(move |xs: &[IValue]| g.run(xs));
                            Ok(HopArg::Fn(f))
                        }
                        HopOperand::Value(o) => self.eval(o, values, i).map(HopArg::Value),
                    })
                    .collect::<Result<Vec<_>>>()?;
                let results = op.call(&args)?;
                match results.len() {
                    1 => results.into_iter().next().unwrap_or_default(),
                    _ => IValue::Tuple(Arc::new(results)),
                }
            }
            Step::Builtin { function, args } => {
                let args = args
                    .iter()
                    .map(|o| self.eval(o, values, i))
                    .collect::<Result<Vec<_>>>()?;
                function.call(&args)?
            }
            Step::GetItem { of, index } => {
                let all = self.value(*of, values, i)?;
                let item = match all {
                    IValue::Tuple(items) | IValue::GenericList(items) => items.get(*index).cloned(),
                    IValue::TensorList(ts) => ts.get(*index).cloned().map(IValue::Tensor),
                    IValue::OptionalTensorList(ts) => ts
                        .get(*index)
                        .cloned()
                        .map(|t| t.map_or(IValue::None, IValue::Tensor)),
                    // `getitem(x, 0)` of a single result.
                    other if *index == 0 => Some(other.clone()),
                    _ => None,
                };
                item.ok_or_else(|| {
                    Error::runtime(format!(
                        "node `{}`: getitem {index} past the results of `{}`",
                        self.names[i], self.names[*of]
                    ))
                })?
            }
            Step::Output(_) | Step::Fused(_) => IValue::None,
        })
    }

    /// What step `i` was given, for profiles: a call's arguments in its
    /// schema's order, another step's values read (`None` for a value no
    /// longer held).
    fn operands(&self, i: usize, step: &Step, values: &[Option<IValue>]) -> Vec<IValue> {
        match step {
            Step::Call {
                template, slots, ..
            } => {
                let mut stack = template.clone();
                for (pos, o) in slots {
                    if let Some(slot) = stack.get_mut(*pos) {
                        *slot = self.eval(o, values, i).unwrap_or_default();
                    }
                }
                stack
            }
            _ => Interpreter::step_reads(step)
                .into_iter()
                .map(|j| values.get(j).cloned().flatten().unwrap_or_default())
                .collect(),
        }
    }

    fn value<'v>(&self, j: usize, values: &'v [Option<IValue>], at: usize) -> Result<&'v IValue> {
        values.get(j).and_then(|v| v.as_ref()).ok_or_else(|| {
            Error::internal(format!(
                "node `{}` reads `{}`, which was not computed or was released",
                self.names[at],
                self.names.get(j).map_or("?", String::as_str)
            ))
        })
    }

    fn eval(&self, o: &Operand, values: &[Option<IValue>], at: usize) -> Result<IValue> {
        match o {
            Operand::Node(j) => self.value(*j, values, at).cloned(),
            Operand::Const(v) => Ok(v.clone()),
            Operand::Tuple(items) => Ok(IValue::Tuple(Arc::new(
                items
                    .iter()
                    .map(|i| self.eval(i, values, at))
                    .collect::<Result<_>>()?,
            ))),
            Operand::List(kind, items) => list_value(
                *kind,
                items
                    .iter()
                    .map(|i| self.eval(i, values, at))
                    .collect::<Result<_>>()?,
            ),
        }
    }

    /// The name of each node, in order (what [`run_timed`](Self::run_timed)'s
    /// times are indexed by).
    pub fn node_names(&self) -> &[String] {
        &self.names
    }

    /// What node `i` calls (`aten::add.Tensor`), if it is a call.
    pub fn node_target(&self, i: usize) -> Option<String> {
        match self.steps.get(i)? {
            Step::Call { op, .. } => Some(op.name()),
            Step::Builtin { function, .. } => Some(function.target().to_string()),
            Step::HigherOrder { op, .. } => Some(format!("higher_order::{}", op.name())),
            Step::Fused(fused) => Some(Interpreter::fused_target(fused)),
            _ => None,
        }
    }

    /// The operators the graph's calls resolve to, in node order
    /// (`aten::add.Tensor`).
    pub fn targets(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (i, step) in self.steps.iter().enumerate() {
            match step {
                Step::Fused(fused) => out.extend(fused.calls.iter().filter_map(|(_, s)| match s {
                    Step::Call { op, .. } => Some(op.name()),
                    _ => None,
                })),
                _ => out.extend(self.node_target(i)),
            }
        }
        out
    }
}
