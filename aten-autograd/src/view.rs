//! Differentiable views (`DifferentiableViewMeta`) and in-place writes
//! through them (`CopySlices`).
//!
//! Every view operator's ADInplaceOrView kernel records, on its output,
//! the root base and the view's geometry in the base's storage (sizes,
//! strides, offset: enough to replay it with `as_strided`). An in-place
//! operation on a view then rebases the graph: the base's new `grad_fn` is
//! a `CopySlices` node, which routes the part of the base's gradient that
//! the view covers through the in-place operation's backward and passes
//! the rest unchanged; the view's own `grad_fn` becomes a replay of the view
//! on the base, regenerated whenever the view's version moves on.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use aten_core::{ops, Tensor};
use c10_core::{Error, Result};

use crate::meta;
use crate::node::{next_sequence_nr, ApplyContext, BackwardFunction, InputMetadata, Node};

/// A view's geometry in its base's storage.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Geometry {
    pub sizes: Vec<i64>,
    pub strides: Vec<i64>,
    pub offset: i64,
}

impl Geometry {
    fn of(t: &Tensor) -> Geometry {
        Geometry {
            sizes: t.sizes().to_vec(),
            strides: t.strides().to_vec(),
            offset: t.storage_offset(),
        }
    }
}

/// What a differentiable view records.
pub(crate) struct ViewInfo {
    /// The root base (never itself a view).
    pub base: Tensor,
    /// The view's version when its `grad_fn` was last set.
    pub attr_version: AtomicU64,
}

/// The root base of `t` if it is a differentiable view.
pub fn base(t: &Tensor) -> Option<Tensor> {
    meta::get(t)?.view.as_ref().map(|v| v.base.clone())
}

/// Whether `t` is a differentiable view (`is_view`).
pub fn is_view(t: &Tensor) -> bool {
    meta::get(t).is_some_and(|m| m.view.is_some())
}

/// Records that `view` (just made by a view operator) views `of`
/// (`as_view`). A view of a view records the root base.
pub fn as_view(of: &Tensor, view: &Tensor) -> Result<()> {
    if !view.defined() || !of.defined() {
        return Ok(());
    }
    let root = base(of).unwrap_or_else(|| of.clone());
    meta::materialize_view(
        view,
        ViewInfo {
            base: root,
            attr_version: AtomicU64::new(view.version()),
        },
    )?;
    Ok(())
}

/// `check_inplace`: PyTorch's errors for an in-place write that autograd
/// cannot record (on a leaf that requires grad, or a view of one).
pub fn check_inplace(t: &Tensor, requires_grad: bool) -> Result<()> {
    if !requires_grad || !c10_core::GradMode::is_enabled() {
        return Ok(());
    }
    if let Some(b) = base(t) {
        if t.requires_grad() && meta::is_leaf(&b) && b.requires_grad() {
            return Err(Error::runtime(
                "a view of a leaf Variable that requires grad is being used in an in-place operation.",
            ));
        }
    }
    if t.requires_grad() && meta::is_leaf(t) && !is_view(t) {
        return Err(Error::runtime(
            "a leaf Variable that requires grad is being used in an in-place operation.",
        ));
    }
    Ok(())
}

/// For a view whose base requires grad, brings its `grad_fn` up to date
/// with in-place writes made through other views of the base since it was
/// set (PyTorch regenerates it in `VariableHooks::grad_fn`).
pub(crate) fn refresh_view_grad_fn(t: &Tensor) -> Result<()> {
    let Some(m) = meta::get(t) else {
        return Ok(());
    };
    let Some(view) = &m.view else {
        return Ok(());
    };
    if view.attr_version.load(Ordering::Relaxed) == t.version() {
        return Ok(());
    }
    if !view.base.requires_grad() {
        return Ok(());
    }
    let node = replay_node(&view.base, t)?;
    meta::set_gradient_edge(t, &node, 0)?;
    view.attr_version.store(t.version(), Ordering::Relaxed);
    Ok(())
}

/// An `AsStridedBackward0` node from `view` to its base.
fn replay_node(base: &Tensor, view: &Tensor) -> Result<Arc<Node>> {
    let edge = meta::gradient_edge(base)?;
    Ok(Node::new(
        "AsStridedBackward0",
        AsStridedBackward {
            base: InputMetadata::of(base),
            base_geometry: Geometry::of(base),
            view: Geometry::of(view),
        },
        std::iter::once(edge).collect(),
        std::iter::once(InputMetadata::of(view)).collect(),
        next_sequence_nr(),
    ))
}

/// The gradient of a view replayed with `as_strided`: the view's gradient
/// scattered into zeros of the base's geometry.
struct AsStridedBackward {
    base: InputMetadata,
    base_geometry: Geometry,
    view: Geometry,
}

