//! `aten conform grads FILE`: operator calls differentiated by autograd, in
//! the format of `grad_golden.jsonl`.
//!
//! Each line is a boxed call as in `aten conform ops` (arguments may name
//! an earlier one with `{"same_as": P}`, the very same tensor), the
//! positions of the tensors that require grad, and the gradients fed to the
//! outputs. The runner sets `requires_grad` on those tensors, calls the
//! operator through the dispatcher (so through its Autograd kernel), and
//! asks `autograd::grad` for the gradients of the inputs; records marked
//! `double_backward` differentiate the gradients once more. It writes one
//! line per record, `{"op", "grads"}` (with `grads2` and
//! `grads2_grad_outputs` for double backward) or `{"op", "error",
//! "error_stage"}`, and compares with PyTorch's: the same stage of failure
//! for an expected error; for gradients the same shapes and dtypes and
//! values within `atol + rtol * |expected|` (float64: 1e-8 and 1e-6;
//! float32: 1e-5 and 1e-4), a missing gradient counting as zeros.

use std::panic::{catch_unwind, AssertUnwindSafe};

use aten::autograd::{self, TensorAutograd};
use aten::boxing::IValue;
use aten::c10::TensorBase;
use aten::Tensor;
use serde_json::{Map, Value};

use super::ops::compare::Tolerance;
use super::ops::decode::{self, decode_value, json_f64};
use super::ops::encode::{encode_tensor, to_line};
use super::Report;

/// Where a record failed.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Failure {
    stage: &'static str,
    message: String,
}

fn fail(stage: &'static str) -> impl Fn(String) -> Failure {
    move |message| Failure { stage, message }
}

fn err_text(e: aten::Error) -> String {
    e.message().to_string()
}

/// What a record computed.
#[derive(Default)]
struct Computed {
    grads: Vec<Option<Tensor>>,
    grads2: Option<Vec<Option<Tensor>>>,
    grads2_grad_outputs: Option<Vec<Option<Tensor>>>,
}

/// A position in the arguments: top-level `i`, or element `j` of the list
/// argument `i`.
fn position(v: &Value) -> Result<(usize, Option<usize>), String> {
    match v {
        Value::Number(n) => Ok((n.as_u64().ok_or("bad position")? as usize, None)),
        Value::Array(p) if p.len() == 2 => Ok((
            p[0].as_u64().ok_or("bad position")? as usize,
            Some(p[1].as_u64().ok_or("bad position")? as usize),
        )),
        other => Err(format!("bad position {other}")),
    }
}

fn same_as(v: &Value) -> Option<&Value> {
    v.as_object().filter(|o| o.len() == 1)?.get("same_as")
}

/// Decodes the arguments, resolving `same_as` to the very same tensors.
fn decode_args(args: &[Value]) -> Result<Vec<IValue>, String> {
    let mut out: Vec<Option<IValue>> = vec![None; args.len()];
    // First everything that is not a reference.
    for (i, a) in args.iter().enumerate() {
        if same_as(a).is_some() {
            continue;
        }
        if let Some(items) = a
            .as_object()
            .and_then(|o| o.get("list"))
            .and_then(Value::as_array)
        {
            if items.iter().any(|x| same_as(x).is_some()) {
                continue;
            }
        }
        out[i] = Some(decode_value(a).map_err(|e| format!("argument {i}: {e}"))?);
    }
    let tensor_at = |out: &[Option<IValue>], p: &Value| -> Result<TensorBase, String> {
        let (i, j) = position(p)?;
        match (out.get(i).and_then(Option::as_ref), j) {
            (Some(IValue::Tensor(t)), None) => Ok(t.clone()),
            (Some(v), Some(j)) => list_tensors(v)?
                .get(j)
                .cloned()
                .ok_or_else(|| format!("no tensor at {p}")),
            _ => Err(format!("`same_as` names no decoded tensor: {p}")),
        }
    };
    // Then lists holding references, and references.
    for (i, a) in args.iter().enumerate() {
        if out[i].is_some() {
            continue;
        }
        if let Some(p) = same_as(a) {
            out[i] = Some(IValue::Tensor(tensor_at(&out, p)?));
            continue;
        }
        let items = a.get("list").and_then(Value::as_array).ok_or("bad list")?;
        let mut tensors: Vec<Option<TensorBase>> = vec![None; items.len()];
        for (j, x) in items.iter().enumerate() {
            if same_as(x).is_none() {
                match decode_value(x)? {
                    IValue::Tensor(t) => tensors[j] = Some(t),
                    _ => return Err("a list mixing tensors and other values".into()),
                }
            }
        }
        for (j, x) in items.iter().enumerate() {
            if let Some(p) = same_as(x) {
                // A reference into this very list, or to an earlier argument.
                let (pi, pj) = position(p)?;
                tensors[j] = Some(match pj {
                    Some(pj) if pi == i => tensors
                        .get(pj)
                        .cloned()
                        .flatten()
                        .ok_or_else(|| format!("`same_as` names no decoded tensor: {p}"))?,
                    _ => tensor_at(&out, p)?,
                });
            }
        }
        let tensors: Vec<TensorBase> = tensors.into_iter().map(Option::unwrap_or_default).collect();
        out[i] = Some(IValue::TensorList(std::sync::Arc::new(tensors)));
    }
    Ok(out.into_iter().map(Option::unwrap_or_default).collect())
}

