//! Gradients of operator calls against PyTorch 2.15's `grad_golden.jsonl`
//! (copied into `conformance/data/`): first and second derivatives, and the
//! stage at which PyTorch fails for the records that are errors.
//!
//! Every record runs without a panic, gives one output line and matches
//! PyTorch.

use std::path::PathBuf;

use aten_cli::conform::grads;

#[test]
fn every_record_differentiates_as_pytorch() {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../conformance/data/grad_golden.jsonl");
    let input =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let records = input.lines().filter(|l| !l.trim().is_empty()).count();
    let (lines, report) = grads::run(&input);
    assert_eq!(lines.len(), records);
    let tally = report.tally.expect("records carry PyTorch's outcomes");
    println!("{tally}");
    let (missing, wrong): (Vec<&String>, Vec<&String>) = report
        .failures
        .iter()
        .partition(|f| f.contains("Could not find schema"));
    for m in &missing {
        println!("operator not implemented: {m}");
    }
    assert!(
        wrong.is_empty(),
        "{}",
        wrong
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(tally.passed >= 450, "{tally}");
}
