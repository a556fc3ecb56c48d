//! Registration failures and warnings are visible: a static block that fails
//! is kept with its place in the source and reported through the warning
//! handler, and the dispatcher's warnings go to the handler a caller
//! installs (PyTorch's `TORCH_WARN` and `c10::WarningHandler`).

use std::sync::{Arc, Mutex};

use aten_dispatch::{
    torch_library, torch_library_fragment, CppFunction, Dispatcher, Library, LibraryKind,
    StaticRegistrationError,
};
use c10_core::warning::{set_warning_handler, Warning, WarningHandlerGuard};
use c10_core::DispatchKey;

// Defines the same operator twice: the whole block fails.
torch_library!(errtest, |m| {
    m.def("ok(int x) -> int")?;
    m.def("dup(int x) -> int")?;
    m.def("dup(int x) -> int")?;
    Ok(())
});

// Not a schema.
torch_library_fragment!(errtest, |m| {
    m.def("broken(int x -> int")?;
    Ok(())
});

// Fine: failures elsewhere do not stop it.
torch_library_fragment!(errtest_ok, |m| {
    m.def("fine(int x) -> int")?;
    Ok(())
});

fn failures(errors: &[StaticRegistrationError]) -> Vec<String> {
    let mut lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
    lines.sort();
    lines
}

#[test]
fn failed_static_blocks_are_kept_reported_and_warned_about() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    // The process-wide handler: the global dispatcher may be set up on any
    // thread.
    let previous = set_warning_handler(move |w: &Warning| {
        sink.lock().unwrap().push(w.message().to_string());
    });
    let d = Dispatcher::global();
    let _ = set_warning_handler(move |w: &Warning| previous.process(w));

    let errors = d.static_registration_errors();
    assert_eq!(errors.len(), 2, "{errors:#?}");
    let lines = failures(&errors);
    assert!(
        lines[0].starts_with("TORCH_LIBRARY(errtest) block at ")
            && lines[0].contains("registration_errors.rs:")
            && lines[0].contains(
                "failed and registered nothing: Tried to register an operator (errtest::dup(int x) -> int) with the same name and overload name multiple times."
            ),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with("TORCH_LIBRARY_FRAGMENT(errtest) block at "),
        "{}",
        lines[1]
    );
    // The failed block left nothing behind; the good one ran.
    assert!(d.find_op(&"errtest::ok".parse().unwrap()).is_none());
    assert!(d.find_schema_or_throw("errtest_ok::fine", "").is_ok());

    let report = d.check_static_registrations().unwrap_err();
    let report = report.message();
    assert!(report.starts_with("2 static registration blocks failed:\n  TORCH_LIBRARY"));
    assert_eq!(
        report
            .lines()
            .filter(|l| l.starts_with("  TORCH_LIBRARY"))
            .count(),
        2
    );
    assert!(report.lines().skip(1).all(|l| l.starts_with("  ")));

    // Each failure was also a warning.
    let seen = seen.lock().unwrap();
    for line in &lines {
        assert!(seen.contains(line), "{line} not in {seen:#?}");
    }
}

#[test]
fn static_registrations_on_an_isolated_dispatcher_report_the_same_failures() {
    let d = Dispatcher::new();
    let errors = d.run_static_registrations();
    assert_eq!(failures(&errors), failures(&d.static_registration_errors()));
    assert_eq!(errors.len(), 2);
    assert!(errors.iter().all(|e| e.ns == "errtest"));
    assert!(d.find_schema_or_throw("errtest_ok::fine", "").is_ok());
}

#[test]
fn overriding_a_kernel_warns_through_the_handler() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let _guard = WarningHandlerGuard::new(move |w: &Warning| {
        sink.lock().unwrap().push(w.clone());
    });
    let d = Dispatcher::new();
    let mut def =
        Library::with_dispatcher(&d, LibraryKind::Fragment, "warn", None, "warn.rs", 1).unwrap();
    def.def("op(int x) -> int").unwrap();
    let mut first = Library::with_dispatcher(
        &d,
        LibraryKind::Impl,
        "warn",
        Some(DispatchKey::CPU),
        "a.rs",
        7,
    )
    .unwrap();
    first
        .impl_("op", CppFunction::from_unboxed(|x: i64| Ok(x)))
        .unwrap();
    let mut second = Library::with_dispatcher(
        &d,
        LibraryKind::Impl,
        "warn",
        Some(DispatchKey::CPU),
        "b.rs",
        9,
    )
    .unwrap();
    second
        .impl_("op", CppFunction::from_unboxed(|x: i64| Ok(x + 1)))
        .unwrap();
    // The override warning is raised once per process; this is the only
    // test of this binary that overrides a kernel.
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1, "{seen:#?}");
    assert_eq!(
        seen[0].message(),
        "Warning only once for all operators,  other operators may also be overridden.\n  Overriding a previously registered kernel for the same operator and the same dispatch key\n  operator: warn::op(int x) -> int\n    registered at warn.rs:1\n  dispatch key: CPU\n  previous kernel: registered at a.rs:7\n       new kernel: registered at b.rs:9"
    );
}