fn list_tensors(v: &IValue) -> Result<Vec<TensorBase>, String> {
    match v {
        IValue::TensorList(items) => Ok(items.iter().cloned().collect()),
        IValue::GenericList(items) => items
            .iter()
            .map(|x| match x {
                IValue::Tensor(t) => Ok(t.clone()),
                _ => Err("a list element is not a tensor".to_string()),
            })
            .collect(),
        _ => Err("not a list of tensors".into()),
    }
}

/// The tensor at a `requires_grad` position.
fn tensor_at(args: &[IValue], p: &Value) -> Result<Tensor, String> {
    let (i, j) = position(p)?;
    match (args.get(i), j) {
        (Some(IValue::Tensor(t)), None) => Ok(Tensor::from_base(t.clone())),
        (Some(v), Some(j)) => list_tensors(v)?
            .get(j)
            .cloned()
            .map(Tensor::from_base)
            .ok_or_else(|| format!("no tensor at {p}")),
        _ => Err(format!("no tensor at position {p}")),
    }
}

fn decode_opt_tensor(v: &Value) -> Result<Option<Tensor>, String> {
    match decode_value(v)? {
        IValue::None => Ok(None),
        IValue::Tensor(t) => Ok(Some(Tensor::from_base(t))),
        _ => Err("expected a tensor or null".into()),
    }
}

/// The operator's outputs, flattened.
fn flatten(stack: &[IValue]) -> Vec<Tensor> {
    let mut out = Vec::new();
    for v in stack {
        match v {
            IValue::Tensor(t) => out.push(Tensor::from_base(t.clone())),
            IValue::TensorList(items) => out.extend(items.iter().cloned().map(Tensor::from_base)),
            IValue::GenericList(items) | IValue::Tuple(items) => {
                out.extend(items.iter().filter_map(|x| match x {
                    IValue::Tensor(t) => Some(Tensor::from_base(t.clone())),
                    _ => None,
                }))
            }
            _ => {}
        }
    }
    out
}

fn compute(record: &Value, op: &str) -> Result<Computed, Failure> {
    let handle = decode::find_operator(op).map_err(fail("lookup"))?;
    let schema = handle
        .schema()
        .ok_or_else(|| fail("lookup")(format!("{op} has no schema")))?;
    let raw_args = record
        .get("args")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let args = decode_args(&raw_args).map_err(fail("decode"))?;
    let (_, keywords) =
        decode::decode_arguments(None, record.get("kwargs")).map_err(fail("decode"))?;
    let positions = record
        .get("requires_grad")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut inputs = Vec::with_capacity(positions.len());
    for p in &positions {
        let t = tensor_at(&args, p).map_err(fail("decode"))?;
        t.requires_grad_(true)
            .map_err(|e| fail("requires_grad")(err_text(e)))?;
        inputs.push(t);
    }
    let mut stack =
        decode::bind(&schema, &(args, keywords)).map_err(|e| fail("forward")(err_text(e)))?;
    handle
        .call_boxed(&mut stack)
        .map_err(|e| fail("forward")(err_text(e)))?;
    let outputs = flatten(&stack);
    let double = record
        .get("double_backward")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let grad_outputs = optional_tensors(record, "grad_outputs")?;
    let mut roots = Vec::new();
    let mut root_grads = Vec::new();
    for (o, g) in outputs.iter().zip(&grad_outputs) {
        if let Some(g) = g {
            if double {
                g.requires_grad_(true)
                    .map_err(|e| fail("decode")(err_text(e)))?;
            }
            roots.push(o.clone());
            root_grads.push(Some(g.clone()));
        }
    }
    if roots.is_empty() {
        roots.push(outputs.first().cloned().unwrap_or_default());
        root_grads.push(None);
    }
    let grads = autograd::grad(&roots, &inputs, &root_grads, None, double, true)
        .map_err(|e| fail("backward")(err_text(e)))?;
    let mut computed = Computed {
        grads,
        ..Default::default()
    };
    if double {
        double_backward(record, &inputs, &grad_outputs, &mut computed)?;
    }
    Ok(computed)
}

