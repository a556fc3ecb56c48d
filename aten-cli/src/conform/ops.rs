//! `aten conform ops FILE`: boxed operator calls in the format of
//! `ops_golden.jsonl`.
//!
//! Each line names an operator with its overload (`"aten::add.Tensor"`,
//! `default` for the empty overload) and gives `args` and `kwargs` in the
//! encoding of [`decode`]. The runner finds the operator's schema in the
//! global dispatcher, builds the inputs (tensors as strided views of their
//! storage), checks and completes the call against the schema
//! (`createStackForSchema`, as every `torch.ops` call binds them), calls the operator through the boxed path
//! (`call_boxed`), and writes one line per input line: `{"op": ...,
//! "result": ...}` in the same encoding ([`encode`], result strides
//! included) or `{"op": ..., "error": message}` with the first line of the
//! error. A bad record never stops the run: it becomes an error line, and a
//! kernel that panics is reported as an error too.
//!
//! When a line carries PyTorch's `result` or `error`, the outcome is
//! compared ([`compare`]): an expected error passes when the operator
//! raises an error as well (the schema check of the arguments or the
//! kernel; not a failed lookup or decoding, nor a missing kernel; matching
//! text is counted separately), an expected result when structure, dtypes
//! and shapes match exactly and values within the dtype's tolerance. Result
//! strides that differ from PyTorch's are counted, not failed; [`Summary`]
//! reports them, the exact error texts and the records of operators not
//! implemented yet.

pub mod compare;
pub mod decode;
pub mod encode;
pub mod meta;

use std::collections::BTreeMap;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};

use aten::boxing::Stack;
use aten::DispatchKey;
use serde_json::Value;

use self::compare::Comparison;
use super::{Report, Tally};
use crate::panic_guard::panic_message;

/// The verdict on one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The line carried no expected `result` or `error`.
    Unchecked,
    /// The outcome matched the expected one.
    Passed,
    /// It did not; the text says how.
    Failed(String),
}

/// What happened to one input line.
#[derive(Clone, Debug)]
pub struct RecordOutcome {
    /// 1-based line number in the input.
    pub line: usize,
    /// The line's `op`, when it has one.
    pub op: Option<String>,
    /// The output line (`{"op", "result"}` or `{"op", "error"}`).
    pub output: String,
    /// The comparison with the expected outcome.
    pub verdict: Verdict,
    /// For an expected error that we raised too: whether the first line of
    /// our message is PyTorch's exactly.
    pub error_text_matches: Option<bool>,
    /// Where the call failed, when it did.
    pub error_stage: Option<Stage>,
    /// Stride comparisons of the result tensors.
    pub strides: Comparison,
}

impl RecordOutcome {
    /// Whether the line was checked and passed.
    pub fn passed(&self) -> bool {
        self.verdict == Verdict::Passed
    }

    /// Whether the call failed because the operator is not implemented: no
    /// schema in the global dispatcher, or no kernel for the call.
    pub fn not_implemented(&self) -> bool {
        matches!(
            self.error_stage,
            Some(Stage::Lookup) | Some(Stage::NoKernel)
        ) && self.op.is_some()
    }
}

/// Where a call failed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Stage {
    /// The record could not be read, or its operator has no schema in the
    /// global dispatcher.
    Lookup,
    /// An argument could not be decoded from its JSON encoding.
    Decode,
    /// The operator is declared but the dispatcher has no kernel for the
    /// call's dispatch key (PyTorch's "Could not run 'op' with arguments
    /// from the 'Key' backend").
    NoKernel,
    /// The operator raised the error: the schema check of the arguments or
    /// the kernel.
    Call,
    /// The returns could not be encoded, or a kernel panicked.
    Runner,
}

/// A failed call: where, and the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallError {
    /// Where it failed.
    pub stage: Stage,
    /// The message.
    pub message: String,
}

impl CallError {
    fn at(stage: Stage) -> impl FnOnce(String) -> CallError {
        move |message| CallError { stage, message }
    }

