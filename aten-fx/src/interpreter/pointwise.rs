//! Pointwise fusion chosen per graph at load: a chain of elementwise calls
//! (`add`, `sub`, `mul`, `div`, `clamp`, `hardtanh`, `relu`, `sigmoid`,
//! `silu`, `tanh`, `hardswish`, `hardsigmoid`) in which each value but the
//! last is read by later calls of the chain alone becomes one step that
//! runs the chain as a [`PointwiseProgram`]: the SiLU that export writes
//! as `mul(x, sigmoid(x))` (with the batch normalisation's product that
//! makes `x`), the hardswish written as `add`, `clamp`, `mul`, `div`, a
//! residual sum and its ReLU. Operands are the graph's values, numbers and
//! tensor constants (a per-channel scale). An in-place activation
//! (`hardtanh_`, `relu_` of pre-dispatch graphs) ends a chain whose result
//! it writes when nothing else reads that result, so no one sees the
//! write. Each run offers the program to the
//! backend's evaluator ([`POINTWISE_PROGRAM_STUB`]) when only the
//! backend's kernels would see the calls (no input requires grad, no mode
//! or other functionality key is active); when it declines (another dtype,
//! layout or shape) the calls run one by one as they were. The evaluator
//! takes each operator's formula, so fused and unfused results agree. A
//! chain runs where its last call stood, so none spans a call that writes
//! an argument, and a value the output reads is never fused away.
//!
//! [`PointwiseProgram`]: aten_core::native::pointwise_program::PointwiseProgram
//! [`POINTWISE_PROGRAM_STUB`]: aten_core::native::pointwise_program::POINTWISE_PROGRAM_STUB

use std::sync::Arc;

use aten_boxing::IValue;
use aten_core::dispatch_stub;
use aten_core::native::pointwise_program::{
    PointwiseOp, PointwiseOperand, PointwiseProgram, PointwiseStep, POINTWISE_PROGRAM_STUB,
};
use c10_core::dispatch_key::DispatchKey;
use c10_core::dispatch_key_set::DispatchKeySet;
use c10_core::dispatch_key_set::AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW;
use c10_core::local_dispatch_key_set::tls_local_dispatch_key_set;
use c10_core::{DeviceType, Result, ScalarType, TensorBase};

use super::fold::writes_an_argument;
use super::{Interpreter, Operand, Step};

/// A fused chain: its program, what it reads (one per program input)
/// and the calls it replaces, by node, in order (the last is the node the
/// fused step stands at), to run when the backend declines.
pub(super) struct Fused {
    pub(super) program: Arc<PointwiseProgram>,
    pub(super) inputs: Vec<FusedInput>,
    pub(super) calls: Vec<(usize, Step)>,
}

/// An input of a fused chain.
pub(super) enum FusedInput {
    /// The value of node `j`.
    Node(usize),
    /// A tensor constant of a call (a batch normalisation's scale).
    Tensor(TensorBase),
}

impl Fused {
    /// The nodes the chain reads.
    pub(super) fn nodes(&self) -> impl Iterator<Item = usize> + '_ {
        self.inputs.iter().filter_map(|x| match x {
            FusedInput::Node(j) => Some(*j),
            FusedInput::Tensor(_) => None,
        })
    }
}

/// An operand of a call as the fusion sees it.
#[derive(Clone)]
enum Arg {
    Node(usize),
    Number(f64),
    /// A tensor constant that is not a wrapped number.
    Tensor(TensorBase),
}