/// The optional tensors a record lists under `key` (none without it).
fn optional_tensors(record: &Value, key: &str) -> Result<Vec<Option<Tensor>>, Failure> {
    Ok(record
        .get(key)
        .and_then(Value::as_array)
        .map(|v| v.iter().map(decode_opt_tensor).collect::<Result<_, _>>())
        .transpose()
        .map_err(fail("decode"))?
        .unwrap_or_default())
}

/// The record's double backward: the gradients of the first gradients
/// (weighted by `grad_grad_outputs`) with respect to the inputs and the
/// grad outputs used, into `computed`.
fn double_backward(
    record: &Value,
    inputs: &[Tensor],
    grad_outputs: &[Option<Tensor>],
    computed: &mut Computed,
) -> Result<(), Failure> {
    let ggo = optional_tensors(record, "grad_grad_outputs")?;
    let mut outs = Vec::new();
    let mut outs_grads = Vec::new();
    for (g, gg) in computed.grads.iter().zip(&ggo) {
        if let (Some(g), Some(gg)) = (g, gg) {
            // A gradient that does not require grad contributes zeros.
            if g.requires_grad() {
                outs.push(g.clone());
                outs_grads.push(Some(gg.clone()));
            }
        }
    }
    let mut wrt = inputs.to_vec();
    wrt.extend(grad_outputs.iter().flatten().cloned());
    let g2 = if outs.is_empty() {
        vec![None; wrt.len()]
    } else {
        autograd::grad(&outs, &wrt, &outs_grads, None, false, true)
            .map_err(|e| fail("double_backward")(err_text(e)))?
    };
    let (for_inputs, for_go) = g2.split_at(inputs.len());
    let mut it = for_go.iter();
    computed.grads2 = Some(for_inputs.to_vec());
    computed.grads2_grad_outputs = Some(
        grad_outputs
            .iter()
            .map(|g| g.as_ref().and_then(|_| it.next().cloned().flatten()))
            .collect(),
    );
    Ok(())
}