    /// Whether the operator itself raised the error (what an expected
    /// PyTorch error is compared with): a failed lookup or decoding is the
    /// runner's, not the operator's.
    pub fn raised_by_operator(&self) -> bool {
        self.stage == Stage::Call
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Calls `op` (`ns::name.overload`) with the encoded `args` and `kwargs`
/// through the global dispatcher's boxed path; the encoded result, or the
/// error.
pub fn call(op: &str, args: Option<&Value>, kwargs: Option<&Value>) -> Result<Value, CallError> {
    let handle = decode::find_operator(op).map_err(CallError::at(Stage::Lookup))?;
    let schema = handle
        .schema()
        .ok_or_else(|| CallError::at(Stage::Lookup)(format!("{op} has no schema")))?;
    let decoded = decode::decode_arguments(args, kwargs).map_err(CallError::at(Stage::Decode))?;
    let raised = |e: aten::Error| CallError::at(Stage::Call)(e.to_string());
    let mut stack: Stack = decode::bind(&schema, &decoded).map_err(raised)?;
    handle.call_boxed(&mut stack).map_err(|e| {
        let stage = if e.message().starts_with("Could not run '") {
            Stage::NoKernel
        } else {
            Stage::Call
        };
        CallError::at(stage)(e.to_string())
    })?;
    let types: Vec<_> = schema.returns().iter().map(|r| r.real_type()).collect();
    if stack.len() != types.len() {
        return Err(CallError::at(Stage::Runner)(format!(
            "{op} returned {} values but its schema declares {}",
            stack.len(),
            types.len()
        )));
    }
    encode::encode_returns(&stack, &types).map_err(CallError::at(Stage::Runner))
}

/// [`call`], with a panic turned into an error.
fn call_guarded(
    op: &str,
    args: Option<&Value>,
    kwargs: Option<&Value>,
) -> Result<Value, CallError> {
    match catch_unwind(AssertUnwindSafe(|| call(op, args, kwargs))) {
        Ok(result) => result,
        Err(payload) => Err(CallError::at(Stage::Runner)(format!(
            "panic while running {op}: {}",
            panic_message(payload.as_ref())
        ))),
    }
}

/// Whether `op` (`ns::name.overload`) has a schema in the global dispatcher
/// and its computed table has a CPU kernel: the operators this project
/// implements on CPU.
pub fn implemented_on_cpu(op: &str) -> bool {
    decode::find_operator(op)
        .is_ok_and(|h| h.has_computed_kernel_for_dispatch_key(DispatchKey::CPU))
}

fn first_line(message: &str) -> &str {
    message.lines().next().unwrap_or("")
}

/// `aten conform ops --meta FILE`: every record again with its tensors on
/// the Meta device ([`meta`]); a failure line per record whose result
/// structure, dtype or shape differs from PyTorch's, notes with the
/// stride and error-record counts.
pub fn run_meta(input: &str) -> (Vec<String>, Report) {
    let run = meta::run_records(input);
    let mut report = Report::default();
    for (line, op, verdict) in &run.checked {
        report.check(*verdict == Verdict::Passed, || match verdict {
            Verdict::Failed(why) => format!("line {line} ({op}): {why}"),
            _ => format!("line {line} ({op})"),
        });
    }
    report.tally.get_or_insert_with(Tally::default);
    report.notes.push(format!(
        "on Meta: strides differ: {} of {} result tensors compared; expected errors raised on Meta too: {} of {}; records skipped (no schema, data-dependent or unchecked): {}",
        run.strides.strides_differ.len(),
        run.strides.strides_compared,
        run.error_records.1,
        run.error_records.0,
        run.skipped
    ));
    report
        .notes
        .extend(run.strides.strides_differ.iter().cloned());
    (Vec::new(), report)
}

/// Runs one line (`line` is its 1-based number).
pub fn run_record(line: usize, text: &str) -> RecordOutcome {
    let mut outcome = RecordOutcome {
        line,
        op: None,
        output: String::new(),
        verdict: Verdict::Unchecked,
        error_text_matches: None,
        error_stage: None,
        strides: Comparison::default(),
    };
    let record: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            let message = format!("invalid JSON: {e}");
            outcome.output = encode::output_line(None, "error", &Value::from(message.as_str()));
            outcome.verdict = Verdict::Failed(message);
            return outcome;
        }
    };
    let op = record.get("op").and_then(Value::as_str).map(str::to_string);
    let result = match &op {
        Some(op) => call_guarded(op, record.get("args"), record.get("kwargs")),
        None => Err(CallError::at(Stage::Lookup)(
            "record without a string `op`".to_string(),
        )),
    };
    outcome.output = match &result {
        Ok(value) => encode::output_line(op.as_deref(), "result", value),
        Err(e) => encode::output_line(op.as_deref(), "error", &Value::from(first_line(&e.message))),
    };
    outcome.op = op;
    outcome.error_stage = result.as_ref().err().map(|e| e.stage);
    let expected_result = record.get("result");
    let expected_error = record.get("error");
    outcome.verdict = match (expected_result, expected_error, &result) {
        (None, None, _) => Verdict::Unchecked,
        (_, Some(expected), Err(e)) if e.raised_by_operator() => {
            let expected = expected.as_str().unwrap_or("");
            outcome.error_text_matches = Some(first_line(expected) == first_line(&e.message));
            Verdict::Passed
        }
        (_, Some(expected), Err(e)) => Verdict::Failed(format!(
            "expected the error `{}`, but the call could not be made: {}",
            first_line(expected.as_str().unwrap_or("")),
            first_line(&e.message)
        )),
        (_, Some(expected), Ok(_)) => Verdict::Failed(format!(
            "expected the error `{}`, got a result",
            first_line(expected.as_str().unwrap_or(""))
        )),
        (Some(_), None, Err(e)) => Verdict::Failed(format!("error: {}", first_line(&e.message))),
        (Some(expected), None, Ok(got)) => {
            match compare::compare(expected, got, &mut outcome.strides) {
                Ok(()) => Verdict::Passed,
                Err(difference) => Verdict::Failed(difference),
            }
        }
    };
    outcome
}

