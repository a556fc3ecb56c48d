//! `aten conform schemas FILE`: operator schemas through the parser and the
//! canonical printer, against files in the format of `schema_cases.jsonl`
//! (`{"input": text}` with an expected `canonical` or `error`) or of
//! `schemas.txt` (one canonical schema per line, which must print back
//! unchanged). [`check_structure`] compares parsed schemas field by field
//! with `schemas.jsonl`; [`explain`] renders one schema for humans
//! (`aten schema TEXT`).
//!
//! Errors are written the way the oracle records PyTorch's: the first line
//! of the message, at most 200 characters ([`error_summary`]). PyTorch's
//! `ErrorReport` messages start with a newline, so their first line is
//! empty.
//!
//! One deliberate difference is accepted ([`same_message`]): where PyTorch's
//! message is only the name of the C++ conversion that threw (`stod`,
//! `stoll`, `stoi`: the exception's `what()`), ours says what is wrong with
//! which literal and ends with that name in parentheses
//! (`integer literal '99999999999999999999' is out of range for int64
//! (stoll)`).

use std::fmt::Write;

use aten::boxing::schema::{AliasInfo, AliasSet, Argument, FunctionSchema};
use serde_json::Value;

use super::{Report, Tally};
use crate::json::{error_line, OrderedObject};

/// How many characters of an error's first line the oracle keeps.
const ERROR_SUMMARY_CHARS: usize = 200;

/// The first line of an error message, at most 200 characters: what the
/// oracle files record of PyTorch's messages.
pub fn error_summary(message: &str) -> String {
    message
        .split('\n')
        .next()
        .unwrap_or_default()
        .chars()
        .take(ERROR_SUMMARY_CHARS)
        .collect()
}

/// What one input line expects.
enum Expectation {
    /// Nothing to compare.
    None,
    /// PyTorch's parsed structure (a line of `schemas.jsonl`).
    Structure(Value),
    /// This exact printed form.
    Canonical(String),
    /// An error (with PyTorch's summary of the message).
    Error(String),
}

/// One input line: the schema text and what it should give. `Err` for a
/// JSON line that is not in the format.
fn read_line(line: &str) -> Result<(String, Expectation), String> {
    if line.trim_start().starts_with('{') {
        if let Ok(value) = serde_json::from_str::<Value>(line) {
            if value.get("input").is_none() {
                if let Some(schema) = value.get("schema").and_then(Value::as_str) {
                    return Ok((schema.to_string(), Expectation::Structure(value)));
                }
            }
            let input = value
                .get("input")
                .and_then(Value::as_str)
                .ok_or("missing string field `input`")?
                .to_string();
            let expectation = if let Some(c) = value.get("canonical") {
                Expectation::Canonical(c.as_str().ok_or("`canonical` is not a string")?.into())
            } else if let Some(e) = value.get("error") {
                Expectation::Error(e.as_str().ok_or("`error` is not a string")?.into())
            } else {
                Expectation::None
            };
            return Ok((input, expectation));
        }
    }
    Ok((line.to_string(), Expectation::Canonical(line.to_string())))
}