impl Interpreter {
    /// Fuses the graph's pointwise chains (see the module docs); returns
    /// how many calls were fused into others.
    pub fn fuse_pointwise(&mut self) -> usize {
        let n = self.steps.len();
        let mut readers: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, step) in self.steps.iter().enumerate() {
            let mut reads = Interpreter::step_reads(step);
            reads.dedup();
            for j in reads {
                if readers[j].last() != Some(&i) {
                    readers[j].push(i);
                }
            }
        }
        let calls: Vec<Option<(PointwiseOp, Vec<Arg>)>> =
            self.steps.iter().map(pointwise_call).collect();
        // In-place pointwise calls (`hardtanh_` after a batch norm in
        // pre-dispatch graphs) only end chains, and only when the value
        // they write is a member of theirs that nothing else reads.
        let in_place: Vec<bool> = self
            .steps
            .iter()
            .zip(&calls)
            .map(|(s, c)| c.is_some() && writes_an_argument(s))
            .collect();
        // A call joins the chain of its only reader when that reader is a
        // pointwise call too (the graph's output is no call: a value it
        // returns is never fused away).
        let joins = |i: usize| -> Option<usize> {
            calls[i].as_ref()?;
            match readers[i].as_slice() {
                [r] if calls[*r].is_some() => Some(*r),
                _ => None,
            }
        };
        // Writes before each step: a chain runs at its last call, so no call
        // that writes an argument may lie between its first and its last.
        let mut writes = vec![0usize; n + 1];
        for (i, step) in self.steps.iter().enumerate() {
            writes[i + 1] = writes[i] + usize::from(writes_an_argument(step));
        }
        // Chains are found from their last calls, latest first, so that a
        // call that one chain takes is no other chain's end.
        let mut taken = vec![false; n];
        let (mut fused, mut chains) = (0, 0);
        for root in (0..n).rev() {
            if calls[root].is_none() || taken[root] || (joins(root).is_some() && !in_place[root]) {
                continue;
            }
            // The chain: the pointwise calls all of whose readers are in
            // it, transitively (the `x` of SiLU's `mul(x, sigmoid(x))`
            // joins once both of its readers have), in node order.
            let mut members = vec![root];
            loop {
                let before = members.len();
                let mut k = 0;
                while k < members.len() {
                    let args = calls[members[k]].as_ref().map_or(&[][..], |(_, a)| a);
                    for a in args {
                        let Arg::Node(j) = *a else { continue };
                        let joins = calls[j].is_some()
                            && !in_place[j]
                            && !taken[j]
                            && !members.contains(&j)
                            && !readers[j].is_empty()
                            && readers[j].iter().all(|r| members.contains(r));
                        if joins {
                            members.push(j);
                        }
                    }
                    k += 1;
                }
                if members.len() == before {
                    break;
                }
            }
            // One call alone is worth a step only when it reads a tensor
            // constant (a batch normalisation's scale), which the
            // evaluator broadcasts without the dispatcher's call.
            let reads_constant = |m: &usize| {
                calls[*m]
                    .as_ref()
                    .is_some_and(|(_, args)| args.iter().any(|a| matches!(a, Arg::Tensor(_))))
            };
            if members.len() < 2 && !members.iter().any(reads_constant) {
                continue;
            }
            let writes_a_member = match calls[root].as_ref().and_then(|(_, a)| a.first()) {
                Some(Arg::Node(j)) => members.contains(j),
                _ => false,
            };
            if in_place[root] && !writes_a_member {
                continue;
            }
            members.sort_unstable();
            if writes[root] != writes[members[0] + 1] {
                continue;
            }
            let Some((program, inputs)) = program_of(&members, &calls) else {
                continue;
            };
            let mut replaced = Vec::with_capacity(members.len());
            for &m in &members {
                taken[m] = true;
                let step = std::mem::replace(&mut self.steps[m], Step::Constant(IValue::None));
                replaced.push((m, step));
            }
            self.steps[root] = Step::Fused(Box::new(Fused {
                program: Arc::new(program),
                inputs,
                calls: replaced,
            }));
            fused += members.len() - 1;
            chains += 1;
        }
        if chains > 0 {
            self.dead = Interpreter::liveness(&self.steps);
        }
        fused
    }

    /// Runs a fused chain's program on `values`, if the backend serves
    /// it: `None` when the calls must run one by one. An input whose value
    /// dies with the chain and that nothing else holds (a convolution's
    /// output that only the chain reads) is taken out of `values` and
    /// donated, so the result can be written in its place; it is put back
    /// when the backend declines.
    pub(super) fn run_fused(
        &self,
        fused: &Fused,
        values: &mut [Option<IValue>],
    ) -> Result<Option<TensorBase>> {
        let Some(kernel) = dispatch_stub::find(&POINTWISE_PROGRAM_STUB, DeviceType::CPU) else {
            return Ok(None);
        };
        let root = fused.calls.last().map(|(r, _)| *r);
        let dies = |j: usize| {
            root.and_then(|r| self.dead.get(r))
                .is_some_and(|d| d.contains(&j))
        };
        let mut donated: Option<(usize, usize, TensorBase)> = None;
        for (k, input) in fused.inputs.iter().enumerate() {
            let FusedInput::Node(j) = *input else {
                continue;
            };
            if !dies(j) || !matches!(values.get(j), Some(Some(IValue::Tensor(_)))) {
                continue;
            }
            if let Some(IValue::Tensor(mut t)) = values[j].take() {
                if t.is_exclusively_owned() {
                    donated = Some((k, j, t));
                    break;
                }
                values[j] = Some(IValue::Tensor(t));
            }
        }
        let given = donated.as_ref().map(|(k, _, t)| (*k, t));
        let result = match Interpreter::served_inputs(fused, values, given) {
            // The handles to the donated tensor are this call's alone.
            Some(tensors) => kernel(&fused.program, &tensors, donated.as_ref().map(|(k, ..)| *k)),
            None => Ok(None),
        };
        if let (Ok(None) | Err(_), Some((_, j, t))) = (&result, donated) {
            values[j] = Some(IValue::Tensor(t));
        }
        result
    }

    /// The chain's input tensors, when only the CPU backend's kernels
    /// would see its calls.
    /// `given` is input `k`'s tensor when it was taken out of `values`.
    fn served_inputs(
        fused: &Fused,
        values: &[Option<IValue>],
        given: Option<(usize, &TensorBase)>,
    ) -> Option<Vec<TensorBase>> {
        let mut tensors = Vec::with_capacity(fused.inputs.len());
        let mut keys = DispatchKeySet::EMPTY;
        for (k, input) in fused.inputs.iter().enumerate() {
            let t = match (input, given) {
                (_, Some((g, t))) if g == k => t,
                (FusedInput::Node(j), _) => match values.get(*j)?.as_ref()? {
                    IValue::Tensor(t) => t,
                    _ => return None,
                },
                (FusedInput::Tensor(t), _) => t,
            };
            if !t.defined() || t.requires_grad() {
                return None;
            }
            keys = keys.union(t.key_set());
            tensors.push(t.clone());
        }
        // The keys the calls would dispatch on, less autograd's (no input
        // requires grad) and BackendSelect's (no factory among them): the
        // backend's alone, or the calls run as they were.
        let tls = tls_local_dispatch_key_set();
        let keys = keys
            .union(tls.included)
            .difference(tls.excluded)
            .difference(AUTOGRAD_DISPATCH_KEYSET_WITH_AD_INPLACE_OR_VIEW)
            .remove(DispatchKey::BackendSelect);
        (keys.highest_priority_type_id() == DispatchKey::CPU).then_some(tensors)
    }

    /// What a fused chain calls, for profiles (`pointwise[aten::sigmoid,
    /// aten::mul.Tensor]`).
    pub(super) fn fused_target(fused: &Fused) -> String {
        let names: Vec<String> = fused
            .calls
            .iter()
            .filter_map(|(_, s)| match s {
                Step::Call { op, .. } => Some(op.name()),
                _ => None,
            })
            .collect();
        format!("pointwise[{}]", names.join(", "))
    }
}