impl BackwardFunction for AsStridedBackward {
    fn apply(&mut self, _ctx: &ApplyContext<'_>, grads: Vec<Tensor>) -> Result<Vec<Tensor>> {
        let grad = grads.into_iter().next().unwrap_or_default();
        if !grad.defined() {
            return Ok(vec![Tensor::undefined()]);
        }
        let result = zeros_with_geometry(&grad, &self.base, &self.base_geometry)?;
        let region = region_of(&result, &self.base_geometry, &self.view)?;
        ops::copy_(&region, &grad)?;
        Ok(vec![result])
    }
}

/// Zeros shaped and strided like the base.
fn zeros_with_geometry(like: &Tensor, base: &InputMetadata, geom: &Geometry) -> Result<Tensor> {
    let out = ops::empty_strided_with(
        &base.sizes,
        &geom.strides,
        ops::EmptyStridedOptions {
            dtype: Some(like.dtype().unwrap_or(base.dtype)),
            device: Some(base.device),
            ..Default::default()
        },
    )?;
    ops::zero_(&out)?;
    Ok(out)
}

/// The part of `buffer` (laid out like the base) that the view covers.
fn region_of(buffer: &Tensor, base: &Geometry, view: &Geometry) -> Result<Tensor> {
    let offset = view.offset - base.offset + buffer.storage_offset();
    ops::as_strided_with(
        buffer,
        &view.sizes,
        &view.strides,
        ops::AsStridedOptions {
            storage_offset: Some(offset),
        },
    )
}

/// `rebase_history`: after an in-place operation recorded as `node`
/// (output 0 is `t`), make `t`'s history `node`, through `CopySlices` on
/// its base when `t` is a view.
pub fn rebase_history(t: &Tensor, node: Arc<Node>) -> Result<()> {
    let Some(view) = meta::get(t).and_then(|m| m.view.as_ref()) else {
        return meta::set_gradient_edge(t, &node, 0);
    };
    let base = view.base.clone();
    let base_edge = meta::gradient_edge(&base)?;
    let mut next_edges = vec![base_edge];
    next_edges.extend(node.next_edges().iter().skip(1).cloned());
    let copy_slices = Node::new(
        "CopySlices",
        CopySlices {
            base: InputMetadata::of(&base),
            base_geometry: Geometry::of(&base),
            view: Geometry::of(t),
            fn_node: node,
        },
        next_edges.into_iter().collect(),
        std::iter::once(InputMetadata::of(&base)).collect(),
        next_sequence_nr(),
    );
    meta::set_gradient_edge(&base, &copy_slices, 0)?;
    let replay = replay_node(&base, t)?;
    meta::set_gradient_edge(t, &replay, 0)?;
    view.attr_version.store(t.version(), Ordering::Relaxed);
    Ok(())
}

/// `CopySlices`: the base's gradient, with the view's part routed through
/// the in-place operation's backward (`fn_node`).
struct CopySlices {
    base: InputMetadata,
    base_geometry: Geometry,
    view: Geometry,
    fn_node: Arc<Node>,
}

impl BackwardFunction for CopySlices {
    fn apply(&mut self, ctx: &ApplyContext<'_>, grads: Vec<Tensor>) -> Result<Vec<Tensor>> {
        let n = ctx.needed.len();
        let grad = grads.into_iter().next().unwrap_or_default();
        if !grad.defined() {
            return Ok(vec![Tensor::undefined(); n]);
        }
        let result = zeros_with_geometry(&grad, &self.base, &self.base_geometry)?;
        ops::copy_(&result, &grad)?;
        let slice = region_of(&result, &self.base_geometry, &self.view)?;
        let slice_grad = ops::clone(&slice)?;
        let fn_needed: Vec<bool> = (0..self.fn_node.next_edges().len())
            .map(|i| {
                if i == 0 {
                    true
                } else {
                    ctx.should_compute_output(i)
                }
            })
            .collect();
        let res = {
            let mut f = self.fn_node.function();
            let inner = ApplyContext {
                node: &self.fn_node,
                needed: &fn_needed,
            };
            f.apply(&inner, vec![slice_grad])?
        };
        let mut out = Vec::with_capacity(n);
        for (i, g) in res.into_iter().enumerate() {
            if i == 0 {
                if g.defined() {
                    ops::copy_(&slice, &g)?;
                } else {
                    ops::zero_(&slice)?;
                }
                out.push(result.clone());
            } else {
                out.push(g);
            }
        }
        out.resize(n, Tensor::undefined());
        Ok(out)
    }

    fn release_variables(&mut self) {
        self.fn_node.function().release_variables();
    }
}
