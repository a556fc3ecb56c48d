//! `aten run MODEL.pt2 --inputs IN.safetensors [--output OUT.safetensors]`:
//! loads an exported program, runs it on the inputs (`input_0`,
//! `input_1`, ... or the graph's own input names), prints one line per
//! output and the time taken, and writes the outputs (`output_0`, ...).

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use aten::c10::TensorBase;
use aten::fx::export::{load_safetensors, save_safetensors, ExportedProgram};

use crate::panic_guard::guarded;

/// A one-line summary of a tensor: dtype, shape, and for floating or
/// integer values their minimum, maximum and mean.
pub fn summary(t: &TensorBase) -> String {
    let dtype = t.dtype().map_or("undefined", |d| d.python_name());
    let mut line = format!("{dtype} {:?}", &t.sizes()[..]);
    if let Ok(values) = crate::conform::models::values(t) {
        if !values.is_empty() {
            let min = values.iter().copied().fold(f64::INFINITY, f64::min);
            let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let mean = values.iter().sum::<f64>() / values.len() as f64;
            let _ = write!(line, " min {min:.6} max {max:.6} mean {mean:.6}");
        }
    }
    line
}

/// Runs `model` on the tensors of `inputs`; writes the outputs to `output`
/// if given. Returns the text to print.
pub fn run(model: &Path, inputs: &Path, output: Option<&Path>) -> Result<String, String> {
    guarded(&model.display().to_string(), || {
        run_unguarded(model, inputs, output)
    })
}

/// The tensors of the safetensors file `inputs` for `program`'s inputs:
/// `input_0`, `input_1`, ... or, failing that, the graph's input names.
pub fn program_inputs(program: &ExportedProgram, inputs: &Path) -> Result<Vec<TensorBase>, String> {
    let given = load_safetensors(inputs).map_err(|e| e.to_string())?;
    let mut args = Vec::with_capacity(program.inputs().len());
    for (i, spec) in program.inputs().enumerate() {
        let numbered = format!("input_{i}");
        let found = given
            .iter()
            .find(|(n, _)| *n == numbered)
            .or_else(|| given.iter().find(|(n, _)| *n == spec.name))
            .ok_or_else(|| {
                format!(
                    "{}: no tensor `{numbered}` (or `{}`) for input {i}",
                    inputs.display(),
                    spec.name
                )
            })?;
        args.push(found.1.clone());
    }
    Ok(args)
}

/// [`run`] without the panic guard.
fn run_unguarded(model: &Path, inputs: &Path, output: Option<&Path>) -> Result<String, String> {
    let load_start = Instant::now();
    let program = ExportedProgram::load(model).map_err(|e| e.to_string())?;
    let load_time = load_start.elapsed();
    let args = program_inputs(&program, inputs)?;
    let start = Instant::now();
    let outputs = program.run(&args).map_err(|e| e.to_string())?;
    let run_time = start.elapsed();
    let mut text = String::new();
    for (i, t) in outputs.iter().enumerate() {
        let _ = writeln!(text, "output_{i}: {}", summary(t));
    }
    let _ = writeln!(
        text,
        "{} nodes; loaded in {:.3} ms, ran in {:.3} ms",
        program.num_nodes(),
        load_time.as_secs_f64() * 1e3,
        run_time.as_secs_f64() * 1e3
    );
    if let Some(path) = output {
        let named: Vec<(String, TensorBase)> = outputs
            .into_iter()
            .enumerate()
            .map(|(i, t)| (format!("output_{i}"), t))
            .collect();
        save_safetensors(path, &named).map_err(|e| e.to_string())?;
        let _ = writeln!(text, "wrote {}", path.display());
    }
    Ok(text)
}
