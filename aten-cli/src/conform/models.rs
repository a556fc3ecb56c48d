//! Exported programs against PyTorch's outputs: every `NAME.pt2` of a
//! directory runs on `NAME.inputs.safetensors` (`input_0`, `input_1`, ...)
//! and its outputs are compared with `NAME.expected.safetensors`
//! (`output_0`, ...); a program exported with dynamic shapes also runs, as
//! loaded once, on every other size the directory holds for it
//! (`NAME.SIZE.inputs.safetensors` against `NAME.SIZE.expected.safetensors`).
//! Dtype and shape compare exactly, integers and bools exactly, floats
//! within `|actual - expected| <= atol + rtol * |expected|`: the tolerance
//! the directory's `models.json` gives the model for the output's dtype,
//! else `rtol = atol = 1e-4` for float32 and float64 (deep networks sum in
//! other orders than PyTorch's kernels) and `2e-2` for bfloat16 and
//! float16.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use aten::c10::{dispatch_dtype, Numeric, TensorBase};
use aten::fx::export::{load_safetensors, read_regular_file, ExportedProgram};
use serde_json::Value;

use super::Report;
use crate::panic_guard::guarded;

/// A float tolerance.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Tolerance {
    /// Relative.
    pub rtol: f64,
    /// Absolute.
    pub atol: f64,
}

/// The tolerance when `models.json` gives none, for float32 and float64.
pub const DEFAULT_TOLERANCE: Tolerance = Tolerance {
    rtol: 1e-4,
    atol: 1e-4,
};

/// The tolerance when `models.json` gives none, for bfloat16 and float16.
pub const DEFAULT_HALF_TOLERANCE: Tolerance = Tolerance {
    rtol: 2e-2,
    atol: 2e-2,
};

/// A model's tolerances, by the dtype name `models.json` uses
/// (`float32`, `bfloat16`).
#[derive(Clone, Debug, Default)]
pub struct Tolerances {
    by_dtype: HashMap<String, Tolerance>,
}

impl Tolerances {
    /// The tolerance for values of `dtype`.
    pub fn for_dtype(&self, dtype: aten::ScalarType) -> Tolerance {
        let name = dtype.python_name();
        self.by_dtype.get(name).copied().unwrap_or(match dtype {
            aten::ScalarType::BFloat16 | aten::ScalarType::Half => DEFAULT_HALF_TOLERANCE,
            _ => DEFAULT_TOLERANCE,
        })
    }
}

/// The outcome of one model.
#[derive(Debug)]
pub struct ModelOutcome {
    /// The model's name (`cnn` for `cnn.pt2`).
    pub name: String,
    /// `Ok` with the largest absolute difference seen, or why it failed.
    pub result: Result<f64, String>,
    /// The time `run` took (load excluded), over every size.
    pub run_time: Duration,
    /// How many sizes ran (1 for a static program).
    pub sizes: usize,
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

/// The per-model tolerances of a `models.json` (`{"NAME": {"tolerance":
/// {"float32": {"rtol": .., "atol": ..}, "integer": "exact", ...}}}`):
/// none without the file,
/// an error naming the place when it is there but not of that form (a
/// tolerance silently ignored would pass or fail models for the wrong
/// reason).
pub fn tolerances(dir: &Path) -> Result<HashMap<String, Tolerances>, String> {
    let path = dir.join("models.json");
    if !path.exists() {
        return Ok(HashMap::new());
    }
    let label = path.display().to_string();
    let bytes = read_regular_file(&path, &label).map_err(|e| e.to_string())?;
    let models = match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(models)) => models,
        Ok(_) => return Err(format!("{label}: expected an object of models")),
        Err(e) => return Err(format!("{label}: not JSON: {e}")),
    };
    let mut all = HashMap::new();
    for (name, info) in models {
        let Some(given) = info.get("tolerance") else {
            continue;
        };
        let at = |what: &str| format!("{label}: {name}.tolerance{what}");
        let by_dtype = given
            .as_object()
            .ok_or_else(|| format!("{}: expected an object of dtypes", at("")))?
            .iter()
            .map(|(dtype, t)| {
                if t.as_str() == Some("exact") {
                    // Integers are always compared exactly.
                    return Ok((
                        dtype.clone(),
                        Tolerance {
                            rtol: 0.0,
                            atol: 0.0,
                        },
                    ));
                }
                let number = |key: &str| {
                    t.get(key)
                        .and_then(Value::as_f64)
                        .filter(|v| *v >= 0.0)
                        .ok_or_else(|| {
                            format!(
                                "{}: expected a non-negative number",
                                at(&format!(".{dtype}.{key}"))
                            )
                        })
                };
                Ok((
                    dtype.clone(),
                    Tolerance {
                        rtol: number("rtol")?,
                        atol: number("atol")?,
                    },
                ))
            })
            .collect::<Result<HashMap<_, _>, String>>()?;
        all.insert(name, Tolerances { by_dtype });
    }
    Ok(all)
}