/// Runs every non-blank line of `input`.
pub fn run_records(input: &str) -> Vec<RecordOutcome> {
    input
        .lines()
        .enumerate()
        .filter(|(_, text)| !text.trim().is_empty())
        .map(|(n, text)| run_record(n + 1, text))
        .collect()
}

/// Pass/fail counts per operator (checked lines only), by `op`.
pub fn per_op(outcomes: &[RecordOutcome]) -> BTreeMap<String, Tally> {
    let mut counts: BTreeMap<String, Tally> = BTreeMap::new();
    for o in outcomes {
        if o.verdict == Verdict::Unchecked {
            continue;
        }
        let op = o.op.clone().unwrap_or_else(|| "<no op>".into());
        counts.entry(op).or_default().record(o.passed());
    }
    counts
}

/// Fidelity counts beyond pass/fail.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Result tensors whose strides were compared.
    pub strides_compared: usize,
    /// Those whose strides differ from PyTorch's.
    pub strides_differ: usize,
    /// Expected errors that we raised too.
    pub errors_raised: usize,
    /// Those whose first line is PyTorch's exactly.
    pub error_text_exact: usize,
    /// Records whose operator could not be found (no schema in the global
    /// dispatcher) or has no kernel for the call: not implemented yet.
    pub not_implemented: usize,
}

/// `strides differ: K of N ...; error text exact: A of B ...; operator not
/// implemented: C records`.
impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "strides differ: {} of {} result tensors compared; error text exact: {} of {} expected errors raised; operator not implemented: {} records",
            self.strides_differ,
            self.strides_compared,
            self.error_text_exact,
            self.errors_raised,
            self.not_implemented
        )
    }
}

/// The fidelity counts of a run.
pub fn summary(outcomes: &[RecordOutcome]) -> Summary {
    let mut s = Summary::default();
    for o in outcomes {
        s.strides_compared += o.strides.strides_compared;
        s.strides_differ += o.strides.strides_differ.len();
        s.not_implemented += usize::from(o.not_implemented());
        if let Some(exact) = o.error_text_matches {
            s.errors_raised += 1;
            s.error_text_exact += usize::from(exact);
        }
    }
    s
}

fn describe(o: &RecordOutcome, what: &str) -> String {
    format!(
        "line {} ({}): {what}",
        o.line,
        o.op.as_deref().unwrap_or("<no op>")
    )
}

/// The output lines and the report of a run: failures one per line (those
/// of operators not implemented yet last, so the others show first); as
/// notes, the [`Summary`] first and then each stride difference.
pub fn report(outcomes: &[RecordOutcome]) -> (Vec<String>, Report) {
    let mut report = Report::default();
    let lines = outcomes.iter().map(|o| o.output.clone()).collect();
    let (missing, found): (Vec<&RecordOutcome>, Vec<&RecordOutcome>) =
        outcomes.iter().partition(|o| o.not_implemented());
    for o in found.into_iter().chain(missing) {
        match &o.verdict {
            Verdict::Unchecked => {}
            Verdict::Passed => report.check(true, String::new),
            Verdict::Failed(why) => report.check(false, || describe(o, why)),
        }
    }
    if report.tally.is_some() {
        report.notes.push(summary(outcomes).to_string());
        for o in outcomes {
            for difference in &o.strides.strides_differ {
                report.notes.push(describe(o, difference));
            }
        }
    }
    (lines, report)
}

