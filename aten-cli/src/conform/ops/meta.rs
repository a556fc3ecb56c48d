//! The records of an ops corpus run again on the Meta device: every input
//! tensor becomes a data-less Meta tensor with the same dtype, sizes,
//! strides and storage offset (a zero-dimensional wrapped number stays on
//! the CPU, as PyTorch lets it mix with any device), and the result must
//! have PyTorch's structure, dtypes and shapes, on Meta. Strides are
//! counted as in the CPU run. Values are not compared (there are none).
//!
//! A record that expects an error only has to run without a panic on Meta:
//! checks that need the data (an index out of range) cannot be made there,
//! in PyTorch either. Operators whose result shape depends on the data
//! (`nonzero`, `_local_scalar_dense`, `index.Tensor` with a mask, ...)
//! have no Meta result in PyTorch; their records are skipped.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use aten::boxing::{IValue, Stack};
use aten::c10::{Device, TensorBase};
use serde_json::Value;

use super::compare::Comparison;
use super::decode;
use super::Verdict;

/// Operators whose result shape depends on the data: PyTorch's Meta
/// kernels raise for them, and so may ours.
pub const DATA_DEPENDENT: &[&str] = &[
    "aten::nonzero.default",
    "aten::_local_scalar_dense.default",
    "aten::masked_select.default",
    "aten::unique.default",
    "aten::_unique2.default",
];

/// Whether a record's result shape depends on its data: a
/// [`DATA_DEPENDENT`] operator, or `index.Tensor` with a boolean (or
/// uint8) mask among its indices, which selects as many elements as the
/// mask has true ones (PyTorch's Meta kernel calls `nonzero` there).
fn is_data_dependent(op: &str, record: &Value) -> bool {
    if DATA_DEPENDENT.contains(&op) {
        return true;
    }
    op == "aten::index.Tensor"
        && record
            .pointer("/args/1/list")
            .and_then(Value::as_array)
            .is_some_and(|indices| {
                indices.iter().any(|index| {
                    matches!(
                        index.pointer("/tensor/dtype").and_then(Value::as_str),
                        Some("bool" | "uint8")
                    )
                })
            })
}

/// The Meta twin of `t`: same dtype, sizes, strides and offset over a
/// data-less storage of the same size.
fn meta_tensor(t: &TensorBase) -> Result<TensorBase, String> {
    if !t.defined() || t.is_wrapped_number() {
        return Ok(t.clone());
    }
    let dtype = t.dtype().ok_or("undefined tensor")?;
    let layout = t.layout().ok_or("undefined tensor")?;
    let elements = layout.storage().nbytes() / dtype.element_size().max(1);
    let len = i64::try_from(elements).map_err(|_| "storage too large".to_string())?;
    let base = TensorBase::empty(&[len], dtype, Device::META).map_err(|e| e.to_string())?;
    base.as_strided(
        layout.sizes(),
        layout.strides(),
        Some(layout.storage_offset()),
    )
    .map_err(|e| e.to_string())
}

fn to_meta(v: IValue) -> Result<IValue, String> {
    Ok(match v {
        IValue::Tensor(t) => IValue::Tensor(meta_tensor(&t)?),
        IValue::TensorList(ts) => IValue::TensorList(Arc::new(
            ts.iter().map(meta_tensor).collect::<Result<_, _>>()?,
        )),
        IValue::OptionalTensorList(ts) => IValue::OptionalTensorList(Arc::new(
            ts.iter()
                .map(|t| t.as_ref().map(meta_tensor).transpose())
                .collect::<Result<_, _>>()?,
        )),
        other => other,
    })
}

/// The outcome of one record on Meta.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetaOutcome {
    /// Checked against PyTorch's result.
    Checked(Verdict),
    /// An expected error: the call raised (`true`) or returned (`false`)
    /// on Meta, without panicking.
    ErrorRecord(bool),
    /// Not checked: no expected outcome, a data-dependent operator, or an
    /// operator without a schema.
    Skipped,
}

/// Runs one record (a line of the corpus) on Meta.
pub fn run_record(text: &str, strides: &mut Comparison) -> MetaOutcome {
    let Ok(record) = serde_json::from_str::<Value>(text) else {
        return MetaOutcome::Skipped;
    };
    let Some(op) = record.get("op").and_then(Value::as_str) else {
        return MetaOutcome::Skipped;
    };
    if is_data_dependent(op, &record) {
        return MetaOutcome::Skipped;
    }
    let Ok(handle) = decode::find_operator(op) else {
        return MetaOutcome::Skipped;
    };
    let Some(schema) = handle.schema() else {
        return MetaOutcome::Skipped;
    };
    let call = || -> Result<Stack, String> {
        let decoded = decode::decode_arguments(record.get("args"), record.get("kwargs"))?;
        let stack = decode::bind(&schema, &decoded).map_err(|e| e.to_string())?;
        let has_tensors = stack.iter().any(|v| {
            matches!(v, IValue::Tensor(t) if t.defined() && !t.is_wrapped_number())
                || matches!(v, IValue::TensorList(_) | IValue::OptionalTensorList(_))
        });
        let mut stack = stack
            .into_iter()
            .map(to_meta)
            .collect::<Result<Stack, String>>()?;
        // A factory (no tensor in) is asked for Meta through its `device`.
        if !has_tensors {
            if let Some(i) = schema.arguments().iter().position(|a| a.name() == "device") {
                stack[i] = IValue::device(Device::META);
            }
        }
        handle.call_boxed(&mut stack).map_err(|e| e.to_string())?;
        Ok(stack)
    };
    let result = match catch_unwind(AssertUnwindSafe(call)) {
        Ok(r) => r,
        Err(payload) => {
            return MetaOutcome::Checked(Verdict::Failed(format!(
                "panic while running {op} on Meta: {}",
                crate::panic_guard::panic_message(payload.as_ref())
            )))
        }
    };
    if record.get("error").is_some() {
        return MetaOutcome::ErrorRecord(result.is_err());
    }
    let Some(expected) = record.get("result") else {
        return MetaOutcome::Skipped;
    };
    let verdict = match result {
        Err(e) => Verdict::Failed(format!("on Meta: {}", e.lines().next().unwrap_or(""))),
        Ok(stack) => {
            let got = if stack.len() == 1 {
                stack.into_iter().next().unwrap_or_default()
            } else {
                IValue::Tuple(Arc::new(stack))
            };
            match compare(expected, &got, "", strides) {
                Ok(()) => Verdict::Passed,
                Err(e) => Verdict::Failed(format!("on Meta: {e}")),
            }
        }
    };
    MetaOutcome::Checked(verdict)
}

