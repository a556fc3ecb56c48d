//! Warnings (`TORCH_WARN`, `c10::Warning`, `c10::WarningHandler`): every
//! layer reports a warning through [`warn`], and one handler decides what
//! happens to it.
//!
//! The handler is the thread's override, if a [`WarningHandlerGuard`] is
//! alive on the thread, and otherwise the process-wide handler, which
//! [`set_warning_handler`] replaces. The initial process-wide handler,
//! [`DefaultWarningHandler`], prints to stderr as PyTorch's base handler
//! does: `[W file:line] Warning: message (function name)`.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use c10_core::warning::{warn, Warning, WarningHandlerGuard};
//!
//! let seen = Arc::new(Mutex::new(Vec::new()));
//! let sink = Arc::clone(&seen);
//! {
//!     let _guard = WarningHandlerGuard::new(move |w: &Warning| {
//!         sink.lock().unwrap().push(w.message().to_string());
//!     });
//!     warn(Warning::user(c10_core::source_location!(), "careful"));
//! }
//! assert_eq!(*seen.lock().unwrap(), ["careful"]);
//! ```

use std::cell::RefCell;
use std::fmt;
use std::marker::PhantomData;
use std::sync::{Arc, RwLock};

/// Where a warning was raised (`c10::SourceLocation`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SourceLocation {
    /// The function (or module path) that raised it.
    pub function: &'static str,
    /// The source file.
    pub file: &'static str,
    /// The line in `file`.
    pub line: u32,
}

/// The [`SourceLocation`] of the macro call: the module path, file and line.
#[macro_export]
macro_rules! source_location {
    () => {
        $crate::warning::SourceLocation {
            function: module_path!(),
            file: file!(),
            line: line!(),
        }
    };
}

/// The Python warning class a warning maps to (`c10::UserWarning`,
/// `c10::DeprecationWarning`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum WarningKind {
    /// `UserWarning` (`TORCH_WARN`).
    UserWarning,
    /// `DeprecationWarning` (`TORCH_WARN_DEPRECATION`).
    DeprecationWarning,
}

/// One warning (`c10::Warning`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    kind: WarningKind,
    source: SourceLocation,
    message: String,
    verbatim: bool,
}

impl Warning {
    /// A warning of `kind` raised at `source`. `verbatim`: the message is
    /// shown as is, without PyTorch's added context (the C++ stack).
    pub fn new(
        kind: WarningKind,
        source: SourceLocation,
        message: impl Into<String>,
        verbatim: bool,
    ) -> Warning {
        Warning {
            kind,
            source,
            message: message.into(),
            verbatim,
        }
    }

    /// A `UserWarning` (what `TORCH_WARN` raises).
    pub fn user(source: SourceLocation, message: impl Into<String>) -> Warning {
        Warning::new(WarningKind::UserWarning, source, message, false)
    }

    /// The warning's class.
    pub fn kind(&self) -> WarningKind {
        self.kind
    }

    /// Where it was raised.
    pub fn source_location(&self) -> SourceLocation {
        self.source
    }

