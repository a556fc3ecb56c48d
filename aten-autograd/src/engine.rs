//! The engine (`torch::autograd::Engine`): runs a backward pass over the
//! graph reachable from some outputs.
//!
//! A graph task counts, for every node reachable from the roots, how many
//! edges lead into it; a node runs once all of them delivered their
//! gradient (summed in its input buffer), ready nodes in decreasing
//! sequence number (the reverse of the order the forward made them, leaf
//! accumulators first), on the calling thread. A backward pass over
//! `grad(outputs, inputs)` runs only the nodes on a path to an input and
//! captures the gradients flowing into the inputs instead of accumulating
//! them. Gradients returned by a node are checked against what the node it
//! flows to expects: a gradient of a broadcast input is summed back to the
//! input's shape, and converted to its dtype (`validate_outputs`).

use aten_core::native::dims::fmt_list;
use std::collections::{BinaryHeap, HashMap};
use std::sync::Arc;

use aten_core::{ops, Tensor};
use c10_core::{AutoGradMode, Error, Result};

use crate::meta;
use crate::node::{ApplyContext, Edge, Node};

/// A node's identity within one graph task.
fn key(n: &Arc<Node>) -> usize {
    Arc::as_ptr(n) as *const () as usize
}

/// Per node: whether it must run, and which of its inputs are captured.
#[derive(Default)]
struct ExecInfo {
    needed: bool,
    captures: Vec<(usize, usize)>,
}

/// One backward pass (`GraphTask`).
struct GraphTask {
    keep_graph: bool,
    /// `None`: every reachable node runs (`backward()`).
    exec_info: Option<HashMap<usize, ExecInfo>>,
    captured: Vec<Tensor>,
}

impl GraphTask {
    /// Whether the node runs.
    fn needed(&self, n: &Arc<Node>) -> bool {
        match &self.exec_info {
            None => true,
            Some(info) => info.get(&key(n)).is_some_and(|i| i.needed),
        }
    }

    /// Whether a gradient flowing into the node is wanted: it runs or
    /// captures an input (`should_execute`).
    fn should_execute(&self, n: &Arc<Node>) -> bool {
        match &self.exec_info {
            None => true,
            Some(info) => info
                .get(&key(n))
                .is_some_and(|i| i.needed || !i.captures.is_empty()),
        }
    }

    /// Runs `node` on its input gradients, computing only the gradients
    /// of the edges whose functions run or capture; frees its saved
    /// variables unless the graph is kept.
    fn apply(&self, node: &Arc<Node>, inputs: Vec<Tensor>) -> Result<Vec<Tensor>> {
        let needed: Vec<bool> = node
            .next_edges()
            .iter()
            .map(|e| e.function.as_ref().is_some_and(|f| self.should_execute(f)))
            .collect();
        let mut function = node.function();
        let ctx = ApplyContext {
            node,
            needed: &needed,
        };
        let out = function.apply(&ctx, inputs)?;
        if !self.keep_graph {
            function.release_variables();
        }
        Ok(out)
    }
}

/// Formats sizes as PyTorch's `torch.Size([2, 3])`.
pub(crate) fn torch_size(sizes: &[i64]) -> String {
    format!("torch.Size({})", fmt_list(sizes))
}

/// `_make_grads`: the gradient fed to each output (given ones checked for
/// shape; an implicit one only for a scalar that requires grad).
fn make_grads(outputs: &[Tensor], grad_outputs: &[Option<Tensor>]) -> Result<Vec<Tensor>> {
    if !grad_outputs.is_empty() && grad_outputs.len() != outputs.len() {
        return Err(Error::runtime(format!(
            "grad requires one grad_output per output: got {} tensors and {} gradients",
            outputs.len(),
            grad_outputs.len()
        )));
    }
    let mut grads = Vec::with_capacity(outputs.len());
    for (i, out) in outputs.iter().enumerate() {
        match grad_outputs.get(i).and_then(Option::as_ref) {
            Some(g) => {
                if g.sizes() != out.sizes() {
                    return Err(Error::runtime(format!(
                        "Mismatch in shape: grad_output[{i}] has a shape of {} and output[{i}] has a shape of {}.",
                        torch_size(&g.sizes()),
                        torch_size(&out.sizes())
                    )));
                }
                grads.push(g.clone());
            }
            None if out.requires_grad() => {
                if out.numel() != 1 {
                    return Err(Error::runtime(
                        "grad can be implicitly created only for scalar outputs",
                    ));
                }
                grads.push(ops::ones_like(out)?);
            }
            None => grads.push(Tensor::undefined()),
        }
    }
    Ok(grads)
}

