//! Exported programs against PyTorch's outputs: every `NAME.pt2` of a
//! directory runs on `NAME.inputs.safetensors` (`input_0`, `input_1`, ...)
//! and its outputs are compared with `NAME.expected.safetensors`
//! (`output_0`, ...): dtype and shape exactly, integers and bools exactly,
//! floats within `|actual - expected| <= atol + rtol * |expected|` (the
//! tolerance of the directory's `models.json` for the model, else
//! `rtol = atol = 1e-4`: deep networks sum in other orders than PyTorch's
//! kernels).

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use aten::c10::{dispatch_dtype, Numeric, TensorBase};
use aten::fx::export::{load_safetensors, ExportedProgram};
use serde_json::Value;

use super::Report;

/// A float tolerance.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Tolerance {
    /// Relative.
    pub rtol: f64,
    /// Absolute.
    pub atol: f64,
}

/// The tolerance when `models.json` gives none.
pub const DEFAULT_TOLERANCE: Tolerance = Tolerance {
    rtol: 1e-4,
    atol: 1e-4,
};

/// The outcome of one model.
#[derive(Debug)]
pub struct ModelOutcome {
    /// The model's name (`cnn` for `cnn.pt2`).
    pub name: String,
    /// `Ok` with the largest absolute difference seen, or why it failed.
    pub result: Result<f64, String>,
    /// The time `run` took (load excluded).
    pub run_time: Duration,
}

/// The elements of `t` in row-major order, as `f64`.
pub fn values(t: &TensorBase) -> Result<Vec<f64>, String> {
    let dtype = t.dtype().ok_or("an undefined tensor")?;
    dispatch_dtype!(dtype, T => t
        .to_vec::<T>()
        .map(|v| v.into_iter().map(Numeric::to_f64).collect())
        .map_err(|e| e.to_string()),
        _ => Err(format!("cannot read values of dtype {}", dtype.python_name())))
}

/// Compares `actual` with `expected`; the largest absolute difference.
pub fn compare(actual: &TensorBase, expected: &TensorBase, tol: Tolerance) -> Result<f64, String> {
    let (a_dtype, e_dtype) = (actual.dtype(), expected.dtype());
    if a_dtype != e_dtype {
        return Err(format!(
            "dtype {} but PyTorch's is {}",
            a_dtype.map_or("undefined", |d| d.python_name()),
            e_dtype.map_or("undefined", |d| d.python_name())
        ));
    }
    if actual.sizes() != expected.sizes() {
        return Err(format!(
            "shape {:?} but PyTorch's is {:?}",
            &actual.sizes()[..],
            &expected.sizes()[..]
        ));
    }
    let floating = e_dtype.is_some_and(|d| d.is_floating_point());
    let (a, e) = (values(actual)?, values(expected)?);
    let mut worst = 0.0f64;
    let mut bad = 0;
    let mut first = None;
    for (i, (x, y)) in a.iter().zip(&e).enumerate() {
        let ok = if floating {
            (x.is_nan() && y.is_nan()) || x == y || (x - y).abs() <= tol.atol + tol.rtol * y.abs()
        } else {
            x == y
        };
        if x.is_finite() && y.is_finite() {
            worst = worst.max((x - y).abs());
        }
        if !ok {
            bad += 1;
            first.get_or_insert((i, *x, *y));
        }
    }
    match first {
        None => Ok(worst),
        Some((i, x, y)) => Err(format!(
            "{bad} of {} values differ (largest difference {worst:.3e}); first at flat index {i}: {x} vs PyTorch's {y}",
            e.len()
        )),
    }
}

/// The per-model tolerances of a `models.json`.
fn tolerances(dir: &Path) -> HashMap<String, Tolerance> {
    let Ok(text) = std::fs::read_to_string(dir.join("models.json")) else {
        return HashMap::new();
    };
    let Ok(Value::Object(models)) = serde_json::from_str::<Value>(&text) else {
        return HashMap::new();
    };
    models
        .into_iter()
        .filter_map(|(name, info)| {
            let f = info.get("tolerance")?.get("float32")?;
            Some((
                name,
                Tolerance {
                    rtol: f.get("rtol")?.as_f64()?,
                    atol: f.get("atol")?.as_f64()?,
                },
            ))
        })
        .collect()
}

/// The tensors named `{prefix}0`, `{prefix}1`, ... of a safetensors file,
/// `count` of them.
pub fn numbered(path: &Path, prefix: &str, count: usize) -> Result<Vec<TensorBase>, String> {
    let mut tensors: HashMap<String, TensorBase> = load_safetensors(path)
        .map_err(|e| e.to_string())?
        .into_iter()
        .collect();
    (0..count)
        .map(|i| {
            tensors
                .remove(&format!("{prefix}{i}"))
                .ok_or_else(|| format!("{}: no tensor `{prefix}{i}`", path.display()))
        })
        .collect()
}

/// Loads, runs and compares the model `name` of `dir`.
pub fn run_model(dir: &Path, name: &str, tol: Tolerance) -> ModelOutcome {
    let mut run_time = Duration::ZERO;
    let result = (|| {
        let program =
            ExportedProgram::load(dir.join(format!("{name}.pt2"))).map_err(|e| e.to_string())?;
        let inputs = numbered(
            &dir.join(format!("{name}.inputs.safetensors")),
            "input_",
            program.inputs().len(),
        )?;
        let expected = numbered(
            &dir.join(format!("{name}.expected.safetensors")),
            "output_",
            program.outputs().len(),
        )?;
        let start = Instant::now();
        let outputs = program.run(&inputs).map_err(|e| e.to_string())?;
        run_time = start.elapsed();
        let mut worst = 0.0f64;
        for (i, (actual, expected)) in outputs.iter().zip(&expected).enumerate() {
            worst =
                worst.max(compare(actual, expected, tol).map_err(|e| format!("output_{i}: {e}"))?);
        }
        Ok(worst)
    })();
    ModelOutcome {
        name: name.to_string(),
        result,
        run_time,
    }
}

/// Runs every `NAME.pt2` of `dir`, sorted by name.
pub fn run_dir(dir: &Path) -> Result<Vec<ModelOutcome>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".pt2"))
                .map(str::to_string)
        })
        .collect();
    names.sort();
    let tolerances = tolerances(dir);
    Ok(names
        .iter()
        .map(|name| {
            let tol = tolerances.get(name).copied().unwrap_or(DEFAULT_TOLERANCE);
            run_model(dir, name, tol)
        })
        .collect())
}

/// `aten conform models DIR`: one line per model, then the report.
pub fn run(dir: &Path) -> Result<(Vec<String>, Report), String> {
    let outcomes = run_dir(dir)?;
    let mut report = Report::default();
    let mut lines = Vec::new();
    for o in &outcomes {
        match &o.result {
            Ok(worst) => lines.push(format!(
                "{}: ok (largest difference {worst:.2e}, run {:.3} ms)",
                o.name,
                o.run_time.as_secs_f64() * 1e3
            )),
            Err(e) => lines.push(format!("{}: FAILED: {e}", o.name)),
        }
        report.check(o.result.is_ok(), || {
            format!(
                "{}: {}",
                o.name,
                o.result.as_ref().err().map_or("", String::as_str)
            )
        });
    }
    report.tally.get_or_insert_with(Default::default);
    Ok((lines, report))
}