/// The program of a chain (`members` in node order, the last its root)
/// and what it reads; `None` when a member's operands do not fit.
fn program_of(
    members: &[usize],
    calls: &[Option<(PointwiseOp, Vec<Arg>)>],
) -> Option<(PointwiseProgram, Vec<FusedInput>)> {
    let mut inputs: Vec<FusedInput> = Vec::new();
    let mut steps = Vec::with_capacity(members.len());
    for &m in members {
        let (op, args) = calls[m].as_ref()?;
        let operands = args
            .iter()
            .map(|a| match a {
                Arg::Number(v) => PointwiseOperand::Number(*v),
                Arg::Tensor(t) => {
                    inputs.push(FusedInput::Tensor(t.clone()));
                    PointwiseOperand::Input(inputs.len() - 1)
                }
                Arg::Node(j) => match members.iter().position(|x| x == j) {
                    Some(k) => PointwiseOperand::Result(k),
                    None => {
                        let known = inputs
                            .iter()
                            .position(|x| matches!(x, FusedInput::Node(i) if i == j));
                        let k = known.unwrap_or_else(|| {
                            inputs.push(FusedInput::Node(*j));
                            inputs.len() - 1
                        });
                        PointwiseOperand::Input(k)
                    }
                },
            })
            .collect();
        steps.push(PointwiseStep { op: *op, operands });
    }
    let program = PointwiseProgram::new(inputs.len(), steps).ok()?;
    Some((program, inputs))
}