/// Runs every line of `input`: the output lines and the report.
pub fn run(input: &str) -> (Vec<String>, Report) {
    report(&run_records(input))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_records_become_error_lines() {
        for (text, want) in [
            ("{not json", "invalid JSON"),
            (r#"{"args": []}"#, "without a string `op`"),
            (
                r#"{"op": "aten::no_such_op.default", "args": []}"#,
                "Could not find schema",
            ),
            (r#"{"op": "nonsense", "args": []}"#, "no namespace"),
            (
                r#"{"op": "aten::zeros.default", "args": [{"list": [{"int": 2}]}], "kwargs": {"dtype": {"dtype": "float99"}}}"#,
                "unknown dtype",
            ),
            (
                r#"{"op": "aten::zeros.default", "args": {"x": 1}}"#,
                "not a list",
            ),
            (
                r#"{"op": "aten::zeros.default", "args": [{"str": "x"}]}"#,
                "Expected a value of type",
            ),
        ] {
            let o = run_record(1, text);
            assert!(o.output.contains(want), "{text}: {}", o.output);
            let v: Value = serde_json::from_str(&o.output).unwrap();
            assert!(v.get("error").is_some(), "{}", o.output);
        }
    }

    #[test]
    fn zeros_runs_and_matches() {
        let text = r#"{"op": "aten::zeros.default", "args": [{"list": [{"int": 2}]}], "kwargs": {"dtype": {"dtype": "float64"}}, "result": {"tensor": {"dtype": "float64", "shape": [2], "strides": [1], "values": [0.0, 0.0]}}}"#;
        let o = run_record(7, text);
        assert_eq!(o.verdict, Verdict::Passed, "{}", o.output);
        assert_eq!(
            o.output,
            r#"{"op": "aten::zeros.default", "result": {"tensor": {"dtype": "float64", "shape": [2], "strides": [1], "values": [0.0, 0.0]}}}"#
        );
        assert_eq!(o.strides.strides_compared, 1);
        // Wrong expectations fail, with the difference described.
        let wrong = text.replace("[0.0, 0.0]", "[0.0, 1.0]");
        let o = run_record(7, &wrong);
        assert!(matches!(&o.verdict, Verdict::Failed(why) if why.contains("1 of 2 values differ")));
        let error = r#"{"op": "aten::zeros.default", "args": [{"list": [{"int": -1}]}], "error": "Trying to create tensor with negative dimension -1: [-1]"}"#;
        let o = run_record(8, error);
        assert_eq!(o.verdict, Verdict::Passed, "{}", o.output);
        assert!(o.error_text_matches.is_some());
    }

    #[test]
    fn a_declared_operator_without_a_kernel_is_not_implemented() {
        let schema = aten::boxing::FunctionSchema::parse(
            "conform_ops_test::no_kernel(Tensor self) -> Tensor",
        )
        .unwrap();
        let _def = aten::dispatcher()
            .register_def(schema, "conform ops test", None, Vec::new())
            .unwrap();
        let text = r#"{"op": "conform_ops_test::no_kernel.default", "args": [{"tensor": {"dtype": "int64", "shape": [], "strides": [], "offset": 0, "storage": [1]}}], "error": "some PyTorch error"}"#;
        let o = run_record(1, text);
        assert_eq!(o.error_stage, Some(Stage::NoKernel), "{}", o.output);
        assert!(o.not_implemented());
        assert!(o
            .output
            .contains("Could not run 'conform_ops_test::no_kernel'"));
        // A missing kernel does not count as raising PyTorch's error.
        assert!(matches!(&o.verdict, Verdict::Failed(_)));
        assert!(!implemented_on_cpu("conform_ops_test::no_kernel.default"));
    }

    #[test]
    fn the_run_reports_counts_per_op() {
        let input = concat!(
            r#"{"op": "aten::zeros.default", "args": [{"list": [{"int": 1}]}], "kwargs": {"dtype": {"dtype": "int32"}}, "result": {"tensor": {"dtype": "int32", "shape": [1], "strides": [1], "values": [0]}}}"#,
            "\n\n",
            r#"{"op": "aten::zeros.default", "args": [{"list": [{"int": 1}]}], "result": {"tensor": {"dtype": "int32", "shape": [1], "strides": [1], "values": [0]}}}"#,
            "\n",
            r#"{"op": "aten::zeros.default", "args": [{"list": [{"int": 3}]}]}"#,
            "\n",
        );
        let outcomes = run_records(input);
        assert_eq!(outcomes.len(), 3);
        assert_eq!(outcomes[1].line, 3);
        let counts = per_op(&outcomes);
        assert_eq!(
            counts["aten::zeros.default"],
            Tally {
                passed: 1,
                failed: 1
            }
        );
        let (lines, report) = report(&outcomes);
        assert_eq!(lines.len(), 3);
        assert_eq!(
            report.tally,
            Some(Tally {
                passed: 1,
                failed: 1
            })
        );
        assert!(
            report.failures[0].starts_with("line 3 (aten::zeros.default): result: expected dtype")
        );
        assert!(report.notes[0].starts_with("strides differ: 0 of 1"));
        // Without expectations there is no tally.
        let (_, report) = run(r#"{"op": "aten::zeros.default", "args": [{"list": []}]}"#);
        assert!(report.tally.is_none());
    }
}
