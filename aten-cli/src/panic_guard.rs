//! Turning a panic into an error: the runners call kernels on inputs
//! from files, and one bad model or record must not end the whole run.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The text a panic carried (`&str` or `String` payloads), or a
/// placeholder.
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown payload".into())
}

/// Runs `f`; a panic inside it becomes `Err("panic while running WHAT:
/// MESSAGE")`. Nothing `f` touched is used afterwards by the caller except
/// through the returned value.
pub fn guarded<R>(what: &str, f: impl FnOnce() -> Result<R, String>) -> Result<R, String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(payload) => Err(format!(
            "panic while running {what}: {}",
            panic_message(payload.as_ref())
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_an_error_naming_what_ran() {
        let err = guarded::<()>("model m", || panic!("index {} out of range", 3)).unwrap_err();
        assert_eq!(err, "panic while running model m: index 3 out of range");
        let err = guarded::<()>("x", || std::panic::panic_any(7u8)).unwrap_err();
        assert_eq!(err, "panic while running x: unknown payload");
        assert_eq!(guarded("y", || Ok::<_, String>(2)), Ok(2));
    }
}
