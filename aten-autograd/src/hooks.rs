//! Tensor hooks (`register_hook`) and `retain_grad`'s slot.
//!
//! A hook sees the gradient flowing into a tensor and may replace it
//! (returning `Some`). Hooks of a non-leaf run on its `grad_fn`'s input
//! before the node runs; hooks of a leaf run before its gradient is
//! accumulated, as PyTorch's tensor pre-hooks do.

use std::sync::Arc;

use aten_core::Tensor;
use c10_core::{Error, Result};

use crate::meta;

/// A tensor hook: gradient in, optionally a replacement out.
pub type Hook = dyn Fn(&Tensor) -> Result<Option<Tensor>> + Send + Sync;

/// A handle that removes its hook when asked (`RemovableHandle`).
pub struct RemovableHandle {
    hook: std::sync::Weak<Hook>,
    owner: HookOwner,
}

enum HookOwner {
    Leaf(Tensor),
    Node(std::sync::Weak<crate::node::Node>),
}

impl RemovableHandle {
    /// `handle.remove()`.
    pub fn remove(self) {
        let Some(hook) = self.hook.upgrade() else {
            return;
        };
        match &self.owner {
            HookOwner::Leaf(t) => {
                if let Some(m) = meta::get(t) {
                    m.lock().hooks.retain(|h| !Arc::ptr_eq(h, &hook));
                }
            }
            HookOwner::Node(n) => {
                if let Some(n) = n.upgrade() {
                    n.hooks().retain(|(_, h)| !Arc::ptr_eq(h, &hook));
                }
            }
        }
    }
}

/// `register_hook(f)`: runs `f` on the gradient of `t` each time one is
/// computed. PyTorch's error on a tensor that does not require grad.
pub fn register_hook(
    t: &Tensor,
    f: impl Fn(&Tensor) -> Result<Option<Tensor>> + Send + Sync + 'static,
) -> Result<RemovableHandle> {
    if !t.requires_grad() {
        return Err(Error::runtime(
            "cannot register a hook on a tensor that doesn't require gradient",
        ));
    }
    let hook: Arc<Hook> = Arc::new(f);
    let weak = Arc::downgrade(&hook);
    match meta::grad_fn(t) {
        Some(node) => {
            node.hooks().push((meta::output_nr(t), hook));
            Ok(RemovableHandle {
                hook: weak,
                owner: HookOwner::Node(Arc::downgrade(&node)),
            })
        }
        None => {
            meta::materialize(t)?.lock().hooks.push(hook);
            Ok(RemovableHandle {
                hook: weak,
                owner: HookOwner::Leaf(t.clone()),
            })
        }
    }
}

/// Runs `hooks` in order on `grad`.
pub(crate) fn run_hooks<'a>(
    hooks: impl IntoIterator<Item = &'a Arc<Hook>>,
    mut grad: Tensor,
) -> Result<Tensor> {
    for hook in hooks {
        if let Some(new) = hook(&grad)? {
            grad = new;
        }
    }
    Ok(grad)
}