/// Runs every non-empty line of `input`: JSON lines with `input` (and
/// optionally `canonical` or `error`), lines of `schemas.jsonl` (checked
/// with [`check_structure`]'s rules), or plain schema lines that must print
/// back identically. Each output line is `{"canonical": text}` or
/// `{"error": summary}`; a line passes when valid-versus-invalid agrees and
/// the printed form (or the structure) is identical.
pub fn run(input: &str) -> (Vec<String>, Report) {
    let mut report = Report::default();
    let mut out = Vec::new();
    for (n, line) in input.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let (text, expectation) = match read_line(line) {
            Ok(x) => x,
            Err(e) => {
                report.check(false, || format!("line {}: {e}", n + 1));
                out.push(error_line(&e));
                continue;
            }
        };
        let result = FunctionSchema::parse(&text).map(|s| s.to_string());
        out.push(match &result {
            Ok(canonical) => OrderedObject::new()
                .field("canonical", canonical.as_str())
                .to_line(),
            Err(e) => error_line(&error_summary(e.message())),
        });
        let structure = match &expectation {
            Expectation::Structure(value) => Some(check_schema_line(value)),
            _ => None,
        };
        let ok = match (&expectation, &result) {
            (Expectation::None, _) => continue,
            (Expectation::Structure(_), _) => structure.as_ref().is_some_and(Result::is_ok),
            (Expectation::Canonical(want), Ok(got)) => want == got,
            (Expectation::Error(_), Err(_)) => true,
            _ => false,
        };
        report.check(ok, || {
            let got = match &result {
                Ok(c) => format!("canonical {c:?}"),
                Err(e) => format!("error {:?}", error_summary(e.message())),
            };
            let want = match &expectation {
                Expectation::Canonical(c) => format!("canonical {c:?}"),
                Expectation::Error(e) => format!("error {e:?}"),
                Expectation::Structure(_) => {
                    let why = structure.and_then(Result::err).unwrap_or_default();
                    return format!("line {}: {why}", n + 1);
                }
                Expectation::None => String::new(),
            };
            format!("line {}: {text:?}: expected {want}, got {got}", n + 1)
        });
    }
    (out, report)
}

/// The C++ conversion functions whose bare name PyTorch reports as the
/// whole message when they throw.
const CONVERSION_FUNCTIONS: [&str; 3] = ["stod", "stoll", "stoi"];

/// Whether our error summary `got` counts as PyTorch's `want`: the same
/// text, or, where PyTorch's message is only a conversion function's name
/// (`stoll`), an explanation ending with that name in parentheses
/// (`... out of range for int64 (stoll)`).
pub fn same_message(got: &str, want: &str) -> bool {
    got == want
        || (CONVERSION_FUNCTIONS.contains(&want)
            && got
                .strip_suffix(')')
                .and_then(|rest| rest.strip_suffix(want))
                .is_some_and(|rest| rest.ends_with(" (")))
}

/// Among the lines of `input` that expect an error and do fail, how many
/// give PyTorch's message (its recorded summary), by [`same_message`].
pub fn message_tally(input: &str) -> Tally {
    let mut tally = Tally::default();
    for line in input.lines() {
        let Ok((text, Expectation::Error(want))) = read_line(line) else {
            continue;
        };
        if let Err(e) = FunctionSchema::parse(&text) {
            tally.record(same_message(&error_summary(e.message()), &want));
        }
    }
    tally
}

/// Sorted alias-set names, as the oracle lists them.
fn sets(names: &[AliasSet]) -> Value {
    Value::from(names.iter().map(AliasSet::as_str).collect::<Vec<_>>())
}