/// The other sizes a directory holds for `name` (`SIZE` of each
/// `NAME.SIZE.inputs.safetensors`), sorted.
pub fn other_sizes(dir: &Path, name: &str) -> Vec<String> {
    let prefix = format!("{name}.");
    let mut sizes: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let file = e.file_name().to_str()?.to_string();
            let size = file
                .strip_prefix(&prefix)?
                .strip_suffix(".inputs.safetensors")?
                .to_string();
            (!size.is_empty() && !size.contains('.')).then_some(size)
        })
        .collect();
    sizes.sort();
    sizes
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

/// Runs `program` on the inputs of `files` (`NAME` or `NAME.SIZE`) and
/// compares with its expected outputs; the largest difference.
fn run_files(
    program: &ExportedProgram,
    dir: &Path,
    files: &str,
    tol: &Tolerances,
    run_time: &mut Duration,
) -> Result<f64, String> {
    let inputs = numbered(
        &dir.join(format!("{files}.inputs.safetensors")),
        "input_",
        program.inputs().len(),
    )?;
    let expected = numbered(
        &dir.join(format!("{files}.expected.safetensors")),
        "output_",
        program.outputs().len(),
    )?;
    let start = Instant::now();
    let outputs = program.run(&inputs).map_err(|e| e.to_string())?;
    *run_time += start.elapsed();
    compare_outputs(&outputs, &expected, tol)
}

/// Compares a program's outputs with the expected ones, each with the
/// tolerance of its dtype; the largest absolute difference.
pub fn compare_outputs(
    outputs: &[TensorBase],
    expected: &[TensorBase],
    tol: &Tolerances,
) -> Result<f64, String> {
    if outputs.len() != expected.len() {
        return Err(format!(
            "{} outputs but PyTorch's program has {}",
            outputs.len(),
            expected.len()
        ));
    }
    let mut worst = 0.0f64;
    for (i, (actual, expected)) in outputs.iter().zip(expected).enumerate() {
        let tol = expected
            .dtype()
            .map_or(DEFAULT_TOLERANCE, |d| tol.for_dtype(d));
        worst = worst.max(compare(actual, expected, tol).map_err(|e| format!("output_{i}: {e}"))?);
    }
    Ok(worst)
}

/// Loads, runs and compares the model `name` of `dir`, at every size the
/// directory holds for it.
pub fn run_model(dir: &Path, name: &str, tol: &Tolerances) -> ModelOutcome {
    let mut run_time = Duration::ZERO;
    let mut sizes = 1;
    let result = guarded(&format!("model {name}"), || {
        let program =
            ExportedProgram::load(dir.join(format!("{name}.pt2"))).map_err(|e| e.to_string())?;
        let mut worst = run_files(&program, dir, name, tol, &mut run_time)?;
        for size in other_sizes(dir, name) {
            sizes += 1;
            let files = format!("{name}.{size}");
            worst = worst.max(
                run_files(&program, dir, &files, tol, &mut run_time)
                    .map_err(|e| format!("{size}: {e}"))?,
            );
        }
        Ok(worst)
    });
    ModelOutcome {
        name: name.to_string(),
        result,
        run_time,
        sizes,
    }
}

/// Runs every `NAME.pt2` of `dir`, sorted by name.
pub fn run_dir(dir: &Path) -> Result<Vec<ModelOutcome>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        let file_name = entry.file_name();
        let Some(name) = file_name.to_str() else {
            // A model skipped for its name would let a run pass with
            // nothing run.
            if file_name.as_encoded_bytes().ends_with(b".pt2") {
                return Err(format!(
                    "{}: the model name {file_name:?} is not UTF-8",
                    dir.display()
                ));
            }
            continue;
        };
        if let Some(stem) = name.strip_suffix(".pt2") {
            names.push(stem.to_string());
        }
    }
    names.sort();
    let tolerances = tolerances(dir)?;
    Ok(names
        .iter()
        .map(|name| {
            let tol = tolerances.get(name).cloned().unwrap_or_default();
            run_model(dir, name, &tol)
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
                "{}: ok (largest difference {worst:.2e}, run {:.3} ms{})",
                o.name,
                o.run_time.as_secs_f64() * 1e3,
                if o.sizes > 1 {
                    format!(", {} sizes", o.sizes)
                } else {
                    String::new()
                }
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
