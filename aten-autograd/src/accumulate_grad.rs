//! `AccumulateGrad`: the node at a leaf that requires grad. It adds the
//! gradient flowing into it to the leaf's `.grad` (the engine runs the
//! leaf's hooks first) (PyTorch's `AccumulateGrad::accumulateGrad`: the first gradient
//! is stored as is when nothing else can see it, else copied; later ones
//! are added, in place outside `create_graph`, out of place inside so that
//! the sum stays differentiable).

use std::sync::{Arc, Weak};

use aten_core::{ops, Tensor};
use c10_core::tensor_impl::DimVector;
use c10_core::{GradMode, Result, TensorBase};

use crate::meta::AutogradMeta;
use crate::node::{ApplyContext, BackwardFunction, InputMetadata, Node};

struct AccumulateGrad {
    /// The leaf's autograd state (`.grad`, hooks, `requires_grad`), weakly:
    /// the leaf holds this node.
    target: Weak<AutogradMeta>,
    /// The leaf's strides when the accumulator was made (the layout a
    /// copied first gradient takes).
    strides: DimVector,
}

/// The accumulator node of leaf `t`, whose autograd state is `target`.
pub(crate) fn new_accumulator(t: &TensorBase, target: Weak<AutogradMeta>) -> Result<Arc<Node>> {
    let variable = Tensor::from_base(t.clone());
    let metadata = InputMetadata::of(&variable);
    Ok(Node::new(
        "AccumulateGrad",
        AccumulateGrad {
            target,
            strides: variable.strides(),
        },
        Default::default(),
        std::iter::once(metadata).collect(),
        u64::MAX,
    ))
}

impl BackwardFunction for AccumulateGrad {
    fn leaf_hooks(&self) -> Vec<Arc<crate::hooks::Hook>> {
        self.target
            .upgrade()
            .map(|t| t.lock().hooks.clone())
            .unwrap_or_default()
    }

    fn apply(&mut self, ctx: &ApplyContext<'_>, grads: Vec<Tensor>) -> Result<Vec<Tensor>> {
        let Some(new_grad) = grads.into_iter().next() else {
            return Ok(Vec::new());
        };
        // A leaf that is gone takes no gradient.
        let Some(target) = self.target.upgrade() else {
            return Ok(Vec::new());
        };
        let mut new_grad = new_grad;
        if !new_grad.defined() || !target.requires_grad_flag() {
            return Ok(Vec::new());
        }
        // One lock for the read and the write: no accumulation from another
        // thread falls in between, and an error leaves `.grad` as it was.
        let mut state = target.lock();
        let updated = match &state.grad {
            None => {
                if GradMode::is_enabled() {
                    // Recorded (create_graph): a copy that keeps the graph,
                    // so that a later in-place accumulation never writes a
                    // tensor the caller holds (a grad_output passed through).
                    ops::clone(&new_grad)?
                } else if new_grad.is_exclusively_owned() {
                    // Nothing else can see this gradient: keep it.
                    new_grad
                } else {
                    let like = ctx.node.input_metadata(0).cloned().unwrap_or_default();
                    copy_with_layout(&new_grad, &like, &self.strides)?
                }
            }
            Some(old) if !GradMode::is_enabled() && old.sizes() == new_grad.sizes() => {
                ops::add_tensor_(old, &new_grad)?;
                old.clone()
            }
            Some(old) => ops::add_tensor(old, &new_grad)?,
        };
        state.grad = Some(updated);
        Ok(Vec::new())
    }
}

/// A copy of `grad` with the leaf's sizes and strides
/// (`clone_obey_contract`).
fn copy_with_layout(grad: &Tensor, like: &InputMetadata, strides: &[i64]) -> Result<Tensor> {
    let out = ops::empty_strided_with(
        &like.sizes,
        strides,
        ops::EmptyStridedOptions {
            dtype: grad.dtype(),
            device: Some(like.device),
            ..Default::default()
        },
    )?;
    ops::copy_(&out, grad)?;
    Ok(out)
}
