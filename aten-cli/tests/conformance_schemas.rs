//! Operator schemas against the PyTorch 2.15 oracle data copied into
//! `conformance/data/`: every registered schema prints back unchanged and
//! parses into the structure PyTorch reports, and the generated valid and
//! invalid cases behave as in PyTorch.

use std::path::PathBuf;

use aten_cli::conform;

fn data(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/data")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn first_failures(report: &conform::Report) -> &[String] {
    &report.failures[..report.failures.len().min(5)]
}

#[test]
fn every_registered_schema_prints_back_identically() {
    let input = data("schemas.txt");
    let (lines, report) = conform::schemas::run(&input);
    assert_eq!(lines.len(), 4415);
    assert!(report.failures.is_empty(), "{:#?}", first_failures(&report));
    assert_eq!(report.tally.unwrap().passed, 4415);
}

#[test]
fn every_registered_schema_has_pytorchs_structure() {
    let report = conform::schemas::check_structure(&data("schemas.jsonl"));
    assert!(report.failures.is_empty(), "{:#?}", first_failures(&report));
    assert_eq!(report.tally.unwrap().passed, 4415);
}

#[test]
fn every_schema_case_matches() {
    let input = data("schema_cases.jsonl");
    let (lines, report) = conform::schemas::run(&input);
    assert_eq!(lines.len(), 2000);
    assert!(report.failures.is_empty(), "{:#?}", first_failures(&report));
    assert_eq!(report.tally.unwrap().passed, 2000);
    // The error messages themselves (first line, as the oracle records
    // them) match too.
    let messages = conform::schemas::message_tally(&input);
    println!("error messages: {messages}");
    assert_eq!(messages.failed, 0, "{messages}");
}

#[test]
fn the_cli_reports_a_schema_error_on_its_first_line() {
    // PyTorch's `ErrorReport` texts start with a line break; the CLI
    // prints the message from the first line on.
    let deep = format!(
        "f({}int{} x) -> ()",
        "Dict(str, ".repeat(101),
        ")".repeat(101)
    );
    for text in [deep.as_str(), "f(..., int x) -> ()", "aten::foo("] {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_aten"))
            .args(["schema", text])
            .output()
            .expect("the aten binary runs");
        assert!(!output.status.success(), "{text}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        let first = stderr.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("error: ") && first.len() > "error: ".len(),
            "{text}: {stderr:?}"
        );
    }
}
