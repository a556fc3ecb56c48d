//! What the generated Autograd kernels call to record an operation
//! (`VariableTypeUtils.h`): whether any input requires grad, the next
//! edges, the node, the outputs' history, and PyTorch's checks for
//! in-place and `out=` calls.

use std::sync::Arc;

use aten_core::Tensor;
use c10_core::{Error, GradMode, Result, ScalarType};

use crate::meta;
use crate::node::{ApplyContext, BackwardFunction, Edge, EdgeList, InputMetadata, Node};

/// Whether a dtype can carry gradients (`isDifferentiableType`).
pub fn is_differentiable_type(dtype: ScalarType) -> bool {
    dtype.is_floating_point() || dtype.is_complex()
}

/// `flag && GradMode::is_enabled()`: the generated kernels pass whether
/// some argument requires grad, so that grad mode (a thread-local) is read
/// only then.
#[inline(always)]
pub fn grad_mode_and(flag: bool) -> bool {
    flag && GradMode::is_enabled()
}

/// The edges of `tensors`' gradients (`collect_next_edges`), one per
/// tensor (invalid for an absent one or one that does not require grad).
pub fn collect_next_edges<'a>(
    tensors: impl IntoIterator<Item = Option<&'a Tensor>>,
) -> Result<EdgeList> {
    let mut edges = EdgeList::new();
    for t in tensors {
        edges.push(match t {
            Some(t) if t.defined() => meta::gradient_edge(t)?,
            _ => Edge::invalid(),
        });
    }
    Ok(edges)
}

/// The node of a recorded operation whose outputs are `outputs`.
pub fn make_node(
    name: &'static str,
    function: impl BackwardFunction + 'static,
    next_edges: EdgeList,
    outputs: &[&Tensor],
    sequence_nr: u64,
) -> Arc<Node> {
    let metadata = outputs.iter().map(|t| InputMetadata::of(t)).collect();
    Node::new(name, function, next_edges, metadata, sequence_nr)
}

/// A sequence number for a node about to be recorded.
pub fn sequence_nr() -> u64 {
    crate::node::next_sequence_nr()
}

/// `set_history`: output `i` of the operation becomes output `i` of
/// `node`, where `differentiable[i]` and its dtype can carry gradients.
pub fn set_history(outputs: &[&Tensor], node: &Arc<Node>, differentiable: &[bool]) -> Result<()> {
    for (i, t) in outputs.iter().enumerate() {
        if !differentiable.get(i).copied().unwrap_or(true) || !t.defined() {
            continue;
        }
        if t.dtype().is_some_and(is_differentiable_type) {
            meta::set_gradient_edge(t, node, i)?;
        }
    }
    Ok(())
}

/// `check_no_requires_grad`: PyTorch's error for an argument the operation
/// is not differentiable with respect to.
pub fn check_no_requires_grad(t: Option<&Tensor>, name: &str, fn_name: &str) -> Result<()> {
    if t.is_some_and(|t| t.defined() && t.requires_grad()) && GradMode::is_enabled() {
        return Err(Error::runtime(format!(
            "The function '{fn_name}' is not differentiable with respect to argument '{name}'. This input cannot have requires_grad True."
        )));
    }
    Ok(())
}

/// `throw_error_out_requires_grad`.
pub fn out_requires_grad_error(name: &str) -> Error {
    Error::runtime(format!(
        "{name}(): functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad."
    ))
}

/// The backward of an operation without a derivative formula: PyTorch's
/// `NotImplemented` node.
pub struct NotImplemented {
    /// The operator's name.
    pub name: &'static str,
}

impl BackwardFunction for NotImplemented {
    fn apply(&mut self, _ctx: &ApplyContext<'_>, _grads: Vec<Tensor>) -> Result<Vec<Tensor>> {
        Err(Error::runtime(format!(
            "the derivative for '{}' is not implemented.",
            self.name
        )))
    }
}

/// Consecutive ranges of the given lengths: which next edges belong to
/// each input of a node with `Tensor[]` inputs.
pub fn ranges(lens: &[usize]) -> Vec<std::ops::Range<usize>> {
    let mut at = 0;
    lens.iter()
        .map(|&n| {
            let r = at..at + n;
            at += n;
            r
        })
        .collect()
}

/// `increment_version`: an in-place write's version bump, at
/// ADInplaceOrView. An inference tensor keeps no version: writing it in
/// place outside inference mode is PyTorch's error.
pub fn increment_version(t: &Tensor) -> Result<()> {
    if t.is_inference() {
        if !c10_core::InferenceMode::is_enabled() {
            return Err(Error::runtime(
                "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details.",
            ));
        }
        return Ok(());
    }
    t.bump_version();
    Ok(())
}

/// The undefined gradients of a node that received none.
pub fn undefined_grads(n: usize) -> Vec<Tensor> {
    vec![Tensor::undefined(); n]
}
