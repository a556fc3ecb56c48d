//! A tensor's autograd state (`torch::autograd::AutogradMeta`): whether it
//! requires grad, its accumulated `.grad`, the node that made it
//! (`grad_fn`, `output_nr`) or, for a leaf, its gradient accumulator; the
//! hooks registered on it; and, for a differentiable view, its base.
//!
//! The state lives in the tensor's `TensorImpl` behind
//! [`c10_core::AutogradMetaInterface`] and is made on first need, so a
//! tensor that never meets autograd carries nothing.

use aten_core::native::dims::fmt_list;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use aten_core::Tensor;
use c10_core::{AutogradMetaInterface, Error, Result, TensorBase};

use crate::hooks::Hook;
use crate::node::{Edge, InputMetadata, Node};
use crate::view::ViewInfo;

/// The mutable part of a tensor's autograd state.
#[derive(Default)]
pub(crate) struct MetaState {
    /// `.grad`.
    pub grad: Option<Tensor>,
    /// The node that produced this tensor (`None` for a leaf).
    pub grad_fn: Option<Arc<Node>>,
    /// Which input of `grad_fn` this tensor's gradient feeds.
    pub output_nr: usize,
    /// Hooks registered with `register_hook`, in order.
    pub hooks: Vec<Arc<Hook>>,
    /// A leaf's gradient accumulator, kept for the leaf's lifetime (PyTorch
    /// keeps a weak pointer and remakes it for every graph). The
    /// accumulator points back to this state weakly, so this is no cycle.
    pub accumulator: Option<Arc<Node>>,
    /// Set by `retain_grad()` on a non-leaf: where the hook on its
    /// `grad_fn` leaves the gradient (shared with that hook, so the graph
    /// does not own the tensor).
    pub retained: Option<Arc<Mutex<Option<Tensor>>>>,
}

/// `AutogradMeta`, shared (`Arc`) by the tensor and its gradient
/// accumulator.
pub struct AutogradMeta {
    requires_grad: AtomicBool,
    state: Mutex<MetaState>,
    /// Set when the tensor is a differentiable view (`DifferentiableViewMeta`).
    pub(crate) view: Option<ViewInfo>,
}

impl AutogradMeta {
    fn new(view: Option<ViewInfo>) -> AutogradMeta {
        AutogradMeta {
            requires_grad: AtomicBool::new(false),
            state: Mutex::new(MetaState::default()),
            view,
        }
    }

    /// The state, locked (a poisoned lock is recovered: the state is
    /// plain data, valid after any panic in a hook).
    pub(crate) fn lock(&self) -> MutexGuard<'_, MetaState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the tensor requires grad.
    pub(crate) fn requires_grad_flag(&self) -> bool {
        self.requires_grad.load(Ordering::Relaxed)
    }
}