fn encode_list(list: &[Option<Tensor>]) -> Result<Value, String> {
    list.iter()
        .map(|g| match g {
            Some(t) => encode_tensor(t),
            None => Ok(Value::Null),
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Value::Array)
}

fn tolerance(dtype: &str) -> Tolerance {
    match dtype {
        "float64" => Tolerance {
            rtol: 1e-6,
            atol: 1e-8,
        },
        "float32" => Tolerance {
            rtol: 1e-4,
            atol: 1e-5,
        },
        _ => Tolerance {
            rtol: 1e-2,
            atol: 1e-3,
        },
    }
}

fn tensor_body(v: &Value) -> Option<&Map<String, Value>> {
    v.get("tensor")?.as_object()
}

fn all_zero(body: &Map<String, Value>) -> bool {
    body.get("values")
        .and_then(Value::as_array)
        .is_some_and(|v| v.iter().all(|x| json_f64(x).is_ok_and(|x| x == 0.0)))
}

/// Compares one gradient (`null` and all zeros are equivalent).
fn compare_one(expected: &Value, actual: &Value, what: &str) -> Result<(), String> {
    match (tensor_body(expected), tensor_body(actual)) {
        (None, None) => Ok(()),
        (Some(e), None) if all_zero(e) => Ok(()),
        (None, Some(a)) if all_zero(a) => Ok(()),
        (Some(_), None) => Err(format!("{what}: expected a gradient, got none")),
        (None, Some(_)) => Err(format!("{what}: expected no gradient, got one")),
        (Some(e), Some(a)) => {
            if e.get("dtype") != a.get("dtype") {
                return Err(format!(
                    "{what}: dtype {} instead of {}",
                    a.get("dtype").unwrap_or(&Value::Null),
                    e.get("dtype").unwrap_or(&Value::Null)
                ));
            }
            if e.get("shape") != a.get("shape") {
                return Err(format!(
                    "{what}: shape {} instead of {}",
                    a.get("shape").unwrap_or(&Value::Null),
                    e.get("shape").unwrap_or(&Value::Null)
                ));
            }
            let tol = tolerance(e.get("dtype").and_then(Value::as_str).unwrap_or(""));
            let ev = e
                .get("values")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let av = a
                .get("values")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            if ev.len() != av.len() {
                return Err(format!(
                    "{what}: {} values instead of {}",
                    av.len(),
                    ev.len()
                ));
            }
            for (k, (x, y)) in ev.iter().zip(&av).enumerate() {
                let (x, y) = (json_f64(x)?, json_f64(y)?);
                if !tol.close(x, y) {
                    return Err(format!("{what}: value {k} is {y}, expected {x}"));
                }
            }
            Ok(())
        }
    }
}

fn compare_list(expected: Option<&Value>, actual: &Value, name: &str) -> Result<(), String> {
    let Some(expected) = expected.and_then(Value::as_array) else {
        return Ok(());
    };
    let actual = actual.as_array().cloned().unwrap_or_default();
    if expected.len() != actual.len() {
        return Err(format!(
            "{name}: {} entries instead of {}",
            actual.len(),
            expected.len()
        ));
    }
    for (i, (e, a)) in expected.iter().zip(&actual).enumerate() {
        compare_one(e, a, &format!("{name}[{i}]"))?;
    }
    Ok(())
}

/// One record: the output line, and the verdict (`None` when the record
/// carries nothing to compare with).
fn run_record(text: &str) -> (String, Option<Result<(), String>>) {
    let record: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            let message = format!("invalid JSON: {e}");
            let mut out = Map::new();
            out.insert("error".into(), Value::from(message.clone()));
            return (to_line(&Value::Object(out)), Some(Err(message)));
        }
    };
    let op = record
        .get("op")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let outcome = match catch_unwind(AssertUnwindSafe(|| compute(&record, &op))) {
        Ok(r) => r,
        Err(payload) => Err(fail("runner")(format!(
            "panic while running {op}: {}",
            crate::panic_guard::panic_message(payload.as_ref())
        ))),
    };
    let mut out = Map::new();
    out.insert("op".into(), Value::from(op.clone()));
    let verdict_of = |out: &Map<String, Value>| -> Option<Result<(), String>> {
        let expected_error = record.get("error");
        let has_expected = expected_error.is_some() || record.get("grads").is_some();
        if !has_expected {
            return None;
        }
        Some(match (expected_error, out.get("error")) {
            (Some(_), Some(_)) => {
                let want = record.get("error_stage").and_then(Value::as_str);
                let got = out.get("error_stage").and_then(Value::as_str);
                if want.is_none() || want == got {
                    Ok(())
                } else {
                    Err(format!(
                        "failed at stage {} instead of {}: {}",
                        got.unwrap_or("?"),
                        want.unwrap_or("?"),
                        out.get("error").and_then(Value::as_str).unwrap_or("")
                    ))
                }
            }
            (Some(e), None) => Err(format!(
                "expected the error `{}`, got gradients",
                e.as_str().unwrap_or("")
            )),
            (None, Some(e)) => Err(format!("error: {}", e.as_str().unwrap_or(""))),
            (None, None) => compare_list(record.get("grads"), &out["grads"], "grads")
                .and_then(|()| match out.get("grads2") {
                    Some(g2) => compare_list(record.get("grads2"), g2, "grads2"),
                    None => Ok(()),
                })
                .and_then(|()| match out.get("grads2_grad_outputs") {
                    Some(g2) => {
                        compare_list(record.get("grads2_grad_outputs"), g2, "grads2_grad_outputs")
                    }
                    None => Ok(()),
                }),
        })
    };
    let encoded = outcome.and_then(|c| {
        let mut fields = vec![("grads", encode_list(&c.grads))];
        if let Some(g2) = &c.grads2 {
            fields.push(("grads2", encode_list(g2)));
        }
        if let Some(g2) = &c.grads2_grad_outputs {
            fields.push(("grads2_grad_outputs", encode_list(g2)));
        }
        fields
            .into_iter()
            .map(|(k, v)| v.map(|v| (k, v)))
            .collect::<Result<Vec<_>, String>>()
            .map_err(fail("runner"))
    });
    match encoded {
        Ok(fields) => {
            for (k, v) in fields {
                out.insert(k.into(), v);
            }
        }
        Err(f) => {
            let first = f.message.lines().next().unwrap_or("").to_string();
            out.insert("error".into(), Value::from(first));
            out.insert("error_stage".into(), Value::from(f.stage));
        }
    }
    let verdict = verdict_of(&out);
    (to_line(&Value::Object(out)), verdict)
}

/// Runs every line of `input`: the output lines and the report.
pub fn run(input: &str) -> (Vec<String>, Report) {
    let mut lines = Vec::new();
    let mut report = Report::default();
    for (n, text) in input.lines().enumerate() {
        if text.trim().is_empty() {
            continue;
        }
        let (line, verdict) = run_record(text);
        let op = serde_json::from_str::<Value>(text)
            .ok()
            .and_then(|v| v.get("op").and_then(Value::as_str).map(str::to_string))
            .unwrap_or_default();
        match verdict {
            None => {}
            Some(Ok(())) => report.check(true, String::new),
            Some(Err(why)) => report.check(false, || format!("line {} ({op}): {why}", n + 1)),
        }
        lines.push(line);
    }
    (lines, report)
}
