//! `AccumulateGrad`: the node at a leaf that requires grad. It adds the
//! gradient flowing into it to the leaf's `.grad` after running the leaf's
//! hooks (PyTorch's `AccumulateGrad::accumulateGrad`: the first gradient
//! is stored as is when nothing else can see it, else copied; later ones
//! are added, in place outside `create_graph`, out of place inside so that
//! the sum stays differentiable).

use std::sync::Arc;

use aten_core::{ops, Tensor};
use c10_core::{GradMode, Result};

use crate::meta;
use crate::node::{ApplyContext, BackwardFunction, InputMetadata, Node};

struct AccumulateGrad {
    variable: Tensor,
}

/// The accumulator node of leaf `t`.
pub(crate) fn new_accumulator(t: &c10_core::TensorBase) -> Result<Arc<Node>> {
    let variable = Tensor::from_base(t.clone());
    let metadata = InputMetadata::of(&variable);
    Ok(Node::new(
        "AccumulateGrad",
        Box::new(AccumulateGrad { variable }),
        Vec::new(),
        vec![metadata],
        u64::MAX,
    ))
}

impl BackwardFunction for AccumulateGrad {
    fn apply(&mut self, _ctx: &ApplyContext<'_>, grads: Vec<Tensor>) -> Result<Vec<Tensor>> {
        let Some(new_grad) = grads.into_iter().next() else {
            return Ok(Vec::new());
        };
        let m = meta::materialize(&self.variable)?;
        let hooks = m.lock().hooks.clone();
        let mut new_grad = crate::hooks::run_hooks(&hooks, new_grad)?;
        if !new_grad.defined() || !self.variable.requires_grad() {
            return Ok(Vec::new());
        }
        let old = m.lock().grad.take();
        let updated = match old {
            None => {
                if !GradMode::is_enabled() && new_grad.is_exclusively_owned() {
                    // Nothing else can see this gradient: keep it.
                    new_grad
                } else if GradMode::is_enabled() {
                    new_grad
                } else {
                    clone_like_variable(&new_grad, &self.variable)?
                }
            }
            Some(old) if !GradMode::is_enabled() => {
                if old.sizes() == new_grad.sizes() {
                    ops::add_tensor_(&old, &new_grad)?;
                    old
                } else {
                    ops::add_tensor(&old, &new_grad)?
                }
            }
            Some(old) => ops::add_tensor(&old, &new_grad)?,
        };
        m.lock().grad = Some(updated);
        Ok(Vec::new())
    }

    fn variable(&self) -> Option<&Tensor> {
        Some(&self.variable)
    }
}

/// A copy of `grad` laid out like `variable` (`clone_obey_contract`).
fn clone_like_variable(grad: &Tensor, variable: &Tensor) -> Result<Tensor> {
    let out = ops::empty_like(variable)?;
    ops::copy_(&out, grad)?;
    Ok(out)
}