    /// The message (`msg()`).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Whether the message is shown as is.
    pub fn verbatim(&self) -> bool {
        self.verbatim
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// What happens to warnings (`c10::WarningHandler`). Any
/// `Fn(&Warning) + Send + Sync` closure is a handler.
pub trait WarningHandler: Send + Sync {
    /// Handles one warning (`process`).
    fn process(&self, warning: &Warning);
}

impl<F: Fn(&Warning) + Send + Sync> WarningHandler for F {
    fn process(&self, warning: &Warning) {
        self(warning)
    }
}

/// The base handler: prints `[W file:line] Warning: message (function
/// name)` to stderr, as PyTorch's `WarningHandler::process` logs it.
#[derive(Copy, Clone, Debug, Default)]
pub struct DefaultWarningHandler;

impl WarningHandler for DefaultWarningHandler {
    fn process(&self, warning: &Warning) {
        let s = warning.source_location();
        eprintln!(
            "[W {}:{}] Warning: {} (function {})",
            s.file,
            s.line,
            warning.message(),
            s.function
        );
    }
}

/// The process-wide handler; `None` means [`DefaultWarningHandler`].
static PROCESS_HANDLER: RwLock<Option<Arc<dyn WarningHandler>>> = RwLock::new(None);

thread_local! {
    /// This thread's override, set by a [`WarningHandlerGuard`].
    static THREAD_HANDLER: RefCell<Option<Arc<dyn WarningHandler>>> = const { RefCell::new(None) };
}

/// The handler a warning raised on this thread goes to now
/// (`WarningUtils::get_warning_handler`).
pub fn get_warning_handler() -> Arc<dyn WarningHandler> {
    if let Some(h) = THREAD_HANDLER.with(|h| h.borrow().clone()) {
        return h;
    }
    process_handler()
}

fn process_handler() -> Arc<dyn WarningHandler> {
    // The slot is only ever replaced whole, so a poisoned lock holds a
    // valid handler.
    let guard = PROCESS_HANDLER.read().unwrap_or_else(|p| p.into_inner());
    match guard.as_ref() {
        Some(h) => Arc::clone(h),
        None => Arc::new(DefaultWarningHandler),
    }
}

/// Replaces the process-wide handler (`WarningUtils::set_warning_handler`,
/// for every thread without a [`WarningHandlerGuard`]); returns the
/// previous one. Pass [`DefaultWarningHandler`] to go back to printing.
pub fn set_warning_handler(handler: impl WarningHandler + 'static) -> Arc<dyn WarningHandler> {
    let new: Arc<dyn WarningHandler> = Arc::new(handler);
    let mut slot = PROCESS_HANDLER.write().unwrap_or_else(|p| p.into_inner());
    slot.replace(new)
        .unwrap_or_else(|| Arc::new(DefaultWarningHandler))
}

/// Sends `warning` to the current handler (`c10::warn`, what `TORCH_WARN`
/// expands to). The handler runs on this thread, with no lock held.
pub fn warn(warning: Warning) {
    get_warning_handler().process(&warning);
}

/// `TORCH_WARN(args...)`: formats a message and warns with a `UserWarning`
/// raised here.
#[macro_export]
macro_rules! torch_warn {
    ($($arg:tt)*) => {
        $crate::warning::warn($crate::warning::Warning::user(
            $crate::source_location!(),
            format!($($arg)*),
        ))
    };
}

/// Sends this thread's warnings to another handler while it lives, then
/// restores the thread's previous handler
/// (`WarningUtils::WarningHandlerGuard`). Guards nest; drop them in the
/// reverse order of their creation.
#[must_use = "the handler is replaced only while the guard lives"]
pub struct WarningHandlerGuard {
    previous: Option<Arc<dyn WarningHandler>>,
    /// The override is thread-local: the guard stays on its thread.
    _not_send: PhantomData<*const ()>,
}

impl WarningHandlerGuard {
    /// Sends this thread's warnings to `handler` until the guard is dropped.
    pub fn new(handler: impl WarningHandler + 'static) -> WarningHandlerGuard {
        WarningHandlerGuard::with_shared(Arc::new(handler))
    }

    /// As [`new`](Self::new), for a handler shared with others.
    pub fn with_shared(handler: Arc<dyn WarningHandler>) -> WarningHandlerGuard {
        let previous = THREAD_HANDLER.with(|h| h.borrow_mut().replace(handler));
        WarningHandlerGuard {
            previous,
            _not_send: PhantomData,
        }
    }
}

impl Drop for WarningHandlerGuard {
    fn drop(&mut self) {
        let previous = self.previous.take();
        // `try_with`: a guard dropped while the thread's locals are torn down
        // has nothing left to restore.
        let _ = THREAD_HANDLER.try_with(|h| *h.borrow_mut() = previous);
    }
}

impl fmt::Debug for WarningHandlerGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WarningHandlerGuard")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    fn collector() -> (Arc<Mutex<Vec<String>>>, impl WarningHandler) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        (seen, move |w: &Warning| {
            sink.lock().unwrap().push(w.message().to_string())
        })
    }

    #[test]
    fn guards_nest_and_restore_the_previous_handler() {
        let (outer_seen, outer) = collector();
        let (inner_seen, inner) = collector();
        {
            let _outer = WarningHandlerGuard::new(outer);
            crate::torch_warn!("one {}", 1);
            {
                let _inner = WarningHandlerGuard::new(inner);
                crate::torch_warn!("two");
            }
            crate::torch_warn!("three");
        }
        assert_eq!(*outer_seen.lock().unwrap(), ["one 1", "three"]);
        assert_eq!(*inner_seen.lock().unwrap(), ["two"]);
    }

    #[test]
    fn a_guard_is_restored_when_a_panic_unwinds_through_it() {
        let (seen, handler) = collector();
        let _outer = WarningHandlerGuard::new(handler);
        let caught = std::panic::catch_unwind(|| {
            let _inner = WarningHandlerGuard::new(|_: &Warning| {});
            panic!("unwinds through the guard");
        });
        assert!(caught.is_err());
        crate::torch_warn!("after");
        assert_eq!(*seen.lock().unwrap(), ["after"]);
    }

    #[test]
    fn warnings_carry_their_source() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let _g = WarningHandlerGuard::new(move |w: &Warning| sink.lock().unwrap().push(w.clone()));
        crate::torch_warn!("here");
        let seen = seen.lock().unwrap();
        assert_eq!(seen[0].kind(), WarningKind::UserWarning);
        assert_eq!(seen[0].source_location().file, file!());
        assert_eq!(seen[0].source_location().function, module_path!());
        assert!(!seen[0].verbatim());
    }

    #[test]
    fn the_process_handler_serves_threads_without_a_guard() {
        let (seen, handler) = collector();
        let previous = set_warning_handler(handler);
        std::thread::spawn(|| crate::torch_warn!("from another thread"))
            .join()
            .unwrap();
        {
            // A guard on this thread takes precedence.
            let _g = WarningHandlerGuard::new(|_: &Warning| {});
            crate::torch_warn!("overridden");
        }
        let _ = set_warning_handler(move |w: &Warning| previous.process(w));
        assert_eq!(*seen.lock().unwrap(), ["from another thread"]);
    }
}
