//! `aten conform keysets FILE`: key-set queries in the format of
//! `keyset_queries.jsonl`.
//!
//! Each input line has `keys` (names OR-ed together) and optionally `probe`;
//! each output line has `repr`, `string`, `highest_priority` and, with a
//! probe, `has_probe`, `remove_probe_repr` and `add_probe_repr`. When an input
//! line also carries any of those fields, they are compared.

use aten::{DispatchKey, DispatchKeySet};
use serde_json::Value;

use super::Report;
use crate::json::{error_line, str_field, str_list_field, OrderedObject};

/// The fields a line may carry as expectations.
const EXPECTED_FIELDS: [&str; 6] = [
    "repr",
    "string",
    "highest_priority",
    "has_probe",
    "remove_probe_repr",
    "add_probe_repr",
];

/// Answers one query; `Err` for a malformed line.
fn answer(line: &Value) -> Result<OrderedObject, String> {
    let mut ks = DispatchKeySet::EMPTY;
    for name in str_list_field(line, "keys")? {
        ks = ks.add(DispatchKey::parse(name).map_err(|e| e.to_string())?);
    }
    let mut out = OrderedObject::new()
        .field("repr", ks.raw_repr())
        .field("string", ks.to_string())
        .field("highest_priority", ks.highest_priority_type_id().name());
    if line.get("probe").is_some() {
        let probe = DispatchKey::parse(str_field(line, "probe")?).map_err(|e| e.to_string())?;
        out = out
            .field("has_probe", ks.has(probe))
            .field("remove_probe_repr", ks.remove(probe).raw_repr())
            .field("add_probe_repr", ks.add(probe).raw_repr());
    }
    Ok(out)
}

/// Runs every line of `input`, returning the output lines and the report.
pub fn run(input: &str) -> (Vec<String>, Report) {
    let mut report = Report::default();
    let mut out = Vec::new();
    for (n, text) in input.lines().enumerate() {
        if text.trim().is_empty() {
            continue;
        }
        let parsed: Result<Value, String> = serde_json::from_str(text).map_err(|e| e.to_string());
        let has_expectations = parsed
            .as_ref()
            .map(|v| EXPECTED_FIELDS.iter().any(|f| v.get(f).is_some()))
            .unwrap_or(false);
        match parsed.and_then(|v| answer(&v).map(|a| (v, a))) {
            Ok((input, answer)) => {
                let line = answer.to_line();
                if has_expectations {
                    let got: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
                    let mismatches: Vec<&str> = EXPECTED_FIELDS
                        .iter()
                        .copied()
                        .filter(|f| input.get(f).is_some() && input.get(f) != got.get(f))
                        .collect();
                    report.check(mismatches.is_empty(), || {
                        format!("line {}: {:?} differ; got {line}", n + 1, mismatches)
                    });
                }
                out.push(line);
            }
            Err(e) => {
                report.check(false, || format!("line {}: {e}", n + 1));
                out.push(error_line(&e));
            }
        }
    }
    (out, report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_lines_get_error_lines() {
        let (out, report) = run("not json\n{\"keys\": [\"Nope\"]}\n{\"keys\": 3}\n");
        assert_eq!(out.len(), 3);
        assert!(out.iter().all(|l| l.starts_with("{\"error\": ")));
        assert_eq!(report.tally.unwrap().failed, 3);
    }

    #[test]
    fn answers_a_query() {
        let (out, report) = run(r#"{"keys": ["CPU", "AutogradCUDA"], "probe": "CUDA"}"#);
        assert!(report.tally.is_none());
        assert!(
            out[0].contains("\"string\": \"DispatchKeySet(CPU, CUDA, AutogradCPU, AutogradCUDA)\"")
        );
        assert!(out[0].contains("\"highest_priority\": \"AutogradCUDA\""));
        assert!(out[0].contains("\"has_probe\": true"));
    }
}
