//! Dispatch modes (PyTorch's `TorchDispatchMode` and its thread-local
//! stack, `torch/utils/_python_dispatch.py`).
//!
//! A mode receives every operator call made on its thread below autograd:
//! the `OpOverload`, the positional and keyword arguments (split as PyTorch
//! splits a boxed call for Python), and returns the results. Pushing the
//! first mode includes the `Python` and `PythonTLSSnapshot` keys for the
//! thread; the `Python` key's fallback hands the call to the innermost mode
//! with that mode popped while it runs ([`pop_mode_temporarily`]), so an
//! operator called inside goes to the next mode, or to the kernels.

use std::any::Any;
use std::cell::RefCell;
use std::sync::Arc;

use aten_boxing::IValue;
use c10_core::local_dispatch_key_set::tls_set_dispatch_keyset_included;
use c10_core::{DispatchKey, DispatchKeySet, Error, Result};

use crate::overload::OpOverload;

/// A dispatch mode (`TorchDispatchMode.__torch_dispatch__`).
pub trait TorchDispatchMode: Send + Sync + 'static {
    /// Handles one operator call: `args` are the positional arguments (the
    /// trailing ones equal to their defaults left out), `kwargs` the
    /// keyword-only ones that differ from their defaults. Returns the
    /// operator's returns.
    fn torch_dispatch(
        &self,
        op: &OpOverload,
        args: &[IValue],
        kwargs: &[(&str, IValue)],
    ) -> Result<Vec<IValue>>;

    /// The mode's name in messages (its Python `repr`).
    fn name(&self) -> String {
        let full = std::any::type_name::<Self>();
        full.rsplit("::").next().unwrap_or(full).to_string()
    }

    /// The mode as `Any`, so rules registered for its type can reach it.
    fn as_any(&self) -> &dyn Any;
}

thread_local! {
    static STACK: RefCell<Vec<Arc<dyn TorchDispatchMode>>> = const { RefCell::new(Vec::new()) };
}

/// The keys a non-empty stack includes.
const MODE_KEYS: DispatchKeySet =
    DispatchKeySet::from_keys(&[DispatchKey::Python, DispatchKey::PythonTLSSnapshot]);

/// Sets the keys a non-empty stack includes.
fn set_keys(on: bool) {
    tls_set_dispatch_keyset_included(MODE_KEYS, on);
}

fn push(mode: Arc<dyn TorchDispatchMode>) {
    STACK.with(|s| {
        let mut s = s.borrow_mut();
        s.push(mode);
        if s.len() == 1 {
            set_keys(true);
        }
    });
}

fn pop() -> Option<Arc<dyn TorchDispatchMode>> {
    STACK.with(|s| {
        let mut s = s.borrow_mut();
        let mode = s.pop();
        if mode.is_some() && s.is_empty() {
            set_keys(false);
        }
        mode
    })
}

/// The number of modes pushed on this thread.
pub fn stack_len() -> usize {
    STACK.with(|s| s.borrow().len())
}

/// The innermost mode (`_get_current_dispatch_mode`).
pub fn current_mode() -> Option<Arc<dyn TorchDispatchMode>> {
    STACK.with(|s| s.borrow().last().cloned())
}

/// Keeps a mode pushed while it lives (`with mode:`).
#[must_use = "the mode is active only while the guard lives"]
pub struct ModeGuard {
    mode: Arc<dyn TorchDispatchMode>,
    /// Modes stay on the thread that pushed them.
    _not_send: std::marker::PhantomData<*const ()>,
}

/// Pushes `mode` for this thread.
pub fn push_mode(mode: Arc<dyn TorchDispatchMode>) -> ModeGuard {
    push(Arc::clone(&mode));
    ModeGuard {
        mode,
        _not_send: std::marker::PhantomData,
    }
}

impl ModeGuard {
    /// The mode this guard pushed.
    pub fn mode(&self) -> &Arc<dyn TorchDispatchMode> {
        &self.mode
    }
}

impl Drop for ModeGuard {
    fn drop(&mut self) {
        // Guards nest, so the mode is normally on top; a mode left above it
        // by a guard that was leaked is taken off as well.
        STACK.with(|s| {
            let mut s = s.borrow_mut();
            if let Some(at) = s.iter().rposition(|m| Arc::ptr_eq(m, &self.mode)) {
                s.truncate(at);
                if s.is_empty() {
                    set_keys(false);
                }
            }
        });
    }
}

/// The innermost mode, popped until the guard drops
/// (`_pop_mode_temporarily`).
pub struct PoppedMode {
    /// Always `Some` until the guard drops, which moves it back.
    mode: Option<Arc<dyn TorchDispatchMode>>,
    _not_send: std::marker::PhantomData<*const ()>,
}

impl PoppedMode {
    /// The popped mode.
    pub fn mode(&self) -> &Arc<dyn TorchDispatchMode> {
        self.mode.as_ref().expect("present until drop")
    }
}

impl Drop for PoppedMode {
    fn drop(&mut self) {
        if let Some(mode) = self.mode.take() {
            push(mode);
        }
    }
}

/// `_pop_mode_temporarily()`: the innermost mode, off the stack while the
/// returned guard lives; an error when no mode is pushed.
pub fn pop_mode_temporarily() -> Result<PoppedMode> {
    let mode = pop().ok_or_else(|| Error::runtime("Trying to pop from an empty mode stack"))?;
    Ok(PoppedMode {
        mode: Some(mode),
        _not_send: std::marker::PhantomData,
    })
}
