//! Boxed operator calls against PyTorch 2.15's `ops_golden.jsonl` (copied
//! into `conformance/data/`), and against `composite_ops_golden.jsonl`:
//! calls of the composite operators exported programs call before
//! decomposition, recorded with PyTorch 2.15 by
//! `conformance/scripts/composite_ops_golden.py`.
//!
//! Every record runs without a panic and gives one output line. Every
//! record whose operator this project implements on CPU (a schema in the
//! global dispatcher and a CPU kernel in its computed table) must match
//! PyTorch; the others are listed per operator, so the test follows the
//! kernels as they land and checks exactly what exists.
//!
//! `KNOWN_FAILURES` would list records of implemented operators that do not
//! match yet (printed, not failed); it is empty: every record of an
//! implemented operator passes.

use std::path::PathBuf;
use std::process::Command;

use aten_cli::conform::ops::{self, Verdict};

fn data_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/data")
        .join(name)
}

fn data(name: &str) -> String {
    let path = data_path(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Records (line of `ops_golden.jsonl`, operator) of implemented operators
/// known not to match PyTorch yet, with the reason. Tolerated, whether they
/// fail or not; remove an entry once its kernel is fixed.
const KNOWN_FAILURES: &[(usize, &str, &str)] = &[];

#[test]
fn every_implemented_operator_matches_pytorch() {
    let input = data("ops_golden.jsonl");
    let records = input.lines().filter(|l| !l.trim().is_empty()).count();
    let outcomes = ops::run_records(&input);
    assert_eq!(outcomes.len(), records);
    // Every record carries PyTorch's outcome, so every one is checked.
    assert!(outcomes.iter().all(|o| o.verdict != Verdict::Unchecked));

    let per_op = ops::per_op(&outcomes);
    let mut implemented = 0;
    let mut implemented_records = 0;
    println!(
        "{:<36} {:>6} {:>6}  implemented on CPU",
        "op", "passed", "failed"
    );
    for (op, tally) in &per_op {
        let on_cpu = ops::implemented_on_cpu(op);
        if on_cpu {
            implemented += 1;
            implemented_records += tally.passed + tally.failed;
        }
        println!(
            "{op:<36} {:>6} {:>6}  {}",
            tally.passed,
            tally.failed,
            if on_cpu { "yes" } else { "no" }
        );
    }
    let passed = outcomes.iter().filter(|o| o.passed()).count();
    println!(
        "{passed} of {records} records pass; {implemented} of {} operators implemented on CPU ({implemented_records} records)",
        per_op.len()
    );
    println!("{}", ops::summary(&outcomes));

    for (line, op, why) in KNOWN_FAILURES {
        let outcome = outcomes.iter().find(|o| o.line == *line);
        assert_eq!(
            outcome.and_then(|o| o.op.as_deref()),
            Some(*op),
            "KNOWN_FAILURES names line {line} as {op}"
        );
        let state = if outcome.is_some_and(|o| o.passed()) {
            "passes now: remove it from KNOWN_FAILURES"
        } else {
            "still fails"
        };
        println!("known failure, line {line} ({op}): {why}; {state}");
    }
    let known = |o: &&ops::RecordOutcome| KNOWN_FAILURES.iter().any(|(line, _, _)| *line == o.line);
    let failures: Vec<String> = outcomes
        .iter()
        .filter(|o| !o.passed())
        .filter(|o| !known(o))
        .filter(|o| o.op.as_deref().is_some_and(ops::implemented_on_cpu))
        .map(|o| match &o.verdict {
            Verdict::Failed(why) => {
                format!("line {} ({}): {why}", o.line, o.op.as_deref().unwrap_or(""))
            }
            other => format!("line {}: {other:?}", o.line),
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} records of implemented operators fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn the_run_gives_one_line_per_record_and_a_tally() {
    let input = data("ops_golden.jsonl");
    let records = input.lines().filter(|l| !l.trim().is_empty()).count();
    let (lines, report) = ops::run(&input);
    assert_eq!(lines.len(), records);
    for line in &lines {
        let v: serde_json::Value = serde_json::from_str(line).expect("an output line is JSON");
        assert!(v.get("op").is_some(), "{line}");
        assert!(
            v.get("result").is_some() != v.get("error").is_some(),
            "{line}"
        );
    }
    let tally = report.tally.expect("the golden file has expectations");
    assert_eq!(tally.passed + tally.failed, records);
    assert_eq!(report.failures.len(), tally.failed);
    assert!(
        report.notes[0].starts_with("strides differ: "),
        "{:?}",
        report.notes
    );
}

#[test]
fn the_cli_runs_the_golden_file() {
    let path = data_path("ops_golden.jsonl");
    let records = data("ops_golden.jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count();
    let output = Command::new(env!("CARGO_BIN_EXE_aten"))
        .args(["conform", "ops"])
        .arg(&path)
        .output()
        .expect("the aten binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stdout.lines().count(), records, "{stderr}");
    assert!(stderr.contains("strides differ: "), "{stderr}");
    let tally = stderr
        .lines()
        .last()
        .expect("a tally line on stderr")
        .to_string();
    assert!(tally.ends_with(" failed"), "{tally}");
    // The exit status says whether everything passed.
    assert_eq!(
        output.status.success(),
        tally.ends_with(", 0 failed"),
        "{tally}"
    );
}

#[test]
fn every_composite_operator_matches_pytorch() {
    let input = data("composite_ops_golden.jsonl");
    let records = input.lines().filter(|l| !l.trim().is_empty()).count();
    let outcomes = ops::run_records(&input);
    assert_eq!(outcomes.len(), records);
    let failures: Vec<String> = outcomes
        .iter()
        .filter_map(|o| match &o.verdict {
            Verdict::Failed(why) => Some(format!(
                "line {} ({}): {why}",
                o.line,
                o.op.as_deref().unwrap_or("?")
            )),
            Verdict::Unchecked => Some(format!("line {}: unchecked", o.line)),
            Verdict::Passed => None,
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
