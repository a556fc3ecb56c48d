//! `aten conform tables FILE`: dispatch-table scenarios in the format of
//! `dispatch_tables.jsonl`. For each line a fresh dispatcher gets the schema
//! (debug `def`), the backend fallbacks and the kernels, each with its label
//! as debug string (fallthrough or a real boxed kernel), and the computed
//! table is printed as `_dispatch_dump_table` does.

use aten::boxing::schema::FunctionSchema;
use aten::boxing::KernelFunction;
use aten::dispatch::{AliasAnalysisKind, Dispatcher, RegistrationHandle};
use aten::DispatchKey;
use serde_json::Value;

use super::Report;
use crate::json::{error_line, str_field, OrderedObject};

fn kernel(fallthrough: bool) -> KernelFunction {
    if fallthrough {
        KernelFunction::make_fallthrough()
    } else {
        KernelFunction::make_from_boxed_function(|_, _, _| Ok(()))
    }
}

/// `(key, fallthrough, label)` of each entry of the list field `name`.
fn registrations(line: &Value, name: &str) -> Result<Vec<(DispatchKey, bool, String)>, String> {
    let Some(list) = line.get(name) else {
        return Ok(Vec::new());
    };
    list.as_array()
        .ok_or_else(|| format!("field `{name}` is not a list"))?
        .iter()
        .map(|entry| {
            let key = DispatchKey::parse(str_field(entry, "key")?).map_err(|e| e.to_string())?;
            let fallthrough = entry
                .get("fallthrough")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            // The oracle registered each kernel at the location `label`.
            let label = format!(
                "registered at {}",
                entry.get("label").and_then(Value::as_str).unwrap_or("")
            );
            Ok((key, fallthrough, label))
        })
        .collect()
}

/// Builds the scenario of one line and returns its computed table.
pub fn table_for(line: &Value) -> Result<String, String> {
    let schema = FunctionSchema::parse(str_field(line, "schema")?).map_err(|e| e.to_string())?;
    let name = schema.operator_name().clone();
    let dispatcher = Dispatcher::new();
    let mut handles: Vec<RegistrationHandle> = Vec::new();
    handles.push(
        dispatcher
            .register_def(
                schema,
                "registered at def",
                Some(AliasAnalysisKind::FromSchema),
                Vec::new(),
            )
            .map_err(|e| e.to_string())?,
    );
    for (key, fallthrough, label) in registrations(line, "fallbacks")? {
        handles.push(
            dispatcher
                .register_fallback(key, kernel(fallthrough), label)
                .map_err(|e| e.to_string())?,
        );
    }
    for (key, fallthrough, label) in registrations(line, "impls")? {
        handles.push(
            dispatcher
                .register_impl(name.clone(), Some(key), kernel(fallthrough), label)
                .map_err(|e| e.to_string())?,
        );
    }
    let op = dispatcher
        .find_op(&name)
        .ok_or_else(|| format!("{name} vanished"))?;
    op.check_invariants().map_err(|e| e.to_string())?;
    // The oracle's text has no newline after the last line.
    Ok(op.dump_computed_table().trim_end_matches('\n').to_string())
}

/// Runs every line of `input`.
pub fn run(input: &str) -> (Vec<String>, Report) {
    let mut report = Report::default();
    let mut out = Vec::new();
    for (n, text) in input.lines().enumerate() {
        if text.trim().is_empty() {
            continue;
        }
        let line: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                report.check(false, || format!("line {}: {e}", n + 1));
                out.push(error_line(&e.to_string()));
                continue;
            }
        };
        let name = line.get("name").cloned().unwrap_or(Value::Null);
        match table_for(&line) {
            Ok(table) => {
                if let Some(expected) = line.get("expected_table").and_then(Value::as_str) {
                    report.check(expected == table, || {
                        format!(
                            "line {} ({name}):\nexpected:\n{expected}\ngot:\n{table}",
                            n + 1
                        )
                    });
                }
                out.push(
                    OrderedObject::new()
                        .field("name", name)
                        .field("table", table)
                        .to_line(),
                );
            }
            Err(e) => {
                report.check(false, || format!("line {}: {e}", n + 1));
                out.push(error_line(&e));
            }
        }
    }
    (out, report)
}
