//! The autograd methods of `Tensor` (`requires_grad_`, `.grad`,
//! `backward()`, `detach()`, hooks), as an extension trait.

use std::sync::Arc;

use aten_core::Tensor;
use c10_core::Result;

use crate::hooks::RemovableHandle;
use crate::node::Node;
use crate::{engine, hooks, meta, view};

/// Autograd on a tensor.
pub trait TensorAutograd {
    /// `requires_grad_(requires_grad)`; returns the tensor.
    fn requires_grad_(&self, requires_grad: bool) -> Result<Tensor>;
    /// `.grad`.
    fn grad(&self) -> Option<Tensor>;
    /// Sets or clears `.grad` (`t.grad = g`).
    fn set_grad(&self, grad: Option<Tensor>) -> Result<()>;
    /// `grad_fn`.
    fn grad_fn(&self) -> Option<Arc<Node>>;
    /// `is_leaf`.
    fn is_leaf(&self) -> bool;
    /// `output_nr`.
    fn output_nr(&self) -> usize;
    /// `backward()` of a scalar.
    fn backward(&self) -> Result<()>;
    /// `backward(gradient, retain_graph, create_graph)`.
    fn backward_with(
        &self,
        gradient: Option<Tensor>,
        retain_graph: Option<bool>,
        create_graph: bool,
    ) -> Result<()>;
    /// `detach()`.
    fn detach(&self) -> Result<Tensor>;
    /// `retain_grad()`.
    fn retain_grad(&self) -> Result<()>;
    /// `retains_grad`.
    fn retains_grad(&self) -> bool;
    /// `register_hook(f)`.
    fn register_hook(
        &self,
        f: impl Fn(&Tensor) -> Result<Option<Tensor>> + Send + Sync + 'static,
    ) -> Result<RemovableHandle>;
    /// `_base`: the base of a differentiable view.
    fn base_of_view(&self) -> Option<Tensor>;
    /// `_is_view()`.
    fn is_view(&self) -> bool;
}

impl TensorAutograd for Tensor {
    fn requires_grad_(&self, requires_grad: bool) -> Result<Tensor> {
        meta::set_requires_grad(self, requires_grad)?;
        Ok(self.clone())
    }

    fn grad(&self) -> Option<Tensor> {
        meta::grad(self)
    }

    fn set_grad(&self, grad: Option<Tensor>) -> Result<()> {
        meta::set_grad(self, grad)
    }

    fn grad_fn(&self) -> Option<Arc<Node>> {
        view::refresh_view_grad_fn(self).ok()?;
        meta::grad_fn(self)
    }

    fn is_leaf(&self) -> bool {
        meta::is_leaf(self)
    }

    fn output_nr(&self) -> usize {
        meta::output_nr(self)
    }

    fn backward(&self) -> Result<()> {
        self.backward_with(None, None, false)
    }

    fn backward_with(
        &self,
        gradient: Option<Tensor>,
        retain_graph: Option<bool>,
        create_graph: bool,
    ) -> Result<()> {
        engine::backward(
            std::slice::from_ref(self),
            &[gradient],
            retain_graph,
            create_graph,
        )
    }

    fn detach(&self) -> Result<Tensor> {
        meta::detach(self)
    }

    fn retain_grad(&self) -> Result<()> {
        meta::retain_grad(self)
    }

    fn retains_grad(&self) -> bool {
        meta::retains_grad(self)
    }

    fn register_hook(
        &self,
        f: impl Fn(&Tensor) -> Result<Option<Tensor>> + Send + Sync + 'static,
    ) -> Result<RemovableHandle> {
        hooks::register_hook(self, f)
    }

    fn base_of_view(&self) -> Option<Tensor> {
        view::base(self)
    }

    fn is_view(&self) -> bool {
        view::is_view(self)
    }
}
