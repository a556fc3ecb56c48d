//! The dispatch trace: with `ATEN_SHOW_DISPATCH_TRACE=1` in the environment
//! (read once), every call and redispatch prints
//! `[call] op=[ns::name], key=[Key]` to stderr, indented one space per
//! nesting level, like PyTorch's `TORCH_SHOW_DISPATCH_TRACE`. When off, the
//! cost is one relaxed atomic load per call.
//!
//! [`capture`] collects the lines of a closure's calls on this thread instead
//! of printing them (for tests and the tour); [`TraceCapture`] is the same as
//! a guard. Either way the thread's previous state comes back when the
//! capture ends, also when it ends by a panic.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU8, Ordering};

use aten_boxing::schema::OperatorName;
use c10_core::DispatchKeySet;

const UNKNOWN: u8 = 0;
const OFF: u8 = 1;
const ON: u8 = 2;
/// Off, but some thread is capturing: ask the thread.
const CAPTURING_SOMEWHERE: u8 = 3;

static STATE: AtomicU8 = AtomicU8::new(UNKNOWN);
/// The state without captures (what the environment or `set_enabled` chose).
static BASE: AtomicU8 = AtomicU8::new(UNKNOWN);
static CAPTURES: std::sync::Mutex<usize> = std::sync::Mutex::new(0);

thread_local! {
    static DEPTH: Cell<usize> = const { Cell::new(0) };
    static SINK: RefCell<Option<String>> = const { RefCell::new(None) };
    static CAPTURING: Cell<bool> = const { Cell::new(false) };
}

/// Whether tracing is on (the environment variable, or a capture on this thread).
#[inline(always)]
#[doc(alias = "TORCH_SHOW_DISPATCH_TRACE")]
pub fn enabled() -> bool {
    match STATE.load(Ordering::Relaxed) {
        OFF => false,
        ON => true,
        _ => slow_enabled(),
    }
}

#[cold]
fn slow_enabled() -> bool {
    base_state() == ON || CAPTURING.with(Cell::get)
}

fn base_state() -> u8 {
    let base = BASE.load(Ordering::Relaxed);
    if base != UNKNOWN {
        return base;
    }
    let on = std::env::var("ATEN_SHOW_DISPATCH_TRACE").is_ok_and(|v| v == "1");
    let base = if on { ON } else { OFF };
    BASE.store(base, Ordering::Relaxed);
    let captures = CAPTURES.lock().unwrap_or_else(|p| p.into_inner());
    refresh(base, *captures);
    base
}

fn refresh(base: u8, captures: usize) {
    let state = if base == ON {
        ON
    } else if captures > 0 {
        CAPTURING_SOMEWHERE
    } else {
        base
    };
    STATE.store(state, Ordering::Relaxed);
}

/// Turns the trace on or off for the whole process (overrides the environment).
pub fn set_enabled(on: bool) {
    let base = if on { ON } else { OFF };
    BASE.store(base, Ordering::Relaxed);
    let captures = CAPTURES.lock().unwrap_or_else(|p| p.into_inner());
    refresh(base, *captures);
}

fn adjust_captures(delta: isize) {
    let mut captures = CAPTURES.lock().unwrap_or_else(|p| p.into_inner());
    *captures = captures.saturating_add_signed(delta);
    refresh(BASE.load(Ordering::Relaxed), *captures);
}

/// Runs `f` and returns its result with the trace lines of this thread's
/// calls during it. If `f` panics, the thread's previous capture state is
/// restored (and the lines are dropped) before the panic goes on.
#[doc(alias = "TORCH_SHOW_DISPATCH_TRACE")]
pub fn capture<T>(f: impl FnOnce() -> T) -> (T, String) {
    let capture = TraceCapture::start();
    let result = f();
    (result, capture.finish())
}

/// A capture of this thread's trace lines, as a guard: from
/// [`start`](Self::start) until [`finish`](Self::finish) (or the drop, which
/// discards the lines), this thread's calls are traced into the capture
/// instead of stderr. Ending it, by `finish`, a drop or a panic unwinding
/// through it, restores the state the thread had before it (an enclosing
/// capture goes on). Captures nest; end them in the reverse order of their
/// starts.
#[must_use = "the capture ends when the guard is dropped"]
pub struct TraceCapture {
    /// The thread's state before the capture: whether it was capturing, and
    /// the enclosing capture's lines.
    was_capturing: bool,
    previous: Option<String>,
    /// Whether the capture still has to be ended.
    active: bool,
    /// Thread-local state: the guard stays on its thread.
    _not_send: std::marker::PhantomData<*const ()>,
}

impl TraceCapture {
    /// Starts capturing this thread's trace lines.
    pub fn start() -> TraceCapture {
        let _ = base_state();
        let was_capturing = CAPTURING.with(|c| c.replace(true));
        adjust_captures(1);
        let previous = SINK.with(|s| s.borrow_mut().replace(String::new()));
        TraceCapture {
            was_capturing,
            previous,
            active: true,
            _not_send: std::marker::PhantomData,
        }
    }

    /// Ends the capture and returns its lines.
    pub fn finish(mut self) -> String {
        self.restore()
    }

    /// Puts the previous state back; returns the captured lines.
    fn restore(&mut self) -> String {
        self.active = false;
        let previous = self.previous.take();
        let lines = SINK
            .with(|s| std::mem::replace(&mut *s.borrow_mut(), previous))
            .unwrap_or_default();
        CAPTURING.with(|c| c.set(self.was_capturing));
        adjust_captures(-1);
        lines
    }
}

impl Drop for TraceCapture {
    fn drop(&mut self) {
        if self.active {
            self.restore();
        }
    }
}

/// Keeps the nesting level raised while a traced kernel runs.
pub(crate) struct TraceGuard(bool);

impl Drop for TraceGuard {
    fn drop(&mut self) {
        if self.0 {
            DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
        }
    }
}

/// Prints one trace line (if tracing) and raises the nesting level.
#[inline(always)]
pub(crate) fn enter(label: &str, op: &OperatorName, keys: DispatchKeySet) -> TraceGuard {
    if !enabled() {
        return TraceGuard(false);
    }
    print_line(label, op, keys);
    TraceGuard(true)
}

#[cold]
fn print_line(label: &str, op: &OperatorName, keys: DispatchKeySet) {
    let depth = DEPTH.with(|d| {
        let v = d.get();
        d.set(v + 1);
        v
    });
    let line = format!(
        "{}[{label}] op=[{op}], key=[{}]\n",
        " ".repeat(depth),
        keys.highest_priority_type_id()
    );
    let captured = SINK.with(|s| {
        if let Some(buf) = s.borrow_mut().as_mut() {
            buf.push_str(&line);
            true
        } else {
            false
        }
    });
    if !captured {
        eprint!("{line}");
    }
}