/// The pointwise operation of a call and its operands, if the fusion
/// knows it: its tensors nodes or tensor constants (at least one a node),
/// its other operands numbers (a Python number of the graph), `alpha` 1,
/// clamp bounds numbers or absent.
fn pointwise_call(step: &Step) -> Option<(PointwiseOp, Vec<Arg>)> {
    let Step::Call {
        op,
        template,
        slots,
        ..
    } = step
    else {
        return None;
    };
    let constant = |v: &IValue| -> Option<Arg> {
        match (number(v), v) {
            (Some(x), _) => Some(Arg::Number(x)),
            (None, IValue::Tensor(t)) if t.defined() && !t.is_wrapped_number() => {
                Some(Arg::Tensor(t.clone()))
            }
            _ => None,
        }
    };
    let arg = |pos: usize| -> Option<Arg> {
        match slots.iter().find(|(p, _)| *p == pos) {
            Some((_, Operand::Node(j))) => Some(Arg::Node(*j)),
            Some((_, Operand::Const(v))) => constant(v),
            Some(_) => None,
            None => constant(template.get(pos)?),
        }
    };
    // A constant operand (a bound, `alpha`): a number, or `None`.
    let bound = |pos: usize| -> Option<Option<f64>> {
        if slots.iter().any(|(p, _)| *p == pos) {
            return None;
        }
        match template.get(pos)? {
            IValue::None => Some(None),
            v => Some(Some(number(v)?)),
        }
    };
    // An in-place variant (`hardtanh_`, `relu_`) computes its functional
    // twin's values; the fusion lets one end a chain only when nothing
    // else sees the value it writes.
    let name = functional_name(&op.name());
    let unit_alpha = || bound(2) == Some(Some(1.0));
    let (op, arity) = match name.as_str() {
        "aten::add.Tensor" | "aten::add.Scalar" if unit_alpha() => (PointwiseOp::Add, 2),
        "aten::sub.Tensor" | "aten::sub.Scalar" if unit_alpha() => (PointwiseOp::Sub, 2),
        "aten::mul.Tensor" | "aten::mul.Scalar" => (PointwiseOp::Mul, 2),
        "aten::div.Tensor" | "aten::div.Scalar" => (PointwiseOp::Div, 2),
        "aten::relu" => (PointwiseOp::Relu, 1),
        "aten::sigmoid" => (PointwiseOp::Sigmoid, 1),
        "aten::silu" => (PointwiseOp::Silu, 1),
        "aten::tanh" => (PointwiseOp::Tanh, 1),
        "aten::hardswish" => (PointwiseOp::Hardswish, 1),
        "aten::hardsigmoid" => (PointwiseOp::Hardsigmoid, 1),
        "aten::clamp" | "aten::hardtanh" => (
            PointwiseOp::Clamp {
                min: bound(1)?,
                max: bound(2)?,
            },
            1,
        ),
        "aten::clamp_min" => (
            PointwiseOp::Clamp {
                min: Some(bound(1)??),
                max: None,
            },
            1,
        ),
        "aten::clamp_max" => (
            PointwiseOp::Clamp {
                min: None,
                max: Some(bound(1)??),
            },
            1,
        ),
        _ => return None,
    };
    if let PointwiseOp::Clamp { min, max } = op {
        if min.is_some_and(f64::is_nan) || max.is_some_and(f64::is_nan) {
            return None;
        }
    }
    let args = (0..arity).map(arg).collect::<Option<Vec<_>>>()?;
    // At least one operand is a tensor (of the graph).
    args.iter()
        .any(|a| matches!(a, Arg::Node(_)))
        .then_some((op, args))
}

/// The functional twin of an in-place operator's name (`aten::hardtanh_`
/// -> `aten::hardtanh`, `aten::add_.Tensor` -> `aten::add.Tensor`); other
/// names as they are.
fn functional_name(name: &str) -> String {
    let (base, overload) = match name.split_once('.') {
        Some((b, o)) => (b, Some(o)),
        None => (name, None),
    };
    let base = base.strip_suffix('_').unwrap_or(base);
    match overload {
        Some(o) => format!("{base}.{o}"),
        None => base.to_string(),
    }
}

/// A constant that is a number: a Python number, or the wrapped number a
/// Python number in a `Tensor` slot was bound as (not a tensor of the
/// graph, whose dtype would take part in the promotion).
fn number(v: &IValue) -> Option<f64> {
    match v {
        IValue::Int(i) => Some(*i as f64),
        IValue::Double(d) => Some(d.get()),
        IValue::Tensor(t) if t.is_wrapped_number() && t.dim() == 0 => match t.dtype()? {
            ScalarType::Double => t.to_vec::<f64>().ok()?.first().copied(),
            ScalarType::Long => t.to_vec::<i64>().ok()?.first().map(|&i| i as f64),
            _ => None,
        },
        _ => None,
    }
}