fn items(v: &IValue) -> Option<Vec<IValue>> {
    match v {
        IValue::Tuple(items) | IValue::GenericList(items) => Some(items.to_vec()),
        IValue::TensorList(ts) => Some(ts.iter().cloned().map(IValue::Tensor).collect()),
        IValue::OptionalTensorList(ts) => Some(
            ts.iter()
                .map(|t| t.clone().map_or(IValue::None, IValue::Tensor))
                .collect(),
        ),
        _ => None,
    }
}

/// Compares the structure, dtypes and shapes of `got` with PyTorch's
/// encoded result; non-tensor values must be equal.
fn compare(
    expected: &Value,
    got: &IValue,
    path: &str,
    strides: &mut Comparison,
) -> Result<(), String> {
    let at = || format!("result{path}");
    let Some((kind, body)) = expected
        .as_object()
        .filter(|o| o.len() == 1)
        .and_then(|o| o.iter().next())
    else {
        // Plain JSON (`null`, numbers): compare the non-tensor value loosely.
        return match (expected, got) {
            (Value::Null, IValue::None) => Ok(()),
            // An undefined tensor (a gradient `output_mask` switched off)
            // encodes as `null`, as the CPU runner's encoder writes it.
            (Value::Null, IValue::Tensor(t)) if t.dtype().is_none() => Ok(()),
            (Value::Null, _) => Err(format!("{}: expected None", at())),
            _ => Ok(()),
        };
    };
    match kind.as_str() {
        "tensor" => {
            let IValue::Tensor(t) = got else {
                return Err(format!(
                    "{}: expected a tensor, got {}",
                    at(),
                    got.type_name()
                ));
            };
            if t.device() != Some(Device::META) {
                return Err(format!("{}: the result is not on Meta", at()));
            }
            let dtype = body.get("dtype").and_then(Value::as_str).unwrap_or("");
            let got_dtype = t.dtype().map_or("undefined", |d| d.python_name());
            if dtype != got_dtype {
                return Err(format!("{}: expected dtype {dtype}, got {got_dtype}", at()));
            }
            let shape: Vec<i64> = body
                .get("shape")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_i64).collect())
                .unwrap_or_default();
            if shape[..] != t.sizes()[..] {
                return Err(format!(
                    "{}: expected shape {shape:?}, got {:?}",
                    at(),
                    &t.sizes()[..]
                ));
            }
            if let Some(expected_strides) = body.get("strides").and_then(Value::as_array) {
                let expected_strides: Vec<i64> =
                    expected_strides.iter().filter_map(Value::as_i64).collect();
                strides.strides_compared += 1;
                if expected_strides[..] != t.strides()[..] {
                    strides.strides_differ.push(format!(
                        "{}: expected strides {expected_strides:?}, got {:?} on Meta (shape {shape:?})",
                        at(),
                        &t.strides()[..]
                    ));
                }
            }
            Ok(())
        }
        "list" | "tuple" => {
            let expected_items = body
                .as_array()
                .ok_or_else(|| format!("{}: malformed {kind}", at()))?;
            let got_items = items(got)
                .ok_or_else(|| format!("{}: expected a {kind}, got {}", at(), got.type_name()))?;
            if expected_items.len() != got_items.len() {
                return Err(format!(
                    "{}: expected {} elements, got {}",
                    at(),
                    expected_items.len(),
                    got_items.len()
                ));
            }
            for (i, (e, g)) in expected_items.iter().zip(&got_items).enumerate() {
                compare(e, g, &format!("{path}[{i}]"), strides)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Tallies of a corpus run on Meta.
#[derive(Debug, Default)]
pub struct MetaRun {
    /// Per checked record: (line, op, verdict).
    pub checked: Vec<(usize, String, Verdict)>,
    /// Expected-error records run: how many, and how many raised on Meta.
    pub error_records: (usize, usize),
    /// Records skipped.
    pub skipped: usize,
    /// Stride comparisons.
    pub strides: Comparison,
}

/// Runs every non-blank line of `input` on Meta.
pub fn run_records(input: &str) -> MetaRun {
    let mut run = MetaRun::default();
    for (n, text) in input.lines().enumerate() {
        if text.trim().is_empty() {
            continue;
        }
        match run_record(text, &mut run.strides) {
            MetaOutcome::Checked(verdict) => {
                let op = serde_json::from_str::<Value>(text)
                    .ok()
                    .and_then(|r| r.get("op").and_then(Value::as_str).map(str::to_string))
                    .unwrap_or_default();
                run.checked.push((n + 1, op, verdict));
            }
            MetaOutcome::ErrorRecord(raised) => {
                run.error_records.0 += 1;
                run.error_records.1 += usize::from(raised);
            }
            MetaOutcome::Skipped => run.skipped += 1,
        }
    }
    run
}
