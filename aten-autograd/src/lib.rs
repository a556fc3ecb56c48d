//! The autograd layer (PyTorch's `torch/csrc/autograd`): the graph that
//! operations record while some input requires grad, and the engine that
//! walks it backwards.
//!
//! - [`meta`]: a tensor's autograd state (`requires_grad`, `.grad`,
//!   `grad_fn`);
//! - [`node`]: nodes and edges; [`saved_variable`]: tensors saved for
//!   backward, with version checks;
//! - [`engine`]: `backward` and `grad`;
//! - [`view`]: differentiable views and in-place writes through them;
//! - [`record`]: what the generated kernels call to record an operation;
//! - [`formulas`]: the named backward functions the formulas of
//!   `derivatives.yaml` call;
//! - [`generated`]: the nodes and the kernels at the `Autograd` and
//!   `ADInplaceOrView` keys, generated from `derivatives.yaml`; `manual`:
//!   the Autograd kernels written by hand (`detach`, `detach_`);
//! - [`hooks`]: tensor hooks; [`tensor_ext`]: the autograd methods of
//!   `Tensor`; [`gradcheck`]: finite-difference checks.
//!
//! Grad mode and inference mode are thread-local state of `c10-core`
//! ([`c10_core::GradMode`], [`c10_core::InferenceMode`]), re-exported here
//! with their guards.

mod accumulate_grad;
pub mod engine;
pub mod formulas;
pub mod generated;
pub mod gradcheck;
pub mod hooks;
mod manual;
pub mod meta;
pub mod node;
pub mod record;
pub mod saved_variable;
pub mod tensor_ext;
pub mod view;

pub use c10_core::{enable_grad, no_grad, AutoGradMode, GradMode, InferenceMode};
pub use engine::{backward, grad};
pub use node::{ApplyContext, BackwardFunction, Edge, Node};
pub use record::is_differentiable_type;
pub use saved_variable::SavedVariable;
pub use tensor_ext::TensorAutograd;

/// `torch.inference_mode()`.
pub fn inference_mode() -> InferenceMode {
    InferenceMode::new(true)
}

/// Referenced by the facade so that this crate's static registrations are
/// linked into every program that uses it.
#[doc(hidden)]
pub fn link() {}