/// The roots' edges; PyTorch's error for an output outside the graph.
fn root_edges(outputs: &[Tensor]) -> Result<Vec<Edge>> {
    outputs
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let edge = meta::gradient_edge(t)?;
            if !edge.is_valid() {
                return Err(Error::runtime(format!(
                    "element {i} of tensors does not require grad and does not have a grad_fn"
                )));
            }
            Ok(edge)
        })
        .collect()
}

/// `torch.autograd.backward(tensors, grad_tensors, retain_graph,
/// create_graph)`: accumulates the gradients of `tensors` into the leaves'
/// `.grad`. `grad_tensors` may be empty (every tensor a scalar) or hold one
/// entry per tensor (`None`: implicit for a scalar). `retain_graph`
/// defaults to `create_graph`.
pub fn backward(
    tensors: &[Tensor],
    grad_tensors: &[Option<Tensor>],
    retain_graph: Option<bool>,
    create_graph: bool,
) -> Result<()> {
    let grads = make_grads(tensors, grad_tensors)?;
    let edges = root_edges(tensors)?;
    let keep_graph = retain_graph.unwrap_or(create_graph);
    execute(&edges, grads, keep_graph, create_graph, None)?;
    Ok(())
}

/// `torch.autograd.grad(outputs, inputs, grad_outputs, retain_graph,
/// create_graph, allow_unused)`: the gradients of `outputs` with respect to
/// `inputs`, without touching any `.grad`. `None` where an input is not
/// reached (only with `allow_unused`).
pub fn grad(
    outputs: &[Tensor],
    inputs: &[Tensor],
    grad_outputs: &[Option<Tensor>],
    retain_graph: Option<bool>,
    create_graph: bool,
    allow_unused: bool,
) -> Result<Vec<Option<Tensor>>> {
    let grads = make_grads(outputs, grad_outputs)?;
    let edges = root_edges(outputs)?;
    let mut input_edges = Vec::with_capacity(inputs.len());
    for t in inputs {
        if !t.requires_grad() {
            return Err(Error::runtime(
                "One of the differentiated Tensors does not require grad",
            ));
        }
        input_edges.push(meta::gradient_edge(t)?);
    }
    let keep_graph = retain_graph.unwrap_or(create_graph);
    let captured = execute(&edges, grads, keep_graph, create_graph, Some(&input_edges))?;
    captured
        .into_iter()
        .map(|g| {
            if g.defined() {
                Ok(Some(g))
            } else if allow_unused {
                Ok(None)
            } else {
                Err(Error::runtime(
                    "One of the differentiated Tensors appears to not have been used in the graph. Set allow_unused=True if this is the desired behavior.",
                ))
            }
        })
        .collect()
}

/// Every node reachable from `roots`, with the number of edges into each.
fn compute_dependencies(roots: &[Edge]) -> (HashMap<usize, Arc<Node>>, HashMap<usize, usize>) {
    let mut nodes = HashMap::new();
    let mut deps: HashMap<usize, usize> = HashMap::new();
    let mut stack: Vec<Arc<Node>> = Vec::new();
    for e in roots {
        if let Some(f) = &e.function {
            if nodes.insert(key(f), Arc::clone(f)).is_none() {
                stack.push(Arc::clone(f));
            }
        }
    }
    while let Some(n) = stack.pop() {
        for e in n.next_edges() {
            if let Some(f) = &e.function {
                *deps.entry(key(f)).or_default() += 1;
                if nodes.insert(key(f), Arc::clone(f)).is_none() {
                    stack.push(Arc::clone(f));
                }
            }
        }
    }
    (nodes, deps)
}

