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
//!
//! A second stack holds the pre-dispatch modes (PyTorch's modes whose
//! `_dispatch_key` is `PreDispatch`): while it is not empty the
//! `PreDispatch` key is included, and that key's fallback hands calls to the
//! innermost of them the same way, above autograd.

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
    static PRE_DISPATCH_STACK: RefCell<Vec<Arc<dyn TorchDispatchMode>>> = const { RefCell::new(Vec::new()) };
}

/// Which of the thread's two mode stacks.
#[derive(Clone, Copy)]
enum Which {
    /// The dispatch modes, below autograd (the `Python` key).
    Python,
    /// The pre-dispatch modes, above autograd (the `PreDispatch` key).
    PreDispatch,
}

impl Which {
    #[inline(always)]
    fn with<R>(self, f: impl FnOnce(&mut Vec<Arc<dyn TorchDispatchMode>>) -> R) -> R {
        // Each arm names its key, so the thread-local access is inlined
        // (a `&LocalKey` chosen at run time would be an indirect call).
        match self {
            Which::Python => STACK.with(|s| f(&mut s.borrow_mut())),
            Which::PreDispatch => PRE_DISPATCH_STACK.with(|s| f(&mut s.borrow_mut())),
        }
    }

    /// Sets the keys a non-empty stack includes.
    #[inline(always)]
    fn set_keys(self, on: bool) {
        match self {
            Which::Python => tls_set_dispatch_keyset_included(MODE_KEYS, on),
            Which::PreDispatch => tls_set_dispatch_keyset_included(
                DispatchKeySet::from_key(DispatchKey::PreDispatch),
                on,
            ),
        }
    }

    #[inline(always)]
    fn push(self, mode: Arc<dyn TorchDispatchMode>) {
        self.with(|s| {
            s.push(mode);
            if s.len() == 1 {
                self.set_keys(true);
            }
        });
    }

    #[inline(always)]
    fn pop(self) -> Option<Arc<dyn TorchDispatchMode>> {
        self.with(|s| {
            let mode = s.pop();
            if mode.is_some() && s.is_empty() {
                self.set_keys(false);
            }
            mode
        })
    }
}

/// The keys a non-empty stack of dispatch modes includes.
const MODE_KEYS: DispatchKeySet =
    DispatchKeySet::from_keys(&[DispatchKey::Python, DispatchKey::PythonTLSSnapshot]);

/// The number of dispatch modes pushed on this thread.
pub fn stack_len() -> usize {
    Which::Python.with(|s| s.len())
}

/// The number of pre-dispatch modes pushed on this thread
/// (`_len_torch_dispatch_stack_pre_dispatch`).
pub fn pre_dispatch_stack_len() -> usize {
    Which::PreDispatch.with(|s| s.len())
}

/// The innermost dispatch mode (`_get_current_dispatch_mode`).
pub fn current_mode() -> Option<Arc<dyn TorchDispatchMode>> {
    Which::Python.with(|s| s.last().cloned())
}

/// The innermost pre-dispatch mode
/// (`_get_current_dispatch_mode_pre_dispatch`).
pub fn current_pre_dispatch_mode() -> Option<Arc<dyn TorchDispatchMode>> {
    Which::PreDispatch.with(|s| s.last().cloned())
}

/// Keeps a mode pushed while it lives (`with mode:`).
#[must_use = "the mode is active only while the guard lives"]
pub struct ModeGuard {
    mode: Arc<dyn TorchDispatchMode>,
    which: Which,
    /// Modes stay on the thread that pushed them.
    _not_send: std::marker::PhantomData<*const ()>,
}

/// Pushes `mode` for this thread: it receives operator calls below
/// autograd, at the `Python` key.
pub fn push_mode(mode: Arc<dyn TorchDispatchMode>) -> ModeGuard {
    push_on(Which::Python, mode)
}

/// Pushes `mode` on this thread's pre-dispatch stack (a mode whose
/// `_dispatch_key` is `PreDispatch`): it receives operator calls above
/// autograd, before any `CompositeImplicitAutograd` decomposition.
pub fn push_pre_dispatch_mode(mode: Arc<dyn TorchDispatchMode>) -> ModeGuard {
    push_on(Which::PreDispatch, mode)
}

fn push_on(which: Which, mode: Arc<dyn TorchDispatchMode>) -> ModeGuard {
    which.push(Arc::clone(&mode));
    ModeGuard {
        mode,
        which,
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
        let which = self.which;
        which.with(|s| {
            if let Some(at) = s.iter().rposition(|m| Arc::ptr_eq(m, &self.mode)) {
                s.truncate(at);
                if s.is_empty() {
                    which.set_keys(false);
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
    which: Which,
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
            self.which.push(mode);
        }
    }
}

fn pop_temporarily(which: Which) -> Result<PoppedMode> {
    let mode = which.pop().ok_or_else(|| {
        Error::runtime(match which {
            Which::Python => "trying to pop from empty mode stack",
            Which::PreDispatch => "Trying to pop empty mode stack",
        })
    })?;
    Ok(PoppedMode {
        mode: Some(mode),
        which,
        _not_send: std::marker::PhantomData,
    })
}

/// `_pop_mode_temporarily()`: the innermost dispatch mode, off the stack
/// while the returned guard lives; an error when no mode is pushed.
pub fn pop_mode_temporarily() -> Result<PoppedMode> {
    pop_temporarily(Which::Python)
}

/// The innermost pre-dispatch mode, off its stack while the returned guard
/// lives (`_pop_mode_from_pre_dispatch`, pushed back after).
pub fn pop_pre_dispatch_mode_temporarily() -> Result<PoppedMode> {
    pop_temporarily(Which::PreDispatch)
}