impl AutogradMetaInterface for AutogradMeta {
    #[inline]
    fn requires_grad(&self) -> bool {
        // Set for a leaf by `requires_grad_`, and for every tensor given a
        // `grad_fn` (PyTorch's `requires_grad_ || grad_fn_`).
        self.requires_grad_flag()
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_arc(self: Arc<Self>) -> Arc<dyn std::any::Any + Send + Sync> {
        self
    }
}

/// The tensor's autograd state, if it has one.
pub(crate) fn get(t: &TensorBase) -> Option<&AutogradMeta> {
    t.autograd_meta()?.as_any().downcast_ref::<AutogradMeta>()
}

/// The tensor's autograd state, made on first use (`materialize_autograd_meta`).
pub(crate) fn materialize(t: &TensorBase) -> Result<&AutogradMeta> {
    t.autograd_meta_or_init(|| Arc::new(AutogradMeta::new(None)))?
        .as_any()
        .downcast_ref::<AutogradMeta>()
        .ok_or_else(|| Error::runtime("tensor carries a foreign autograd state"))
}

/// Gives a fresh view its view state (called once, before anyone else sees
/// the view). Fails if the tensor already has autograd state.
pub(crate) fn materialize_view(t: &TensorBase, view: ViewInfo) -> Result<&AutogradMeta> {
    let mut made = false;
    let meta = t.autograd_meta_or_init(|| {
        made = true;
        Arc::new(AutogradMeta::new(Some(view)))
    })?;
    if !made {
        return Err(Error::runtime(
            "internal error: a view's autograd state was made twice",
        ));
    }
    meta.as_any()
        .downcast_ref::<AutogradMeta>()
        .ok_or_else(|| Error::runtime("tensor carries a foreign autograd state"))
}

/// `requires_grad_(requires_grad)` on a tensor. Only floating-point
/// tensors can require gradients, and only leaves can stop requiring them.
pub fn set_requires_grad(t: &Tensor, requires_grad: bool) -> Result<()> {
    let dtype = t
        .dtype()
        .ok_or_else(|| Error::runtime("Tensor is undefined"))?;
    if requires_grad && !(dtype.is_floating_point() || dtype.is_complex()) {
        return Err(Error::runtime(
            "only Tensors of floating point dtype can require gradients",
        ));
    }
    if requires_grad && t.is_inference() {
        return Err(Error::runtime(
            "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.",
        ));
    }
    if !requires_grad && !is_leaf(t) {
        return Err(Error::runtime(
            "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().",
        ));
    }
    if !requires_grad && get(t).is_none() {
        return Ok(());
    }
    materialize(t)?
        .requires_grad
        .store(requires_grad, Ordering::Relaxed);
    Ok(())
}

/// Whether the tensor is a leaf: made by the user, not by a recorded
/// operation (`is_leaf`).
pub fn is_leaf(t: &TensorBase) -> bool {
    get(t).is_none_or(|m| m.lock().grad_fn.is_none())
}

/// The node that made this tensor (`grad_fn`), `None` for a leaf.
pub fn grad_fn(t: &TensorBase) -> Option<Arc<Node>> {
    get(t)?.lock().grad_fn.clone()
}

/// Which output of its `grad_fn` the tensor is (`output_nr`).
pub fn output_nr(t: &TensorBase) -> usize {
    get(t).map_or(0, |m| m.lock().output_nr)
}

/// `.grad`: the gradient accumulated into a leaf (or a tensor that retains
/// its gradient).
pub fn grad(t: &TensorBase) -> Option<Tensor> {
    let state = get(t)?.lock();
    match &state.retained {
        Some(slot) => slot.lock().unwrap_or_else(|e| e.into_inner()).clone(),
        None => state.grad.clone(),
    }
}

/// Sets or clears `.grad`. A gradient must have the tensor's shape.
pub fn set_grad(t: &Tensor, grad: Option<Tensor>) -> Result<()> {
    if let Some(g) = &grad {
        if g.sizes() != t.sizes() {
            return Err(Error::runtime(format!(
                "assigned grad has data of a different size: {} vs {}",
                fmt_list(&g.sizes()),
                fmt_list(&t.sizes())
            )));
        }
    }
    materialize(t)?.lock().grad = grad;
    Ok(())
}

/// The edge a gradient for `t` flows along (`impl::gradient_edge`): its
/// `grad_fn` and output number, or for a leaf that requires grad its
/// gradient accumulator; an invalid edge otherwise.
pub fn gradient_edge(t: &TensorBase) -> Result<Edge> {
    let Some(meta) = get(t) else {
        return Ok(Edge::invalid());
    };
    if meta.view.is_some() {
        crate::view::refresh_view_grad_fn(&Tensor::from_base(t.clone()))?;
    }
    let mut state = meta.lock();
    if let Some(f) = &state.grad_fn {
        return Ok(Edge::new(Arc::clone(f), state.output_nr));
    }
    if !meta.requires_grad_flag() {
        return Ok(Edge::invalid());
    }
    // A leaf resized or retyped since gets an accumulator for what it is now.
    let current = |m: &InputMetadata| {
        t.layout().is_some_and(|l| l.sizes() == &m.sizes[..]) && t.dtype() == Some(m.dtype)
    };
    if let Some(node) = state
        .accumulator
        .as_ref()
        .filter(|n| n.input_metadata(0).is_some_and(current))
    {
        return Ok(Edge::new(Arc::clone(node), 0));
    }
    let shared = t
        .autograd_meta_or_init(|| Arc::new(AutogradMeta::new(None)))?
        .clone()
        .as_any_arc()
        .downcast::<AutogradMeta>()
        .map_err(|_| Error::runtime("tensor carries a foreign autograd state"))?;
    let node = crate::accumulate_grad::new_accumulator(t, Arc::downgrade(&shared))?;
    state.accumulator = Some(Arc::clone(&node));
    Ok(Edge::new(node, 0))
}

/// Points `t`'s history at output `output_nr` of `node` (`set_history` /
/// `set_gradient_edge`).
pub(crate) fn set_gradient_edge(t: &TensorBase, node: &Arc<Node>, output_nr: usize) -> Result<()> {
    let meta = materialize(t)?;
    let mut state = meta.lock();
    state.grad_fn = Some(Arc::clone(node));
    state.output_nr = output_nr;
    meta.requires_grad.store(true, Ordering::Relaxed);
    Ok(())
}

/// `retain_grad()`: a non-leaf keeps the gradient that flows into it in
/// `.grad`. A no-op on leaves; PyTorch's error on a tensor that does not
/// require grad.
pub fn retain_grad(t: &Tensor) -> Result<()> {
    if !t.requires_grad() {
        return Err(Error::runtime(
            "can't retain_grad on Tensor that has requires_grad=False",
        ));
    }
    if is_leaf(t) {
        return Ok(());
    }
    let meta = materialize(t)?;
    let mut state = meta.lock();
    if state.retained.is_some() {
        return Ok(());
    }
    let Some(node) = state.grad_fn.clone() else {
        return Ok(());
    };
    let slot: Arc<Mutex<Option<Tensor>>> = Arc::default();
    state.retained = Some(Arc::clone(&slot));
    let output_nr = state.output_nr;
    drop(state);
    let hook: Arc<Hook> = Arc::new(move |g: &Tensor| {
        let mut held = slot.lock().unwrap_or_else(|e| e.into_inner());
        *held = Some(match held.take() {
            None => aten_core::ops::clone(g)?,
            Some(old) => aten_core::ops::add_tensor(&old, g)?,
        });
        Ok(None)
    });
    node.hooks().push((output_nr, hook));
    Ok(())
}

/// Whether `retain_grad()` was called on this tensor (`retains_grad`).
pub fn retains_grad(t: &TensorBase) -> bool {
    get(t).is_some_and(|m| m.lock().retained.is_some())
}

/// `detach_()`: the tensor stops requiring grad and forgets the node that
/// made it; a differentiable view refuses (its base would still see it).
pub fn detach_in_place(t: &Tensor) -> Result<()> {
    let Some(m) = get(t) else { return Ok(()) };
    if m.view.is_some() {
        return Err(Error::runtime(
            "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and hence detach_() cannot be called on these gradients. To fix this error, please refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.",
        ));
    }
    m.requires_grad.store(false, Ordering::Relaxed);
    let mut state = m.lock();
    state.grad_fn = None;
    state.output_nr = 0;
    Ok(())
}

/// `detach()`: a tensor sharing data and version counter, outside the graph.
pub fn detach(t: &Tensor) -> Result<Tensor> {
    t.shallow_copy_and_detach().map(Tensor::from_base)
}