/// Which nodes must run to reach the captured inputs (`init_to_execute`).
fn init_exec_info(nodes: &HashMap<usize, Arc<Node>>, inputs: &[Edge]) -> HashMap<usize, ExecInfo> {
    let mut info: HashMap<usize, ExecInfo> = HashMap::new();
    for (i, e) in inputs.iter().enumerate() {
        if let Some(f) = &e.function {
            info.entry(key(f))
                .or_default()
                .captures
                .push((e.input_nr, i));
        }
    }
    // reaches(n): n is captured or leads to a captured node. A node runs
    // when one of its children reaches a capture (`init_to_execute`): a
    // captured node with nothing captured below it (a leaf's accumulator,
    // or an intermediate tensor asked for) only hands over its gradient.
    let mut reaches: HashMap<usize, bool> = HashMap::new();
    for n in nodes.values() {
        leads_to_capture(n, &info, &mut reaches);
    }
    for (k, n) in nodes {
        let needed = n.next_edges().iter().any(|e| {
            e.function
                .as_ref()
                .is_some_and(|f| reaches.get(&key(f)).copied().unwrap_or(false))
        });
        if needed {
            info.entry(*k).or_default().needed = true;
        }
    }
    info
}

fn leads_to_capture(
    n: &Arc<Node>,
    info: &HashMap<usize, ExecInfo>,
    memo: &mut HashMap<usize, bool>,
) -> bool {
    // Iterative post-order: graphs can be deep.
    let mut stack: Vec<(Arc<Node>, usize)> = vec![(Arc::clone(n), 0)];
    while let Some((node, idx)) = stack.pop() {
        let k = key(&node);
        if idx == 0 && memo.contains_key(&k) {
            continue;
        }
        let edges = node.next_edges();
        if idx < edges.len() {
            stack.push((Arc::clone(&node), idx + 1));
            if let Some(f) = &edges[idx].function {
                if !memo.contains_key(&key(f)) {
                    stack.push((Arc::clone(f), 0));
                }
            }
            continue;
        }
        let captured_here = info.get(&k).is_some_and(|i| !i.captures.is_empty());
        let via_child = edges.iter().any(|e| {
            e.function
                .as_ref()
                .is_some_and(|f| memo.get(&key(f)).copied().unwrap_or(false))
        });
        memo.insert(k, captured_here || via_child);
    }
    memo.get(&key(n)).copied().unwrap_or(false)
}

/// Adds `grad` to slot `nr` of a node's input buffer (`InputBuffer::add`).
fn accumulate(buffer: &mut [Tensor], nr: usize, grad: Tensor) -> Result<()> {
    let Some(slot) = buffer.get_mut(nr) else {
        return Err(Error::runtime(format!(
            "internal error: gradient for input {nr} of a node with {} inputs",
            buffer.len()
        )));
    };
    if !grad.defined() {
        return Ok(());
    }
    *slot = if slot.defined() {
        ops::add_tensor(slot, &grad)?
    } else {
        grad
    };
    Ok(())
}

/// `validate_outputs`: a node's gradients, checked against and shaped to
/// the inputs of the nodes they flow to.
fn validate_outputs(node: &Node, outputs: &mut [Tensor]) -> Result<()> {
    let edges = node.next_edges();
    if outputs.len() != edges.len() {
        return Err(Error::runtime(format!(
            "Function {} returned an incorrect number of gradients (expected {}, got {})",
            node.name(),
            edges.len(),
            outputs.len()
        )));
    }
    for (i, (grad, edge)) in outputs.iter_mut().zip(edges).enumerate() {
        let Some(next) = &edge.function else {
            continue;
        };
        if !grad.defined() {
            continue;
        }
        let Some(meta) = next.input_metadata(edge.input_nr) else {
            continue;
        };
        if grad.sizes() != meta.sizes {
            if !is_expandable_to(&meta.sizes, &grad.sizes()) {
                return Err(Error::runtime(format!(
                    "Function {} returned an invalid gradient at index {i} - got {} but expected shape compatible with {}",
                    node.name(),
                    fmt_list(&grad.sizes()),
                    fmt_list(&meta.sizes)
                )));
            }
            *grad = crate::formulas::sum_to(grad, &meta.sizes)?;
        }
        if grad.dtype() != Some(meta.dtype) {
            *grad = crate::formulas::cast_to(grad, meta.dtype)?;
        }
    }
    Ok(())
}