/// Alias-set names joined for humans.
fn join_sets(names: &[AliasSet]) -> String {
    names
        .iter()
        .map(AliasSet::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The oracle's record of one argument or return.
fn argument_json(arg: &Argument) -> Value {
    let alias = match arg.alias_info() {
        None => Value::Null,
        Some(a) => serde_json::json!({
            "before": sets(a.before_sets()),
            "after": sets(a.after_sets()),
            "is_write": a.is_write(),
        }),
    };
    serde_json::json!({
        "name": arg.name(),
        "type": arg.ty().annotation_str(),
        "N": arg.n(),
        "default": arg.default_value().map(|d| d.python_repr()),
        "real_type": arg.real_type().annotation_str(),
        "kwarg_only": arg.kwarg_only(),
        "is_out": arg.is_out(),
        "alias": alias,
    })
}

/// Compares one list of arguments (or returns) with the oracle's, field by
/// field; describes the first difference.
fn compare_arguments(what: &str, got: &[Argument], want: Option<&Value>) -> Result<(), String> {
    let want = want
        .and_then(Value::as_array)
        .ok_or_else(|| format!("missing list `{what}`"))?;
    if want.len() != got.len() {
        return Err(format!(
            "{what}: {} expected, {} parsed",
            want.len(),
            got.len()
        ));
    }
    const FIELDS: [&str; 8] = [
        "name",
        "type",
        "real_type",
        "N",
        "default",
        "kwarg_only",
        "is_out",
        "alias",
    ];
    for (i, (arg, expected)) in got.iter().zip(want).enumerate() {
        let actual = argument_json(arg);
        for field in FIELDS {
            let (a, e) = (actual.get(field), expected.get(field));
            if a != e {
                return Err(format!(
                    "{what}[{i}] `{}`: {field} expected {}, got {}",
                    arg.name(),
                    e.unwrap_or(&Value::Null),
                    a.unwrap_or(&Value::Null)
                ));
            }
        }
    }
    Ok(())
}

/// Checks one line of `schemas.jsonl`.
fn check_schema_line(line: &Value) -> Result<(), String> {
    let text = line
        .get("schema")
        .and_then(Value::as_str)
        .ok_or("missing string field `schema`")?;
    let schema = FunctionSchema::parse(text).map_err(|e| format!("{text}: {e}"))?;
    let expect = |field: &str, got: Value| -> Result<(), String> {
        let want = line.get(field).unwrap_or(&Value::Null);
        if *want == got {
            Ok(())
        } else {
            Err(format!("{text}: {field} expected {want}, got {got}"))
        }
    };
    expect("name", schema.name().into())?;
    expect("overload_name", schema.overload_name().into())?;
    expect("is_view_op", schema.is_view_op().into())?;
    expect("is_mutable", schema.is_mutable().into())?;
    compare_arguments("arguments", schema.arguments(), line.get("arguments"))
        .and_then(|()| compare_arguments("returns", schema.returns(), line.get("returns")))
        .map_err(|e| format!("{text}: {e}"))
}

/// Parses the `schema` of every line of a file in the format of
/// `schemas.jsonl` and compares the result field by field: name, overload,
/// `is_view_op`, `is_mutable`, and for every argument and return its name,
/// Python type string (fake and real), `N`, default (as Python's `repr`),
/// keyword-only and out flags and alias sets. One check per line.
pub fn check_structure(input: &str) -> Report {
    let mut report = Report::default();
    for (n, line) in input.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let result = serde_json::from_str::<Value>(line)
            .map_err(|e| e.to_string())
            .and_then(|v| check_schema_line(&v));
        report.check(result.is_ok(), || {
            format!("line {}: {}", n + 1, result.err().unwrap_or_default())
        });
    }
    report
}

/// An alias annotation in words.
fn describe_alias(alias: Option<&AliasInfo>) -> String {
    let Some(a) = alias else {
        return "-".into();
    };
    let mut s = format!(
        "before {{{}}} after {{{}}}{}",
        join_sets(a.before_sets()),
        join_sets(a.after_sets()),
        if a.is_write() { " write" } else { "" }
    );
    for c in a.contained_types() {
        let _ = write!(s, "; contains [{}]", describe_alias(Some(c)));
    }
    s
}

/// One argument or return as a line of the explanation.
fn describe_argument(out: &mut String, i: usize, arg: &Argument) {
    let name = if arg.name().is_empty() {
        "(unnamed)"
    } else {
        arg.name()
    };
    let _ = writeln!(out, "  {i}: {name}");
    let _ = write!(out, "     type {}", arg.real_type());
    if arg.real_type() != arg.ty() {
        let _ = write!(out, " (fake type {})", arg.ty());
    }
    let _ = writeln!(out, ", Python type {}", arg.real_type().annotation_str());
    let n = arg.n().map_or("-".into(), |n| n.to_string());
    let default = arg.default_value().map_or("-".into(), |d| d.python_repr());
    let _ = writeln!(
        out,
        "     N {n}, default {default}, kwarg-only {}, out {}",
        arg.kwarg_only(),
        arg.is_out()
    );
    let _ = writeln!(out, "     alias {}", describe_alias(arg.alias_info()));
}

/// `label:` and one line per item (` none` when empty), then `...` when
/// the list takes any number more.
fn describe_list(out: &mut String, label: &str, items: &[Argument], open: bool, tag: &str) {
    let _ = writeln!(
        out,
        "{label}:{}",
        if items.is_empty() { " none" } else { "" }
    );
    for (i, item) in items.iter().enumerate() {
        describe_argument(out, i, item);
    }
    if open {
        let _ = writeln!(out, "  ... ({tag})");
    }
}

/// `aten schema TEXT`: the canonical form and the parsed structure of one
/// schema, for humans; `Err` with PyTorch's full message when it does not
/// parse.
pub fn explain(text: &str) -> Result<String, String> {
    let schema = FunctionSchema::parse(text).map_err(|e| e.message().to_string())?;
    let mut out = String::new();
    let _ = writeln!(out, "canonical: {schema}");
    let _ = writeln!(out, "name: {}", schema.name());
    let _ = writeln!(out, "overload: {:?}", schema.overload_name());
    describe_list(
        &mut out,
        "arguments",
        schema.arguments(),
        schema.is_vararg(),
        "vararg",
    );
    describe_list(
        &mut out,
        "returns",
        schema.returns(),
        schema.is_varret(),
        "varret",
    );
    let _ = writeln!(out, "is_mutable: {}", schema.is_mutable());
    let _ = writeln!(out, "is_view_op: {}", schema.is_view_op());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_and_plain_lines() {
        let input = concat!(
            r#"{"input": "f(int a)->()", "canonical": "f(int a) -> ()"}"#,
            "\n",
            r#"{"input": "f(int a) - ()", "error": "expected arrow but found '-' here:"}"#,
            "\n",
            "aten::g(Tensor self) -> Tensor\n",
            "aten::h(Tensor self)->Tensor\n",
        );
        let (out, report) = run(input);
        assert_eq!(out[0], r#"{"canonical": "f(int a) -> ()"}"#);
        assert_eq!(out[1], r#"{"error": "expected arrow but found '-' here:"}"#);
        let tally = report.tally.unwrap();
        assert_eq!((tally.passed, tally.failed), (3, 1));
        assert_eq!(
            message_tally(input),
            Tally {
                passed: 1,
                failed: 0
            }
        );
    }

    #[test]
    fn conversion_messages_may_explain_themselves() {
        assert!(same_message(
            "integer literal '99999999999999999999' is out of range for int64 (stoll)",
            "stoll"
        ));
        assert!(same_message("stod", "stod"));
        // Only the function PyTorch named, only at the end, only for those
        // bare names.
        assert!(!same_message(
            "integer literal '1' is out of range (stod)",
            "stoll"
        ));
        assert!(!same_message("(stoll) out of range", "stoll"));
        assert!(!same_message("xstoll)", "stoll"));
        assert!(!same_message(
            "bad thing (expected arrow)",
            "expected arrow"
        ));
        let input = r#"{"input": "f(int x=99999999999999999999) -> ()", "error": "stoll"}"#;
        assert_eq!(
            message_tally(input),
            Tally {
                passed: 1,
                failed: 0
            }
        );
    }

    #[test]
    fn structure_lines() {
        let good = r#"{"schema": "aten::f(int x) -> ()", "name": "aten::f", "overload_name": "", "is_view_op": false, "is_mutable": false, "arguments": [{"name": "x", "type": "int", "N": null, "default": null, "real_type": "int", "kwarg_only": false, "is_out": false, "alias": null}], "returns": []}"#;
        let bad = good.replace(r#""type": "int""#, r#""type": "float""#);
        let (out, report) = run(&format!("{good}\n{bad}\n"));
        assert_eq!(out[0], r#"{"canonical": "aten::f(int x) -> ()"}"#);
        let tally = report.tally.unwrap();
        assert_eq!((tally.passed, tally.failed), (1, 1));
        assert!(report.failures[0].contains("type expected"));
        assert_eq!(check_structure(good).tally.unwrap().passed, 1);
    }

    #[test]
    fn summaries_follow_the_oracle() {
        assert_eq!(error_summary("\nunknown type:\nx"), "");
        assert_eq!(error_summary(&"x".repeat(300)).len(), 200);
    }

    #[test]
    fn explains() {
        let text = explain("aten::f(Tensor(a!) self, *, int[2] s=1) -> Tensor(a!)").unwrap();
        assert!(text.contains("canonical: aten::f(Tensor(a!) self, *, int[2] s=1) -> Tensor(a!)"));
        assert!(text.contains("N 2, default [1, 1], kwarg-only true"));
        assert!(text.contains("is_mutable: true"));
        assert!(explain("f(").is_err());
    }
}