/// `is_expandable_to(shape, desired)`.
pub(crate) fn is_expandable_to(shape: &[i64], desired: &[i64]) -> bool {
    if shape.len() > desired.len() {
        return false;
    }
    shape
        .iter()
        .rev()
        .zip(desired.iter().rev())
        .all(|(s, d)| s == d || *s == 1)
}

/// Runs the hooks on a node's input gradients before it runs: the
/// tensors' pre-hooks (`register_hook`, `retain_grad`) and a leaf's hooks
/// (its accumulator's), outside the node's lock.
fn run_pre_hooks(node: &Node, inputs: &mut [Tensor]) -> Result<()> {
    let hooks = node.hooks().clone();
    for (nr, hook) in &hooks {
        if let Some(g) = inputs.get_mut(*nr) {
            if g.defined() {
                *g = crate::hooks::run_hooks(std::iter::once(hook), std::mem::take(g))?;
            }
        }
    }
    // A leaf's hooks (its accumulator's), also outside the node's lock.
    let leaf_hooks = node.function().leaf_hooks();
    if let Some(g) = inputs
        .first_mut()
        .filter(|g| g.defined() && !leaf_hooks.is_empty())
    {
        *g = crate::hooks::run_hooks(&leaf_hooks, std::mem::take(g))?;
    }
    Ok(())
}

/// Runs a graph task from `roots` fed with `grads`; returns the captured
/// gradients of `inputs` (when given).
fn execute(
    roots: &[Edge],
    grads: Vec<Tensor>,
    keep_graph: bool,
    create_graph: bool,
    inputs: Option<&[Edge]>,
) -> Result<Vec<Tensor>> {
    let _mode = AutoGradMode::new(create_graph);
    let (nodes, mut deps) = compute_dependencies(roots);
    let mut task = GraphTask {
        keep_graph,
        exec_info: inputs.map(|i| init_exec_info(&nodes, i)),
        captured: vec![Tensor::undefined(); inputs.map_or(0, <[Edge]>::len)],
    };
    let mut buffers: HashMap<usize, Vec<Tensor>> = HashMap::new();
    for (edge, grad) in roots.iter().zip(grads) {
        if let Some(f) = &edge.function {
            let buf = buffers
                .entry(key(f))
                .or_insert_with(|| vec![Tensor::undefined(); f.num_inputs()]);
            accumulate(buf, edge.input_nr, grad)?;
        }
    }
    let mut ready: BinaryHeap<(u64, usize)> = BinaryHeap::new();
    let mut queued: std::collections::HashSet<usize> = std::collections::HashSet::new();
    for e in roots {
        if let Some(f) = &e.function {
            if deps.get(&key(f)).copied().unwrap_or(0) == 0 && queued.insert(key(f)) {
                ready.push((f.sequence_nr(), key(f)));
            }
        }
    }
    while let Some((_, k)) = ready.pop() {
        let Some(node) = nodes.get(&k).cloned() else {
            continue;
        };
        let mut inputs = buffers
            .remove(&k)
            .unwrap_or_else(|| vec![Tensor::undefined(); node.num_inputs()]);
        run_pre_hooks(&node, &mut inputs)?;
        if let Some(info) = task.exec_info.as_ref().and_then(|i| i.get(&k)) {
            for &(nr, idx) in &info.captures {
                if let Some(g) = inputs.get(nr) {
                    task.captured[idx] = g.clone();
                }
            }
        }
        if !task.needed(&node) {
            continue;
        }
        let mut outputs = task.apply(&node, inputs)?;
        if node.next_edges().is_empty() {
            continue;
        }
        validate_outputs(&node, &mut outputs)?;
        for (grad, edge) in outputs.into_iter().zip(node.next_edges()) {
            let Some(next) = &edge.function else {
                continue;
            };
            let nk = key(next);
            let buf = buffers
                .entry(nk)
                .or_insert_with(|| vec![Tensor::undefined(); next.num_inputs()]);
            accumulate(buf, edge.input_nr, grad)?;
            let d = deps.entry(nk).or_insert(1);
            *d = d.saturating_sub(1);
            if *d == 0 && queued.insert(nk) {
                ready.push((next.sequence_nr(), nk));
            }
        }
    }
    Ok(task.captured)
}
